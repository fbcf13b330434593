//! `--format json`: the stable machine contract of interface.md. Other tools consume it: fields
//! are only ever added, never renamed or removed.

use std::io::Write;

use serde::Serialize;

use super::Run;
use crate::diagnostic::{Applicability, Severity};
use crate::lint::{FileReport, Finding, Stats};
use crate::rules::registry;

// The document: {"version": 1, "tool": {"name", "version"}, "findings": [...], "summary": {...},
// and from `fix` only, "fixed": [...]}. Written by [`Stream`].

#[derive(Serialize, Default)]
struct Summary {
    files: usize,
    documents: usize,
    objects: usize,
    containers: usize,
    findings: usize,
    by_severity: BySeverity,
    fixable: Fixable,
}

#[derive(Serialize, Default)]
struct BySeverity {
    error: usize,
    warning: usize,
    info: usize,
}

#[derive(Serialize, Default)]
struct Fixable {
    safe: usize,
    #[serde(rename = "unsafe")]
    unsafe_: usize,
}

/// One file's findings as JSON array elements (each preceded by `,`), with the counts the summary
/// needs. Built where the file is linted, so that a run streams: the text of each finding is
/// produced in parallel, and no finding is kept once it is written.
pub struct Fragment {
    /// The elements' bytes, in order: one piece, or one per chunk of a large file's findings
    /// (written one after the other rather than joined, which copied a whole stream's output).
    parts: Vec<Vec<u8>>,
    findings: usize,
    by_severity: BySeverity,
    fixable: Fixable,
}

impl Fragment {
    pub fn render(r: &FileReport) -> Fragment {
        let mut f = Fragment {
            parts: Vec::new(),
            findings: r.findings.len(),
            by_severity: BySeverity::default(),
            fixable: Fixable::default(),
        };
        for finding in &r.findings {
            let d = &finding.diagnostic;
            match d.severity {
                Severity::Error => f.by_severity.error += 1,
                Severity::Warning => f.by_severity.warning += 1,
                Severity::Info => f.by_severity.info += 1,
            }
            match d.fix.as_ref().map(|x| x.applicability) {
                Some(Applicability::Safe) => f.fixable.safe += 1,
                Some(Applicability::Unsafe) => f.fixable.unsafe_ += 1,
                None => {}
            }
        }
        // The file's name is the same in every finding: escaped once.
        let mut name = Vec::with_capacity(r.name.len() + 2);
        string(&mut name, &r.name);
        let file = name.as_slice();
        if r.findings.len() >= crate::lint::PARALLEL_FINDINGS {
            // One large stream's findings are most of the output: rendered in parallel chunks.
            use rayon::prelude::*;
            f.parts = r
                .findings
                .par_chunks(256)
                .map(|chunk| elements(file, chunk))
                .collect();
        } else if !r.findings.is_empty() {
            f.parts.push(elements(file, &r.findings));
        }
        f
    }
}

/// Findings as elements of the findings array, each after the one before it.
fn elements(file: &[u8], findings: &[Finding]) -> Vec<u8> {
    let mut out = Vec::with_capacity(findings.len() * 1024);
    let mut memo = Memo::default();
    for f in findings {
        out.extend_from_slice(b",\n    ");
        write_finding(&mut out, file, f, &mut memo);
    }
    out
}

