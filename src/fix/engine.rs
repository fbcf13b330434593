//! The fix loop: lint, take the fixes that do not touch each other, apply them back to front on
//! the text, parse and lint again, until nothing is left to apply. Fixes that collide with one
//! already taken wait for the next round, when their positions are fresh.
//!
//! A round that would leave the text unparseable (or with a new duplicate key) stops everything:
//! the file keeps its original text and the error is reported, so a bad fix never reaches disk.

use crate::diagnostic::Code;
use std::collections::HashSet;
use std::ops::Range;

use serde::Serialize;

use crate::config::Config;
use crate::diagnostic::{Applicability, Diagnostic, Edit};
use crate::lint::{check_file, lint_source, FileReport, Selection};
use crate::source::Source;
use crate::yaml::{self, NodeId, NodeKind, Yaml};

/// More rounds than any file needs: each round applies every fix that does not collide, and a
/// container collects at most a handful of fixes.
const MAX_ROUNDS: usize = 16;

/// One step of a path into a document: a mapping key or a sequence index.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum PathSeg {
    Key(String),
    Index(usize),
}

/// A values key or field path: `base` then `.key`, `[index]`, and `["a.b"]` for keys with dots.
pub fn join_key(base: &str, below: &[PathSeg]) -> String {
    let mut out = base.to_string();
    for s in below {
        match s {
            PathSeg::Key(k) if k.contains('.') => out.push_str(&format!("[{k:?}]")),
            PathSeg::Key(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(k);
            }
            PathSeg::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

/// A fix that was applied.
#[derive(Debug, Clone)]
pub struct Applied {
    pub code: Code,
    pub title: String,
    pub applicability: Applicability,
    pub document: usize,
    /// The object and container the finding was about (None for file-level findings).
    pub object: Option<String>,
    pub container: Option<String>,
    /// The smallest node of the document that holds every edit of the fix: nothing outside it
    /// changed.
    pub path: Vec<PathSeg>,
    /// The part of the original text the fix replaced (for an insertion, an empty range).
    pub original_range: Range<usize>,
}

#[derive(Debug)]
pub struct Outcome {
    /// The text read (empty for a file above the one-tree cap, which is neither fixed nor
    /// diffed).
    pub original: String,
    /// The fixed text; equal to `original` when nothing was applied or the fix failed.
    pub text: String,
    pub applied: Vec<Applied>,
    /// Why the file was left as it was.
    pub error: Option<Failure>,
    /// The lint of the resulting text: what is left.
    pub remaining: FileReport,
}

#[derive(Debug, Clone)]
pub enum Failure {
    /// The input cannot be fixed safely, because it is not valid YAML (its GK000 finding is in
    /// `remaining`) or its line ends are lone carriage returns: never touched.
    Unparseable(String),
    /// A round of fixes would have left invalid YAML: a bug in a fix, reported as an error.
    Broken(String),
}

impl Outcome {
    pub fn changed(&self) -> bool {
        self.text != self.original
    }
}

/// Whether a fix of this applicability is applied.
pub fn allowed(a: Applicability, unsafe_fixes: bool) -> bool {
    a == Applicability::Safe || unsafe_fixes
}

/// Fix one source until stable. `project` is what the run knows beyond the file (the files
/// around it, image facts, the LimitRanges and VPAs of the run's other files).
pub fn fix_source(
    src: Source,
    cfg: &Config,
    sel: &Selection,
    project: &crate::project::Project,
    unsafe_fixes: bool,
) -> Outcome {
    // Fixing reads the file as one tree, some fifteen times its text: a stream above the cap
    // for one tree is linted a group of documents at a time instead (see `crate::stream`), and
    // not fixed. Its text is not copied for the outcome: nothing is written or diffed.
    if src.text.len() as u64 > crate::source::MAX_FILE_BYTES {
        let remaining = crate::stream::lint(src, cfg, sel, project);
        return Outcome {
            original: String::new(),
            text: String::new(),
            applied: Vec::new(),
            error: Some(Failure::Unparseable(format!(
                "not fixed: the file is larger than {} MiB, the most fix reads as one tree; split it to fix it",
                crate::source::MAX_FILE_BYTES >> 20
            ))),
            remaining,
        };
    }
    let original = src.text.clone();
    let origin = src.origin.clone();
    let mut cur = src;
    let mut applied: Vec<Applied> = Vec::new();
    // Each round's edits, in the coordinates of the text before that round: (range, new length).
    let mut rounds: Vec<Round> = Vec::new();
    // A fix whose finding comes back after it was applied is not applied again.
    let mut done: HashSet<Identity> = HashSet::new();
    // What the last round applied and what its text had (duplicate keys, documents): the text it
    // made is checked when the next round parses it, so each text is parsed once.
    let mut pending: Option<(Vec<Code>, usize, usize)> = None;

    let mut round = 0;
    let (diags, stats) = loop {
        let step = {
            let y = yaml::parse(cur.yaml_text(), cur.bom_len);
            if round == 0 {
                // The emitters write UTF-8 and place insertions by LF; a UTF-16 file, or one with
                // lone CRs (which YAML reads as line breaks), is left alone rather than guessed at.
                let refusal = if cur.utf16 {
                    Some("not fixed: the file is UTF-16, and fixes write UTF-8; convert it to UTF-8 first")
                } else if crate::text::has_lone_cr(&cur.text) {
                    Some("not fixed: the file has carriage returns without a line feed (classic Mac line ends); convert them to LF or CRLF first")
                } else {
                    None
                };
                if let Some(why) = refusal {
                    let remaining = lint_source(cur, cfg, sel);
                    return Outcome {
                        text: original.clone(),
                        original,
                        applied,
                        error: Some(Failure::Unparseable(why.into())),
                        remaining,
                    };
                }
                if let Some(e) = syntax_error(&cur, &y) {
                    let remaining = lint_source(cur, cfg, sel);
                    return Outcome {
                        text: original.clone(),
                        original,
                        applied,
                        error: Some(Failure::Unparseable(format!(
                            "not fixed: the file is not valid YAML ({e})"
                        ))),
                        remaining,
                    };
                }
            }
            if let Some((codes, duplicates, docs)) = pending.take() {
                let broken = syntax_error(&cur, &y).or_else(|| {
                    (y.duplicates.len() > duplicates || y.docs.len() != docs)
                        .then(|| "it would duplicate a key".to_string())
                });
                if let Some(e) = broken {
                    let remaining = lint_source(
                        Source::from_text(origin.clone(), original.clone()),
                        cfg,
                        sel,
                    );
                    return Outcome {
                        text: original.clone(),
                        original,
                        applied: Vec::new(),
                        error: Some(Failure::Broken(format!(
                            "not fixed: applying {} would leave invalid YAML ({e}); the file was left unchanged, please report this",
                            codes.iter().map(|c| c.as_str()).collect::<Vec<_>>().join(", ")
                        ))),
                        remaining,
                    };
                }
            }
            let (diags, stats) = check_file(&cur, &y, cfg, sel, project);
            let chosen = if round < MAX_ROUNDS {
                choose(&diags, unsafe_fixes, &done, &rounds)
            } else {
                Vec::new()
            };
            if chosen.is_empty() {
                Step::Settled(diags, stats)
            } else {
                let mut edits: Vec<&Edit> = chosen
                    .iter()
                    .flat_map(|d| d.fix.as_ref().unwrap().edits.iter())
                    .collect();
                edits.sort_by_key(|e| (e.range.start, e.range.end));
                let text = apply(&cur.text, &edits);
                for d in &chosen {
                    let fix = d.fix.as_ref().unwrap();
                    let span = fix.edits.iter().map(|e| e.range.start).min().unwrap_or(0)
                        ..fix.edits.iter().map(|e| e.range.end).max().unwrap_or(0);
                    // The common prefix of the edits' own paths holds them all.
                    let mut located = fix.edits.iter().map(|e| path_at(&cur.text, &y, e));
                    let (document, mut path) = located.next().unwrap_or_default();
                    for (_, p) in located {
                        let same = path.iter().zip(&p).take_while(|(a, b)| a == b).count();
                        path.truncate(same);
                    }
                    applied.push(Applied {
                        code: d.code,
                        title: fix.title.clone(),
                        applicability: fix.applicability,
                        document,
                        object: d.object.as_ref().and_then(|o| o.name.clone()),
                        container: d.container.as_deref().map(str::to_string),
                        path,
                        original_range: map_back(&rounds, span.start, false)
                            ..map_back(&rounds, span.end, true),
                    });
                    done.insert(identity(d, &rounds));
                }
                rounds.push(Round::new(
                    edits
                        .iter()
                        .map(|e| (e.range.clone(), e.text.len()))
                        .collect(),
                ));
                pending = Some((
                    chosen.iter().map(|d| d.code).collect(),
                    y.duplicates.len(),
                    y.docs.len(),
                ));
                Step::Again(text)
            }
        };
        match step {
            Step::Again(text) => {
                cur = Source::from_text(origin.clone(), text);
                round += 1;
            }
            Step::Settled(diags, stats) => break (diags, stats),
        }
    };
    let text = cur.text.clone();
    let remaining = crate::lint::report(cur, diags, stats);
    Outcome {
        original,
        text,
        applied,
        error: None,
        remaining,
    }
}

/// How a round ends: with the text its fixes made, or with nothing left to apply and the lint of
/// the text as it stands (what remains).
enum Step {
    Again(String),
    Settled(Vec<Diagnostic>, crate::lint::Stats),
}

fn syntax_error(src: &Source, y: &Yaml) -> Option<String> {
    let e = y
        .stream_error
        .as_ref()
        .or_else(|| y.docs.iter().find_map(|d| d.error.as_ref()))?;
    let (line, col) = src.line_col(e.offset);
    Some(format!("line {line}, column {col}: {}", e.message))
}

/// What makes a finding "the same one" across rounds: rule, document, container, object and
/// message, and where it points in the original text. Without the place, two env entries with the
/// same name and problem had one identity, and fixing the first left the second for another run.
type Identity = (Code, usize, Option<String>, String, usize);

fn identity(d: &Diagnostic, rounds: &[Round]) -> Identity {
    (
        d.code,
        d.document,
        d.container.as_deref().map(str::to_string),
        format!(
            "{}/{}",
            d.object
                .as_ref()
                .and_then(|o| o.name.clone())
                .unwrap_or_default(),
            d.message
        ),
        map_back(rounds, d.range.start, false),
    )
}

/// The fixes to apply this round: allowed, not applied before, and touching no edit already taken
/// (edits that merely meet also wait, so two insertions at one point never interleave).
///
/// At most one fix per container per round: fixes of one container can undo each other's premise
/// (moving the CPU limit to the request makes a new GOMAXPROCS from `limits.cpu` wrong), so the
/// next one is decided on the re-linted text. Fixes that change resources go first because env
/// fixes derive from resources, never the other way round.
fn choose<'d>(
    diags: &'d [Diagnostic],
    unsafe_fixes: bool,
    done: &HashSet<Identity>,
    rounds: &[Round],
) -> Vec<&'d Diagnostic> {
    let mut taken = Taken::default();
    let mut containers: HashSet<(usize, Option<String>, Option<String>)> = HashSet::new();
    let mut chosen = Vec::new();
    let mut candidates: Vec<&Diagnostic> = diags
        .iter()
        .filter(|d| {
            d.fix
                .as_ref()
                .is_some_and(|f| allowed(f.applicability, unsafe_fixes) && !f.edits.is_empty())
        })
        .filter(|d| !done.contains(&identity(d, rounds)))
        .collect();
    candidates.sort_by_key(|d| {
        let f = d.fix.as_ref().unwrap();
        (
            f.applicability != Applicability::Unsafe,
            f.edits[0].range.start,
        )
    });
    for d in candidates {
        let edits = &d.fix.as_ref().unwrap().edits;
        let collides = edits.iter().any(|e| taken.meets(&e.range));
        if collides {
            continue;
        }
        if d.container.is_some() {
            let owner = (
                d.document,
                d.object.as_ref().and_then(|o| o.name.clone()),
                d.container.as_deref().map(str::to_string),
            );
            if !containers.insert(owner) {
                continue;
            }
        }
        for e in edits {
            taken.add(&e.range);
        }
        chosen.push(d);
    }
    chosen
}

/// The edits taken in a round, as the union of their ranges with both ends included (an edit
/// that merely meets a taken one collides): disjoint intervals by start, so whether an edit
/// collides is one lookup, not a pass over every edit taken (a pod with thousands of containers
/// takes thousands).
#[derive(Default)]
struct Taken(std::collections::BTreeMap<usize, usize>);

impl Taken {
    /// The interval that starts last at or before `at`, if it reaches `at`.
    fn reaching(&self, at: usize) -> Option<(usize, usize)> {
        let (&s, &e) = self.0.range(..=at).next_back()?;
        (e >= at).then_some((s, e))
    }

    fn meets(&self, r: &Range<usize>) -> bool {
        // Disjoint intervals end in the order they start: only the last one starting at or
        // before `r.end` can reach back to `r.start`.
        self.0
            .range(..=r.end)
            .next_back()
            .is_some_and(|(_, &e)| e >= r.start)
    }

    fn add(&mut self, r: &Range<usize>) {
        let (mut start, mut end) = (r.start, r.end);
        if let Some((s, e)) = self.reaching(start) {
            start = s;
            end = end.max(e);
        }
        // Swallow every interval that starts inside the new one.
        while let Some((&s, &e)) = self.0.range(start..=end).next() {
            self.0.remove(&s);
            end = end.max(e);
        }
        self.0.insert(start, end);
    }
}

/// Apply sorted, non-overlapping edits (an insertion may precede a replacement at the same point).
pub fn apply(text: &str, edits: &[&Edit]) -> String {
    let mut out = String::with_capacity(text.len() + 256);
    let mut cursor = 0;
    for e in edits {
        out.push_str(&text[cursor..e.range.start.max(cursor)]);
        out.push_str(&e.text);
        cursor = cursor.max(e.range.end);
    }
    out.push_str(&text[cursor..]);
    out
}

/// One round's edits, sorted, in the coordinates of the text before it: (range, new length),
/// and for each edit the shift the edits before it made.
struct Round {
    edits: Vec<(Range<usize>, usize)>,
    shift_before: Vec<isize>,
}

impl Round {
    fn new(edits: Vec<(Range<usize>, usize)>) -> Round {
        let mut shift = 0isize;
        let shift_before = edits
            .iter()
            .map(|(r, len)| {
                let before = shift;
                shift += *len as isize - r.len() as isize;
                before
            })
            .collect();
        Round {
            edits,
            shift_before,
        }
    }
}

/// Map an offset in the text after all `rounds` back to the original text. An offset inside text
/// a round inserted maps to where that insertion began (`end`: to where the replaced text ended).
fn map_back(rounds: &[Round], mut pos: usize, end: bool) -> usize {
    for round in rounds.iter().rev() {
        let edits = &round.edits;
        // Edits that end before `pos` in the new text only shift it: they are skipped by
        // bisection (a round of a pod with thousands of containers has thousands of edits, and
        // every finding of the next round is mapped back). Sorted edits that do not overlap end
        // in the new text in the order they come.
        let new_end =
            |i: usize| (edits[i].0.start as isize + round.shift_before[i]) as usize + edits[i].1;
        let first = {
            let (mut lo, mut hi) = (0, edits.len());
            while lo < hi {
                let mid = (lo + hi) / 2;
                if new_end(mid) < pos {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
            lo
        };
        let mut delta: isize = round.shift_before.get(first).copied().unwrap_or_else(|| {
            round.shift_before.last().copied().unwrap_or(0)
                + edits
                    .last()
                    .map_or(0, |(r, len)| *len as isize - r.len() as isize)
        });
        let mut mapped = None;
        for (r, len) in &edits[first..] {
            let new_start = (r.start as isize + delta) as usize;
            let new_end = new_start + len;
            if pos < new_start {
                break;
            }
            if pos <= new_end && (pos < new_end || *len == 0 || end) {
                mapped = Some(if end { r.end } else { r.start });
                break;
            }
            delta += *len as isize - r.len() as isize;
        }
        pos = mapped.unwrap_or((pos as isize - delta) as usize);
    }
    pos
}

/// The document an edit falls in and the path of the smallest node that holds it.
///
/// A block collection's span runs on to the next token, past the line breaks after its content,
/// so an insertion at a line start is "inside" every node that ends above it. What it belongs to
/// is told by its indentation instead: it goes into a child only when it is indented deeper than
/// that child's line. A range that covers a child's whole content (a deleted item, a replaced
/// scalar) names the child's parent, so that the indices of later siblings do not matter.
fn path_at(text: &str, y: &Yaml, edit: &Edit) -> (usize, Vec<PathSeg>) {
    let r = crate::edit::trimmed(text, &edit.range);
    let at_line_start = r.is_empty() && (r.start == 0 || text[..r.start].ends_with('\n'));
    let new_text = edit.text.trim_start_matches(['\r', '\n']);
    let indent = at_line_start.then(|| new_text.len() - new_text.trim_start_matches(' ').len());
    // A new `- item` may sit at its parent key's column (`key:\n- item`).
    let is_item = new_text.trim_start_matches(' ').starts_with('-');
    let doc = y
        .docs
        .iter()
        .position(|d| d.span.start <= r.start && r.start <= d.span.end)
        .unwrap_or(0);
    let mut path = Vec::new();
    let Some(mut node) = y.docs.get(doc).and_then(|d| d.root) else {
        return (doc, path);
    };
    let holds = |n: NodeId, line_of: usize| {
        let s = y.span(n);
        match indent {
            Some(col) => {
                let flush_item =
                    is_item && matches!(y.node(n).kind, NodeKind::Sequence { flow: false, .. });
                let deeper = first_column(text, line_of) < col
                    || (flush_item && first_column(text, line_of) == col);
                s.start < r.start && r.start <= s.end && deeper
            }
            None if r.is_empty() => s.start < r.start && r.start < s.end,
            None => {
                s.start <= r.start
                    && r.end <= s.end
                    && !(r.start <= s.start && r.end >= crate::edit::content_end(text, y, n))
            }
        }
    };
    'down: loop {
        match &y.node(node).kind {
            // Every way of holding the edit starts at or before it and ends at or after it:
            // siblings that end before it are skipped by bisection, not one by one (a fix in
            // the last of thousands of containers walked past all the others).
            NodeKind::Mapping { entries, .. } => {
                let first = entries.partition_point(|&(_, v)| y.span(v).end < r.start);
                for &(k, v) in &entries[first..] {
                    if y.span(v).start > r.start {
                        break;
                    }
                    if holds(v, y.span(k).start) {
                        path.push(PathSeg::Key(y.str(k).unwrap_or("").to_string()));
                        node = v;
                        continue 'down;
                    }
                }
            }
            NodeKind::Sequence { items, .. } => {
                let first = items.partition_point(|&item| y.span(item).end < r.start);
                for (i, &item) in items.iter().enumerate().skip(first) {
                    if y.span(item).start > r.start {
                        break;
                    }
                    if holds(item, y.span(item).start) {
                        path.push(PathSeg::Index(i));
                        node = item;
                        continue 'down;
                    }
                }
            }
            _ => {}
        }
        return (doc, path);
    }
}

/// The indentation of `pos`'s line: for `  - name: a` the dash's column (2), for `    name: a`
/// the key's (4).
fn first_column(text: &str, pos: usize) -> usize {
    let start = crate::text::line_start(text, pos);
    let line = &text[start..];
    line.len() - line.trim_start_matches(' ').len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn apply_edits_in_order() {
        let e1 = Edit {
            range: 2..2,
            text: "X".into(),
        };
        let e2 = Edit {
            range: 2..4,
            text: "".into(),
        };
        assert_eq!(apply("abcdef", &[&e1, &e2]), "abXef");
    }

    #[test]
    fn offsets_map_back_through_rounds() {
        // Round 1 inserted 3 bytes at 5; round 2 replaced 10..12 (round-1 text) with 1 byte.
        let rounds = vec![Round::new(vec![(5..5, 3)]), Round::new(vec![(10..12, 1)])];
        assert_eq!(map_back(&rounds, 2, false), 2);
        assert_eq!(map_back(&rounds, 6, false), 5);
        assert_eq!(map_back(&rounds, 10, false), 7);
        assert_eq!(map_back(&rounds, 11, true), 9);
        assert_eq!(map_back(&rounds, 20, false), 18);
    }

    #[test]
    fn paths_name_the_smallest_enclosing_node() {
        let text = "a:\n  b:\n  - x: 1\n    y: 2\n  c: 3\n";
        let y = yaml::parse(text, 0);
        let path = |range: Range<usize>, new: &str| {
            path_at(
                text,
                &y,
                &Edit {
                    range,
                    text: new.into(),
                },
            )
            .1
        };
        let key = |k: &str| PathSeg::Key(k.into());
        // Replacing a scalar names the mapping that holds it.
        let two = text.find('2').unwrap();
        assert_eq!(
            path(two..two + 1, "3"),
            vec![key("a"), key("b"), PathSeg::Index(0)]
        );
        // A new item after the last one belongs to the list, a new key to its mapping, told apart
        // by their indentation although both are inserted at the same place.
        let after = text.find("  c:").unwrap();
        assert_eq!(path(after..after, "  - x: 9\n"), vec![key("a"), key("b")]);
        assert_eq!(
            path(after..after, "    z: 9\n"),
            vec![key("a"), key("b"), PathSeg::Index(0)]
        );
        assert_eq!(path(after..after, "  d: 9\n"), vec![key("a")]);
    }
}
