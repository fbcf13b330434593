//! The fast path of [`super::parse`]: a hand-written scanner for the block-style YAML that nearly
//! every manifest is written in. It builds the same tree as the reference parser, node for node and
//! span for span, through the same [`Builder`].
//!
//! Why it exists: the reference parser (granit-parser) is a complete YAML 1.2 parser. It queues
//! tokens, keeps simple-key candidates and turns everything into events. That was more than half
//! of a lint run (a perf profile of the 10,000-document benchmark). Manifests use a small part of
//! YAML, and that part can be read line by line.
//!
//! What it reads: `---` documents, comments, block mappings and sequences (compact `- key: v` and
//! indentless `key:\n- item` included), plain scalars (over several lines too, as the long
//! descriptions of generated CRDs come), single-quoted scalars (over several lines too), double-quoted ones
//! on one line, literal and folded block scalars, and flow collections on one line.
//!
//! What it declines: anything else (tabs, anchors, aliases, tags, directives, `...`, multi-line
//! double-quoted scalars, a plain scalar's later line that could be read otherwise, multi-line flow
//! collections, `?` keys, control characters) and every syntax
//! error. Then [`parse`] returns `None`. [`parse_mixed`] then reads a stream of several documents
//! one document at a time, the declined ones with the reference parser (see [`parse_documents`]);
//! when the reference parser finds an error in any of them, the whole file is parsed by it, so
//! error messages always come from one pass of one parser.
//!
//! tests/fast/yaml_fast.rs compares the two trees on the fixtures, the shared corpus, the benchmark corpus
//! and generated documents.

use std::borrow::Cow;

use super::{Builder, IndentSteps, NodeId, NodeKind, Style, Yaml};

/// The reference parser rejects deeper nesting; well below it, the fast path hands over.
const DEPTH_LIMIT: usize = 64;
/// The reference parser rejects longer implicit keys.
const KEY_LIMIT: usize = 1024;

/// The input is outside the subset (or not valid YAML): parse it with the reference parser.
struct Decline;
type R<T> = Result<T, Decline>;

/// The next line with content, after blank lines and comment lines.
#[derive(Clone, Copy)]
struct Next {
    /// Its first non-space byte (the text length at the end of the input).
    pos: usize,
    /// Its indentation in spaces.
    indent: usize,
    /// At the end of the input, or at a `---` line: every open collection ends here.
    end: bool,
}

impl Next {
    /// Whether this line continues a collection indented `col` (rather than ending it).
    fn within(&self, col: usize) -> bool {
        !self.end && self.indent > col
    }
}

pub(super) fn parse(text: &str, base: usize) -> Option<Yaml<'_>> {
    if !simple_text(text.as_bytes()) {
        return None;
    }
    let mut p = Scan {
        t: text,
        b: text.as_bytes(),
        base,
        out: Builder::new(text, base),
        depth: 0,
    };
    p.out.y.indent_steps = Some(IndentSteps::default());
    p.stream().ok()?;
    Some(p.out.y)
}

/// Below this size a text is parsed in one piece.
const PIECE: usize = 512 * 1024;

/// A large stream (one `helm template` of a whole platform) is cut at `---` lines into pieces of
/// about [`PIECE`] bytes, parsed on separate threads and joined. A `---` at the start of a line
/// ends every scalar and collection, so each piece reads exactly as it would in one pass; the
/// joined tree is that tree (tests/fast/yaml_fast.rs compares them). Any piece declining makes the
/// whole text decline.
pub(super) fn parse_pieces(text: &str, base: usize) -> Option<Yaml<'_>> {
    parse_pieces_with(text, base, cut_points(text.as_bytes()), parse)
}

/// [`parse_pieces`], with a piece the fast path declines read document by document (see
/// [`parse_documents`]): what [`super::parse`] uses.
pub(super) fn parse_mixed(text: &str, base: usize) -> Option<Yaml<'_>> {
    let cuts = cut_points(text.as_bytes());
    if cuts.len() < 2 {
        // One document the fast path declines gains nothing from being read alone.
        return parse(text, base).or_else(|| parse_documents(text, base, 2));
    }
    parse_pieces_with(text, base, cuts, |piece, base| {
        parse(piece, base).or_else(|| parse_documents(piece, base, 1))
    })
}

