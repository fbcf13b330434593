//! A large multi-document stream (`kubectl get -A -o yaml` of a cluster, `helm template` of a
//! platform) linted one group of documents at a time, so that memory follows the group, not the
//! file: a whole-file tree costs about fifteen times its text, and a stream of 60,000 documents
//! (63 MB) peaked near 1 GB.
//!
//! The text stays in memory once (positions, fixes and the report need it); each group is parsed,
//! checked, fingerprinted, positioned and dropped on one thread, as a file of its own would be
//! (each thread holds one tree at a time), and only its findings are kept
//! ([`lint`]), or handed to the writer as they come ([`lint_in_parts`], what `lint --format json`
//! uses: then not even the findings accumulate). Groups are
//! cut at the lines the parser itself cuts a stream at ([`crate::yaml::stream_cuts`]), so a group
//! reads node for node as it does in the whole tree, and the findings are those of the whole-file
//! path: same lines, columns, document numbers and fingerprints (tests/fast/stream.rs compares
//! them).
//!
//! What acts across documents is gathered first, or checked after:
//! - LimitRanges and VPAs reach every workload of the file, and a ConfigMap every container that
//!   reads it through `envFrom`. A cheap pass finds the documents whose text names those kinds
//!   (one substring search over the text) and parses only them; each group is then checked with
//!   those documents of other groups beside it in its tree, in file order, so that the rules see
//!   what they see in one tree (nodes included, for related locations). A ConfigMap goes beside a
//!   group only when one of the group's containers names it.
//! - The layout fixes write in (indentation steps, JSON or not) is read from the documents in the
//!   first MiB of a large text, by this path and the whole-file path alike
//!   (`crate::edit::emit::layout_end`), so it is known before the first group is checked, and
//!   every group is read once.
//! - Comment suppressions, aliases and Helm's `# Source:` comments never reach beyond their
//!   document.
//!
//! A stream whose parse finds a syntax error in a group is read whole from there (the reference
//! parser's view of what follows an error is that of one pass): the whole-file path's findings of
//! the documents from that group on follow those the groups before it handed on. Texts that are
//! not a plain YAML stream (JSON streams, UTF-16, streams kubectl cuts differently) are read
//! whole. Above [`MAX_FILE_BYTES`], where no whole-file read is offered, such a text and any group
//! that large (one huge document) are refused with a GK000 that says so.

use std::ops::Range;

use memchr::memmem;
use rayon::prelude::*;

use crate::config::Config;
use crate::edit::emit::{Indents, Layout};
use crate::k8s::{self, container::Pod, limitrange::LimitRange, vpa::Vpa};
use crate::lint::{self, FileReport, Part, Selection, Stats};
use crate::project::Project;
use crate::source::{DecodeError, DecodeFailure, Source, MAX_FILE_BYTES};
use crate::yaml::{self, Yaml};

pub use crate::source::STREAM_ABOVE;

/// About how many bytes of documents one group holds. Each group is parsed and checked on one
/// thread, so this is about a large file's worth: small enough that its tree (some fifteen
/// times its text) stays in the core's cache while it is checked, large enough that what each
/// group costs on its own (the rules' set-up, a hand-over) is small beside it. From 1 MiB to
/// 256 KiB the 60,000-document stream took no longer and peaked 15 MB lower.
const GROUP_BYTES: usize = 1 << 18;

/// Groups checked at a time per thread (a window): their findings are handed on in order once
/// all of them are checked, while the next window is checked.
const GROUPS_AT_ONCE: usize = 4;

/// The kinds whose objects act on every workload of their file.
const ACROSS: [&str; 2] = ["LimitRange", "VerticalPodAutoscaler"];

/// Lint a source: a large stream group by group, anything else as one tree.
pub fn lint(src: Source, cfg: &Config, sel: &Selection, project: &Project) -> FileReport {
    if src.text.len() <= STREAM_ABOVE {
        return whole(src, cfg, sel, project);
    }
    in_groups(src, cfg, sel, project, GROUP_BYTES, None).0
}

