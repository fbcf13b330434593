//! `--format sarif`: SARIF 2.1.0 for GitHub code scanning and other SARIF consumers.
//!
//! One run; every rule in `tool.driver.rules` with its doc; results with a physical location whose
//! URI is relative to the repository root (`%SRCROOT%` in `originalUriBaseIds`), the Helm template a
//! document was rendered from as a related location, and fixes as `artifactChanges`. Columns count
//! Unicode code points, as everywhere in golint-k8s, and the run says so (`columnKind`), because
//! SARIF's default is UTF-16 code units.

use std::io::Write;
use std::path::Path;

use serde_json::{json, Value};

use super::{doc_url, End, Format, Run};
use crate::diagnostic::registry::{Rule, RULES};
use crate::diagnostic::{Applicability, Provenance, Severity};
use crate::lint::{FileReport, Finding};
use crate::source::Origin;

const SCHEMA: &str =
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";
const BASE_ID: &str = "%SRCROOT%";

fn level(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "note",
    }
}

/// The first paragraph under a doc heading, as plain text on one line.
fn section(doc: &str, heading: &str) -> Option<String> {
    let start = doc.find(&format!("\n## {heading}\n"))? + heading.len() + 5;
    let body = &doc[start..];
    let para = body.trim_start().split("\n\n").next()?;
    let text = para.split_whitespace().collect::<Vec<_>>().join(" ");
    (!text.is_empty()).then_some(text)
}

fn rule_descriptor(r: &Rule) -> Value {
    json!({
        "id": r.code,
        "name": r.name,
        "shortDescription": {"text": r.summary},
        "fullDescription": {"text": section(r.doc, "What it does").unwrap_or_else(|| r.summary.to_string())},
        "helpUri": doc_url(r.code),
        "help": {"text": format!("{} (see {})", r.summary, doc_url(r.code)), "markdown": r.doc},
        "defaultConfiguration": {"level": level(r.severity)},
        "properties": {"tags": ["kubernetes", "go"], "fix": r.fix.as_str(), "applies-to": r.applies_to},
    })
}

