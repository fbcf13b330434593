//! The pipeline every command that reads manifests runs, in the order it runs: find the inputs
//! and their configs ([`Run::new`]), read the project files around them
//! ([`Run::read_surroundings`]), index what acts across files ([`Run::index`]), then load and
//! lint each input ([`Run::map_inputs`], [`lint_loaded`]) and, against a revision, keep what is
//! new ([`only_new`]). The command line's `lint`, `fix` and `cluster` drive it; the language
//! server holds one as its session ([`Run::session`]) and lints and fixes open documents through
//! it ([`Run::lint_text`], [`Run::fix_text`]), so an editor sees what the CLI reports for the same
//! file. It prints nothing, so a front end decides how notes and reports are shown.

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use crate::config::{Config, ConfigFinder, Globs, Overrides};
use crate::error::Error;
use crate::k8s::index::Index;
use crate::lint::{decode_failure, lint_source_with, FileReport, Selection};
use crate::output;
use crate::project::Project;
use crate::source::DecodeFailure;
use crate::source::{Origin, Source};
use crate::walk::{self, Input};
use std::sync::Arc;

/// What a run is asked to do, already checked by its front end.
pub struct Options {
    pub sel: Selection,
    /// A config file that replaces the lookup of `.golint-k8s.yaml` beside each input.
    pub config: Option<PathBuf>,
    pub overrides: Overrides,
    /// Replaces each config's `exclude` when given.
    pub exclude: Option<Globs>,
    pub extend_exclude: Option<Globs>,
    /// Files and directories to lint; `-` is standard input.
    pub paths: Vec<String>,
    /// The name standard input is reported under (and its config found by).
    pub stdin_name: String,
    /// Lint what `helm template` renders of this chart instead of `paths`.
    pub helm: Option<HelmRender>,
    /// The chart whose renders the inputs are, to trace findings back to templates.
    pub chart: Option<PathBuf>,
    /// Whether charts and Kustomize roots met in a walk are rendered and built (not for
    /// `--parse-only` and `--index-only`, which time reading the files alone).
    pub render_walked: bool,
}

/// A chart to render with `helm template`.
pub struct HelmRender {
    pub dir: PathBuf,
    pub release: String,
    pub values: Vec<PathBuf>,
    pub set: Vec<String>,
}

/// One input, read and decoded, with its config; `None` when the config excludes it.
pub type Loaded = Option<(Result<Source, Box<DecodeFailure>>, Arc<Config>)>;

impl Run {
    /// Find the inputs and their configs (or render the chart); what could not be walked is in
    /// `walk_errors` and `notes`.
    pub fn new(o: Options) -> Result<Run, Error> {
        let explicit = o.config.as_deref().map(Config::load).transpose()?;
        let finder = ConfigFinder::new(explicit, o.overrides);
        let chart = match o.helm.as_ref().map(|h| &h.dir).or(o.chart.as_ref()) {
            None => None,
            Some(dir) => Some(crate::helm::Chart::open(dir).map_err(Error::Helm)?),
        };
        let found = match (&o.helm, &chart) {
            (Some(h), Some(c)) => Found::rendered(h, c)?,
            _ => Found::walked(
                &o.paths,
                o.render_walked,
                |dir| skips_vendored(&finder, o.exclude.is_some(), dir),
                // A chart is excluded as its Chart.yaml would be, a kustomization as its file.
                |file| {
                    finder
                        .for_file(file)
                        .is_ok_and(|cfg| is_excluded(&o.exclude, &o.extend_exclude, &cfg, file))
                },
                // A chart's values files come from the config that governs its Chart.yaml.
                |chart| match finder.for_file(&chart.join("Chart.yaml")) {
                    Ok(cfg) => {
                        let (files, unmatched) = cfg.chart_values_in(chart);
                        (files, unmatched.into_iter().map(str::to_string).collect())
                    }
                    // The config's error is reported where the render is linted.
                    Err(_) => (Vec::new(), Vec::new()),
                },
            ),
        };
        Ok(Run {
            sel: o.sel,
            project: Project::default(),
            read_ahead: Default::default(),
            stdin_over_cap: Default::default(),
            finder,
            exclude: o.exclude,
            extend_exclude: o.extend_exclude,
            had_error: found.had_error,
            walk_errors: found.walk_errors,
            inputs: found.inputs,
            // A render is named after its chart; standard input is not read then.
            stdin_name: match o.helm {
                Some(_) => "-".to_string(),
                None => o.stdin_name,
            },
            chart,
            notes: found.notes,
            rendered_charts: found.rendered_charts,
            kustomize_builds: found.kustomize_builds,
            already_said: Default::default(),
            inputs_by_real: Default::default(),
            indexed_repository: None,
        })
    }
}

impl Run {
    /// A run with no inputs of its own, for a session that is handed documents one at a time (the
    /// language server): every rule selected, configs found beside each document with
    /// `overrides` on top.
    pub fn session(overrides: Overrides) -> Run {
        Run::session_with(None, overrides)
    }

    /// [`Run::session`] with one config for every document (the server's `config` option, as
    /// `--config`).
    pub fn session_with(explicit: Option<Config>, overrides: Overrides) -> Run {
        Run {
            sel: Selection::default(),
            project: Project::default(),
            read_ahead: Default::default(),
            stdin_over_cap: Default::default(),
            finder: ConfigFinder::new(explicit, overrides),
            exclude: None,
            extend_exclude: None,
            had_error: false,
            walk_errors: Vec::new(),
            inputs: Vec::new(),
            stdin_name: "-".to_string(),
            chart: None,
            notes: Vec::new(),
            rendered_charts: HashMap::new(),
            kustomize_builds: Default::default(),
            already_said: Default::default(),
            inputs_by_real: Default::default(),
            indexed_repository: None,
        }
    }

