//! The human format's common case written by hand: a finding without colour whose label lies on
//! one line of plain ASCII, and whose message and notes wrap at spaces and hyphens only. miette
//! draws every finding through generic machinery (a Unicode line-break segmenter for each line of
//! text, a gutter for labels that span lines, styles) that was most of a human run's time; for
//! this case its output is simple enough to write directly. Anything else returns `None` and is
//! drawn by miette, so the bytes never depend on which path drew them (the tests compare both).

use std::sync::{Arc, Mutex};

use super::Text;
use crate::diagnostic::{Diagnostic, Severity};

/// miette's drawing characters in the Unicode theme.
const HBAR: char = '─';
const VBAR: char = '│';
const VBAR_BREAK: char = '·';

/// Where a run's messages and notes are cut into rows, at the widths of its output, remembered by
/// text: a run's findings repeat a few hundred texts thousands of times (the same limits, the same
/// fix), and cutting them was most of what this format cost beyond the JSON one. Owned by the
/// run's [`super::Human`].
pub(super) struct Wrapping {
    message: Rows,
    help: Rows,
}

impl Wrapping {
    /// For output `width` columns wide; every indent miette uses here is four or eight columns.
    pub(super) fn new(width: usize) -> Wrapping {
        let wrap = width.saturating_sub(2);
        Wrapping {
            message: Rows::new(wrap.saturating_sub(4)),
            help: Rows::new(wrap.saturating_sub(8)),
        }
    }
}

/// The rows of texts at one width, as byte ranges of each text ([`rows`]); `None` for a text
/// miette must wrap.
struct Rows {
    width: usize,
    known: Mutex<foldhash::HashMap<Box<str>, Option<Cut>>>,
}

/// A text's rows, as byte ranges of it.
type Cut = Arc<[(usize, usize)]>;

/// Texts remembered per width: past this many, new ones are cut each time they come.
const REMEMBERED: usize = 1 << 14;

impl Rows {
    fn new(width: usize) -> Rows {
        Rows {
            width,
            known: Mutex::default(),
        }
    }

    fn of(&self, text: &str) -> Option<Cut> {
        let lock = || self.known.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(known) = lock().get(text) {
            return known.clone();
        }
        // Cut outside the lock: the other threads go on meanwhile.
        let cut: Option<Cut> = rows(text, self.width).map(Arc::from);
        let mut known = lock();
        if known.len() < REMEMBERED {
            known.insert(text.into(), cut.clone());
        }
        cut
    }
}

/// The finding as miette's graphical handler (Unicode theme, no colour, one line of context, the
/// width of `wrapping`) draws it, or `None` when it is not the common case. `label` is the
/// label's start and length in `text` (see [`super::label`]); `name` names the file. Appended to
/// `out`, which holds a part of the finding when it returns `None`.
pub(super) fn render(
    out: &mut String,
    name: &str,
    text: &Text,
    d: &Diagnostic,
    label: (usize, usize),
    wrapping: &Wrapping,
) -> Option<()> {
    let rule = d.code.rule();
    out.push_str(d.code.as_str());
    out.push(' ');
    out.push_str(rule.name);
    out.push_str("\n\n");
    let icon = match d.severity {
        Severity::Error => "  × ",
        Severity::Warning => "  ⚠ ",
        Severity::Info => "  ☞ ",
    };
    // Messages and notes quote values of the input.
    let message = crate::text::printable_lines(&d.message);
    let rows = wrapping.message.of(&message)?;
    fill(out, &message, &rows, icon, "  │ ");
    snippet(out, name, text, label, rule.name)?;
    // The help is the notes and the lines after them, one text to miette, each cut on its own
    // here (a text's rows are its lines' rows), so that nothing is copied to join them.
    let more = super::more_help(d);
    let lines: Vec<&str> = d.notes.iter().chain(&more).map(String::as_str).collect();
    if lines.len() > 1 || lines.first().is_some_and(|l| !l.is_empty()) {
        let mut first = "  help: ";
        for line in lines {
            let line = crate::text::printable_lines(line);
            let rows = wrapping.help.of(&line)?;
            fill(out, &line, &rows, first, HELP_INDENT);
            first = HELP_INDENT;
        }
    }
    Some(())
}

/// Where miette starts the help's second and later rows.
const HELP_INDENT: &str = "        ";

