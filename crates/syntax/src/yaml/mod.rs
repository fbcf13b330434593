//! YAML as a span tree: every key, value and collection keeps the byte range it came from.
//!
//! Rules need two things a value-only YAML library cannot give: exact positions (to point at the
//! `memory: 512Mi` the user wrote, and to edit it in place), and the *source form* of each scalar
//! (`off` unquoted is a boolean for kubectl, `"off"` is a string). So we build our own arena tree
//! from the parser's events and keep it lossless enough for diagnostics and fixes.
//!
//! Anchors and aliases stay references (an alias node points at its anchored node); lookups follow
//! them under a hop budget, and merge keys (`<<`) are applied at lookup time, in the order kubectl
//! applies them (see [`Yaml::get_entry`]). Nothing is ever copied, so an alias bomb costs no more
//! than its text.
//!
//! The parser is behind this one module (see [`parse`]) so that it can be swapped.

mod fast;
pub mod scalar;

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::ops::Range;

use granit_parser::{Event, Options, Parser, ScalarStyle, StructureStyle};

pub use scalar::{resolve_plain, Yaml11};

pub type NodeId = u32;

/// How deep block and flow collections may nest. Kubernetes objects (CRD schemas included) stay far
/// below this; anything deeper is hostile input and becomes a syntax error instead of a stack risk.
const NESTING_LIMIT: usize = 200;
/// How many alias or merge hops one lookup may follow before giving up.
const HOP_BUDGET: usize = 64;

/// Above this many nodes, work over a whole tree (freeing it, detecting a file's layout) runs in
/// parallel.
pub const PARALLEL_NODES: usize = 100_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    Plain,
    SingleQuoted,
    DoubleQuoted,
    Literal,
    Folded,
}

/// A mapping's entries, (key, value): up to two are stored in the node itself.
pub type Entries = smallvec::SmallVec<[(NodeId, NodeId); 2]>;
/// A sequence's items: up to four are stored in the node itself.
pub type Items = smallvec::SmallVec<[NodeId; 4]>;

#[derive(Debug)]
pub enum NodeKind<'a> {
    Scalar {
        value: Cow<'a, str>,
        style: Style,
        /// An explicit tag such as `!!str`; it overrides YAML 1.1 resolution.
        tag: Option<String>,
    },
    Mapping {
        entries: Entries,
        flow: bool,
    },
    Sequence {
        items: Items,
        flow: bool,
    },
    /// A reference to an anchored node (None: the anchor was not defined).
    Alias {
        target: Option<NodeId>,
    },
}

#[derive(Debug)]
pub struct Node<'a> {
    pub kind: NodeKind<'a>,
    /// Byte range in the source text (including quotes; block collections start at their first key).
    pub span: Range<usize>,
    /// Whether an anchor (`&name`) is defined on this node.
    pub anchored: bool,
}

#[derive(Debug, Clone)]
pub struct SyntaxError {
    pub offset: usize,
    pub message: String,
}

#[derive(Debug, Clone)]
pub struct Comment {
    /// Byte range of the whole comment, from `#` to the end of the line.
    pub span: Range<usize>,
    /// Whether only white space precedes the comment on its line.
    pub own_line: bool,
    pub doc: usize,
}

#[derive(Debug)]
pub struct Document {
    pub root: Option<NodeId>,
    pub span: Range<usize>,
    /// A syntax error inside this document; its tree is then incomplete and not linted.
    pub error: Option<SyntaxError>,
}

/// A duplicate key: the first key node and the repeated one.
#[derive(Debug, Clone, Copy)]
pub struct DuplicateKey {
    pub first: NodeId,
    pub second: NodeId,
    pub doc: usize,
}

#[derive(Debug, Default)]
pub struct Yaml<'a> {
    pub nodes: Vec<Node<'a>>,
    pub docs: Vec<Document>,
    pub comments: Vec<Comment>,
    pub duplicates: Vec<DuplicateKey>,
    /// An error outside any document (e.g. before the first document started).
    pub stream_error: Option<SyntaxError>,
    /// Whether any node is an alias (`*name`). Most files have none, and the checks for edits
    /// inside aliased nodes then need not walk every node.
    pub has_aliases: bool,
    /// The indentation steps under keys, when the parser counted them on its way (the fast path
    /// does); otherwise [`Yaml::walk_indent_steps`] counts them from the tree.
    pub indent_steps: Option<IndentSteps>,
}

/// How often each indentation step appears under a key in block style, indexed by the step in
/// columns: a nested block mapping's first key right of its parent key (1 to 8), and a block
/// sequence's first dash right of its parent key (0 to 8). Fixes indent what they insert by the
/// most common ones.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct IndentSteps {
    pub mappings: [usize; 9],
    pub sequences: [usize; 9],
}

impl IndentSteps {
    pub fn add(&mut self, other: &IndentSteps) {
        for i in 0..9 {
            self.mappings[i] += other.mappings[i];
            self.sequences[i] += other.sequences[i];
        }
    }
}

/// A standard tag's name (`int` for `!!int` or `tag:yaml.org,2002:int`); None for other tags.
pub fn short_tag(tag: &str) -> Option<&str> {
    tag.strip_prefix("tag:yaml.org,2002:")
        .or_else(|| tag.strip_prefix("!!"))
}

/// The text of a `!!binary` scalar as go-yaml v2 decodes it: standard base64, line breaks
/// ignored; None when it is not valid base64, which kubectl refuses. Bytes that are not UTF-8
/// become U+FFFD, as Go's JSON encoder writes them.
fn decode_binary(text: &str) -> Option<String> {
    let mut bits: u32 = 0;
    let (mut n, mut pad, mut out) = (0u32, 0usize, Vec::with_capacity(text.len() / 4 * 3));
    for b in text.bytes().filter(|&b| b != b'\n' && b != b'\r') {
        let v = match b {
            b'A'..=b'Z' => b - b'A',
            b'a'..=b'z' => b - b'a' + 26,
            b'0'..=b'9' => b - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            b'=' if n % 4 >= 2 => {
                pad += 1;
                n += 1;
                continue;
            }
            _ => return None,
        };
        if pad > 0 {
            return None;
        }
        bits = bits << 6 | u32::from(v);
        n += 1;
        if n % 4 == 0 {
            out.extend_from_slice(&bits.to_be_bytes()[1..]);
            bits = 0;
        }
    }
    if n % 4 != 0 {
        return None;
    }
    // The padded last quantum; Go's decoder (not in strict mode) ignores its spare bits.
    if pad > 0 {
        let quantum = bits << (6 * pad as u32);
        out.extend_from_slice(&quantum.to_be_bytes()[1..4 - pad]);
    }
    Some(String::from_utf8_lossy(&out).into_owned())
}

