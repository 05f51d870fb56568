//! Keys of the attribute index (`attr_index`): a concept's scalar attribute
//! or metadata value in an order-preserving encoding, so that a range of
//! values is a range of keys.
//!
//! ```text
//! key    := type-id (4 BE) · kind (1: attributes, 2: metadata) · key-id (4 BE)
//!           · value · concept id (8 BE)
//! value  := 0x01 (0x00 | 0x01)                  false | true
//!         | 0x02 f64 (8 bytes, order-preserving)  any number, as FILTER compares it
//!         | 0x03 escaped-bytes 0x00 0x00          a string (its first 240 bytes)
//!         | 0x04                                  an array or an object (since format 6)
//! ```
//!
//! The `0x04` entries hold no value: they make the keys of one `(type,
//! kind, key)` name every concept of the type whose value there is not
//! null, so the index read whole is that key's column (see
//! [`crate::Store::attr_column`]); lookups never select them.
//!
//! Value types are kept apart by their tag, as FILTER never orders a number
//! against a string. Numbers are keyed by their `f64` value (FILTER compares
//! numbers as `f64`), sign-flipped big-endian so that byte order is numeric
//! order; `-0.0` is keyed as `0.0`, which FILTER holds equal. A string's
//! `0x00` bytes are written `0x00 0xFF` and the string ends with `0x00 0x00`,
//! so a string sorts before every longer string it starts. Strings longer
//! than [`MAX_STRING_BYTES`] are keyed by their first bytes: such a key is a
//! lower bound of the string, so the index answers a superset and the
//! caller re-checks the values it returns (the engine keeps the FILTER).

use crate::ids::ConceptId;

/// Bytes of a string kept in a key (a key must stay under LMDB's 511 bytes
/// even when every byte is escaped).
pub const MAX_STRING_BYTES: usize = 240;

/// Which map of the record a key indexes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FieldKind {
    Attributes,
    Metadata,
}

impl FieldKind {
    pub fn tag(self) -> u8 {
        match self {
            FieldKind::Attributes => 1,
            FieldKind::Metadata => 2,
        }
    }
}

const BOOL: u8 = 0x01;
const NUMBER: u8 = 0x02;
const STRING: u8 = 0x03;
const COMPOUND: u8 = 0x04;

/// The key prefix of one `(type, kind, key)`.
pub fn field_prefix(type_id: u32, kind: FieldKind, key: u32) -> Vec<u8> {
    let mut out = Vec::with_capacity(32);
    out.extend_from_slice(&type_id.to_be_bytes());
    out.push(kind.tag());
    out.extend_from_slice(&key.to_be_bytes());
    out
}

/// The order-preserving bytes of an `f64`.
pub fn number_bytes(f: f64) -> [u8; 8] {
    let f = if f == 0.0 { 0.0 } else { f };
    let bits = f.to_bits();
    let flipped = if bits >> 63 == 1 {
        !bits
    } else {
        bits | (1 << 63)
    };
    flipped.to_be_bytes()
}

/// Appends a string's escaped bytes (at most [`MAX_STRING_BYTES`] of it),
/// without the terminator.
fn push_escaped(out: &mut Vec<u8>, s: &str) {
    let bytes = &s.as_bytes()[..s.len().min(MAX_STRING_BYTES)];
    for &b in bytes {
        out.push(b);
        if b == 0 {
            out.push(0xFF);
        }
    }
}

/// Appends the encoding of a scalar value; `false` for a value the index
/// does not hold (null, arrays, objects).
pub fn push_value(out: &mut Vec<u8>, value: &serde_json::Value) -> bool {
    use serde_json::Value;
    match value {
        Value::Bool(b) => out.extend_from_slice(&[BOOL, u8::from(*b)]),
        Value::Number(n) => {
            out.push(NUMBER);
            out.extend_from_slice(&number_bytes(n.as_f64().unwrap_or(0.0)));
        }
        Value::String(s) => {
            out.push(STRING);
            push_escaped(out, s);
            out.extend_from_slice(&[0, 0]);
        }
        Value::Null | Value::Array(_) | Value::Object(_) => return false,
    }
    true
}

