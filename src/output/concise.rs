//! `--format concise`: one line per finding, `file:line:col: severity CODE name: message`, the
//! shape editors' and CI's problem matchers already parse; then one line per input not linted,
//! `path: error: message` (it could not be read) or `path: note: message` (passed over on
//! purpose), the shape compilers give a message about a file as a whole.

use std::io::Write;

use super::{End, Format, Run};
use crate::lint::FileReport;

/// The concise format; with `summary`, the closing counts and the line about unread inputs.
pub struct Concise {
    pub summary: bool,
}

impl Format for Concise {
    type State = ();
    type Piece = Vec<u8>;

    fn begin(&self, _: &mut dyn Write) -> std::io::Result<()> {
        Ok(())
    }

    fn render(&self, r: &FileReport) -> Vec<u8> {
        let mut out = Vec::new();
        for f in &r.findings {
            let d = &f.diagnostic;
            let rule = d.code.rule();
            // Standard input without --stdin-filename has no name to find a finding by: say
            // which object and container it is in.
            let within = match (&d.object, r.name == "-") {
                (Some(o), true) => {
                    let mut w = format!(
                        " (in {} {}",
                        o.kind.as_deref().unwrap_or("?"),
                        o.name.as_deref().unwrap_or("?")
                    );
                    if let Some(ns) = &o.namespace {
                        w.push_str(&format!(" in namespace {ns}"));
                    }
                    if let Some(c) = &d.container {
                        w.push_str(&format!(", container {c}"));
                    }
                    w.push(')');
                    w
                }
                _ => String::new(),
            };
            // A name that starts with `::` is named by `./` in front, so that the line is not a
            // workflow command and still names the file.
            let dot = if r.name.trim_start().starts_with("::") {
                "./"
            } else {
                ""
            };
            let line = format!(
                "{dot}{}:{}:{}: {} {} {}: {}{within}",
                r.name,
                f.start.0,
                f.start.1,
                d.severity.as_str(),
                d.code,
                rule.name,
                d.message
            );
            // Messages quote the input; nothing of it may act on a terminal or a CI log. Writing
            // to a Vec cannot fail.
            let _ = writeln!(
                out,
                "{}",
                crate::text::printable_lines(&line.replace('\n', " "))
            );
        }
        out
    }

    fn push(&self, _: &mut (), piece: Vec<u8>, out: &mut dyn Write) -> std::io::Result<()> {
        out.write_all(&piece)
    }

    fn finish(&self, _: (), end: &End, out: &mut dyn Write) -> std::io::Result<()> {
        // Listed with --quiet too: they are part of what the run found, not its summary.
        for e in end.errors {
            let level = if e.failed { "error" } else { "note" };
            let path = e.path.as_deref().unwrap_or("golint-k8s");
            let dot = if path.trim_start().starts_with("::") {
                "./"
            } else {
                ""
            };
            let line = format!("{dot}{path}: {level}: {}", e.message);
            writeln!(
                out,
                "{}",
                crate::text::printable_lines(&line.replace('\n', " "))
            )?;
        }
        if self.summary {
            writeln!(out, "{}", super::human::summary_line(end))?;
            if let Some(line) = super::unread_line(end.errors) {
                writeln!(out, "{line}")?;
            }
        }
        Ok(())
    }
}

/// The findings alone, one line each.
pub fn write(run: &Run, out: &mut dyn Write) -> std::io::Result<()> {
    super::write(Concise { summary: false }, run, out).map(drop)
}
