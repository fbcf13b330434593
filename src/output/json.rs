//! `--format json`: the stable machine contract (docs/output.md). Other tools consume it:
//! fields are only ever added, never renamed or removed.

use std::io::Write;

use serde::Serialize;

use super::{End, Format, Run};
use crate::diagnostic::{registry, Code};
use crate::diagnostic::{Provenance, Severity};
use crate::lint::{FileReport, Finding};

// The document: {"version": 1, "tool": {"name", "version"}, "findings": [...], "summary": {...},
// and from `fix` only, "fixed": [...]}. Written by [`Stream`].

#[derive(Serialize, Default)]
struct Summary {
    files: usize,
    documents: usize,
    objects: usize,
    containers: usize,
    /// Containers judged Go only by `assume-go`, and Go containers that size GOMAXPROCS or
    /// GOMEMLIMIT themselves.
    assumed_go_containers: usize,
    /// Of the assumed, those whose Go findings were kept below the gate (`assume-go` unset).
    unknown_runtime_containers: usize,
    self_sizing_containers: usize,
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

/// One file's findings as JSON array elements (each preceded by `,`). Built where the file is
/// linted, so that a run streams: the text of each finding is produced in parallel, and no
/// finding is kept once it is written.
pub struct Fragment {
    /// The elements' bytes, in order: one piece, or one per chunk of a large file's findings
    /// (written one after the other rather than joined, which copied a whole stream's output).
    parts: Vec<Vec<u8>>,
}

impl Fragment {
    /// Elements rendered by another format whose findings are array elements too (SARIF's
    /// results), each preceded by `,`, written by [`push_all`] as these are.
    pub(crate) fn of(parts: Vec<Vec<u8>>) -> Fragment {
        Fragment { parts }
    }

