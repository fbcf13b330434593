//! `--format human`: miette's rendering with the source snippet, a label on the exact span, the
//! notes as help, and a link to the rule doc. Colour only when writing to a terminal.

use std::io::Write;
use std::sync::Arc;

use miette::{
    GraphicalReportHandler, GraphicalTheme, LabeledSpan, MietteError, MietteSpanContents,
    NamedSource, SourceCode, SourceSpan, SpanContents,
};

use super::{doc_url, End, Format, Run};
use crate::diagnostic::{Provenance, Severity};
use crate::lint::{FileReport, Finding};
use crate::source::Source;
use rayon::prelude::*;

mod plain;

/// Lets miette read the source without copying it per finding. The first flag says whether the
/// text has a carriage return that is not part of `\r\n` (miette counts it as a line break; the
/// line index does not); the second that only the finding's own line may be shown.
#[derive(Clone)]
struct Text(Arc<Source>, bool, bool);

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
        // miette finds a span's line by scanning from the first byte, once per finding: on a
        // 10,000-document stream that was minutes. Scan from a line shortly before the span
        // instead, and shift the answer by what lies before that line.
        let src = &self.0;
        let text = src.text.as_bytes();
        // The snippet (miette also reads the finding's own position, with no context) is the
        // finding's line alone, as if the file had no other.
        if self.2 && (before, after) != (0, 0) && span.offset() <= text.len() {
            let line = src.line_index(span.offset());
            let whole = src.line_range(line);
            if whole.len() > LONG_LINE {
                return Ok(Box::new(excerpt(&src.text, whole, line, span, before)));
            }
            return Ok(Box::new(MietteSpanContents::new(
                &text[whole.clone()],
                (whole.start, whole.len()).into(),
                line,
                0,
                line,
            )));
        }
        if self.1 || span.offset() > text.len() {
            return text.read_span(span, before, after);
        }
        let line = src.line_index(span.offset());
        let whole = src.line_range(line);
        if whole.len() > LONG_LINE {
            return Ok(Box::new(excerpt(&src.text, whole, line, span, before)));
        }
        let first = line.saturating_sub(before + 1);
        let from = src.line_range(first).start;
        let local = SourceSpan::new((span.offset() - from).into(), span.len());
        let c = text[from..].read_span(&local, before, after)?;
        let (data, at) = (c.data(), c.span());
        Ok(Box::new(MietteSpanContents::new(
            data,
            (at.offset() + from, at.len()).into(),
            c.line() + first,
            c.column(),
            c.line_count() + first,
        )))
    }
}

/// The lines miette shows around a label with one line of context, read from the line index:
/// the line before the label's (if any), the label's, and the one after (if any), with its line
/// feed.
struct Around<'a> {
    data: &'a str,
    /// The line `data` starts on, and the label's line and column (bytes), all from 0.
    first: usize,
    line: usize,
    column: usize,
}

impl Text {
    /// [`Around`] a label at `start`, `len` bytes long, as miette's `read_span` with one line of
    /// context reads it; `None` where its reading is not this simple (a label that reaches the
    /// end of its line, a lone carriage return, a finding shown without its neighbours).
    fn around(&self, start: usize, len: usize) -> Option<Around<'_>> {
        let src = &self.0;
        if self.1 || self.2 || start > src.text.len() {
            return None;
        }
        let line = src.line_index(start);
        let own = src.line_range(line);
        if start + len.max(1) > own.end {
            return None;
        }
        let first = line.saturating_sub(1);
        let offset = src.line_range(first).start;
        // Up to the start of the line after next: the end of the text when there is none.
        let end = src.line_range(line + 2).start;
        Some(Around {
            data: &src.text[offset..end],
            first,
            line,
            column: start - own.start,
        })
    }
}

/// Lines longer than this (minified JSON, one-line flow YAML) are shown as an excerpt around the
/// finding: the renderer pads to the column it underlines, which it cannot beyond 65,535, and a
/// megabyte line printed per finding helps nobody.
const LONG_LINE: usize = 240;
/// Bytes shown on each side of a finding in such an excerpt, and the longest label drawn there.
const EXCERPT_SIDE: usize = 60;

