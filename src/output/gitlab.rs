//! `--format gitlab`: a GitLab Code Quality report, so findings show in merge requests.
//!
//! A JSON array of issues with the fields GitLab reads: `description`, `check_name`,
//! `fingerprint`, `severity` (info, minor, major, critical, blocker) and `location` (`path`
//! relative to the repository, `lines.begin`). GitLab compares reports by fingerprint, which must
//! be unique in a report: the finding's fingerprint (no line numbers in it, so a moved finding is
//! the same issue) and its rank among findings that share it.
//!
//! The inputs not linted come last, an issue each in the same shape: `check_name`
//! `golint-k8s.input`, at line 1 of the path, `critical` when it could not be read (as an error
//! finding is) and `info` when it was passed over on purpose.

use std::collections::HashMap;
use std::io::Write;

use serde_json::json;

use super::{End, Format};
use crate::diagnostic::Severity;
use crate::lint::FileReport;

fn severity(s: Severity) -> &'static str {
    match s {
        Severity::Error => "critical",
        Severity::Warning => "major",
        Severity::Info => "info",
    }
}

/// The `check_name` of an input not linted.
const INPUT_CHECK: &str = "golint-k8s.input";

/// A path as the walk found it, relative to the repository root when it lies there. The link
/// itself is located, not what it leads to: a link that leads nowhere is still at its path.
fn relative(root: &std::path::Path, path: &str) -> String {
    let p = std::path::Path::new(path);
    let abs = if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir().map_or_else(|_| p.to_path_buf(), |cwd| cwd.join(p))
    };
    let parent = abs
        .parent()
        .and_then(|d| std::fs::canonicalize(d).ok())
        .zip(abs.file_name())
        .map_or(abs.clone(), |(d, name)| d.join(name));
    parent
        .strip_prefix(root)
        .map_or_else(|_| path.to_string(), super::slash_path)
}

/// GitLab's Code Quality report: a JSON array with one issue per finding and one per input not
/// linted.
pub struct Gitlab {
    root: std::path::PathBuf,
}

impl Gitlab {
    pub fn new() -> Gitlab {
        Gitlab {
            root: super::repo_root(),
        }
    }
}

impl Default for Gitlab {
    fn default() -> Gitlab {
        Gitlab::new()
    }
}

impl Format for Gitlab {
    /// The file's issues, each as an array element one level deep.
    type Piece = Vec<Vec<u8>>;
    /// Whether an issue was written.
    type State = bool;

    fn begin(&self, out: &mut dyn Write) -> std::io::Result<bool> {
        out.write_all(b"[")?;
        Ok(false)
    }

    fn render(&self, r: &FileReport) -> Vec<Vec<u8>> {
        let path = super::repo_path(&self.root, r);
        let mut seen: HashMap<u64, usize> = HashMap::new();
        let mut issues = Vec::with_capacity(r.findings.len());
        for f in &r.findings {
            let d = &f.diagnostic;
            // A fingerprint appears once per report: the second finding that shares one gets
            // its rank after it.
            let rank = seen.entry(d.fingerprint).or_default();
            let fingerprint = if *rank == 0 {
                format!("{:016x}", d.fingerprint)
            } else {
                format!("{:016x}-{rank}", d.fingerprint)
            };
            *rank += 1;
            let issue = json!({
                "description": format!("{}: {}", d.code, d.message),
                "check_name": d.code.to_string(),
                "fingerprint": fingerprint,
                "severity": severity(d.severity),
                "location": {"path": path, "lines": {"begin": f.start.0}},
            });
            let mut bytes = Vec::new();
            super::json::pretty_at(&mut bytes, &issue, 1);
            issues.push(bytes);
        }
        issues
    }

    fn push(
        &self,
        any: &mut bool,
        issues: Vec<Vec<u8>>,
        out: &mut dyn Write,
    ) -> std::io::Result<()> {
        for issue in issues {
            out.write_all(if *any { b",\n  " } else { b"\n  " })?;
            out.write_all(&issue)?;
            *any = true;
        }
        Ok(())
    }

    fn finish(&self, mut any: bool, end: &End, out: &mut dyn Write) -> std::io::Result<()> {
        let mut seen: HashMap<u64, usize> = HashMap::new();
        for e in end.errors {
            let path = e
                .path
                .as_deref()
                .map_or_else(|| ".".to_string(), |p| relative(&self.root, p));
            let (kind, severity) = if e.failed {
                ("failed", "critical")
            } else {
                ("passed-over", "info")
            };
            let fingerprint = crate::fingerprint::of_input(&path, kind);
            let rank = seen.entry(fingerprint).or_default();
            let fingerprint = if *rank == 0 {
                format!("{fingerprint:016x}")
            } else {
                format!("{fingerprint:016x}-{rank}")
            };
            *rank += 1;
            let issue = json!({
                "description": e.message,
                "check_name": INPUT_CHECK,
                "fingerprint": fingerprint,
                "severity": severity,
                "location": {"path": path, "lines": {"begin": 1}},
            });
            let mut bytes = Vec::new();
            super::json::pretty_at(&mut bytes, &issue, 1);
            self.push(&mut any, vec![bytes], out)?;
        }
        // serde_json's pretty layout: `[]` when empty.
        out.write_all(if any { b"\n]\n" } else { b"]\n" })
    }
}