    pub fn render(r: &FileReport) -> Fragment {
        let mut f = Fragment { parts: Vec::new() };
        // The file's name is the same in every finding: escaped once.
        let mut name = Vec::with_capacity(r.name.len() + 2);
        string(&mut name, &r.name);
        let file = name.as_slice();
        if r.findings.len() >= crate::diagnostic::PARALLEL_FINDINGS {
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
    let mut out = Vec::with_capacity(findings.iter().map(|f| size_hint(file, f)).sum());
    let mut memo = Memo::default();
    for f in findings {
        out.extend_from_slice(b",\n    ");
        write_finding(&mut out, file, f, &mut memo);
    }
    out
}

/// About how many bytes [`write_finding`] writes for `f`: its fixed layout and its texts. Close
/// enough that the buffer of a file's findings is allocated once (a flat kilobyte a finding was
/// short of most, and growing the buffer copied it over and over).
fn size_hint(file: &[u8], f: &Finding) -> usize {
    let d = &f.diagnostic;
    let opt = |s: &Option<String>| s.as_ref().map_or(4, |s| s.len() + 2);
    let object = d.object.as_ref().map_or(4, |o| {
        120 + opt(&o.api_version) + opt(&o.kind) + opt(&o.namespace) + opt(&o.name)
    });
    let notes: usize = d.notes.iter().map(|n| n.len() + 12).sum();
    let fix = d.fix.as_ref().map_or(4, |x| {
        let edits: usize = x.edits.iter().map(|e| e.text.len() + 160).sum();
        100 + x.title.len() + edits
    });
    let helm = usize::from(d.provenance.is_some()) * 512;
    440 + file.len()
        + d.message.len()
        + notes
        + object
        + d.container.as_ref().map_or(4, |c| c.len() + 2)
        + d.source_template.as_ref().map_or(4, |s| s.len() + 2)
        + d.runtime.as_ref().map_or(0, |r| {
            300 + r.evidence.len()
                + r.go_version_evidence.as_ref().map_or(0, String::len)
                + r.sizes_gomaxprocs.as_ref().map_or(0, String::len)
                + r.sizes_gomemlimit.as_ref().map_or(0, String::len)
        })
        + fix
        + helm
}

/// Where the previous finding in the same buffer wrote its notes, object and container. The
/// findings of one container follow each other and share these (the Go note is the longest
/// text of a finding), so an equal value is copied from there instead of escaped again.
#[derive(Default)]
struct Memo<'f> {
    notes: Option<(&'f [String], std::ops::Range<usize>)>,
    object: Option<(
        &'f Option<std::sync::Arc<crate::k8s::ObjectRef>>,
        std::ops::Range<usize>,
    )>,
    container: Option<(&'f Option<std::sync::Arc<str>>, std::ops::Range<usize>)>,
    runtime: Option<(
        &'f Option<std::sync::Arc<crate::diagnostic::RuntimeInfo>>,
        std::ops::Range<usize>,
    )>,
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
/// (docs/output.md); a unit test below holds the bytes to serde's. `file` is the file's name
/// already written as a JSON string.
fn write_finding<'f>(out: &mut Vec<u8>, file: &[u8], f: &'f Finding, memo: &mut Memo<'f>) {
    let d = &f.diagnostic;
    // The text between two values (a closing quote, the comma, the line break and indentation,
    // the next key) is written as one constant: appending it piece by piece was a third of the
    // JSON's cost, in capacity checks alone.
    let put = |out: &mut Vec<u8>, text: &[u8]| out.extend_from_slice(text);
    put(out, b"{\n      \"code\": \"");
    put(out, rule_head(d.code).as_bytes());
    put(
        out,
        match d.severity {
            Severity::Error => b"\",\n      \"severity\": \"error\",\n      \"message\": ",
            Severity::Warning => b"\",\n      \"severity\": \"warning\",\n      \"message\": ",
            Severity::Info => b"\",\n      \"severity\": \"info\",\n      \"message\": ",
        },
    );
    string(out, &d.message);
    put(out, b",\n      \"notes\": ");
    memoized(out, &mut memo.notes, d.notes.as_slice(), |out| {
        if d.notes.is_empty() {
            put(out, b"[]");
        } else {
            for (i, n) in d.notes.iter().enumerate() {
                put(
                    out,
                    if i == 0 {
                        b"[\n        "
                    } else {
                        b",\n        "
                    },
                );
                string(out, n);
            }
            put(out, b"\n      ]");
        }
    });
    put(out, b",\n      \"file\": ");
    put(out, file);
    put(out, b",\n      \"line\": ");
    number(out, f.start.0);
    put(out, b",\n      \"column\": ");
    number(out, f.start.1);
    put(out, b",\n      \"end_line\": ");
    number(out, f.end.0);
    put(out, b",\n      \"end_column\": ");
    number(out, f.end.1);
    put(out, b",\n      \"document\": ");
    number(out, d.document);
    put(out, b",\n      \"fingerprint\": \"");
    put(out, &crate::fingerprint::hex(d.fingerprint));
    put(out, b"\"");
    put(out, b",\n      \"object\": ");
    memoized(out, &mut memo.object, &d.object, |out| match &d.object {
        None => put(out, b"null"),
        Some(o) => {
            put(out, b"{\n        \"api_version\": ");
            opt_string(out, o.api_version.as_deref());
            put(out, b",\n        \"kind\": ");
            opt_string(out, o.kind.as_deref());
            put(out, b",\n        \"namespace\": ");
            opt_string(out, o.namespace.as_deref());
            put(out, b",\n        \"name\": ");
            opt_string(out, o.name.as_deref());
            put(out, b"\n      }");
        }
    });
    put(out, b",\n      \"container\": ");
    memoized(out, &mut memo.container, &d.container, |out| {
        opt_string(out, d.container.as_deref())
    });
    put(out, b",\n      \"source_template\": ");
    opt_string(out, d.source_template.as_deref());
    // Present on container findings only.
    if let Some(r) = &d.runtime {
        put(out, b",\n      \"runtime\": ");
        memoized(out, &mut memo.runtime, &d.runtime, |out| {
            put(out, b"{\n        \"language\": ");
            opt_string(out, r.language.as_deref());
            put(out, b",\n        \"evidence\": ");
            string(out, &r.evidence);
            put(
                out,
                match (r.assumed, r.unknown) {
                    (_, true) => b",\n        \"assumed\": true,\n        \"unknown\": true,\n        \"go_version\": ",
                    (true, false) => b",\n        \"assumed\": true,\n        \"go_version\": ",
                    (false, false) => b",\n        \"assumed\": false,\n        \"go_version\": ",
                },
            );
            opt_string(out, r.go_version.as_deref());
            put(out, b",\n        \"go_version_evidence\": ");
            opt_string(out, r.go_version_evidence.as_deref());
            put(out, b",\n        \"sizes_gomaxprocs\": ");
            opt_string(out, r.sizes_gomaxprocs.as_deref());
            put(out, b",\n        \"sizes_gomemlimit\": ");
            opt_string(out, r.sizes_gomemlimit.as_deref());
            put(out, b"\n      }");
        });
    }
    // Present only in the modes that produce them, through serde.
    match d.provenance.as_deref() {
        Some(Provenance::Chart(chart)) => {
            put(out, b",\n      \"chart\": ");
            pretty_at(out, chart, 3);
        }
        Some(Provenance::Cluster(cluster)) => {
            put(out, b",\n      \"object_ref\": ");
            pretty_at(out, cluster, 3);
        }
        Some(Provenance::Kustomize(k)) => {
            put(out, b",\n      \"kustomize\": ");
            pretty_at(out, k, 3);
        }
        None => {}
    }
    put(out, b",\n      \"fix\": ");
    match &d.fix {
        None => put(out, b"null"),
        Some(x) => {
            put(out, b"{\n        \"applicability\": \"");
            put(out, x.applicability.as_str().as_bytes());
            put(out, b"\",\n        \"title\": ");
            string(out, &x.title);
            put(out, b",\n        \"edits\": ");
            if x.edits.is_empty() {
                put(out, b"[]");
            } else {
                for (i, (e, (s, en))) in x.edits.iter().zip(&f.edit_positions).enumerate() {
                    put(
                        out,
                        if i == 0 {
                            b"[\n          {"
                        } else {
                            b",\n          {"
                        },
                    );
                    put(out, b"\n            \"line\": ");
                    number(out, s.0);
                    put(out, b",\n            \"column\": ");
                    number(out, s.1);
                    put(out, b",\n            \"end_line\": ");
                    number(out, en.0);
                    put(out, b",\n            \"end_column\": ");
                    number(out, en.1);
                    put(out, b",\n            \"text\": ");
                    string(out, &e.text);
                    put(out, b"\n          }");
                }
                put(out, b"\n        ]");
            }
            put(out, b"\n      }");
        }
    }
    put(out, b"\n    }");
}

/// A rule's code and name as a finding writes them, from the code's opening quote to the name's
/// closing one: made once per rule, so that a finding copies one piece instead of four.
fn rule_head(code: Code) -> &'static str {
    static HEADS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    let heads = HEADS.get_or_init(|| {
        registry::RULES
            .iter()
            .map(|r| format!("{}\",\n      \"rule\": \"{}", r.code, r.name))
            .collect()
    });
    &heads[code as usize]
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

pub(crate) fn number(out: &mut Vec<u8>, n: usize) {
    // Lines and columns are mostly one to three digits: written as fixed-size pieces, which
    // compile to a few stores, where copying the formatter's output called memcpy for each.
    let digit = |d: usize| b'0' + (d % 10) as u8;
    match n {
        0..10 => out.push(digit(n)),
        10..100 => out.extend_from_slice(&[digit(n / 10), digit(n)]),
        100..1000 => out.extend_from_slice(&[digit(n / 100), digit(n / 10), digit(n)]),
        _ => out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes()),
    }
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
pub(crate) fn string(out: &mut Vec<u8>, s: &str) {
    out.reserve(s.len() + 2);
    out.push(b'"');
    escaped(out, s);
    out.push(b'"');
}

/// The inside of a JSON string, escaped as [`string`] does: for a string written in parts.
pub(crate) fn escaped(out: &mut Vec<u8>, s: &str) {
    let bytes = s.as_bytes();
    // One pass, sixteen bytes at a time: the test of a fixed-size chunk has no early exit, so it
    // compiles to a few vector instructions. Only a chunk holding an escape is looked at closer,
    // a word at a time.
    let mut from = 0;
    let mut chunks = bytes.chunks_exact(CHUNK);
    let mut at = 0;
    for chunk in chunks.by_ref() {
        let chunk = chunk.try_into().unwrap_or(&[b' '; CHUNK]);
        if any_needs_escape(chunk) {
            escape_chunk(out, bytes, &mut from, at, chunk);
        }
        at += CHUNK;
    }
    // The last few bytes are tested as a chunk too, padded with spaces (which need no escape):
    // every string has such a tail.
    let rest = chunks.remainder();
    let mut padded = [b' '; CHUNK];
    padded[..rest.len()].copy_from_slice(rest);
    if any_needs_escape(&padded) {
        escape_chunk(out, bytes, &mut from, at, &padded);
    }
    out.extend_from_slice(&bytes[from..]);
}

/// How many bytes [`string`] tests at once.
const CHUNK: usize = 16;

/// Whether any byte of a chunk needs an escape: a fold with no early exit over a fixed size,
/// which compiles to a few vector instructions (fewer than a call costs).
#[inline(always)]
fn any_needs_escape(chunk: &[u8; CHUNK]) -> bool {
    chunk.iter().fold(false, |any, &b| any | needs_escape(b))
}

/// Escape the bytes of `chunk` (the bytes of `bytes` from `at`) that need it: everything from
/// `from` up to each one is copied as it is, and `from` moves past it.
fn escape_chunk(out: &mut Vec<u8>, bytes: &[u8], from: &mut usize, at: usize, chunk: &[u8; CHUNK]) {
    for (half, word) in chunk.chunks_exact(8).enumerate() {
        let mut marks = escape_marks(u64::from_le_bytes(word.try_into().unwrap_or([b' '; 8])));
        while marks != 0 {
            let i = at + 8 * half + (marks.trailing_zeros() / 8) as usize;
            marks &= marks - 1;
            out.extend_from_slice(&bytes[*from..i]);
            *from = i + 1;
            escape(out, bytes[i]);
        }
    }
}

/// The high bit of each byte of `x` that needs an escape, and no other bit. Exact, as no sum
/// carries into the next byte: the low seven bits of a byte plus 0x60 reach 0x80 exactly when
/// the byte is at least 0x20 (or its own high bit is set), and plus 0x7f exactly when they are
/// not all zero, which after xor with `"` or `\` means the byte is another.
fn escape_marks(x: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const LOW7: u64 = ONES * 0x7f;
    const HIGH: u64 = ONES * 0x80;
    let control = !(((x & LOW7) + ONES * 0x60) | x) & HIGH;
    let equal = |c: u8| {
        let v = x ^ (ONES * u64::from(c));
        !(((v & LOW7) + LOW7) | v) & HIGH
    };
    control | equal(b'"') | equal(b'\\')
}

fn needs_escape(b: u8) -> bool {
    b < 0x20 || b == b'"' || b == b'\\'
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
pub struct Json;

impl Format for Json {
    type Piece = Fragment;
    /// Whether a finding was written.
    type State = bool;

    fn begin(&self, out: &mut dyn Write) -> std::io::Result<bool> {
        write!(
            out,
            "{{\n  \"version\": 1,\n  \"tool\": {{\n    \"name\": \"golint-k8s\",\n    \"version\": \"{}\"\n  }},\n  \"findings\": [",
            env!("CARGO_PKG_VERSION")
        )?;
        Ok(false)
    }

    fn render(&self, r: &FileReport) -> Fragment {
        Fragment::render(r)
    }

    /// Each finding is an element of its own: a file's findings in parts are written as whole.
    fn in_parts(&self) -> bool {
        true
    }

    fn push(&self, any: &mut bool, f: Fragment, out: &mut dyn Write) -> std::io::Result<()> {
        push_all(any, out, &[f])
    }

    fn push_batch(
        &self,
        any: &mut bool,
        fragments: Vec<Fragment>,
        out: &mut dyn Write,
    ) -> std::io::Result<()> {
        push_all(any, out, &fragments)
    }

    fn finish(&self, any: bool, end: &End, out: &mut dyn Write) -> std::io::Result<()> {
        if any {
            out.write_all(b"\n  ")?;
        }
        out.write_all(b"],\n  \"summary\": ")?;
        let (stats, t) = (end.stats, end.tally);
        let summary = Summary {
            files: stats.files,
            documents: stats.documents,
            objects: stats.objects,
            containers: stats.containers,
            assumed_go_containers: stats.assumed_go,
            unknown_runtime_containers: stats.unknown_runtime,
            self_sizing_containers: stats.self_sizing,
            findings: t.findings(),
            by_severity: BySeverity {
                error: t.error,
                warning: t.warning,
                info: t.info,
            },
            fixable: Fixable {
                safe: t.safe_fixes,
                unsafe_: t.unsafe_fixes,
            },
        };
        let mut tail = Vec::new();
        pretty_at(&mut tail, &summary, 1);
        if let Some(fixed) = end.fixed {
            tail.extend_from_slice(b",\n  \"fixed\": ");
            pretty_at(&mut tail, &fixed, 1);
        }
        // Inputs that could not be read: a report without them would look clean.
        tail.extend_from_slice(b",\n  \"errors\": ");
        pretty_at(&mut tail, &end.errors, 1);
        out.write_all(&tail)?;
        out.write_all(b"\n}\n")
    }
}

/// Several files' fragments, in order, in one vectored write (or a few, where the output takes
/// fewer pieces at once) instead of a system call per file. `any`: whether a finding was written.
pub fn push_all(
    any: &mut bool,
    out: &mut dyn Write,
    fragments: &[Fragment],
) -> std::io::Result<()> {
    let mut slices = Vec::new();
    for f in fragments {
        for part in &f.parts {
            // The first element of the array has no comma before it.
            let skip = usize::from(!*any);
            slices.push(std::io::IoSlice::new(part.get(skip..).unwrap_or_default()));
            *any = true;
        }
    }
    let mut rest = slices.as_mut_slice();
    while !rest.is_empty() {
        match out.write_vectored(rest) {
            Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
            Ok(n) => std::io::IoSlice::advance_slices(&mut rest, n),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

pub fn write(run: &Run, out: &mut dyn Write) -> std::io::Result<()> {
    super::write(Json, run, out).map(drop)
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
    use crate::diagnostic::{
        Applicability, ChartOrigin, ClusterRef, Diagnostic, Edit, Fix, Provenance,
    };
    use crate::k8s::ObjectRef;

    /// The finding as the generic serializer writes it: the reference for `write_finding`.
    #[derive(Serialize)]
    struct FindingOut<'a> {
        code: Code,
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
        fingerprint: String,
        object: Option<&'a ObjectRef>,
        container: Option<&'a str>,
        source_template: Option<&'a str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        runtime: Option<&'a crate::diagnostic::RuntimeInfo>,
        #[serde(skip_serializing_if = "Option::is_none")]
        chart: Option<&'a ChartOrigin>,
        #[serde(skip_serializing_if = "Option::is_none")]
        object_ref: Option<&'a ClusterRef>,
        #[serde(skip_serializing_if = "Option::is_none")]
        kustomize: Option<&'a crate::diagnostic::KustomizeOrigin>,
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
            rule: d.code.rule().name,
            severity: d.severity,
            message: &d.message,
            notes: &d.notes,
            file,
            line: f.start.0,
            column: f.start.1,
            end_line: f.end.0,
            end_column: f.end.1,
            document: d.document,
            fingerprint: format!("{:016x}", d.fingerprint),
            object: d.object.as_deref(),
            container: d.container.as_deref(),
            source_template: d.source_template.as_deref(),
            runtime: d.runtime.as_deref(),
            chart: d.chart(),
            object_ref: d.cluster(),
            kustomize: match d.provenance.as_deref() {
                Some(Provenance::Kustomize(k)) => Some(k),
                _ => None,
            },
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
    fn escape_marks_are_exactly_the_bytes_that_need_an_escape() {
        // Every byte value at every place in a word, beside neighbours that sit on either side
        // of the tested ranges (a carry between bytes would mark a neighbour).
        for b in 0..=255u8 {
            for at in 0..8 {
                for fill in [0x00, 0x1f, 0x20, b'"', b'#', b'\\', 0x7f, 0x80, 0xff] {
                    let mut word = [fill; 8];
                    word[at] = b;
                    let want = word
                        .iter()
                        .enumerate()
                        .filter(|(_, &x)| needs_escape(x))
                        .fold(0u64, |m, (i, _)| m | 0x80 << (8 * i));
                    assert_eq!(escape_marks(u64::from_le_bytes(word)), want, "{word:?}");
                }
            }
        }
    }

    #[test]
    fn strings_escape_like_serde_wherever_the_byte_falls() {
        // The fast path tests sixteen bytes at a time, so every escape class is tried at every
        // place in and around two chunks, beside bytes that are near the tested ranges.
        let specials: Vec<char> = (0u8..0x80)
            .map(char::from)
            .chain("é€😀\u{2028}".chars())
            .collect();
        for len in 0..2 * CHUNK + 4 {
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
    fn numbers_read_as_itoa_writes_them() {
        for n in (0..=100_000).chain([999_999, 1_000_000, usize::MAX]) {
            let mut ours = Vec::new();
            number(&mut ours, n);
            assert_eq!(ours, n.to_string().as_bytes());
        }
    }

    #[test]
    fn every_rule_and_severity_heads_a_finding_as_serde_writes_it() {
        // The code and name come from one piece made per rule: each is held to the serializer.
        for rule in registry::RULES {
            for severity in [Severity::Error, Severity::Warning, Severity::Info] {
                let f = Finding {
                    diagnostic: Diagnostic::new(rule.code, severity, 0..1, "m".into()),
                    start: (1, 1),
                    end: (1, 2),
                    edit_positions: Vec::new(),
                };
                let mut mine = Vec::new();
                write_finding(&mut mine, b"\"f\"", &f, &mut Memo::default());
                assert_eq!(
                    String::from_utf8(mine).unwrap(),
                    String::from_utf8(by_serde("f", &f)).unwrap()
                );
            }
        }
    }

    #[test]
    fn fragments_reach_an_output_that_takes_a_few_bytes_at_a_time() {
        // A pipe or a slow file may take part of a vectored write: the rest must follow in order.
        struct Trickle(Vec<u8>);
        impl Write for Trickle {
            fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
                let n = b.len().min(7);
                self.0.extend_from_slice(&b[..n]);
                Ok(n)
            }
            fn write_vectored(&mut self, bufs: &[std::io::IoSlice]) -> std::io::Result<usize> {
                // At most 11 bytes, across piece boundaries.
                let mut n = 0;
                for b in bufs {
                    let take = b.len().min(11 - n);
                    self.0.extend_from_slice(&b[..take]);
                    n += take;
                    if n == 11 {
                        break;
                    }
                }
                Ok(n)
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let fragment = |parts: &[&str]| Fragment {
            parts: parts.iter().map(|p| p.as_bytes().to_vec()).collect(),
        };
        let fragments = [
            fragment(&[",\n    {a}", ",\n    {bb}"]),
            fragment(&[]),
            fragment(&[",\n    {ccc-a-longer-piece-than-one-write}"]),
        ];
        let mut out = Trickle(Vec::new());
        let mut any = Json.begin(&mut out).unwrap();
        let start = out.0.len();
        push_all(&mut any, &mut out, &fragments[..1]).unwrap();
        push_all(&mut any, &mut out, &fragments[1..]).unwrap();
        assert_eq!(
            String::from_utf8(out.0[start..].to_vec()).unwrap(),
            "\n    {a},\n    {bb},\n    {ccc-a-longer-piece-than-one-write}"
        );
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
                [
                    Code::GK101,
                    Code::GK203,
                    Code::GK000,
                    Code::GK001,
                    Code::GK401,
                ][i],
                [Severity::Error, Severity::Warning, Severity::Info][i % 3],
                0..1,
                format!("message {text}"),
            );
            d.notes = (0..i).map(|n| format!("note {n} {text}")).collect();
            d.document = i * 7;
            if i % 2 == 1 {
                d.object = Some(std::sync::Arc::new(ObjectRef {
                    api_version: Some("apps/v1".into()),
                    kind: Some(text.to_string()),
                    namespace: None,
                    name: Some("api".into()),
                }));
                d.container = Some((*text).into());
                d.source_template = Some("chart/templates/deployment.yaml".into());
                d.runtime = Some(std::sync::Arc::new(crate::diagnostic::RuntimeInfo {
                    language: (i == 1).then(|| "go".to_string()),
                    evidence: format!("evidence {text}"),
                    assumed: i == 3,
                    unknown: false,
                    go_version: Some("1.25".into()),
                    go_version_evidence: (i == 1).then(|| text.to_string()),
                    sizes_gomaxprocs: Some(format!("sizes {text}")),
                    sizes_gomemlimit: None,
                }));
            }
            if i == 2 {
                d.provenance = Some(Box::new(Provenance::Chart(ChartOrigin {
                    file: "templates/d.yaml".into(),
                    line: Some(12),
                    values_key: Some(text.to_string()),
                    unmapped: None,
                })));
            }
            if i == 4 {
                d.provenance = Some(Box::new(Provenance::Kustomize(
                    crate::diagnostic::KustomizeOrigin {
                        build: format!("overlays/{text} (kustomize build)"),
                        file: Some(format!("base/{text}.yaml")),
                        line: Some(13),
                        column: Some(22),
                        end_line: Some(13),
                        end_column: Some(30),
                        unmapped: None,
                    },
                )));
            }
            if i == 3 {
                d.provenance = Some(Box::new(Provenance::Cluster(ClusterRef {
                    kind: "Deployment".into(),
                    namespace: Some("payments".into()),
                    name: "api".into(),
                    container: None,
                    path: "spec.template.spec.containers[0].env".into(),
                })));
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