/// The part of a long line around `span`, without context lines, as miette would read it if the
/// line were that short. The label is clamped by [`build`] so that it ends inside the excerpt.
fn excerpt<'a>(
    text: &'a str,
    line_range: std::ops::Range<usize>,
    line: usize,
    span: &SourceSpan,
    before: usize,
) -> MietteSpanContents<'a> {
    use crate::text::floor_char_boundary;
    let at = span.offset();
    let from = floor_char_boundary(text, at.saturating_sub(EXCERPT_SIDE).max(line_range.start));
    let mut to = (at + span.len() + EXCERPT_SIDE).min(line_range.end);
    while !text.is_char_boundary(to) {
        to += 1;
    }
    // miette reads the finding's own position with no context lines: the data starts at the
    // span and the column is the span's, in bytes; with context, the data starts a "line".
    let (start, column) = if before == 0 {
        (at, at - line_range.start)
    } else {
        (from, 0)
    };
    MietteSpanContents::new(
        &text.as_bytes()[start..to],
        (start, to - start).into(),
        line,
        column,
        line,
    )
}

#[derive(Debug)]
struct Report {
    message: String,
    code: String,
    severity: miette::Severity,
    help: Option<String>,
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
    /// Print the closing lines: the rule docs and counts, or that nothing was found, and the
    /// inputs left unread (off with `--quiet`).
    pub summary: bool,
}

/// The human format: each finding drawn by miette with its excerpt, grouped under a line per
/// file, then the rule docs and the counts.
pub struct Human {
    handler: GraphicalReportHandler,
    /// Without colour, most findings are written by [`plain`], as miette would draw them.
    color: bool,
    wrapping: plain::Wrapping,
    summary: bool,
}

impl Human {
    pub fn new(opts: &Options) -> Human {
        let theme = if opts.color {
            GraphicalTheme::unicode()
        } else {
            GraphicalTheme::unicode_nocolor()
        };
        Human {
            handler: GraphicalReportHandler::new_themed(theme)
                .with_width(opts.width)
                .with_links(false)
                .with_context_lines(1),
            color: opts.color,
            wrapping: plain::Wrapping::new(opts.width),
            summary: opts.summary,
        }
    }
}

impl Format for Human {
    type State = ();
    type Piece = std::io::Result<String>;

    fn begin(&self, _: &mut dyn Write) -> std::io::Result<()> {
        Ok(())
    }

    fn render(&self, r: &FileReport) -> std::io::Result<String> {
        if r.findings.is_empty() {
            return Ok(String::new());
        }
        let shown = r
            .source
            .as_ref()
            .filter(|s| looks_like_manifest(&s.text))
            .map(|s| Arc::new(Shown::new(s)));
        let n = r.findings.len();
        // Findings come grouped by file: a line names each file before its findings.
        let mut out = format!("── {} ({n} problem{})\n", r.name, plural(n));
        // Each finding is rendered on its own (miette's wrapping of the notes is most of a
        // run's time): a file with many, such as a long stream, a chunk of them on each thread.
        let draw = |out: &mut String, findings: &[Finding]| {
            findings
                .iter()
                .try_for_each(|f| render(self, r, shown.as_ref(), f, out))
                .map_err(std::io::Error::other)
        };
        if n >= RENDER_PARALLEL {
            let parts: Vec<String> = r
                .findings
                .par_chunks(RENDER_PARALLEL)
                .map(|chunk| {
                    let mut part = String::new();
                    draw(&mut part, chunk).map(|()| part)
                })
                .collect::<std::io::Result<_>>()?;
            out.reserve(parts.iter().map(String::len).sum());
            parts.iter().for_each(|part| out.push_str(part));
        } else {
            draw(&mut out, &r.findings)?;
        }
        Ok(out)
    }

    fn push(
        &self,
        _: &mut (),
        piece: std::io::Result<String>,
        out: &mut dyn Write,
    ) -> std::io::Result<()> {
        out.write_all(piece?.as_bytes())
    }

    fn finish(&self, _: (), end: &End, out: &mut dyn Write) -> std::io::Result<()> {
        if !self.summary {
            return Ok(());
        }
        if end.tally.findings() > 0 {
            // Each rule's documentation once per run, not under every finding.
            writeln!(out, "rule docs:")?;
            for &c in end.tally.by_code.keys() {
                writeln!(out, "  {c} {}: {}", c.rule().name, doc_url(c))?;
            }
            writeln!(out, "{}", summary_line(end))?;
        } else if end.errors.is_empty() {
            let files = end.stats.files;
            writeln!(out, "no problems found in {files} file{}", plural(files))?;
        }
        if let Some(line) = super::unread_line(end.errors) {
            writeln!(out, "{line}")?;
        }
        Ok(())
    }
}

