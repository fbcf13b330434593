//! `--format sarif`: SARIF 2.1.0 for GitHub code scanning and other SARIF consumers.
//!
//! One run; every rule in `tool.driver.rules` with its doc; results with a physical location whose
//! URI is relative to the repository root (`%SRCROOT%` in `originalUriBaseIds`), the Helm template a
//! document was rendered from as a related location, and fixes as `artifactChanges`. Columns count
//! Unicode code points, as everywhere in golint-k8s, and the run says so (`columnKind`), because
//! SARIF's default is UTF-16 code units.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde_json::{json, Value};

use super::json::Fragment;
use super::{doc_url, End, Format, Run};
use crate::diagnostic::registry::{Rule, RULES};
use crate::diagnostic::{Applicability, KustomizeOrigin, Provenance, Severity};
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

/// Begin the next member of an object with its key: `"key": ` made at compile time, so that the
/// writer copies one piece.
macro_rules! key {
    ($w:expr, $key:literal) => {
        $w.key(concat!("\"", $key, "\": "))
    };
}

/// Where a result's file is: a URI relative to the root (with `%SRCROOT%`), or an absolute file
/// URI when the file lies outside the repository.
struct Location {
    uri: String,
    relative: bool,
}

impl Location {
    fn write(&self, w: &mut Writer) {
        w.object(|w| {
            key!(w, "uri");
            w.string(&self.uri);
            if self.relative {
                key!(w, "uriBaseId");
                w.string(BASE_ID);
            }
        });
    }

    fn value(&self) -> Value {
        if self.relative {
            json!({"uri": self.uri, "uriBaseId": BASE_ID})
        } else {
            json!({"uri": self.uri})
        }
    }
}

/// Files' real paths as `std::fs::canonicalize` gives them, each directory resolved once: a file
/// that is no symbolic link lies in its directory's real path. Resolving every component of
/// every file's path again was most of a SARIF run's system calls.
#[derive(Default)]
struct RealPaths {
    dirs: Mutex<HashMap<PathBuf, Option<PathBuf>>>,
}

impl RealPaths {
    fn of(&self, path: &Path) -> Option<PathBuf> {
        let is_link = std::fs::symlink_metadata(path).map(|m| m.file_type().is_symlink());
        let (Ok(false), Some(dir), Some(name)) = (is_link, path.parent(), path.file_name()) else {
            return std::fs::canonicalize(path).ok();
        };
        let dir = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        let known = |dirs: &HashMap<PathBuf, Option<PathBuf>>| {
            dirs.get(dir)
                .map(|real| real.as_ref().map(|d| d.join(name)))
        };
        let found = self.dirs.lock().ok().and_then(|d| known(&d));
        let real = found.unwrap_or_else(|| {
            let real = std::fs::canonicalize(dir).ok();
            let file = real.as_ref().map(|d| d.join(name));
            if let Ok(mut d) = self.dirs.lock() {
                d.insert(dir.to_path_buf(), real);
            }
            file
        });
        real.or_else(|| std::fs::canonicalize(path).ok())
    }
}

/// serde_json's pretty layout written straight into a buffer: the bytes `to_vec_pretty` writes
/// for the same members in the same order, without building a `serde_json::Value` first.
/// Building one per result, with a sorted map per object, and dropping it again cost about as
/// much as linting the files. Keys are written as they are: each is a constant that needs no escape.
struct Writer<'o> {
    out: &'o mut Vec<u8>,
    /// How many arrays and objects are open, those of the log around a result included.
    depth: usize,
    /// Whether the innermost open one has nothing in it yet.
    empty: bool,
}