/// `text` cut at `cuts` (see [`cut_points`]), each piece read by `parse_piece` on its own thread.
fn parse_pieces_with(
    text: &str,
    base: usize,
    cuts: Vec<usize>,
    parse_piece: fn(&str, usize) -> Option<Yaml<'_>>,
) -> Option<Yaml<'_>> {
    use rayon::prelude::*;
    if cuts.len() < 2 {
        return parse_piece(text, base);
    }
    let bounds: Vec<(usize, usize)> = cuts
        .iter()
        .zip(cuts.iter().skip(1).chain(std::iter::once(&text.len())))
        .map(|(&a, &b)| (a, b))
        .collect();
    let pieces: Vec<Option<Yaml>> = bounds
        .par_iter()
        .map(|&(a, b)| parse_piece(&text[a..b], base + a))
        .collect();
    let mut pieces = pieces
        .into_iter()
        .collect::<Option<Vec<Yaml>>>()?
        .into_iter();
    let mut all = pieces.next()?;
    let rest: usize = pieces.as_slice().iter().map(|p| p.nodes.len()).sum();
    all.nodes.reserve_exact(rest);
    for piece in pieces {
        join(&mut all, piece);
    }
    Some(all)
}

/// A text the fast path declines, read one document at a time: the documents it reads take the
/// fast path, and only the others the reference parser, each on its own text. One CRD with a
/// multi-line description no longer sends a whole `helm template` stream to the slower parser.
///
/// Pieces are cut at `---` lines, as in [`parse_pieces`], so each reads as it would in one pass.
/// None when the text has fewer than `min_docs` documents, or when the reference parser finds an
/// error in any document: the whole text then goes to the reference parser, whose messages (and
/// whose view of what follows an error) stay those of one pass.
fn parse_documents(text: &str, base: usize, min_docs: usize) -> Option<Yaml<'_>> {
    let b = text.as_bytes();
    let mut cuts = document_starts(b, 0);
    // Comments before the first `---` belong to the first document: they stay in its piece.
    if cuts.len() > 1 && only_comments(&b[..cuts[1]]) {
        cuts.remove(1);
    }
    if cuts.len() < min_docs {
        return None;
    }
    let mut all: Option<Yaml<'_>> = None;
    for (i, &a) in cuts.iter().enumerate() {
        let end = cuts.get(i + 1).copied().unwrap_or(text.len());
        let piece = &text[a..end];
        let y = match parse(piece, base + a) {
            Some(y) => y,
            None => {
                let y = super::parse_reference(piece, base + a);
                if y.stream_error.is_some() || y.docs.iter().any(|d| d.error.is_some()) {
                    return None;
                }
                y
            }
        };
        match all.as_mut() {
            None => all = Some(y),
            Some(all) => join(all, y),
        }
    }
    all
}

/// Whether a text holds nothing but blank lines and comment lines.
fn only_comments(b: &[u8]) -> bool {
    b.split(|&c| c == b'\n').all(|line| {
        let line = line.trim_ascii_start();
        line.is_empty() || line == b"\r" || line[0] == b'#'
    })
}

/// Offsets where pieces start: 0, then the start of the first `---` line after each [`PIECE`].
fn cut_points(b: &[u8]) -> Vec<usize> {
    document_starts(b, PIECE)
}

/// 0, then the start of each document-start line (`---` alone or followed by a space) that begins
/// at least `gap` bytes after the previous one.
pub(super) fn document_starts(b: &[u8], gap: usize) -> Vec<usize> {
    let mut cuts = vec![0];
    let mut from = gap;
    while from < b.len() {
        let Some(i) = memchr::memmem::find(&b[from..], b"\n---") else {
            break;
        };
        let at = from + i + 1;
        if matches!(b.get(at + 3), None | Some(b' ' | b'\n' | b'\r')) {
            cuts.push(at);
            from = at + gap;
        } else {
            from = at + 3;
        }
    }
    cuts
}

/// Append a piece's tree, shifting its node ids and document numbers past what is already there.
pub(super) fn join<'a>(all: &mut Yaml<'a>, piece: Yaml<'a>) {
    all.has_aliases |= piece.has_aliases;
    // The reference parser counts no indentation steps: then they are counted from the tree.
    match (all.indent_steps.as_mut(), &piece.indent_steps) {
        (Some(all), Some(piece)) => all.add(piece),
        _ => all.indent_steps = None,
    }
    let shift = all.nodes.len() as NodeId;
    let docs = all.docs.len();
    // Copied on every thread, each into its own part of the list: the copy lands in fresh memory,
    // which the kernel zeroes first, and on one thread that was a large stream's longest wait.
    use rayon::prelude::*;
    all.nodes
        .par_extend(piece.nodes.into_par_iter().map(|mut node| {
            match &mut node.kind {
                NodeKind::Mapping { entries, .. } => {
                    for (k, v) in entries {
                        *k += shift;
                        *v += shift;
                    }
                }
                NodeKind::Sequence { items, .. } => items.iter_mut().for_each(|i| *i += shift),
                NodeKind::Alias { target } => {
                    if let Some(t) = target {
                        *t += shift;
                    }
                }
                NodeKind::Scalar { .. } => {}
            }
            node
        }));
    all.docs.extend(piece.docs.into_iter().map(|mut d| {
        d.root = d.root.map(|r| r + shift);
        d
    }));
    // Every piece but the first starts with its `---`, so its comments follow a document start
    // of its own and their numbers only shift.
    all.comments.extend(piece.comments.into_iter().map(|mut c| {
        c.doc += docs;
        c
    }));
    all.duplicates
        .extend(piece.duplicates.into_iter().map(|mut d| {
            d.first += shift;
            d.second += shift;
            d.doc += docs;
            d
        }));
}

