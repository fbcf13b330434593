//! Small text helpers shared by the parser, the fixes and the outputs: where a line starts, lone
//! carriage returns, columns counted in characters or UTF-16 units, and message pieces (integers,
//! quoted names) written straight into a `String`.

/// The offset where the line holding `pos` starts.
pub fn line_start(text: &str, pos: usize) -> usize {
    text[..pos].rfind('\n').map_or(0, |i| i + 1)
}

/// Where the line holding `pos` starts, when only bytes that `blank` accepts lie between that
/// start and `pos`; None as soon as another byte does. Reads backwards, so it costs the length of
/// that run rather than of the line, which matters on one-line JSON.
pub fn blank_line_start(text: &str, pos: usize, blank: impl Fn(u8) -> bool) -> Option<usize> {
    let b = text.as_bytes();
    let mut i = pos;
    while i > 0 && b[i - 1] != b'\n' {
        if !blank(b[i - 1]) {
            return None;
        }
        i -= 1;
    }
    Some(i)
}

/// Whether the text has a carriage return not followed by a line feed (an old Mac line break,
/// which line-based output and edits would misplace).
pub fn has_lone_cr(text: &str) -> bool {
    let b = text.as_bytes();
    b.iter()
        .enumerate()
        .any(|(i, &c)| c == b'\r' && b.get(i + 1) != Some(&b'\n'))
}

/// Counts of a text unit (characters, UTF-16 code units) from the start of a text to any byte
/// offset. A column is the difference of two counts, so converting one costs at most one stride
/// of the text however long its line is: a one-line JSON document with thousands of findings
/// stays linear instead of counting from the line's start for each of them.
#[derive(Debug)]
pub struct Units {
    /// `(byte offset, units before it)` at the first character boundary of each stride; empty
    /// when every character is one unit and one byte (ASCII text), where the count is the offset.
    marks: Vec<(usize, usize)>,
    unit: fn(char) -> usize,
}

const STRIDE: usize = 256;

impl Units {
    pub fn new(text: &str, unit: fn(char) -> usize) -> Units {
        // Every unit counted here (a character, a UTF-16 unit, a byte) counts ASCII as one.
        if text.is_ascii() {
            return Units {
                marks: Vec::new(),
                unit,
            };
        }
        let mut marks = Vec::with_capacity(text.len() / STRIDE + 1);
        let mut units = 0;
        for (i, c) in text.char_indices() {
            if marks.len() * STRIDE <= i {
                marks.push((i, units));
            }
            units += unit(c);
        }
        Units { marks, unit }
    }

    /// Units in `text[..offset]`; an offset inside a character counts from that character's start.
    pub fn at(&self, text: &str, offset: usize) -> usize {
        let offset = floor_char_boundary(text, offset.min(text.len()));
        if self.marks.is_empty() {
            return offset;
        }
        let k = self.marks.partition_point(|&(at, _)| at <= offset) - 1;
        let (from, units) = self.marks[k];
        units + text[from..offset].chars().map(self.unit).sum::<usize>()
    }

    /// The first byte offset in `range` whose count reaches `units`, or the range's end.
    pub fn offset(&self, text: &str, range: std::ops::Range<usize>, units: usize) -> usize {
        if self.marks.is_empty() {
            return units.clamp(range.start, range.end);
        }
        let k = self.marks.partition_point(|&(_, u)| u <= units).max(1) - 1;
        let (mut at, mut count) = self.marks[k];
        if at < range.start {
            (at, count) = (range.start, self.at(text, range.start));
        }
        if at > range.end {
            return range.end;
        }
        for (i, c) in text[at..range.end].char_indices() {
            if count >= units {
                return at + i;
            }
            count += (self.unit)(c);
        }
        range.end
    }
}

/// The nearest character boundary at or before `at`.
pub fn floor_char_boundary(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// Characters that act on a terminal or a log viewer instead of showing: control characters (an
/// escape sequence, a carriage return that lets a line overwrite itself, C1's one-byte CSI) and
/// the bidirectional overrides that reorder what is shown.
fn acts(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// A name as it can be printed on a terminal: control characters (an escape sequence, a line
/// break in a file name) are shown as Rust escapes, `\u{1b}`, `\n`, instead of acting.
pub fn printable(s: &str) -> std::borrow::Cow<'_, str> {
    // Names are nearly always printable ASCII, where nothing acts.
    if s.bytes().all(|b| (b' '..=b'~').contains(&b)) {
        return std::borrow::Cow::Borrowed(s);
    }
    escape_acting(s, &mut Vec::new(), false, |_, _| true)
}

/// Text from an input (a message quoting a value, a source excerpt) as it can be printed on a
/// terminal or in a CI log, keeping its line structure: like [`printable`], but a tab, a line
/// feed and the carriage return of a `\r\n` stay as they are, and no line starts as a GitHub
/// Actions workflow command (`::error::`, `::add-mask::`, `::stop-commands::`).
pub fn printable_lines(s: &str) -> std::borrow::Cow<'_, str> {
    printable_lines_shifted(s).0
}

