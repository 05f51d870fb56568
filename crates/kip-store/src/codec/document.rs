//! An indexed document, the value of the `documents` database (key: the
//! element id): the forward list that lets a document be removed from the
//! postings without the caller re-tokenizing the old text.
//!
//! ```text
//! length (4 bytes BE) · varint-count (varint-len term · varint tf)*
//! ```
//!
//! The length comes first so that BM25's per-document length is read
//! without decoding the terms.

use std::borrow::Cow;

use heed::{BoxedError, BytesDecode, BytesEncode};

use super::{DecodeError, Reader, boxed, varint, write_bytes};

/// A document to store: its length and its distinct terms with frequencies.
#[derive(Clone, Copy, Debug)]
pub struct DocumentRef<'a> {
    pub len: u32,
    pub terms: &'a [(&'a str, u32)],
}

impl DocumentRef<'_> {
    pub fn encode(&self) -> Vec<u8> {
        let mut out =
            Vec::with_capacity(8 + self.terms.iter().map(|(t, _)| t.len() + 3).sum::<usize>());
        out.extend_from_slice(&self.len.to_be_bytes());
        varint::write(&mut out, self.terms.len() as u64);
        for (term, tf) in self.terms {
            write_bytes(&mut out, term.as_bytes());
            varint::write(&mut out, u64::from(*tf));
        }
        out
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

    /// The document's terms and their frequencies.
    pub fn terms(&self) -> Result<Vec<(&'a str, u32)>, DecodeError> {
        let mut r = Reader::new(self.terms);
        let n = r.length()?;
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            let term = r.str()?;
            let tf = u32::try_from(r.varint()?)
                .map_err(|_| DecodeError::new("term frequency exceeds 32 bits"))?;
            out.push((term, tf));
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
