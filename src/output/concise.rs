//! `--format concise`: one line per finding, `file:line:col: severity CODE name: message`, the
//! shape editors' and CI's problem matchers already parse.

use std::io::Write;

use super::Run;

pub fn write(run: &Run, out: &mut dyn Write) -> std::io::Result<()> {
    for r in run.reports {
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
            writeln!(
                out,
                "{}:{}:{}: {} {} {}: {}{within}",
                r.name,
                f.start.0,
                f.start.1,
                d.severity.as_str(),
                d.code,
                rule.name,
                d.message.replace('\n', " ")
            )?;
        }
    }
    Ok(())
}
