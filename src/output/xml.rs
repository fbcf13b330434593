//! `--format junit` and `--format checkstyle`: XML reports that CI systems (Jenkins, GitLab,
//! Azure Pipelines) and code-review tools (reviewdog, Danger) display.
//!
//! JUnit: one test suite per file, one failed test case per finding, and one passing case for a
//! file without findings, so a CI page counts the files that passed. Checkstyle: one `file`
//! element per file with an `error` per finding, as checkstyle 4.3 writes them.

use std::io::Write;

use super::Run;
use crate::diagnostic::Severity;

/// Text for an XML attribute or element. XML 1.0 cannot hold most control characters even as
/// references, so they are written as Rust escapes, as file names are in every text output.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' => out.push_str("&#10;"),
            '\t' => out.push_str("&#9;"),
            c if c.is_control() => out.extend(c.escape_debug()),
            c => out.push(c),
        }
    }
    out
}

pub fn write_junit(run: &Run, out: &mut dyn Write) -> std::io::Result<()> {
    let failures: usize = run.reports.iter().map(|r| r.findings.len()).sum();
    let tests: usize = run.reports.iter().map(|r| r.findings.len().max(1)).sum();
    writeln!(out, r#"<?xml version="1.0" encoding="UTF-8"?>"#)?;
    writeln!(
        out,
        r#"<testsuites name="golint-k8s" tests="{tests}" failures="{failures}" errors="0">"#
    )?;
    for r in run.reports {
        let name = escape(&r.name);
        let n = r.findings.len();
        writeln!(
            out,
            r#"  <testsuite name="{name}" tests="{}" failures="{n}" errors="0">"#,
            n.max(1)
        )?;
        if r.findings.is_empty() {
            writeln!(
                out,
                r#"    <testcase name="golint-k8s" classname="{name}" file="{name}"/>"#
            )?;
        }
        for f in &r.findings {
            let d = &f.diagnostic;
            writeln!(
                out,
                r#"    <testcase name="{} {}:{}:{}" classname="{name}" file="{name}" line="{}">"#,
                d.code, name, f.start.0, f.start.1, f.start.0
            )?;
            writeln!(
                out,
                r#"      <failure message="{}" type="{} {}">{}:{}:{}: {}</failure>"#,
                escape(&d.message),
                d.code,
                d.code.rule().name,
                name,
                f.start.0,
                f.start.1,
                escape(&d.message_with_notes())
            )?;
            writeln!(out, "    </testcase>")?;
        }
        writeln!(out, "  </testsuite>")?;
    }
    writeln!(out, "</testsuites>")
}

pub fn write_checkstyle(run: &Run, out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(out, r#"<?xml version="1.0" encoding="UTF-8"?>"#)?;
    writeln!(out, r#"<checkstyle version="4.3">"#)?;
    for r in run.reports.iter().filter(|r| !r.findings.is_empty()) {
        writeln!(out, r#"  <file name="{}">"#, escape(&r.name))?;
        for f in &r.findings {
            let d = &f.diagnostic;
            let severity = match d.severity {
                Severity::Error => "error",
                Severity::Warning => "warning",
                Severity::Info => "info",
            };
            writeln!(
                out,
                r#"    <error line="{}" column="{}" severity="{severity}" message="{}" source="golint-k8s.{}"/>"#,
                f.start.0,
                f.start.1,
                escape(&d.message),
                d.code
            )?;
        }
        writeln!(out, "  </file>")?;
    }
    writeln!(out, "</checkstyle>")
}
