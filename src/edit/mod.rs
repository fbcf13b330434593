//! Fix edits: byte-range replacements on the original text, never a re-serialisation, so that
//! everything a fix does not mean to change stays byte-for-byte the same.
//!
//! This module holds the primitive edits rules attach to their findings; [`emit`] writes new
//! entries in the file's own style. They sit below the rules that build them; applying fixes
//! (which re-lints) is the `fix` module's, above the linter.

pub mod emit;

use crate::diagnostic::{Diagnostic, Edit};
use crate::source::Source;
use crate::yaml::{NodeId, Style, Yaml};

/// Quote a string for YAML so that every YAML 1.1 reader sees a string.
pub fn quote(value: &str, prefer_single: bool) -> String {
    let mut s = String::with_capacity(value.len() + 2);
    push_quoted(&mut s, value, prefer_single);
    s
}

/// [`quote`] appended to `out`: most fixes write a quoted value into a longer text.
pub fn push_quoted(out: &mut String, value: &str, prefer_single: bool) {
    let wrap = |out: &mut String, q: char| {
        out.push(q);
        out.push_str(value);
        out.push(q);
    };
    if prefer_single && !value.contains('\'') {
        return wrap(out, '\'');
    }
    if value.contains(['"', '\\']) || value.chars().any(char::is_control) {
        if !value.contains('\'') && !value.chars().any(char::is_control) {
            return wrap(out, '\'');
        }
        out.push('"');
        for ch in value.chars() {
            match ch {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\t' => out.push_str("\\t"),
                c if c.is_control() => out.push_str(&format!("\\u{:04x}", c as u32)),
                c => out.push(c),
            }
        }
        out.push('"');
        return;
    }
    wrap(out, '"')
}

/// Replace a scalar's value, keeping single quotes when the user used them and quoting otherwise
/// (a plain `512MiB` is safe, but a plain `off` or `0100` is not, so we always quote).
pub fn replace_scalar(y: &Yaml, node: NodeId, new_value: &str) -> Option<Edit> {
    let (_, style, _) = y.scalar(node)?;
    if y.is_alias(node) {
        return None;
    }
    let text = match style {
        Style::SingleQuoted => quote(new_value, true),
        Style::Plain | Style::DoubleQuoted => quote(new_value, false),
        Style::Literal | Style::Folded => return None,
    };
    Some(Edit {
        range: y.span(node),
        text,
    })
}

/// Delete a block-style `key: value` entry (a nested block value included) that sits alone on its
/// lines, line break included. Returns None when the entry shares its line with something else
/// (flow style), where deleting would need more care than a line edit.
pub fn delete_line_entry(src: &Source, y: &Yaml, key: NodeId, value: NodeId) -> Option<Edit> {
    let start = y.span(key).start;
    let end = content_end(&src.text, y, value);
    let line_start = crate::text::blank_line_start(&src.text, start, |b| b == b' ' || b == b'\t')?;
    let rest = &src.text[end..];
    let line_end = rest.find('\n').map_or(src.text.len(), |i| end + i + 1);
    let tail = src.text[end..line_end].trim_end_matches(['\n', '\r']);
    let tail = tail.trim_start();
    if !(tail.is_empty() || tail.starts_with('#')) {
        return None;
    }
    Some(Edit {
        range: keep_missing_final_break(&src.text, line_start..line_end),
        text: String::new(),
    })
}

/// Deleting whole lines up to the end of a text that has no final line break would leave the
/// break before them as the new final one; take that break instead, so the text still ends
/// without one.
fn keep_missing_final_break(text: &str, lines: std::ops::Range<usize>) -> std::ops::Range<usize> {
    if lines.end != text.len() || text.ends_with('\n') || lines.start == 0 {
        return lines;
    }
    let before = &text[..lines.start];
    let cut = before.len()
        - before
            .strip_suffix("\r\n")
            .or_else(|| before.strip_suffix('\n'))
            .map_or(before.len(), str::len);
    lines.start - cut..lines.end
}

/// Where a node's own text ends in `text` (the text its spans index). A block collection's span
/// runs to the next token (possibly on a later line, past comments), so take the end of its last
/// child instead; so does a block scalar's (see [`block_scalar_end`]).
pub fn content_end(text: &str, y: &Yaml, node: NodeId) -> usize {
    let mut node = node;
    for _ in 0..256 {
        let n = y.node(node);
        let last = match &n.kind {
            crate::yaml::NodeKind::Mapping {
                entries,
                flow: false,
            } => entries.last().map(|(_, v)| *v),
            crate::yaml::NodeKind::Sequence { items, flow: false } => items.last().copied(),
            crate::yaml::NodeKind::Scalar {
                value,
                style: Style::Literal | Style::Folded,
                ..
            } => return block_scalar_end(text, n.span.clone(), value),
            _ => None,
        };
        match last {
            Some(child) => node = child,
            None => return n.span.end,
        }
    }
    y.node(node).span.end
}

