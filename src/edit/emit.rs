//! Style-aware emitters: new YAML text that reads as if the author of the file had written it
//! (their indent unit, their block-sequence indentation, flow where they used flow, their line
//! breaks), plus the guard that stops a fix from editing text an alias shares with other places.
//!
//! Every emitter returns an [`Edit`] on the original text or a [`Skip`] that says, in words meant
//! for the finding's notes, why the fix was not attached.

use crate::diagnostic::Edit;
use crate::k8s::container::Container;
use crate::source::Source;
use crate::text::{blank_line_start, line_start};
use crate::yaml::{IndentSteps, NodeId, NodeKind, Yaml};

use super::{content_end, push_quoted, quote};

/// Why an emitter declined; shown as a note on the finding.
pub type Skip = String;

/// One file's emitting context. Rules attach fixes while linting, so the file's layout and the
/// spans that aliases share are worked out once per file, on first use, not once per finding.
pub struct Emitter<'a, 'y> {
    pub src: &'a Source,
    pub y: &'a Yaml<'y>,
    /// Line break and JSON-ness, then the indentation, each worked out once when a fix first
    /// asks: most fixes (a value changed, an item appended to a list) never need the
    /// indentation, which may mean walking every node (see [`Indents::detect`]).
    basics: std::sync::OnceLock<(&'static str, bool)>,
    indents: std::sync::OnceLock<Indents>,
    /// Where the documents the layout is read from end ([`layout_end`]): both of the above need
    /// it, and finding it scans a large text.
    layout_end: std::sync::OnceLock<usize>,
    shared: std::sync::OnceLock<Vec<std::ops::Range<usize>>>,
}

impl<'a, 'y> Emitter<'a, 'y> {
    pub fn new(src: &'a Source, y: &'a Yaml<'y>) -> Self {
        Emitter {
            src,
            y,
            basics: std::sync::OnceLock::new(),
            indents: std::sync::OnceLock::new(),
            layout_end: std::sync::OnceLock::new(),
            shared: std::sync::OnceLock::new(),
        }
    }

    fn layout_end(&self) -> usize {
        *self.layout_end.get_or_init(|| layout_end(self.src))
    }

    /// Give the file's layout up front: a group of a large stream is linted with the layout of
    /// the whole file (see `crate::stream`), which its own tree cannot tell.
    pub fn preset(&self, json: bool, indents: Indents) {
        let _ = self.basics.set((Layout::basics_nl(self.src), json));
        let _ = self.indents.set(indents);
    }

    pub fn layout(&self) -> Layout<'_> {
        let &(nl, json) = self.basics.get_or_init(|| {
            let json = Layout::json_before(self.y, self.layout_end());
            (Layout::basics_nl(self.src), json)
        });
        Layout { nl, json, em: self }
    }

    /// Refuse to edit a node that lies inside an anchored node some alias refers to: the edit
    /// would change every place that alias appears.
    pub fn guard_shared(&self, node: NodeId, what: impl std::fmt::Display) -> Result<(), Skip> {
        // `what` is formatted only for the refusal: most callers name it with `format_args!`.
        let y = self.y;
        if y.is_alias(node) {
            return Err(format!(
                "not fixed automatically: {what} is an alias (*…) of an anchored node used elsewhere; change it where the anchor is defined"
            ));
        }
        // Whole spans, unlike `guard_shared_edits`, which checks finished edits against each
        // anchored node's content: a node about to get an entry appended may end where its
        // anchored parent's content ends, and the append would then reach every alias of it
        // (tests/fast/fix_corpus.rs has such a file).
        let shared = self.shared.get_or_init(|| {
            if !y.has_aliases {
                return Vec::new();
            }
            y.nodes
                .iter()
                .filter_map(|n| match n.kind {
                    NodeKind::Alias { target: Some(t) } => Some(y.span(t)),
                    _ => None,
                })
                .collect()
        });
        let r = y.span(node);
        if !r.is_empty()
            && shared
                .iter()
                .any(|ts| ts.start <= r.start && r.end <= ts.end)
        {
            return Err(format!(
                "not fixed automatically: {what} sits inside an anchored node (&…) that aliases reuse elsewhere in the file, so editing it would change those places too"
            ));
        }
        Ok(())
    }
}