#[cfg(test)]
#[test]
fn binary_scalars_decode_as_go_decodes_base64() {
    assert_eq!(decode_binary("b2Zm").as_deref(), Some("off"));
    assert_eq!(decode_binary("b2Zm\nZmY=\n").as_deref(), Some("offff"));
    assert_eq!(decode_binary("MTA=").as_deref(), Some("10"));
    assert_eq!(decode_binary("MQ==").as_deref(), Some("1"));
    assert_eq!(decode_binary("").as_deref(), Some(""));
    for bad in ["b2Z", "b2Zm ZmY=", "MQ==MQ==", "M===", "b2Zm!"] {
        assert_eq!(decode_binary(bad), None, "{bad}");
    }
}

fn style_of(s: ScalarStyle) -> Style {
    match s {
        ScalarStyle::Plain => Style::Plain,
        ScalarStyle::SingleQuoted => Style::SingleQuoted,
        ScalarStyle::DoubleQuoted => Style::DoubleQuoted,
        ScalarStyle::Literal => Style::Literal,
        _ => Style::Folded,
    }
}

/// An open collection while building.
struct Open {
    node: NodeId,
    /// For mappings: a key waiting for its value.
    pending_key: Option<NodeId>,
}

/// Parse all documents of `text`. `base` is added to every offset (the BOM length), so spans index
/// the original source text.
///
/// Block-style manifests (nearly all of them) take the [`fast`] path; anything it does not handle
/// exactly like the reference parser is parsed by the reference parser instead.
///
/// A stream that kubectl would cut into documents differently from YAML is read as kubectl reads
/// it (see [`kubectl_cuts`]).
pub fn parse(text: &str, base: usize) -> Yaml<'_> {
    if let Some(values) = json_stream(text) {
        return parse_values(text, base, values);
    }
    match kubectl_cuts(text) {
        Some(cuts) => parse_cut(text, base, &cuts),
        None => parse_whole(text, base),
    }
}

/// kubectl reads a stream whose first byte other than white space is `{` as JSON values, which
/// may follow each other with only white space between them (`{…}{…}`, one object a line). For
/// YAML a second value is an error. Returns the objects' ranges when the text is two or more
/// objects and nothing else; None otherwise (one object, or anything a JSON stream is not, which
/// YAML then reads or refuses as before).
fn json_stream(text: &str) -> Option<Vec<Range<usize>>> {
    let b = text.as_bytes();
    let blank = |c: &u8| matches!(c, b' ' | b'\t' | b'\n' | b'\r');
    let mut p = b.iter().position(|c| !blank(c))?;
    if b[p] != b'{' {
        return None;
    }
    let mut values = Vec::new();
    while p < b.len() {
        if b[p] != b'{' {
            return None;
        }
        let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
        let mut end = None;
        for (i, &c) in b[p..].iter().enumerate() {
            if in_string {
                match c {
                    _ if escaped => escaped = false,
                    b'\\' => escaped = true,
                    b'"' => in_string = false,
                    _ => {}
                }
                continue;
            }
            match c {
                b'"' => in_string = true,
                b'{' | b'[' => depth += 1,
                b'}' | b']' => {
                    depth = depth.checked_sub(1)?;
                    if depth == 0 {
                        end = Some(p + i + 1);
                        break;
                    }
                }
                _ => {}
            }
        }
        let end = end?;
        values.push(p..end);
        p = end + b[end..].iter().take_while(|c| blank(c)).count();
    }
    (values.len() > 1).then_some(values)
}

/// Each JSON value of a stream parsed as a document of its own, at its place in the text.
fn parse_values(text: &str, base: usize, values: Vec<Range<usize>>) -> Yaml<'_> {
    let mut all: Option<Yaml<'_>> = None;
    for range in values {
        let piece = parse_whole(&text[range.clone()], base + range.start);
        match all.as_mut() {
            None => all = Some(piece),
            Some(all) => fast::join(all, piece),
        }
    }
    all.unwrap_or_default()
}

fn parse_whole(text: &str, base: usize) -> Yaml<'_> {
    fast::parse_mixed(text, base).unwrap_or_else(|| parse_reference(text, base))
}

/// kubectl and Helm do not leave document boundaries to YAML: they cut the stream at every line
/// that starts with `---` followed by nothing but blanks or a comment (unless nothing has been
/// read since the last cut: then the line stays, as the next piece's first line) and decode each
/// piece on its own. For YAML, two such lines read otherwise, and a manifest kubectl applies
/// would be invalid YAML: `---#note`, which YAML reads as a plain scalar (its marker needs a blank
/// after it), and a byte-order mark at the start of the line after a `---` (YAML allows one only
/// before a document's marker; concatenated files from Windows editors have them).
///
/// Returns the cut lines (each with its line break) when the text has one of those two, and
/// None for every other text, which YAML and kubectl cut alike.
fn kubectl_cuts(text: &str) -> Option<Vec<Range<usize>>> {
    let b = text.as_bytes();
    // Both cases are rare: texts with neither are let through after two quick searches, instead
    // of looking at every `---` line of a large stream.
    // 0xEF starts the byte-order mark's encoding (and little else in a manifest).
    if memchr::memchr(0xef, b).is_none() && memchr::memmem::find(b, b"---#").is_none() {
        return None;
    }
    let starts = (b.starts_with(b"---").then_some(0))
        .into_iter()
        .chain(memchr::memmem::find_iter(b, b"\n---").map(|i| i + 1));
    let mut cuts = Vec::new();
    let mut piece = 0;
    let mut differs = false;
    for at in starts {
        let end = memchr::memchr(b'\n', &b[at..]).map_or(b.len(), |i| at + i + 1);
        let rest = text[at + 3..end].trim();
        if !(rest.is_empty() || rest.starts_with('#')) {
            // kubectl refuses such a line; YAML may take it (`--- {a: 1}`): left to YAML.
            continue;
        }
        if at == piece {
            continue;
        }
        differs |= b.get(at + 3) == Some(&b'#') || text[end..].starts_with('\u{feff}');
        cuts.push(at..end);
        piece = end;
    }
    differs.then_some(cuts)
}