    /// Forget every config and project file read so far: one was created, changed or removed.
    pub fn forget_files(&mut self) {
        self.finder = self.finder.fresh();
        self.project.forget_files();
    }

    /// Lint a document's text named `name`, as `lint --stdin-filename NAME -` lints it: the
    /// name finds the Dockerfile, go.mod and kustomization beside it and its per-file-ignores.
    pub fn lint_text(&self, name: &str, text: String, cfg: &Config) -> FileReport {
        self.lint_source(
            Source::from_text(Origin::Stdin(name.to_string()), text),
            cfg,
        )
    }

    /// Lint a document already read into a [`Source`] (the language server reads it once to
    /// look up its images too).
    pub fn lint_source(&self, src: Source, cfg: &Config) -> FileReport {
        lint_loaded(self, Ok(src), cfg)
    }

    /// What `fix` (safe fixes only) makes of a document's text named `name`.
    pub fn fix_text(&self, name: &str, text: String, cfg: &Config) -> crate::fix::engine::Outcome {
        let src = Source::from_text(Origin::Stdin(name.to_string()), text);
        crate::fix::engine::fix_source(src, cfg, &self.sel, &self.project, false)
    }
}

/// Whether a walk of `dir` passes over vendored directories: unless `--exclude` is given or the
/// config governing `dir` sets its own exclusions.
fn skips_vendored(finder: &ConfigFinder, exclude_given: bool, dir: &Path) -> bool {
    !exclude_given
        && finder
            .for_file(&dir.join(crate::config::FILE_NAME))
            .map_or(true, |c| c.skip_vendored)
}

/// The inputs a run found, and what finding them had to say.
struct Found {
    inputs: Vec<Input>,
    had_error: bool,
    walk_errors: Vec<output::InputError>,
    notes: Vec<String>,
    /// The charts a walk rendered, by the name their render is reported under.
    rendered_charts: HashMap<String, crate::helm::Chart>,
    /// The Kustomize roots a walk built, by the name their build is reported under.
    kustomize_builds: HashMap<String, PathBuf>,
}

impl Found {
    /// The one input `helm template` renders of a chart.
    fn rendered(h: &HelmRender, chart: &crate::helm::Chart) -> Result<Found, Error> {
        let bytes =
            crate::helm::render(&h.dir, &h.release, &h.values, &h.set).map_err(Error::Helm)?;
        Ok(Found {
            inputs: vec![Input::Rendered {
                name: format!("{} (helm template {})", h.dir.display(), h.release),
                config_path: chart.root.join("Chart.yaml"),
                bytes,
            }],
            had_error: false,
            walk_errors: Vec::new(),
            notes: Vec::new(),
            rendered_charts: HashMap::new(),
            kustomize_builds: Default::default(),
        })
    }

    /// A Helm chart met in a walk: what `helm template` renders of it with the chart's own
    /// values and then the `values` files its config's `chart-values` names (`unmatched`: the
    /// entries that named none), named after the chart, as `--helm` would lint it. Without
    /// `helm`, or when the render fails, the chart is an input that could not be linted: listed
    /// with the others in every format, and the findings are incomplete (exit 2), so that a
    /// repository of charts never passes on nothing.
    fn render_walked_chart(
        &mut self,
        dir: &Path,
        (values, unmatched): (Vec<PathBuf>, Vec<String>),
    ) {
        let shown = shown_dir(dir);
        for entry in unmatched {
            self.notes.push(format!(
                "note: {shown}: chart-values entry '{entry}' matches no file"
            ));
        }
        let rendered = crate::helm::Chart::open(dir).and_then(|chart| {
            let bytes = crate::helm::render(dir, "release-name", &values, &[])?;
            Ok((chart, bytes))
        });
        match rendered {
            Ok((chart, bytes)) => {
                let name = format!("{shown} (helm template)");
                let with = match values.is_empty() {
                    true => "the chart's own values".to_string(),
                    false => {
                        let files: Vec<String> = values
                            .iter()
                            .map(|v| v.strip_prefix(dir).unwrap_or(v).display().to_string())
                            .collect();
                        format!(
                            "the chart's values and then {} (chart-values)",
                            files.join(", ")
                        )
                    }
                };
                self.notes.push(format!(
                    "note: {shown} is a Helm chart: linted as `helm template` renders it with {with}"
                ));
                self.rendered_charts.insert(name.clone(), chart);
                self.inputs.push(Input::Rendered {
                    name,
                    config_path: dir.join("Chart.yaml"),
                    bytes,
                });
            }
            Err(why) => {
                let message = format!("a Helm chart, not linted: {why}");
                self.notes.push(format!("error: {shown}: {message}"));
                self.walk_errors.push(output::InputError {
                    path: Some(crate::text::shown_path(dir)),
                    message,
                    failed: true,
                });
                self.had_error = true;
            }
        }
    }