impl<'o> Writer<'o> {
    fn at(out: &'o mut Vec<u8>, depth: usize) -> Writer<'o> {
        Writer {
            out,
            depth,
            empty: true,
        }
    }

    fn object(&mut self, members: impl FnOnce(&mut Self)) {
        self.open(b'{');
        members(self);
        self.close(b'}');
    }

    fn array(&mut self, elements: impl FnOnce(&mut Self)) {
        self.open(b'[');
        elements(self);
        self.close(b']');
    }

    fn open(&mut self, bracket: u8) {
        self.out.push(bracket);
        self.depth += 1;
        self.empty = true;
    }

    fn close(&mut self, bracket: u8) {
        self.depth -= 1;
        // serde_json writes an empty array or object as `[]` or `{}`.
        if !self.empty {
            self.line_break(false);
        }
        self.out.push(bracket);
        self.empty = false;
    }

    /// The comma after the previous value (`comma`), a line break and the indentation of the
    /// current depth, in one piece: most of a result is this text between its values.
    fn line_break(&mut self, comma: bool) {
        const BREAK: &[u8] = b",\n                                                                ";
        let from = usize::from(!comma);
        match BREAK.get(from..2 + 2 * self.depth) {
            Some(piece) => self.out.extend_from_slice(piece),
            None => {
                self.out.extend_from_slice(&BREAK[from..2]);
                (0..self.depth).for_each(|_| self.out.extend_from_slice(b"  "));
            }
        }
    }

    /// Begin the next element of the array.
    fn element(&mut self) {
        self.line_break(!self.empty);
        self.empty = false;
    }

    /// Begin the next member of the object with its key, quoted and followed by the colon
    /// (`"key": `, as [`key!`] makes it).
    fn key(&mut self, quoted: &str) {
        self.element();
        self.out.extend_from_slice(quoted.as_bytes());
    }

    fn string(&mut self, s: &str) {
        super::json::string(self.out, s);
    }

    fn opt_string(&mut self, s: Option<&str>) {
        match s {
            Some(s) => self.string(s),
            None => self.out.extend_from_slice(b"null"),
        }
    }

    fn number(&mut self, n: usize) {
        super::json::number(self.out, n);
    }

    /// `{"text": s}`, SARIF's message.
    fn text(&mut self, s: &str) {
        self.text_of([s]);
    }

    /// A message whose text is `parts` one after the other, without joining them first.
    fn text_of<'s>(&mut self, parts: impl IntoIterator<Item = &'s str>) {
        self.object(|w| {
            key!(w, "text");
            w.out.push(b'"');
            parts
                .into_iter()
                .for_each(|part| super::json::escaped(w.out, part));
            w.out.push(b'"');
        });
    }

    fn region(&mut self, (sl, sc): (usize, usize), (el, ec): (usize, usize)) {
        self.object(|w| {
            key!(w, "endColumn");
            w.number(ec);
            key!(w, "endLine");
            w.number(el);
            key!(w, "startColumn");
            w.number(sc);
            key!(w, "startLine");
            w.number(sl);
        });
    }

    /// A value of a rare kind, through serde: as a `serde_json::Value`, so that its keys come
    /// sorted, as everywhere in the log.
    fn value<T: serde::Serialize>(&mut self, v: &T) {
        let v = serde_json::to_value(v).unwrap_or(Value::Null);
        super::json::pretty_at(self.out, &v, self.depth);
    }
}

/// Where a result's file lives, and what its text is.
fn physical_location(w: &mut Writer, location: &Location, region: impl FnOnce(&mut Writer)) {
    w.object(|w| {
        key!(w, "physicalLocation");
        w.object(|w| {
            key!(w, "artifactLocation");
            location.write(w);
            key!(w, "region");
            region(w);
        });
    });
}

impl Sarif {
    /// A file's location: the same for each of its results.
    fn artifact_location(&self, report: &FileReport) -> Location {
        match &report.origin {
            Origin::Stdin(name) => Location {
                uri: encode_uri_path(name),
                relative: true,
            },
            Origin::File(path) => self.path_location(path),
        }
    }

    fn path_location(&self, path: &Path) -> Location {
        let abs = self
            .real_paths
            .of(path)
            .unwrap_or_else(|| self.root.join(path));
        match abs.strip_prefix(&self.root) {
            Ok(rel) => Location {
                uri: encode_uri_path(&super::slash_path(rel)),
                relative: true,
            },
            Err(_) => Location {
                uri: format!("file://{}", encode_uri_path(&abs.to_string_lossy())),
                relative: false,
            },
        }
    }

