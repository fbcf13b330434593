//! Positions at the protocol's edge. Inside, everything is a byte offset; the client counts
//! characters in UTF-16 code units unless it offered UTF-8 during `initialize`. A client can send a
//! position past a line's end or inside a surrogate pair: both are clamped, never trusted.

use lsp_types::{Position, Range};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    Utf8,
    Utf16,
}

/// Line starts of one text, for converting in both directions.
pub struct LineIndex<'t> {
    text: &'t str,
    starts: Vec<usize>,
}

impl<'t> LineIndex<'t> {
    pub fn new(text: &'t str) -> Self {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        LineIndex { text, starts }
    }

    /// The text of a 0-based line, without its line break.
    fn line(&self, line: usize) -> &'t str {
        let start = self.starts[line];
        let end = self
            .starts
            .get(line + 1)
            .map_or(self.text.len(), |&n| n - 1);
        self.text[start..end.max(start)].trim_end_matches('\r')
    }

    pub fn position(&self, offset: usize, enc: Encoding) -> Position {
        let offset = offset.min(self.text.len());
        let line = match self.starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i - 1,
        };
        let start = self.starts[line];
        let mut upto = offset;
        while !self.text.is_char_boundary(upto) {
            upto -= 1;
        }
        let before = &self.text[start..upto];
        let character = match enc {
            Encoding::Utf8 => before.len(),
            Encoding::Utf16 => before.encode_utf16().count(),
        };
        Position::new(line as u32, character as u32)
    }

    pub fn range(&self, r: &std::ops::Range<usize>, enc: Encoding) -> Range {
        Range::new(self.position(r.start, enc), self.position(r.end, enc))
    }

    /// The byte offset of a client position (clamped to the text and to its line).
    pub fn offset(&self, p: Position, enc: Encoding) -> usize {
        let line = p.line as usize;
        if line >= self.starts.len() {
            return self.text.len();
        }
        let start = self.starts[line];
        let text = self.line(line);
        let want = p.character as usize;
        let mut units = 0;
        for (i, ch) in text.char_indices() {
            if units >= want {
                return start + i;
            }
            units += match enc {
                Encoding::Utf8 => ch.len_utf8(),
                Encoding::Utf16 => ch.len_utf16(),
            };
        }
        start + text.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf16_counts_code_units() {
        let text = "a: 1\n# ü😀 x: 2\n";
        let idx = LineIndex::new(text);
        let x = text.find('x').unwrap();
        assert_eq!(idx.position(x, Encoding::Utf16), Position::new(1, 6));
        assert_eq!(idx.position(x, Encoding::Utf8), Position::new(1, 9));
        assert_eq!(idx.offset(Position::new(1, 6), Encoding::Utf16), x);
        assert_eq!(idx.offset(Position::new(1, 9), Encoding::Utf8), x);
        // Past the end of a line: its end; past the last line: the text's end.
        assert_eq!(idx.offset(Position::new(0, 99), Encoding::Utf16), 4);
        assert_eq!(idx.offset(Position::new(9, 0), Encoding::Utf16), text.len());
    }

    #[test]
    fn crlf_line_ends_are_not_characters() {
        let text = "a: 1\r\nb: 2\r\n";
        let idx = LineIndex::new(text);
        assert_eq!(idx.offset(Position::new(0, 50), Encoding::Utf16), 4);
        assert_eq!(
            idx.position(text.find('b').unwrap(), Encoding::Utf16),
            Position::new(1, 0)
        );
    }
}