/// Parse the pieces between `cuts` each on its own, as kubectl does, and join them. A cut line's
/// comment is kept, in the document that follows it.
fn parse_cut<'a>(text: &'a str, base: usize, cuts: &[Range<usize>]) -> Yaml<'a> {
    let mut pieces = Vec::with_capacity(cuts.len() + 1);
    let mut from = 0;
    for c in cuts {
        pieces.push(from..c.start);
        from = c.end;
    }
    pieces.push(from..text.len());
    let mut all: Option<Yaml<'a>> = None;
    for (i, range) in pieces.into_iter().enumerate() {
        // Each piece is a stream of its own for go-yaml, so a byte-order mark may start it.
        let start = if text[range.clone()].starts_with('\u{feff}') {
            range.start + '\u{feff}'.len_utf8()
        } else {
            range.start
        };
        let piece = parse_whole(&text[start..range.end], base + start);
        let all = match all.as_mut() {
            None => all.insert(piece),
            Some(all) => {
                if piece.indent_steps.is_none() {
                    all.indent_steps = None;
                }
                fast::join(all, piece);
                all
            }
        };
        let Some(cut) = cuts.get(i) else { continue };
        let line = text[cut.clone()].trim_end_matches(['\n', '\r']);
        if let Some(hash) = line.find('#') {
            all.comments.push(Comment {
                span: base + cut.start + hash..base + cut.start + line.len(),
                own_line: false,
                doc: all.docs.len(),
            });
        }
    }
    all.unwrap_or_default()
}

/// Where a large stream may be cut into groups of documents that parse exactly as they do in one
/// pass of [`parse`]: 0, then the first document-start line (`---` alone or with a blank after
/// it) at least `gap` bytes after the previous cut. These are the lines [`parse`] itself cuts
/// its pieces at, so a group read by [`parse_group`] is node for node and span for span the
/// part of the whole tree it covers. None for a text [`parse`] reads as a whole in another way
/// (a JSON stream, or cut as kubectl cuts it: see [`kubectl_cuts`]).
pub fn stream_cuts(text: &str, gap: usize) -> Option<Vec<usize>> {
    if json_stream(text).is_some() || kubectl_cuts(text).is_some() {
        return None;
    }
    Some(fast::document_starts(text.as_bytes(), gap.max(1)))
}

/// One group of a stream (see [`stream_cuts`]) parsed as [`parse`] parses it within the whole
/// text; None when the reference parser finds an error in it, since [`parse`] then reads the
/// whole text with the reference parser, whose view of what follows an error is that of one
/// pass.
pub fn parse_group(text: &str, base: usize) -> Option<Yaml<'_>> {
    fast::parse_mixed(text, base).or_else(|| {
        // A group of one document the fast path declines (anchors, tags) and no error.
        let y = parse_reference(text, base);
        let clean = y.stream_error.is_none() && y.docs.iter().all(|d| d.error.is_none());
        clean.then_some(y)
    })
}

/// The documents (between document-start lines) whose text names one of `words`, in order.
pub fn documents_naming(text: &str, words: &[&str]) -> Vec<Range<usize>> {
    let b = text.as_bytes();
    let mut hits: Vec<usize> = words
        .iter()
        .flat_map(|w| memchr::memmem::find_iter(b, w.as_bytes()))
        .collect();
    if hits.is_empty() {
        return Vec::new();
    }
    hits.sort_unstable();
    let starts = stream_cuts(text, 1).unwrap_or_else(|| vec![0]);
    let mut out: Vec<Range<usize>> = Vec::new();
    for hit in hits {
        let i = starts.partition_point(|&s| s <= hit).saturating_sub(1);
        let r = starts[i]..starts.get(i + 1).copied().unwrap_or(b.len());
        if out.last() != Some(&r) {
            out.push(r);
        }
    }
    out
}

impl<'a> Yaml<'a> {
    /// Append `piece`'s documents after the ones already here (a group of a stream and the
    /// context documents read beside it).
    pub fn append(&mut self, piece: Yaml<'a>) {
        fast::join(self, piece);
    }

    /// Keep only the objects of this tree: no comments, duplicate keys or errors, which are
    /// reported where the documents are linted. (Another group's LimitRange, VPA or ConfigMap
    /// read beside a group of a stream, for what it gives the group's objects.)
    pub fn into_context(mut self) -> Yaml<'a> {
        self.comments.clear();
        self.duplicates.clear();
        self.stream_error = None;
        for d in &mut self.docs {
            d.error = None;
        }
        self
    }
}

/// Parse with the fast path only, in one piece; `None` where it declines (see [`fast`]).
#[doc(hidden)]
pub fn parse_fast(text: &str, base: usize) -> Option<Yaml<'_>> {
    fast::parse(text, base)
}

/// Parse with the fast path only, large texts in pieces on several threads.
#[doc(hidden)]
pub fn parse_fast_pieces(text: &str, base: usize) -> Option<Yaml<'_>> {
    fast::parse_pieces(text, base)
}

/// Parse with the fast path where it reads the text, by documents where it reads only some of
/// them (the others with the reference parser); `None` where the whole text goes to the
/// reference parser.
#[doc(hidden)]
pub fn parse_mixed(text: &str, base: usize) -> Option<Yaml<'_>> {
    fast::parse_mixed(text, base)
}

/// Parse with the reference parser (granit-parser) only. The fast path is tested against it.
#[doc(hidden)]
pub fn parse_reference(text: &str, base: usize) -> Yaml<'_> {
    let mut opts = Options::default();
    opts.block_nesting_limit = NESTING_LIMIT;
    opts.flow_nesting_limit = NESTING_LIMIT;
    opts.emit_comments = true;
    // Long license headers and commented-out blocks are common; the default buffer (96) would turn
    // them into errors.
    opts.max_buffered_comment_events = usize::MAX / 2;
    let mut parser = Parser::new_from_str_with_options(text, opts);
    let mut b = Builder::new(text, base);
    loop {
        match parser.next_event() {
            None => break,
            Some(Ok((ev, span))) => {
                let r = span.byte_range().unwrap_or(0..0);
                let r = r.start + base..r.end + base;
                if b.event(ev, r) {
                    break;
                }
            }
            Some(Err(e)) => {
                let offset = e.marker().byte_offset().unwrap_or(0) + base;
                let err = SyntaxError {
                    offset,
                    message: clean_message(&e.info()),
                };
                b.fail(err);
                match parser.proceed_next_document() {
                    Ok(true) => continue,
                    _ => break,
                }
            }
        }
    }
    b.y
}

fn clean_message(info: &str) -> String {
    let mut m = info.trim().trim_end_matches('.').to_string();
    if let Some(first) = m.get(0..1) {
        let lower = first.to_lowercase();
        m.replace_range(0..1, &lower);
    }
    m
}