    /// The files under the named paths, and why any could not be read.
    fn walked(
        paths: &[String],
        render: bool,
        skip_vendored: impl Fn(&Path) -> bool,
        excluded: impl Fn(&Path) -> bool,
        chart_values: impl Fn(&Path) -> (Vec<PathBuf>, Vec<String>),
    ) -> Found {
        let walked = walk::collect(paths, skip_vendored);
        let mut notes = Vec::new();
        for (p, m) in &walked.errors {
            notes.push(format!("error: {p}: {m}"));
        }
        for n in &walked.notes {
            notes.push(format!("note: {n}"));
        }
        for (p, m) in &walked.refused {
            notes.push(format!("note: {p}: {m}"));
        }
        // A typo in a path, or a directory of other files: zero files linted is no pass.
        if !paths.is_empty()
            && walked.inputs.is_empty()
            && walked.charts.is_empty()
            && walked.errors.is_empty()
            && walked.refused.is_empty()
        {
            notes.push(format!(
                "warning: no YAML or JSON files found under {}: nothing was linted",
                paths.join(", ")
            ));
        }
        let mut found = Found {
            had_error: !walked.errors.is_empty(),
            // Refused links are listed with the unread inputs (a report must not look complete
            // without them), but are no I/O failure: the exit code is the findings'.
            walk_errors: walked
                .errors
                .iter()
                .chain(&walked.refused)
                .map(|(p, m)| output::InputError {
                    path: Some(p.clone()),
                    message: m.clone(),
                    failed: walked.errors.iter().any(|e| e.0 == *p),
                })
                .collect(),
            inputs: walked.inputs,
            notes,
            rendered_charts: HashMap::new(),
            kustomize_builds: Default::default(),
        };
        // A subchart renders as part of the chart that holds it.
        let charts = &walked.charts;
        for c in charts {
            let inside_another = charts
                .iter()
                .any(|other| other != c && c.starts_with(other.join("charts")));
            if render && !inside_another && !excluded(&c.join("Chart.yaml")) {
                found.render_walked_chart(c, chart_values(c));
            }
        }
        let kustomizations: Vec<PathBuf> = found
            .inputs
            .iter()
            .filter(|_| render)
            .filter_map(|i| match i {
                Input::File { path, walked: true }
                    if crate::k8s::kustomize::is_kustomization_file(path) =>
                {
                    Some(path.clone())
                }
                _ => None,
            })
            .filter(|file| !excluded(file))
            .filter_map(|file| file.parent().map(Path::to_path_buf))
            .collect();
        if !kustomizations.is_empty() {
            let roots = crate::kustomize_build::roots(&kustomizations);
            for (dir, why) in roots.not_built {
                found.notes.push(format!(
                    "note: {}: a kustomization not built ({why}): its files are linted one by one",
                    crate::text::shown_path(&dir)
                ));
            }
            // Each build is a process of its own: run them side by side.
            let builds: Vec<(PathBuf, Result<Vec<u8>, crate::kustomize_build::NotBuilt>)> = roots
                .built
                .into_par_iter()
                .map(|dir| {
                    let built = crate::kustomize_build::build(&dir);
                    (dir, built)
                })
                .collect();
            for (dir, built) in builds {
                found.add_kustomize_build(&dir, built);
            }
        }
        found
    }

    /// A Kustomize root met in a walk: its build, linted as [`crate::kustomize_build`] says,
    /// named after the directory. Without `kustomize` (or `kubectl`), or when the build fails,
    /// it is an input that could not be linted, as a chart is.
    fn add_kustomize_build(
        &mut self,
        dir: &Path,
        built: Result<Vec<u8>, crate::kustomize_build::NotBuilt>,
    ) {
        let shown = shown_dir(dir);
        match built {
            Ok(bytes) => {
                let name = format!("{shown} (kustomize build)");
                self.kustomize_builds
                    .insert(name.clone(), dir.to_path_buf());
                self.inputs.push(Input::Rendered {
                    name,
                    config_path: dir.join("kustomization.yaml"),
                    bytes,
                });
            }
            Err(crate::kustomize_build::NotBuilt::NoTool(why)) => {
                let message = format!(
                    "a Kustomize overlay, not built: {why}, or exclude {shown}/kustomization.yaml to lint its files one by one"
                );
                self.notes.push(format!("error: {shown}: {message}"));
                self.walk_errors.push(output::InputError {
                    path: Some(shown),
                    message,
                    failed: true,
                });
                self.had_error = true;
            }
            // Listed with the inputs not linted, but no failure of the run: the root's own files
            // are linted, and what Kustomize needs to build it may exist only in a pipeline.
            Err(crate::kustomize_build::NotBuilt::Refused(why)) => {
                let message = format!("a Kustomize overlay that kustomize did not build, so judged file by file: {why}");
                self.notes.push(format!("warning: {shown}: {message}"));
                self.walk_errors.push(output::InputError {
                    path: Some(shown),
                    message,
                    failed: false,
                });
            }
        }
    }
}

/// The findings (rule, line) of a file linted on its own, as a Kustomize build's trace asks.
type Said = Arc<Vec<(crate::diagnostic::Code, usize)>>;

/// A directory as reports name it: without a leading `./`, and `.` for the one the run is in.
fn shown_dir(dir: &Path) -> String {
    let shown = crate::text::shown_path(dir);
    if shown.is_empty() {
        ".".to_string()
    } else {
        shown
    }
}

