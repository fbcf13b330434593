//! `--format junit` and `--format checkstyle`: XML reports that CI systems (Jenkins, GitLab,
//! Azure Pipelines) and code-review tools (reviewdog, Danger) display.
//!
//! JUnit: one test suite per file, one failed test case per finding, and one passing case for a
//! file without findings, so a CI page counts the files that passed. Checkstyle: one `file`
//! element per file with an `error` per finding, as checkstyle 4.3 writes them.

use std::io::Write;

use super::{End, Format};
use crate::diagnostic::Severity;
use crate::lint::FileReport;
use std::fmt::Write as _;

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

/// JUnit XML. Its root element carries the totals, so the files' suites wait for `finish`.
pub struct Junit;

/// The suites held back, and the totals the root element will carry.
#[derive(Default)]
pub struct Suites {
    suites: Vec<String>,
    tests: usize,
    failures: usize,
}

impl Format for Junit {
    /// A file's test suite, its tests and its failures.
    type Piece = (String, usize, usize);
    type State = Suites;

    fn begin(&self, _: &mut dyn Write) -> std::io::Result<Suites> {
        Ok(Suites::default())
    }

    fn render(&self, r: &FileReport) -> (String, usize, usize) {
        let mut out = String::new();
        let name = escape(&r.name);
        let n = r.findings.len();
        let _ = writeln!(
            out,
            r#"  <testsuite name="{name}" tests="{}" failures="{n}" errors="0">"#,
            n.max(1)
        );
        if r.findings.is_empty() {
            let _ = writeln!(
                out,
                r#"    <testcase name="golint-k8s" classname="{name}" file="{name}"/>"#
            );
        }
        for f in &r.findings {
            let d = &f.diagnostic;
            let _ = writeln!(
                out,
                r#"    <testcase name="{} {}:{}:{}" classname="{name}" file="{name}" line="{}">"#,
                d.code, name, f.start.0, f.start.1, f.start.0
            );
            let _ = writeln!(
                out,
                r#"      <failure message="{}" type="{} {}">{}:{}:{}: {}</failure>"#,
                escape(&d.message),
                d.code,
                d.code.rule().name,
                name,
                f.start.0,
                f.start.1,
                escape(&d.message_with_notes())
            );
            out.push_str("    </testcase>\n");
        }
        out.push_str("  </testsuite>\n");
        // A file without findings is one passing test.
        (out, n.max(1), n)
    }

    fn push(
        &self,
        held: &mut Suites,
        suite: (String, usize, usize),
        _: &mut dyn Write,
    ) -> std::io::Result<()> {
        let (suite, tests, failures) = suite;
        held.suites.push(suite);
        held.tests += tests;
        held.failures += failures;
        Ok(())
    }

    fn finish(&self, held: Suites, _: &End, out: &mut dyn Write) -> std::io::Result<()> {
        let (tests, failures) = (held.tests, held.failures);
        writeln!(out, r#"<?xml version="1.0" encoding="UTF-8"?>"#)?;
        writeln!(
            out,
            r#"<testsuites name="golint-k8s" tests="{tests}" failures="{failures}" errors="0">"#
        )?;
        for suite in &held.suites {
            out.write_all(suite.as_bytes())?;
        }
        writeln!(out, "</testsuites>")
    }
}

/// Checkstyle XML: a `file` element for each file with findings.
pub struct Checkstyle;

impl Format for Checkstyle {
    type State = ();
    type Piece = String;

    fn begin(&self, out: &mut dyn Write) -> std::io::Result<()> {
        writeln!(out, r#"<?xml version="1.0" encoding="UTF-8"?>"#)?;
        writeln!(out, r#"<checkstyle version="4.3">"#)
    }

    fn render(&self, r: &FileReport) -> String {
        let mut out = String::new();
        if r.findings.is_empty() {
            return out;
        }
        let _ = writeln!(out, r#"  <file name="{}">"#, escape(&r.name));
        for f in &r.findings {
            let d = &f.diagnostic;
            let severity = match d.severity {
                Severity::Error => "error",
                Severity::Warning => "warning",
                Severity::Info => "info",
            };
            let _ = writeln!(
                out,
                r#"    <error line="{}" column="{}" severity="{severity}" message="{}" source="golint-k8s.{}"/>"#,
                f.start.0,
                f.start.1,
                escape(&d.message),
                d.code
            );
        }
        out.push_str("  </file>\n");
        out
    }

    fn push(&self, _: &mut (), file: String, out: &mut dyn Write) -> std::io::Result<()> {
        out.write_all(file.as_bytes())
    }

    fn finish(&self, _: (), _: &End, out: &mut dyn Write) -> std::io::Result<()> {
        writeln!(out, "</checkstyle>")
    }
}
