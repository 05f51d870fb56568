//! Opaque pagination cursors.
//!
//! A cursor names a position (how many rows of the ordered result were
//! already returned) in one particular query. It carries a fingerprint of the
//! query's canonical text (placeholders already bound, LIMIT and CURSOR left
//! out) and a tag keyed with a secret of this nexus, so a cursor from another
//! query, another nexus or a hand-edited one is refused with `KIP_1001`
//! instead of silently returning the wrong page.

use std::hash::{DefaultHasher, Hash, Hasher};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use kip_lang::{ErrorCode, KipError};

/// A position in the result of one query.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cursor {
    pub offset: u64,
}

fn fingerprint(query: &str) -> u64 {
    let mut h = DefaultHasher::new();
    query.hash(&mut h);
    h.finish()
}

fn tag(secret: u64, fingerprint: u64, offset: u64) -> u64 {
    let mut h = DefaultHasher::new();
    (secret, fingerprint, offset, "kip-cursor-v1").hash(&mut h);
    h.finish()
}

/// Encodes the position `offset` of `query`.
pub fn encode(secret: u64, query: &str, offset: u64) -> String {
    let fp = fingerprint(query);
    let mut bytes = Vec::with_capacity(24);
    bytes.extend_from_slice(&fp.to_be_bytes());
    bytes.extend_from_slice(&offset.to_be_bytes());
    bytes.extend_from_slice(&tag(secret, fp, offset).to_be_bytes());
    URL_SAFE_NO_PAD.encode(bytes)
}

/// Decodes a cursor of `query`, refusing foreign or forged ones.
pub fn decode(secret: u64, query: &str, token: &str) -> Result<Cursor, KipError> {
    let invalid = |why: &str| {
        KipError::new(ErrorCode::InvalidSyntax, format!("invalid CURSOR: {why}")).with_hint(
            "Pass the `next_cursor` value of the previous page of this same query unchanged, or drop CURSOR to start from the first page.",
        )
    };
    let bytes = URL_SAFE_NO_PAD
        .decode(token.trim())
        .map_err(|_| invalid("it is not a cursor issued by this nexus"))?;
    if bytes.len() != 24 {
        return Err(invalid("it is not a cursor issued by this nexus"));
    }
    let word = |i: usize| {
        let mut w = [0u8; 8];
        w.copy_from_slice(&bytes[i * 8..i * 8 + 8]);
        u64::from_be_bytes(w)
    };
    let (fp, offset, t) = (word(0), word(1), word(2));
    if fp != fingerprint(query) {
        return Err(invalid("it belongs to a different query"));
    }
    if t != tag(secret, fp, offset) {
        return Err(invalid("it was altered or issued by another nexus"));
    }
    Ok(Cursor { offset })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_refuses_foreign_cursors() {
        let token = encode(7, "FIND(?x) WHERE { ?x {type: \"Drug\"} }", 40);
        assert_eq!(
            decode(7, "FIND(?x) WHERE { ?x {type: \"Drug\"} }", &token),
            Ok(Cursor { offset: 40 })
        );
        assert!(decode(7, "FIND(?y) WHERE { ?y {type: \"Drug\"} }", &token).is_err());
        assert!(decode(8, "FIND(?x) WHERE { ?x {type: \"Drug\"} }", &token).is_err());
        assert!(decode(7, "FIND(?x) WHERE { ?x {type: \"Drug\"} }", "garbage").is_err());
        let forged = encode(9, "FIND(?x) WHERE { ?x {type: \"Drug\"} }", 0);
        assert!(decode(7, "FIND(?x) WHERE { ?x {type: \"Drug\"} }", &forged).is_err());
    }
}