/// One run over manifests: the rule selection, where configs come from, the inputs found, whether
/// finding them already failed somewhere, and what the run knows beyond each file.
pub struct Run {
    pub sel: Selection,
    /// What the run knows beyond each file: the project files around the inputs, image facts
    /// (`inspect_images` of the CLI) and the LimitRanges and VPAs of all inputs, which apply
    /// across files ([`Run::index`]).
    pub project: Project,
    /// Files [`Run::index`] read, by path, kept for the lint so that each file is read once
    /// (up to [`READ_AHEAD_BYTES`] in all; beyond that a file is read again when linted). The
    /// first load of a path takes its bytes.
    read_ahead: HashMap<PathBuf, std::sync::Mutex<Option<Vec<u8>>>>,
    /// What was read of a standard input above the cap, in the pieces it was read in: `fix -`
    /// passes it on, with the rest, rather than lose it.
    stdin_over_cap: std::sync::Mutex<Vec<Vec<u8>>>,
    pub finder: ConfigFinder,
    /// Paths that could not be walked or read before linting began.
    pub walk_errors: Vec<output::InputError>,
    /// `--exclude` (replacing each config's `exclude`) and `--extend-exclude`.
    exclude: Option<crate::config::Globs>,
    extend_exclude: Option<crate::config::Globs>,
    pub inputs: Vec<Input>,
    pub had_error: bool,
    pub stdin_name: String,
    /// The chart whose renders are linted (`--helm`, `--chart`).
    pub chart: Option<crate::helm::Chart>,
    /// The charts a walk met and rendered, by the name each render is reported under.
    rendered_charts: HashMap<String, crate::helm::Chart>,
    /// The Kustomize roots a walk built, by the name their build is reported under.
    kustomize_builds: HashMap<String, PathBuf>,
    /// Per file a Kustomize build traced a finding to, the findings (rule, line) the file has
    /// when linted on its own; None when the run does not lint it.
    already_said: std::sync::Mutex<HashMap<PathBuf, Option<Said>>>,
    /// The index in `inputs` of each input file, by its real path (for [`Run::already_said`]).
    inputs_by_real: std::sync::OnceLock<HashMap<PathBuf, usize>>,
    /// In a session, the repository whose LimitRanges and VPAs `project.index` holds
    /// ([`Run::index_repository_of`]).
    indexed_repository: Option<PathBuf>,
    /// What finding the inputs had to say: unreadable paths (`error: …`), links not followed and
    /// charts skipped (`note: …`), for the front end to show.
    pub notes: Vec<String>,
}

impl Run {
    /// Where an input comes from, as its report names it (reports are ordered by that name).
    pub fn origin(&self, input: &Input) -> Origin {
        match input {
            Input::Stdin => Origin::Stdin(self.stdin_name.clone()),
            Input::File { path, .. } => Origin::File(path.clone()),
            Input::Rendered { name, .. } => Origin::Stdin(name.clone()),
        }
    }

    /// Read and decode one input and find its config.
    pub fn load(&self, input: &Input) -> Result<Loaded, Error> {
        self.load_keeping(input, false)
    }

    /// [`Run::load`]; with `keep`, bytes read ahead stay for the lint, which then reads the file
    /// no second time (a named pipe cannot be read twice).
    fn load_keeping(&self, input: &Input, keep: bool) -> Result<Loaded, Error> {
        let origin = self.origin(input);
        let (config_path, bytes) = match input {
            Input::Stdin => {
                // Capped like files: an endless or huge stream must not exhaust memory.
                let read = read_stdin_capped().map_err(|e| Error::Input {
                    name: self.stdin_name.clone(),
                    message: format!("cannot read standard input: {e}"),
                })?;
                match read {
                    StdinRead::Whole(buf) => (PathBuf::from(&self.stdin_name), buf),
                    StdinRead::OverCap(pieces) => {
                        let bytes = pieces.iter().map(|p| p.len() as u64).sum();
                        *self
                            .stdin_over_cap
                            .lock()
                            .unwrap_or_else(|e| e.into_inner()) = pieces;
                        let cfg = self.finder.for_file(Path::new(&self.stdin_name))?;
                        let failure = DecodeFailure {
                            origin,
                            error: crate::source::DecodeError::TooLarge { bytes },
                            bytes: Vec::new(),
                        };
                        return Ok(Some((Err(Box::new(failure)), cfg)));
                    }
                }
            }
            Input::File { path, .. } => {
                let kept = self.read_ahead.get(path).and_then(|s| {
                    let mut b = s.lock().ok()?;
                    if keep {
                        b.clone()
                    } else {
                        b.take()
                    }
                });
                let b = match kept {
                    Some(b) => b,
                    None => read_capped(path).map_err(|e| Error::Input {
                        name: crate::text::shown_path(path),
                        message: e.to_string(),
                    })?,
                };
                (path.clone(), b)
            }
            Input::Rendered {
                config_path, bytes, ..
            } => (config_path.clone(), bytes.clone()),
        };
        let cfg = self.finder.for_file(&config_path)?;
        if let Input::File { path, walked: true } = input {
            if self.excluded(&cfg, path) {
                return Ok(None);
            }
        }
        Ok(Some((Source::decode(origin, bytes), cfg)))
    }
}

impl Run {
    /// Whether a walked file is skipped: by `--extend-exclude`, and by `--exclude` when it is
    /// given, else by its config's `exclude`. Command-line globs match the path as the walk names
    /// it, without a leading `./`.
    fn excluded(&self, cfg: &Config, path: &Path) -> bool {
        is_excluded(&self.exclude, &self.extend_exclude, cfg, path)
    }