/// Only printable characters, `\n` and `\r\n` line breaks, and no tabs: everything else (and a
/// byte-order mark inside the text) is left to the reference parser.
fn simple_text(b: &[u8]) -> bool {
    const CHUNK: usize = 32;
    let simple = |x: u8| (0x20..0x7f).contains(&x) || x == b'\n';
    let mut i = 0;
    while i < b.len() {
        if i + CHUNK <= b.len() && b[i..i + CHUNK].iter().fold(true, |a, &x| a & simple(x)) {
            i += CHUNK;
            continue;
        }
        match b[i] {
            0x20..=0x7e | b'\n' => i += 1,
            b'\r' if b.get(i + 1) == Some(&b'\n') => i += 2,
            // Valid UTF-8 is given: look at the sequence, decline C1 controls (NEL among them),
            // the line and paragraph separators, a byte-order mark and the non-characters.
            0xc2 if matches!(b.get(i + 1), Some(0x80..=0x9f)) => return false,
            0xe2 if b.get(i + 1) == Some(&0x80) && matches!(b.get(i + 2), Some(0xa8 | 0xa9)) => {
                return false
            }
            0xef if b.get(i + 1) == Some(&0xbb) && b.get(i + 2) == Some(&0xbf) => return false,
            0xef if b.get(i + 1) == Some(&0xbf) && matches!(b.get(i + 2), Some(0xbe | 0xbf)) => {
                return false
            }
            0xc0..=0xdf => i += 2,
            0xe0..=0xef => i += 3,
            0xf0..=0xf7 => i += 4,
            _ => return false,
        }
    }
    true
}

struct Scan<'a> {
    t: &'a str,
    b: &'a [u8],
    base: usize,
    out: Builder<'a, 'a>,
    depth: usize,
}

const CONTENT: u8 = 0;
const SPACE: u8 = 1;
const STOP: u8 = 2;

/// How [`Scan::plain_line`] treats each byte: content, a space (content only if more follows), or
/// one that may end the scalar (`\n`, `\r`, `#`, `:`).
static PLAIN_LINE: [u8; 256] = {
    let mut t = [CONTENT; 256];
    t[b' ' as usize] = SPACE;
    t[b'\n' as usize] = STOP;
    t[b'\r' as usize] = STOP;
    t[b'#' as usize] = STOP;
    t[b':' as usize] = STOP;
    t
};

fn is_break(x: u8) -> bool {
    x == b'\n' || x == b'\r'
}

impl<'a> Scan<'a> {
    fn at(&self, p: usize) -> u8 {
        self.b.get(p).copied().unwrap_or(b'\n')
    }

    fn eol(&self, p: usize) -> bool {
        p >= self.b.len() || is_break(self.b[p])
    }

    fn spaces(&self, mut p: usize) -> usize {
        while self.b.get(p) == Some(&b' ') {
            p += 1;
        }
        p
    }

    /// Where the line holding `p` ends (before `\r\n` or `\n`).
    fn line_end(&self, p: usize) -> usize {
        let e = self.b[p..]
            .iter()
            .position(|&x| x == b'\n')
            .map_or(self.b.len(), |i| p + i);
        if e > p && self.b[e - 1] == b'\r' {
            e - 1
        } else {
            e
        }
    }

    fn span(&self, r: std::ops::Range<usize>) -> std::ops::Range<usize> {
        r.start + self.base..r.end + self.base
    }

    /// A dash that starts a block sequence entry.
    fn is_dash(&self, p: usize) -> bool {
        self.at(p) == b'-'
            && (p + 1 >= self.b.len() || matches!(self.b[p + 1], b' ' | b'\n' | b'\r'))
    }

    fn comment(&mut self, hash: usize) -> usize {
        let end = self.line_end(hash);
        self.out.comment(self.span(hash..end));
        end
    }

    /// The rest of the line after a token: spaces and an optional comment. Then the next line with
    /// content.
    fn finish_line(&mut self, p: usize) -> R<Next> {
        let end = self.end_of_line(p)?;
        self.lines_from(end)
    }

    /// Spaces and an optional comment up to the line break; returns where the line ends.
    fn end_of_line(&mut self, p: usize) -> R<usize> {
        let q = self.spaces(p);
        let q = if self.at(q) == b'#' && q > p {
            self.comment(q)
        } else {
            q
        };
        if !self.eol(q) {
            return Err(Decline);
        }
        Ok(q)
    }

