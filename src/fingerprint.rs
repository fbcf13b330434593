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

/// The key path of the node at `offset` in the document whose root is `root`: mapping keys joined
/// by dots, list items as `[name]` when they have a scalar `name` and `[index]` otherwise. The
/// walk stops at the key or scalar the offset falls on.
pub fn key_path(y: &Yaml, root: NodeId, offset: usize) -> String {
    let mut path = String::new();
    let mut node = root;
    'down: loop {
        match &y.node(node).kind {
            NodeKind::Mapping { entries, .. } => {
                for &(k, v) in entries {
                    let on_key = y.span(k).contains(&offset);
                    if on_key || y.span(v).contains(&offset) {
                        if !path.is_empty() {
                            path.push('.');
                        }
                        path.push_str(y.str(k).unwrap_or("?"));
                        if on_key {
                            return path;
                        }
                        node = v;
                        continue 'down;
                    }
                }
            }
            NodeKind::Sequence { items, .. } => {
                for (i, &item) in items.iter().enumerate() {
                    if y.span(item).contains(&offset) {
                        match y
                            .is_mapping(item)
                            .then(|| y.get_str(item, "name"))
                            .flatten()
                        {
                            Some(name) => {
                                path.push('[');
                                path.push_str(name);
                                path.push(']');
                            }
                            None => {
                                path.push('[');
                                crate::text::push_int(&mut path, i);
                                path.push(']');
                            }
                        }
                        node = item;
                        continue 'down;
                    }
                }
            }
            _ => {}
        }
        return path;
    }
}

/// The fingerprint of a finding in the file named `file`, whose node has `key_path`.
pub fn of(file: &str, d: &Diagnostic, key_path: &str) -> u64 {
    let object = d.object.as_deref();
    let parts = [
        file,
        object.and_then(|o| o.kind.as_deref()).unwrap_or(""),
        object.and_then(|o| o.namespace.as_deref()).unwrap_or(""),
        object.and_then(|o| o.name.as_deref()).unwrap_or(""),
        d.container.as_deref().unwrap_or(""),
        d.code.as_str(),
        key_path,
    ];
    // FNV-1a, 64 bits: stable across releases and platforms, as a fingerprint that code scanning
    // stores must be; a collision only merges two findings of one file in a count.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in parts {
        for b in p.bytes().chain([0]) {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

/// Set the fingerprint of each of a file's diagnostics, while its tree is at hand.
pub fn set_all(file: &str, y: &Yaml, diagnostics: &mut [Diagnostic]) {
    for d in diagnostics {
        let root = y.docs.get(d.document).and_then(|doc| doc.root);
        let path = root.map_or_else(String::new, |r| key_path(y, r, d.range.start));
        d.fingerprint = of(file, d, &path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
