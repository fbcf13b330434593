//! Output formats. Every format is a [`Format`]: it renders one file's report at a time, on the
//! thread that linted it, and writes the rendered pieces in file order, so a run streams its
//! report as it lints; the totals come last ([`End`]). Findings arrive positioned (line/column)
//! and sorted; a format only renders.

pub mod concise;
pub mod github;
pub mod gitlab;
pub mod human;
pub mod json;
pub mod sarif;
pub mod xml;

use std::collections::BTreeMap;
use std::io::Write;

use rayon::prelude::*;

use crate::diagnostic::{Applicability, Code, Severity};
use crate::lint::{FileReport, Stats};

/// One output format, fed as a run produces its reports: [`Format::begin`], then each file's
/// report rendered by [`Format::render`] (on any thread; it sees nothing but the report) and
/// written by [`Format::push`] in file order, then [`Format::finish`] with the run's totals. The
/// format itself holds only settings, so the threads that render and the one that writes share
/// it; what the document being written needs to remember is its [`Format::State`]. A format
/// whose layout puts totals before the files (JUnit's counts) keeps its pieces there until
/// `finish`; every other one writes them as they come.
pub trait Format: Sync {
    /// One file's report, rendered.
    type Piece: Send;
    /// What the document being written remembers between pieces.
    type State: Send;
    fn begin(&self, out: &mut dyn Write) -> std::io::Result<Self::State>;
    fn render(&self, report: &FileReport) -> Self::Piece;
    fn push(
        &self,
        state: &mut Self::State,
        piece: Self::Piece,
        out: &mut dyn Write,
    ) -> std::io::Result<()>;
    /// Several files' pieces, in order: a format may write them at once.
    fn push_batch(
        &self,
        state: &mut Self::State,
        pieces: Vec<Self::Piece>,
        out: &mut dyn Write,
    ) -> std::io::Result<()> {
        pieces
            .into_iter()
            .try_for_each(|piece| self.push(state, piece, out))
    }
    fn finish(&self, state: Self::State, end: &End, out: &mut dyn Write) -> std::io::Result<()>;
    /// Whether a file's report may come in parts (each with some of its findings, in order, and
    /// no source), whose pieces pushed in order write the bytes of the whole report's: a large
    /// stream's findings are then written as its groups are linted (see `crate::stream`).
    fn in_parts(&self) -> bool {
        false
    }
}

/// What a format learns once every file is pushed: the run's counts, its findings' totals, what
/// `fix` applied, and the inputs that could not be read.
pub struct End<'a> {
    pub stats: Stats,
    pub tally: &'a Tally,
    pub fixed: Option<&'a [FixedOut]>,
    pub errors: &'a [InputError],
}

/// The totals of findings, summed file by file as reports arrive: by severity, by fix, by rule.
#[derive(Debug, Default, Clone)]
pub struct Tally {
    pub error: usize,
    pub warning: usize,
    pub info: usize,
    pub safe_fixes: usize,
    pub unsafe_fixes: usize,
    /// Findings per rule (the human format's rule docs, `--statistics`).
    pub by_code: BTreeMap<Code, usize>,
}

impl Tally {
    pub fn of(r: &FileReport) -> Tally {
        let mut t = Tally::default();
        for f in &r.findings {
            let d = &f.diagnostic;
            match d.severity {
                Severity::Error => t.error += 1,
                Severity::Warning => t.warning += 1,
                Severity::Info => t.info += 1,
            }
            match d.fix.as_ref().map(|x| x.applicability) {
                Some(Applicability::Safe) => t.safe_fixes += 1,
                Some(Applicability::Unsafe) => t.unsafe_fixes += 1,
                None => {}
            }
            *t.by_code.entry(d.code).or_default() += 1;
        }
        t
    }

    pub fn add(&mut self, other: Tally) {
        self.error += other.error;
        self.warning += other.warning;
        self.info += other.info;
        self.safe_fixes += other.safe_fixes;
        self.unsafe_fixes += other.unsafe_fixes;
        for (code, n) in other.by_code {
            *self.by_code.entry(code).or_default() += n;
        }
    }

    pub fn findings(&self) -> usize {
        self.error + self.warning + self.info
    }
}

