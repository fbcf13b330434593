//! `fix --helm`: the values change that would make the chart render the fixed output.
//!
//! Rendered output is not where a fix belongs: the next `helm template` would undo it. The fix
//! engine still fixes the rendering (so the result is exactly what `fix` would write), and each
//! applied fix's node is then mapped back through the template to a values key; the fixed node's
//! content under that key is the suggestion. Fixes whose node no values key fills are listed with
//! the template line to edit, or with why they could not be mapped.

use super::{Chart, Templates};
use crate::fix::engine::{Outcome, PathSeg};
use crate::yaml::{NodeId, NodeKind, Yaml};

/// One applied fix, placed in the chart.
#[derive(Debug)]
pub struct Placed {
    pub code: crate::diagnostic::Code,
    pub title: String,
    pub origin: crate::diagnostic::ChartOrigin,
}

/// What `fix --helm` prints: a values.yaml fragment and what it covers.
#[derive(Debug, Default)]
pub struct Suggestion {
    pub placed: Vec<Placed>,
    /// The fragment: values keys with the fixed content, merged into one YAML mapping.
    pub values: String,
}

/// A values.yaml tree under construction: keys in first-seen order.
#[derive(Default)]
struct Tree(Vec<(String, Leaf)>);

enum Leaf {
    Text(String),
    Branch(Tree),
}

impl Tree {
    fn insert(&mut self, keys: &[String], text: String) {
        let Some((first, rest)) = keys.split_first() else {
            return;
        };
        let at = match self.0.iter().position(|(k, _)| k == first) {
            Some(i) => i,
            None => {
                self.0.push((first.clone(), Leaf::Branch(Tree::default())));
                self.0.len() - 1
            }
        };
        if rest.is_empty() {
            self.0[at].1 = Leaf::Text(text);
            return;
        }
        match &mut self.0[at].1 {
            Leaf::Branch(t) => t.insert(rest, text),
            // A whole subtree is already set from the fixed output; it holds this part too.
            Leaf::Text(_) => {}
        }
    }

    fn render(&self, indent: usize, out: &mut String) {
        for (k, v) in &self.0 {
            out.push_str(&" ".repeat(indent));
            out.push_str(k);
            out.push(':');
            match v {
                Leaf::Branch(t) => {
                    out.push('\n');
                    t.render(indent + 2, out);
                }
                Leaf::Text(t) if !t.contains('\n') => {
                    out.push(' ');
                    out.push_str(t);
                    out.push('\n');
                }
                Leaf::Text(t) => {
                    out.push('\n');
                    for line in t.lines() {
                        if !line.is_empty() {
                            out.push_str(&" ".repeat(indent + 2));
                        }
                        out.push_str(line);
                        out.push('\n');
                    }
                }
            }
        }
    }
}

/// Turn the fix engine's outcome on a rendering into values changes.
pub fn suggest(o: &Outcome, chart: &Chart) -> Suggestion {
    let y = crate::yaml::parse(&o.text, 0);
    let sources = crate::lint::source_templates(&o.text, &y);
    let mut templates = Templates::default();
    let mut tree = Tree::default();
    let mut placed = Vec::new();
    for a in &o.applied {
        let Some(source) = sources.get(a.document).cloned().flatten() else {
            placed.push(Placed {
                code: a.code,
                title: a.title.clone(),
                origin: crate::diagnostic::ChartOrigin {
                    file: String::new(),
                    line: None,
                    values_key: None,
                    unmapped: Some("the document has no `# Source:` comment".into()),
                },
            });
            continue;
        };
        // The fixed node, and the names along its path, come from the fixed rendering.
        let (node, names) = match node_at(&y, a.document, &a.path) {
            Some((n, names)) => (Some(n), names),
            None => (None, Vec::new()),
        };
        let mut origin = templates.origin(chart, &source, &a.path, &names);
        if let (Some(key), Some(n)) = (origin.values_key.clone(), node) {
            match split_values_key(&key) {
                Some((parts, indices)) => {
                    // A key into a list item names the whole list: values replace lists whole.
                    let n = if indices > 0 {
                        list_named(&y, a.document, &a.path, indices)
                    } else {
                        Some(n)
                    };
                    match n {
                        Some(n) => {
                            tree.insert(&parts, content(&o.text, &y, n));
                            origin.values_key = Some(parts.join("."));
                        }
                        None => origin.values_key = None,
                    }
                }
                None => {
                    origin.unmapped = Some(format!(
                        "the values key {key} cannot be written as a values.yaml path"
                    ));
                    origin.values_key = None;
                }
            }
        }
        placed.push(Placed {
            code: a.code,
            title: a.title.clone(),
            origin,
        });
    }
    let mut values = String::new();
    tree.render(0, &mut values);
    Suggestion { placed, values }
}