/// The value of a new env entry.
#[derive(Debug, Clone, Copy)]
pub enum NewValue<'a> {
    /// A literal, always written quoted (YAML 1.1 would mis-type `4` or `off`).
    Literal(&'a str),
    /// `valueFrom.resourceFieldRef.resource` (divisor left at its default of 1).
    ResourceFieldRef(&'a str),
}

/// How the file around an edit is laid out. The indentation is read from the file the first
/// time a fix asks for it.
#[derive(Clone, Copy)]
pub struct Layout<'e> {
    pub nl: &'static str,
    /// The file is JSON: new keys and strings are written double-quoted so it stays JSON.
    pub json: bool,
    em: &'e Emitter<'e, 'e>,
}

/// The file's indentation steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Indents {
    /// Columns a nested block mapping is indented by (2 or 4 in practice).
    pub unit: usize,
    /// Columns a block sequence's dash sits right of its parent key (0: `key:\n- item`).
    pub seq_indent: usize,
}

impl Layout<'_> {
    fn basics_nl(src: &Source) -> &'static str {
        if src.uses_crlf() {
            "\r\n"
        } else {
            "\n"
        }
    }

    /// Whether a document of the tree is a JSON object: new keys are then written as JSON.
    pub fn json(y: &Yaml) -> bool {
        Layout::json_before(y, usize::MAX)
    }

    /// [`Layout::json`] of the documents that start before `end`.
    fn json_before(y: &Yaml, end: usize) -> bool {
        let docs = y.docs.iter().filter(|d| d.span.start < end);
        docs.filter_map(|d| d.root).any(|r| {
            matches!(&y.node(r).kind, NodeKind::Mapping { entries, flow: true }
            if entries.first().is_some_and(|&(k, _)| {
                matches!(y.scalar(k), Some((_, crate::yaml::Style::DoubleQuoted, _)))
            }))
        })
    }

    fn indents(&self) -> Indents {
        let em = self.em;
        *em.indents
            .get_or_init(|| Indents::detect(em.src, em.y, em.layout_end()))
    }

    pub fn unit(&self) -> usize {
        self.indents().unit
    }

    pub fn seq_indent(&self) -> usize {
        self.indents().seq_indent
    }
}

impl Indents {
    /// Read the indentation from the file itself: the most common indent of nested mappings and
    /// of block sequences under a key, in the documents that start before `end` (its first MiB,
    /// [`layout_end`]). Files with no nesting get two spaces, indented sequences.
    pub fn detect(src: &Source, y: &Yaml, end: usize) -> Indents {
        if end < src.text.len() {
            let first = y.nodes.iter().filter(|n| n.span.start < end);
            return Indents::from_steps(y.walk_indent_steps(&src.text, first));
        }
        Indents::from_steps(Indents::steps(src, y))
    }

    /// The indentation steps of a tree, counted as [`Indents::detect`] counts them; those of the
    /// parts of a text add up to those of the whole.
    pub fn steps(src: &Source, y: &Yaml) -> IndentSteps {
        // The fast parser counts the steps as it reads. Its columns leave out a byte-order mark,
        // which the counts from the tree include on the first line, so such a file is walked.
        match y.indent_steps {
            Some(steps) if src.bom_len == 0 => steps,
            // Counted in parallel for one large stream: the first fix that needs the layout
            // waits for it, and so does every other thread.
            _ if y.nodes.len() >= crate::yaml::PARALLEL_NODES => {
                use rayon::prelude::*;
                y.nodes
                    .par_chunks(16_384)
                    .map(|nodes| y.walk_indent_steps(&src.text, nodes))
                    .reduce(IndentSteps::default, |mut a, b| {
                        a.add(&b);
                        a
                    })
            }
            _ => y.walk_indent_steps(&src.text, &y.nodes),
        }
    }

    /// The most common steps among `steps`.
    pub fn from_steps(steps: IndentSteps) -> Indents {
        let (units, seqs) = (steps.mappings, steps.sequences);
        let most = |counts: &[usize; 9], default: usize| {
            let (best, n) = counts
                .iter()
                .enumerate()
                .max_by_key(|(i, n)| (**n, usize::MAX - i))
                .unwrap_or((default, &0));
            if *n == 0 {
                default
            } else {
                best
            }
        };
        let unit = most(&units, 2);
        Indents {
            unit,
            seq_indent: most(&seqs, unit),
        }
    }
}