    /// From a line break (or the start), skip blank and comment lines to the next content line.
    fn lines_from(&mut self, mut p: usize) -> R<Next> {
        let n = self.b.len();
        loop {
            // Step over the line break.
            if p < n && self.b[p] == b'\r' {
                p += 1;
            }
            if p < n && self.b[p] == b'\n' {
                p += 1;
            }
            let start = p;
            p = self.spaces(p);
            if p >= n {
                return Ok(Next {
                    pos: n,
                    indent: 0,
                    end: true,
                });
            }
            match self.b[p] {
                b'\n' | b'\r' => continue,
                b'#' => {
                    p = self.comment(p);
                    continue;
                }
                _ => {}
            }
            let indent = p - start;
            if indent == 0 && (self.b[p] == b'-' || self.b[p] == b'.') {
                let three = &self.b[p..n.min(p + 3)];
                if (three == b"---" || three == b"...")
                    && (p + 3 >= n || matches!(self.b[p + 3], b' ' | b'\n' | b'\r'))
                {
                    if three == b"..." {
                        return Err(Decline);
                    }
                    return Ok(Next {
                        pos: p,
                        indent: 0,
                        end: true,
                    });
                }
            }
            if indent == 0 && self.b[p] == b'%' {
                return Err(Decline);
            }
            return Ok(Next {
                pos: p,
                indent,
                end: false,
            });
        }
    }

    fn stream(&mut self) -> R<()> {
        let n = self.b.len();
        let mut next = self.lines_from(0)?;
        while next.pos < n {
            let at = next.pos;
            if next.end {
                // `---`
                self.out.doc_start(self.span(at..at + 3));
                next = self.finish_line(at + 3)?;
                if next.end {
                    // An empty document: a null at the end of its marker.
                    let r = self.span(at + 3..at + 3);
                    self.out.scalar(Cow::Borrowed("~"), Style::Plain, r.clone());
                    self.out.doc_end(r);
                    continue;
                }
            } else {
                self.out.doc_start(self.span(at..at));
            }
            // A scalar or flow document is rare in manifests, and its end is placed differently.
            if !self.is_dash(next.pos) && !self.is_key(next.pos) {
                return Err(Decline);
            }
            next = self.node(next.pos, next.indent, None, true)?;
            if !next.end {
                return Err(Decline);
            }
            self.out.doc_end(self.span(next.pos..next.pos));
        }
        Ok(())
    }

    /// The node whose first token is at `at` (column `col`). Lines after it must be indented no
    /// more than `parent` (the enclosing collection's column; `None` at the root), or they would
    /// continue a scalar. `block`: whether a block collection may start here (not after `key: `
    /// on the same line). Returns the next content line after the node.
    fn node(&mut self, at: usize, col: usize, parent: Option<usize>, block: bool) -> R<Next> {
        if self.is_dash(at) {
            if !block {
                return Err(Decline);
            }
            return self.sequence(at, col, false);
        }
        let next = match self.b[at] {
            b'"' | b'\'' => {
                let one_line = self.quoted(at);
                let several = one_line.is_err() && self.b[at] == b'\'';
                let (end, value) = match (one_line, parent) {
                    (Ok(found), _) => found,
                    (Err(_), Some(parent)) if several => self.single_quoted_lines(at, parent)?,
                    (Err(e), _) => return Err(e),
                };
                let after = self.spaces(end);
                if self.at(after) == b':' && self.colon_ends(after + 1) {
                    // A key is on one line.
                    if !block || several {
                        return Err(Decline);
                    }
                    return self.mapping(at, col);
                }
                self.quoted_scalar(at, end, value);
                self.finish_line(end)?
            }
            b'[' | b'{' => {
                let end = self.flow(at)?;
                self.finish_line(end)?
            }
            b'|' | b'>' => self.block_scalar(at, parent)?,
            _ => {
                if !plain_start(self.b, at) {
                    return Err(Decline);
                }
                let (end, key) = self.plain_line(at);
                if key {
                    if !block {
                        return Err(Decline);
                    }
                    return self.mapping(at, col);
                }
                match parent.and_then(|p| self.plain_lines(at, end, p)) {
                    Some((end, value)) => {
                        let r = self.span(at..end);
                        self.out.scalar(Cow::Owned(value), Style::Plain, r);
                        self.finish_line(end)?
                    }
                    None => {
                        self.plain(at, end);
                        self.finish_line(end)?
                    }
                }
            }
        };
        // A more indented line would continue the scalar over several lines.
        if next.within(parent.unwrap_or(0)) || parent.is_none() && !next.end {
            return Err(Decline);
        }
        Ok(next)
    }

    /// Where a scalar broken at the line feed `eol` goes on: the first content of the next line
    /// that is not empty, and how many empty lines came between. None at the end of the text, or
    /// when that line is indented no more than `parent` (the scalar ended at the break).
    fn continued(&self, eol: usize, parent: usize) -> Option<(usize, usize)> {
        let (mut line, mut empty) = (eol + 1, 0);
        let start = loop {
            let s = self.spaces(line);
            if self.b.get(s) != Some(&b'\n') {
                break s;
            }
            empty += 1;
            line = s + 1;
        };
        (start < self.b.len() && start - line > parent).then_some((start, empty))
    }

