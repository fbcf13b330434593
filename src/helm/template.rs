//! Reading a chart template's YAML shape without rendering it.
//!
//! A template is text with `{{ … }}` actions, not YAML, but almost every chart writes its
//! manifests as indented YAML with actions at the leaves: `cpu: {{ .Values.cpu }}`, or a key
//! followed by `{{- toYaml .Values.resources | nindent 12 }}`. Reading lines by indentation gives
//! each literal key its path (`spec.template.spec.containers.resources`), and the actions on or
//! under that line say which values key fills it. Anything that cannot be read this way (keys
//! built by `include`, loops, several candidate lines) is reported as not mapped, never guessed.

use crate::fix::engine::PathSeg;

/// A literal YAML key in a template, with the keys above it (sequence items are not counted:
/// rendered indices and template lines do not correspond one to one).
#[derive(Debug, Clone)]
struct KeyLine {
    /// 1-based line number.
    line: usize,
    path: Vec<String>,
    /// The column of the key.
    column: usize,
    /// What follows `key:` on the same line, trimmed.
    rest: String,
    /// The names given by `- name: x` to the sequence items this key is in, outermost first
    /// (None where the name is not literal).
    item_names: Vec<Option<String>>,
    /// The `with .Values.X` blocks this line is inside, innermost last (None: a `with` on
    /// something else, or a `range`, which changes what `.` means in an unknowable way).
    dot: Option<Option<String>>,
}

/// Where a rendered path comes from in one template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mapped {
    /// 1-based line of the template that writes the key (or the block holding it).
    pub line: usize,
    /// The values key that supplies the value, when one can be named.
    pub values_key: Option<String>,
}

/// A scanned template.
pub struct Template {
    keys: Vec<KeyLine>,
    lines: Vec<String>,
}

/// One open `{{ if/with/range/define … }}` block.
enum Frame {
    WithValues(String),
    Opaque,
    Plain,
}