    /// Read what linting the input files will ask of the tree around them (build files and
    /// kustomizations in each directory and the ones above it) on every thread at once. Asked for
    /// by the first file under each directory instead, the reading fell to one thread while the
    /// other waited at the end of its batch (docs/performance.md).
    pub fn read_surroundings(&self) {
        let dirs: std::collections::BTreeSet<&Path> = self
            .inputs
            .iter()
            .filter_map(|i| match i {
                Input::File { path, .. } => path.parent(),
                _ => None,
            })
            .collect();
        dirs.par_iter()
            .for_each(|dir| self.project.read_around(dir));
    }

    /// Collect the LimitRanges and VPAs of every input file, for the others to use. Only files
    /// whose bytes name one of those kinds are parsed. A single input needs no index (its own
    /// objects are read as it is linted), and standard input is read only once, when linted, so
    /// its objects apply within it.
    pub fn index(&mut self) {
        let around = self.repository_files();
        if self.inputs.len() < 2 && around.is_empty() {
            return;
        }
        let kept = std::sync::atomic::AtomicUsize::new(0);
        // Per file: its bytes when kept for the lint, and its cross-file objects.
        type Read = (Option<(PathBuf, Vec<u8>)>, Option<Index>);
        let around = around.iter().map(|path| (path, false));
        let read: Vec<Read> = self
            .inputs
            .iter()
            .filter_map(|input| match input {
                Input::File { path, .. } => Some((path, true)),
                _ => None,
            })
            .chain(around)
            .collect::<Vec<_>>()
            .par_iter()
            .filter_map(|&(path, linted)| {
                // A file that cannot be read is reported when it is linted.
                let bytes = read_capped(path).ok()?;
                // Most files name neither kind: their bytes are searched, never decoded.
                let index = Index::may_hold(&bytes)
                    .then(|| {
                        let origin = Origin::File(path.clone());
                        Source::decode(origin, bytes.clone()).map(|src| Index::of(&src))
                    })
                    .and_then(Result::ok);
                use std::sync::atomic::Ordering::Relaxed;
                let keep = linted
                    && kept.fetch_add(bytes.len(), Relaxed) + bytes.len() <= READ_AHEAD_BYTES;
                Some((keep.then(|| (path.clone(), bytes)), index))
            })
            .collect();
        let mut others = Index::default();
        self.read_ahead.reserve(read.len());
        for (bytes, index) in read {
            if let Some((path, bytes)) = bytes {
                self.read_ahead
                    .insert(path, std::sync::Mutex::new(Some(bytes)));
            }
            if let Some(index) = index {
                others = others.merge(index);
            }
        }
        self.project.index = others;
    }

    /// For a session (the language server): let `project.index` hold the LimitRanges and VPAs
    /// of the git repository around `file`, found as a walk of its root finds them, so that an
    /// open document gets the answer `lint` gives it from the command line. Read once per
    /// repository, until [`Run::forget_index`]; outside a repository a document stands alone.
    pub fn index_repository_of(&mut self, file: &Path) {
        let root = file
            .parent()
            .and_then(|d| std::fs::canonicalize(d).ok())
            .and_then(|d| walk::repository_root(&d));
        if root == self.indexed_repository {
            return;
        }
        self.project.index = Index::default();
        self.indexed_repository = root.clone();
        let Some(root) = root else {
            return;
        };
        let walked = walk::collect(&[root.to_string_lossy().into_owned()], |dir| {
            skips_vendored(&self.finder, self.exclude.is_some(), dir)
        });
        let files: Vec<PathBuf> = walked
            .inputs
            .into_iter()
            .filter_map(|input| match input {
                Input::File { path, .. } => Some(path),
                _ => None,
            })
            .filter(|path| {
                !self
                    .finder
                    .for_file(path)
                    .is_ok_and(|c| self.excluded(&c, path))
            })
            .collect();
        self.project.index = files
            .par_iter()
            .filter_map(|path| {
                let bytes = read_capped(path).ok()?;
                Index::may_hold(&bytes).then_some(())?;
                let src = Source::decode(Origin::File(path.clone()), bytes).ok()?;
                Some(Index::of(&src))
            })
            .reduce(Index::default, Index::merge);
    }

    /// Read the repository's LimitRanges and VPAs again at the next [`Run::index_repository_of`]
    /// (a file was saved or changed on disk).
    pub fn forget_index(&mut self) {
        self.indexed_repository = None;
        self.project.index = Index::default();
    }

