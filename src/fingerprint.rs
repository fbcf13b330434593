//! A finding's identity across edits: what `--new-from-rev` matches old and new findings by, and
//! what SARIF's `partialFingerprints` carry so that code scanning follows an alert when lines
//! move.
//!
//! It is made of what a person names a finding by: the file, the object (kind, namespace, name),
//! the container, the rule and the key path inside the document, where a list item with a `name`
//! is named by it (`containers[api].env[GOGC]`), not by its position. No line or column goes in:
//! a finding that moves with its object keeps its fingerprint, and one in a renamed object or on
//! another key is a new finding.

use crate::diagnostic::Diagnostic;
use crate::yaml::{NodeId, NodeKind, Yaml};

/// One step of a key path.
enum Step<'a> {
    Key(&'a str),
    Name(&'a str),
    Index(usize),
}

/// Walk to the node at `offset` in the document whose root is `root`, handing each step to
/// `step`: mapping keys, and list items by their scalar `name` or else their index. The walk stops
/// at the key or scalar the offset falls on.
fn walk<'y>(y: &'y Yaml, root: NodeId, offset: usize, mut step: impl FnMut(Step<'y>)) {
    let mut node = root;
    'down: loop {
        match &y.node(node).kind {
            NodeKind::Mapping { entries, .. } => {
                // Siblings lie in text order, so the first that can hold the offset is found by
                // bisection: a scan from the start made a list of N items cost N per finding.
                let end = |&(k, v): &(NodeId, NodeId)| y.span(k).end.max(y.span(v).end);
                let first = entries.partition_point(|e| end(e) <= offset);
                for &(k, v) in &entries[first..] {
                    if y.span(k).start > offset {
                        break;
                    }
                    let on_key = y.span(k).contains(&offset);
                    if on_key || y.span(v).contains(&offset) {
                        step(Step::Key(y.str(k).unwrap_or("?")));
                        if on_key {
                            return;
                        }
                        node = v;
                        continue 'down;
                    }
                }
            }
            NodeKind::Sequence { items, .. } => {
                let first = items.partition_point(|&item| y.span(item).end <= offset);
                for (i, &item) in items.iter().enumerate().skip(first) {
                    if y.span(item).start > offset {
                        break;
                    }
                    if y.span(item).contains(&offset) {
                        match y
                            .is_mapping(item)
                            .then(|| y.get_str(item, "name"))
                            .flatten()
                        {
                            Some(name) => step(Step::Name(name)),
                            None => step(Step::Index(i)),
                        }
                        node = item;
                        continue 'down;
                    }
                }
            }
            _ => {}
        }
        return;
    }
}

/// The hash behind fingerprints, defined here rather than taken from a library so that it stays
/// the same across releases and platforms, as a fingerprint code scanning stores must: eight
/// bytes at a time, each field ended by its length so that no two field lists run together.
#[derive(Clone, Copy)]
struct Hash(u64);

impl Hash {
    const START: Hash = Hash(0x243f_6a88_85a3_08d3);

    fn word(self, w: u64) -> Hash {
        let h = (self.0 ^ w).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        Hash(h ^ (h >> 29))
    }

    fn field(mut self, s: &str) -> Hash {
        let b = s.as_bytes();
        let mut chunks = b.chunks_exact(8);
        for c in &mut chunks {
            self = self.word(u64::from_le_bytes(c.try_into().unwrap_or([0; 8])));
        }
        let mut tail = [0u8; 8];
        tail[..chunks.remainder().len()].copy_from_slice(chunks.remainder());
        self.word(u64::from_le_bytes(tail)).word(b.len() as u64)
    }

    fn step(self, s: &Step) -> Hash {
        match s {
            Step::Key(k) => self.word(1).field(k),
            Step::Name(n) => self.word(2).field(n),
            Step::Index(i) => self.word(3).word(*i as u64),
        }
    }
}

/// The part of a fingerprint that names the file, the object and the container.
fn prefix(file: &str, d: &Diagnostic) -> Hash {
    let object = d.object.as_deref();
    Hash::START
        .field(file)
        .field(object.and_then(|o| o.kind.as_deref()).unwrap_or(""))
        .field(object.and_then(|o| o.namespace.as_deref()).unwrap_or(""))
        .field(object.and_then(|o| o.name.as_deref()).unwrap_or(""))
        .field(d.container.as_deref().unwrap_or(""))
}