/// How much of a large text its layout is read from: the documents that start in its first MiB.
/// A stream of thousands of documents (`kubectl get -A -o yaml`, `helm template` of a platform)
/// is then linted in one pass, its fixes known as soon as its first MiB is read (see
/// `crate::stream`).
pub const LAYOUT_BYTES: usize = 1 << 20;

/// Where the documents the layout is read from end, as an offset into `src.text`: the first
/// document start at least [`LAYOUT_BYTES`] into the text, else the text's end (a smaller text,
/// one large document, or a text not read as a plain YAML stream).
pub fn layout_end(src: &Source) -> usize {
    let text = src.yaml_text();
    if text.len() <= LAYOUT_BYTES {
        return src.text.len();
    }
    crate::yaml::stream_cuts(text, LAYOUT_BYTES)
        .and_then(|cuts| cuts.get(1).copied())
        .map_or(src.text.len(), |cut| src.bom_len + cut)
}

/// Offset just past the line break of the line holding `pos` (the text's end on the last line).
fn next_line(text: &str, pos: usize) -> usize {
    text[pos..].find('\n').map_or(text.len(), |i| pos + i + 1)
}

fn column(text: &str, pos: usize) -> usize {
    pos - line_start(text, pos)
}

fn on_later_line(text: &str, a: usize, b: usize) -> bool {
    b > a && text[a..b].contains('\n')
}

/// The `-` that introduces a block sequence item (it may sit on an earlier line than the item).
fn dash_before(text: &str, y: &Yaml, item: NodeId) -> Option<usize> {
    let start = y.span(item).start;
    let before = text[..start].trim_end_matches([' ', '\t', '\n', '\r']);
    before.ends_with('-').then(|| before.len() - 1)
}

impl Layout<'_> {
    /// A key (or a plain string such as an env name) as this file writes it in flow style.
    fn word(&self, w: &str) -> String {
        if self.json {
            format!("\"{w}\"")
        } else {
            w.to_string()
        }
    }

    /// What goes before a new flow entry that follows `last`: `, ` on one line, or a line break
    /// and the last entry's indentation when the collection has one entry per line.
    fn flow_sep(&self, text: &str, last: usize) -> String {
        match blank_line_start(text, last, |b| b == b' ') {
            Some(start) => format!(",{}{}", self.nl, &text[start..last]),
            None => ", ".to_string(),
        }
    }
}

fn flow_item(lay: &Layout, name: &str, value: NewValue) -> String {
    let w = |x: &str| lay.word(x);
    match value {
        NewValue::Literal(v) => {
            format!(
                "{{{}: {}, {}: {}}}",
                w("name"),
                w(name),
                w("value"),
                quote(v, false)
            )
        }
        NewValue::ResourceFieldRef(r) => format!(
            "{{{}: {}, {}: {{{}: {{{}: {}}}}}}}",
            w("name"),
            w(name),
            w("valueFrom"),
            w("resourceFieldRef"),
            w("resource"),
            w(r)
        ),
    }
}

/// `n` spaces: borrowed from a constant run for any indentation a manifest has, so that
/// writing one costs a copy rather than a push per space or an allocation.
fn spaces(n: usize) -> std::borrow::Cow<'static, str> {
    const RUN: &str = "                                ";
    match RUN.get(..n) {
        Some(s) => std::borrow::Cow::Borrowed(s),
        None => std::borrow::Cow::Owned(" ".repeat(n)),
    }
}

