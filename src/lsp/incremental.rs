//! Re-linting only the documents an edit touched. A keystroke in a manifest of thousands of lines
//! changes one of its documents; linting the whole file again made every keystroke cost the whole
//! file. Instead the server lints a text that keeps the touched documents (with one neighbour on
//! each side) and blanks the rest to bare line breaks, so every kept line has its own line number
//! and content and the diagnostics come out at the positions the whole file gives them. The
//! diagnostics of the other documents are the ones published last, moved by the lines the edit
//! added or removed.
//!
//! Once the lint is partial, what a keystroke costs is mostly the notification: every diagnostic
//! of the file goes out again (most of a megabyte for a file of 20,000 lines), which the server
//! writes and the client reads and parses. So each diagnostic is kept as the JSON it was sent as,
//! and one of an untouched document is sent again as those bytes, its line numbers moved in place
//! when the edit added or removed lines. A diagnostic's fix is not sent at all (it was a third of
//! the notification): it is kept here beside the diagnostic's JSON, moved with it, and the code
//! action request looks it up by the diagnostic the client sends back.
//!
//! What one document's findings may rest on beyond itself is kept in the linted text or avoided:
//! - LimitRanges, VPAs and ConfigMaps are gathered file-wide: every document that names one of
//!   those kinds is kept (not blanked), and an edit to such a document, before or after it, lints
//!   the whole file, since the findings of every other document may change with it.
//! - Suppression comments reach their own document, or the line after them: a comment at the end
//!   of a document may reach the separator of the next one, and a directive (`%TAG`) before a
//!   separator belongs to the document after it. Both neighbours of the touched documents are
//!   therefore linted again with them, and a file with directives or `...` end markers is always
//!   linted whole.
//! - Whether the file is judged at all (no objects, or a template that is not YAML): a partial
//!   lint that finds no object or invalid YAML, or a file whose last lint had invalid YAML,
//!   is linted whole.
//!
//! Documents are cut at `---` lines: the YAML parser starts a document at each, and anchors do
//! not reach across documents. A cut is only taken where its bytes, and the line break before it,
//! are outside the edit, so the same cut holds in the text before and after the edit.

use std::ops::Range;

use lsp_types::{Diagnostic, NumberOrString, Position, TextEdit};
use memchr::memmem;

use super::actions::Fix;

/// Kinds whose objects are gathered from the whole file (see `lint::check_file`).
const FILE_WIDE_KINDS: [&str; 3] = ["LimitRange", "VerticalPodAutoscaler", "ConfigMap"];

/// One published diagnostic: the line it starts on and its JSON.
pub(super) struct Item {
    line: u32,
    json: Box<[u8]>,
    /// Its text names a line of the file ("first on line 12"): moving its positions would not
    /// move that, so an edit that moves it lints the whole file.
    names_lines: bool,
    fix: Option<Box<Fixable>>,
}

/// A fixable diagnostic as the client will send it back with a code action request (its range,
/// code and message), and its fix.
struct Fixable {
    range: lsp_types::Range,
    code: Option<NumberOrString>,
    message: Box<str>,
    fix: Fix,
}

impl Fixable {
    fn is(&self, d: &Diagnostic) -> bool {
        self.range == d.range && self.code == d.code && *self.message == *d.message
    }
}

impl Item {
    pub fn new(d: &Diagnostic, fix: Option<&Fix>) -> Item {
        let names_line = |t: &str| {
            memmem::find_iter(t.as_bytes(), b"line ")
                .any(|i| t.as_bytes().get(i + 5).is_some_and(u8::is_ascii_digit))
        };
        let names_lines = names_line(&d.message)
            || d.related_information
                .iter()
                .flatten()
                .any(|r| names_line(&r.message));
        Item {
            line: d.range.start.line,
            json: serde_json::to_vec(d).unwrap_or_default().into_boxed_slice(),
            names_lines,
            fix: fix.map(|fix| {
                Box::new(Fixable {
                    range: d.range,
                    code: d.code.clone(),
                    message: d.message.as_str().into(),
                    fix: fix.clone(),
                })
            }),
        }
    }
}

