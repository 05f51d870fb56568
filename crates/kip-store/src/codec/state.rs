//! The `state` database (application state such as imported files' hashes)
//! and the `counters` database (the engine's named counters).
//!
//! `state` key: the [`name_key`](mod@super::name_key) of the state key; value:
//! the full key (varint-length UTF-8, so long keys survive hashing and prefix
//! scans can check the real key) followed by the [`value`](mod@super::value)
//! encoding of the JSON value.
//!
//! `counters` key: the counter's name bytes as given (at most
//! [`MAX_COUNTER_KEY`] bytes, not empty); value: `i64`, 8 bytes BE. A counter
//! that returns to zero is deleted, so the database only holds live counts.

use std::borrow::Cow;

use heed::{BoxedError, BytesDecode, BytesEncode};
use serde_json::Value;

use super::{DecodeError, Reader, boxed, value, write_bytes};

/// The longest counter name, in bytes.
pub const MAX_COUNTER_KEY: usize = 440;

/// Encodes a state entry.
pub fn encode_entry(key: &str, v: &Value) -> Result<Vec<u8>, value::TooDeep> {
    let mut out = Vec::with_capacity(key.len() + 16);
    write_bytes(&mut out, key.as_bytes());
    value::encode(&mut out, v)?;
    Ok(out)
}

/// The `state` value codec: decodes to `(full key, value)`.
#[derive(Debug)]
pub enum StateCodec {}

impl<'a> BytesEncode<'a> for StateCodec {
    type EItem = [u8];
    fn bytes_encode(item: &'a [u8]) -> Result<Cow<'a, [u8]>, BoxedError> {
        Ok(Cow::Borrowed(item))
    }
}

impl<'a> BytesDecode<'a> for StateCodec {
    type DItem = (&'a str, Value);
    fn bytes_decode(bytes: &'a [u8]) -> Result<(&'a str, Value), BoxedError> {
        let mut r = Reader::new(bytes);
        let key = r.str().map_err(boxed)?;
        let v = value::decode(&mut r).map_err(boxed)?;
        r.finish()
            .map_err(|e| boxed(DecodeError::new(format!("state entry: {e}"))))?;
        Ok((key, v))
    }
}

/// Raw-bytes key codec (state and counter keys).
#[derive(Debug)]
pub enum RawKey {}

impl<'a> BytesEncode<'a> for RawKey {
    type EItem = [u8];
    fn bytes_encode(item: &'a [u8]) -> Result<Cow<'a, [u8]>, BoxedError> {
        Ok(Cow::Borrowed(item))
    }
}

impl<'a> BytesDecode<'a> for RawKey {
    type DItem = &'a [u8];
    fn bytes_decode(bytes: &'a [u8]) -> Result<&'a [u8], BoxedError> {
        Ok(bytes)
    }
}