/// A block sequence item for an env entry: `dash` is the indentation before `-`, `pad` the
/// columns from the dash to the item's keys (2 for `- name`).
fn block_item(lay: &Layout, dash: &str, pad: usize, name: &str, value: NewValue) -> String {
    // Written piecewise: this runs for most fixes, and `format!` cost more than all else here.
    let nl = lay.nl;
    let spaces = |out: &mut String, n: usize| out.push_str(&spaces(n));
    let key = |out: &mut String, k: &str| {
        out.push_str(dash);
        spaces(out, pad);
        out.push_str(k);
    };
    let mut out = String::with_capacity(4 * (dash.len() + pad + 8) + name.len() + 64);
    out.push_str(dash);
    out.push('-');
    spaces(&mut out, pad.max(1) - 1);
    out.push_str("name: ");
    out.push_str(name);
    out.push_str(nl);
    match value {
        NewValue::Literal(v) => {
            key(&mut out, "value: ");
            push_quoted(&mut out, v, false);
        }
        NewValue::ResourceFieldRef(r) => {
            let unit = lay.unit();
            key(&mut out, "valueFrom:");
            out.push_str(nl);
            key(&mut out, "");
            spaces(&mut out, unit);
            out.push_str("resourceFieldRef:");
            out.push_str(nl);
            key(&mut out, "");
            spaces(&mut out, 2 * unit);
            out.push_str("resource: ");
            out.push_str(r);
        }
    }
    out.push_str(nl);
    out
}

/// Insert `block` (lines each ending in a line break) at `at`, a line start. At the end of a file
/// without a final line break, the break moves in front so the file still ends the way it did.
fn insert_lines(src: &Source, lay: &Layout, at: usize, block: String) -> Edit {
    let text = if at == src.text.len() && !src.text.is_empty() && !src.text.ends_with('\n') {
        format!("{}{}", lay.nl, block.strip_suffix(lay.nl).unwrap_or(&block))
    } else {
        block
    };
    Edit {
        range: at..at,
        text,
    }
}

/// Add an env entry to a container: appended to its `env` list in that list's style, or a new
/// `env:` key after `image:` when there is none.
pub fn add_env(em: &Emitter, c: &Container, name: &str, value: NewValue) -> Result<Edit, Skip> {
    let (src, y) = (em.src, em.y);
    let text = src.text.as_str();
    let lay = em.layout();
    if let Some(env) = c.env_node {
        em.guard_shared(env, "the container's env list")?;
        return match &y.node(env).kind {
            NodeKind::Sequence { items, flow: true } => {
                let (at, sep) = match items.last() {
                    Some(&last) => (y.span(last).end, lay.flow_sep(text, y.span(last).start)),
                    None => (y.span(env).end - 1, String::new()),
                };
                Ok(Edit {
                    range: at..at,
                    text: format!("{sep}{}", flow_item(&lay, name, value)),
                })
            }
            NodeKind::Sequence { items, flow: false } => {
                let last = *items
                    .last()
                    .ok_or("not fixed automatically: empty env list")?;
                let dash = dash_before(text, y, last).ok_or(
                    "not fixed automatically: cannot tell where the env list's items start",
                )?;
                let Some(indent_start) = blank_line_start(text, dash, |b| b == b' ') else {
                    return Err("not fixed automatically: the env list's last item does not start its own line".into());
                };
                let indent = &text[indent_start..dash];
                let at = next_line(text, content_end(text, y, last));
                let item = match &y.node(last).kind {
                    NodeKind::Mapping { flow: true, .. } => {
                        format!("{indent}- {}{}", flow_item(&lay, name, value), lay.nl)
                    }
                    _ => {
                        let pad = if on_later_line(text, dash, y.span(last).start) {
                            lay.unit()
                        } else {
                            y.span(last).start - dash
                        };
                        block_item(&lay, indent, pad, name, value)
                    }
                };
                Ok(insert_lines(src, &lay, at, item))
            }
            NodeKind::Scalar { .. } if y.is_null(env) => {
                let key = c
                    .env_key
                    .ok_or("not fixed automatically: env without a key")?;
                let key_col = column(text, y.span(key).start);
                let items = block_item(
                    &lay,
                    &" ".repeat(key_col + lay.seq_indent()),
                    2,
                    name,
                    value,
                );
                // Replace the null (`~`, `null` or nothing) up to the end of the line, keeping a
                // trailing comment, and put the list on the lines below.
                let key_end = y.span(key).end;
                let colon = key_end
                    + text[key_end..]
                        .find(':')
                        .ok_or("not fixed automatically: env without a colon")?
                    + 1;
                let line_end = text[colon..]
                    .find(['\r', '\n'])
                    .map_or(text.len(), |i| colon + i);
                let rest = text[colon..line_end].trim();
                let rest = ["~", "null", "Null", "NULL"]
                    .iter()
                    .find_map(|n| rest.strip_prefix(n))
                    .unwrap_or(rest)
                    .trim_start();
                if !(rest.is_empty() || rest.starts_with('#')) {
                    return Err("not fixed automatically: unexpected text after env:".into());
                }
                let comment = if rest.is_empty() {
                    String::new()
                } else {
                    format!(" {rest}")
                };
                Ok(Edit {
                    range: colon..line_end,
                    text: format!(
                        "{comment}{}{}",
                        lay.nl,
                        items.strip_suffix(lay.nl).unwrap_or(&items)
                    ),
                })
            }
            _ => Err("not fixed automatically: the container's env is not a list".into()),
        };
    }

    em.guard_shared(c.node, "the container")?;
    match &y.node(c.node).kind {
        NodeKind::Mapping {
            entries,
            flow: true,
        } => {
            let &(last_key, last) = entries
                .last()
                .ok_or("not fixed automatically: empty container")?;
            let at = y.span(last).end;
            Ok(Edit {
                range: at..at,
                text: format!(
                    "{}{}: [{}]",
                    lay.flow_sep(text, y.span(last_key).start),
                    lay.word("env"),
                    flow_item(&lay, name, value)
                ),
            })
        }
        NodeKind::Mapping {
            entries,
            flow: false,
        } => {
            let &(first, _) = entries
                .first()
                .ok_or("not fixed automatically: empty container")?;
            let key_col = column(text, y.span(first).start);
            // After `image:` when it is a one-line value (env conventionally follows it);
            // otherwise after the container's last entry.
            let after = entries
                .iter()
                .find(|(k, _)| y.str(*k) == Some("image"))
                .filter(|(k, v)| {
                    y.scalar(*v).is_some() && !text[y.span(*k).start..y.span(*v).end].contains('\n')
                })
                .map(|&(_, v)| y.span(v).end)
                .unwrap_or_else(|| content_end(text, y, c.node));
            let at = next_line(text, after);
            let items = block_item(
                &lay,
                &" ".repeat(key_col + lay.seq_indent()),
                2,
                name,
                value,
            );
            let block = format!("{}env:{}{items}", " ".repeat(key_col), lay.nl);
            Ok(insert_lines(src, &lay, at, block))
        }
        _ => Err("not fixed automatically: the container is not a mapping".into()),
    }
}