/// [`lint`] of any text, small ones too, in groups of about `group_bytes`: the tests compare it
/// with the whole-file path on streams of every shape. Also says whether the text was read in
/// groups to its end (or, where that is not exact, whole or from a group on).
#[doc(hidden)]
pub fn lint_in_groups_said(
    src: Source,
    cfg: &Config,
    sel: &Selection,
    project: &Project,
    group_bytes: usize,
) -> (FileReport, bool) {
    in_groups(src, cfg, sel, project, group_bytes, None)
}

/// [`lint`], handing the findings on as each group is done, so that a run that writes them as
/// they come (a format whose pieces concatenate, see `crate::output::Format::in_parts`) never
/// holds a stream's findings all at once. Each part is a report of the file with some of its
/// findings, in order, with no counts and no source; the report returned is the last part, with
/// the file's counts (or the whole report, where the file is not read in groups). Nothing is
/// handed on until a group has an object (before that, the file may yet be no manifest), and the
/// layout fixes are written in is read from the first MiB before the first group is checked
/// (`crate::edit::emit::layout_end`), so no finding handed on changes.
pub fn lint_in_parts(
    src: Source,
    cfg: &Config,
    sel: &Selection,
    project: &Project,
    part: &mut (dyn FnMut(FileReport) + Send),
) -> FileReport {
    if src.text.len() <= STREAM_ABOVE {
        return whole(src, cfg, sel, project);
    }
    lint_parts_in_groups(src, cfg, sel, project, GROUP_BYTES, part)
}

/// [`lint_in_parts`] of any text, in groups of about `group_bytes` (for the tests).
#[doc(hidden)]
pub fn lint_parts_in_groups(
    src: Source,
    cfg: &Config,
    sel: &Selection,
    project: &Project,
    group_bytes: usize,
    part: &mut (dyn FnMut(FileReport) + Send),
) -> FileReport {
    in_groups(src, cfg, sel, project, group_bytes, Some(part)).0
}

/// The one pass over the groups behind [`lint`] (`part` None: every finding held for the
/// report) and [`lint_in_parts`]; also says whether every group was read as a group.
fn in_groups(
    src: Source,
    cfg: &Config,
    sel: &Selection,
    project: &Project,
    group_bytes: usize,
    mut part: Option<&mut (dyn FnMut(FileReport) + Send)>,
) -> (FileReport, bool) {
    let plan = (!src.utf16)
        .then(|| yaml::stream_cuts(src.yaml_text(), group_bytes))
        .flatten()
        .filter(|cuts| cuts.len() >= 2);
    let Some(cuts) = plan else {
        return (whole(src, cfg, sel, project), false);
    };
    let text = src.yaml_text();
    if let Some(at) = group_ranges(text, &cuts).find(|r| r.len() as u64 > MAX_FILE_BYTES) {
        return (refuse(src, at.start), false);
    }
    let Some(context) = Context::gather(&src) else {
        return (whole(src, cfg, sel, project), false);
    };
    let Some(layout) = layout_of(&src) else {
        return (whole(src, cfg, sel, project), false);
    };
    let text = src.yaml_text();
    let base = src.bom_len;
    let ranges: Vec<Range<usize>> = group_ranges(text, &cuts).collect();
    // Each group is parsed and checked on one thread, as a file is, while the other threads
    // take the next groups: its tree is read while the parse has it in the core's cache, and
    // the threads hold one tree each. A group is checked under its own document numbers (the
    // findings are renumbered in order below), so it needs nothing from the groups before it.
    let check = |range: &Range<usize>| {
        let group = yaml::parse_group(&text[range.clone()], base + range.start)?;
        let docs = group.docs.len();
        let (y, first) = context.around(&src, cfg, range.clone(), group)?;
        let part_of = Part {
            own: first..first + docs,
            layout: Some(layout),
        };
        let (mut found, s) = lint::check_part(&src, &y, cfg, sel, project, &part_of);
        crate::fingerprint::set_all(&src.name, &y, &mut found);
        drop(y);
        // Only the group's own documents are reported here; the others are their groups'.
        found.retain(|d| part_of.own.contains(&d.document));
        for d in &mut found {
            d.document -= first;
        }
        Some((lint::positioned(&src, found), s, docs))
    };
    let mut order = InOrder::default();
    let mut windows = ranges.chunks(GROUPS_AT_ONCE * rayon::current_num_threads());
    let mut next = windows.next().map(|w| w.par_iter().map(check).collect());
    while let Some(checked) = next.take() {
        // The next window is checked while this one's findings are handed on: handing on
        // renders them (the JSON of a few thousand findings), and done between the windows it
        // left the other threads waiting.
        let following = windows.next();
        let (after, read) = rayon::join(
            || following.map(|w| w.par_iter().map(check).collect()),
            || order.take(checked, &src, part.as_deref_mut()),
        );
        if !read {
            // A syntax error (or a document the fast parser declines and the reference parser
            // finds wrong): the whole-file path reads what follows it as one pass does.
            let rest = whole(src, cfg, sel, project);
            return (
                from_document(rest, order.handed_on.then_some(order.docs_before)),
                false,
            );
        }
        next = after;
    }
    let mut stats = order.stats;
    stats.files = 1;
    (lint::report_found(src, order.held, stats), true)
}