    /// A plain scalar continued on the lines after its first (`at..end`), each indented more
    /// than `parent`, as the long descriptions of generated CRDs come: where it ends and
    /// its value, the lines folded into one (a line break is a space, and each empty line
    /// between two lines a line break). None when the next line does not continue it. Anything
    /// on a later line that could be read otherwise (a comment, `: `, a `:` or `#` first, a
    /// carriage return) is left to the reference parser, as the line after a comment is.
    fn plain_lines(&self, at: usize, end: usize, parent: usize) -> Option<(usize, String)> {
        let b = self.b;
        let mut value: Option<String> = None;
        let mut last = end;
        loop {
            // The rest of the line must be spaces: a comment ends the scalar.
            let eol = self.spaces(last);
            if b.get(eol) != Some(&b'\n') {
                break;
            }
            let Some((start, empty)) = self.continued(eol, parent) else {
                break;
            };
            if matches!(b[start], b'#' | b':' | b'\r') {
                return None;
            }
            let (next_end, key) = self.plain_line(start);
            let rest = self.spaces(next_end);
            if key || self.at(rest) != b'\n' || next_end == start {
                return None;
            }
            let v = value.get_or_insert_with(|| self.t[at..end].to_string());
            fold(v, empty);
            v.push_str(&self.t[start..next_end]);
            last = next_end;
        }
        value.map(|v| (last, v))
    }

    fn plain(&mut self, at: usize, end: usize) {
        let r = self.span(at..end);
        self.out
            .scalar(Cow::Borrowed(&self.t[at..end]), Style::Plain, r);
    }

    fn quoted_scalar(&mut self, at: usize, end: usize, value: Cow<'a, str>) {
        let style = if self.b[at] == b'"' {
            Style::DoubleQuoted
        } else {
            Style::SingleQuoted
        };
        self.out.scalar(value, style, self.span(at..end));
    }

    /// Whether a document's first token is a mapping key.
    fn is_key(&self, at: usize) -> bool {
        match self.b[at] {
            b'"' | b'\'' => self.quoted(at).is_ok_and(|(end, _)| {
                let colon = self.spaces(end);
                self.at(colon) == b':' && self.colon_ends(colon + 1)
            }),
            _ => plain_start(self.b, at) && self.plain_line(at).1,
        }
    }

    /// A plain scalar on one line from `at`: its end (before trailing spaces and a comment), and
    /// whether it is a mapping key (followed by `: ` or `:` at the end of the line).
    fn plain_line(&self, at: usize) -> (usize, bool) {
        let b = self.b;
        let mut p = at;
        let mut end = at;
        while p < b.len() {
            // Most bytes are content: one table load decides, and only the few that can end
            // the scalar are looked at again.
            match PLAIN_LINE[b[p] as usize] {
                CONTENT => end = p + 1,
                SPACE => {}
                _ => match b[p] {
                    b'\n' | b'\r' => break,
                    b'#' if p > at && b[p - 1] == b' ' => break,
                    b':' if self.colon_ends(p + 1) => return (end, true),
                    _ => end = p + 1,
                },
            }
            p += 1;
        }
        (end, false)
    }

    /// Whether a `:` followed by `p` is a mapping value indicator in block context.
    fn colon_ends(&self, p: usize) -> bool {
        p >= self.b.len() || matches!(self.b[p], b' ' | b'\n' | b'\r')
    }

    fn enter(&mut self) -> R<()> {
        self.depth += 1;
        if self.depth > DEPTH_LIMIT {
            return Err(Decline);
        }
        Ok(())
    }

    fn mapping(&mut self, at: usize, col: usize) -> R<Next> {
        self.enter()?;
        let kind = NodeKind::Mapping {
            entries: super::Entries::new(),
            flow: false,
        };
        self.out.open(kind, self.span(at..at), 0);
        let mut key = at;
        let next = loop {
            let colon = self.key(key)?;
            let v = self.spaces(colon + 1);
            let next = if self.eol(v) || self.b[v] == b'#' {
                let next = self.finish_line(colon + 1)?;
                if next.within(col) {
                    let value = self.out.y.nodes.len();
                    let after = self.node(next.pos, next.indent, Some(col), true)?;
                    self.count_step(value, next.indent - col);
                    after
                } else if !next.end && next.indent == col && self.is_dash(next.pos) {
                    // An indentless sequence: `key:` then `- item` at the key's column.
                    let value = self.out.y.nodes.len();
                    let after = self.sequence(next.pos, col, true)?;
                    self.count_step(value, 0);
                    after
                } else {
                    let r = self.span(colon..colon);
                    self.out.scalar(Cow::Borrowed("~"), Style::Plain, r);
                    next
                }
            } else {
                self.node(v, col + (v - key), Some(col), false)?
            };
            if next.end || next.indent < col {
                break next;
            }
            if next.indent > col || self.is_dash(next.pos) {
                return Err(Decline);
            }
            key = next.pos;
        };
        self.out.close(self.span(next.pos..next.pos));
        self.depth -= 1;
        Ok(next)
    }