pub fn write(run: &Run, opts: &Options, out: &mut dyn Write) -> std::io::Result<()> {
    super::write(Human::new(opts), run, out).map(drop)
}

/// The plural ending of a count's noun: "1 file", "2 files".
pub(super) fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// From how many findings a file's are rendered on every thread.
const RENDER_PARALLEL: usize = 64;

/// A source as its excerpts show it: what acts on a terminal or a CI log (an escape sequence, a
/// lone carriage return) written as an escape, and the shifts that move an offset of the
/// original text into it.
struct Shown {
    text: Text,
    shifts: Vec<(usize, usize)>,
}

impl Shown {
    fn new(src: &Arc<Source>) -> Shown {
        match crate::text::printable_lines_shifted(&src.text) {
            (std::borrow::Cow::Borrowed(_), _) => Shown {
                text: Text(src.clone(), crate::text::has_lone_cr(&src.text), false),
                shifts: Vec::new(),
            },
            (std::borrow::Cow::Owned(t), shifts) => {
                let escaped = Source::from_text(src.origin.clone(), t);
                // A lone carriage return is escaped too, so miette and the line index agree.
                Shown {
                    text: Text(Arc::new(escaped), false, false),
                    shifts,
                }
            }
        }
    }

    /// Where an offset of the original text lies in the shown one.
    fn offset(&self, at: usize) -> usize {
        let k = self.shifts.partition_point(|&(i, _)| i < at);
        at + k.checked_sub(1).map_or(0, |k| self.shifts[k].1)
    }
}

/// Whether a text says anything a Kubernetes manifest says: a file without either word is not
/// one, and nothing of it is quoted (a credentials file or a key reached by mistake must not
/// reach a log).
fn looks_like_manifest(text: &str) -> bool {
    text.contains("apiVersion") || text.contains("kind")
}

/// One finding, appended to `out`.
fn render(
    human: &Human,
    r: &FileReport,
    shown: Option<&Arc<Shown>>,
    f: &Finding,
    out: &mut String,
) -> std::fmt::Result {
    use std::fmt::Write as _;
    let Some(shown) = shown else {
        // Not text (binary, too large), or not a manifest: no snippet to show.
        let d = &f.diagnostic;
        return writeln!(
            out,
            "{}: {} {}:{}:{}: {}",
            d.severity.as_str(),
            d.code,
            r.name,
            f.start.0,
            f.start.1,
            crate::text::printable(&d.message)
        );
    };
    if !human.color {
        let mark = out.len();
        if draw_by_hand(out, &r.name, shown, f, &human.wrapping).is_some() {
            return Ok(());
        }
        out.truncate(mark);
    }
    let report = build(&r.name, shown, f);
    human.handler.render_report(out, &report)
}

/// One finding drawn by [`plain`], appended to `out`; `None` when miette must draw it (`out` then
/// holds a part of it).
fn draw_by_hand(
    out: &mut String,
    name: &str,
    shown: &Shown,
    f: &Finding,
    wrapping: &plain::Wrapping,
) -> Option<()> {
    let (text, start, len) = label(shown, f);
    plain::render(out, name, &text, &f.diagnostic, (start, len), wrapping)
}

fn build(name: &str, shown: &Shown, f: &Finding) -> Report {
    let d = &f.diagnostic;
    let rule = d.code.rule();
    let (src, start, len) = label(shown, f);
    let help: Vec<String> = d.notes.iter().cloned().chain(more_help(d)).collect();
    // Messages and notes quote values of the input.
    let help = help.join("\n");
    Report {
        message: crate::text::printable_lines(&d.message).into_owned(),
        code: format!("{} {}", d.code, rule.name),
        severity: match d.severity {
            Severity::Error => miette::Severity::Error,
            Severity::Warning => miette::Severity::Warning,
            Severity::Info => miette::Severity::Advice,
        },
        help: (!help.is_empty()).then(|| crate::text::printable_lines(&help).into_owned()),
        label: LabeledSpan::new(Some(rule.name.to_string()), start, len),
        source: NamedSource::new(name, src),
    }
}

