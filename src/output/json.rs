//! `--format json`: the stable machine contract of interface.md. Other tools consume it: fields
//! are only ever added, never renamed or removed.

use std::io::Write;

use serde::Serialize;

use super::Run;
use crate::diagnostic::{Applicability, ChartOrigin, ClusterRef, ObjectRef, Severity};
use crate::lint::{FileReport, Finding, Stats};
use crate::rules::registry;

// The document: {"version": 1, "tool": {"name", "version"}, "findings": [...], "summary": {...},
// and from `fix` only, "fixed": [...]}. Written by [`Stream`].

#[derive(Serialize)]
struct FindingOut<'a> {
    code: &'static str,
    rule: &'static str,
    severity: Severity,
    message: &'a str,
    notes: &'a [String],
    file: &'a str,
    line: usize,
    column: usize,
    end_line: usize,
    end_column: usize,
    document: usize,
    object: Option<&'a ObjectRef>,
    container: Option<&'a str>,
    source_template: Option<&'a str>,
    /// With the chart's sources (`--helm`, `--chart`): the template line and values key.
    #[serde(skip_serializing_if = "Option::is_none")]
    chart: Option<&'a ChartOrigin>,
    /// From `golint-k8s cluster`: the object, container and field path in the cluster.
    #[serde(skip_serializing_if = "Option::is_none")]
    object_ref: Option<&'a ClusterRef>,
    fix: Option<FixOut<'a>>,
}

#[derive(Serialize)]
struct FixOut<'a> {
    applicability: Applicability,
    title: &'a str,
    edits: Vec<EditOut<'a>>,
}

#[derive(Serialize)]
struct EditOut<'a> {
    line: usize,
    column: usize,
    end_line: usize,
    end_column: usize,
    text: &'a str,
}

#[derive(Serialize, Default)]
struct Summary {
    files: usize,
    documents: usize,
    objects: usize,
    containers: usize,
    findings: usize,
    by_severity: BySeverity,
    fixable: Fixable,
}

#[derive(Serialize, Default)]
struct BySeverity {
    error: usize,
    warning: usize,
    info: usize,
}

#[derive(Serialize, Default)]
struct Fixable {
    safe: usize,
    #[serde(rename = "unsafe")]
    unsafe_: usize,
}

/// One file's findings as JSON array elements (each preceded by `,`), with the counts the summary
/// needs. Built where the file is linted, so that a run streams: the text of each finding is
/// produced in parallel, and no finding is kept once it is written.
pub struct Fragment {
    bytes: Vec<u8>,
    findings: usize,
    by_severity: BySeverity,
    fixable: Fixable,
}

impl Fragment {
    pub fn render(r: &FileReport) -> Fragment {
        let mut f = Fragment {
            bytes: Vec::with_capacity(r.findings.len() * 1024),
            findings: r.findings.len(),
            by_severity: BySeverity::default(),
            fixable: Fixable::default(),
        };
        for finding in &r.findings {
            let d = &finding.diagnostic;
            match d.severity {
                Severity::Error => f.by_severity.error += 1,
                Severity::Warning => f.by_severity.warning += 1,
                Severity::Info => f.by_severity.info += 1,
            }
            match d.fix.as_ref().map(|x| x.applicability) {
                Some(Applicability::Safe) => f.fixable.safe += 1,
                Some(Applicability::Unsafe) => f.fixable.unsafe_ += 1,
                None => {}
            }
            f.bytes.extend_from_slice(b",\n    ");
            let out = finding_out(&r.name, finding);
            // Writing to a Vec cannot fail, and these types always serialize.
            let _ = out.serialize(&mut serde_json::Serializer::with_formatter(
                &mut f.bytes,
                Pretty::at(2),
            ));
        }
        f
    }
}

fn finding_out<'a>(file: &'a str, f: &'a Finding) -> FindingOut<'a> {
    let d = &f.diagnostic;
    FindingOut {
        code: d.code,
        rule: registry::by_code(d.code).name,
        severity: d.severity,
        message: &d.message,
        notes: &d.notes,
        file,
        line: f.start.0,
        column: f.start.1,
        end_line: f.end.0,
        end_column: f.end.1,
        document: d.document,
        object: d.object.as_ref(),
        container: d.container.as_deref(),
        source_template: d.source_template.as_deref(),
        chart: d.chart.as_ref(),
        object_ref: d.cluster.as_ref(),
        fix: d.fix.as_ref().map(|x| FixOut {
            applicability: x.applicability,
            title: &x.title,
            edits: x
                .edits
                .iter()
                .zip(&f.edit_positions)
                .map(|(e, (s, en))| EditOut {
                    line: s.0,
                    column: s.1,
                    end_line: en.0,
                    end_column: en.1,
                    text: &e.text,
                })
                .collect(),
        }),
    }
}

