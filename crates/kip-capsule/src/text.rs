//! Positions in a capsule's text: byte offsets to 1-based lines and columns,
//! computed once per file.
//!
//! Columns count Unicode scalar values and lines end at `\n`, `\r\n` or a
//! lone `\r`, exactly as [`kip_lang::Position`] counts them, so an error
//! found here and one raised by the nexus for the same byte agree. That
//! function walks the text from its start on every call; a bundle may carry
//! thousands of errors, so this index does the walk once.

/// The start of every line of a text.
#[derive(Debug)]
pub(crate) struct LineIndex {
    /// Byte offset of the first character of each line; `starts[0] == 0`.
    starts: Vec<usize>,
}

impl LineIndex {
    pub(crate) fn new(text: &str) -> LineIndex {
        let bytes = text.as_bytes();
        let mut starts = vec![0];
        let mut i = 0;
        while i < bytes.len() {
            match bytes[i] {
                b'\n' => starts.push(i + 1),
                b'\r' if bytes.get(i + 1) != Some(&b'\n') => starts.push(i + 1),
                _ => {}
            }
            i += 1;
        }
        LineIndex { starts }
    }

    /// The 1-based line and column of byte `offset` (clamped to the text and
    /// to a character boundary).
    pub(crate) fn position(&self, text: &str, offset: usize) -> (usize, usize) {
        let mut offset = offset.min(text.len());
        while !text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.starts.partition_point(|&s| s <= offset);
        let start = self.starts[line - 1];
        // The only `\r` a line can hold before `offset` is the first half of
        // a `\r\n`, which [`kip_lang::Position`] does not count.
        let column = text[start..offset].chars().filter(|&c| c != '\r').count() + 1;
        (line, column)
    }
}

/// Converts the character indices a YAML parser reports into byte offsets.
///
/// Positions arrive almost always in increasing order, so the converter
/// walks forward from the last answer; a step back restarts from the
/// beginning, which keeps it correct for any order.
#[derive(Debug)]
pub(crate) struct CharToByte<'t> {
    text: &'t str,
    chars: usize,
    bytes: usize,
}

impl<'t> CharToByte<'t> {
    pub(crate) fn new(text: &'t str) -> CharToByte<'t> {
        CharToByte {
            text,
            chars: 0,
            bytes: 0,
        }
    }

    pub(crate) fn byte(&mut self, char_index: usize) -> usize {
        if char_index < self.chars {
            self.chars = 0;
            self.bytes = 0;
        }
        while self.chars < char_index {
            match self.text[self.bytes..].chars().next() {
                Some(c) => {
                    self.bytes += c.len_utf8();
                    self.chars += 1;
                }
                None => break,
            }
        }
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agrees_with_kip_lang_positions_on_crlf_cr_and_cjk() {
        let text = "a: 1\r\nb: 阿司匹林\rc: x\n\nd: \"é\"\r\n";
        let index = LineIndex::new(text);
        for offset in 0..=text.len() {
            if !text.is_char_boundary(offset) {
                continue;
            }
            let expected = kip_lang::Position::of(text, offset);
            assert_eq!(
                index.position(text, offset),
                (expected.line, expected.column),
                "offset {offset}"
            );
        }
    }

    #[test]
    fn converts_character_indices_to_byte_offsets_in_any_order() {
        let text = "héllo 阿司匹林 wörld";
        let expected: Vec<usize> = text
            .char_indices()
            .map(|(i, _)| i)
            .chain([text.len()])
            .collect();
        let mut conv = CharToByte::new(text);
        for (ci, &b) in expected.iter().enumerate() {
            assert_eq!(conv.byte(ci), b, "char {ci}");
        }
        for (ci, &b) in expected.iter().enumerate().rev() {
            assert_eq!(conv.byte(ci), b, "char {ci} backwards");
        }
        assert_eq!(conv.byte(1000), text.len());
    }
}
