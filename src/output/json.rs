//! `--format json`: the stable machine contract of interface.md. Other tools consume it: fields
//! are only ever added, never renamed or removed.

use std::io::Write;

use serde::Serialize;

use super::Run;
use crate::diagnostic::{Applicability, ChartOrigin, ClusterRef, ObjectRef, Severity};
use crate::rules::registry;

#[derive(Serialize)]
struct Output<'a> {
    version: u32,
    tool: Tool,
    findings: Vec<FindingOut<'a>>,
    summary: Summary,
    /// Only from `fix`: what it applied.
    #[serde(skip_serializing_if = "Option::is_none")]
    fixed: Option<&'a [super::FixedOut]>,
}

#[derive(Serialize)]
struct Tool {
    name: &'static str,
    version: &'static str,
}

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

pub fn write(run: &Run, out: &mut dyn Write) -> std::io::Result<()> {
    let mut findings = Vec::new();
    let mut summary = Summary {
        files: run.stats.files,
        documents: run.stats.documents,
        objects: run.stats.objects,
        containers: run.stats.containers,
        ..Summary::default()
    };
    for r in run.reports {
        for f in &r.findings {
            let d = &f.diagnostic;
            match d.severity {
                Severity::Error => summary.by_severity.error += 1,
                Severity::Warning => summary.by_severity.warning += 1,
                Severity::Info => summary.by_severity.info += 1,
            }
            match d.fix.as_ref().map(|x| x.applicability) {
                Some(Applicability::Safe) => summary.fixable.safe += 1,
                Some(Applicability::Unsafe) => summary.fixable.unsafe_ += 1,
                None => {}
            }
            findings.push(FindingOut {
                code: d.code,
                rule: registry::by_code(d.code).name,
                severity: d.severity,
                message: &d.message,
                notes: &d.notes,
                file: &r.name,
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
            });
        }
    }
    summary.findings = findings.len();
    let doc = Output {
        version: 1,
        tool: Tool {
            name: "golint-k8s",
            version: env!("CARGO_PKG_VERSION"),
        },
        findings,
        summary,
        fixed: run.fixed,
    };
    serde_json::to_writer_pretty(&mut *out, &doc).map_err(std::io::Error::other)?;
    writeln!(out)
}