/// Append `key: value_text` (value written as given) to a mapping, in its style.
pub fn add_entry(em: &Emitter, map: NodeId, key: &str, value_text: &str) -> Result<Edit, Skip> {
    let (y, text) = (em.y, em.src.text.as_str());
    em.guard_shared(map, format_args!("the mapping that would get {key}"))?;
    let lay = em.layout();
    match &y.node(map).kind {
        NodeKind::Mapping {
            entries,
            flow: true,
        } => Ok(match entries.last() {
            Some(&(last_key, last)) => {
                let at = y.span(last).end;
                Edit {
                    range: at..at,
                    text: format!(
                        "{}{}: {value_text}",
                        lay.flow_sep(text, y.span(last_key).start),
                        lay.word(key)
                    ),
                }
            }
            None => {
                let at = y.span(map).end - 1;
                Edit {
                    range: at..at,
                    text: format!("{}: {value_text}", lay.word(key)),
                }
            }
        }),
        NodeKind::Mapping { flow: false, .. } => append_block(em, map, |pad, lay| {
            format!("{pad}{key}: {value_text}{}", lay.nl)
        }),
        _ => Err(format!(
            "not fixed automatically: {key} cannot be added here"
        )),
    }
}

/// Insert lines after the last entry of a block mapping; `make` gets the entries' indentation.
fn append_block(
    em: &Emitter,
    map: NodeId,
    make: impl Fn(&str, &Layout) -> String,
) -> Result<Edit, Skip> {
    let (src, y, text) = (em.src, em.y, em.src.text.as_str());
    let NodeKind::Mapping { entries, .. } = &y.node(map).kind else {
        return Err("not fixed automatically: not a mapping".into());
    };
    let &(first, _) = entries
        .first()
        .ok_or("not fixed automatically: empty mapping")?;
    let lay = em.layout();
    let pad = " ".repeat(column(text, y.span(first).start));
    let at = next_line(text, content_end(text, y, map));
    Ok(insert_lines(src, &lay, at, make(&pad, &lay)))
}