/// The source excerpt: the label's line and one line on each side, numbered, the label drawn
/// under its span.
fn snippet(
    out: &mut String,
    name: &str,
    text: &Text,
    (start, len): (usize, usize),
    label: &str,
) -> Option<()> {
    let around = text.around(start, len)?;
    if text.0.line_range(around.line).len() > super::LONG_LINE {
        return None;
    }
    let data = around.data;
    if !data
        .bytes()
        .all(|b| b == b'\n' || (b' '..=b'~').contains(&b))
    {
        return None;
    }
    if !label.bytes().all(|b| (b' '..=b'~').contains(&b)) {
        return None;
    }
    // The lines as miette splits them, each with the line feed.
    let lines: Vec<&str> = data.split_inclusive('\n').collect();
    let labelled = around.line - around.first;
    let last_number = around.first + lines.len();
    let linum_width = last_number.to_string().len();
    use std::fmt::Write as _;
    repeat(out, ' ', linum_width + 2);
    let _ = writeln!(
        out,
        "╭{HBAR}[{name}:{}:{}]",
        around.line + 1,
        around.column + 1
    );
    for (i, line) in lines.iter().enumerate() {
        let shown = line.trim_end_matches('\n');
        let _ = writeln!(out, " {:linum_width$} {VBAR} {shown}", around.first + i + 1);
        if i != labelled {
            continue;
        }
        // Columns are bytes on a line of ASCII; a zero-length label takes one column.
        let from = around.column;
        let to = from + len.max(1);
        let bar = (from + to) / 2;
        let gutter = |out: &mut String| {
            out.push(' ');
            repeat(out, ' ', linum_width);
            out.push(' ');
            out.push(VBAR_BREAK);
            out.push(' ');
        };
        gutter(out);
        repeat(out, ' ', from);
        repeat(out, HBAR, bar - from);
        out.push(if len == 0 { '▲' } else { '┬' });
        repeat(out, HBAR, to - bar - 1);
        out.push('\n');
        gutter(out);
        repeat(out, ' ', bar);
        out.push('╰');
        out.push(HBAR);
        out.push(HBAR);
        out.push(' ');
        out.push_str(label);
        out.push('\n');
    }
    repeat(out, ' ', linum_width + 2);
    out.push('╰');
    repeat(out, HBAR, 4);
    out.push('\n');
    Some(())
}

fn repeat(out: &mut String, c: char, n: usize) {
    out.extend(std::iter::repeat_n(c, n));
}

/// One fragment of a line as textwrap cuts it: the text's end and the end of the spaces after it.
#[derive(Clone, Copy)]
struct Piece {
    start: usize,
    end: usize,
    spaces_end: usize,
}

/// `rows` of `text`, each indented (the first by `first`, the others by `rest`) and ended by a
/// line feed.
fn fill(out: &mut String, text: &str, rows: &[(usize, usize)], first: &str, rest: &str) {
    for (i, &(from, to)) in rows.iter().enumerate() {
        out.push_str(if i == 0 { first } else { rest });
        out.push_str(&text[from..to]);
        out.push('\n');
    }
}

/// The rows of `text` wrapped as miette wraps it with textwrap at `width` columns (first-fit,
/// words broken where too long, cut after spaces as the Unicode line-break rules allow and after
/// hyphens inside words), as byte ranges of `text`: `None` when a line holds what those rules
/// treat in ways this does not follow (anything but letters, digits, spaces and some
/// punctuation, a word longer than a line, spaces where the rules keep the words together).
fn rows(text: &str, width: usize) -> Option<Vec<(usize, usize)>> {
    let mut rows = Vec::new();
    let mut pieces = Vec::new();
    let mut at = 0;
    for line in text.split('\n') {
        let base = at;
        at += line.len() + 1;
        // A line that fits is one row, wherever it could break: only its characters matter.
        if line.len() <= width {
            if line.starts_with(' ') || !line.bytes().all(|c| SIMPLE[c as usize]) {
                return None;
            }
            rows.push((base, base + line.trim_end_matches(' ').len()));
            continue;
        }
        cut(line, &mut pieces)?;
        if pieces.iter().any(|p| p.end - p.start > width) {
            return None;
        }
        // textwrap puts an empty word first, which takes no room.
        let mut row: Option<(usize, usize)> = None;
        let mut used = 0;
        for p in &pieces {
            let wide = p.end - p.start;
            if let Some((from, to)) = row.filter(|_| used + wide > width) {
                rows.push((base + from, base + to));
                row = None;
                used = 0;
            }
            row = Some((row.map_or(p.start, |(from, _)| from), p.end));
            used += p.spaces_end - p.start;
        }
        rows.push(row.map_or((base, base), |(from, to)| (base + from, base + to)));
    }
    Some(rows)
}