/// What a group's check gives: its findings (numbered from its first document), its counts and
/// how many documents it holds; None when it cannot be read as a group.
type Checked = Option<(Vec<lint::Finding>, Stats, usize)>;

/// The groups' findings put in file order as the windows of groups come in.
#[derive(Default)]
struct InOrder {
    held: Vec<lint::Finding>,
    stats: Stats,
    docs_before: usize,
    /// Whether findings were handed on: after that, a group that cannot be read as a group
    /// leaves the findings before it standing.
    handed_on: bool,
}

impl InOrder {
    /// Number one window's findings in the file and hand them on (with `part`) or hold them;
    /// false at a group that could not be read, whose findings and those after are not taken.
    fn take<'p>(
        &mut self,
        checked: Vec<Checked>,
        src: &Source,
        mut part: Option<&mut (dyn FnMut(FileReport) + Send + 'p)>,
    ) -> bool {
        for checked in checked {
            let Some((mut found, s, docs)) = checked else {
                return false;
            };
            for f in &mut found {
                f.diagnostic.document += self.docs_before;
            }
            self.held.extend(found);
            self.stats += s;
            self.docs_before += docs;
            if let Some(part) = part
                .as_mut()
                .filter(|_| self.stats.objects > 0 && !self.held.is_empty())
            {
                self.handed_on = true;
                part(FileReport {
                    name: src.name.clone(),
                    origin: src.origin.clone(),
                    findings: std::mem::take(&mut self.held),
                    stats: Stats::default(),
                    source: None,
                    skipped: None,
                });
            }
        }
        true
    }
}

/// The whole-file report of a stream whose groups were handed on up to document `from`: its
/// findings from there on, and the whole file's counts. The findings before are the ones the
/// groups handed on, and stand.
fn from_document(mut whole: FileReport, from: Option<usize>) -> FileReport {
    if let Some(from) = from {
        whole.findings.retain(|f| f.diagnostic.document >= from);
    }
    whole
}

/// The file's layout for fixes, read from the documents in its first MiB as the whole-file path
/// reads it (`crate::edit::emit::layout_end`); None when they do not parse cleanly.
fn layout_of(src: &Source) -> Option<FileLayout> {
    let end = crate::edit::emit::layout_end(src) - src.bom_len;
    let first = yaml::parse_group(&src.yaml_text()[..end], src.bom_len)?;
    Some((
        Layout::json(&first),
        Indents::from_steps(Indents::steps(src, &first)),
    ))
}

/// The whole-file path, where it is offered.
fn whole(src: Source, cfg: &Config, sel: &Selection, project: &Project) -> FileReport {
    if src.text.len() as u64 > MAX_FILE_BYTES {
        return refuse(src, 0);
    }
    lint::lint_source_with(src, cfg, sel, project, |_, _, _| {})
}

/// A text above [`MAX_FILE_BYTES`] that cannot be read group by group: a GK000 that says why.
fn refuse(src: Source, offset: usize) -> FileReport {
    let bytes = src.text.len() as u64;
    lint::decode_failure(DecodeFailure {
        origin: src.origin,
        error: DecodeError::TooLargeDocument { offset, bytes },
        bytes: src.text.into_bytes(),
    })
}

fn group_ranges<'c>(text: &str, cuts: &'c [usize]) -> impl Iterator<Item = Range<usize>> + 'c {
    let end = text.len();
    cuts.iter()
        .enumerate()
        .map(move |(i, &a)| a..cuts.get(i + 1).copied().unwrap_or(end))
}

