//! Source text: the bytes of one input turned into checked UTF-8 with a line index.
//!
//! Everything inside the linter works on byte offsets into this text; this module is the one
//! place that turns an offset into the 1-based line and column users see. Columns count Unicode
//! scalar values (the JSON contract), so a line with `é` does not shift later columns.
//! It also refuses inputs that are not text (too large, binary, invalid UTF-8) with a message
//! that names the exact byte, so that the caller can report it as a finding instead of aborting.

use std::path::PathBuf;

/// Largest text parsed in one piece: a document, or a file that is not a stream of documents.
/// `helm template` of the biggest real charts is a few MB; one document far above that is a
/// generated dump or not a manifest, and its tree (some fifteen times its text) would only cost
/// memory.
pub const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// Above this many bytes a stream of documents is linted a group of documents at a time (the
/// linter's `stream` module), each group on one thread. On a 10.6 MB stream of 10,000 documents
/// that took 0.116 s and 84 MB against the whole-file tree's 0.145 s and 198 MB (15 runs in
/// turn); below it most files are one or a few documents, which the grouped path cannot split.
pub const STREAM_ABOVE: usize = 4 << 20;

/// Largest input we read. A stream of documents (`kubectl get -A -o yaml` of a large cluster) is
/// linted a group of documents at a time, so memory follows its text, which stays in memory once.
pub const MAX_STREAM_BYTES: u64 = 512 * 1024 * 1024;

/// Where an input came from, as the user named it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Origin {
    /// A file, with the path as given on the command line or found by the walk.
    File(PathBuf),
    /// Standard input, with the name given by `--stdin-filename` (or `-`).
    Stdin(String),
}

impl Origin {
    /// The name printed in every output format.
    pub fn display_name(&self) -> String {
        match self {
            Origin::File(p) => crate::text::shown_path(p),
            Origin::Stdin(name) => crate::text::printable(name).into_owned(),
        }
    }
}

/// A decoded input.
#[derive(Debug)]
pub struct Source {
    pub origin: Origin,
    pub name: String,
    pub text: String,
    /// Byte offset where the text proper starts (3 when a UTF-8 byte order mark was skipped).
    pub bom_len: usize,
    /// The file is UTF-16 (it starts with that byte order mark): `text` is its decoded text, a
    /// byte offset is not the file's, and kubectl decodes only its first YAML document.
    pub utf16: bool,
    /// UTF-16 text with bytes after its last line feed byte: kubectl's line reader gives that
    /// last line a line feed of one byte, which leaves an incomplete character at the end.
    utf16_odd_end: bool,
    /// UTF-16 in big-endian byte order.
    utf16_be: bool,
    /// Where each line starts. In 32 bits: no text is read past [`MAX_STREAM_BYTES`], and a
    /// 60,000-document stream has 2.5 million lines.
    line_starts: Vec<u32>,
    /// Characters before each offset, built on the first column asked for.
    chars: std::sync::OnceLock<crate::text::Units>,
}

/// An input that could not be treated as YAML text, with the bytes that were read (so the caller
/// can locate the problem without reading the input a second time).
#[derive(Debug)]
pub struct DecodeFailure {
    pub origin: Origin,
    pub error: DecodeError,
    pub bytes: Vec<u8>,
}

/// Why a byte string could not be treated as YAML text. Each carries the byte offset it found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecodeError {
    TooLarge {
        bytes: u64,
    },
    /// A text above [`MAX_FILE_BYTES`] that cannot be read a group of documents at a time: one
    /// document (starting at `offset`) that large, or a text that is not a plain YAML stream.
    TooLargeDocument {
        offset: usize,
        bytes: u64,
    },
    Binary {
        offset: usize,
    },
    InvalidUtf8 {
        offset: usize,
    },
    /// A UTF-16 text with an odd number of bytes or an unpaired surrogate.
    InvalidUtf16 {
        offset: usize,
    },
}