struct Builder<'a, 't> {
    y: Yaml<'a>,
    stack: Vec<Open>,
    /// Anchor id (from the parser) to node; anchors are scoped to their document. A map, because
    /// a document may define hundreds of thousands of them.
    anchors: HashMap<usize, NodeId>,
    base: usize,
    text: &'t str,
    doc_start: Option<usize>,
    /// Why kubectl refuses or ignores the open document although it is valid YAML (a `%YAML`
    /// directive of another version than 1.1, no `---` after `...`).
    incompatible: Option<SyntaxError>,
    /// The last document ended with `...`.
    after_end_marker: bool,
}

/// Twice the nodes per line the node list is first sized for (see `Builder::new`).
const NODES_PER_LINE_X2: usize = 5;

impl<'a, 't> Builder<'a, 't> {
    fn new(text: &'t str, base: usize) -> Self {
        let mut y = Yaml::default();
        // Reserved up front, so that the node list is not copied while it doubles (each copy
        // lands in fresh memory, which the kernel zeroes first). Manifests hold about two nodes
        // per line whatever their line length (docs/performance.md).
        let lines = memchr::memchr_iter(b'\n', text.as_bytes()).count();
        y.nodes.reserve(lines * NODES_PER_LINE_X2 / 2 + 16);
        Builder {
            y,
            stack: Vec::new(),
            anchors: HashMap::new(),
            base,
            text,
            doc_start: None,
            incompatible: None,
            after_end_marker: false,
        }
    }

    fn doc_start(&mut self, r: Range<usize>) {
        self.anchors.clear();
        self.stack.clear();
        self.doc_start = Some(r.start);
        self.y.docs.push(Document {
            root: None,
            span: r.start..r.end,
            error: None,
        });
    }

    fn doc_end(&mut self, r: Range<usize>) {
        if let Some(doc) = self.y.docs.last_mut() {
            doc.span.end = r.end.max(doc.span.end);
            if let Some(e) = self.incompatible.take() {
                doc.error.get_or_insert(e);
                doc.root = None;
            }
        }
        self.doc_start = None;
    }

    fn comment(&mut self, r: Range<usize>) {
        let line_start = crate::text::line_start(self.text, r.start - self.base);
        let own_line = self.text[line_start..r.start - self.base]
            .chars()
            .all(|c| c == ' ' || c == '\t' || c == '\u{feff}');
        let doc = self.y.docs.len().saturating_sub(1);
        self.y.comments.push(Comment {
            span: r,
            own_line,
            doc,
        });
    }

    fn scalar(&mut self, value: Cow<'a, str>, style: Style, r: Range<usize>) {
        let id = self.push(
            NodeKind::Scalar {
                value,
                style,
                tag: None,
            },
            r,
            0,
        );
        self.attach(id);
    }

    fn open(&mut self, kind: NodeKind<'a>, r: Range<usize>, anchor: usize) {
        let id = self.push(kind, r, anchor);
        self.stack.push(Open {
            node: id,
            pending_key: None,
        });
    }

    fn push(&mut self, kind: NodeKind<'a>, span: Range<usize>, anchor: usize) -> NodeId {
        let id = self.y.nodes.len() as NodeId;
        self.y.nodes.push(Node {
            kind,
            span,
            anchored: anchor != 0,
        });
        if anchor != 0 {
            self.anchors.insert(anchor, id);
        }
        id
    }

    /// Attach a finished node to its parent (or make it the document root).
    fn attach(&mut self, id: NodeId) {
        match self.stack.last_mut() {
            None => {
                if let Some(doc) = self.y.docs.last_mut() {
                    doc.root = Some(id);
                }
            }
            Some(open) => {
                let parent = open.node as usize;
                match &mut self.y.nodes[parent].kind {
                    NodeKind::Mapping { entries, .. } => match open.pending_key.take() {
                        None => open.pending_key = Some(id),
                        Some(k) => entries.push((k, id)),
                    },
                    NodeKind::Sequence { items, .. } => items.push(id),
                    _ => {}
                }
            }
        }
    }

    /// Returns true when the stream ended.
    fn event(&mut self, ev: Event<'a>, r: Range<usize>) -> bool {
        match ev {
            Event::StreamStart => {}
            Event::StreamEnd => return true,
            Event::DocumentStart(explicit, version) => {
                let after_end_marker = std::mem::take(&mut self.after_end_marker);
                self.doc_start(r.clone());
                // kubectl cuts the stream at `---` lines only, and go-yaml decodes the first
                // document of each piece: one that follows `...` without a `---` of its own is
                // never decoded, so nothing in it is applied.
                if after_end_marker && !explicit {
                    self.incompatible = Some(SyntaxError {
                        offset: r.start,
                        message: "a document after `...` must start with `---` in YAML 1.1, which kubectl reads: kubectl decodes only the first document between `---` lines and silently ignores this one".to_string(),
                    });
                }
                // go-yaml v2 reads YAML 1.1 only: kubectl refuses a document declared as any
                // other version, so nothing in it reaches the API server.
                if let Some(v) = version.filter(|v| (v.major, v.minor) != (1, 1)) {
                    let before =
                        &self.text[..r.start.saturating_sub(self.base).min(self.text.len())];
                    let offset = before.rfind("%YAML").map_or(r.start, |i| i + self.base);
                    self.incompatible = Some(SyntaxError {
                        offset,
                        message: format!(
                            "found incompatible YAML document: %YAML {}.{} is not YAML 1.1, the only version kubectl's decoder (go-yaml v2) reads, so kubectl refuses the document",
                            v.major, v.minor
                        ),
                    });
                }
            }
            Event::DocumentEnd => {
                let local = r.start.saturating_sub(self.base)..r.end.saturating_sub(self.base);
                self.after_end_marker = self.text.get(local).is_some_and(|t| t.starts_with("..."));
                self.doc_end(r)
            }
            Event::Comment(_, _) => self.comment(r),
            Event::Scalar(value, style, anchor, tag) => {
                let tag = tag.map(|t| {
                    let (h, s) = t.parts();
                    format!("{h}{s}")
                });
                // kubectl sends what a `!!binary` scalar encodes, and the rules must read that.
                let value = match tag.as_deref().and_then(short_tag) {
                    Some("binary") => decode_binary(&value).map_or(value, Cow::Owned),
                    _ => value,
                };
                let id = self.push(
                    NodeKind::Scalar {
                        value,
                        style: style_of(style),
                        tag,
                    },
                    r,
                    anchor,
                );
                self.attach(id);
            }
            Event::Alias(anchor) => {
                self.y.has_aliases = true;
                let target = self.anchors.get(&anchor).copied();
                let id = self.push(NodeKind::Alias { target }, r, 0);
                self.attach(id);
            }
            Event::UnresolvedAlias(_) => {
                self.y.has_aliases = true;
                let id = self.push(NodeKind::Alias { target: None }, r, 0);
                self.attach(id);
            }
            Event::Anchor(..) => {}
            Event::MappingStart(style, anchor, _) => {
                let flow = style == StructureStyle::Flow;
                let kind = NodeKind::Mapping {
                    entries: Entries::new(),
                    flow,
                };
                self.open(kind, r, anchor);
            }
            Event::SequenceStart(style, anchor, _) => {
                let flow = style == StructureStyle::Flow;
                let kind = NodeKind::Sequence {
                    items: Items::new(),
                    flow,
                };
                self.open(kind, r, anchor);
            }
            Event::MappingEnd | Event::SequenceEnd => {
                self.close(r);
            }
            // The event enum is non-exhaustive; nothing else carries data we use.
            _ => {}
        }
        false
    }