impl Template {
    pub fn scan(text: &str) -> Template {
        let lines: Vec<String> = text.lines().map(str::to_string).collect();
        let mut keys = Vec::new();
        // (column, key or None for a sequence item, the item's literal name)
        let mut stack: Vec<(usize, Option<String>)> = Vec::new();
        let mut frames: Vec<Frame> = Vec::new();
        let mut item_names: Vec<(usize, Option<String>)> = Vec::new();
        for (i, raw) in lines.iter().enumerate() {
            let trimmed = raw.trim_start();
            if trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            }
            if trimmed.starts_with("{{") {
                track_actions(trimmed, &mut frames);
                continue;
            }
            let mut column = raw.len() - trimmed.len();
            let mut body = trimmed;
            let mut item = false;
            if let Some(after) =
                body.strip_prefix("- ")
                    .or(if body == "-" { Some("") } else { None })
            {
                // Items close deeper entries and earlier items at their column, not the key they
                // belong to, which may share the column (`containers:\n- name: a`).
                while stack
                    .last()
                    .is_some_and(|t| t.0 > column || (t.0 == column && t.1.is_none()))
                {
                    stack.pop();
                }
                item_names.retain(|(c, _)| *c < column);
                stack.push((column, None));
                let after_trim = after.trim_start();
                column += 1 + (after.len() - after_trim.len()) + 1;
                body = after_trim;
                item = true;
                item_names.push((column - 2, literal_name(body)));
            }
            let Some((key, rest)) = split_key(body) else {
                // A bare scalar or an action inside a line: nothing to name.
                if !item {
                    track_actions(body, &mut frames);
                }
                continue;
            };
            while stack.last().is_some_and(|t| t.0 >= column) {
                stack.pop();
            }
            item_names.retain(|(c, _)| *c < column);
            let mut path: Vec<String> = stack.iter().filter_map(|t| t.1.clone()).collect();
            path.push(key.clone());
            keys.push(KeyLine {
                line: i + 1,
                path,
                column,
                rest: rest.to_string(),
                item_names: item_names.iter().map(|n| n.1.clone()).collect(),
                dot: dot_of(&frames),
            });
            stack.push((column, Some(key)));
        }
        Template { keys, lines }
    }

    /// Map a rendered path (keys and indices, from the document root) to a template line and,
    /// where it can be named, the values key. `names` gives the rendered `name` of the sequence
    /// item at each index in `path` (containers are told apart by name). `Err` says why not.
    pub fn map(&self, path: &[PathSeg], names: &[Option<String>]) -> Result<Mapped, String> {
        let keys: Vec<&str> = path
            .iter()
            .filter_map(|s| match s {
                PathSeg::Key(k) => Some(k.as_str()),
                PathSeg::Index(_) => None,
            })
            .collect();
        for depth in (1..=keys.len()).rev() {
            // Rendered item names above this depth; a template line inside an item with another
            // literal name (the sidecar's `resources:`) did not write it.
            let above = names_above(path, names, depth);
            let found: Vec<&KeyLine> = self
                .keys
                .iter()
                .filter(|k| k.path.len() == depth && k.path.iter().zip(&keys).all(|(a, b)| a == b))
                .filter(|k| {
                    k.item_names
                        .iter()
                        .zip(&above)
                        .all(|(t, r)| t.is_none() || r.is_none() || t.as_ref() == r.as_ref())
                })
                .collect();
            if found.is_empty() {
                continue;
            }
            if found.len() > 1 {
                let lines: Vec<String> = found.iter().map(|k| k.line.to_string()).collect();
                return Err(format!(
                    "{} lines of the template could have written it ({})",
                    found.len(),
                    lines.join(", ")
                ));
            }
            let k = found[0];
            // The part of the rendered path below the template's key, indices included.
            let below = rest_of(path, depth);
            if let ([PathSeg::Index(_)], Some(Some(name))) =
                (below.as_slice(), names_above(path, names, depth + 1).last())
            {
                // A whole item of a literal list (`- name: proxy`): its own line, when the
                // template writes that name literally.
                if self.block_expression(k).is_none() {
                    let mut item_path = k.path.clone();
                    item_path.push("name".into());
                    if let Some(item) = self.keys.iter().find(|x| {
                        x.path == item_path && x.item_names.last() == Some(&Some(name.clone()))
                    }) {
                        return Ok(Mapped {
                            line: item.line,
                            values_key: None,
                        });
                    }
                }
            }
            return self.explain(k, &below);
        }
        Err("no line of the template writes this key literally (it may come from a helper template)".into())
    }

    /// Name the values key behind a template key line. `below` is the rendered path under it:
    /// when there is any, it must come wholesale from one values key (`toYaml .Values.x`).
    fn explain(&self, k: &KeyLine, below: &[PathSeg]) -> Result<Mapped, String> {
        let whole = below.is_empty();
        let own_line = k.rest.contains("{{");
        let source = if own_line {
            Some(k.rest.clone())
        } else {
            self.block_expression(k)
        };
        let values_key = match source.as_deref().map(|s| values_ref(s, k.dot.as_ref())) {
            Some(Ok(Some(base))) => Some(crate::fix::engine::join_key(&base, below)),
            Some(Ok(None)) | None => None,
            Some(Err(e)) => return Err(format!("line {}: {e}", k.line)),
        };
        if !whole && values_key.is_none() {
            let key = k.path.last().map_or("", String::as_str);
            if let Some(helper) = source.as_deref().and_then(helper_name) {
                return Err(format!(
                    "the helper template {helper:?} writes it, under line {} ({key}); helpers are not followed",
                    k.line
                ));
            }
            return Err(format!(
                "line {} ({key}) holds it, but what is below that line is not literal YAML or one values key",
                k.line
            ));
        }
        Ok(Mapped {
            line: k.line,
            values_key,
        })
    }

    /// The action that fills a `key:` line with nothing after it: its block's lines, when they
    /// are all actions and name one expression (`{{- toYaml .Values.resources | nindent 12 }}`).
    fn block_expression(&self, k: &KeyLine) -> Option<String> {
        let mut exprs = Vec::new();
        for raw in self.lines.iter().skip(k.line) {
            let t = raw.trim_start();
            if t.is_empty() {
                continue;
            }
            let col = raw.len() - t.len();
            if !t.starts_with("{{") {
                if col <= k.column {
                    break;
                }
                // Literal content in the block: the values key cannot cover all of it.
                return None;
            }
            if is_control(t) {
                if opens_end(t) || col <= k.column {
                    break;
                }
                continue;
            }
            exprs.push(t.to_string());
        }
        (exprs.len() == 1).then(|| exprs.remove(0))
    }
}

/// The rendered names of the sequence items that come before the `depth`-th key of `path`.
fn names_above<'n>(
    path: &[PathSeg],
    names: &'n [Option<String>],
    depth: usize,
) -> Vec<&'n Option<String>> {
    let mut out = Vec::new();
    let (mut keys, mut items) = (0, 0);
    for s in path {
        match s {
            PathSeg::Key(_) => {
                keys += 1;
                if keys == depth {
                    break;
                }
            }
            PathSeg::Index(_) => {
                if let Some(n) = names.get(items) {
                    out.push(n);
                }
                items += 1;
            }
        }
    }
    out
}