    /// One result, its members in the order of a `serde_json::Value`'s map (sorted by key): the
    /// log's bytes are those it had when each result was built as one.
    fn result(&self, w: &mut Writer, f: &Finding, location: &Location) {
        let d = &f.diagnostic;
        let kustomize = match d.provenance.as_deref() {
            Some(Provenance::Kustomize(k)) => Some(k),
            _ => None,
        };
        w.object(|w| {
            if let Some(fix) = &d.fix {
                key!(w, "fixes");
                w.array(|w| {
                    w.element();
                    w.object(|w| {
                        key!(w, "artifactChanges");
                        w.array(|w| {
                            w.element();
                            w.object(|w| {
                                key!(w, "artifactLocation");
                                location.write(w);
                                key!(w, "replacements");
                                w.array(|w| {
                                    for (e, (s, en)) in fix.edits.iter().zip(&f.edit_positions) {
                                        w.element();
                                        w.object(|w| {
                                            key!(w, "deletedRegion");
                                            w.region(*s, *en);
                                            key!(w, "insertedContent");
                                            w.text(&e.text);
                                        });
                                    }
                                });
                            });
                        });
                        key!(w, "description");
                        let unsafe_ = match fix.applicability {
                            Applicability::Safe => "",
                            Applicability::Unsafe => " (unsafe: changes scheduling, cost or QoS)",
                        };
                        w.text_of([fix.title.as_str(), unsafe_]);
                    });
                });
            }
            key!(w, "level");
            w.string(level(d.severity));
            key!(w, "locations");
            w.array(|w| {
                w.element();
                match (kustomize, d.cluster()) {
                    // A build is no file code scanning can show: the alert sits on the line that
                    // writes the value, and says which build it is in.
                    (
                        Some(KustomizeOrigin {
                            file: Some(file),
                            line: Some(line),
                            column,
                            end_line,
                            end_column,
                            ..
                        }),
                        _,
                    ) => physical_location(w, &self.path_location(Path::new(file)), |w| {
                        w.region(
                            (*line, column.unwrap_or(1)),
                            (end_line.unwrap_or(*line), end_column.unwrap_or(1)),
                        )
                    }),
                    // A live object has no file: it is a logical location
                    // (kind/namespace/name/container), with the field path as its decorated name.
                    (_, Some(c)) => w.object(|w| {
                        key!(w, "logicalLocations");
                        w.array(|w| {
                            w.element();
                            w.object(|w| {
                                key!(w, "decoratedName");
                                w.string(&c.path);
                                key!(w, "fullyQualifiedName");
                                w.string(&c.qualified_name());
                                key!(w, "kind");
                                w.string("object");
                                key!(w, "name");
                                w.string(&c.name);
                            });
                        });
                    }),
                    _ => physical_location(w, location, |w| w.region(f.start, f.end)),
                }
            });
            key!(w, "message");
            // The message and its notes, one to a line, then which build a Kustomize finding is
            // in.
            let build =
                kustomize.map(|k| format!("\nin the build of {}: {}", k.build, k.describe()));
            let notes = d.notes.iter().flat_map(|n| ["\n", n.as_str()]);
            w.text_of(
                [d.message.as_str()]
                    .into_iter()
                    .chain(notes)
                    .chain(build.as_deref()),
            );
            // Made of the file, object, container, rule and key path, never of lines: code
            // scanning follows an alert that moves with its object.
            key!(w, "partialFingerprints");
            w.object(|w| {
                key!(w, "golintK8s/v1");
                let hex = crate::fingerprint::hex(d.fingerprint);
                w.string(std::str::from_utf8(&hex).unwrap_or_default());
            });
            key!(w, "properties");
            w.object(|w| {
                if let (Some(_), Some(c)) = (&d.source_template, d.chart()) {
                    key!(w, "chart");
                    w.value(c);
                }
                if let Some(c) = &d.container {
                    key!(w, "container");
                    w.string(c);
                }
                key!(w, "document");
                w.number(d.document);
                if let Some(k) = kustomize {
                    key!(w, "kustomize");
                    w.value(k);
                }
                if let Some(o) = &d.object {
                    key!(w, "object");
                    w.object(|w| {
                        key!(w, "api_version");
                        w.opt_string(o.api_version.as_deref());
                        key!(w, "kind");
                        w.opt_string(o.kind.as_deref());
                        key!(w, "name");
                        w.opt_string(o.name.as_deref());
                        key!(w, "namespace");
                        w.opt_string(o.namespace.as_deref());
                    });
                }
                if let Some(t) = &d.source_template {
                    key!(w, "source_template");
                    w.string(t);
                }
            });
            if let Some(t) = &d.source_template {
                key!(w, "relatedLocations");
                w.array(|w| {
                    w.element();
                    w.object(|w| {
                        key!(w, "id");
                        w.number(1);
                        key!(w, "message");
                        w.text(&format!("rendered from the Helm template {t}"));
                        key!(w, "physicalLocation");
                        w.object(|w| {
                            key!(w, "artifactLocation");
                            Location {
                                uri: encode_uri_path(t),
                                relative: false,
                            }
                            .write(w);
                        });
                    });
                    if let Some((c, line)) = d.chart().and_then(|c| Some((c, c.line?))) {
                        w.element();
                        w.object(|w| {
                            key!(w, "id");
                            w.number(2);
                            key!(w, "message");
                            let key = c.values_key.as_ref();
                            w.text(&format!(
                                "written by this template line{}",
                                key.map(|k| format!(", from the values key {k}"))
                                    .unwrap_or_default()
                            ));
                            key!(w, "physicalLocation");
                            w.object(|w| {
                                key!(w, "artifactLocation");
                                self.path_location(Path::new(&c.file)).write(w);
                                key!(w, "region");
                                w.object(|w| {
                                    key!(w, "startLine");
                                    w.number(line);
                                });
                            });
                        });
                    }
                });
            }
            key!(w, "ruleId");
            w.string(d.code.as_str());
            key!(w, "ruleIndex");
            w.number(RULES.iter().position(|r| r.code == d.code).unwrap_or(0));
        });
    }