/// Write reports already at hand through `format`: rendered in parallel a bounded chunk at a
/// time, pushed in order. A streaming front end calls the trait's methods itself.
/// Returns the findings' totals.
pub fn write<F: Format>(format: F, run: &Run, out: &mut dyn Write) -> std::io::Result<Tally> {
    let mut state = format.begin(out)?;
    let mut tally = Tally::default();
    for chunk in run.reports.chunks(RENDER_CHUNK) {
        let (pieces, tallies): (Vec<F::Piece>, Vec<Tally>) = chunk
            .par_iter()
            .map(|r| (format.render(r), Tally::of(r)))
            .unzip();
        format.push_batch(&mut state, pieces, out)?;
        tallies.into_iter().for_each(|t| tally.add(t));
    }
    let end = End {
        stats: run.stats,
        tally: &tally,
        fixed: run.fixed,
        errors: run.errors,
    };
    format.finish(state, &end, out)?;
    Ok(tally)
}

/// Files rendered at a time by [`write`]: enough for every thread, few enough to hold in memory.
const RENDER_CHUNK: usize = 512;

/// Where a rule's documentation lives on the web (also shown by `golint-k8s explain`).
pub const DOCS_BASE: &str = "https://github.com/golint-k8s/golint-k8s/blob/main/rules/";

pub fn doc_url(code: crate::diagnostic::Code) -> String {
    let rule = code.rule();
    format!("{DOCS_BASE}{}-{}.md", rule.code, rule.name)
}

/// The repository root that report paths are relative to: the nearest directory with `.git`,
/// else the current directory.
pub(crate) fn repo_root() -> std::path::PathBuf {
    let cwd = std::env::current_dir().unwrap_or_else(|_| std::path::PathBuf::from("."));
    crate::walk::repository_root(&cwd).unwrap_or(cwd)
}

/// A report's file as a path relative to `root` with `/` separators, when it lies there; its
/// name otherwise (standard input, a file outside the repository).
pub(crate) fn repo_path(root: &std::path::Path, r: &FileReport) -> String {
    match &r.origin {
        crate::source::Origin::File(p) => std::fs::canonicalize(p)
            .ok()
            .and_then(|abs| abs.strip_prefix(root).ok().map(|rel| rel.to_path_buf()))
            .map_or_else(|| r.name.clone(), |rel| slash_path(&rel)),
        crate::source::Origin::Stdin(_) => r.name.clone(),
    }
}

/// A relative path with `/` between its components. Only the platform's separators are
/// replaced: on Unix a backslash is part of a file name (`back\slash.yaml` is one file).
pub(crate) fn slash_path(rel: &std::path::Path) -> String {
    let parts: Vec<_> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect();
    parts.join("/")
}

/// A run's reports at hand, for [`write`]: sorted by file name, with the totals, the inputs that
/// could not be read, and for `fix` what it applied.
pub struct Run<'a> {
    pub reports: &'a [FileReport],
    pub stats: Stats,
    pub fixed: Option<&'a [FixedOut]>,
    pub errors: &'a [InputError],
}

/// An input that was not linted: a report must never look clean without it. Either it could not
/// be read, walked or rendered (`failed`: exit 2), or it was passed over on purpose (a symlink
/// not followed, a file that is no manifest), which is a note and leaves the exit code to the
/// findings. Every format lists both, at the level each deserves.
#[derive(Debug, Clone, serde::Serialize)]
pub struct InputError {
    /// The path as the user named it or the walk found it; None for a failure of no one path.
    pub path: Option<String>,
    pub message: String,
    /// Not in JSON, whose `errors` predate it: the formats that have levels read it.
    #[serde(skip)]
    pub failed: bool,
}

impl From<&crate::error::Error> for InputError {
    fn from(e: &crate::error::Error) -> InputError {
        match e {
            crate::error::Error::Input { name, message } => InputError {
                path: Some(name.clone()),
                message: message.clone(),
                failed: true,
            },
            other => InputError {
                path: None,
                message: other.to_string(),
                failed: true,
            },
        }
    }
}

/// The line human and concise output end with when inputs could not be read.
pub fn unread_line(errors: &[InputError]) -> Option<String> {
    (!errors.is_empty()).then(|| {
        format!(
            "{} path{} could not be linted (see the errors above); the findings are incomplete",
            errors.len(),
            human::plural(errors.len())
        )
    })
}

/// A fix that `fix` applied (or, with `--diff`/`--check`, would apply), located in the original
/// file. `path` names the smallest node holding all its edits: nothing outside it changed.
#[derive(Debug, Clone, serde::Serialize)]
pub struct FixedOut {
    pub file: String,
    pub code: crate::diagnostic::Code,
    pub rule: &'static str,
    pub applicability: crate::diagnostic::Applicability,
    pub title: String,
    pub document: usize,
    /// The object's name and the container, as in findings.
    pub object: Option<String>,
    pub container: Option<String>,
    pub path: Vec<crate::fix::engine::PathSeg>,
    pub line: usize,
    pub column: usize,
    pub end_line: usize,
    pub end_column: usize,
}
