//! Output formats. Findings arrive positioned (line/column) and sorted; each format only renders.

pub mod concise;
pub mod github;
pub mod gitlab;
pub mod human;
pub mod json;
pub mod sarif;
pub mod xml;

use crate::lint::{FileReport, Stats};

/// Where a rule's documentation lives on the web (also shown by `golint-k8s explain`).
pub const DOCS_BASE: &str = "https://github.com/golint-k8s/golint-k8s/blob/main/rules/";

pub fn doc_url(code: crate::diagnostic::Code) -> String {
    let rule = code.rule();
    format!("{DOCS_BASE}{}-{}.md", rule.code, rule.name)
}

/// The repository root that report paths are relative to: the nearest directory with `.git`,
/// else the current directory.
pub(crate) fn repo_root() -> std::path::PathBuf {
    let cwd = std::env::current_dir().unwrap_or_else(|_| std::path::PathBuf::from("."));
    crate::walk::repository_root(&cwd).unwrap_or(cwd)
}

/// A report's file as a path relative to `root` with `/` separators, when it lies there; its
/// name otherwise (standard input, a file outside the repository).
pub(crate) fn repo_path(root: &std::path::Path, r: &FileReport) -> String {
    match &r.origin {
        crate::source::Origin::File(p) => std::fs::canonicalize(p)
            .ok()
            .and_then(|abs| abs.strip_prefix(root).ok().map(|rel| rel.to_path_buf()))
            .map_or_else(|| r.name.clone(), |rel| slash_path(&rel)),
        crate::source::Origin::Stdin(_) => r.name.clone(),
    }
}

/// A relative path with `/` between its components. Only the platform's separators are
/// replaced: on Unix a backslash is part of a file name (`back\slash.yaml` is one file).
pub(crate) fn slash_path(rel: &std::path::Path) -> String {
    let parts: Vec<_> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect();
    parts.join("/")
}

/// Everything a format needs: reports sorted by file name, totals, the inputs that could not be
/// read, and for `fix` what it applied.
pub struct Run<'a> {
    pub reports: &'a [FileReport],
    pub stats: Stats,
    pub fixed: Option<&'a [FixedOut]>,
    pub errors: &'a [InputError],
}

/// An input that could not be read or walked (exit 2): a report must never look clean without it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct InputError {
    /// The path as the user named it or the walk found it; None for a failure of no one path.
    pub path: Option<String>,
    pub message: String,
}

impl From<&crate::error::Error> for InputError {
    fn from(e: &crate::error::Error) -> InputError {
        match e {
            crate::error::Error::Input { name, message } => InputError {
                path: Some(name.clone()),
                message: message.clone(),
            },
            other => InputError {
                path: None,
                message: other.to_string(),
            },
        }
    }
}

/// The line human and concise output end with when inputs could not be read.
pub fn unread_line(errors: &[InputError]) -> Option<String> {
    (!errors.is_empty()).then(|| {
        format!(
            "{} path{} could not be linted (see the errors above); the findings are incomplete",
            errors.len(),
            human::plural(errors.len())
        )
    })
}

/// A fix that `fix` applied (or, with `--diff`/`--check`, would apply), located in the original
/// file. `path` names the smallest node holding all its edits: nothing outside it changed.
#[derive(Debug, Clone, serde::Serialize)]
pub struct FixedOut {
    pub file: String,
    pub code: crate::diagnostic::Code,
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