/// The name in `include "name"` or `template "name"`.
fn helper_name(action: &str) -> Option<&str> {
    let at = action
        .find("include \"")
        .map(|i| i + 9)
        .or_else(|| action.find("template \"").map(|i| i + 10))?;
    let rest = &action[at..];
    Some(&rest[..rest.find('"')?])
}

fn rest_of(path: &[PathSeg], depth: usize) -> Vec<PathSeg> {
    let mut seen = 0;
    for (i, s) in path.iter().enumerate() {
        if let PathSeg::Key(_) = s {
            seen += 1;
            if seen == depth {
                return path[i + 1..].to_vec();
            }
        }
    }
    Vec::new()
}

/// `key: rest` at the start of a line, where the key is literal text (not an action).
fn split_key(body: &str) -> Option<(String, &str)> {
    if body.starts_with("{{") {
        return None;
    }
    let (key, rest) = match body.find(": ") {
        Some(i) => (&body[..i], &body[i + 2..]),
        None => (body.strip_suffix(':')?, ""),
    };
    if key.contains("{{") || key.is_empty() {
        return None;
    }
    let key = key.trim().trim_matches(['"', '\'']);
    Some((key.to_string(), rest.trim()))
}

fn literal_name(body: &str) -> Option<String> {
    let (k, rest) = split_key(body)?;
    (k == "name" && !rest.contains("{{") && !rest.is_empty())
        .then(|| rest.trim_matches(['"', '\'']).to_string())
}

/// Whether an action line opens, continues or closes a block rather than writing output.
fn is_control(action: &str) -> bool {
    let inner = action
        .trim_start_matches("{{")
        .trim_start_matches('-')
        .trim_start();
    [
        "if ", "else", "end", "with ", "range ", "define ", "block ", "/*",
    ]
    .iter()
    .any(|w| inner.starts_with(w))
        || inner.starts_with('$')
}

fn opens_end(action: &str) -> bool {
    action
        .trim_start_matches("{{")
        .trim_start_matches('-')
        .trim_start()
        .starts_with("end")
}

/// Follow `{{ if/with/range/define }}` … `{{ end }}` through one line of actions.
fn track_actions(line: &str, frames: &mut Vec<Frame>) {
    let mut rest = line;
    while let Some(start) = rest.find("{{") {
        let Some(len) = rest[start..].find("}}") else {
            return;
        };
        let inner = rest[start + 2..start + len]
            .trim_matches('-')
            .trim()
            .to_string();
        rest = &rest[start + len + 2..];
        if inner.starts_with("end") {
            frames.pop();
        } else if let Some(arg) = inner.strip_prefix("with ") {
            frames.push(match values_path(arg.trim()) {
                Some(p) if arg.split_whitespace().count() == 1 => Frame::WithValues(p),
                _ => Frame::Opaque,
            });
        } else if inner.starts_with("range ") || inner.starts_with("define ") {
            frames.push(Frame::Opaque);
        } else if inner.starts_with("if ") || inner.starts_with("block ") {
            frames.push(Frame::Plain);
        }
    }
}

/// What `.` is: `Some(Some(key))` inside `with .Values.key`, `Some(None)` at the top (the root
/// context), `None` where a range or another `with` made it unknowable.
fn dot_of(frames: &[Frame]) -> Option<Option<String>> {
    let mut dot = Some(None);
    for f in frames {
        match f {
            Frame::WithValues(k) => dot = Some(Some(k.clone())),
            Frame::Opaque => dot = None,
            Frame::Plain => {}
        }
    }
    dot
}

/// The values path in `.Values.a.b` or `$.Values.a.b` at the start of `s`.
fn values_path(s: &str) -> Option<String> {
    let s = s.strip_prefix('$').unwrap_or(s);
    let rest = s.strip_prefix(".Values.")?;
    let end = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '-'))
        .unwrap_or(rest.len());
    let p = rest[..end].trim_end_matches('.');
    (!p.is_empty()).then(|| p.to_string())
}

