//! `--format human`: miette's rendering with the source snippet, a label on the exact span, the
//! notes as help, and a link to the rule doc. Colour only when writing to a terminal.

use std::io::Write;
use std::sync::Arc;

use miette::{
    GraphicalReportHandler, GraphicalTheme, LabeledSpan, MietteError, NamedSource, SourceCode,
    SourceSpan, SpanContents,
};

use super::{doc_url, Run};
use crate::diagnostic::Severity;
use crate::lint::Finding;
use crate::rules::registry;
use crate::source::Source;

/// Lets miette read the source without copying it per finding.
#[derive(Clone)]
struct Text(Arc<Source>);

// `NamedSource` needs `Debug` on its source; the text itself would only flood a debug print.
impl std::fmt::Debug for Text {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Text({})", self.0.name)
    }
}

impl SourceCode for Text {
    fn read_span<'a>(
        &'a self,
        span: &SourceSpan,
        before: usize,
        after: usize,
    ) -> Result<Box<dyn SpanContents<'a> + 'a>, MietteError> {
        self.0.text.as_str().read_span(span, before, after)
    }
}

#[derive(Debug)]
struct Report {
    message: String,
    code: String,
    severity: miette::Severity,
    help: Option<String>,
    url: String,
    label: LabeledSpan,
    source: NamedSource<Text>,
}

impl std::fmt::Display for Report {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Report {}

impl miette::Diagnostic for Report {
    fn code<'a>(&'a self) -> Option<Box<dyn std::fmt::Display + 'a>> {
        Some(Box::new(&self.code))
    }
    fn severity(&self) -> Option<miette::Severity> {
        Some(self.severity)
    }
    fn help<'a>(&'a self) -> Option<Box<dyn std::fmt::Display + 'a>> {
        self.help
            .as_ref()
            .map(|h| Box::new(h) as Box<dyn std::fmt::Display>)
    }
    fn url<'a>(&'a self) -> Option<Box<dyn std::fmt::Display + 'a>> {
        Some(Box::new(&self.url))
    }
    fn source_code(&self) -> Option<&dyn SourceCode> {
        Some(&self.source)
    }
    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        Some(Box::new(std::iter::once(self.label.clone())))
    }
}

pub struct Options {
    pub color: bool,
    pub width: usize,
    /// Print the closing summary line (off with `--quiet`).
    pub summary: bool,
}

pub fn write(run: &Run, opts: &Options, out: &mut dyn Write) -> std::io::Result<()> {
    let theme = if opts.color {
        GraphicalTheme::unicode()
    } else {
        GraphicalTheme::unicode_nocolor()
    };
    let handler = GraphicalReportHandler::new_themed(theme)
        .with_width(opts.width)
        .with_links(false)
        .with_context_lines(1);
    let mut total = 0;
    for r in run.reports {
        for f in &r.findings {
            total += 1;
            let report = match &r.source {
                Some(src) => build(&r.name, src, f),
                None => {
                    // Not text (binary, too large): no snippet to show.
                    let d = &f.diagnostic;
                    writeln!(
                        out,
                        "{}: {} {}:{}:{}: {}",
                        d.severity.as_str(),
                        d.code,
                        r.name,
                        f.start.0,
                        f.start.1,
                        d.message
                    )?;
                    continue;
                }
            };
            let mut s = String::new();
            handler
                .render_report(&mut s, &report)
                .map_err(std::io::Error::other)?;
            out.write_all(s.as_bytes())?;
        }
    }
    if total > 0 && opts.summary {
        writeln!(out, "{}", summary_line(run))?;
    }
    Ok(())
}

fn build(name: &str, src: &Arc<Source>, f: &Finding) -> Report {
    let d = &f.diagnostic;
    let rule = registry::by_code(d.code);
    let mut help: Vec<String> = d.notes.clone();
    if let Some(t) = &d.source_template {
        help.push(format!("rendered from {t}"));
    }
    if let Some(c) = &d.cluster {
        help.push(format!(
            "in the cluster: {} field {}",
            c.qualified_name(),
            c.path
        ));
    }
    if let Some(c) = &d.chart {
        help.push(format!("in the chart: {}", c.describe()));
    }
    if let Some(fix) = &d.fix {
        help.push(format!(
            "fix ({}): {}",
            match fix.applicability {
                crate::diagnostic::Applicability::Safe => "safe",
                crate::diagnostic::Applicability::Unsafe => "unsafe",
            },
            fix.title
        ));
    }
    let len = d.range.end.saturating_sub(d.range.start);
    Report {
        message: d.message.clone(),
        code: format!("{} {}", d.code, rule.name),
        severity: match d.severity {
            Severity::Error => miette::Severity::Error,
            Severity::Warning => miette::Severity::Warning,
            Severity::Info => miette::Severity::Advice,
        },
        help: (!help.is_empty()).then(|| help.join("\n")),
        url: doc_url(d.code),
        label: LabeledSpan::new(Some(rule.name.to_string()), d.range.start, len),
        source: NamedSource::new(name, Text(src.clone())),
    }
}

pub fn summary_line(run: &Run) -> String {
    let (mut e, mut w, mut i) = (0, 0, 0);
    for r in run.reports {
        for f in &r.findings {
            match f.diagnostic.severity {
                Severity::Error => e += 1,
                Severity::Warning => w += 1,
                Severity::Info => i += 1,
            }
        }
    }
    format!(
        "found {} problem{} ({e} error{}, {w} warning{}, {i} info) in {} file{}, {} document{}, {} container{}",
        e + w + i,
        if e + w + i == 1 { "" } else { "s" },
        if e == 1 { "" } else { "s" },
        if w == 1 { "" } else { "s" },
        run.stats.files,
        if run.stats.files == 1 { "" } else { "s" },
        run.stats.documents,
        if run.stats.documents == 1 { "" } else { "s" },
        run.stats.containers,
        if run.stats.containers == 1 { "" } else { "s" },
    )
}