/// What the server published for a document last, and how much of the document's text is still
/// the text it was published for.
pub(super) struct Published {
    pub text: String,
    pub items: Vec<Item>,
    /// Whether one of them is GK000 (invalid YAML): where a document ends is then not certain;
    /// or the next lint must be whole for another reason.
    invalid: bool,
    /// Bytes at the start and at the end of the current text that are unchanged since `text`.
    pub same: (usize, usize),
}

impl Published {
    pub fn new(text: String, items: Vec<Item>, invalid: bool) -> Published {
        let len = text.len();
        Published {
            text,
            items,
            invalid,
            same: (len, len),
        }
    }

    /// The fix of a diagnostic published here, as the client sends it back.
    pub fn fix_for(&self, d: &Diagnostic) -> Option<&Fix> {
        self.items
            .iter()
            .filter_map(|i| i.fix.as_deref())
            .find(|f| f.is(d))
            .map(|f| &f.fix)
    }

    /// Lint the whole text next time (what the other files say changed), keeping what was
    /// published until then for code actions.
    pub fn lint_whole_next(&mut self) {
        self.invalid = true;
    }

    /// Record that the bytes `range` of the current text (`len` bytes long) were replaced.
    pub fn changed(&mut self, range: Range<usize>, len: usize) {
        self.same.0 = self.same.0.min(range.start);
        self.same.1 = self.same.1.min(len.saturating_sub(range.end));
    }
}

/// The partial lint of an edited text.
#[derive(Debug)]
pub(super) struct Plan {
    /// The text to lint: the edited text with the lines of documents not needed blanked.
    pub text: String,
    /// The lines (0-based, end exclusive) whose diagnostics come from linting `text`, in the new
    /// text and in the text last published; `u32::MAX` for the end of the text.
    new_lines: Range<u32>,
    old_lines: Range<u32>,
}

impl Plan {
    /// The diagnostics of the whole new text: those of the partial lint on the re-linted lines,
    /// and the ones published last elsewhere (taken from `last`), moved by the lines the edit
    /// added or removed.
    pub fn merge(&self, last: Vec<Item>, fresh: &[(Diagnostic, Option<Fix>)]) -> Vec<Item> {
        let (first, old_end) = (self.old_lines.start, self.old_lines.end);
        let shift = i64::from(self.new_lines.end) - i64::from(old_end);
        let mut out = Vec::with_capacity(last.len() + fresh.len());
        let mut last = last.into_iter().peekable();
        // A finding before the edit may point at a LimitRange after it: every position moves.
        while let Some(item) = last.next_if(|i| i.line < first) {
            out.push(shifted(item, old_end, shift));
        }
        out.extend(
            fresh
                .iter()
                .filter(|(d, _)| self.new_lines.contains(&d.range.start.line))
                .map(|(d, fix)| Item::new(d, fix.as_ref())),
        );
        if old_end != u32::MAX {
            out.extend(
                last.filter(|i| i.line >= old_end)
                    .map(|i| shifted(i, old_end, shift)),
            );
        }
        out
    }
}