    /// Count the indentation step of a key's value that started on a later line, `step` columns
    /// right of the key (see [`IndentSteps`]): the value is the node made at index `value`, and
    /// a block mapping's first key or a block sequence's first dash starts where it does.
    fn count_step(&mut self, value: usize, step: usize) {
        let y = &mut self.out.y;
        let Some(steps) = y.indent_steps.as_mut() else {
            return;
        };
        match y.nodes.get(value).map(|n| &n.kind) {
            Some(NodeKind::Mapping { flow: false, .. }) if (1..9).contains(&step) => {
                steps.mappings[step] += 1;
            }
            Some(NodeKind::Sequence { flow: false, .. }) if step < 9 => {
                steps.sequences[step] += 1;
            }
            _ => {}
        }
    }

    /// A key at `at` (plain or quoted, on one line): emits it and returns the position of its `:`.
    fn key(&mut self, at: usize) -> R<usize> {
        match self.b[at] {
            b'"' | b'\'' => {
                let (end, value) = self.quoted(at)?;
                let colon = self.spaces(end);
                if self.at(colon) != b':' || !self.colon_ends(colon + 1) || end - at > KEY_LIMIT {
                    return Err(Decline);
                }
                self.quoted_scalar(at, end, value);
                Ok(colon)
            }
            _ => {
                if !plain_start(self.b, at) || self.is_dash(at) {
                    return Err(Decline);
                }
                let (end, key) = self.plain_line(at);
                if !key || end - at > KEY_LIMIT {
                    return Err(Decline);
                }
                let colon = self.spaces(end);
                if self.at(colon) != b':' {
                    return Err(Decline);
                }
                self.plain(at, end);
                Ok(colon)
            }
        }
    }

    /// A block sequence whose first dash is at `at` (column `col`). An indentless one (the value
    /// of a key at the same column) starts, for the reference parser, at its first item's token.
    fn sequence(&mut self, at: usize, col: usize, indentless: bool) -> R<Next> {
        self.enter()?;
        let kind = NodeKind::Sequence {
            items: super::Items::new(),
            flow: false,
        };
        let start = if indentless {
            let v = self.spaces(at + 1);
            if self.eol(v) || self.b[v] == b'#' {
                return Err(Decline);
            }
            v
        } else {
            at
        };
        self.out.open(kind, self.span(start..start), 0);
        let mut dash = at;
        let next = loop {
            let v = self.spaces(dash + 1);
            let next = if self.eol(v) || self.b[v] == b'#' {
                let next = self.finish_line(dash + 1)?;
                if next.within(col) {
                    self.node(next.pos, next.indent, Some(col), true)?
                } else {
                    // The reference parser puts an empty item's null at the end of its line.
                    let e = self.line_end(dash);
                    let r = self.span(e..e);
                    self.out.scalar(Cow::Borrowed("~"), Style::Plain, r);
                    next
                }
            } else {
                self.node(v, col + (v - dash), Some(col), true)?
            };
            if next.end || next.indent < col || next.indent == col && !self.is_dash(next.pos) {
                break next;
            }
            if next.indent > col {
                return Err(Decline);
            }
            dash = next.pos;
        };
        self.out.close(self.span(next.pos..next.pos));
        self.depth -= 1;
        Ok(next)
    }

    /// A single-quoted scalar over several lines, each after the first indented more than
    /// `parent` (a long CRD description that holds `: ` comes so): where it ends and its
    /// value, the lines folded as a plain scalar's are. A line indented less is left to the
    /// reference parser.
    fn single_quoted_lines(&self, at: usize, parent: usize) -> R<(usize, Cow<'a, str>)> {
        let b = self.b;
        let mut value = String::new();
        let (mut p, mut run) = (at + 1, at + 1);
        loop {
            match b.get(p) {
                None | Some(b'\r') => return Err(Decline),
                Some(b'\'') if b.get(p + 1) == Some(&b'\'') => {
                    value.push_str(&self.t[run..p + 1]);
                    p += 2;
                    run = p;
                }
                Some(b'\'') => {
                    value.push_str(&self.t[run..p]);
                    return Ok((p + 1, Cow::Owned(value)));
                }
                Some(b'\n') => {
                    // Spaces before a line break and after it are not part of the value.
                    value.push_str(self.t[run..p].trim_end_matches(' '));
                    let (start, empty) = self.continued(p, parent).ok_or(Decline)?;
                    fold(&mut value, empty);
                    p = start;
                    run = p;
                }
                Some(_) => p += 1,
            }
        }
    }