/// The bytes [`cut`] knows the line-break rules of: letters, digits, the space and some
/// punctuation.
static SIMPLE: [bool; 256] = {
    let mut t = [false; 256];
    let mut c = 0;
    while c < 256 {
        t[c] = (c as u8).is_ascii_alphanumeric();
        c += 1;
    }
    let punctuation = b" .,:;()\"'=<>#&*@_-/|+%";
    let mut k = 0;
    while k < punctuation.len() {
        t[punctuation[k] as usize] = true;
        k += 1;
    }
    t
};

/// The fragments of one line (see [`rows`]) into `out`, or `None` when it is not that simple.
/// Where the Unicode rules let a line break between these characters: after spaces (but not
/// before a slash, a separator or a closing mark, and not when an opening bracket comes before
/// them), and after a slash or a bar followed by a letter. Nowhere else: not before a closing
/// mark, a slash or a bar, not around `+` and `%` next to letters and digits. Whatever depends on
/// rules this does not follow (digits after a slash) is left to textwrap.
fn cut(line: &str, out: &mut Vec<Piece>) -> Option<()> {
    out.clear();
    let b = line.as_bytes();
    match b.first() {
        Some(b' ') => return None,
        Some(&c) if !SIMPLE[c as usize] => return None,
        _ => {}
    }
    let letter = |c: u8| {
        c.is_ascii_alphabetic()
            || matches!(c, b'=' | b'<' | b'>' | b'#' | b'&' | b'*' | b'@' | b'_')
    };
    let closing = |c: u8| matches!(c, b'.' | b',' | b':' | b';' | b')');
    // The word before the one being read is held back: a line that ends with a hyphen joins
    // them (below).
    let mut held: Option<std::ops::Range<usize>> = None;
    let mut start = 0;
    let mut last_solid = b.first().copied().unwrap_or(b' ');
    let mut i = 1;
    while i < b.len() {
        let (p, c) = (b[i - 1], b[i]);
        // Most of a line: runs of letters and digits, inside which no line breaks.
        if c.is_ascii_alphanumeric() && p.is_ascii_alphanumeric() {
            while i + 1 < b.len() && b[i + 1].is_ascii_alphanumeric() {
                i += 1;
            }
            last_solid = b[i];
            i += 1;
            continue;
        }
        if !SIMPLE[c as usize] {
            return None;
        }
        let cut = match (p, c) {
            (_, b' ') => false,
            // No break before a slash or a closing mark, even after spaces; before a separator
            // that starts a number, the rules differ between Unicode versions.
            (b' ', b'/' | b')') => false,
            (b' ', b'.' | b',' | b':' | b';') if b.get(i + 1).is_some_and(u8::is_ascii_digit) => {
                return None
            }
            (b' ', b'.' | b',' | b':' | b';') => false,
            (b' ', _) => {
                if last_solid == b'(' {
                    return None;
                }
                true
            }
            (b'/' | b'|', _) if letter(c) => true,
            (b'/' | b'|', b'/' | b'"' | b'\'' | b':' | b'.' | b')' | b',' | b'-' | b'|') => false,
            (b'/' | b'|', _) => return None,
            (b'+' | b'%', _) if c.is_ascii_alphanumeric() || closing(c) || c == b'"' => false,
            (b'+' | b'%', _) => return None,
            (_, b'+' | b'%') if p.is_ascii_alphanumeric() => false,
            (_, b'+' | b'%') => return None,
            (_, b'(') if closing(p) => return None,
            _ => false,
        };
        if cut {
            if let Some(w) = held.replace(start..i) {
                split_word(b, w, out);
            }
            start = i;
        }
        if c != b' ' {
            last_solid = c;
        }
        i += 1;
    }
    // textwrap drops the break before the last word when a line ends with a hyphen (it drops
    // the last opportunity it keeps, meaning the one at the end, which it dropped already).
    if b.last() == Some(&b'-') {
        if let Some(w) = held.take() {
            start = w.start;
        }
    }
    if let Some(w) = held {
        split_word(b, w, out);
    }
    if start < b.len() {
        split_word(b, start..b.len(), out);
    }
    Some(())
}

/// A word as pieces: split after its hyphens that stand between letters or digits, the spaces
/// after it belonging to its last piece.
fn split_word(b: &[u8], w: std::ops::Range<usize>, out: &mut Vec<Piece>) {
    let mut end = w.end;
    while end > w.start && b[end - 1] == b' ' {
        end -= 1;
    }
    let mut from = w.start;
    for i in w.start + 1..end.saturating_sub(1) {
        if b[i] == b'-' && b[i - 1].is_ascii_alphanumeric() && b[i + 1].is_ascii_alphanumeric() {
            out.push(Piece {
                start: from,
                end: i + 1,
                spaces_end: i + 1,
            });
            from = i + 1;
        }
    }
    out.push(Piece {
        start: from,
        end,
        spaces_end: w.end,
    });
}