impl DecodeError {
    pub fn offset(&self) -> usize {
        match self {
            DecodeError::TooLarge { .. } => 0,
            DecodeError::Binary { offset }
            | DecodeError::TooLargeDocument { offset, .. }
            | DecodeError::InvalidUtf8 { offset }
            | DecodeError::InvalidUtf16 { offset } => *offset,
        }
    }

    pub fn message(&self) -> String {
        match self {
            // Readers stop one byte past the cap, so `bytes` is a lower bound, not the size.
            DecodeError::TooLarge { .. } => format!(
                "input has more than {} bytes, above the {} MiB limit; not linted (split it, or lint the documents you need)",
                MAX_STREAM_BYTES,
                MAX_STREAM_BYTES / (1024 * 1024)
            ),
            DecodeError::TooLargeDocument { offset, bytes } => format!(
                "input of {bytes} bytes with a document (or text that is not a stream of YAML documents split by `---` lines) larger than the {} MiB a document may have, from byte offset {offset}; not linted (split it)",
                MAX_FILE_BYTES / (1024 * 1024)
            ),
            DecodeError::Binary { offset } => {
                format!("binary file: NUL byte at byte offset {offset}; not linted")
            }
            DecodeError::InvalidUtf8 { offset } => {
                format!("invalid UTF-8 at byte offset {offset}; YAML must be UTF-8 text")
            }
            DecodeError::InvalidUtf16 { offset } => {
                format!("invalid UTF-16 at byte offset {offset} of a file that starts with a UTF-16 byte order mark")
            }
        }
    }
}

/// UTF-16 text (byte order mark included, which becomes U+FEFF) as UTF-8; the byte offset of
/// the first code unit that is not part of a character when there is one.
fn decode_utf16(bytes: &[u8], big: bool) -> Result<String, usize> {
    if bytes.len() % 2 == 1 {
        return Err(bytes.len() - 1);
    }
    let units = bytes.chunks_exact(2).map(|c| {
        if big {
            u16::from_be_bytes([c[0], c[1]])
        } else {
            u16::from_le_bytes([c[0], c[1]])
        }
    });
    let mut text = String::with_capacity(bytes.len());
    let mut at = 0;
    for c in char::decode_utf16(units) {
        let c = c.map_err(|_| at)?;
        at += 2 * c.len_utf16();
        text.push(c);
    }
    Ok(text)
}

impl Source {
    /// Decode bytes. A UTF-8 BOM is kept in `text` (so fixes write it back) but skipped by the
    /// parser through `bom_len`.
    pub fn decode(origin: Origin, bytes: Vec<u8>) -> Result<Source, Box<DecodeFailure>> {
        let fail = |origin, error, bytes| {
            Box::new(DecodeFailure {
                origin,
                error,
                bytes,
            })
        };
        if bytes.len() as u64 > MAX_STREAM_BYTES {
            let error = DecodeError::TooLarge {
                bytes: bytes.len() as u64,
            };
            return Err(fail(origin, error, bytes));
        }
        // kubectl's YAML decoder (go-yaml) reads UTF-16 when a byte order mark says so; the NUL
        // bytes of such a text are half its characters, not a sign of a binary file.
        let big = match bytes.get(..2) {
            Some([0xff, 0xfe]) => Some(false),
            Some([0xfe, 0xff]) => Some(true),
            _ => None,
        };
        if let Some(big) = big {
            return match decode_utf16(&bytes, big) {
                Ok(text) => {
                    let mut src = Source::from_text(origin, text);
                    src.utf16 = true;
                    src.utf16_odd_end = bytes.last() != Some(&b'\n');
                    src.utf16_be = big;
                    Ok(src)
                }
                Err(offset) => Err(fail(origin, DecodeError::InvalidUtf16 { offset }, bytes)),
            };
        }
        if let Some(offset) = memchr::memchr(0, &bytes) {
            return Err(fail(origin, DecodeError::Binary { offset }, bytes));
        }
        let text = match String::from_utf8(bytes) {
            Ok(t) => t,
            Err(e) => {
                let offset = e.utf8_error().valid_up_to();
                return Err(fail(
                    origin,
                    DecodeError::InvalidUtf8 { offset },
                    e.into_bytes(),
                ));
            }
        };
        Ok(Source::from_text(origin, text))
    }

