//! Output formats. Findings arrive positioned (line/column) and sorted; each format only renders.

pub mod concise;
pub mod github;
pub mod human;
pub mod json;
pub mod sarif;

use crate::lint::{FileReport, Stats};

/// Where a rule's documentation lives on the web (also shown by `golint-k8s explain`).
pub const DOCS_BASE: &str = "https://github.com/golint-k8s/golint-k8s/blob/main/rules/";

pub fn doc_url(code: crate::rules::Code) -> String {
    let rule = code.rule();
    format!("{DOCS_BASE}{}-{}.md", rule.code, rule.name)
}

/// Everything a format needs: reports sorted by file name, totals, and for `fix` what it applied.
pub struct Run<'a> {
    pub reports: &'a [FileReport],
    pub stats: Stats,
    pub fixed: Option<&'a [FixedOut]>,
}

/// A fix that `fix` applied (or, with `--diff`/`--check`, would apply), located in the original
/// file. `path` names the smallest node holding all its edits: nothing outside it changed.
#[derive(Debug, Clone, serde::Serialize)]
pub struct FixedOut {
    pub file: String,
    pub code: crate::rules::Code,
    pub rule: &'static str,
    pub applicability: crate::diagnostic::Applicability,
    pub title: String,
    pub document: usize,
    /// The object's name and the container, as in findings.
    pub object: Option<String>,
    pub container: Option<String>,
    pub path: Vec<crate::fix::engine::PathSeg>,
    pub line: usize,
    pub column: usize,
    pub end_line: usize,
    pub end_column: usize,
}