/// The full key of a value of a concept, or `None` if the value is not
/// indexed.
pub fn entry_key(
    type_id: u32,
    kind: FieldKind,
    key: u32,
    value: &serde_json::Value,
    id: ConceptId,
) -> Option<Vec<u8>> {
    let mut out = field_prefix(type_id, kind, key);
    if !push_value(&mut out, value) {
        return None;
    }
    out.extend_from_slice(&id.0.to_be_bytes());
    Some(out)
}

/// The key of a concept whose value is an array or an object.
pub fn compound_key(type_id: u32, kind: FieldKind, key: u32, id: ConceptId) -> Vec<u8> {
    let mut out = field_prefix(type_id, kind, key);
    out.push(COMPOUND);
    out.extend_from_slice(&id.0.to_be_bytes());
    out
}

/// The value of an index key as [`crate::Store::attr_column`] hands it out.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Cell<'a> {
    Bool(bool),
    /// A number as FILTER compares numbers (`f64`; `-0.0` reads as `0.0`).
    Number(f64),
    /// A whole string's bytes (valid UTF-8): one shorter than the key's cut
    /// ([`MAX_STRING_BYTES`]) and holding no NUL byte, so its escaped bytes
    /// are the string.
    Text(&'a [u8]),
    /// A value the key does not hold whole (a string that may be cut or
    /// holds a NUL byte, an array, an object): read it from the record.
    Other,
}

/// The value part of a key of the field whose prefix is `field_len` bytes.
pub fn cell(key: &[u8], field_len: usize) -> Option<Cell<'_>> {
    let value = key.get(field_len..key.len().checked_sub(8)?)?;
    let (&tag, rest) = value.split_first()?;
    Some(match tag {
        BOOL => Cell::Bool(*rest.first()? != 0),
        NUMBER => {
            let bytes: [u8; 8] = rest.try_into().ok()?;
            Cell::Number(number_from_bytes(bytes))
        }
        STRING => {
            let escaped = rest.strip_suffix(&[0, 0])?;
            if escaped.len() >= MAX_STRING_BYTES || escaped.contains(&0) {
                Cell::Other
            } else {
                Cell::Text(escaped)
            }
        }
        COMPOUND if rest.is_empty() => Cell::Other,
        _ => return None,
    })
}

/// The `f64` of [`number_bytes`].
fn number_from_bytes(bytes: [u8; 8]) -> f64 {
    let bits = u64::from_be_bytes(bytes);
    let unflipped = if bits >> 63 == 1 {
        bits & !(1 << 63)
    } else {
        !bits
    };
    f64::from_bits(unflipped)
}

/// The key prefix of the strings starting with `prefix` (longer prefixes
/// are cut as keys are, so the range stays a superset).
pub fn string_prefix(type_id: u32, kind: FieldKind, key: u32, prefix: &str) -> Vec<u8> {
    let mut out = field_prefix(type_id, kind, key);
    out.push(STRING);
    push_escaped(&mut out, prefix);
    out
}

/// The first key a value can have under a field prefix: the value's
/// encoding followed by the lowest id.
pub fn value_start(field: &[u8], value: &serde_json::Value) -> Option<Vec<u8>> {
    let mut out = field.to_vec();
    push_value(&mut out, value).then_some(())?;
    Some(out)
}

/// The last key of the values of `value`'s type (for a range open above).
pub fn type_end(field: &[u8], value: &serde_json::Value) -> Option<Vec<u8>> {
    let tag = match value {
        serde_json::Value::Bool(_) => BOOL,
        serde_json::Value::Number(_) => NUMBER,
        serde_json::Value::String(_) => STRING,
        _ => return None,
    };
    let mut out = field.to_vec();
    out.push(tag + 1);
    Some(out)
}