    /// A file's results as elements of the results array, each after the one before it.
    fn results(&self, findings: &[Finding], location: &Location) -> Vec<u8> {
        let size = findings.iter().map(|f| size_hint(f, location)).sum();
        let mut out = Vec::with_capacity(size);
        for f in findings {
            out.extend_from_slice(b",\n        ");
            self.result(&mut Writer::at(&mut out, 4), f, location);
        }
        out
    }
}

/// About how many bytes [`Sarif::result`] writes for `f`, a little more rather than less: its
/// layout and its texts. Close enough that a file's results are written into one allocation
/// (a flat two kilobytes a result was short for many files, and growing the buffer copied it
/// and touched twice the memory).
fn size_hint(f: &Finding, location: &Location) -> usize {
    let d = &f.diagnostic;
    let opt = |s: &Option<String>| s.as_ref().map_or(0, String::len);
    let notes: usize = d.notes.iter().map(|n| n.len() + 2).sum();
    let object = d.object.as_ref().map_or(0, |o| {
        140 + opt(&o.api_version) + opt(&o.kind) + opt(&o.namespace) + opt(&o.name)
    });
    let fix = d.fix.as_ref().map_or(0, |x| {
        let edits: usize = x.edits.iter().map(|e| e.text.len() + 400).sum();
        460 + x.title.len() + location.uri.len() + edits
    });
    let helm = d.source_template.as_ref().map_or(0, |t| 800 + 3 * t.len());
    let provenance = usize::from(d.provenance.is_some()) * 800;
    920 + d.message.len()
        + notes
        + location.uri.len()
        + object
        + d.container.as_ref().map_or(0, |c| c.len() + 20)
        + fix
        + helm
        + provenance
}

/// A SARIF 2.1.0 log. The results are most of it: each file's are written on the thread that
/// linted it, at their depth in the document (runs[0].results[i], four levels), into the rest,
/// which serde writes around a placeholder. The bytes are those of the whole log written at once
/// by serde_json.
pub struct Sarif {
    root: PathBuf,
    real_paths: RealPaths,
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
            real_paths: RealPaths::default(),
        }
    }
}