/// The node at `path`, and the `name` of each sequence item on the way (containers and env
/// entries are told apart by name).
fn node_at(y: &Yaml, doc: usize, path: &[PathSeg]) -> Option<(NodeId, Vec<Option<String>>)> {
    let mut node = y.docs.get(doc)?.root?;
    let mut names = Vec::new();
    for s in path {
        node = match s {
            PathSeg::Key(k) => y.get(node, k)?,
            PathSeg::Index(i) => {
                let item = *y.items(node).get(*i)?;
                names.push(super::item_name(y, item));
                item
            }
        };
    }
    Some((node, names))
}

/// The list a values key with `indices` list indices names: the list of its first index, which
/// is the `indices`-th list the rendered path goes through, counted from its end. For the key
/// `containers[0].env[1].value` and the path `…containers.0.env.1.value`, the `containers` list.
fn list_named(y: &Yaml, doc: usize, path: &[PathSeg], indices: usize) -> Option<NodeId> {
    let lists: Vec<usize> = path
        .iter()
        .enumerate()
        .filter(|(_, s)| matches!(s, PathSeg::Index(_)))
        .map(|(i, _)| i)
        .collect();
    let at = *lists.get(lists.len().checked_sub(indices)?)?;
    node_at(y, doc, &path[..at]).map(|(n, _)| n)
}

/// `resources.limits.cpu` → its keys and 0; a key with indices (`env[1].value`) is cut at its
/// first list (`env`) and comes with the number of indices. `None` for keys a values.yaml path
/// cannot spell (quoted keys).
fn split_values_key(key: &str) -> Option<(Vec<String>, usize)> {
    if key.contains("[\"") {
        return None;
    }
    let keys = |k: &str| k.split('.').map(str::to_string).collect();
    match key.find('[') {
        Some(i) => Some((keys(&key[..i]), key.matches('[').count())),
        None => Some((keys(key), 0)),
    }
}

/// A node's text as a values.yaml value: a scalar as written, a block collection de-indented.
fn content(text: &str, y: &Yaml, n: NodeId) -> String {
    let span = y.span(n);
    match &y.node(n).kind {
        NodeKind::Mapping { flow: false, .. } | NodeKind::Sequence { flow: false, .. } => {
            let end = crate::edit::content_end(text, y, n);
            let line_start = crate::text::line_start(text, span.start);
            let column = span.start - line_start;
            let mut out = String::new();
            for line in text[line_start..end].lines() {
                let cut = line.len() - line.trim_start_matches(' ').len();
                out.push_str(&line[cut.min(column)..]);
                out.push('\n');
            }
            // A block sequence is written flush under its key; values files indent it the same.
            out
        }
        _ => text[span].to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_with_two_indices_names_its_first_list() {
        let text = "spec:\n  containers:\n  - name: app\n    env:\n    - name: A\n      value: a\n    - name: B\n      value: b\n";
        let y = crate::yaml::parse(text, 0);
        let path = [
            PathSeg::Key("spec".into()),
            PathSeg::Key("containers".into()),
            PathSeg::Index(0),
            PathSeg::Key("env".into()),
            PathSeg::Index(1),
            PathSeg::Key("value".into()),
        ];
        let (parts, indices) = split_values_key("containers[0].env[1].value").unwrap();
        assert_eq!((parts, indices), (vec!["containers".to_string()], 2));
        let first_name = |list: NodeId| super::super::item_name(&y, y.items(list)[0]);
        let containers = list_named(&y, 0, &path, 2).unwrap();
        assert_eq!(first_name(containers).as_deref(), Some("app"));
        let env = list_named(&y, 0, &path, 1).unwrap();
        assert_eq!(first_name(env).as_deref(), Some("A"));
        assert_eq!(list_named(&y, 0, &path, 3), None);
        assert_eq!(split_values_key("resources.limits.cpu").unwrap().1, 0);
    }
}