/// Add `key:` holding a one-entry mapping `inner: value_text` to a mapping, in its style.
pub fn add_nested_entry(
    em: &Emitter,
    map: NodeId,
    key: &str,
    inner: &str,
    value_text: &str,
) -> Result<Edit, Skip> {
    match &em.y.node(map).kind {
        NodeKind::Mapping { flow: true, .. } => {
            let inner = em.layout().word(inner);
            add_entry(em, map, key, &format!("{{{inner}: {value_text}}}"))
        }
        NodeKind::Mapping { flow: false, .. } => {
            em.guard_shared(map, format_args!("the mapping that would get {key}"))?;
            append_block(em, map, |pad, lay| {
                let (nl, unit) = (lay.nl, spaces(lay.unit()));
                [pad, key, ":", nl, pad, &unit, inner, ": ", value_text, nl].concat()
            })
        }
        _ => Err(format!(
            "not fixed automatically: {key} cannot be added here"
        )),
    }
}

/// Remove one `key: value` entry from a mapping, block or flow.
pub fn remove_entry(em: &Emitter, map: NodeId, key: NodeId, value: NodeId) -> Result<Edit, Skip> {
    let (src, y) = (em.src, em.y);
    em.guard_shared(map, "the mapping")?;
    // The entry must be the one that takes effect, written in this mapping, and the only write
    // of its key: removing it must not bring another value (a repeated key, a merge) back.
    if let NodeKind::Mapping { entries, .. } = &y.node(map).kind {
        let name = y.str(key).unwrap_or_default();
        if !entries.contains(&(key, value)) {
            return Err(format!("not fixed automatically: {name} comes from a merge key (<<); change it where it is written"));
        }
        if y.writes_of(map, name) > 1 {
            return Err(format!("not fixed automatically: {name} is written more than once in this mapping (a repeated key or a merge key), and removing the copy that takes effect would bring another one back"));
        }
    }
    match &y.node(map).kind {
        NodeKind::Mapping {
            entries,
            flow: true,
        } => {
            let i = entries
                .iter()
                .position(|&(k, _)| k == key)
                .ok_or("not fixed automatically: entry not found")?;
            let range = if let Some(&(next, _)) = entries.get(i + 1) {
                y.span(key).start..y.span(next).start
            } else if i > 0 {
                y.span(entries[i - 1].1).end..y.span(value).end
            } else {
                y.span(key).start..y.span(value).end
            };
            Ok(Edit {
                range,
                text: String::new(),
            })
        }
        NodeKind::Mapping { flow: false, .. } => super::delete_line_entry(src, y, key, value)
            .ok_or_else(|| {
                "not fixed automatically: the entry shares its line with other text".into()
            }),
        _ => Err("not fixed automatically: not a mapping".into()),
    }
}

/// Rename a mapping key, keeping its quoting.
pub fn rename_key(y: &Yaml, key: NodeId, new: &str) -> Result<Edit, Skip> {
    let text = match y.scalar(key) {
        Some((_, crate::yaml::Style::Plain, None)) => new.to_string(),
        Some((_, crate::yaml::Style::DoubleQuoted, None)) => format!("\"{new}\""),
        Some((_, crate::yaml::Style::SingleQuoted, None)) => format!("'{new}'"),
        _ => {
            return Err(
                "not fixed automatically: the key is written in a style we do not rewrite".into(),
            )
        }
    };
    Ok(Edit {
        range: y.span(key),
        text,
    })
}

/// Remove one item from a sequence, block or flow (with the comma that separated it).
pub fn remove_item(em: &Emitter, seq: NodeId, item: NodeId) -> Option<Edit> {
    let (src, y) = (em.src, em.y);
    match &y.node(seq).kind {
        NodeKind::Sequence { items, flow: true } => {
            let i = items.iter().position(|&x| x == item)?;
            let range = if let Some(&next) = items.get(i + 1) {
                y.span(item).start..y.span(next).start
            } else if i > 0 {
                y.span(items[i - 1]).end..y.span(item).end
            } else {
                y.span(item)
            };
            Some(Edit {
                range,
                text: String::new(),
            })
        }
        NodeKind::Sequence { flow: false, .. } => super::delete_block_item(src, y, item),
        _ => None,
    }
}