    pub fn from_text(origin: Origin, text: String) -> Source {
        let bom_len = if text.starts_with('\u{feff}') { 3 } else { 0 };
        let mut line_starts = Vec::with_capacity(text.len() / 24 + 1);
        line_starts.push(0);
        line_starts.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| start(i + 1)));
        let name = origin.display_name();
        Source {
            origin,
            name,
            text,
            bom_len,
            utf16: false,
            utf16_odd_end: false,
            utf16_be: false,
            line_starts,
            chars: std::sync::OnceLock::new(),
        }
    }

    /// The text parsed as kubectl decodes it: of a UTF-16 file only the first YAML document
    /// (kubectl cuts a stream at `---` lines before decoding, and in UTF-16 it finds none; go-yaml
    /// then decodes the first document of the piece), the others marked as ignored.
    pub fn parse(&self) -> crate::yaml::Yaml<'_> {
        let mut y = crate::yaml::parse(self.yaml_text(), self.bom_len);
        // go-yaml decodes to the end of the text when the first document is the only one, and
        // then fails on that incomplete character: kubectl refuses the file. (In UTF-16LE the
        // last byte of a file that ends with a line break is the line feed's second byte.)
        if self.utf16 && self.utf16_odd_end && y.docs.len() <= 1 {
            if let Some(doc) = y.docs.first_mut().filter(|d| d.error.is_none()) {
                doc.root = None;
                doc.error = Some(crate::yaml::SyntaxError {
                    offset: doc.span.start,
                    message: "kubectl refuses this UTF-16 file (\"incomplete UTF-16 character\"): its line reader adds a one-byte line feed after the last line feed byte; convert the file to UTF-8".into(),
                });
            }
        }
        if self.utf16 {
            let ignored = y.docs.iter_mut().skip(1);
            for doc in ignored.filter(|d| d.error.is_none() && d.root.is_some()) {
                doc.root = None;
                doc.error = Some(crate::yaml::SyntaxError {
                    offset: doc.span.start,
                    message: "kubectl decodes only the first YAML document of a UTF-16 file and silently ignores this one: convert the file to UTF-8".into(),
                });
            }
        }
        y
    }

    /// `text` in this input's encoding: UTF-8, or UTF-16 in its byte order.
    pub fn encode(&self, text: &str) -> Vec<u8> {
        if !self.utf16 {
            return text.as_bytes().to_vec();
        }
        let be = self.utf16_be;
        text.encode_utf16()
            .flat_map(|u| if be { u.to_be_bytes() } else { u.to_le_bytes() })
            .collect()
    }

    /// The text the YAML parser sees (without a BOM).
    pub fn yaml_text(&self) -> &str {
        &self.text[self.bom_len..]
    }

    /// 0-based line index of a byte offset.
    pub fn line_index(&self, offset: usize) -> usize {
        match self.line_starts.binary_search(&start(offset)) {
            Ok(i) => i,
            Err(i) => i - 1,
        }
    }

    /// 1-based line and column (columns count Unicode scalar values) of a byte offset.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        self.line_col_on(self.line_index(offset), offset)
    }

    /// [`Source::line_col`] for offsets that mostly come in order or close together (a file's
    /// sorted findings and their edits): `line` is the 0-based line of the last lookup, tried
    /// first along with the next one before searching the whole index.
    pub fn line_col_near(&self, line: &mut usize, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let on = |l: usize| {
            self.line_starts
                .get(l)
                .is_some_and(|&s| s as usize <= offset)
                && self
                    .line_starts
                    .get(l + 1)
                    .is_none_or(|&n| offset < n as usize)
        };
        if !on(*line) {
            *line = if on(*line + 1) {
                *line + 1
            } else {
                self.line_index(offset)
            };
        }
        self.line_col_on(*line, offset)
    }

    fn line_col_on(&self, line: usize, offset: usize) -> (usize, usize) {
        let start = self.line_starts[line] as usize;
        // A byte order mark is not a column.
        let chars = self
            .chars
            .get_or_init(|| crate::text::Units::new(&self.text, |c| usize::from(c != '\u{feff}')));
        let col = chars.at(&self.text, offset) - chars.at(&self.text, start);
        (line + 1, col + 1)
    }

    /// Byte range of a 0-based line, without its line break (`\n` or `\r\n`).
    pub fn line_range(&self, line: usize) -> std::ops::Range<usize> {
        let start = self
            .line_starts
            .get(line)
            .map_or(self.text.len(), |&s| s as usize);
        let mut end = self
            .line_starts
            .get(line + 1)
            .map_or(self.text.len(), |&n| n as usize - 1);
        if end > start && self.text.as_bytes()[end - 1] == b'\r' {
            end -= 1;
        }
        start..end.max(start)
    }

    pub fn line_count(&self) -> usize {
        self.line_starts.len()
    }

    /// Whether the text uses CRLF line breaks (decided by the first line break).
    pub fn uses_crlf(&self) -> bool {
        self.text
            .find('\n')
            .is_some_and(|i| i > 0 && self.text.as_bytes()[i - 1] == b'\r')
    }
}