    /// The other manifests of the repositories that hold the files named one by one: pre-commit
    /// passes only the staged files, and a Deployment staged alone must still see the
    /// LimitRanges and VPAs that `lint .` at the repository's root would give it. Found as a
    /// walk of the root finds them (the same exclusions), named from where the run stands.
    fn repository_files(&self) -> Vec<PathBuf> {
        let named_one_by_one = |i: &Input| matches!(i, Input::File { walked: false, .. });
        if !self.inputs.iter().any(named_one_by_one) {
            return Vec::new();
        }
        let here = std::env::current_dir().unwrap_or_default();
        let mut named = std::collections::HashSet::new();
        let mut roots = std::collections::BTreeSet::new();
        let mut repositories = walk::RepositoryRoots::default();
        let mut real_paths = walk::RealPaths::default();
        for input in &self.inputs {
            let Input::File { path, walked } = input else {
                continue;
            };
            let Some(real) = real_paths.of(path) else {
                continue;
            };
            if !walked {
                roots.extend(real.parent().and_then(|dir| repositories.of(dir)));
            }
            named.insert(real);
        }
        let mut files = Vec::new();
        for root in roots {
            let shown = root.strip_prefix(&here).map_or(root.clone(), |r| {
                if r.as_os_str().is_empty() {
                    PathBuf::from(".")
                } else {
                    r.to_path_buf()
                }
            });
            let walked = walk::collect(&[shown.to_string_lossy().into_owned()], |dir| {
                skips_vendored(&self.finder, self.exclude.is_some(), dir)
            });
            for input in walked.inputs {
                let Input::File { path, .. } = input else {
                    continue;
                };
                let excluded = self
                    .finder
                    .for_file(&path)
                    .is_ok_and(|c| self.excluded(&c, &path));
                let real = real_paths.of(&path).unwrap_or_else(|| path.clone());
                if !excluded && !named.contains(&real) {
                    files.push(path);
                }
            }
        }
        files
    }

    /// Whether an input is the build of a Kustomize root (see [`crate::kustomize_build`]).
    pub fn is_kustomize_build(&self, origin: &Origin) -> bool {
        matches!(origin, Origin::Stdin(name) if self.kustomize_builds.contains_key(name))
    }

    /// Build the Kustomize roots of the walk again and lint the builds: `fix` wrote files they
    /// include, and a fix to a base can be wrong for an overlay (a GOMEMLIMIT sized for the
    /// base's limit, above the overlay's). A build that fails now is reported as not linted.
    pub fn relint_kustomize_builds(&mut self) -> Vec<Result<FileReport, output::InputError>> {
        if let Ok(mut m) = self.already_said.lock() {
            m.clear();
        }
        self.read_ahead.clear();
        let mut builds: Vec<(&String, &PathBuf)> = self.kustomize_builds.iter().collect();
        builds.sort();
        builds
            .into_par_iter()
            .map(|(name, dir)| {
                let bytes = crate::kustomize_build::build(dir).map_err(|why| {
                    let (why, failed) = match why {
                        crate::kustomize_build::NotBuilt::NoTool(w) => (w, true),
                        crate::kustomize_build::NotBuilt::Refused(w) => (w, false),
                    };
                    output::InputError {
                        path: Some(shown_dir(dir)),
                        message: format!("a Kustomize overlay, not built after the fixes: {why}"),
                        failed,
                    }
                })?;
                let cfg = self
                    .finder
                    .for_file(&dir.join("kustomization.yaml"))
                    .map_err(|e| output::InputError {
                        path: Some(shown_dir(dir)),
                        message: e.to_string(),
                        failed: true,
                    })?;
                let src = Source::decode(Origin::Stdin(name.clone()), bytes);
                Ok(lint_loaded(self, src, &cfg))
            })
            .collect()
    }

    /// Whether `file`, linted on its own in this run, has a finding of `code` starting on
    /// `line` (None: the run does not lint the file). Each file is linted once for this.
    fn already_said(
        &self,
        file: &Path,
        code: crate::diagnostic::Code,
        line: usize,
    ) -> Option<bool> {
        let real = std::fs::canonicalize(file).ok()?;
        let hit = self.already_said.lock().ok()?.get(&real).cloned();
        let said = match hit {
            Some(said) => said,
            None => {
                // The run's files by their real path, worked out once for all traces.
                let by_real = self.inputs_by_real.get_or_init(|| {
                    self.inputs
                        .iter()
                        .enumerate()
                        .filter_map(|(n, i)| match i {
                            Input::File { path, .. } => {
                                Some((std::fs::canonicalize(path).ok()?, n))
                            }
                            _ => None,
                        })
                        .collect()
                });
                let input = by_real.get(&real).map(|&n| &self.inputs[n]);
                let said = match input.map(|i| self.load(i)) {
                    Some(Ok(Some((Ok(src), cfg)))) => {
                        let r = crate::stream::lint(src, &cfg, &self.sel, &self.project);
                        Some(Arc::new(
                            r.findings
                                .iter()
                                .map(|f| (f.diagnostic.code, f.start.0))
                                .collect(),
                        ))
                    }
                    _ => None,
                };
                if let Ok(mut m) = self.already_said.lock() {
                    m.insert(real, said.clone());
                }
                said
            }
        };
        said.map(|s| s.contains(&(code, line)))
    }

    /// Load every input in parallel and run `f` on each (a config `exclude` skips an input).
    /// Inputs that cannot be read come back as errors.
    pub fn map_inputs<T: Send>(
        &self,
        f: impl Fn(Result<Source, Box<DecodeFailure>>, &Config) -> T + Sync,
    ) -> (Vec<T>, Vec<Error>) {
        self.map_loaded(false, f)
    }

    /// [`Run::map_inputs`] for a pass before the lint: what was read ahead stays for the lint.
    pub fn map_inputs_before_lint<T: Send>(
        &self,
        f: impl Fn(Result<Source, Box<DecodeFailure>>, &Config) -> T + Sync,
    ) -> (Vec<T>, Vec<Error>) {
        self.map_loaded(true, f)
    }