    /// A quoted scalar that closes on its line: the position after the closing quote and its value.
    fn quoted(&self, at: usize) -> R<(usize, Cow<'a, str>)> {
        let b = self.b;
        let q = b[at];
        let mut p = at + 1;
        let mut owned: Option<String> = None;
        let mut run = p;
        loop {
            if p >= b.len() || is_break(b[p]) {
                return Err(Decline);
            }
            let x = b[p];
            if x == q {
                if q == b'\'' && b.get(p + 1) == Some(&b'\'') {
                    let s = owned.get_or_insert_with(String::new);
                    s.push_str(&self.t[run..p + 1]);
                    p += 2;
                    run = p;
                    continue;
                }
                break;
            }
            if q == b'"' && x == b'\\' {
                let s = owned.get_or_insert_with(String::new);
                s.push_str(&self.t[run..p]);
                p = escape(self.t, p + 1, s)?;
                run = p;
                continue;
            }
            p += 1;
        }
        let value = match owned {
            None => Cow::Borrowed(&self.t[at + 1..p]),
            Some(mut s) => {
                s.push_str(&self.t[run..p]);
                Cow::Owned(s)
            }
        };
        Ok((p + 1, value))
    }

    /// A flow collection that closes on its line; returns the position after it.
    fn flow(&mut self, at: usize) -> R<usize> {
        self.enter()?;
        let map = self.b[at] == b'{';
        let (close, kind) = if map {
            (
                b'}',
                NodeKind::Mapping {
                    entries: super::Entries::new(),
                    flow: true,
                },
            )
        } else {
            (
                b']',
                NodeKind::Sequence {
                    items: super::Items::new(),
                    flow: true,
                },
            )
        };
        self.out.open(kind, self.span(at..at + 1), 0);
        let mut p = self.spaces(at + 1);
        loop {
            if self.at(p) == close {
                break;
            }
            if map {
                p = self.flow_node(p, true)?;
                p = self.spaces(p);
                if self.at(p) != b':' {
                    return Err(Decline);
                }
                p = self.spaces(p + 1);
            }
            p = self.flow_node(p, false)?;
            p = self.spaces(p);
            match self.at(p) {
                b',' => p = self.spaces(p + 1),
                x if x == close => break,
                _ => return Err(Decline),
            }
        }
        self.out.close(self.span(p..p + 1));
        self.depth -= 1;
        Ok(p + 1)
    }

    /// One node inside a flow collection: returns the position after it.
    fn flow_node(&mut self, at: usize, key: bool) -> R<usize> {
        match self.at(at) {
            b'"' | b'\'' => {
                let (end, value) = self.quoted(at)?;
                self.quoted_scalar(at, end, value);
                Ok(end)
            }
            b'[' | b'{' if !key => self.flow(at),
            _ => {
                if !plain_start(self.b, at) || self.at(at) == b'-' && !self.flow_safe(at + 1) {
                    return Err(Decline);
                }
                let b = self.b;
                let mut p = at;
                let mut end = at;
                while p < b.len() {
                    match b[p] {
                        b'\n' | b'\r' | b',' | b'[' | b']' | b'{' | b'}' => break,
                        b'#' if b[p - 1] == b' ' => return Err(Decline),
                        b':' if p + 1 >= b.len() || !self.flow_safe(p + 1) => break,
                        b' ' => {}
                        _ => end = p + 1,
                    }
                    p += 1;
                }
                if end == at || (self.at(p) == b':') != key {
                    return Err(Decline);
                }
                self.plain(at, end);
                Ok(end)
            }
        }
    }

    /// Whether the byte at `p` can follow `-` or `:` inside a flow plain scalar.
    fn flow_safe(&self, p: usize) -> bool {
        !matches!(
            self.at(p),
            b' ' | b'\n' | b'\r' | b',' | b'[' | b']' | b'{' | b'}'
        )
    }