/// The one values key an action text reads: `.Values.x.y`, or `.`/`.y` inside `with .Values.x`.
/// `Ok(None)` when it reads no values at all (a literal or a helper); `Err` when it reads more
/// than one or its `.` is unknowable.
fn values_ref(action: &str, dot: Option<&Option<String>>) -> Result<Option<String>, String> {
    let mut found: Vec<String> = Vec::new();
    let mut rest = action;
    while let Some(start) = rest.find("{{") {
        let Some(len) = rest[start..].find("}}") else {
            break;
        };
        let inner = &rest[start + 2..start + len];
        rest = &rest[start + len + 2..];
        for (i, _) in inner.match_indices(".Values.") {
            let from = if i > 0 && inner.as_bytes()[i - 1] == b'$' {
                i - 1
            } else {
                i
            };
            if let Some(p) = values_path(&inner[from..]) {
                found.push(p);
            }
        }
        if found.is_empty() && !inner.contains("include") {
            // Dot-relative reads inside `with .Values.x`: `toYaml .`, `.limits`.
            for word in inner.split(|c: char| c.is_whitespace() || c == '(' || c == ')') {
                let w = word.trim_matches('-');
                if w == "." || (w.starts_with('.') && w.len() > 1 && !w.starts_with(".Values")) {
                    match dot {
                        // At the top `.` is the root context (.Release, .Chart, …), not values.
                        Some(None) => {}
                        Some(Some(base)) if w == "." => found.push(base.clone()),
                        Some(Some(base)) => found.push(format!("{base}{w}")),
                        _ => return Err(format!("it reads {w} where `.` is not a values key")),
                    }
                }
            }
        }
    }
    found.dedup();
    match found.len() {
        0 => Ok(None),
        1 => Ok(found.pop()),
        _ => Err(format!(
            "it reads {} values keys ({})",
            found.len(),
            found.join(", ")
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Vec<PathSeg> {
        s.split('.')
            .map(|x| match x.parse() {
                Ok(i) => PathSeg::Index(i),
                Err(_) => PathSeg::Key(x.to_string()),
            })
            .collect()
    }

    const DEPLOYMENT: &str = r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "svc.fullname" . }}
spec:
  template:
    spec:
      containers:
        - name: app
          image: "{{ .Values.image.repository }}:{{ .Values.image.tag }}"
          env:
            {{- toYaml .Values.env | nindent 12 }}
          {{- with .Values.resources }}
          resources:
            {{- toYaml . | nindent 12 }}
          {{- end }}
        - name: proxy
          resources:
            limits:
              cpu: {{ .Values.proxy.cpu | quote }}
              memory: 64Mi
"#;

    #[test]
    fn a_toyaml_block_names_the_values_key_below_it() {
        let t = Template::scan(DEPLOYMENT);
        let path = p("spec.template.spec.containers.0.resources.limits.cpu");
        let names = vec![Some("app".to_string())];
        assert_eq!(
            t.map(&path, &names),
            Ok(Mapped {
                line: 14,
                values_key: Some("resources.limits.cpu".into())
            })
        );
        let env = p("spec.template.spec.containers.0.env.1.value");
        assert_eq!(
            t.map(&env, &names).unwrap().values_key.as_deref(),
            Some("env[1].value")
        );
    }

    #[test]
    fn containers_are_told_apart_by_name() {
        let t = Template::scan(DEPLOYMENT);
        let path = p("spec.template.spec.containers.1.resources.limits.cpu");
        let names = vec![Some("proxy".to_string())];
        assert_eq!(
            t.map(&path, &names),
            Ok(Mapped {
                line: 20,
                values_key: Some("proxy.cpu".into())
            })
        );
        // A literal value: the line, and no values key to change.
        let mem = p("spec.template.spec.containers.1.resources.limits.memory");
        assert_eq!(
            t.map(&mem, &names),
            Ok(Mapped {
                line: 21,
                values_key: None
            })
        );
        // Without the name, two `resources:` lines could have written it.
        let err = t
            .map(&p("spec.template.spec.containers.1.resources"), &[None])
            .unwrap_err();
        assert!(err.contains("2 lines"), "{err}");
    }

    #[test]
    fn keys_from_helpers_are_not_guessed() {
        let t = Template::scan(
            "spec:\n  template:\n    spec:\n      {{- include \"pod\" . | nindent 6 }}\n",
        );
        let err = t
            .map(&p("spec.template.spec.containers.0.resources"), &[None])
            .unwrap_err();
        assert!(err.contains("helper template \"pod\""), "{err}");
    }

    #[test]
    fn two_values_on_one_line_are_ambiguous() {
        let t = Template::scan("a:\n  b: {{ .Values.x | default .Values.y }}\n");
        let err = t.map(&p("a.b"), &[]).unwrap_err();
        assert!(err.contains("2 values keys"), "{err}");
        let t = Template::scan("a:\n  b: {{ $.Values.x.y | quote }}\n");
        assert_eq!(
            t.map(&p("a.b"), &[]).unwrap().values_key.as_deref(),
            Some("x.y")
        );
    }

    #[test]
    fn flush_sequences_keep_their_key() {
        let t = Template::scan(
            "containers:\n- name: a\n  resources:\n    {{- toYaml .Values.r | nindent 4 }}\n",
        );
        let m = t
            .map(&p("containers.0.resources.limits"), &[Some("a".into())])
            .unwrap();
        assert_eq!(m.line, 3);
        assert_eq!(m.values_key.as_deref(), Some("r.limits"));
    }
}