/// The text a finding is shown in, and its label's start and length there.
fn label(shown: &Shown, f: &Finding) -> (Text, usize, usize) {
    let mut src = shown.text.clone();
    // A document that does not parse may be anything: its offending line alone, no neighbours.
    src.2 = f.diagnostic.code == crate::diagnostic::Code::GK000;
    let range = shown.offset(f.diagnostic.range.start)..shown.offset(f.diagnostic.range.end);
    let mut len = range.end.saturating_sub(range.start);
    // A label that starts or ends on a long line is drawn on its first line only, inside the
    // excerpt that line is shown as.
    let (s, first) = (&src.0, src.0.line_index(range.start.min(src.0.text.len())));
    let long = |line: usize| s.line_range(line).len() > LONG_LINE;
    if !src.1 && (long(first) || long(s.line_index(range.end.min(s.text.len())))) {
        len = len
            .min(EXCERPT_SIDE)
            .min(s.line_range(first).end.saturating_sub(range.start));
    }
    (src, range.start, len)
}

/// The help lines after the notes: where the document was rendered from or came from, and the
/// fix.
fn more_help(d: &crate::diagnostic::Diagnostic) -> Vec<String> {
    let mut help = Vec::new();
    if let Some(t) = &d.source_template {
        help.push(format!("rendered from {t}"));
    }
    match d.provenance.as_deref() {
        Some(Provenance::Cluster(c)) => help.push(format!(
            "in the cluster: {} field {}",
            c.qualified_name(),
            c.path
        )),
        Some(Provenance::Chart(c)) => help.push(format!("in the chart: {}", c.describe())),
        Some(Provenance::Kustomize(k)) => {
            help.push(format!("in the build of {}: {}", k.build, k.describe()))
        }
        None => {}
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
    help
}

/// The closing count: findings by severity, files, documents, containers, what is fixable, and
/// what the Go judgements rest on.
pub fn summary_line(end: &End) -> String {
    let t = end.tally;
    let (e, w, i) = (t.error, t.warning, t.info);
    let fixable = match (t.safe_fixes, t.unsafe_fixes) {
        (0, 0) => String::new(),
        (0, u) => format!("; {u} fixable with `golint-k8s fix --unsafe-fixes`"),
        (s, 0) => format!("; {s} fixable with `golint-k8s fix`"),
        (s, u) => format!("; {s} fixable with `golint-k8s fix` ({u} more with `--unsafe-fixes`)"),
    };
    let stats = &end.stats;
    format!(
        "found {} problem{} ({e} error{}, {w} warning{}, {i} info) in {} file{}, {} document{}, {} container{}{fixable}",
        e + w + i,
        plural(e + w + i),
        plural(e),
        plural(w),
        stats.files,
        plural(stats.files),
        stats.documents,
        plural(stats.documents),
        stats.containers,
        plural(stats.containers),
    ) + &runtime_line(stats)
}

/// What the Go judgements of the run rest on, when some rest on the assumption or found programs
/// that size themselves: a second summary line.
fn runtime_line(stats: &crate::lint::Stats) -> String {
    let mut parts = Vec::new();
    if stats.unknown_runtime > 0 {
        let n = stats.unknown_runtime;
        parts.push(format!(
            "{n} container{} of unknown runtime, {} Go findings reported as info ({}; assume-go: true when every image is Go)",
            plural(n),
            if n == 1 { "its" } else { "their" },
            crate::runtime::SETTLE.replacen("settle it", if n == 1 { "settle it" } else { "settle them" }, 1),
        ));
    }
    let assumed = stats.assumed_go - stats.unknown_runtime.min(stats.assumed_go);
    if assumed > 0 {
        parts.push(format!(
            "{} container{} assumed to run Go because nothing showed {} runtime (declare it with the annotation golint-k8s.io/runtime: go|other, or go-images / non-go-images in .golint-k8s.yaml)",
            assumed,
            plural(assumed),
            if assumed == 1 { "its" } else { "their" },
        ));
    }
    if stats.self_sizing > 0 {
        parts.push(format!(
            "{} Go container{} size{} GOMAXPROCS or GOMEMLIMIT {}",
            stats.self_sizing,
            plural(stats.self_sizing),
            if stats.self_sizing == 1 { "s" } else { "" },
            if stats.self_sizing == 1 {
                "itself"
            } else {
                "themselves"
            },
        ));
    }
    if parts.is_empty() {
        return String::new();
    }
    format!("\n{}; see them with --show-containers", parts.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::Origin;

    /// Every finding the hand-written path draws must be what miette draws, byte for byte; and
    /// it must draw most of them (the rule fixtures, at three widths).
    #[test]
    fn plain_rendering_is_byte_identical_to_miettes() {
        use crate::lint::{lint_source, Selection};
        fn yaml_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
            for e in std::fs::read_dir(dir).unwrap().flatten() {
                let p = e.path();
                if p.is_dir() {
                    yaml_files(&p, out);
                } else if p.extension().is_some_and(|x| x == "yaml" || x == "yml") {
                    out.push(p);
                }
            }
        }
        let mut files = Vec::new();
        yaml_files(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures"),
            &mut files,
        );
        files.sort();
        let reports: Vec<FileReport> = files
            .iter()
            .filter_map(|p| {
                let text = std::fs::read_to_string(p).ok()?;
                let src = Source::from_text(Origin::Stdin(p.display().to_string()), text);
                Some(lint_source(
                    src,
                    &crate::config::Config::default(),
                    &Selection::default(),
                ))
            })
            .collect();
        let (mut by_hand, mut total) = (0, 0);
        for width in [100, 72, 40] {
            let human = Human::new(&Options {
                color: false,
                width,
                summary: false,
            });
            for r in &reports {
                let Some(src) = r.source.as_ref().filter(|s| looks_like_manifest(&s.text)) else {
                    continue;
                };
                let shown = Shown::new(src);
                for f in &r.findings {
                    let report = build(&r.name, &shown, f);
                    let mut theirs = String::new();
                    human.handler.render_report(&mut theirs, &report).unwrap();
                    total += 1;
                    // The run's own wrapping: texts met before come from what it remembers.
                    let mut ours = String::new();
                    if draw_by_hand(&mut ours, &r.name, &shown, f, &human.wrapping).is_some() {
                        assert_eq!(ours, theirs, "{} at width {width}", r.name);
                        by_hand += 1;
                    }
                }
            }
        }
        assert!(total > 1000, "{total}");
        assert!(
            by_hand * 10 > total * 8,
            "{by_hand} of {total} drawn by hand"
        );
    }

    /// Messages and notes wrapped by hand break where textwrap breaks them (through miette): a
    /// few thousand made of words, hyphens, slashes, bars, quotes, brackets and signs, at widths
    /// from 30 to 100 columns.
    #[test]
    fn plain_wrapping_breaks_where_textwrap_breaks() {
        let tokens = [
            "a",
            "word",
            "longer-word",
            "golint-k8s.io/go-version",
            "go|other",
            "1.25+",
            "90",
            "%",
            "(x)",
            "\"1.22\"",
            "it's",
            "--flag",
            "a/b",
            "a/1",
            "https://x.io/y/",
            "+",
            "(",
            ")",
            ":",
            ",",
            ".",
            "=",
            "<",
            ">",
            "x-",
            "-y",
            "GOMAXPROCS/GOMEMLIMIT",
            "#1",
            "a_b",
            "x@y",
            "|",
            "/",
            "500m",
            "(50 ms)",
            "v3.6.9/server",
            ".yaml)",
            ".5",
            "\"460MiB\" (90 %",
            "'a' (b)",
            "x- (y)",
            "(x) (y)",
            "\n",
        ];
        let text = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n";
        let src = Arc::new(Source::from_text(
            Origin::Stdin("x.yaml".into()),
            text.into(),
        ));
        let shown = Shown::new(&src);
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        let mut by_hand = 0;
        for _ in 0..10000 {
            let mut message = String::new();
            for _ in 0..next(40) + 1 {
                message.push_str(tokens[next(tokens.len())]);
                message.push_str([" ", " ", " ", "", "  "][next(5)]);
            }
            let width = 30 + next(71);
            let human = Human::new(&Options {
                color: false,
                width,
                summary: false,
            });
            let mut d = crate::diagnostic::Diagnostic::new(
                crate::diagnostic::Code::GK101,
                Severity::Warning,
                16..25,
                message.trim_start().to_string(),
            );
            // The help as notes, one per line: miette is given them joined.
            let help = message.trim_start().replace('|', " ");
            d.notes = help.split('\n').map(String::from).collect();
            let f = Finding {
                diagnostic: d,
                start: (0, 0),
                end: (0, 0),
                edit_positions: Vec::new(),
            };
            let report = build("x.yaml", &shown, &f);
            let mut theirs = String::new();
            human.handler.render_report(&mut theirs, &report).unwrap();
            let mut ours = String::new();
            let wrapping = plain::Wrapping::new(width);
            if draw_by_hand(&mut ours, "x.yaml", &shown, &f, &wrapping).is_some() {
                assert_eq!(ours, theirs, "{message:?} at width {width}");
                by_hand += 1;
            }
        }
        assert!(by_hand > 1000, "{by_hand}");
    }

    /// Where the line index answers for miette, it answers what miette's own scan does: the
    /// same bytes and line with one line of context, the same line and column without.
    #[test]
    fn lines_around_a_label_equal_miettes_reading() {
        let texts = [
            "a: 1\nb:\n  c: 2\n  d: [x, y]\n\ne: é\n# end\n",
            "a: 1\r\nb:\r\n  c: 2\r\n\r\n  d: 3\r\n",
            "no final newline\nx: y",
            "\n\nx: 1\n\n\n",
            "one line",
            "",
        ];
        let mut answered = 0;
        for t in texts {
            let src = Arc::new(Source::from_text(Origin::Stdin("-".into()), t.to_string()));
            let text = Text(src, crate::text::has_lone_cr(t), false);
            for start in 0..=t.len() {
                for len in [0, 1, 2, 3, 6] {
                    let Some(a) = text.around(start, len) else {
                        continue;
                    };
                    answered += 1;
                    let span = SourceSpan::new(start.into(), len);
                    let wide = t.as_bytes().read_span(&span, 1, 1).unwrap();
                    let at = t.as_bytes().read_span(&span, 0, 0).unwrap();
                    let case = format!("{t:?} at {start}+{len}");
                    assert_eq!(a.data.as_bytes(), wide.data(), "{case}");
                    let offset = a.data.as_ptr() as usize - text.0.text.as_ptr() as usize;
                    assert_eq!(offset, wide.span().offset(), "{case}");
                    assert_eq!(a.first, wide.line(), "{case}");
                    assert_eq!((a.line, a.column), (at.line(), at.column()), "{case}");
                }
            }
        }
        assert!(answered > 100, "{answered}");
    }

    /// Reading from a line near the span must give miette exactly what its scan from the first
    /// byte gives: the same bytes, span, line, column and line count.
    #[test]
    fn windowed_read_span_equals_miettes_own() {
        let texts = [
            "a: 1\nb:\n  c: 2\n  d: [x, y]\n\ne: é\n# end\n",
            "a: 1\r\nb:\r\n  c: 2\r\n\r\n  d: 3\r\n",
            "no final newline\nx: y",
            "lone\rcarriage\nreturn: 1\n",
        ];
        for t in texts {
            let src = Arc::new(Source::from_text(Origin::Stdin("-".into()), t.to_string()));
            let text = Text(src, crate::text::has_lone_cr(t), false);
            for start in 0..=t.len() {
                for len in [0, 1, 3] {
                    let span = SourceSpan::new(start.into(), len.min(t.len() - start));
                    for (before, after) in [(0, 0), (1, 1), (2, 3)] {
                        let ours = text.read_span(&span, before, after);
                        let theirs = t.as_bytes().read_span(&span, before, after);
                        match (ours, theirs) {
                            (Ok(a), Ok(b)) => {
                                assert_eq!(a.data(), b.data(), "{t:?} {span:?}");
                                assert_eq!(a.span(), b.span(), "{t:?} {span:?}");
                                assert_eq!(a.line(), b.line(), "{t:?} {span:?}");
                                assert_eq!(a.column(), b.column(), "{t:?} {span:?}");
                                assert_eq!(a.line_count(), b.line_count(), "{t:?} {span:?}");
                            }
                            (Err(_), Err(_)) => {}
                            (a, b) => panic!("{t:?} {span:?}: {:?} vs {:?}", a.is_ok(), b.is_ok()),
                        }
                    }
                }
            }
        }
    }
}