impl Default for Sarif {
    fn default() -> Sarif {
        Sarif::new()
    }
}

impl Format for Sarif {
    type Piece = Fragment;
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

    fn render(&self, report: &FileReport) -> Fragment {
        let findings = &report.findings;
        if findings.is_empty() {
            return Fragment::of(Vec::new());
        }
        let location = self.artifact_location(report);
        if findings.len() >= crate::diagnostic::PARALLEL_FINDINGS {
            // One large stream's results are most of the log: written in parallel chunks.
            use rayon::prelude::*;
            let parts = findings
                .par_chunks(256)
                .map(|chunk| self.results(chunk, &location))
                .collect();
            return Fragment::of(parts);
        }
        Fragment::of(vec![self.results(findings, &location)])
    }

    fn push(&self, w: &mut Written, results: Fragment, out: &mut dyn Write) -> std::io::Result<()> {
        super::json::push_all(&mut w.any, out, &[results])
    }

    /// Several files' results in one vectored write, as JSON writes its findings.
    fn push_batch(
        &self,
        w: &mut Written,
        results: Vec<Fragment>,
        out: &mut dyn Write,
    ) -> std::io::Result<()> {
        super::json::push_all(&mut w.any, out, &results)
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
            super::json::pretty_at(&mut bytes, &self.invocations(end.errors), 3);
            out.write_all(&bytes)?;
        }
        out.write_all(&w.tail)?;
        writeln!(out)
    }
}

pub fn write(run: &Run, out: &mut dyn Write) -> std::io::Result<()> {
    super::write(Sarif::new(), run, out).map(drop)
}