/// Percent-encode what a URI reference cannot carry as is (spaces, `#`, `%`, non-ASCII).
pub(crate) fn encode_uri_path(p: &str) -> String {
    let mut out = String::with_capacity(p.len());
    for b in p.bytes() {
        match b {
            b'A'..=b'Z'
            | b'a'..=b'z'
            | b'0'..=b'9'
            | b'-'
            | b'_'
            | b'.'
            | b'~'
            | b'/'
            | b'+'
            | b'@'
            | b'='
            | b'!'
            | b'$'
            | b'&'
            | b'\''
            | b'('
            | b')'
            | b'*'
            | b','
            | b';'
            | b':' => out.push(b as char),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// A file's URI relative to the root (with `%SRCROOT%`), or an absolute file URI when it lies
/// outside the repository.
fn artifact_location(report: &FileReport, root: &Path) -> Value {
    match &report.origin {
        Origin::Stdin(name) => json!({"uri": encode_uri_path(name), "uriBaseId": BASE_ID}),
        Origin::File(path) => path_location(path, root),
    }
}

fn path_location(path: &Path, root: &Path) -> Value {
    let abs = std::fs::canonicalize(path).unwrap_or_else(|_| root.join(path));
    match abs.strip_prefix(root) {
        Ok(rel) => json!({
            "uri": encode_uri_path(&super::slash_path(rel)),
            "uriBaseId": BASE_ID,
        }),
        Err(_) => json!({"uri": format!("file://{}", encode_uri_path(&abs.to_string_lossy()))}),
    }
}

fn region((sl, sc): (usize, usize), (el, ec): (usize, usize)) -> Value {
    json!({"startLine": sl, "startColumn": sc, "endLine": el, "endColumn": ec})
}

fn result(f: &Finding, location: &Value, root: &Path) -> Value {
    let d = &f.diagnostic;
    let rule_index = RULES.iter().position(|r| r.code == d.code).unwrap_or(0);
    let text = d.message_with_notes();
    let mut r = json!({
        "ruleId": d.code,
        "ruleIndex": rule_index,
        "level": level(d.severity),
        "message": {"text": text},
        "locations": [{
            "physicalLocation": {"artifactLocation": location, "region": region(f.start, f.end)},
        }],
        // Made of the file, object, container, rule and key path, never of lines: code scanning
        // follows an alert that moves with its object.
        "partialFingerprints": {"golintK8s/v1": format!("{:016x}", d.fingerprint)},
    });
    if let Some(c) = d.cluster() {
        // A live object has no file: it is a logical location (kind/namespace/name/container),
        // with the field path as its decorated name.
        r["locations"] = json!([{
            "logicalLocations": [{
                "name": c.name,
                "fullyQualifiedName": c.qualified_name(),
                "decoratedName": c.path,
                "kind": "object",
            }],
        }]);
    }
    let mut props = serde_json::Map::new();
    if let Some(o) = &d.object {
        props.insert("object".into(), json!(&**o));
    }
    if let Some(c) = &d.container {
        props.insert("container".into(), json!(&**c));
    }
    props.insert("document".into(), json!(d.document));
    if let Some(Provenance::Kustomize(k)) = d.provenance.as_deref() {
        // A build is no file code scanning can show: the alert sits on the line that writes the
        // value, and says which build it is in.
        if let (Some(file), Some(line)) = (&k.file, k.line) {
            r["locations"] = json!([{
                "physicalLocation": {
                    "artifactLocation": path_location(Path::new(file), root),
                    "region": region(
                        (line, k.column.unwrap_or(1)),
                        (k.end_line.unwrap_or(line), k.end_column.unwrap_or(1)),
                    ),
                },
            }]);
        }
        r["message"]["text"] = json!(format!(
            "{text}\nin the build of {}: {}",
            k.build,
            k.describe()
        ));
        props.insert("kustomize".into(), json!(k));
    }
    if let Some(t) = &d.source_template {
        let mut related = vec![json!({
            "id": 1,
            "physicalLocation": {"artifactLocation": {"uri": encode_uri_path(t)}},
            "message": {"text": format!("rendered from the Helm template {t}")},
        })];
        if let Some(c) = d.chart() {
            if let Some(line) = c.line {
                related.push(json!({
                    "id": 2,
                    "physicalLocation": {
                        "artifactLocation": path_location(Path::new(&c.file), root),
                        "region": {"startLine": line},
                    },
                    "message": {"text": format!("written by this template line{}", c.values_key.as_ref().map(|k| format!(", from the values key {k}")).unwrap_or_default())},
                }));
            }
            props.insert("chart".into(), json!(c));
        }
        r["relatedLocations"] = Value::Array(related);
        props.insert("source_template".into(), json!(**t));
    }
    r["properties"] = Value::Object(props);
    if let Some(fix) = &d.fix {
        let replacements: Vec<Value> = fix
            .edits
            .iter()
            .zip(&f.edit_positions)
            .map(|(e, (s, en))| json!({"deletedRegion": region(*s, *en), "insertedContent": {"text": e.text}}))
            .collect();
        let title = match fix.applicability {
            Applicability::Safe => fix.title.clone(),
            Applicability::Unsafe => {
                format!("{} (unsafe: changes scheduling, cost or QoS)", fix.title)
            }
        };
        r["fixes"] = json!([{
            "description": {"text": title},
            "artifactChanges": [{"artifactLocation": location, "replacements": replacements}],
        }]);
    }
    r
}

/// A SARIF 2.1.0 log. The results are most of it: each file's are built on the thread that
/// linted it, at their depth in the document (runs[0].results[i], four levels), and written
/// into the rest, which serde writes around a placeholder. The bytes are those of the whole log
/// written at once.
pub struct Sarif {
    root: std::path::PathBuf,
}

/// The log after the results, written by `finish`, and whether a result was written.
pub struct Written {
    tail: Vec<u8>,
    any: bool,
}

impl Sarif {
    pub fn new() -> Sarif {
        Sarif {
            root: super::repo_root(),
        }
    }
}

impl Default for Sarif {
    fn default() -> Sarif {
        Sarif::new()
    }
}

impl Format for Sarif {
    type Piece = Vec<Vec<u8>>;
    type State = Written;

    fn begin(&self, out: &mut dyn Write) -> std::io::Result<Written> {
        let root_uri = format!(
            "file://{}/",
            encode_uri_path(self.root.to_string_lossy().trim_end_matches('/'))
        );
        let log = log(&root_uri, json!(RESULTS_HERE));
        let text = serde_json::to_vec_pretty(&log).map_err(std::io::Error::other)?;
        let placeholder = format!("\"{RESULTS_HERE}\"");
        let at = text
            .windows(placeholder.len())
            .position(|w| w == placeholder.as_bytes())
            .ok_or_else(|| std::io::Error::other("the SARIF results placeholder is missing"))?;
        out.write_all(&text[..at])?;
        out.write_all(b"[")?;
        Ok(Written {
            tail: text[at + placeholder.len()..].to_vec(),
            any: false,
        })
    }

    fn render(&self, report: &FileReport) -> Vec<Vec<u8>> {
        let location = artifact_location(report, &self.root);
        report
            .findings
            .iter()
            .map(|f| {
                let mut bytes = Vec::with_capacity(2048);
                super::json::pretty_at(&mut bytes, &result(f, &location, &self.root), 4);
                bytes
            })
            .collect()
    }

    fn push(
        &self,
        w: &mut Written,
        results: Vec<Vec<u8>>,
        out: &mut dyn Write,
    ) -> std::io::Result<()> {
        for r in results {
            out.write_all(if w.any { b",\n        " } else { b"\n        " })?;
            out.write_all(&r)?;
            w.any = true;
        }
        Ok(())
    }

    fn finish(&self, w: Written, end: &End, out: &mut dyn Write) -> std::io::Result<()> {
        // serde_json's pretty layout: `[]` when empty.
        if w.any {
            out.write_all(b"\n      ]")?;
        } else {
            out.write_all(b"]")?;
        }
        // The inputs not linted, where code scanning shows a tool's own notes: after the
        // results, as the run's next member (the tail goes on with a comma).
        if !end.errors.is_empty() {
            let mut bytes = b",\n      \"invocations\": ".to_vec();
            super::json::pretty_at(&mut bytes, &invocations(end.errors, &self.root), 3);
            out.write_all(&bytes)?;
        }
        out.write_all(&w.tail)?;
        writeln!(out)
    }
}

pub fn write(run: &Run, out: &mut dyn Write) -> std::io::Result<()> {
    super::write(Sarif::new(), run, out).map(drop)
}

/// One invocation whose notifications are the inputs that were not linted, each at its path.
fn invocations(errors: &[super::InputError], root: &Path) -> Value {
    let notifications: Vec<Value> = errors
        .iter()
        .map(|e| {
            let mut n = json!({"level": "warning", "message": {"text": e.message}});
            if let Some(path) = &e.path {
                n["locations"] = json!([{"physicalLocation": {
                    "artifactLocation": path_location(Path::new(path), root)
                }}]);
            }
            n
        })
        .collect();
    json!([{
        "executionSuccessful": true,
        "toolExecutionNotifications": notifications,
    }])
}

/// The whole log around `results`.
fn log(root_uri: &str, results: Value) -> Value {
    json!({
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "golint-k8s",
                "version": env!("CARGO_PKG_VERSION"),
                "semanticVersion": env!("CARGO_PKG_VERSION"),
                "informationUri": env!("CARGO_PKG_HOMEPAGE"),
                "rules": RULES.iter().map(rule_descriptor).collect::<Vec<_>>(),
            }},
            "originalUriBaseIds": {BASE_ID: {"uri": root_uri}},
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    })
}

/// Stands for the results while the rest of the log is written. Found with its quotes, it cannot
/// be confused with text inside another string (quotes there are escaped).
const RESULTS_HERE: &str = "golint-k8s: results go here";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_spliced_into_the_log_are_the_log_written_at_once() {
        use crate::lint::{lint_source, Selection};
        use crate::source::{Origin, Source};
        let lint = |name: &str, text: &str| {
            let src = Source::from_text(Origin::Stdin(name.into()), text.to_string());
            lint_source(
                src,
                &crate::config::Config::default(),
                &Selection::default(),
            )
        };
        let deployment = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: api\nspec:\n  template:\n    spec:\n      containers:\n      - name: api\n        image: acme/api:1\n        resources:\n          limits:\n            cpu: 500m\n            memory: 512Mi\n";
        let clean = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n";
        for reports in [
            vec![
                lint("a.yaml", deployment),
                lint("b.yaml", clean),
                lint("c.yaml", deployment),
            ],
            vec![lint("b.yaml", clean)],
        ] {
            let run = Run {
                reports: &reports,
                stats: Default::default(),
                fixed: None,
                errors: &[],
            };
            let mut spliced = Vec::new();
            write(&run, &mut spliced).unwrap();
            let root = crate::output::repo_root();
            let root_uri = format!(
                "file://{}/",
                encode_uri_path(root.to_string_lossy().trim_end_matches('/'))
            );
            let results: Vec<Value> = reports
                .iter()
                .flat_map(|r| {
                    let location = artifact_location(r, &root);
                    let root = &root;
                    r.findings.iter().map(move |f| result(f, &location, root))
                })
                .collect();
            let mut whole = serde_json::to_vec_pretty(&log(&root_uri, json!(results))).unwrap();
            whole.push(b'\n');
            assert_eq!(
                String::from_utf8(spliced).unwrap(),
                String::from_utf8(whole).unwrap()
            );
        }
    }

    #[test]
    fn uris_are_encoded() {
        assert_eq!(
            encode_uri_path("deploy/my app#1.yaml"),
            "deploy/my%20app%231.yaml"
        );
        assert_eq!(encode_uri_path("ü.yaml"), "%C3%BC.yaml");
    }

    #[test]
    fn every_rule_has_a_full_description() {
        for r in RULES {
            let full = section(r.doc, "What it does").unwrap_or_default();
            assert!(full.len() > 20, "{}: {full:?}", r.code);
        }
    }
}