/// Where a literal or folded scalar's own lines end. Both parsers end its span where the next
/// token starts: past the line break of its last line, past blank lines, and past the next
/// line's indentation. A line edit placed after that end lands one line too late, inside
/// whatever follows the scalar (a new env entry under `volumeMounts:`, a deletion that takes
/// the next comment line with it).
///
/// The scalar's lines are those before the next token's line; its last line is the last of them
/// with content (anything but at most its indentation in spaces). A scalar that keeps its final
/// line breaks (`|+`, `>+`) also owns the blank lines after that, since they are part of its
/// value: then it ends at the break of the last blank line. The result is never a line's start,
/// so the next line break at or after it ends the scalar's last line.
fn block_scalar_end(text: &str, span: std::ops::Range<usize>, value: &str) -> usize {
    let stop = span.end.min(text.len());
    let stop = if stop == text.len() {
        stop
    } else {
        crate::text::line_start(text, stop)
    };
    let first = crate::text::line_start(text, span.start.min(stop));
    let indent = span.start.saturating_sub(first);
    let mut last = None;
    let mut at = first;
    for line in text[first..stop].split_inclusive('\n') {
        let body = line.trim_end_matches(['\n', '\r']);
        if !(body.len() <= indent && body.bytes().all(|b| b == b' ')) {
            last = Some(at + body.len());
        }
        at += line.len();
    }
    // A scalar with no content line (`key: |` and then a less indented line) ends on its
    // header's line.
    let end = last.unwrap_or_else(|| {
        text[..first]
            .trim_end_matches([' ', '\t', '\r', '\n'])
            .len()
    });
    let breaks = value.len() - value.trim_end_matches('\n').len();
    let keeps_blank_lines = breaks > usize::from(last.is_some());
    if keeps_blank_lines {
        if let Some(i) = text[end..stop].rfind('\n') {
            let nl = end + i;
            return if text[..nl].ends_with('\r') {
                nl - 1
            } else {
                nl
            }
            .max(end);
        }
    }
    end
}

/// Delete a block sequence item (`- name: X` and its continuation lines) with its line breaks.
/// None for flow sequences or items that share a line with something else.
pub fn delete_block_item(src: &Source, y: &Yaml, item: NodeId) -> Option<Edit> {
    let start = y.span(item).start;
    let blank = |b: u8| b == b' ' || b == b'\t';
    let dash = src.text[..start]
        .trim_end_matches([' ', '\t'])
        .strip_suffix('-')?;
    let line_start = crate::text::blank_line_start(&src.text, dash.len(), blank)?;
    let end = content_end(&src.text, y, item);
    let line_end = src.text[end..]
        .find('\n')
        .map_or(src.text.len(), |i| end + i + 1);
    let tail = src.text[end..line_end].trim();
    if !(tail.is_empty() || tail.starts_with('#')) {
        return None;
    }
    Some(Edit {
        range: keep_missing_final_break(&src.text, line_start..line_end),
        text: String::new(),
    })
}

/// Rewrite `value: N` of an env entry into `valueFrom: resourceFieldRef: limits.cpu`, in the
/// entry's own style (block or flow).
pub fn value_to_cpu_field_ref(fx: &emit::Emitter, var: &crate::k8s::EnvVar) -> Option<Edit> {
    let (src, y) = (fx.src, fx.y);
    let (key, value) = y.get_entry(var.entry, "value")?;
    let flow = matches!(
        y.node(y.resolve(var.entry)?).kind,
        crate::yaml::NodeKind::Mapping { flow: true, .. }
    );
    // A block scalar's span runs on to the next token; its own text ends earlier.
    let range = y.span(key).start..content_end(&src.text, y, value);
    let text = if flow {
        // The file's layout, as every other fix reads it (a group of a stream is told it).
        if fx.layout().json {
            r#""valueFrom": {"resourceFieldRef": {"resource": "limits.cpu"}}"#.to_string()
        } else {
            "valueFrom: {resourceFieldRef: {resource: limits.cpu}}".to_string()
        }
    } else {
        // Indent from the key's column: right whether the key starts its line or follows `- `.
        let line_start = crate::text::line_start(&src.text, range.start);
        block_field_ref(src, &" ".repeat(range.start - line_start))
    };
    Some(Edit { range, text })
}

fn block_field_ref(src: &Source, indent: &str) -> String {
    let nl = if src.uses_crlf() { "\r\n" } else { "\n" };
    format!("valueFrom:{nl}{indent}  resourceFieldRef:{nl}{indent}    resource: limits.cpu")
}

/// Drop fixes whose edits fall inside an anchored node that aliases reuse: editing the anchor would
/// change every place it is used, which the finding never asked for. The finding says why.
pub fn guard_shared_edits(src: &Source, y: &Yaml, diags: &mut [Diagnostic]) {
    if !y.has_aliases {
        return;
    }
    let shared: Vec<std::ops::Range<usize>> = y
        .nodes
        .iter()
        .filter_map(|n| match n.kind {
            crate::yaml::NodeKind::Alias { target: Some(t) } => {
                Some(y.span(t).start..content_end(&src.text, y, t))
            }
            _ => None,
        })
        .collect();
    if shared.is_empty() {
        return;
    }
    for d in diags {
        let inside = d.fix.as_ref().is_some_and(|f| {
            f.edits.iter().any(|e| {
                let r = trimmed(&src.text, &e.range);
                shared.iter().any(|s| {
                    if r.is_empty() {
                        s.start < r.start && r.start < s.end
                    } else {
                        s.start <= r.start && r.end <= s.end
                    }
                })
            })
        });
        if inside {
            d.fix = None;
            d.notes.push("not fixed automatically: the fix would edit an anchored node (&…) that aliases reuse elsewhere in the file, changing those places too".into());
        }
    }
}

/// An edit's range without surrounding white space and sequence dashes, which belong to no node.
pub fn trimmed(text: &str, r: &std::ops::Range<usize>) -> std::ops::Range<usize> {
    if r.is_empty() {
        return r.clone();
    }
    let s = &text[r.clone()];
    let lead = s.len() - s.trim_start_matches([' ', '\t', '\r', '\n', '-']).len();
    let body = s.trim_end_matches([' ', '\t', '\r', '\n', ',']).len();
    if lead >= body {
        return r.start + lead..r.start + lead;
    }
    r.start + lead..r.start + body
}