/// [`printable_lines`], and where its text grew: for each escaped character, its offset in `s`
/// and the bytes added up to and including it, so that an offset into `s` can be moved into
/// the escaped text.
pub fn printable_lines_shifted(s: &str) -> (std::borrow::Cow<'_, str>, Vec<(usize, usize)>) {
    // Most text is printable ASCII, tabs and line feeds: nothing acts there but a `::` that
    // starts a line, and a byte scan says so faster than a walk over the characters.
    if all_plain(s.as_bytes()) && !s.contains("::") {
        return (std::borrow::Cow::Borrowed(s), Vec::new());
    }
    let mut shifts = Vec::new();
    let text = escape_acting(s, &mut shifts, true, |c, next| match c {
        '\t' | '\n' => false,
        '\r' => next != Some('\n'),
        _ => true,
    });
    (text, shifts)
}

/// Whether every byte is printable ASCII, a tab or a line feed. The bytes are tested in blocks
/// without stopping at the first that is not (so the compiler tests many at once): a whole file
/// is scanned so for every file a human report quotes.
fn all_plain(b: &[u8]) -> bool {
    let plain = |b: u8| (b' '..=b'~').contains(&b) | (b == b'\t') | (b == b'\n');
    b.chunks(64)
        .all(|block| block.iter().fold(true, |ok, &b| ok & plain(b)))
}

/// `\n`, `\u{1b}`: Rust's escape, which every character that [`acts`] gets.
fn push_escaped(out: &mut String, c: char) {
    let e = c.escape_debug();
    if e.len() > 1 {
        out.extend(e);
    } else {
        out.extend(c.escape_unicode());
    }
}

/// Each character that [`acts`] and that `escape` accepts (given the character after it) shown as
/// its Rust escape; `shifts` as [`printable_lines_shifted`] gives them. With `commands`, the
/// text is lines of a log: a line whose first characters other than white space are `::` would be
/// run as a workflow command if it reached a GitHub Actions log (the runner trims the line
/// first), so its first colon is escaped too.
fn escape_acting<'s>(
    s: &'s str,
    shifts: &mut Vec<(usize, usize)>,
    commands: bool,
    escape: impl Fn(char, Option<char>) -> bool,
) -> std::borrow::Cow<'s, str> {
    let mut chars = s.char_indices().peekable();
    let mut out: Option<String> = None;
    let mut line_start = true;
    while let Some((i, c)) = chars.next() {
        let next = chars.peek().map(|&(_, n)| n);
        let command = commands && line_start && c == ':' && next == Some(':');
        let hit = command || (acts(c) && escape(c, next));
        // Whatever is escaped shows as text, so the line has started.
        line_start = !hit && (c.is_whitespace() && (line_start || c == '\n' || c == '\r'));
        if !hit {
            if let Some(o) = &mut out {
                o.push(c);
            }
            continue;
        }
        let o = out.get_or_insert_with(|| {
            let mut o = String::with_capacity(s.len() + 16);
            o.push_str(&s[..i]);
            o
        });
        push_escaped(o, c);
        shifts.push((i, o.len() - (i + c.len_utf8())));
    }
    out.map_or(std::borrow::Cow::Borrowed(s), std::borrow::Cow::Owned)
}

/// A path as every output names it: as given, without a leading `./`, printable.
pub fn shown_path(p: &std::path::Path) -> String {
    let s = p.to_string_lossy();
    printable(s.strip_prefix("./").unwrap_or(&s)).into_owned()
}

/// The candidate nearest to `word` for a "did you mean": one edit away, or a quarter of its
/// length for long words (GK1O1 is GK101, GK999 is nobody's), ignoring case; none otherwise or
/// when `word` is a candidate.
pub fn nearest<'a>(word: &str, candidates: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let word = word.trim().to_ascii_lowercase();
    let (best, d) = candidates
        .map(|c| (c, edit_distance(&word, &c.to_ascii_lowercase())))
        .min_by_key(|&(_, d)| d)?;
    (d > 0 && d <= (word.chars().count() / 4).max(1)).then_some(best)
}

/// Levenshtein distance, over characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let next = (diagonal + usize::from(ca != cb))
                .min(row[j] + 1)
                .min(row[j + 1] + 1);
            diagonal = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

/// Append an integer's decimal digits, as `{}` prints them.
pub fn push_int(s: &mut String, n: impl itoa::Integer) {
    s.push_str(itoa::Buffer::new().format(n));
}

