//! `--format github`: GitHub Actions workflow commands, so findings show as annotations on the
//! pull request's diff without uploading SARIF.
//!
//! GitHub parses `::level file=…,line=…::message`; the message must have `%`, CR and LF escaped,
//! and property values additionally `:` and `,` (they delimit the properties). The inputs not
//! linted come last, an annotation each on the file as a whole.

use std::io::Write;

use super::{End, Format};
use crate::diagnostic::{Provenance, Severity};
use crate::lint::FileReport;

/// A value as a workflow command carries it; the other control characters (an escape sequence
/// would colour or rewrite the log) shown as escapes.
fn escape_data(s: &str) -> String {
    let s = s
        .replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A");
    crate::text::printable(&s).into_owned()
}

fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

/// GitHub's workflow commands, one per finding and one per input not linted.
pub struct Github;

impl Format for Github {
    type State = ();
    type Piece = Vec<u8>;

    fn begin(&self, _: &mut dyn Write) -> std::io::Result<()> {
        Ok(())
    }

    fn render(&self, r: &FileReport) -> Vec<u8> {
        let mut out = Vec::new();
        for f in &r.findings {
            let d = &f.diagnostic;
            let level = match d.severity {
                Severity::Error => "error",
                Severity::Warning => "warning",
                Severity::Info => "notice",
            };
            let title = format!("{} {}", d.code, d.code.rule().name);
            let mut message = d.message_with_notes();
            if let Some(t) = &d.source_template {
                message.push_str(&format!("\nrendered from {t}"));
            }
            // A cluster finding's object is already the annotation's `file`; a chart adds a line.
            match d.provenance.as_deref() {
                Some(Provenance::Chart(c)) => {
                    message.push_str(&format!("\nin the chart: {}", c.describe()))
                }
                Some(Provenance::Kustomize(k)) => {
                    message.push_str(&format!("\nin the build of {}: {}", k.build, k.describe()))
                }
                _ => {}
            }
            let _ = writeln!(
                out,
                "::{level} file={},line={},col={},endLine={},endColumn={},title={}::{}",
                escape_property(&r.name),
                f.start.0,
                f.start.1,
                f.end.0,
                f.end.1,
                escape_property(&title),
                escape_data(&message)
            );
        }
        out
    }

    fn push(&self, _: &mut (), piece: Vec<u8>, out: &mut dyn Write) -> std::io::Result<()> {
        out.write_all(&piece)
    }

    fn finish(&self, _: (), end: &End, out: &mut dyn Write) -> std::io::Result<()> {
        // An input that could not be read fails the check as a finding would; one passed over
        // on purpose is a notice.
        for e in end.errors {
            let level = if e.failed { "error" } else { "notice" };
            let file = e
                .path
                .as_deref()
                .map(|p| format!("file={},", escape_property(p)))
                .unwrap_or_default();
            writeln!(
                out,
                "::{level} {file}title=input not linted::{}",
                escape_data(&e.message)
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_follows_the_workflow_command_rules() {
        assert_eq!(escape_data("50% of a:b, c\r\nd"), "50%25 of a:b, c%0D%0Ad");
        assert_eq!(escape_property("a:b,c%"), "a%3Ab%2Cc%25");
        assert_eq!(
            escape_data("a\u{1b}[2J\r\n::error::x"),
            "a\\u{1b}[2J%0D%0A::error::x"
        );
    }
}