    fn map_loaded<T: Send>(
        &self,
        keep: bool,
        f: impl Fn(Result<Source, Box<DecodeFailure>>, &Config) -> T + Sync,
    ) -> (Vec<T>, Vec<Error>) {
        let errors = std::sync::Mutex::new(Vec::new());
        let out = self
            .inputs
            .par_iter()
            .filter_map(|input| match self.load_keeping(input, keep) {
                Err(e) => {
                    errors.lock().unwrap().push(e);
                    None
                }
                Ok(None) => None,
                Ok(Some((loaded, cfg))) => Some(f(loaded, &cfg)),
            })
            .collect();
        (out, errors.into_inner().unwrap())
    }
}

/// The reports with only the findings their files did not have at `rev` (see [`crate::baseline`]).
pub fn only_new(
    p: &Run,
    rev: &str,
    mut reports: Vec<FileReport>,
) -> Result<Vec<FileReport>, Error> {
    let files: Vec<PathBuf> = reports
        .iter()
        .filter_map(|r| match &r.origin {
            Origin::File(path) => Some(path.clone()),
            Origin::Stdin(_) => None,
        })
        .collect();
    let then = crate::baseline::read(rev, &files).map_err(Error::Usage)?;
    reports.par_iter_mut().for_each(|r| {
        let Origin::File(path) = &r.origin else {
            return;
        };
        let Some(Some(blob)) = then.files.get(path) else {
            // No such file at the revision: everything in it is new.
            return;
        };
        let mut counts = crate::baseline::Counts::new();
        if let Ok(cfg) = p.finder.for_file(path) {
            // Linted under today's name, so that fingerprints compare across a rename.
            let decoded = match blob {
                crate::baseline::Blob::Bytes(bytes) => {
                    Source::decode(r.origin.clone(), bytes.clone())
                }
                crate::baseline::Blob::OverCap(bytes) => Err(Box::new(DecodeFailure {
                    origin: r.origin.clone(),
                    error: crate::source::DecodeError::TooLarge { bytes: *bytes },
                    bytes: Vec::new(),
                })),
            };
            let old = match decoded {
                Ok(src) => crate::stream::lint(src, &cfg, &p.sel, &p.project),
                Err(failure) => decode_failure(*failure),
            };
            for f in &old.findings {
                *counts.entry(f.diagnostic.fingerprint).or_default() += 1;
            }
        }
        let findings = std::mem::take(&mut r.findings);
        r.findings = crate::baseline::keep_new(findings, counts, |f| f.diagnostic.fingerprint);
    });
    Ok(reports)
}

/// Lint one loaded input as the run's settings say (a chart's findings traced to its templates).
pub fn lint_loaded(
    p: &Run,
    loaded: Result<Source, Box<DecodeFailure>>,
    cfg: &Config,
) -> FileReport {
    match loaded {
        Ok(src) => {
            let chart = p.chart.as_ref().or_else(|| match &src.origin {
                Origin::Stdin(name) => p.rendered_charts.get(name),
                Origin::File(_) => None,
            });
            let build = match &src.origin {
                Origin::Stdin(name) if p.kustomize_builds.contains_key(name) => Some(name.clone()),
                _ => None,
            };
            if chart.is_none() && build.is_none() {
                return crate::stream::lint(src, cfg, &p.sel, &p.project);
            }
            lint_source_with(src, cfg, &p.sel, &p.project, |_, y, diags| {
                if let Some(chart) = chart {
                    crate::helm::annotate(y, diags, chart);
                }
                if let Some(build) = &build {
                    crate::kustomize_build::trace(y, build, diags, &|file, code, line| {
                        p.already_said(file, code, line)
                    });
                }
            })
        }
        Err(failure) => decode_failure(*failure),
    }
}

/// How many bytes of input files [`Run::index`] keeps for the lint pass: enough for most
/// repositories, bounded so that a run over a huge tree does not hold all of it at once.
const READ_AHEAD_BYTES: usize = 256 << 20;

/// Read a file without loading more than the size cap (a 100 GB file must not exhaust memory).
pub fn read_capped(path: &Path) -> std::io::Result<Vec<u8>> {
    let cap = crate::source::MAX_STREAM_BYTES;
    let (f, mut buf) =
        open_input(path).map_err(|e| std::io::Error::new(e.kind(), walk::describe_io(&e)))?;
    // Sized from the file's length: growing from empty cost a probe read and copies per file.
    let len = f.metadata().map_or(0, |m| m.len());
    buf.reserve(len.min(cap) as usize + 1);
    let left = (cap + 1).saturating_sub(buf.len() as u64);
    f.take(left).read_to_end(&mut buf)?;
    Ok(buf)
}

/// Standard input, read up to the cap of a stream.
pub enum StdinRead {
    Whole(Vec<u8>),
    /// More than the cap: what was read (one byte past it), in pieces, since one block of that
    /// size and its copy would need twice the cap of address space.
    OverCap(Vec<Vec<u8>>),
}

impl StdinRead {
    /// The bytes read, in one block.
    pub fn into_bytes(self) -> Vec<u8> {
        match self {
            StdinRead::Whole(b) => b,
            StdinRead::OverCap(pieces) => pieces.concat(),
        }
    }
}

/// Standard input up to one byte past the cap of a stream. Its size is not known ahead, so it
/// is read in pieces and joined once when it fits.
pub fn read_stdin_capped() -> std::io::Result<StdinRead> {
    read_to_cap(
        &mut std::io::stdin().lock(),
        crate::source::MAX_STREAM_BYTES,
    )
}