    /// A literal (`|`) or folded (`>`) block scalar whose indicator is at `at`, in a collection at
    /// column `parent`. Declined: explicit indentation, and anything the reference parser treats
    /// specially (leading more-indented lines, a first line indented less than a later one).
    fn block_scalar(&mut self, at: usize, parent: Option<usize>) -> R<Next> {
        let folded = self.b[at] == b'>';
        let mut p = at + 1;
        let strip = match self.at(p) {
            b'-' => {
                p += 1;
                true
            }
            // Keep (`+`) chomping and explicit indentation are rare: left to the reference parser.
            b' ' | b'\n' | b'\r' => false,
            _ => return Err(Decline),
        };
        let mut line_end = self.end_of_line(p)?;
        let min = parent.map_or(0, |c| c + 1);
        let n = self.b.len();
        // (indentation, content start, content end) of each line; blank lines have no content.
        let mut lines: Vec<Option<(usize, usize)>> = Vec::new();
        let mut indent = None;
        let mut resume = n;
        let end = loop {
            if line_end >= n {
                break n;
            }
            let start = line_end + if self.b[line_end] == b'\r' { 2 } else { 1 };
            if start >= n {
                break n;
            }
            let first = self.spaces(start);
            let k = first - start;
            if self.eol(first) {
                // A blank line; before the first content line, or with more spaces than the
                // indentation, the reference parser has rules of its own.
                match indent {
                    Some(i) if k <= i => lines.push(None),
                    _ => return Err(Decline),
                }
                line_end = self.line_end(first);
                continue;
            }
            let i = *indent.get_or_insert(k);
            if k < i {
                // The break before this line: where scanning for the next token resumes.
                resume = start - 1;
                break first;
            }
            if i < min || folded && k > i {
                return Err(Decline);
            }
            line_end = self.line_end(first);
            lines.push(Some((start + i, line_end)));
        };
        let last = lines.iter().rposition(Option::is_some).ok_or(Decline)?;
        let Some((first_start, _)) = lines[0] else {
            return Err(Decline);
        };
        let Some((_, last_end)) = lines[last] else {
            return Err(Decline);
        };
        if last_end >= n {
            // No line break after the last line: chomping has nothing to clip.
            return Err(Decline);
        }
        let mut value = String::new();
        let mut blanks = 0;
        for (idx, l) in lines[..=last].iter().enumerate() {
            match l {
                None => blanks += 1,
                Some((s, e)) => {
                    if idx > 0 {
                        if !folded {
                            value.push('\n');
                            value.extend(std::iter::repeat_n('\n', blanks));
                        } else if blanks == 0 {
                            value.push(' ');
                        } else {
                            value.extend(std::iter::repeat_n('\n', blanks));
                        }
                    }
                    blanks = 0;
                    value.push_str(&self.t[*s..*e]);
                }
            }
        }
        if !strip {
            value.push('\n');
        }
        let style = if folded {
            Style::Folded
        } else {
            Style::Literal
        };
        self.out
            .scalar(Cow::Owned(value), style, self.span(first_start..end));
        self.lines_from(resume)
    }
}

/// Join the next line of a scalar over several lines to `value`, as YAML folds them: a line break
/// is a space, and each of `empty` empty lines between the two a line break.
fn fold(value: &mut String, empty: usize) {
    if empty == 0 {
        value.push(' ');
    }
    value.extend(std::iter::repeat_n('\n', empty));
}

/// Whether a plain scalar may start at `at` (block context): not with an indicator, except `-`
/// before a non-space.
fn plain_start(b: &[u8], at: usize) -> bool {
    let Some(&first) = b.get(at) else {
        return false;
    };
    match first {
        b'-' => !matches!(b.get(at + 1), None | Some(b' ' | b'\n' | b'\r')),
        b'?' | b':' | b',' | b'[' | b']' | b'{' | b'}' | b'#' | b'&' | b'*' | b'!' | b'|'
        | b'>' | b'\'' | b'"' | b'%' | b'@' | b'`' | b' ' | b'\n' | b'\r' => false,
        _ => true,
    }
}

/// One escape sequence in a double-quoted scalar, `p` after the backslash: appends its character
/// and returns the position after it.
fn escape(t: &str, p: usize, out: &mut String) -> R<usize> {
    let b = t.as_bytes();
    let c = match b.get(p) {
        Some(&c) => c,
        None => return Err(Decline),
    };
    let simple = match c {
        b'0' => Some('\0'),
        b'a' => Some('\x07'),
        b'b' => Some('\x08'),
        b't' => Some('\t'),
        b'n' => Some('\n'),
        b'v' => Some('\x0b'),
        b'f' => Some('\x0c'),
        b'r' => Some('\r'),
        b'e' => Some('\x1b'),
        b' ' => Some(' '),
        b'"' => Some('"'),
        b'/' => Some('/'),
        b'\\' => Some('\\'),
        b'N' => Some('\u{85}'),
        b'_' => Some('\u{a0}'),
        b'L' => Some('\u{2028}'),
        b'P' => Some('\u{2029}'),
        _ => None,
    };
    if let Some(ch) = simple {
        out.push(ch);
        return Ok(p + 1);
    }
    let digits = match c {
        b'x' => 2,
        b'u' => 4,
        b'U' => 8,
        _ => return Err(Decline),
    };
    let hex = t.get(p + 1..p + 1 + digits).ok_or(Decline)?;
    if !hex.bytes().all(|h| h.is_ascii_hexdigit()) {
        return Err(Decline);
    }
    let code = u32::from_str_radix(hex, 16).map_err(|_| Decline)?;
    out.push(char::from_u32(code).ok_or(Decline)?);
    Ok(p + 1 + digits)
}
