//! Positions at the protocol's edge. Inside, everything is a byte offset; the client counts
//! characters in UTF-16 code units unless it offered UTF-8 during `initialize`. A client can send a
//! position past a line's end or inside a surrogate pair: both are clamped, never trusted.

use lsp_types::{Position, Range};

use crate::text::Units;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    Utf8,
    Utf16,
}

/// Line starts of one text and its counts in the client's unit, for converting in both
/// directions in time that does not grow with the length of a line.
pub struct LineIndex<'t> {
    text: &'t str,
    starts: Vec<usize>,
    units: Units,
}

impl<'t> LineIndex<'t> {
    pub fn new(text: &'t str, enc: Encoding) -> Self {
        let mut starts = vec![0];
        starts.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1));
        let unit = match enc {
            Encoding::Utf8 => char::len_utf8,
            Encoding::Utf16 => char::len_utf16,
        };
        LineIndex {
            text,
            starts,
            units: Units::new(text, unit),
        }
    }

    /// The byte range of a 0-based line, without its line break.
    fn line(&self, line: usize) -> std::ops::Range<usize> {
        let start = self.starts[line];
        let mut end = self
            .starts
            .get(line + 1)
            .map_or(self.text.len(), |&n| n - 1)
            .max(start);
        if end > start && self.text.as_bytes()[end - 1] == b'\r' {
            end -= 1;
        }
        start..end
    }

    /// The text of a 0-based line without its line break; empty past the last line.
    pub fn line_text(&self, line: usize) -> &'t str {
        if line >= self.starts.len() {
            return "";
        }
        &self.text[self.line(line)]
    }

    pub fn position(&self, offset: usize) -> Position {
        let offset = offset.min(self.text.len());
        let line = self.starts.partition_point(|&s| s <= offset) - 1;
        let start = self.starts[line];
        let character = self.units.at(self.text, offset) - self.units.at(self.text, start);
        Position::new(line as u32, character as u32)
    }

    pub fn range(&self, r: &std::ops::Range<usize>) -> Range {
        Range::new(self.position(r.start), self.position(r.end))
    }

    /// The byte offset of a client position (clamped to the text and to its line).
    pub fn offset(&self, p: Position) -> usize {
        let line = p.line as usize;
        if line >= self.starts.len() {
            return self.text.len();
        }
        let range = self.line(line);
        let want = self.units.at(self.text, range.start) + p.character as usize;
        self.units.offset(self.text, range, want)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf16_counts_code_units() {
        let text = "a: 1\n# ü😀 x: 2\n";
        let utf16 = LineIndex::new(text, Encoding::Utf16);
        let utf8 = LineIndex::new(text, Encoding::Utf8);
        let x = text.find('x').unwrap();
        assert_eq!(utf16.position(x), Position::new(1, 6));
        assert_eq!(utf8.position(x), Position::new(1, 9));
        assert_eq!(utf16.offset(Position::new(1, 6)), x);
        assert_eq!(utf8.offset(Position::new(1, 9)), x);
        // Inside a surrogate pair: the end of that character, never inside it.
        assert_eq!(
            utf16.offset(Position::new(1, 4)),
            text.find('😀').unwrap() + 4
        );
        // Past the end of a line: its end; past the last line: the text's end.
        assert_eq!(utf16.offset(Position::new(0, 99)), 4);
        assert_eq!(utf16.offset(Position::new(9, 0)), text.len());
    }

    #[test]
    fn crlf_line_ends_are_not_characters() {
        let text = "a: 1\r\nb: 2\r\n";
        let idx = LineIndex::new(text, Encoding::Utf16);
        assert_eq!(idx.offset(Position::new(0, 50)), 4);
        assert_eq!(idx.position(text.find('b').unwrap()), Position::new(1, 0));
    }
}