/// Append a mapping of plain `fields` to a container's list under `key` (such as `resizePolicy`),
/// in that list's style; a new `key:` with a one-item list when the container has none.
pub fn add_list_item(
    em: &Emitter,
    container: NodeId,
    key: &str,
    fields: &[(&str, &str)],
) -> Result<Edit, Skip> {
    let (src, y) = (em.src, em.y);
    let text = src.text.as_str();
    let lay = em.layout();
    let flow_map = || {
        let inner: Vec<String> = fields
            .iter()
            .map(|(k, v)| format!("{}: {}", lay.word(k), lay.word(v)))
            .collect();
        format!("{{{}}}", inner.join(", "))
    };
    // Block lines of the item: `dash` before the `-`, the keys `pad` columns right of it.
    let block = |dash: &str, pad: usize| {
        let mut out = String::new();
        for (i, (k, v)) in fields.iter().enumerate() {
            out.push_str(dash);
            if i == 0 {
                out.push('-');
                out.push_str(&spaces(pad.max(1) - 1));
            } else {
                out.push_str(&spaces(pad));
            }
            out.push_str(k);
            out.push_str(": ");
            out.push_str(v);
            out.push_str(lay.nl);
        }
        out
    };
    let Some(list) = y.get(container, key) else {
        return match &y.node(container).kind {
            NodeKind::Mapping { flow: true, .. } => {
                add_entry(em, container, key, &format!("[{}]", flow_map()))
            }
            NodeKind::Mapping { flow: false, .. } => {
                em.guard_shared(container, "the container")?;
                append_block(em, container, |pad, lay| {
                    let dash = format!("{pad}{}", spaces(lay.seq_indent()));
                    format!("{pad}{key}:{}{}", lay.nl, block(&dash, 2))
                })
            }
            _ => Err("not fixed automatically: the container is not a mapping".into()),
        };
    };
    em.guard_shared(list, format_args!("the container's {key} list"))?;
    match &y.node(list).kind {
        NodeKind::Sequence { items, flow: true } => {
            let (at, sep) = match items.last() {
                Some(&last) => (y.span(last).end, lay.flow_sep(text, y.span(last).start)),
                None => (y.span(list).end - 1, String::new()),
            };
            Ok(Edit {
                range: at..at,
                text: format!("{sep}{}", flow_map()),
            })
        }
        NodeKind::Sequence { items, flow: false } => {
            let &last = items
                .last()
                .ok_or_else(|| format!("not fixed automatically: empty {key} list"))?;
            let dash = dash_before(text, y, last).ok_or_else(|| {
                format!("not fixed automatically: cannot tell where the {key} items start")
            })?;
            let Some(indent_start) = blank_line_start(text, dash, |b| b == b' ') else {
                return Err(format!(
                    "not fixed automatically: the {key} list's last item does not start its own line"
                ));
            };
            let pad = if on_later_line(text, dash, y.span(last).start) {
                lay.unit()
            } else {
                y.span(last).start - dash
            };
            let at = next_line(text, content_end(text, y, last));
            Ok(insert_lines(
                src,
                &lay,
                at,
                block(&text[indent_start..dash], pad),
            ))
        }
        _ => Err(format!("not fixed automatically: {key} is not a list")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::Origin;

    /// (line break, indent unit, sequence indent, JSON)
    fn layout(text: &str) -> (&'static str, usize, usize, bool) {
        let src = Source::from_text(Origin::Stdin("-".into()), text.to_string());
        let y = crate::yaml::parse(src.yaml_text(), src.bom_len);
        let em = Emitter::new(&src, &y);
        let lay = em.layout();
        (lay.nl, lay.unit(), lay.seq_indent(), lay.json)
    }

    #[test]
    fn detects_indent_unit_and_sequence_style() {
        assert_eq!(
            layout("a:\n  b:\n    c: 1\n  l:\n  - x\n"),
            ("\n", 2, 0, false)
        );
        assert_eq!(
            layout("a:\r\n    b: 1\r\n    l:\r\n        - x\r\n"),
            ("\r\n", 4, 4, false)
        );
        assert_eq!(layout("a: 1\n").1, 2);
        assert!(layout("{\"a\": {\"b\": 1}}\n").3);
    }
}