/// Where the previous finding in the same buffer wrote its notes, object and container. The
/// findings of one container follow each other and share these (the Go note is the longest
/// text of a finding), so an equal value is copied from there instead of escaped again.
#[derive(Default)]
struct Memo<'f> {
    notes: Option<(&'f [String], std::ops::Range<usize>)>,
    object: Option<(
        &'f Option<crate::diagnostic::ObjectRef>,
        std::ops::Range<usize>,
    )>,
    container: Option<(&'f Option<String>, std::ops::Range<usize>)>,
}

/// Write `value` with `write`, or copy what the previous finding wrote for an equal value.
fn memoized<'f, T: PartialEq + ?Sized>(
    out: &mut Vec<u8>,
    slot: &mut Option<(&'f T, std::ops::Range<usize>)>,
    value: &'f T,
    write: impl FnOnce(&mut Vec<u8>),
) {
    let start = out.len();
    match slot {
        Some((prev, range)) if *prev == value => out.extend_from_within(range.clone()),
        _ => write(out),
    }
    *slot = Some((value, start..out.len()));
}

/// One finding as serde_json's pretty printer lays it out two levels deep, written directly:
/// it is most of the output, and the generic serializer spent more on the layout calls and the
/// byte-by-byte escaping than on anything else in the file's JSON. The field order is the contract
/// of interface.md; a unit test below holds the bytes to serde's. `file` is the file's name
/// already written as a JSON string.
fn write_finding<'f>(out: &mut Vec<u8>, file: &[u8], f: &'f Finding, memo: &mut Memo<'f>) {
    let d = &f.diagnostic;
    out.push(b'{');
    field(out, 6, true, "code");
    word(out, d.code);
    field(out, 6, false, "rule");
    word(out, registry::by_code(d.code).name);
    field(out, 6, false, "severity");
    word(out, d.severity.as_str());
    field(out, 6, false, "message");
    string(out, &d.message);
    field(out, 6, false, "notes");
    memoized(out, &mut memo.notes, d.notes.as_slice(), |out| {
        if d.notes.is_empty() {
            out.extend_from_slice(b"[]");
        } else {
            out.push(b'[');
            for (i, n) in d.notes.iter().enumerate() {
                out.extend_from_slice(&b",\n        "[usize::from(i == 0)..]);
                string(out, n);
            }
            out.extend_from_slice(b"\n      ]");
        }
    });
    field(out, 6, false, "file");
    out.extend_from_slice(file);
    numbers(out, 6, false, [("line", f.start.0), ("column", f.start.1)]);
    numbers(
        out,
        6,
        false,
        [("end_line", f.end.0), ("end_column", f.end.1)],
    );
    numbers(out, 6, false, [("document", d.document)]);
    field(out, 6, false, "object");
    memoized(out, &mut memo.object, &d.object, |out| match &d.object {
        None => out.extend_from_slice(b"null"),
        Some(o) => {
            out.push(b'{');
            field(out, 8, true, "api_version");
            opt_string(out, o.api_version.as_deref());
            field(out, 8, false, "kind");
            opt_string(out, o.kind.as_deref());
            field(out, 8, false, "namespace");
            opt_string(out, o.namespace.as_deref());
            field(out, 8, false, "name");
            opt_string(out, o.name.as_deref());
            out.extend_from_slice(b"\n      }");
        }
    });
    field(out, 6, false, "container");
    memoized(out, &mut memo.container, &d.container, |out| {
        opt_string(out, d.container.as_deref())
    });
    field(out, 6, false, "source_template");
    opt_string(out, d.source_template.as_deref());
    // Present only in the modes that produce them: the Helm and cluster objects go through serde.
    if let Some(chart) = &d.chart {
        field(out, 6, false, "chart");
        pretty_at(out, chart, 3);
    }
    if let Some(cluster) = &d.cluster {
        field(out, 6, false, "object_ref");
        pretty_at(out, cluster, 3);
    }
    field(out, 6, false, "fix");
    match &d.fix {
        None => out.extend_from_slice(b"null"),
        Some(x) => {
            out.push(b'{');
            field(out, 8, true, "applicability");
            word(out, x.applicability.as_str());
            field(out, 8, false, "title");
            string(out, &x.title);
            field(out, 8, false, "edits");
            if x.edits.is_empty() {
                out.extend_from_slice(b"[]");
            } else {
                out.push(b'[');
                for (i, (e, (s, en))) in x.edits.iter().zip(&f.edit_positions).enumerate() {
                    out.extend_from_slice(&b",\n          {"[usize::from(i == 0)..]);
                    numbers(out, 12, true, [("line", s.0), ("column", s.1)]);
                    numbers(out, 12, false, [("end_line", en.0), ("end_column", en.1)]);
                    field(out, 12, false, "text");
                    string(out, &e.text);
                    out.extend_from_slice(b"\n          }");
                }
                out.extend_from_slice(b"\n        ]");
            }
            out.extend_from_slice(b"\n      }");
        }
    }
    out.extend_from_slice(b"\n    }");
}