    fn close(&mut self, r: Range<usize>) {
        if let Some(open) = self.stack.pop() {
            let id = open.node;
            let node = &mut self.y.nodes[id as usize];
            node.span.end = r.end.max(node.span.start);
            if matches!(node.kind, NodeKind::Mapping { .. }) {
                self.check_duplicates(id);
            }
            self.attach(id);
        }
    }

    fn check_duplicates(&mut self, map: NodeId) {
        let NodeKind::Mapping { entries, .. } = &self.y.nodes[map as usize].kind else {
            return;
        };
        let doc = self.y.docs.len().saturating_sub(1);
        let nodes = &self.y.nodes;
        let key_of = |k: NodeId| match &nodes[k as usize].kind {
            NodeKind::Scalar { value, .. } if value != "<<" => Some(value.as_ref()),
            _ => None,
        };
        let mut found = Vec::new();
        if entries.len() <= 16 {
            // Every mapping is checked as it closes: small ones (nearly all) without allocating,
            // each key read from its node once.
            let mut keys = [("", 0 as NodeId); 16];
            let mut seen = 0;
            for &(k, _) in entries.iter() {
                let Some(v) = key_of(k) else { continue };
                if let Some(&(_, first)) = keys[..seen].iter().find(|(s, _)| *s == v) {
                    found.push(DuplicateKey {
                        first,
                        second: k,
                        doc,
                    });
                }
                keys[seen] = (v, k);
                seen += 1;
            }
        } else {
            let keys: Vec<(NodeId, &str)> = entries
                .iter()
                .filter_map(|&(k, _)| key_of(k).map(|v| (k, v)))
                .collect();
            let mut seen: std::collections::HashMap<&str, NodeId> =
                std::collections::HashMap::with_capacity(keys.len());
            for (k, v) in &keys {
                match seen.get(v) {
                    Some(first) => found.push(DuplicateKey {
                        first: *first,
                        second: *k,
                        doc,
                    }),
                    None => {
                        seen.insert(v, *k);
                    }
                }
            }
        }
        self.y.duplicates.extend(found);
    }

    fn fail(&mut self, err: SyntaxError) {
        self.stack.clear();
        match self.y.docs.last_mut() {
            Some(doc) if self.doc_start.is_some() || doc.error.is_none() && doc.root.is_none() => {
                doc.error = Some(err);
                doc.root = None;
                doc.span.end = doc.span.end.max(self.text.len() + self.base);
            }
            _ => {
                // The error precedes any document (e.g. a bad directive): it still names a place.
                self.y.docs.push(Document {
                    root: None,
                    span: err.offset..err.offset,
                    error: Some(err),
                });
            }
        }
        self.doc_start = None;
    }
}