/// The file's layout for fixes: JSON documents or not, and the indentation.
type FileLayout = (bool, Indents);

/// The documents of a stream that act beyond themselves, by their byte ranges in the text the
/// parser reads.
#[derive(Default)]
struct Context {
    /// Documents holding a LimitRange or a VPA: beside every group.
    across: Vec<Range<usize>>,
    /// Documents holding ConfigMaps, with their names: beside a group that reads one of them.
    config_maps: Vec<(Range<usize>, Vec<String>)>,
}

impl Context {
    /// The cheap pass: a substring search, then a parse of the documents it points at. None when
    /// one of them does not parse cleanly (the group that holds it will not either).
    fn gather(src: &Source) -> Option<Context> {
        let text = src.yaml_text();
        let mut context = Context::default();
        let across = yaml::documents_naming(text, &ACROSS);
        for r in across {
            let y = yaml::parse_group(&text[r.clone()], src.bom_len + r.start)?;
            let acts = objects(&y)
                .any(|(y, o)| LimitRange::read(y, &o).is_some() || Vpa::read(y, &o).is_some());
            if acts {
                context.across.push(r);
            }
        }
        // ConfigMaps matter only to a container that reads one through `envFrom`.
        if memmem::find(text.as_bytes(), b"configMapRef").is_some() {
            for r in yaml::documents_naming(text, &["ConfigMap"]) {
                let y = yaml::parse_group(&text[r.clone()], src.bom_len + r.start)?;
                let names: Vec<String> = objects(&y)
                    .filter_map(|(y, o)| k8s::config_map(y, &o).map(|m| m.name))
                    .collect();
                if !names.is_empty() {
                    context.config_maps.push((r, names));
                }
            }
        }
        Some(context)
    }

    /// The tree a group is checked in: the context documents of other groups before and after
    /// the group's own, in file order, and where the group's own begin among them.
    fn around<'a>(
        &self,
        src: &'a Source,
        cfg: &Config,
        group: Range<usize>,
        y: Yaml<'a>,
    ) -> Option<(Yaml<'a>, usize)> {
        let text = src.yaml_text();
        let outside = |r: &&Range<usize>| r.end <= group.start || r.start >= group.end;
        let mut beside: Vec<&Range<usize>> = self.across.iter().filter(outside).collect();
        if !self.config_maps.is_empty()
            && memmem::find(text[group.clone()].as_bytes(), b"configMapRef").is_some()
        {
            let read = env_from_config_maps(&y, cfg);
            beside.extend(
                self.config_maps
                    .iter()
                    .filter(|(_, names)| names.iter().any(|n| read.contains(n)))
                    .map(|(r, _)| r)
                    .filter(outside),
            );
        }
        if beside.is_empty() {
            return Some((y, 0));
        }
        beside.sort_by_key(|r| r.start);
        beside.dedup();
        let parse = |r: &Range<usize>| {
            yaml::parse_group(&text[r.clone()], src.bom_len + r.start).map(Yaml::into_context)
        };
        let mut all = Yaml::default();
        for r in beside.iter().filter(|r| r.end <= group.start) {
            all.append(parse(r)?);
        }
        let first = all.docs.len();
        all.append(y);
        for r in beside.iter().filter(|r| r.start >= group.end) {
            all.append(parse(r)?);
        }
        Some((all, first))
    }
}

/// Every object of a tree, with the tree.
fn objects<'y>(y: &'y Yaml<'y>) -> impl Iterator<Item = (&'y Yaml<'y>, k8s::Object<'y>)> + 'y {
    y.docs
        .iter()
        .filter_map(|d| d.root)
        .flat_map(move |root| k8s::objects(y, root).into_iter().map(move |o| (y, o)))
}

/// The names of the ConfigMaps a tree's containers read through `envFrom`.
fn env_from_config_maps(y: &Yaml, cfg: &Config) -> Vec<String> {
    let mut out = Vec::new();
    for (y, obj) in objects(y) {
        let Some(spec) = k8s::pod_spec(y, &obj, &cfg.pod_spec_paths) else {
            continue;
        };
        for c in &Pod::read(y, spec).containers {
            out.extend(
                c.env_from
                    .iter()
                    .filter_map(|e| e.config_map.map(String::from)),
            );
        }
    }
    out
}