/// The first key of the values of `value`'s type (for a range open below).
pub fn type_start(field: &[u8], value: &serde_json::Value) -> Option<Vec<u8>> {
    let tag = match value {
        serde_json::Value::Bool(_) => BOOL,
        serde_json::Value::Number(_) => NUMBER,
        serde_json::Value::String(_) => STRING,
        _ => return None,
    };
    let mut out = field.to_vec();
    out.push(tag);
    Some(out)
}

/// The concept id at the end of a key.
pub fn entry_id(key: &[u8]) -> Option<ConceptId> {
    let tail = key.len().checked_sub(8)?;
    let id: [u8; 8] = key[tail..].try_into().ok()?;
    Some(ConceptId(u64::from_be_bytes(id)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn key(v: serde_json::Value) -> Vec<u8> {
        entry_key(1, FieldKind::Attributes, 2, &v, ConceptId(7)).expect("a scalar")
    }

    #[test]
    fn numbers_sort_as_numbers() {
        let values = [
            json!(-1e300),
            json!(-5),
            json!(-0.5),
            json!(0),
            json!(1e-9),
            json!(3),
            json!(3.5),
            json!(u64::MAX),
        ];
        for w in values.windows(2) {
            assert!(key(w[0].clone()) < key(w[1].clone()), "{} < {}", w[0], w[1]);
        }
        assert_eq!(key(json!(-0.0)), key(json!(0)));
        assert_eq!(key(json!(2)), key(json!(2.0)));
    }

    #[test]
    fn strings_sort_as_bytes_even_with_nul_bytes() {
        let values = ["", "a", "a\u{0}", "a\u{0}b", "a\u{1}", "ab", "b", "é"];
        for w in values.windows(2) {
            assert!(
                key(json!(w[0])) < key(json!(w[1])),
                "{:?} < {:?}",
                w[0],
                w[1]
            );
        }
    }

    #[test]
    fn types_are_kept_apart_and_long_strings_are_cut() {
        assert!(key(json!(true)) < key(json!(-1e300)));
        assert!(key(json!(1e300)) < key(json!("")));
        let long = "x".repeat(1000);
        assert!(key(json!(long)).len() < 511);
        assert_eq!(entry_id(&key(json!("a"))), Some(ConceptId(7)));
        assert_eq!(
            entry_key(1, FieldKind::Metadata, 2, &json!(null), ConceptId(1)),
            None
        );
    }

    #[test]
    fn cells_read_back_what_keys_hold() {
        let field = field_prefix(1, FieldKind::Attributes, 2).len();
        for f in [-1e300, -5.5, -0.0, 0.0, 1e-9, 3.0, u64::MAX as f64] {
            let k = key(json!(f));
            let expected = if f == 0.0 { 0.0 } else { f };
            assert_eq!(cell(&k, field), Some(Cell::Number(expected)));
        }
        assert_eq!(cell(&key(json!(true)), field), Some(Cell::Bool(true)));
        assert_eq!(cell(&key(json!(false)), field), Some(Cell::Bool(false)));
        assert_eq!(
            cell(&key(json!("阿b")), field),
            Some(Cell::Text("阿b".as_bytes()))
        );
        assert_eq!(cell(&key(json!("")), field), Some(Cell::Text(b"")));
        assert_eq!(cell(&key(json!("a\u{0}b")), field), Some(Cell::Other));
        let short = "x".repeat(MAX_STRING_BYTES - 1);
        assert_eq!(
            cell(&key(json!(short)), field),
            Some(Cell::Text(short.as_bytes()))
        );
        let cut = "x".repeat(MAX_STRING_BYTES);
        assert_eq!(cell(&key(json!(cut)), field), Some(Cell::Other));
        let compound = compound_key(1, FieldKind::Attributes, 2, ConceptId(7));
        assert_eq!(cell(&compound, field), Some(Cell::Other));
        assert_eq!(entry_id(&compound), Some(ConceptId(7)));
        // A compound key sorts after every string, outside the strings' range.
        assert!(key(json!("\u{10FFFF}\u{10FFFF}")) < compound);
        assert_eq!(cell(&compound[..compound.len() - 1], field), None);
    }
}
