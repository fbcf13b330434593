//! `--format junit` and `--format checkstyle`: XML reports that CI systems (Jenkins, GitLab,
//! Azure Pipelines) and code-review tools (reviewdog, Danger) display.
//!
//! JUnit: one test suite per file, one failed test case per finding, and one passing case for a
//! manifest without findings, so a CI page counts the files that passed. A file that holds no
//! Kubernetes object was not linted and passes nothing: its case is skipped. Checkstyle: one
//! `file` element per file with an `error` per finding, as checkstyle 4.3 writes them.
//!
//! The inputs not linted ([`super::InputError`]) come last in both, so that a CI page that shows
//! nothing else still shows them: in JUnit a suite each whose case is an `error` (an input that
//! could not be read, exit 2) or `skipped` (one passed over on purpose); in checkstyle a `file`
//! each with one `error` element of severity `error` or `info` and source `golint-k8s.input`.

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
        if r.skipped.is_some() {
            // Listed with the inputs not linted, at the end.
            return (out, 0, 0);
        }
        if n == 0 && r.stats.objects == 0 {
            let _ = writeln!(
                out,
                r#"  <testsuite name="{name}" tests="1" failures="0" errors="0" skipped="1">"#
            );
            let _ = writeln!(
                out,
                r#"    <testcase name="golint-k8s" classname="{name}" file="{name}">"#
            );
            let _ = writeln!(out, r#"      <skipped message="{NOT_A_MANIFEST}"/>"#);
            out.push_str("    </testcase>\n  </testsuite>\n");
            return (out, 1, 0);
        }
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

    fn finish(&self, held: Suites, end: &End, out: &mut dyn Write) -> std::io::Result<()> {
        let tests = held.tests + end.errors.len();
        let failures = held.failures;
        let errors = end.errors.iter().filter(|e| e.failed).count();
        writeln!(out, r#"<?xml version="1.0" encoding="UTF-8"?>"#)?;
        writeln!(
            out,
            r#"<testsuites name="golint-k8s" tests="{tests}" failures="{failures}" errors="{errors}">"#
        )?;
        for suite in &held.suites {
            out.write_all(suite.as_bytes())?;
        }
        for e in end.errors {
            let name = escape(e.path.as_deref().unwrap_or("golint-k8s"));
            let message = escape(&e.message);
            let (counts, case) = if e.failed {
                (
                    r#"errors="1""#,
                    format!(
                        r#"<error message="{message}" type="input not linted">{name}: {message}</error>"#
                    ),
                )
            } else {
                (
                    r#"errors="0" skipped="1""#,
                    format!(r#"<skipped message="{message}"/>"#),
                )
            };
            writeln!(
                out,
                r#"  <testsuite name="{name}" tests="1" failures="0" {counts}>"#
            )?;
            writeln!(
                out,
                r#"    <testcase name="golint-k8s" classname="{name}" file="{name}">"#
            )?;
            writeln!(out, "      {case}")?;
            writeln!(out, "    </testcase>\n  </testsuite>")?;
        }
        writeln!(out, "</testsuites>")
    }
}

/// Why a file that holds no Kubernetes object passes nothing.
const NOT_A_MANIFEST: &str = "not linted: no document in it has an apiVersion and a kind, so it is not taken for a Kubernetes manifest";

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

    fn finish(&self, _: (), end: &End, out: &mut dyn Write) -> std::io::Result<()> {
        // Checkstyle has no element for a file as a whole: its error is at line 1.
        for e in end.errors {
            let severity = if e.failed { "error" } else { "info" };
            writeln!(
                out,
                r#"  <file name="{}">"#,
                escape(e.path.as_deref().unwrap_or("golint-k8s"))
            )?;
            writeln!(
                out,
                r#"    <error line="1" severity="{severity}" message="{}" source="golint-k8s.input"/>"#,
                escape(&e.message)
            )?;
            writeln!(out, "  </file>")?;
        }
        writeln!(out, "</checkstyle>")
    }
}
