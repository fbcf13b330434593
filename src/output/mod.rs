//! Output formats. Findings arrive positioned (line/column) and sorted; each format only renders.

pub mod concise;
pub mod github;
pub mod human;
pub mod json;
pub mod sarif;

use crate::lint::{FileReport, Stats};

/// Where a rule's documentation lives on the web (also shown by `golint-k8s explain`).
pub const DOCS_BASE: &str = "https://github.com/golint-k8s/golint-k8s/blob/main/rules/";

pub fn doc_url(code: &str) -> String {
    let rule = crate::rules::registry::by_code(code);
    format!("{DOCS_BASE}{}-{}.md", rule.code, rule.name)
}

/// Everything a format needs: reports sorted by file name, and totals.
pub struct Run<'a> {
    pub reports: &'a [FileReport],
    pub stats: Stats,
}