/// A key of an object whose keys are `indent` spaces in: the comma after the value before it
/// (unless it is the first), the line break and indentation, and `"name": `.
// Always inlined: every call has constant arguments and becomes three copies; as a call it cost
// 2% of a lint run's instructions.
#[inline(always)]
fn field(out: &mut Vec<u8>, indent: usize, first: bool, name: &str) {
    const SPACES: &[u8] = b",\n                ";
    out.extend_from_slice(&SPACES[usize::from(first)..2 + indent]);
    out.push(b'"');
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b"\": ");
}

/// Keys with whole-number values, in order.
fn numbers<const N: usize>(
    out: &mut Vec<u8>,
    indent: usize,
    first: bool,
    pairs: [(&str, usize); N],
) {
    for (i, (name, n)) in pairs.into_iter().enumerate() {
        field(out, indent, first && i == 0, name);
        number(out, n);
    }
}

/// `value` as serde_json's pretty printer writes it `level` levels deep in a document (the
/// first line without indentation, the closing bracket at the level's): to render the pieces of
/// one large document separately.
pub(crate) fn pretty_at<T: Serialize>(out: &mut Vec<u8>, value: &T, level: usize) {
    // Writing to a Vec cannot fail, and these types always serialize.
    let _ = value.serialize(&mut serde_json::Serializer::with_formatter(
        &mut *out,
        Pretty::at(level),
    ));
}