/// The JSON document written piece by piece: the head, each file's [`Fragment`] in file order,
/// then the summary. The bytes are those of one pretty-printed document.
pub struct Stream {
    summary: Summary,
}

impl Stream {
    pub fn begin(out: &mut dyn Write) -> std::io::Result<Stream> {
        write!(
            out,
            "{{\n  \"version\": 1,\n  \"tool\": {{\n    \"name\": \"golint-k8s\",\n    \"version\": \"{}\"\n  }},\n  \"findings\": [",
            env!("CARGO_PKG_VERSION")
        )?;
        Ok(Stream {
            summary: Summary::default(),
        })
    }

    pub fn push(&mut self, out: &mut dyn Write, f: &Fragment) -> std::io::Result<()> {
        let bytes = if self.summary.findings == 0 {
            f.bytes.get(1..).unwrap_or_default()
        } else {
            &f.bytes
        };
        out.write_all(bytes)?;
        let s = &mut self.summary;
        s.findings += f.findings;
        s.by_severity.error += f.by_severity.error;
        s.by_severity.warning += f.by_severity.warning;
        s.by_severity.info += f.by_severity.info;
        s.fixable.safe += f.fixable.safe;
        s.fixable.unsafe_ += f.fixable.unsafe_;
        Ok(())
    }

    pub fn finish(
        mut self,
        out: &mut dyn Write,
        stats: Stats,
        fixed: Option<&[super::FixedOut]>,
    ) -> std::io::Result<()> {
        if self.summary.findings > 0 {
            out.write_all(b"\n  ")?;
        }
        out.write_all(b"],\n  \"summary\": ")?;
        self.summary.files = stats.files;
        self.summary.documents = stats.documents;
        self.summary.objects = stats.objects;
        self.summary.containers = stats.containers;
        let mut tail = Vec::new();
        let _ = self
            .summary
            .serialize(&mut serde_json::Serializer::with_formatter(
                &mut tail,
                Pretty::at(1),
            ));
        if let Some(fixed) = fixed {
            tail.extend_from_slice(b",\n  \"fixed\": ");
            let _ = fixed.serialize(&mut serde_json::Serializer::with_formatter(
                &mut tail,
                Pretty::at(1),
            ));
        }
        out.write_all(&tail)?;
        out.write_all(b"\n}\n")
    }
}

pub fn write(run: &Run, out: &mut dyn Write) -> std::io::Result<()> {
    let mut stream = Stream::begin(out)?;
    for r in run.reports {
        stream.push(out, &Fragment::render(r))?;
    }
    stream.finish(out, run.stats, run.fixed)
}

/// serde_json's pretty layout (two spaces), starting `level` levels deep, so that a value can be
/// written inside a document that is being written by hand.
struct Pretty {
    level: usize,
    has_value: bool,
}

impl Pretty {
    fn at(level: usize) -> Pretty {
        Pretty {
            level,
            has_value: false,
        }
    }

    /// A line break and the indentation of the current level, in one write.
    fn indent<W: ?Sized + Write>(&self, w: &mut W, comma: bool) -> std::io::Result<()> {
        const BREAK: &[u8] = b",\n                                                                ";
        let from = usize::from(!comma);
        match BREAK.get(from..2 + 2 * self.level) {
            Some(s) => w.write_all(s),
            None => {
                w.write_all(&BREAK[from..2])?;
                (0..self.level).try_for_each(|_| w.write_all(b"  "))
            }
        }
    }

    fn newline<W: ?Sized + Write>(&self, w: &mut W, first: bool) -> std::io::Result<()> {
        self.indent(w, !first)
    }

    fn close<W: ?Sized + Write>(&mut self, w: &mut W, bracket: &[u8]) -> std::io::Result<()> {
        self.level -= 1;
        if self.has_value {
            self.indent(w, false)?;
        }
        w.write_all(bracket)
    }
}

impl serde_json::ser::Formatter for Pretty {
    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.level += 1;
        self.has_value = false;
        w.write_all(b"[")
    }

    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.close(w, b"]")
    }

    fn begin_array_value<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.newline(w, first)
    }

    fn end_array_value<W: ?Sized + Write>(&mut self, _w: &mut W) -> std::io::Result<()> {
        self.has_value = true;
        Ok(())
    }

    fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.level += 1;
        self.has_value = false;
        w.write_all(b"{")
    }

    fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.close(w, b"}")
    }

    fn begin_object_key<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.newline(w, first)
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        w.write_all(b": ")
    }

    fn end_object_value<W: ?Sized + Write>(&mut self, _w: &mut W) -> std::io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}