impl Sarif {
    /// One invocation whose notifications are the inputs that were not linted, each at its path.
    fn invocations(&self, errors: &[super::InputError]) -> Value {
        let notifications: Vec<Value> = errors
            .iter()
            .map(|e| {
                let mut n = json!({"level": "warning", "message": {"text": e.message}});
                if let Some(path) = &e.path {
                    n["locations"] = json!([{"physicalLocation": {
                        "artifactLocation": self.path_location(Path::new(path)).value()
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
    use std::sync::Arc;

    use super::*;
    use crate::diagnostic::{ChartOrigin, ClusterRef, Diagnostic, Edit, Fix};
    use crate::k8s::ObjectRef;
    use crate::lint::{lint_source, Selection};
    use crate::source::Source;

    /// The log as it was written when each result was built as a `serde_json::Value` (sorted
    /// keys) and serde_json laid out and escaped the whole: the reference for the writer.
    mod reference {
        use super::*;

        fn path_location(path: &Path, root: &Path) -> Value {
            let abs = std::fs::canonicalize(path).unwrap_or_else(|_| root.join(path));
            match abs.strip_prefix(root) {
                Ok(rel) => json!({
                    "uri": encode_uri_path(&crate::output::slash_path(rel)),
                    "uriBaseId": BASE_ID,
                }),
                Err(_) => {
                    json!({"uri": format!("file://{}", encode_uri_path(&abs.to_string_lossy()))})
                }
            }
        }

        fn artifact_location(report: &FileReport, root: &Path) -> Value {
            match &report.origin {
                Origin::Stdin(name) => json!({"uri": encode_uri_path(name), "uriBaseId": BASE_ID}),
                Origin::File(path) => path_location(path, root),
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
                "partialFingerprints": {"golintK8s/v1": format!("{:016x}", d.fingerprint)},
            });
            if let Some(c) = d.cluster() {
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

        fn invocations(errors: &[crate::output::InputError], root: &Path) -> Value {
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

        /// The whole log, as `write` must write it.
        pub fn log_of(reports: &[FileReport], errors: &[crate::output::InputError]) -> String {
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
            let whole = serde_json::to_string_pretty(&super::log(&root_uri, json!(results)));
            let mut whole = whole.unwrap();
            // The inputs not linted come after the results (where the log read so far stays
            // valid), not in their sorted place.
            if !errors.is_empty() {
                let mut bytes = b",\n      \"invocations\": ".to_vec();
                crate::output::json::pretty_at(&mut bytes, &invocations(errors, &root), 3);
                let end = "\n      ],\n      \"tool\": {";
                let at = whole.find(end).unwrap() + "\n      ]".len();
                whole.insert_str(at, std::str::from_utf8(&bytes).unwrap());
            }
            whole.push('\n');
            whole
        }
    }

    /// Equal texts, or a failure that shows the first line where they part (a whole log is
    /// hundreds of kilobytes).
    fn assert_same(ours: &str, reference: &str) {
        let (a, b): (Vec<_>, Vec<_>) = (ours.lines().collect(), reference.lines().collect());
        if let Some(i) = (0..a.len().max(b.len())).find(|&i| a.get(i) != b.get(i)) {
            let around = |l: &[&str]| l[i.saturating_sub(8)..(i + 3).min(l.len())].join("\n");
            panic!(
                "line {}: written\n{}\n\nreference\n{}",
                i + 1,
                around(&a),
                around(&b)
            );
        }
        assert_eq!(ours, reference);
    }

    fn written(reports: &[FileReport], errors: &[crate::output::InputError]) -> String {
        let run = Run {
            reports,
            stats: Default::default(),
            fixed: None,
            errors,
        };
        let mut out = Vec::new();
        write(&run, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn results_spliced_into_the_log_are_the_log_written_at_once() {
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
            assert_same(&written(&reports, &[]), &reference::log_of(&reports, &[]));
        }
    }

    /// Every text a result carries holds what JSON must escape (quotes, backslashes, each
    /// control character) beside what it must not (DEL, non-ASCII, a line separator); the
    /// findings come in every shape (each provenance, fixes safe and unsafe with no, one and two
    /// edits), from standard input and from files in the repository, outside it and behind
    /// symbolic links.
    #[test]
    fn results_written_directly_are_the_bytes_and_texts_of_the_serialized_values() {
        let all: String = (0u8..0x80)
            .map(char::from)
            .chain("é€😀\u{2028}".chars())
            .collect();
        let texts = [
            "plain".to_string(),
            "a \"quoted\" \\path\\".to_string(),
            "tab\there\r\nline\u{8}\u{c}\u{0}\u{1f}\u{7f}".to_string(),
            all.clone(),
        ];
        let finding = |i: usize, text: &str| {
            let mut d = Diagnostic::new(
                RULES[i % RULES.len()].code,
                [Severity::Error, Severity::Warning, Severity::Info][i % 3],
                0..1,
                format!("message {text}"),
            );
            d.notes = (0..i % 3).map(|n| format!("note {n} {text}")).collect();
            d.document = i * 7;
            d.fingerprint = 0x0123_4567_89ab_cdef_u64.rotate_left(i as u32);
            if i % 2 == 1 {
                d.object = Some(Arc::new(ObjectRef {
                    api_version: Some("apps/v1".into()),
                    kind: Some(text.to_string()),
                    namespace: (i % 4 == 1).then(|| text.to_string()),
                    name: Some(format!("api {text}")),
                }));
                d.container = Some(text.into());
            }
            d.provenance = match i % 6 {
                0 => Some(Box::new(Provenance::Chart(ChartOrigin {
                    file: format!("templates/{text}.yaml"),
                    line: Some(12),
                    values_key: Some(text.to_string()),
                    unmapped: None,
                }))),
                1 => Some(Box::new(Provenance::Chart(ChartOrigin {
                    file: "templates/d.yaml".into(),
                    line: None,
                    values_key: None,
                    unmapped: Some(text.to_string()),
                }))),
                2 => Some(Box::new(Provenance::Kustomize(KustomizeOrigin {
                    build: format!("overlays/{text} (kustomize build)"),
                    file: Some(format!("base/{text}.yaml")),
                    line: Some(13),
                    column: Some(22),
                    end_line: (i % 4 == 2).then_some(14),
                    end_column: None,
                    unmapped: None,
                }))),
                3 => Some(Box::new(Provenance::Kustomize(KustomizeOrigin {
                    build: "overlays/prod".into(),
                    file: None,
                    line: None,
                    column: None,
                    end_line: None,
                    end_column: None,
                    unmapped: Some(text.to_string()),
                }))),
                4 => Some(Box::new(Provenance::Cluster(ClusterRef {
                    kind: "Deployment".into(),
                    namespace: (i % 4 == 0).then(|| "payments".into()),
                    name: format!("api {text}"),
                    container: Some(text.to_string()),
                    path: format!("spec.template.spec.containers[0].env {text}"),
                }))),
                _ => None,
            };
            if i % 6 < 2 || i % 5 == 0 {
                d.source_template = Some(format!("chart/templates/{text}.yaml").into());
            }
            let edits: Vec<Edit> = (0..i % 3)
                .map(|n| Edit {
                    range: n..n,
                    text: format!("{text}{n}\n"),
                })
                .collect();
            if i % 4 != 3 {
                d.fix = Some(Fix {
                    applicability: [Applicability::Safe, Applicability::Unsafe][i % 2],
                    title: format!("title {text}"),
                    edits,
                });
            }
            Finding {
                diagnostic: d,
                start: (i + 1, 1),
                end: (i + 10_000, 12_345_678),
                edit_positions: (0..i % 3).map(|n| ((n + 1, 2), (n + 1, 300 + n))).collect(),
            }
        };
        // Files outside the repository, and through a linked directory and a linked file.
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real dir");
        std::fs::create_dir(&real).unwrap();
        std::fs::write(real.join("a#1.yaml"), "").unwrap();
        std::os::unix::fs::symlink(&real, dir.path().join("linked")).unwrap();
        std::os::unix::fs::symlink(real.join("a#1.yaml"), real.join("link.yaml")).unwrap();
        let origins = [
            Origin::Stdin(texts[1].clone()),
            Origin::Stdin(all.clone()),
            Origin::File("Cargo.toml".into()),
            Origin::File("src/output/../output/sarif.rs".into()),
            Origin::File(real.join("a#1.yaml")),
            Origin::File(dir.path().join("linked/a#1.yaml")),
            Origin::File(real.join("link.yaml")),
            Origin::File("no such file.yaml".into()),
        ];
        let mut n = 0;
        let reports: Vec<FileReport> = origins
            .into_iter()
            .map(|origin| FileReport {
                name: "shown".into(),
                origin,
                findings: texts
                    .iter()
                    .flat_map(|t| {
                        n += 1;
                        [finding(n, t), finding(n + 100, t)]
                    })
                    .collect(),
                stats: Default::default(),
                source: None,
                skipped: None,
            })
            .collect();
        let errors = [crate::output::InputError {
            path: Some(dir.path().join("linked").to_string_lossy().into_owned()),
            message: texts[2].clone(),
            failed: true,
        }];
        let log = written(&reports, &errors);
        assert_same(&log, &reference::log_of(&reports, &errors));
        // The texts read back as they were (not only as serde_json would have written them).
        let parsed: Value = serde_json::from_str(&log).unwrap();
        let results = parsed["runs"][0]["results"].as_array().unwrap();
        let findings: Vec<&Finding> = reports.iter().flat_map(|r| &r.findings).collect();
        assert_eq!(results.len(), findings.len());
        for (r, f) in results.iter().zip(findings) {
            let d = &f.diagnostic;
            assert!(r["message"]["text"]
                .as_str()
                .unwrap()
                .starts_with(&d.message_with_notes()));
            if let Some(c) = &d.container {
                assert_eq!(r["properties"]["container"], **c);
            }
            if let Some(fix) = &d.fix {
                let edits = &r["fixes"][0]["artifactChanges"][0]["replacements"];
                for (i, e) in fix.edits.iter().enumerate() {
                    assert_eq!(edits[i]["insertedContent"]["text"], e.text);
                }
            }
        }
        // The first file's name, from standard input, where a fix changes it.
        let fixed = &results[..8]
            .iter()
            .find(|r| r.get("fixes").is_some())
            .unwrap()["fixes"][0]["artifactChanges"][0]["artifactLocation"];
        assert_eq!(fixed["uri"], "a%20%22quoted%22%20%5Cpath%5C");
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