/// The fingerprint of a finding in the file named `file` that has no place in a tree (a file
/// that is not text): the file, the object and container if any, and the rule.
pub fn of(file: &str, d: &Diagnostic) -> u64 {
    prefix(file, d).field(d.code.as_str()).0
}

/// The fingerprint of a note about a whole input (GitLab's entry for an input not linted): its
/// path and what kind of note it is, never the message, whose wording may change.
pub fn of_input(path: &str, kind: &str) -> u64 {
    Hash::START.field(path).field(kind).0
}

/// A fingerprint as it is written: 16 lowercase hexadecimal digits (as `{:016x}`), without an
/// allocation.
pub fn hex(fp: u64) -> [u8; 16] {
    let mut out = [0u8; 16];
    for (i, b) in out.iter_mut().enumerate() {
        *b = b"0123456789abcdef"[((fp >> (60 - 4 * i)) & 0xf) as usize];
    }
    out
}

/// Set the fingerprint of each of a file's diagnostics, while its tree is at hand; the many
/// findings of a large stream on every thread.
pub fn set_all(file: &str, y: &Yaml, diagnostics: &mut [Diagnostic]) {
    use rayon::prelude::*;
    if diagnostics.len() >= crate::diagnostic::PARALLEL_FINDINGS {
        diagnostics
            .par_chunks_mut(crate::diagnostic::PARALLEL_FINDINGS / 4)
            .for_each(|chunk| set_each(file, y, chunk));
    } else {
        set_each(file, y, diagnostics);
    }
}

fn set_each(file: &str, y: &Yaml, diagnostics: &mut [Diagnostic]) {
    for d in diagnostics {
        let mut h = prefix(file, d).field(d.code.as_str());
        if let Some(root) = y.docs.get(d.document).and_then(|doc| doc.root) {
            walk(y, root, d.range.start, |s| h = h.step(&s));
        }
        d.fingerprint = h.0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The key path of the node at `offset`, written out: `spec.containers[api].env[GOGC].value`.
    fn key_path(y: &Yaml, root: NodeId, offset: usize) -> String {
        let mut path = String::new();
        walk(y, root, offset, |s| match s {
            Step::Key(k) => {
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(k);
            }
            Step::Name(n) => {
                path.push('[');
                path.push_str(n);
                path.push(']');
            }
            Step::Index(i) => {
                path.push('[');
                crate::text::push_int(&mut path, i);
                path.push(']');
            }
        });
        path
    }

    #[test]
    fn list_items_are_named_by_their_name() {
        let text = "spec:\n  containers:\n  - name: api\n    env:\n    - name: GOGC\n      value: \"100\"\n  - image: x\n";
        let y = crate::yaml::parse(text, 0);
        let root = y.docs[0].root.unwrap();
        let at = |needle: &str| key_path(&y, root, text.find(needle).unwrap());
        assert_eq!(at("\"100\""), "spec.containers[api].env[GOGC].value");
        assert_eq!(at("value"), "spec.containers[api].env[GOGC].value");
        assert_eq!(at("image"), "spec.containers[1].image");
        assert_eq!(at("spec"), "spec");
    }

    #[test]
    fn hex_digits_are_format_s() {
        for n in [0, 1, 0xdead_beef, u64::MAX, 0x0123_4567_89ab_cdef] {
            assert_eq!(&hex(n), format!("{n:016x}").as_bytes());
        }
    }

    /// Equal names and paths give equal fingerprints wherever they sit; any other field differs.
    #[test]
    fn fingerprints_follow_names_not_places() {
        let one = "a: 1\nspec:\n  containers:\n  - name: api\n    image: x\n";
        let moved = "# moved\n\nspec:\n  containers:\n  - {image: y, name: api}\na: 1\n";
        let print = |text: &str, file: &str, needle: &str| {
            let y = crate::yaml::parse(text, 0);
            let at = text.find(needle).unwrap();
            let mut d = vec![Diagnostic::new(
                crate::diagnostic::Code::GK101,
                crate::diagnostic::Severity::Warning,
                at..at + 1,
                String::new(),
            )];
            set_all(file, &y, &mut d);
            d[0].fingerprint
        };
        assert_eq!(print(one, "f", "image"), print(moved, "f", "image"));
        assert_ne!(print(one, "f", "image"), print(one, "g", "image"));
        assert_ne!(print(one, "f", "image"), print(one, "f", "name"));
        assert_ne!(print(one, "f", "a:"), print(one, "f", "spec"));
    }
}
