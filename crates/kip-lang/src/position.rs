//! Line and column of a byte offset.
//!
//! Lines and columns are 1-based. Columns count Unicode scalar values (so
//! `阿司匹林` advances the column by 4, not 12). A line ends at `\n`, at a
//! lone `\r`, or at `\r\n` (which counts once).

use serde::Serialize;

/// A 1-based line and column (in Unicode scalar values) of a byte offset.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Position {
    pub line: usize,
    pub column: usize,
    pub offset: usize,
}

impl Position {
    /// The position of byte `offset` in `source` (clamped to its length and
    /// to a character boundary).
    pub fn of(source: &str, offset: usize) -> Position {
        let mut offset = offset.min(source.len());
        while !source.is_char_boundary(offset) {
            offset -= 1;
        }
        let mut line = 1;
        let mut column = 1;
        let bytes = source.as_bytes();
        for (i, c) in source[..offset].char_indices() {
            match c {
                '\n' => {
                    line += 1;
                    column = 1;
                }
                // `\r\n` is one line break, counted at its `\n`.
                '\r' if bytes.get(i + 1) != Some(&b'\n') => {
                    line += 1;
                    column = 1;
                }
                '\r' => {}
                _ => column += 1,
            }
        }
        Position {
            line,
            column,
            offset,
        }
    }
}
