//! Byte encodings of everything the store writes, one codec per file.
//!
//! Keys are built from fixed-width big-endian parts, so that LMDB's byte
//! order is the numeric order of what they encode and prefix scans select
//! exactly one bound position. A variable-length part followed by more parts
//! is closed by a `0x00` separator; since texts may themselves contain `0x00`,
//! readers also check the total length (the trailing parts are fixed-width),
//! which makes every key decode one way only.
//!
//! Values are compact binary ([`value`]); integers inside values use
//! LEB128 varints ([`varint`]).
//!
//! This module owns the byte layout and nothing else: it never opens a
//! transaction. Its types are public so that tests (and tools that inspect a
//! store) can check the layout the crate documentation promises.

pub mod attr_key;
pub mod concept;
pub mod concept_keys;
pub mod document;
pub mod element;
pub mod integer;
pub mod intern;
pub mod name_key;
pub mod posting;
pub mod proposition;
pub mod stat_key;
pub mod state;
pub mod triple;
pub mod value;
pub mod varint;
pub mod vector;
pub mod vector_code;

use heed::BoxedError;

/// A decoding failure: the bytes are not what the layout says. Reported to
/// callers as `StoreError::Corrupt`.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct DecodeError(pub String);

impl DecodeError {
    pub(crate) fn new(what: impl Into<String>) -> DecodeError {
        DecodeError(what.into())
    }
}

impl From<DecodeError> for crate::StoreError {
    fn from(e: DecodeError) -> Self {
        crate::StoreError::Corrupt { detail: e.0 }
    }
}

/// A cursor over bytes being decoded.
#[derive(Debug)]
pub struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    pub fn new(bytes: &'a [u8]) -> Reader<'a> {
        Reader { bytes }
    }

    /// The bytes not read yet.
    pub fn rest(&self) -> &'a [u8] {
        self.bytes
    }

    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    pub fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        if n > self.bytes.len() {
            return Err(DecodeError::new(format!(
                "expected {n} more bytes, found {}",
                self.bytes.len()
            )));
        }
        let (head, tail) = self.bytes.split_at(n);
        self.bytes = tail;
        Ok(head)
    }

    pub fn array<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        let mut out = [0; N];
        out.copy_from_slice(self.take(N)?);
        Ok(out)
    }

    pub fn u8(&mut self) -> Result<u8, DecodeError> {
        Ok(self.array::<1>()?[0])
    }

    pub fn u32_be(&mut self) -> Result<u32, DecodeError> {
        Ok(u32::from_be_bytes(self.array()?))
    }

    pub fn u64_be(&mut self) -> Result<u64, DecodeError> {
        Ok(u64::from_be_bytes(self.array()?))
    }

    pub fn varint(&mut self) -> Result<u64, DecodeError> {
        varint::read(self)
    }

    /// A varint length that must fit in what is left of the input, so a
    /// damaged length can never make the decoder allocate wildly.
    pub fn length(&mut self) -> Result<usize, DecodeError> {
        let n = self.varint()?;
        match usize::try_from(n) {
            Ok(n) if n <= self.bytes.len() => Ok(n),
            _ => Err(DecodeError::new(format!(
                "length {n} exceeds the {} bytes left",
                self.bytes.len()
            ))),
        }
    }

    /// A varint-length-prefixed UTF-8 text.
    pub fn str(&mut self) -> Result<&'a str, DecodeError> {
        let n = self.length()?;
        let bytes = self.take(n)?;
        std::str::from_utf8(bytes).map_err(|e| DecodeError::new(format!("invalid UTF-8: {e}")))
    }

    pub fn finish(&self) -> Result<(), DecodeError> {
        if self.bytes.is_empty() {
            Ok(())
        } else {
            Err(DecodeError::new(format!(
                "{} unexpected trailing bytes",
                self.bytes.len()
            )))
        }
    }
}

/// Appends a varint-length-prefixed byte string.
pub fn write_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    varint::write(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

/// Boxes a decode error the way heed's codec traits want it.
pub(crate) fn boxed(e: DecodeError) -> BoxedError {
    Box::new(e)
}
