//! `--format concise`: one line per finding, `file:line:col: severity CODE name: message`, the
//! shape editors' and CI's problem matchers already parse.

use std::io::Write;

use super::Run;

pub fn write(run: &Run, out: &mut dyn Write) -> std::io::Result<()> {
    for r in run.reports {
        for f in &r.findings {
            let d = &f.diagnostic;
            let rule = d.code.rule();
            writeln!(
                out,
                "{}:{}:{}: {} {} {}: {}",
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
