//! `--format gitlab`: a GitLab Code Quality report, so findings show in merge requests.
//!
//! A JSON array of issues with the fields GitLab reads: `description`, `check_name`,
//! `fingerprint`, `severity` (info, minor, major, critical, blocker) and `location` (`path`
//! relative to the repository, `lines.begin`). GitLab compares reports by fingerprint, which must
//! be unique in a report: the finding's fingerprint (no line numbers in it, so a moved finding is
//! the same issue) and its rank among findings that share it.

use std::collections::HashMap;
use std::io::Write;

use serde_json::{json, Value};

use super::Run;
use crate::diagnostic::Severity;

fn severity(s: Severity) -> &'static str {
    match s {
        Severity::Error => "critical",
        Severity::Warning => "major",
        Severity::Info => "info",
    }
}

pub fn write(run: &Run, out: &mut dyn Write) -> std::io::Result<()> {
    let root = super::repo_root();
    let mut issues = Vec::new();
    for r in run.reports {
        let path = super::repo_path(&root, r);
        let mut seen: HashMap<u64, usize> = HashMap::new();
        for f in &r.findings {
            let d = &f.diagnostic;
            let rank = seen.entry(d.fingerprint).or_default();
            let fingerprint = if *rank == 0 {
                format!("{:016x}", d.fingerprint)
            } else {
                format!("{:016x}-{rank}", d.fingerprint)
            };
            *rank += 1;
            issues.push(json!({
                "description": format!("{}: {}", d.code, d.message),
                "check_name": d.code.to_string(),
                "fingerprint": fingerprint,
                "severity": severity(d.severity),
                "location": {"path": path, "lines": {"begin": f.start.0}},
            }));
        }
    }
    serde_json::to_writer_pretty(&mut *out, &Value::Array(issues))?;
    writeln!(out)
}