/// A byte offset as the line index keeps it; past 4 GiB (no text is that long), the end.
fn start(offset: usize) -> u32 {
    u32::try_from(offset).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn src(t: &str) -> Source {
        Source::from_text(Origin::Stdin("-".into()), t.to_string())
    }

    #[test]
    fn positions_near_the_last_are_the_positions() {
        for text in [
            "",
            "\n",
            "a: 1\nb: 2\n",
            "a: 1\r\n\r\nb: é\r\n  c: 😀 x\n",
            "\u{feff}k: v\nno final break",
        ] {
            let s = src(text);
            let offsets: Vec<usize> = (0..=text.len() + 2).collect();
            // In order, backwards, and jumping about, from every starting line.
            let jumps: Vec<usize> = offsets.iter().map(|o| o * 7 % (text.len() + 3)).collect();
            let reversed: Vec<usize> = offsets.iter().rev().copied().collect();
            for order in [&offsets, &reversed, &jumps] {
                for first in 0..s.line_count() {
                    let mut line = first;
                    for &o in order {
                        assert_eq!(s.line_col_near(&mut line, o), s.line_col(o), "{text:?} {o}");
                    }
                }
            }
        }
    }

    #[test]
    fn line_col_counts_chars() {
        let s = src("a: 1\nb: é x\r\nc: 3");
        assert_eq!(s.line_col(0), (1, 1));
        assert_eq!(s.line_col(5), (2, 1));
        let x = s.text.find('x').unwrap();
        assert_eq!(s.line_col(x), (2, 6));
        assert_eq!(s.line_range(1), 5..12);
        assert!(!s.uses_crlf());
    }

    #[test]
    fn decode_rejects_binary_and_bad_utf8() {
        let o = || Origin::Stdin("-".into());
        assert_eq!(
            Source::decode(o(), b"a: 1\n\0".to_vec()).unwrap_err().error,
            DecodeError::Binary { offset: 5 }
        );
        assert_eq!(
            Source::decode(o(), b"a: \xff".to_vec()).unwrap_err().error,
            DecodeError::InvalidUtf8 { offset: 3 }
        );
        let s = Source::decode(o(), "\u{feff}a: 1".as_bytes().to_vec()).unwrap();
        assert_eq!(s.bom_len, 3);
        assert_eq!(s.yaml_text(), "a: 1");
        assert_eq!(s.line_col(3), (1, 1));
    }
}