fn read_to_cap(r: &mut impl Read, cap: u64) -> std::io::Result<StdinRead> {
    // Pieces double from 8 MiB to 64 MiB: a small input takes one small block, and most of a
    // large one goes in blocks above 16 MiB, which mimalloc 2 gives a segment each (below that it
    // puts them in shared 32 MiB segments: `MI_LARGE_OBJ_SIZE_MAX` and `MI_SEGMENT_SHIFT` in its
    // `include/mimalloc/types.h`, 2.3). In 8 MiB pieces, 512 MiB took about 700 MiB of address
    // space and did not fit under a 1 GiB limit (tests/fast/hostile.rs).
    let mut piece_size: u64 = 8 << 20;
    let mut pieces: Vec<Vec<u8>> = Vec::new();
    let mut total = 0u64;
    while total <= cap {
        // Exactly the piece's size: a vector grown as it fills would reserve up to twice it.
        let size = piece_size.min(cap + 1 - total);
        piece_size = (piece_size * 2).min(64 << 20);
        let mut piece = Vec::with_capacity(size as usize);
        r.by_ref().take(size).read_to_end(&mut piece)?;
        if piece.is_empty() {
            break;
        }
        total += piece.len() as u64;
        pieces.push(piece);
    }
    Ok(if total > cap {
        StdinRead::OverCap(pieces)
    } else if pieces.len() == 1 {
        StdinRead::Whole(pieces.pop().unwrap_or_default())
    } else {
        StdinRead::Whole(pieces.concat())
    })
}

impl Run {
    /// What was read of a standard input above the cap (see [`Run::load`]), taken.
    pub fn take_stdin_over_cap(&self) -> Vec<Vec<u8>> {
        std::mem::take(
            &mut *self
                .stdin_over_cap
                .lock()
                .unwrap_or_else(|e| e.into_inner()),
        )
    }
}

/// Open an input for reading, with what was already read from it. A named pipe is opened without
/// waiting for a writer (a plain open waits for ever when nothing writes to it), and reading it
/// once without waiting tells whether anything does; one that has a writer is then read to its
/// end as any pipe is, as `<(helm template …)` needs.
#[cfg(unix)]
fn open_input(path: &Path) -> std::io::Result<(std::fs::File, Vec<u8>)> {
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    use std::os::unix::io::AsRawFd;
    let fifo = std::fs::metadata(path).is_ok_and(|m| m.file_type().is_fifo());
    if !fifo {
        return Ok((std::fs::File::open(path)?, Vec::new()));
    }
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    let mut first = vec![0; 64 * 1024];
    let n = match f.read(&mut first) {
        // End of file at once: no process has the pipe open for writing.
        Ok(0) => {
            return Err(std::io::Error::other(
                "a named pipe that nothing writes to; not read",
            ))
        }
        Ok(n) => n,
        // A writer has it open and has not written yet.
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => 0,
        Err(e) => return Err(e),
    };
    first.truncate(n);
    // SAFETY: fcntl on a descriptor `f` owns, clearing one status flag.
    unsafe {
        let flags = libc::fcntl(f.as_raw_fd(), libc::F_GETFL);
        if flags < 0 || libc::fcntl(f.as_raw_fd(), libc::F_SETFL, flags & !libc::O_NONBLOCK) < 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok((f, first))
}

#[cfg(not(unix))]
fn open_input(path: &Path) -> std::io::Result<(std::fs::File, Vec<u8>)> {
    Ok((std::fs::File::open(path)?, Vec::new()))
}

/// [`Run::excluded`], before the run exists: the walk asks it of the charts it found.
fn is_excluded(
    exclude: &Option<crate::config::Globs>,
    extend_exclude: &Option<crate::config::Globs>,
    cfg: &Config,
    path: &Path,
) -> bool {
    let walked = path.to_string_lossy();
    let walked = walked.strip_prefix("./").unwrap_or(&walked);
    let by =
        |g: &Option<crate::config::Globs>| g.as_ref().is_some_and(|g| g.matching(walked).is_some());
    by(extend_exclude)
        || match exclude {
            Some(_) => by(exclude),
            None => excluded(cfg, path),
        }
}

fn excluded(cfg: &Config, path: &Path) -> bool {
    cfg.excludes(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn standard_input_is_whole_up_to_the_cap_and_over_it_one_byte_later() {
        let cap = 40 << 20; // pieces of 8 and 16 MiB, then the rest
        let at_cap = vec![b'a'; cap as usize];
        match read_to_cap(&mut &at_cap[..], cap).unwrap() {
            StdinRead::Whole(b) => assert_eq!(b, at_cap),
            StdinRead::OverCap(_) => panic!("the cap itself fits"),
        }
        let over = vec![b'b'; cap as usize + 5];
        match read_to_cap(&mut &over[..], cap).unwrap() {
            StdinRead::OverCap(pieces) => {
                // One byte past the cap is read, and no more is taken from the input.
                assert_eq!(pieces.concat(), over[..cap as usize + 1]);
                let sizes: Vec<usize> = pieces.iter().map(Vec::len).collect();
                assert_eq!(sizes, [8 << 20, 16 << 20, (16 << 20) + 1]);
            }
            StdinRead::Whole(_) => panic!("over the cap"),
        }
        let empty: &[u8] = &[];
        assert!(
            matches!(read_to_cap(&mut &empty[..], cap).unwrap(), StdinRead::Whole(b) if b.is_empty())
        );
    }
}