impl<'a> Yaml<'a> {
    pub fn node(&self, id: NodeId) -> &Node<'a> {
        &self.nodes[id as usize]
    }

    pub fn span(&self, id: NodeId) -> Range<usize> {
        self.nodes[id as usize].span.clone()
    }

    /// Follow aliases to the node they name.
    pub fn resolve(&self, mut id: NodeId) -> Option<NodeId> {
        for _ in 0..HOP_BUDGET {
            match self.nodes[id as usize].kind {
                NodeKind::Alias { target } => id = target?,
                _ => return Some(id),
            }
        }
        None
    }

    /// Whether this node is (or goes through) an alias: its content is shared with another place.
    pub fn is_alias(&self, id: NodeId) -> bool {
        matches!(self.nodes[id as usize].kind, NodeKind::Alias { .. })
    }

    /// The scalar text of a node (after alias resolution).
    pub fn str(&self, id: NodeId) -> Option<&str> {
        match &self.nodes[self.resolve(id)? as usize].kind {
            NodeKind::Scalar { value, .. } => Some(value.as_ref()),
            _ => None,
        }
    }

    pub fn scalar(&self, id: NodeId) -> Option<(&str, Style, Option<&str>)> {
        match &self.nodes[self.resolve(id)? as usize].kind {
            NodeKind::Scalar { value, style, tag } => {
                Some((value.as_ref(), *style, tag.as_deref()))
            }
            _ => None,
        }
    }

    /// How kubectl sees a scalar, as go-yaml v2 resolves it: YAML 1.1 resolution for plain
    /// untagged scalars, strings for the other untagged ones, and for a standard tag (`!!int`,
    /// `!!float`, `!!bool`, `!!null`) the text resolved and kept when it has the tag's type,
    /// quoted or not (`!!int "100"` is the integer 100). Any other tag gives a string; so does a
    /// standard tag on text of another type, which kubectl refuses to decode at all.
    pub fn resolved(&self, id: NodeId) -> Option<Yaml11> {
        let (value, style, tag) = self.scalar(id)?;
        let Some(tag) = tag else {
            return Some(match style {
                Style::Plain => resolve_plain(value),
                _ => Yaml11::Str,
            });
        };
        Some(match (short_tag(tag), resolve_plain(value)) {
            (Some("int"), r @ Yaml11::Int(_))
            | (Some("float"), r @ Yaml11::Float(_))
            | (Some("bool"), r @ Yaml11::Bool(_))
            | (Some("null"), r @ Yaml11::Null) => r,
            // go-yaml turns an integer into a float for `!!float`, but not one above int64.
            (Some("float"), Yaml11::Int(i)) if i64::try_from(i).is_ok() => Yaml11::Float(i as f64),
            _ => Yaml11::Str,
        })
    }

    pub fn is_mapping(&self, id: NodeId) -> bool {
        self.resolve(id)
            .is_some_and(|r| matches!(self.nodes[r as usize].kind, NodeKind::Mapping { .. }))
    }

    /// The entries of a mapping as kubectl and Helm decode it: one per key, each the entry that
    /// takes effect for that key (see [`Yaml::get_entry`]), in the order they are written.
    pub fn entries(&self, map: NodeId) -> Vec<(NodeId, NodeId)> {
        // Most mappings are small and have no merge key: their entries are the written ones less
        // the earlier copies of repeated keys, found without building a set.
        if let Some(NodeKind::Mapping { entries, .. }) =
            self.resolve(map).map(|r| &self.nodes[r as usize].kind)
        {
            if entries.len() <= 16 && !entries.iter().any(|&(k, _)| self.is_merge_key(k)) {
                let mut out: Vec<(NodeId, NodeId)> = Vec::with_capacity(entries.len());
                for &(k, v) in entries.iter().rev() {
                    let key = self.str(k);
                    if key.is_none() || !out.iter().any(|&(o, _)| self.str(o) == key) {
                        out.push((k, v));
                    }
                }
                out.reverse();
                return out;
            }
        }
        self.entries_merged(map)
    }

    /// [`Yaml::entries`] through merge keys, with a set for wide mappings.
    fn entries_merged(&self, map: NodeId) -> Vec<(NodeId, NodeId)> {
        let mut out = Vec::new();
        let mut budget = HOP_BUDGET;
        let mut seen = HashSet::new();
        self.collect_entries(map, &mut out, &mut seen, &mut budget);
        out.reverse();
        out
    }

    /// Push the writes of `map` latest first (see [`Yaml::get_entry`]), each key only the first
    /// time it is met: that is the write that takes effect. `seen` holds the string keys already
    /// in `out`, a set so that a wide mapping with a merge key stays linear.
    fn collect_entries<'s>(
        &'s self,
        map: NodeId,
        out: &mut Vec<(NodeId, NodeId)>,
        seen: &mut HashSet<&'s str>,
        budget: &mut usize,
    ) {
        let Some(map) = self.resolve(map) else { return };
        let NodeKind::Mapping { entries, .. } = &self.nodes[map as usize].kind else {
            return;
        };
        for &(k, v) in entries.iter().rev() {
            if self.is_merge_key(k) {
                if *budget == 0 {
                    continue;
                }
                *budget -= 1;
                for &m in self.merged_latest_first(&v) {
                    self.collect_entries(m, out, seen, budget);
                }
                continue;
            }
            if let Some(key) = self.str(k) {
                if !seen.insert(key) {
                    continue;
                }
            }
            out.push((k, v));
        }
    }

    /// The mappings a merge key's value writes, the one written last first. go-yaml v2 writes
    /// the mappings of a sequence from its last item to its first, so that earlier items win.
    fn merged_latest_first<'s>(&'s self, value: &'s NodeId) -> &'s [NodeId] {
        match self.resolve(*value).map(|r| &self.nodes[r as usize].kind) {
            Some(NodeKind::Sequence { items, .. }) => items,
            _ => std::slice::from_ref(value),
        }
    }

    /// A merge key as go-yaml reads one: a plain `<<`, untagged or tagged `!!merge`.
    fn is_merge_key(&self, k: NodeId) -> bool {
        matches!(&self.nodes[k as usize].kind,
            NodeKind::Scalar { value, style: Style::Plain, tag } if value == "<<"
                && tag.as_deref().is_none_or(|t| t.ends_with(":merge") || t == "!!merge"))
    }

    /// The entry for `key`: (key node, value node), the one that takes effect when kubectl or
    /// Helm decodes the mapping (go-yaml v2, which tests/heavy/kubectl_yaml.rs checks this against).
    ///
    /// go-yaml fills a map in the order the entries are written, each write replacing the value
    /// before it: a repeated key keeps its last value, and a merge key (`<<`) writes the merged
    /// mappings' entries where it stands, so it overrides the keys written before it and is
    /// overridden by those after it (no "explicit keys win", unlike YAML 1.1's merge spec and
    /// go-yaml v3). So the entry that takes effect is the first met walking the writes backwards.
    pub fn get_entry(&self, map: NodeId, key: &str) -> Option<(NodeId, NodeId)> {
        self.find_entry(map, |k| key_eq(k, key))
    }

    /// The entry that takes effect for a key `is_key` accepts, as [`Yaml::get_entry`] finds it
    /// (of several accepted keys, the last written): for keys that are cheaper to test than to
    /// build.
    pub fn find_entry(
        &self,
        map: NodeId,
        is_key: impl Fn(&str) -> bool,
    ) -> Option<(NodeId, NodeId)> {
        let mut budget = HOP_BUDGET;
        self.last_write(map, &is_key, &mut budget)
    }

    fn last_write(
        &self,
        map: NodeId,
        is_key: &impl Fn(&str) -> bool,
        budget: &mut usize,
    ) -> Option<(NodeId, NodeId)> {
        let r = self.resolve(map)?;
        let NodeKind::Mapping { entries, .. } = &self.nodes[r as usize].kind else {
            return None;
        };
        // Most mappings have no merge key: then this is one backward pass over the keys.
        for &(k, v) in entries.iter().rev() {
            let key = match &self.nodes[k as usize].kind {
                NodeKind::Scalar { value, .. } => value.as_ref(),
                NodeKind::Alias { .. } => match self.str(k) {
                    Some(key) => key,
                    None => continue,
                },
                _ => continue,
            };
            if key == "<<" && self.is_merge_key(k) {
                if *budget == 0 {
                    continue;
                }
                *budget -= 1;
                for &m in self.merged_latest_first(&v) {
                    if let found @ Some(_) = self.last_write(m, is_key, budget) {
                        return found;
                    }
                }
            } else if is_key(key) {
                return Some((k, v));
            }
        }
        None
    }

    /// How often `key` is written in `map`, directly or through merge keys: more than once, and
    /// removing the entry that takes effect would bring another value back.
    pub fn writes_of(&self, map: NodeId, key: &str) -> usize {
        let mut budget = HOP_BUDGET;
        self.count_writes(map, key, &mut budget)
    }

    fn count_writes(&self, map: NodeId, key: &str, budget: &mut usize) -> usize {
        let Some(r) = self.resolve(map) else { return 0 };
        let NodeKind::Mapping { entries, .. } = &self.nodes[r as usize].kind else {
            return 0;
        };
        let mut n = 0;
        for &(k, v) in entries {
            if self.is_merge_key(k) {
                if *budget == 0 {
                    continue;
                }
                *budget -= 1;
                for &m in self.merged_latest_first(&v) {
                    n += self.count_writes(m, key, budget);
                }
            } else if self.str(k).is_some_and(|s| key_eq(s, key)) {
                n += 1;
            }
        }
        n
    }

    /// The entries for several keys, each as [`Yaml::get_entry`] finds it, in one pass over the
    /// mapping: reading a container looks up most of its keys.
    pub fn get_entries<const N: usize>(
        &self,
        map: NodeId,
        keys: [&str; N],
    ) -> [Option<(NodeId, NodeId)>; N] {
        let mut found = [None; N];
        let Some(r) = self.resolve(map) else {
            return found;
        };
        let NodeKind::Mapping { entries, .. } = &self.nodes[r as usize].kind else {
            return found;
        };
        // A merge key, or a key that is an alias, is left to `get_entry`.
        let mut one_by_one = false;
        for &(k, v) in entries {
            let NodeKind::Scalar { value, .. } = &self.nodes[k as usize].kind else {
                one_by_one |= matches!(self.nodes[k as usize].kind, NodeKind::Alias { .. });
                continue;
            };
            if value == "<<" && self.is_merge_key(k) {
                one_by_one = true;
            } else if let Some(i) = keys.iter().position(|key| key_eq(value, key)) {
                // A repeated key: the later write replaces the earlier.
                found[i] = Some((k, v));
            }
        }
        if one_by_one {
            for (slot, key) in found.iter_mut().zip(keys) {
                *slot = self.get_entry(r, key);
            }
        }
        found
    }

    /// Count [`IndentSteps`] over `nodes` (all of this tree's or a slice of them). `text` is the
    /// text the spans index (with its byte-order mark, if any).
    pub fn walk_indent_steps<'n>(
        &self,
        text: &str,
        nodes: impl IntoIterator<Item = &'n Node<'a>>,
    ) -> IndentSteps
    where
        'a: 'n,
    {
        let bytes = text.as_bytes();
        let mut steps = IndentSteps::default();
        // Positions are found by looking at the few bytes around them (a key and its nested value
        // are a short line apart), with plain loops: memchr's set-up costs more at these lengths.
        let col = |pos: usize| {
            bytes[..pos]
                .iter()
                .rev()
                .position(|&b| b == b'\n')
                .unwrap_or(pos)
        };
        for node in nodes {
            let NodeKind::Mapping {
                entries,
                flow: false,
            } = &node.kind
            else {
                continue;
            };
            for &(k, v) in entries {
                let key_at = self.span(k).start;
                // How much further right than the key the nested value starts, when it starts
                // on a later line; the last line break before it is also where its line starts.
                let step = |at: usize| {
                    let nl = bytes.get(key_at..at)?.iter().rposition(|&b| b == b'\n')?;
                    Some((at - (key_at + nl + 1)).saturating_sub(col(key_at)))
                };
                match &self.node(v).kind {
                    NodeKind::Mapping {
                        entries: inner,
                        flow: false,
                    } => {
                        if let Some(d) =
                            inner.first().and_then(|&(ik, _)| step(self.span(ik).start))
                        {
                            if (1..9).contains(&d) {
                                steps.mappings[d] += 1;
                            }
                        }
                    }
                    NodeKind::Sequence { items, flow: false } if !items.is_empty() => {
                        // The first dash starts the line the sequence starts on: a block
                        // sequence starts at that dash, an indentless one (`key:` then `- item`
                        // at the key's column) right after it. (Looking back from the first item
                        // instead mistook the `-` of a `>-` block scalar for the dash, and
                        // missed the dash before a `|` one.)
                        let start = self.span(v).start;
                        let line = bytes[..start]
                            .iter()
                            .rposition(|&b| b == b'\n')
                            .map_or(0, |i| i + 1);
                        let dash = bytes[line..start]
                            .iter()
                            .chain(bytes.get(start))
                            .position(|&b| b != b' ')
                            .map(|i| line + i)
                            .filter(|&at| bytes[at] == b'-');
                        if let Some(d) = dash.and_then(step) {
                            if d < 9 {
                                steps.sequences[d] += 1;
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
        steps
    }

    pub fn get(&self, map: NodeId, key: &str) -> Option<NodeId> {
        self.get_entry(map, key).map(|(_, v)| v)
    }

    /// Follow a dotted path of mapping keys.
    pub fn path(&self, mut node: NodeId, path: &[&str]) -> Option<NodeId> {
        for k in path {
            node = self.get(node, k)?;
        }
        Some(node)
    }

    pub fn get_str(&self, map: NodeId, key: &str) -> Option<&str> {
        self.get(map, key).and_then(|v| self.str(v))
    }

    /// Items of a sequence (after alias resolution); empty for anything else.
    pub fn items(&self, seq: NodeId) -> &[NodeId] {
        match self.resolve(seq).map(|r| &self.nodes[r as usize].kind) {
            Some(NodeKind::Sequence { items, .. }) => items,
            _ => &[],
        }
    }

    /// Whether the node is a null (empty value, `~`, `null`).
    pub fn is_null(&self, id: NodeId) -> bool {
        matches!(self.resolved(id), Some(Yaml11::Null))
    }
}

/// Whether two keys are equal, compared inline: keys are short, and most keys of a mapping have
/// the length of some wanted key, so `==` called memcmp for most of them, which costs more than
/// comparing two words (docs/performance.md).
#[inline(always)]
pub fn key_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let n = a.len();
    if n != b.len() {
        return false;
    }
    // Two overlapping loads from each end cover every byte of lengths up to twice their size.
    let u64_at =
        |s: &[u8], at: usize| u64::from_le_bytes(s[at..at + 8].try_into().unwrap_or([0; 8]));
    let u32_at =
        |s: &[u8], at: usize| u32::from_le_bytes(s[at..at + 4].try_into().unwrap_or([0; 4]));
    match n {
        0 => true,
        1..4 => a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1],
        4..8 => u32_at(a, 0) == u32_at(b, 0) && u32_at(a, n - 4) == u32_at(b, n - 4),
        8..=16 => u64_at(a, 0) == u64_at(b, 0) && u64_at(a, n - 8) == u64_at(b, n - 8),
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_compare_as_strings_do() {
        // Every length around the load sizes, equal and differing at each place.
        for len in 0..40 {
            let a: String = (0..len)
                .map(|i| char::from(b'a' + (i % 26) as u8))
                .collect();
            assert!(key_eq(&a, &a.clone()));
            assert!(!key_eq(&a, &format!("{a}x")) && !key_eq(&format!("{a}x"), &a));
            for at in 0..len {
                let mut b = a.clone().into_bytes();
                b[at] = b'Z';
                let b = String::from_utf8(b).unwrap();
                assert!(!key_eq(&a, &b), "{a} {b}");
            }
        }
        assert!(key_eq("é", "é") && !key_eq("é", "è"));
    }

    #[test]
    fn spans_point_at_scalars() {
        let text = "a:\n  b: 512Mi\n  c: \"x\"\n";
        let y = parse(text, 0);
        let root = y.docs[0].root.unwrap();
        let b = y.path(root, &["a", "b"]).unwrap();
        assert_eq!(&text[y.span(b)], "512Mi");
        let c = y.path(root, &["a", "c"]).unwrap();
        assert_eq!(&text[y.span(c)], "\"x\"");
        assert_eq!(y.str(c), Some("x"));
    }

    #[test]
    fn aliases_and_merge_keys() {
        let text = "base: &b {cpu: 1, memory: 1Gi}\nx:\n  <<: *b\n  cpu: 2\ny: *b\n";
        let y = parse(text, 0);
        let root = y.docs[0].root.unwrap();
        let x = y.get(root, "x").unwrap();
        assert_eq!(y.get_str(x, "cpu"), Some("2"));
        assert_eq!(y.get_str(x, "memory"), Some("1Gi"));
        let yy = y.get(root, "y").unwrap();
        assert!(y.is_alias(yy));
        assert_eq!(y.get_str(yy, "memory"), Some("1Gi"));
        assert!(y.duplicates.is_empty());
    }

    #[test]
    fn entries_of_small_mappings_without_a_set_are_the_same() {
        let text = "a: {x: 1, x: 2, y: 3, ? [k] : 4, ? [k] : 5, z: 6}\n\
                    b: {p: 1, q: 2, p: 3}\n\
                    c: &c {u: 1}\n\
                    d: *c\n\
                    e: {<<: *c, u: 2, v: 3}\n";
        let y = parse(text, 0);
        let root = y.docs[0].root.unwrap();
        let mut maps = vec![root];
        maps.extend(y.entries_merged(root).into_iter().map(|(_, v)| v));
        for map in maps {
            assert_eq!(
                y.entries(map),
                y.entries_merged(map),
                "{}",
                &text[y.span(map)]
            );
        }
        let a = y.get(root, "a").unwrap();
        assert_eq!(y.entries(a).len(), 5);
    }

    #[test]
    fn several_keys_in_one_pass_find_what_each_lookup_finds() {
        // Explicit keys, duplicates, merge keys before and after, a merge-only key, a key that
        // is not a string, an alias of a mapping and a missing key.
        let text = "base: &b {cpu: 1, memory: 1Gi, extra: m}\n\
                    x:\n  <<: *b\n  cpu: 2\n  cpu: 3\n\
                    w:\n  cpu: 4\n  <<: *b\n\
                    v: {? [cpu] : 1, memory: 5, memory: 6}\n\
                    u: *b\n\
                    t: plain\n";
        let y = parse(text, 0);
        let root = y.docs[0].root.unwrap();
        let keys = ["cpu", "memory", "extra", "absent", "<<"];
        let mut checked = 0;
        for (_, map) in y.entries(root) {
            let one_pass = y.get_entries(map, keys);
            for (found, key) in one_pass.iter().zip(keys) {
                assert_eq!(
                    *found,
                    y.get_entry(map, key),
                    "{key} in {}",
                    &text[y.span(map)]
                );
                checked += usize::from(found.is_some());
            }
        }
        assert!(checked >= 12, "{checked}");
    }

    #[test]
    fn duplicate_keys_and_errors_per_document() {
        let text = "a: 1\na: 2\n---\nb: [1\n---\nc: 3\n";
        let y = parse(text, 0);
        assert_eq!(y.duplicates.len(), 1);
        assert_eq!(&text[y.span(y.duplicates[0].second)], "a");
        assert_eq!(y.docs.len(), 3);
        assert!(y.docs[1].error.is_some());
        let root = y.docs[2].root.unwrap();
        assert_eq!(y.get_str(root, "c"), Some("3"));
    }

    #[test]
    fn streams_kubectl_cuts_differently_are_read_as_kubectl_reads_them() {
        // `---#` ends a document for kubectl; its comment is kept, in the document it starts.
        let text = "a: 1\n---# second\nb: |\n  x\n---\nc: 3\n";
        let y = parse(text, 0);
        assert!(y.docs.iter().all(|d| d.error.is_none()), "{:?}", y.docs);
        let roots: Vec<NodeId> = y.docs.iter().filter_map(|d| d.root).collect();
        assert_eq!(roots.len(), 3);
        assert_eq!(y.get_str(roots[1], "b"), Some("x\n"));
        assert_eq!(&text[y.span(y.get(roots[2], "c").unwrap())], "3");
        assert_eq!(y.comments.len(), 1);
        assert_eq!(&text[y.comments[0].span.clone()], "# second");
        assert_eq!(y.comments[0].doc, 1);

        // A byte-order mark right after a cut starts a piece, which go-yaml reads as a stream.
        let text = "a: 1\n--- # c\n\u{feff}b: 2\n";
        let y = parse(text, 7);
        let root = y.docs.iter().filter_map(|d| d.root).nth(1).unwrap();
        let b = y.get(root, "b").unwrap();
        assert_eq!(
            y.span(b),
            7 + text.find('2').unwrap()..8 + text.find('2').unwrap()
        );
        assert_eq!(y.comments[0].span.start, 7 + text.find('#').unwrap());

        // First in the stream, or right after another cut, the line is text for kubectl too.
        for text in ["---# first\na: 1\n", "a: 1\n---\n---#x\nb: 2\n"] {
            assert!(kubectl_cuts(text).is_none(), "{text:?}");
            assert!(parse(text, 0).docs.iter().any(|d| d.error.is_some()));
        }
        // Everything else is cut alike by YAML and kubectl, and is parsed as one stream.
        assert!(kubectl_cuts("a: 1\n--- # c\nb: 2\n---\n").is_none());
        assert!(kubectl_cuts("a: 1\n----\n--- {x: 1}\n").is_none());
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let text = "[".repeat(10_000);
        let y = parse(&text, 0);
        assert!(y.docs.iter().any(|d| d.error.is_some()) || y.stream_error.is_some());
    }

    #[test]
    fn alias_bomb_is_cheap() {
        let mut text = String::from("a: &a [x, x, x, x, x, x, x, x, x]\n");
        for i in 1..12 {
            let prev = (b'a' + i - 1) as char;
            let cur = (b'a' + i) as char;
            text.push_str(&format!(
                "{cur}: &{cur} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]\n"
            ));
        }
        let y = parse(&text, 0);
        assert!(y.nodes.len() < 200);
    }
}
