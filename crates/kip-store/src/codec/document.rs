//! An indexed document, the value of the `documents` database (key: the
//! element id): the forward list that lets a document be removed from the
//! postings without the caller re-tokenizing the old text.
//!
//! ```text
//! length (4 bytes BE) · varint-count (varint term-id difference · varint tf)*
//! ```
//!
//! Terms are by id (see [`super::posting`]), in increasing order, each
//! stored as the difference from the previous id (the first from 0). The
//! length comes first so that BM25's per-document length is read without
//! decoding the terms. Formats up to 4 kept the terms' texts instead
//! ([`v4`]); the upgrade to format 5 rewrites every document.

use std::borrow::Cow;

use heed::{BoxedError, BytesDecode, BytesEncode};

use super::{DecodeError, Reader, boxed, varint};

/// A document to store: its length and its distinct term ids with
/// frequencies, sorted by id.
#[derive(Clone, Copy, Debug)]
pub struct DocumentRef<'a> {
    pub len: u32,
    pub terms: &'a [(u32, u32)],
}

impl DocumentRef<'_> {
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(6 + self.terms.len() * 4);
        self.encode_into(&mut out);
        out
    }

    /// [`DocumentRef::encode`] into `out`, which is cleared first (a buffer
    /// reused across documents).
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        out.clear();
        out.extend_from_slice(&self.len.to_be_bytes());
        varint::write(out, self.terms.len() as u64);
        let mut previous = 0;
        for &(id, tf) in self.terms {
            varint::write(out, u64::from(id.wrapping_sub(previous)));
            varint::write(out, u64::from(tf));
            previous = id;
        }
    }
}

/// A stored document, decoded lazily.
#[derive(Clone, Copy, Debug)]
pub struct DocumentView<'a> {
    pub len: u32,
    terms: &'a [u8],
}

impl<'a> DocumentView<'a> {
    pub fn decode(bytes: &'a [u8]) -> Result<DocumentView<'a>, DecodeError> {
        let mut r = Reader::new(bytes);
        let len = r.u32_be()?;
        Ok(DocumentView {
            len,
            terms: r.rest(),
        })
    }

    /// The document's term ids and their frequencies, by id.
    pub fn terms(&self) -> Result<Vec<(u32, u32)>, DecodeError> {
        let mut r = Reader::new(self.terms);
        let n = r.length()?;
        let mut out = Vec::with_capacity(n);
        let mut id: u32 = 0;
        for i in 0..n {
            let delta = u32::try_from(r.varint()?)
                .map_err(|_| DecodeError::new("a term id exceeds 32 bits"))?;
            if i > 0 && delta == 0 {
                return Err(DecodeError::new("a document repeats a term"));
            }
            id = id
                .checked_add(delta)
                .ok_or_else(|| DecodeError::new("a term id exceeds 32 bits"))?;
            let tf = u32::try_from(r.varint()?)
                .map_err(|_| DecodeError::new("term frequency exceeds 32 bits"))?;
            out.push((id, tf));
        }
        r.finish()?;
        Ok(out)
    }
}

/// The `documents` value codec.
#[derive(Debug)]
pub enum DocumentCodec {}

impl<'a> BytesEncode<'a> for DocumentCodec {
    type EItem = DocumentRef<'a>;
    fn bytes_encode(item: &'a DocumentRef<'a>) -> Result<Cow<'a, [u8]>, BoxedError> {
        Ok(Cow::Owned(item.encode()))
    }
}

impl<'a> BytesDecode<'a> for DocumentCodec {
    type DItem = DocumentView<'a>;
    fn bytes_decode(bytes: &'a [u8]) -> Result<DocumentView<'a>, BoxedError> {
        DocumentView::decode(bytes).map_err(boxed)
    }
}

/// Documents as formats 1–4 kept them, read once by the upgrade to
/// format 5:
///
/// ```text
/// length (4 bytes BE) · varint-count (varint-len term · varint tf)*
/// ```
pub mod v4 {
    use super::super::{DecodeError, Reader};

    /// A document's terms' texts with their frequencies.
    pub type Terms<'a> = Vec<(&'a str, u32)>;

    /// The document's length and its terms' texts with frequencies.
    pub fn decode(bytes: &[u8]) -> Result<(u32, Terms<'_>), DecodeError> {
        let mut r = Reader::new(bytes);
        let len = r.u32_be()?;
        let n = r.length()?;
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            let term = r.str()?;
            let tf = u32::try_from(r.varint()?)
                .map_err(|_| DecodeError::new("term frequency exceeds 32 bits"))?;
            out.push((term, tf));
        }
        r.finish()?;
        Ok((len, out))
    }

    /// Encodes a document the old way (for tests of the upgrade).
    pub fn encode(len: u32, terms: &[(&str, u32)]) -> Vec<u8> {
        let mut out = len.to_be_bytes().to_vec();
        super::varint::write(&mut out, terms.len() as u64);
        for (term, tf) in terms {
            super::super::write_bytes(&mut out, term.as_bytes());
            super::varint::write(&mut out, u64::from(*tf));
        }
        out
    }
}