/// Move every position at or after line `from` by `shift` lines: the diagnostic's range and its
/// related places, each a `"line":N` in its JSON (a string holds a quote only escaped, so the
/// pattern is never text), and its fix's edits.
fn shifted(item: Item, from: u32, shift: i64) -> Item {
    const KEY: &[u8] = b"\"line\":";
    if shift == 0 {
        return item;
    }
    let old = &item.json;
    let mut json = Vec::with_capacity(old.len() + 8);
    let mut at = 0;
    for hit in memmem::find_iter(old, KEY) {
        let digits = hit + KEY.len();
        let len = old[digits..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        let Some(n) = std::str::from_utf8(&old[digits..digits + len])
            .ok()
            .and_then(|d| d.parse::<i64>().ok())
        else {
            continue;
        };
        json.extend_from_slice(&old[at..digits]);
        let n = if n >= i64::from(from) { n + shift } else { n };
        json.extend_from_slice(n.to_string().as_bytes());
        at = digits + len;
    }
    json.extend_from_slice(&old[at..]);
    let line = if item.line >= from {
        (i64::from(item.line) + shift) as u32
    } else {
        item.line
    };
    let moved = |p: &mut Position| {
        if p.line >= from {
            p.line = (i64::from(p.line) + shift) as u32;
        }
    };
    let fix = item.fix.map(|mut f| {
        moved(&mut f.range.start);
        moved(&mut f.range.end);
        for TextEdit { range, .. } in &mut f.fix.edits {
            moved(&mut range.start);
            moved(&mut range.end);
        }
        f
    });
    Item {
        line,
        json: json.into_boxed_slice(),
        names_lines: item.names_lines,
        fix,
    }
}

/// The `publishDiagnostics` notification of `items`, as it goes on the wire (without the header).
pub(super) fn notification(uri: &lsp_types::Uri, items: &[Item], version: Option<i32>) -> Vec<u8> {
    let uri = serde_json::to_vec(uri).unwrap_or_default();
    let size: usize = items.iter().map(|i| i.json.len() + 1).sum();
    let mut body = Vec::with_capacity(size + uri.len() + 128);
    body.extend_from_slice(
        br#"{"jsonrpc":"2.0","method":"textDocument/publishDiagnostics","params":{"uri":"#,
    );
    body.extend_from_slice(&uri);
    body.extend_from_slice(br#","diagnostics":["#);
    for (n, item) in items.iter().enumerate() {
        if n > 0 {
            body.push(b',');
        }
        body.extend_from_slice(&item.json);
    }
    body.push(b']');
    if let Some(v) = version {
        body.extend_from_slice(format!(r#","version":{v}"#).as_bytes());
    }
    body.extend_from_slice(b"}}");
    body
}

/// Whether a `---` document separator starts at byte `i`.
fn separator_at(t: &[u8], i: usize) -> bool {
    (i == 0 || t[i - 1] == b'\n')
        && t[i..].starts_with(b"---")
        && matches!(t.get(i + 3), Some(b' ' | b'\t' | b'\r' | b'\n'))
}

/// The start of the last separator whose four bytes end at or before `limit`, or 0.
fn separator_before(t: &[u8], limit: usize) -> usize {
    let mut end = limit.min(t.len());
    while let Some(i) = memmem::rfind(&t[..end], b"\n---") {
        if i + 5 <= limit && separator_at(t, i + 1) {
            return i + 1;
        }
        end = i;
    }
    0
}

/// The start of the first separator whose line break before it is at or after `from`, or the
/// end of the text.
fn separator_after(t: &[u8], from: usize) -> usize {
    let mut at = from.min(t.len());
    while let Some(i) = memmem::find(&t[at..], b"\n---") {
        let i = at + i;
        if separator_at(t, i + 1) {
            return i + 1;
        }
        at = i + 1;
    }
    t.len()
}

fn lines(t: &[u8]) -> u32 {
    memchr::memchr_iter(b'\n', t).count() as u32
}

fn names_file_wide_kind(t: &[u8]) -> bool {
    FILE_WIDE_KINDS
        .iter()
        .any(|k| memmem::find(t, k.as_bytes()).is_some())
}

/// How to lint `new` given the text last published and its diagnostics, or `None` when the whole
/// file must be linted again.
pub(super) fn plan(last: &Published, new: &str) -> Option<Plan> {
    let (old, newb) = (last.text.as_bytes(), new.as_bytes());
    let common = old.len().min(newb.len());
    let prefix = last.same.0.min(common);
    let suffix = last.same.1.min(common - prefix);
    // Directives and end markers change where documents begin; invalid YAML may too.
    let unusual = |t: &[u8]| {
        t.first() == Some(&b'%')
            || memmem::find(t, b"\n%").is_some()
            || memmem::find(t, b"\n...").is_some()
    };
    if unusual(newb) || last.invalid {
        return None;
    }
    // The touched documents, then one more on each side.
    let touched = separator_before(newb, prefix);
    let start = separator_before(newb, touched);
    let edit_end = newb.len() - suffix;
    let touched_end = separator_after(newb, edit_end);
    let end = if touched_end == newb.len() {
        touched_end
    } else {
        separator_after(newb, touched_end)
    };
    let old_end = end + old.len() - newb.len();
    if names_file_wide_kind(&old[start..old_end]) || names_file_wide_kind(&newb[start..end]) {
        return None;
    }
    // The documents elsewhere that hold file-wide objects stay as they are.
    let mut kept: Vec<Range<usize>> = Vec::new();
    for kind in FILE_WIDE_KINDS {
        for at in memmem::find_iter(newb, kind.as_bytes()) {
            if (start..end).contains(&at) || kept.last().is_some_and(|r| r.contains(&at)) {
                continue;
            }
            let from = separator_before(newb, at + 1);
            kept.push(from..separator_after(newb, at + 1));
        }
    }
    kept.push(start..end);
    kept.sort_by_key(|r| r.start);
    let mut text = String::with_capacity(end - start + lines(newb) as usize);
    let mut at = 0;
    for r in &kept {
        if r.start < at {
            // Overlapping ranges (two kinds in one document): only the rest of this one.
            if r.end > at {
                text.push_str(&new[at..r.end]);
                at = r.end;
            }
            continue;
        }
        text.extend(std::iter::repeat_n(
            '\n',
            lines(&newb[at..r.start]) as usize,
        ));
        text.push_str(&new[r.start..r.end]);
        at = r.end;
    }
    text.extend(std::iter::repeat_n('\n', lines(&newb[at..]) as usize));
    let first = lines(&newb[..start]);
    let (new_last, old_last) = if end == newb.len() {
        (u32::MAX, u32::MAX)
    } else {
        (
            first + lines(&newb[start..end]),
            first + lines(&old[start..old_end]),
        )
    };
    let moved = |i: &Item| i.line >= old_last && i.names_lines;
    if new_last != old_last && last.items.iter().any(moved) {
        return None;
    }
    Some(Plan {
        text,
        new_lines: first..new_last,
        old_lines: first..old_last,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stream(n: usize) -> String {
        (0..n)
            .map(|i| format!("---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: p{i}\n"))
            .collect()
    }

    #[test]
    fn an_edit_lints_its_document_and_its_neighbours_only() {
        let old = stream(100);
        let mut last = Published::new(old.clone(), Vec::new(), false);
        let at = old.find("name: p50\n").unwrap() + "name: p5".len();
        let mut new = old.clone();
        last.changed(at..at + 1, new.len());
        new.replace_range(at..at + 1, "7\n  namespace: x");
        let plan = plan(&last, &new).expect("a partial lint");
        assert_eq!(plan.text.lines().count(), new.lines().count());
        let kept: Vec<&str> = plan.text.lines().filter(|l| !l.is_empty()).collect();
        assert_eq!(kept.iter().filter(|l| **l == "---").count(), 3, "{kept:?}");
        assert!(kept.contains(&"  name: p49") && kept.contains(&"  name: p57"));
        assert!(kept.contains(&"  name: p51") && !kept.contains(&"  name: p48"));
        assert_eq!(plan.new_lines, 49 * 5..52 * 5 + 1);
        assert_eq!(plan.old_lines, 49 * 5..52 * 5);
    }

    #[test]
    fn documents_the_others_lean_on_are_kept_and_an_edit_to_one_lints_the_whole_file() {
        let old = format!("{}---\nkind: LimitRange\n{}", stream(10), stream(10));
        let mut last = Published::new(old.clone(), Vec::new(), false);
        let at = old.rfind("name: p5\n").unwrap();
        last.changed(at..at, old.len());
        let mut new = old.clone();
        new.insert(at, ' ');
        let plan = plan(&last, &new).expect("a partial lint");
        assert!(plan.text.contains("---\nkind: LimitRange\n"));
        assert!(!plan.text.contains("p0\n"));

        let mut last = Published::new(old.clone(), Vec::new(), false);
        let at = old.find("LimitRange").unwrap();
        last.changed(at..at + 5, old.len());
        let mut new = old.clone();
        new.replace_range(at..at + 5, "");
        assert!(super::plan(&last, &new).is_none());
    }

    #[test]
    fn a_separator_edited_away_joins_its_documents_in_one_lint() {
        let old = stream(10);
        let at = old.match_indices("---\n").nth(5).unwrap().0;
        let mut last = Published::new(old.clone(), Vec::new(), false);
        last.changed(at..at + 1, old.len());
        let mut new = old.clone();
        new.replace_range(at..at + 1, "");
        let plan = plan(&last, &new).expect("a partial lint");
        // Documents 3 to 6 (the joined 4 and 5 with a neighbour on each side).
        assert!(plan.text.contains("p3\n") && plan.text.contains("p6\n"));
        assert!(!plan.text.contains("p2\n") && !plan.text.contains("p7\n"));
    }
}