/// Append `s` as `{:?}` prints it.
pub fn push_debug(out: &mut String, s: &str) {
    // Printable ASCII other than `"` and `\` is printed as it is, between quotes; anything else
    // goes to the formatter, which knows Rust's escapes.
    let plain = |b: u8| (b.is_ascii_graphic() || b == b' ') && b != b'"' && b != b'\\';
    if s.bytes().all(plain) {
        out.push('"');
        out.push_str(s);
        out.push('"');
    } else {
        use std::fmt::Write;
        let _ = write!(out, "{s:?}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The block scan says what a byte-by-byte test says, for every byte at every place of a
    /// block, first, last and past the first block.
    #[test]
    fn the_block_scan_of_plain_bytes_agrees_with_each_byte() {
        for byte in 0..=255u8 {
            let plain = matches!(byte, b' '..=b'~' | b'\t' | b'\n');
            for len in [1, 63, 64, 65, 130] {
                for at in [0, len / 2, len - 1] {
                    let mut text = vec![b'a'; len];
                    text[at] = byte;
                    assert_eq!(all_plain(&text), plain, "byte {byte} at {at} of {len}");
                }
            }
        }
        assert!(all_plain(b""));
    }

    /// The index must agree with counting from the start, for every offset and every count, in
    /// texts longer than a stride with characters of every width.
    #[test]
    fn unit_counts_equal_counting_from_the_start() {
        let mixed: String = (0..700)
            .map(|i| ["a", "é", "😀", "\u{2028}", "\r\n", "x"][i % 6])
            .collect();
        for text in ["", "plain ascii", &mixed, &"b".repeat(1000)] {
            for unit in [char::len_utf16 as fn(char) -> usize, |_| 1] {
                let idx = Units::new(text, unit);
                for offset in 0..=text.len() {
                    let want: usize = text[..floor_char_boundary(text, offset)]
                        .chars()
                        .map(unit)
                        .sum();
                    assert_eq!(idx.at(text, offset), want, "{offset}");
                }
                let total = idx.at(text, text.len());
                for units in 0..=total + 2 {
                    let got = idx.offset(text, 0..text.len(), units);
                    let want = text
                        .char_indices()
                        .scan(0, |n, (i, c)| {
                            let before = *n;
                            *n += unit(c);
                            Some((i, before))
                        })
                        .find(|&(_, before)| before >= units)
                        .map_or(text.len(), |(i, _)| i);
                    assert_eq!(got, want, "{units}");
                }
            }
        }
    }

    #[test]
    fn nearest_names_are_close_ones() {
        let names = [
            "GK101",
            "GK109",
            "go-version",
            "memory-limit-without-gomemlimit",
        ];
        let near = |w| nearest(w, names.iter().copied());
        assert_eq!(near("GK1O1"), Some("GK101"));
        assert_eq!(near("gk101"), None, "a candidate itself");
        assert_eq!(near("GK999"), None);
        assert_eq!(near("go-verison"), Some("go-version"));
        assert_eq!(
            near("memory-limit-without-gomemlimt"),
            Some("memory-limit-without-gomemlimit")
        );
        assert_eq!(near("hadolint-DL3008"), None);
    }

    #[test]
    fn control_characters_in_names_are_shown_escaped() {
        assert_eq!(printable("a.yaml"), "a.yaml");
        assert_eq!(printable("a\u{1b}[31m.yaml"), "a\\u{1b}[31m.yaml");
        assert_eq!(printable("a\nb\u{7f}é"), "a\\nb\\u{7f}é");
        assert_eq!(
            shown_path(std::path::Path::new("./d/\r.yaml")),
            "d/\\r.yaml"
        );
    }

    #[test]
    fn input_text_keeps_its_lines_and_loses_its_escapes() {
        assert_eq!(printable_lines("a\tb\r\nc\n"), "a\tb\r\nc\n");
        let (t, shifts) = printable_lines_shifted("x\u{1b}[1m\ry\u{9b}\u{202e}z\r\n");
        assert_eq!(t, "x\\u{1b}[1m\\ry\\u{9b}\\u{202e}z\r\n");
        // Each escaped character's offset, and how much longer the text is after it.
        assert_eq!(shifts, [(1, 5), (5, 6), (7, 10), (9, 15)]);
        assert_eq!(printable("\u{202e}"), "\\u{202e}");
        // A line that GitHub Actions would run as a workflow command, after white space too.
        assert_eq!(
            printable_lines("a ::x\n::error::y\n \u{a0}\t::add-mask::z\n:: \n:a"),
            "a ::x\n\\u{3a}:error::y\n \u{a0}\t\\u{3a}:add-mask::z\n\\u{3a}: \n:a"
        );
        // A name is data, not a line: the same text in every format.
        assert_eq!(printable("::stop-commands::t"), "::stop-commands::t");
    }

    #[test]
    fn quoted_names_read_as_debug_prints_them() {
        let mut names: Vec<String> = (0u8..0x80)
            .map(|b| format!("app{}x", char::from(b)))
            .collect();
        names.extend(["", "api", "é", "a\u{301}", "\u{2028}", "😀", "it's"].map(String::from));
        for n in names {
            let mut s = String::from("x");
            push_debug(&mut s, &n);
            assert_eq!(s, format!("x{n:?}"));
        }
    }

    #[test]
    fn integers_read_as_display_prints_them() {
        for n in [i128::MIN, -1_000_000_007, -1, 0, 7, 1 << 40, i128::MAX] {
            let mut s = String::from("x");
            push_int(&mut s, n);
            assert_eq!(s, format!("x{n}"));
        }
    }
}
