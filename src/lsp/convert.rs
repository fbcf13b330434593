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

    /// The byte offset of a client position (clamped to the text and to its line); what
    /// [`offset_in`] is checked against.
    #[cfg(test)]
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

/// The byte offset of a client position in `text`, found by a scan to its line rather than an
/// index of the whole text (a burst of keystrokes on a large document applies many changes in a
/// row). Past a line's end or inside a character it is clamped as [`LineIndex::offset`] does;
/// past the last line (other than at the start of the line after it) it is None: the client's
/// text is not ours.
pub fn offset_in(text: &str, p: Position, enc: Encoding) -> Option<usize> {
    let bytes = text.as_bytes();
    let line = p.line as usize;
    let start = match line {
        0 => 0,
        n => match memchr::memchr_iter(b'\n', bytes).nth(n - 1) {
            Some(i) => i + 1,
            // The line after the last, at its start: the end of the text.
            None if p.character == 0 && memchr::memchr_iter(b'\n', bytes).count() + 1 == n => {
                return Some(text.len())
            }
            None => return None,
        },
    };
    let mut end = memchr::memchr(b'\n', &bytes[start..]).map_or(text.len(), |i| start + i);
    if end > start && bytes[end - 1] == b'\r' {
        end -= 1;
    }
    let line_text = &text[start..end];
    let want = p.character as usize;
    if line_text.is_ascii() {
        return Some(start + want.min(line_text.len()));
    }
    let mut units = 0;
    for (i, ch) in line_text.char_indices() {
        if units >= want {
            return Some(start + i);
        }
        units += match enc {
            Encoding::Utf8 => ch.len_utf8(),
            Encoding::Utf16 => ch.len_utf16(),
        };
    }
    Some(end)
}

#[cfg(test)]
mod tests {
    #[test]
    fn offsets_without_an_index_agree_with_the_index() {
        let text = "a: 1\r\n# \u{fc}\u{1f600} x: 2\n\nlast";
        for enc in [Encoding::Utf8, Encoding::Utf16] {
            let idx = LineIndex::new(text, enc);
            for line in 0..4 {
                for character in 0..20 {
                    let p = Position::new(line, character);
                    assert_eq!(offset_in(text, p, enc), Some(idx.offset(p)), "{p:?}");
                }
            }
            assert_eq!(offset_in(text, Position::new(4, 0), enc), Some(text.len()));
            assert_eq!(offset_in(text, Position::new(4, 1), enc), None);
            assert_eq!(offset_in(text, Position::new(9, 0), enc), None);
        }
    }

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