/// One of our own identifiers (a code, a rule name, a severity): nothing in them needs escaping.
fn word(out: &mut Vec<u8>, w: &'static str) {
    debug_assert!(w.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'));
    out.push(b'"');
    out.extend_from_slice(w.as_bytes());
    out.push(b'"');
}

fn number(out: &mut Vec<u8>, n: usize) {
    out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
}

fn opt_string(out: &mut Vec<u8>, s: Option<&str>) {
    match s {
        Some(s) => string(out, s),
        None => out.extend_from_slice(b"null"),
    }
}

/// A JSON string as serde_json escapes it: `"` and `\`, the short escapes for backspace, form
/// feed, newline, carriage return and tab, `\u00XX` for the other control characters, and
/// everything else (DEL and non-ASCII included) as it is.
fn string(out: &mut Vec<u8>, s: &str) {
    let bytes = s.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    // Most strings need no escape; this test has no early exit, so it vectorizes.
    if !bytes.iter().fold(false, |any, &b| any | needs_escape(b)) {
        out.extend_from_slice(bytes);
        out.push(b'"');
        return;
    }
    // The rest (one in seven: messages that quote a value, inserted lines) are skipped eight
    // bytes at a time up to each escape; a byte loop over them was a third of the rendering.
    let mut from = 0;
    let mut i = 0;
    while i < bytes.len() {
        if let Some(chunk) = bytes.get(i..i + 8) {
            if !any_needs_escape(u64::from_le_bytes(chunk.try_into().unwrap_or([0; 8]))) {
                i += 8;
                continue;
            }
        }
        let b = bytes[i];
        if needs_escape(b) {
            out.extend_from_slice(&bytes[from..i]);
            from = i + 1;
            escape(out, b);
        }
        i += 1;
    }
    out.extend_from_slice(&bytes[from..]);
    out.push(b'"');
}

fn needs_escape(b: u8) -> bool {
    b < 0x20 || b == b'"' || b == b'\\'
}

/// Whether any of the eight bytes of `x` needs an escape. Each test is the usual "some byte is
/// below n" bit trick (exact for n <= 0x80): below 0x20, or zero after xor with `"` or `\`.
fn any_needs_escape(x: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let below = |v: u64, n: u8| v.wrapping_sub(ONES * u64::from(n)) & !v;
    let quote = x ^ (ONES * u64::from(b'"'));
    let backslash = x ^ (ONES * u64::from(b'\\'));
    (below(x, 0x20) | below(quote, 1) | below(backslash, 1)) & HIGH != 0
}

fn escape(out: &mut Vec<u8>, b: u8) {
    match b {
        b'"' => out.extend_from_slice(b"\\\""),
        b'\\' => out.extend_from_slice(b"\\\\"),
        b'\x08' => out.extend_from_slice(b"\\b"),
        b'\x0c' => out.extend_from_slice(b"\\f"),
        b'\n' => out.extend_from_slice(b"\\n"),
        b'\r' => out.extend_from_slice(b"\\r"),
        b'\t' => out.extend_from_slice(b"\\t"),
        _ => {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.extend_from_slice(b"\\u00");
            out.push(HEX[usize::from(b >> 4)]);
            out.push(HEX[usize::from(b & 0xf)]);
        }
    }
}

/// The JSON document written piece by piece: the head, each file's [`Fragment`] in file order,
/// then the summary. The bytes are those of one pretty-printed document.
pub struct Stream {
    summary: Summary,
}

impl Stream {
    pub fn begin(out: &mut dyn Write) -> std::io::Result<Stream> {
        write!(
            out,
            "{{\n  \"version\": 1,\n  \"tool\": {{\n    \"name\": \"golint-k8s\",\n    \"version\": \"{}\"\n  }},\n  \"findings\": [",
            env!("CARGO_PKG_VERSION")
        )?;
        Ok(Stream {
            summary: Summary::default(),
        })
    }

    pub fn push(&mut self, out: &mut dyn Write, f: &Fragment) -> std::io::Result<()> {
        for (i, part) in f.parts.iter().enumerate() {
            // The first element of the array has no comma before it.
            let skip = usize::from(i == 0 && self.summary.findings == 0);
            out.write_all(part.get(skip..).unwrap_or_default())?;
        }
        let s = &mut self.summary;
        s.findings += f.findings;
        s.by_severity.error += f.by_severity.error;
        s.by_severity.warning += f.by_severity.warning;
        s.by_severity.info += f.by_severity.info;
        s.fixable.safe += f.fixable.safe;
        s.fixable.unsafe_ += f.fixable.unsafe_;
        Ok(())
    }

    pub fn finish(
        mut self,
        out: &mut dyn Write,
        stats: Stats,
        fixed: Option<&[super::FixedOut]>,
    ) -> std::io::Result<()> {
        if self.summary.findings > 0 {
            out.write_all(b"\n  ")?;
        }
        out.write_all(b"],\n  \"summary\": ")?;
        self.summary.files = stats.files;
        self.summary.documents = stats.documents;
        self.summary.objects = stats.objects;
        self.summary.containers = stats.containers;
        let mut tail = Vec::new();
        let _ = self
            .summary
            .serialize(&mut serde_json::Serializer::with_formatter(
                &mut tail,
                Pretty::at(1),
            ));
        if let Some(fixed) = fixed {
            tail.extend_from_slice(b",\n  \"fixed\": ");
            let _ = fixed.serialize(&mut serde_json::Serializer::with_formatter(
                &mut tail,
                Pretty::at(1),
            ));
        }
        out.write_all(&tail)?;
        out.write_all(b"\n}\n")
    }
}

pub fn write(run: &Run, out: &mut dyn Write) -> std::io::Result<()> {
    let mut stream = Stream::begin(out)?;
    for r in run.reports {
        stream.push(out, &Fragment::render(r))?;
    }
    stream.finish(out, run.stats, run.fixed)
}

/// serde_json's pretty layout (two spaces), starting `level` levels deep, so that a value can be
/// written inside a document that is being written by hand.
struct Pretty {
    level: usize,
    has_value: bool,
}

impl Pretty {
    fn at(level: usize) -> Pretty {
        Pretty {
            level,
            has_value: false,
        }
    }

    /// A line break and the indentation of the current level, in one write.
    fn indent<W: ?Sized + Write>(&self, w: &mut W, comma: bool) -> std::io::Result<()> {
        const BREAK: &[u8] = b",\n                                                                ";
        let from = usize::from(!comma);
        match BREAK.get(from..2 + 2 * self.level) {
            Some(s) => w.write_all(s),
            None => {
                w.write_all(&BREAK[from..2])?;
                (0..self.level).try_for_each(|_| w.write_all(b"  "))
            }
        }
    }

    fn newline<W: ?Sized + Write>(&self, w: &mut W, first: bool) -> std::io::Result<()> {
        self.indent(w, !first)
    }

    fn close<W: ?Sized + Write>(&mut self, w: &mut W, bracket: &[u8]) -> std::io::Result<()> {
        self.level -= 1;
        if self.has_value {
            self.indent(w, false)?;
        }
        w.write_all(bracket)
    }
}

impl serde_json::ser::Formatter for Pretty {
    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.level += 1;
        self.has_value = false;
        w.write_all(b"[")
    }

    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.close(w, b"]")
    }

    fn begin_array_value<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.newline(w, first)
    }

    fn end_array_value<W: ?Sized + Write>(&mut self, _w: &mut W) -> std::io::Result<()> {
        self.has_value = true;
        Ok(())
    }

    fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.level += 1;
        self.has_value = false;
        w.write_all(b"{")
    }

    fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.close(w, b"}")
    }

    fn begin_object_key<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.newline(w, first)
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        w.write_all(b": ")
    }

    fn end_object_value<W: ?Sized + Write>(&mut self, _w: &mut W) -> std::io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostic::{ChartOrigin, ClusterRef, Diagnostic, Edit, Fix, ObjectRef};

    /// The finding as the generic serializer writes it: the reference for `write_finding`.
    #[derive(Serialize)]
    struct FindingOut<'a> {
        code: &'static str,
        rule: &'static str,
        severity: Severity,
        message: &'a str,
        notes: &'a [String],
        file: &'a str,
        line: usize,
        column: usize,
        end_line: usize,
        end_column: usize,
        document: usize,
        object: Option<&'a ObjectRef>,
        container: Option<&'a str>,
        source_template: Option<&'a str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        chart: Option<&'a ChartOrigin>,
        #[serde(skip_serializing_if = "Option::is_none")]
        object_ref: Option<&'a ClusterRef>,
        fix: Option<FixOut<'a>>,
    }

    #[derive(Serialize)]
    struct FixOut<'a> {
        applicability: Applicability,
        title: &'a str,
        edits: Vec<EditOut>,
    }

    #[derive(Serialize)]
    struct EditOut {
        line: usize,
        column: usize,
        end_line: usize,
        end_column: usize,
        text: String,
    }

    fn by_serde(file: &str, f: &Finding) -> Vec<u8> {
        let d = &f.diagnostic;
        let out = FindingOut {
            code: d.code,
            rule: registry::by_code(d.code).name,
            severity: d.severity,
            message: &d.message,
            notes: &d.notes,
            file,
            line: f.start.0,
            column: f.start.1,
            end_line: f.end.0,
            end_column: f.end.1,
            document: d.document,
            object: d.object.as_ref(),
            container: d.container.as_deref(),
            source_template: d.source_template.as_deref(),
            chart: d.chart.as_ref(),
            object_ref: d.cluster.as_ref(),
            fix: d.fix.as_ref().map(|x| FixOut {
                applicability: x.applicability,
                title: &x.title,
                edits: x
                    .edits
                    .iter()
                    .zip(&f.edit_positions)
                    .map(|(e, (s, en))| EditOut {
                        line: s.0,
                        column: s.1,
                        end_line: en.0,
                        end_column: en.1,
                        text: e.text.clone(),
                    })
                    .collect(),
            }),
        };
        let mut bytes = Vec::new();
        out.serialize(&mut serde_json::Serializer::with_formatter(
            &mut bytes,
            Pretty::at(2),
        ))
        .unwrap();
        bytes
    }

    #[test]
    fn strings_escape_like_serde_wherever_the_byte_falls() {
        // The fast path tests eight bytes at a time, so every escape class is tried at every
        // place in and around a word, beside bytes that are near the tested ranges.
        let specials: Vec<char> = (0u8..0x80)
            .map(char::from)
            .chain("é€😀\u{2028}".chars())
            .collect();
        for len in 0..20 {
            for at in 0..len {
                for &c in &specials {
                    for fill in [' ', '!', '#', '[', ']', 'a', '\u{7f}', 'é'] {
                        let mut text: String = std::iter::repeat_n(fill, len).collect();
                        let byte = text.char_indices().nth(at).map_or(text.len(), |(i, _)| i);
                        text.insert(byte, c);
                        let mut ours = Vec::new();
                        string(&mut ours, &text);
                        let reference = serde_json::to_string(&text).unwrap();
                        assert_eq!(String::from_utf8(ours).unwrap(), reference, "{text:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn hand_written_finding_is_byte_identical_to_serde() {
        // Every character class the escaping distinguishes, in one string.
        let all: String = (0u8..0x80)
            .map(char::from)
            .chain("é€😀\u{2028}".chars())
            .collect();
        let texts = [
            "",
            "plain",
            "a \"quoted\" \\path\\",
            "tab\there\r\nline",
            &all,
        ];
        let mut cases = Vec::new();
        for (i, text) in texts.iter().enumerate() {
            let mut d = Diagnostic::new(
                ["GK101", "GK203", "GK000", "GK001", "GK401"][i],
                [Severity::Error, Severity::Warning, Severity::Info][i % 3],
                0..1,
                format!("message {text}"),
            );
            d.notes = (0..i).map(|n| format!("note {n} {text}")).collect();
            d.document = i * 7;
            if i % 2 == 1 {
                d.object = Some(ObjectRef {
                    api_version: Some("apps/v1".into()),
                    kind: Some(text.to_string()),
                    namespace: None,
                    name: Some("api".into()),
                });
                d.container = Some(text.to_string());
                d.source_template = Some("chart/templates/deployment.yaml".into());
            }
            if i == 2 {
                d.chart = Some(ChartOrigin {
                    file: "templates/d.yaml".into(),
                    line: Some(12),
                    values_key: Some(text.to_string()),
                    unmapped: None,
                });
            }
            if i == 3 {
                d.cluster = Some(ClusterRef {
                    kind: "Deployment".into(),
                    namespace: Some("payments".into()),
                    name: "api".into(),
                    container: None,
                    path: "spec.template.spec.containers[0].env".into(),
                });
            }
            let edits: Vec<Edit> = (0..i)
                .map(|n| Edit {
                    range: n..n,
                    text: format!("{text}{n}\n"),
                })
                .collect();
            let positions = (0..i).map(|n| ((n + 1, 2), (n + 1, 300 + n))).collect();
            if i != 1 {
                d.fix = Some(Fix {
                    applicability: [Applicability::Safe, Applicability::Unsafe][i % 2],
                    title: format!("title {text}"),
                    edits,
                });
            }
            cases.push(Finding {
                diagnostic: d,
                start: (i + 1, 1),
                end: (i + 10_000, 12_345_678),
                edit_positions: positions,
            });
        }
        let mut file = Vec::new();
        string(&mut file, "dir/a \"b\".yaml");
        // Each case alone, then all of them in one buffer, each twice in a row (the second
        // copied from the first where equal) and interleaved, so that equal and different
        // neighbours both occur.
        for f in &cases {
            let mut mine = Vec::new();
            write_finding(&mut mine, &file, f, &mut Memo::default());
            let want = by_serde("dir/a \"b\".yaml", f);
            assert_eq!(
                String::from_utf8(mine).unwrap(),
                String::from_utf8(want).unwrap()
            );
        }
        let sequence: Vec<&Finding> = cases
            .iter()
            .flat_map(|f| [f, f])
            .chain(cases.iter().rev())
            .chain(cases.iter())
            .collect();
        let mut memo = Memo::default();
        let mut mine = Vec::new();
        let mut want = Vec::new();
        for f in sequence {
            write_finding(&mut mine, &file, f, &mut memo);
            want.extend(by_serde("dir/a \"b\".yaml", f));
        }
        assert_eq!(
            String::from_utf8(mine).unwrap(),
            String::from_utf8(want).unwrap()
        );
    }
}
