//! `golint-k8s lint`: collect inputs, lint them in parallel, render, and pick the exit code.

use std::collections::HashSet;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

use clap::Args;
use rayon::prelude::*;

use super::{FailOn, Format};
use crate::config::{Config, GoVersion, Overrides};
use crate::diagnostic::registry;
use crate::diagnostic::Code;
use crate::diagnostic::Severity;
use crate::error::Error;
use crate::lint::{FileReport, Selection, Stats};
use crate::output;
use crate::run::{lint_loaded, only_new, Run};
use crate::walk::Input;

/// Below this many files a run takes well under a second: no progress line.
const PROGRESS_MIN_FILES: usize = 2000;

/// What every command that reports findings shares: which rules, which config, which Go, and how
/// the report is written and judged.
#[derive(Args, Debug, Clone)]
pub struct ReportArgs {
    /// How findings are written [default: the config's `format`, else human].
    #[arg(long = "format", value_enum, value_name = "FORMAT")]
    pub format_flag: Option<Format>,
    /// The format in force: the flag, else the config's, else human ([`ReportArgs::settle`]).
    #[arg(skip = Format::Human)]
    pub format: Format,
    /// Write the report to this file instead of standard output.
    #[arg(long, short = 'o')]
    pub output: Option<PathBuf>,
    /// Use this config file instead of looking for .golint-k8s.yaml (or .yml).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Only these rules (codes, names or blocks like GK2), comma-separated or repeated.
    #[arg(long, value_delimiter = ',')]
    pub select: Vec<String>,
    /// Skip these rules (codes, names or blocks like GK2), comma-separated or repeated.
    #[arg(long, value_delimiter = ',')]
    pub ignore: Vec<String>,
    /// Exit 1 when a finding has at least this severity [default: the config's `fail-on`, else
    /// warning].
    #[arg(long = "fail-on", value_enum, value_name = "SEVERITY")]
    pub fail_on_flag: Option<FailOn>,
    /// The threshold in force, as `format` is.
    #[arg(skip = FailOn::Warning)]
    pub fail_on: FailOn,
    /// Go version (e.g. 1.25) of the containers whose version nothing else shows: the annotation,
    /// config go-versions, the image's build info, the catalog and the repository's go.mod rank
    /// above it (docs/rules.md, "Which Go version"). Replaces the config's go-version.
    #[arg(long)]
    pub go_version: Option<String>,
    /// What a container runs when nothing shows its runtime: `true` (Go: its findings fail the
    /// gate like any other; for repositories whose images are all Go) or `false` (not Go).
    /// Unset, it is judged Go but its Go findings are info and their fixes unsafe. Replaces the
    /// config's assume-go; `--assume-go` alone means true.
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true")]
    pub assume_go: Option<bool>,
    /// No colours, even on a terminal.
    #[arg(long)]
    pub no_color: bool,
    /// Print nothing but the findings (no summary line).
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// Print the number of findings per rule.
    #[arg(long)]
    pub statistics: bool,
    /// Exit 0 even when findings reach --fail-on; inputs that cannot be read still exit 2.
    #[arg(long)]
    pub exit_zero: bool,
}

#[derive(Args, Debug, Clone)]
pub struct LintArgs {
    /// Files or directories to lint; - reads standard input.
    #[arg(default_value = ".")]
    pub paths: Vec<String>,
    #[command(flatten)]
    pub report: ReportArgs,
    /// CPUs of the nodes, for the throttling numbers.
    #[arg(long)]
    pub node_cpus: Option<u32>,
    /// Name standard input in output and find its config from there.
    #[arg(long)]
    pub stdin_filename: Option<String>,
    /// Render this Helm chart with `helm template` and lint the output; findings point back at
    /// the template line and the values key behind them.
    #[arg(long, value_name = "CHART")]
    pub helm: Option<PathBuf>,
    /// With --helm: a values file for `helm template` (repeatable).
    #[arg(long = "values", short = 'f', value_name = "FILE", requires = "helm")]
    pub values: Vec<PathBuf>,
    /// With --helm: a value for `helm template --set` (repeatable).
    #[arg(long, value_name = "KEY=VALUE", requires = "helm")]
    pub set: Vec<String>,
    /// With --helm: the release name [default: release-name].
    #[arg(long, value_name = "NAME", requires = "helm")]
    pub release: Option<String>,
    /// For rendered standard input: the chart directory it was rendered from, so that findings
    /// point back at the template line and the values key behind them.
    #[arg(long, value_name = "DIR", conflicts_with = "helm")]
    pub chart: Option<PathBuf>,
    /// List every container with the runtime it was judged to run, the evidence, its Go version
    /// and whether it sizes GOMAXPROCS / GOMEMLIMIT itself, instead of linting.
    #[arg(long)]
    pub show_containers: bool,
    /// Print the config file that governs each path (and where its search stopped) with the
    /// settings in force there, instead of linting.
    #[arg(long)]
    pub show_settings: bool,
    /// Skip files found in directories that match these globs (as the walk names them, e.g.
    /// `vendor/**`), instead of the config's `exclude`; comma-separated or repeated.
    #[arg(long, value_name = "GLOB", value_delimiter = ',')]
    pub exclude: Vec<String>,
    /// Skip files found in directories that match these globs too, besides the config's
    /// `exclude`; comma-separated or repeated.
    #[arg(long, value_name = "GLOB", value_delimiter = ',')]
    pub extend_exclude: Vec<String>,
    /// Report only the findings that the files did not have at this git revision (a commit,
    /// branch or tag), matched by fingerprint, so that moved lines are not new findings.
    #[arg(long, value_name = "REV")]
    pub new_from_rev: Option<String>,
    #[command(flatten)]
    pub images: ImageArgs,
    /// Benchmarks only: read, decode and parse every input the same way, then stop, so that the
    /// cost of linting can be compared with the cost of just reading the YAML.
    #[arg(long, hide = true)]
    pub parse_only: bool,
    /// Benchmarks only: walk and read the inputs and collect the objects that act across files
    /// (the first pass of every lint), then stop, so that the cost of that pass shows on its own.
    #[arg(long, hide = true)]
    pub index_only: bool,
}

/// Reading the containers' images from their registries.
#[derive(Args, Debug, Clone, Default)]
pub struct ImageArgs {
    /// Read each container image from its registry (manifest, config, and the layers holding the
    /// entrypoint) and judge the runtime from the executable itself: Go's build info, another
    /// ELF, or an interpreter. Results are cached by digest ($GOLINT_K8S_CACHE, else the user
    /// cache directory); a tag's digest is kept for 10 minutes.
    #[arg(long)]
    pub inspect_images: bool,
    /// With --inspect-images: use the cache only, never the network.
    #[arg(long, requires = "inspect_images")]
    pub offline: bool,
    /// With --inspect-images: the platform picked from a multi-platform image [default:
    /// linux/amd64; in a cluster, its nodes' own].
    #[arg(long, value_name = "OS/ARCH[/VARIANT]")]
    pub platform: Option<String>,
    /// With --inspect-images: a registry (host or host:port) read over plain HTTP, as loopback
    /// registries are (repeatable).
    #[arg(long = "insecure-registry", value_name = "HOST")]
    pub insecure_registry: Vec<String>,
    /// With --inspect-images: the timeout of each registry request, in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 30,
          value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub registry_timeout: u64,
    /// Benchmarks only: first write made-up facts (a Go program) into the cache for every image
    /// of the inputs, so that a warm cache can be timed without a registry.
    #[arg(long, hide = true, requires = "inspect_images")]
    pub warm_image_cache: bool,
}

/// Read images from their registries and record what each gave, under the image as the
/// manifests write it, for [`crate::runtime::GoView::decide`]. `targets` pairs that name with the
/// reference read: the same, or (in a cluster) pinned to the digest its pods run. Images that
/// cannot be read, or that do not show their runtime, are a note each.
#[cfg(feature = "images")]
pub fn inspect_and_remember(
    mut targets: Vec<(String, String)>,
    a: &ImageArgs,
    registries: Vec<String>,
    images: &mut crate::image::Inspected,
) {
    targets.sort();
    targets.dedup();
    let opts = crate::image::registry::Options {
        offline: a.offline,
        registries,
        insecure: a.insecure_registry.clone(),
        timeout: std::time::Duration::from_secs(a.registry_timeout.max(1)),
        ..Default::default()
    };
    let opts = crate::image::registry::Options {
        platform: a.platform.clone().unwrap_or(opts.platform),
        ..opts
    };
    let mut read: Vec<String> = targets.iter().map(|(_, r)| r.clone()).collect();
    read.sort();
    read.dedup();
    if a.warm_image_cache {
        use crate::image::registry::{made_up_facts, remember};
        read.iter()
            .for_each(|r| remember(r, &made_up_facts(r), &opts));
    }
    let by_read = crate::image::registry::inspect_all(&read, &opts);
    let facts: std::collections::HashMap<String, Result<crate::image::ImageFacts, String>> =
        targets
            .into_iter()
            .filter_map(|(shown, read)| Some((shown, by_read.get(&read)?.clone())))
            .collect();
    say_image_notes(facts.iter().map(|(r, f)| (r.as_str(), f)));
    images.remember(facts);
}

/// A note for each image that could not be read, then for each that was read but did not show
/// its runtime (a missing entrypoint, a file that is no program), each group by name.
fn say_image_notes<'a>(
    facts: impl Iterator<Item = (&'a str, &'a Result<crate::image::ImageFacts, String>)> + Clone,
) {
    use crate::text::printable;
    let mut failed: Vec<_> = facts
        .clone()
        .filter_map(|(r, f)| Some((r, f.as_ref().err()?)))
        .collect();
    failed.sort();
    for (r, e) in failed {
        let (r, e) = (printable(r), printable(e));
        say!("note: image {r} was not inspected: {e}");
    }
    let mut silent: Vec<_> = facts
        .filter_map(|(r, f)| match &f.as_ref().ok()?.kind {
            crate::image::Runtime::Unknown(why) => Some((r, why)),
            _ => None,
        })
        .collect();
    silent.sort();
    for (r, why) in silent {
        let (r, why) = (printable(r), printable(why));
        say!("note: image {r} did not show its runtime: {why}");
    }
}

/// `--inspect-images --offline`: every answer is the cache's, so each image is looked up the
/// first time a container names it, as the files are linted, instead of reading and parsing
/// every input once more beforehand to list the images (that pass cost as much as the lint). The
/// notes come after the report ([`say_looked_up_notes`]). A run that must know its images first
/// (one that reads registries, warms the cache, or lints another revision too) does not; nor does
/// one where only configs ask for images, as those answer only for their files' images. Returns
/// what to do once the lint is over (keep the cache's snapshot for the next run), when it looks
/// images up so.
fn on_demand_images(p: &mut Run, a: &ImageArgs) -> Option<Box<dyn FnOnce()>> {
    #[cfg(feature = "images")]
    if a.inspect_images && a.offline && !a.warm_image_cache {
        use crate::image::registry::{OfflineCache, Options, DEFAULT_PLATFORM};
        let cache = std::sync::Arc::new(OfflineCache::open(Options {
            offline: true,
            platform: a.platform.clone().unwrap_or(DEFAULT_PLATFORM.to_string()),
            ..Default::default()
        }));
        let asked = cache.clone();
        p.project
            .images
            .look_up_on_demand(Box::new(move |image| asked.answer(image)));
        return Some(Box::new(move || cache.save()));
    }
    let _ = (p, a);
    None
}

/// The notes of the images [`on_demand_images`] looked up, as `--inspect-images` gives them.
fn say_looked_up_notes(p: &Run) {
    let looked = p.project.images.looked_up();
    say_image_notes(looked.iter().map(|(r, f)| (r.as_str(), *f)));
}

fn selection(a: &LintArgs) -> Result<Selection, Error> {
    let resolve = |list: &[String]| -> Result<HashSet<Code>, Error> {
        let mut set = HashSet::new();
        for s in list.iter().filter(|s| !s.trim().is_empty()) {
            let m = registry::matching(s);
            if m.is_empty() {
                return Err(Error::Usage(format!(
                    "unknown rule or rule block {s:?}{} (see `golint-k8s rules`)",
                    registry::did_you_mean(s)
                )));
            }
            set.extend(m.into_iter().map(|r| r.code));
        }
        Ok(set)
    };
    Ok(Selection {
        select: if a.report.select.is_empty() {
            None
        } else {
            Some(resolve(&a.report.select)?)
        },
        ignore: resolve(&a.report.ignore)?,
    })
}

/// Check the arguments, find the inputs and say what could not be walked.
impl ReportArgs {
    /// The format and threshold in force: the flags, else the config that governs the current
    /// directory (or `--config`), else human and warning. A run has one of each, so the config
    /// read is the one at the root of what is linted, as ruff reads its `output-format`.
    pub fn settle(&mut self, run: &Run) -> Result<(), Error> {
        let cfg = run.finder.for_file(Path::new(crate::config::FILE_NAME))?;
        // The config checked the names against the same lists (`config::FORMATS`, `FAIL_ON`).
        let named = |name: &Option<String>| name.as_deref().map(str::to_string);
        self.format = match (self.format_flag, named(&cfg.format)) {
            (Some(f), _) => f,
            (None, Some(name)) => {
                <Format as clap::ValueEnum>::from_str(&name, false).map_err(Error::Usage)?
            }
            (None, None) => Format::Human,
        };
        self.fail_on = match (self.fail_on_flag, named(&cfg.fail_on)) {
            (Some(f), _) => f,
            (None, Some(name)) => {
                <FailOn as clap::ValueEnum>::from_str(&name, false).map_err(Error::Usage)?
            }
            (None, None) => FailOn::Warning,
        };
        Ok(())
    }
}

pub fn prepare(a: &mut LintArgs) -> Result<Run, Error> {
    let sel = selection(a)?;
    let globs = |list: &[String], flag: &str| -> Result<Option<crate::config::Globs>, Error> {
        if list.is_empty() {
            return Ok(None);
        }
        let list = list.iter().map(|g| g.trim_start_matches("./").to_string());
        crate::config::Globs::new(list.collect())
            .map(Some)
            .map_err(|e| Error::Usage(format!("{flag}: {e}")))
    };
    let exclude = globs(&a.exclude, "--exclude")?;
    let extend_exclude = globs(&a.extend_exclude, "--extend-exclude")?;
    let go_version = match a
        .report
        .go_version
        .as_deref()
        .map(|v| (v, GoVersion::parse(v)))
    {
        None => None,
        Some((_, Some(v))) => Some(v),
        Some((v, None)) => {
            return Err(Error::Usage(format!(
                "--go-version must look like 1.25, not {v:?}"
            )))
        }
    };
    if a.node_cpus == Some(0) {
        return Err(Error::Usage("--node-cpus must be 1 or more".into()));
    }
    if a.helm.is_some() && a.paths != ["."] {
        return Err(Error::Usage(
            "--helm renders the chart and lints that; give no other paths with it".into(),
        ));
    }
    let run = Run::new(crate::run::Options {
        sel,
        config: a.report.config.clone(),
        overrides: Overrides {
            go_version,
            node_cpus: a.node_cpus,
            assume_go: a.report.assume_go,
            // The flag reads registries for every file (`inspect_images` below), not the config.
            inspect_images: None,
        },
        exclude,
        extend_exclude,
        paths: a.paths.clone(),
        stdin_name: a.stdin_filename.clone().unwrap_or_else(|| "-".to_string()),
        helm: a.helm.as_ref().map(|dir| crate::run::HelmRender {
            dir: dir.clone(),
            release: a.release.as_deref().unwrap_or("release-name").to_string(),
            values: a.values.clone(),
            set: a.set.clone(),
        }),
        chart: a.chart.clone(),
        render_walked: !a.parse_only && !a.index_only,
    })?;
    for n in &run.notes {
        say!("{n}");
    }
    a.report.settle(&run)?;
    Ok(run)
}

/// `--inspect-images`: read every distinct image of the inputs from its registry, once, and
/// record the facts for the runtime view. An image that cannot be read is a
/// note here and on its containers; the lint goes on with the manifests' evidence.
pub fn inspect_images(p: &mut Run, a: &ImageArgs) {
    // The flag reads every file's images; a config's `inspect-images: true` its files' own.
    let by_config = |cfg: &Config| a.inspect_images || cfg.inspect_images;
    let wanted = a.inspect_images
        || p.inputs.iter().any(|i| match i {
            Input::File { path, .. } => p.finder.for_file(path).is_ok_and(|c| by_config(&c)),
            _ => false,
        });
    if !wanted {
        return;
    }
    #[cfg(not(feature = "images"))]
    {
        say!(
            "note: --inspect-images needs the feature `images`, which this build was made without"
        );
    }
    #[cfg(feature = "images")]
    {
        // Standard input can be read once: kept, to be linted from the same bytes.
        for input in &mut p.inputs {
            if let Input::Stdin = input {
                if let Ok(bytes) = crate::run::read_stdin_capped().map(|r| r.into_bytes()) {
                    *input = Input::Rendered {
                        name: p.stdin_name.clone(),
                        config_path: PathBuf::from(&p.stdin_name),
                        bytes,
                    };
                }
            }
        }
        // Unreadable inputs are reported when they are linted.
        // Each file's config names the registries its images may be read from.
        let (lists, _) = p.map_inputs_before_lint(|loaded, cfg| match loaded {
            Ok(src) if by_config(cfg) => {
                (crate::lint::images(&src, cfg), cfg.image_registries.clone())
            }
            _ => (Vec::new(), Vec::new()),
        });
        let mut registries = Vec::new();
        let mut refs: Vec<(String, String)> = Vec::new();
        for (images, listed) in lists {
            refs.extend(images.into_iter().map(|r| (r.clone(), r)));
            registries.extend(listed);
        }
        registries.sort();
        registries.dedup();
        inspect_and_remember(refs, a, registries, &mut p.project.images);
    }
}

pub fn run(mut a: LintArgs) -> i32 {
    if a.show_settings {
        return show_settings(&a);
    }
    let mut p = match prepare(&mut a) {
        Ok(p) => p,
        Err(e) => return super::fail(e),
    };
    // A progress line only where a person watches and the wait is noticeable.
    if a.parse_only {
        return parse_only(&p);
    }
    p.read_surroundings();
    p.index();
    if a.index_only {
        let _ = writeln!(
            std::io::stdout().lock(),
            "indexed {} objects that act across files",
            p.project.index.count()
        );
        return 0;
    }
    let on_demand = match a.new_from_rev {
        None => on_demand_images(&mut p, &a.images),
        Some(_) => None,
    };
    if on_demand.is_none() {
        inspect_images(&mut p, &a.images);
    }
    let looked_up = |p: &Run| {
        say_looked_up_notes(p);
        if let Some(finish) = on_demand {
            finish();
        }
    };
    if a.show_containers {
        let code = show_containers(&a, &p);
        looked_up(&p);
        return code;
    }
    // A progress line only where a person watches, the wait is noticeable, and the report does
    // not stream onto the same terminal.
    let report_on_terminal = a.report.output.is_none() && std::io::stdout().is_terminal();
    let progress = std::io::stderr().is_terminal()
        && !report_on_terminal
        && p.inputs.len() >= PROGRESS_MIN_FILES;
    if progress {
        say_raw!("golint-k8s: linting {} files…", p.inputs.len());
    }
    // Comparing with a revision needs every file's findings at hand: not streamed.
    if a.new_from_rev.is_none() {
        let code = with_format(&a, Streamed { a: &a, p: &p });
        if progress {
            say_raw!("\r\x1b[K");
        }
        looked_up(&p);
        return code;
    }
    let (reports, errors) = p.map_inputs(|loaded, cfg| {
        let mut report = lint_loaded(&p, loaded, cfg);
        // Only the human format shows source snippets; the others drop each file's text as
        // soon as it is linted, so memory stays bounded by the findings.
        if a.report.format != Format::Human {
            report.source = None;
        }
        report
    });
    if progress {
        // Erase the progress line before anything else is printed.
        say_raw!("\r\x1b[K");
    }
    let mut had_error = p.had_error;
    let mut unread = p.walk_errors.clone();
    for e in errors {
        had_error = true;
        say!("error: {e}");
        unread.push((&e).into());
    }
    unread.extend(reports.iter().filter_map(not_linted));
    let reports = match &a.new_from_rev {
        Some(rev) => match only_new(&p, rev, reports) {
            Ok(r) => r,
            Err(e) => return super::fail(e),
        },
        None => reports,
    };
    report(&a, reports, None, had_error, &unread)
}

/// How many files one streamed batch holds: enough to keep every thread busy, few enough that
/// memory does not grow with the number of files.
const STREAM_BATCH: usize = 512;

/// The report of a run that streams: files are linted in batches in output order, each file's
/// report is rendered on the thread that linted it, and a writer thread writes each batch while
/// the next one is linted, so the linting threads never wait for the output. At most two
/// batches are in flight, so memory does not grow with the number of files. The bytes are those
/// of `output::write` over the same reports.
struct Streamed<'a> {
    a: &'a LintArgs,
    p: &'a Run,
}

impl WithFormat for Streamed<'_> {
    type Out = i32;

    fn with<F: output::Format>(self, format: F) -> i32 {
        let (a, p) = (self.a, self.p);
        let mut order: Vec<(String, &Input)> = p
            .inputs
            .iter()
            .map(|i| (p.origin(i).display_name(), i))
            .collect();
        // The same order as the collected reports: by name, stable.
        order.sort_by(|x, y| x.0.cmp(&y.0));
        let threshold = threshold(a.report.fail_on);
        let format = &format;
        let (batches, received) = std::sync::mpsc::sync_channel::<Vec<Option<Linted<F>>>>(1);
        let (result, had_error, failing) = std::thread::scope(|s| {
            let writer = s.spawn(move || write_batches(a, format, &p.walk_errors, received));
            let linted = |report: crate::lint::FileReport| -> Linted<F> {
                let skipped = not_linted(&report);
                let fails = report
                    .findings
                    .iter()
                    .any(|f| f.diagnostic.severity >= threshold);
                let piece = format.render(&report);
                let (stats, tally) = (report.stats, output::Tally::of(&report));
                if report.findings.len() >= crate::diagnostic::PARALLEL_FINDINGS {
                    // A stream's tens of thousands of findings are freed on every thread.
                    report.findings.into_par_iter().for_each(drop);
                }
                Ok((piece, stats, tally, fails, skipped))
            };
            for batch in in_batches(&order, format.in_parts()) {
                if let [(_, input @ Input::File { .. })] = batch[..] {
                    if format.in_parts() && p.chart.is_none() && is_large(input) {
                        // A large stream alone: its findings are written as its groups are
                        // linted, never all held at once (see `crate::stream::lint_in_parts`).
                        let done = match p.load(input) {
                            Err(e) => Some(Err(e)),
                            Ok(None) => None,
                            Ok(Some((Ok(src), cfg))) => {
                                let mut part = |r| {
                                    let _ = batches.send(vec![Some(linted(r))]);
                                };
                                let report = crate::stream::lint_in_parts(
                                    src, &cfg, &p.sel, &p.project, &mut part,
                                );
                                Some(linted(report))
                            }
                            Ok(Some((loaded, cfg))) => Some(linted(lint_loaded(p, loaded, &cfg))),
                        };
                        if batches.send(vec![done]).is_err() {
                            break;
                        }
                        continue;
                    }
                }
                let done: Vec<Option<Linted<F>>> = batch
                    .par_iter()
                    .map(|(_, input)| {
                        let (loaded, cfg) = match p.load(input) {
                            Err(e) => return Some(Err(e)),
                            Ok(None) => return None,
                            Ok(Some(l)) => l,
                        };
                        Some(linted(lint_loaded(p, loaded, &cfg)))
                    })
                    .collect();
                // The writer stops at a write error; what is left is not linted.
                if batches.send(done).is_err() {
                    break;
                }
            }
            drop(batches);
            writer.join().unwrap_or_else(|_| {
                let e = std::io::Error::other("the output thread stopped");
                (Err(e), true, false)
            })
        });
        exit_code(result, had_error || p.had_error, || {
            failing && !a.report.exit_zero
        })
    }
}

/// Whether an input is a file large enough to be linted as a stream of groups.
fn is_large(input: &Input) -> bool {
    matches!(input, Input::File { path, .. }
        if std::fs::metadata(path).is_ok_and(|m| m.len() > crate::stream::STREAM_ABOVE as u64))
}

/// The inputs in batches of [`STREAM_BATCH`], in order; with `large_alone`, a large file (see
/// [`is_large`]) is a batch of its own, so that its findings can be written as they come.
fn in_batches<'o, 'i>(
    order: &'o [(String, &'i Input)],
    large_alone: bool,
) -> Vec<Vec<&'o (String, &'i Input)>> {
    let mut out: Vec<Vec<&'o (String, &'i Input)>> = Vec::new();
    let mut current = Vec::new();
    for item in order {
        if large_alone && is_large(item.1) {
            if !current.is_empty() {
                out.push(std::mem::take(&mut current));
            }
            out.push(vec![item]);
            continue;
        }
        current.push(item);
        if current.len() == STREAM_BATCH {
            out.push(std::mem::take(&mut current));
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// One file's rendered report, counts, totals, whether a finding reaches `--fail-on` and why it
/// was skipped, if it was; or why it could not be read.
type Linted<F> = Result<
    (
        <F as output::Format>::Piece,
        Stats,
        output::Tally,
        bool,
        Option<output::InputError>,
    ),
    Error,
>;

/// A file the lint skipped (not a manifest, and not valid YAML), as the inputs not linted list
/// it: no I/O failure, so the exit code stays the findings'.
fn not_linted(report: &crate::lint::FileReport) -> Option<output::InputError> {
    let why = report.skipped.as_ref()?;
    say!("note: {}: {why}", report.name);
    Some(output::InputError {
        path: Some(report.name.clone()),
        message: why.clone(),
        failed: false,
    })
}

/// The writer half of [`Streamed`]: (write result, had an error, failing).
fn write_batches<F: output::Format>(
    a: &LintArgs,
    format: &F,
    walk_errors: &[output::InputError],
    batches: std::sync::mpsc::Receiver<Vec<Option<Linted<F>>>>,
) -> (std::io::Result<()>, bool, bool) {
    let mut unread = walk_errors.to_vec();
    let mut had_error = false;
    let mut failing = false;
    let mut stats = Stats::default();
    let mut tally = output::Tally::default();
    let result = (|| -> std::io::Result<()> {
        let mut buf = open_output(a)?;
        let mut state = format.begin(&mut buf)?;
        for done in batches {
            let mut pieces = Vec::with_capacity(done.len());
            for d in done.into_iter().flatten() {
                match d {
                    Err(e) => {
                        had_error = true;
                        say!("error: {e}");
                        unread.push((&e).into());
                    }
                    Ok((piece, s, t, fails, skipped)) => {
                        unread.extend(skipped);
                        pieces.push(piece);
                        stats += s;
                        tally.add(t);
                        failing |= fails;
                    }
                }
            }
            format.push_batch(&mut state, pieces, &mut buf)?;
        }
        let end = output::End {
            stats,
            tally: &tally,
            fixed: None,
            errors: &unread,
        };
        format.finish(state, &end, &mut buf)?;
        write_statistics(a, &tally, &mut buf)?;
        buf.flush()
    })();
    (result, had_error, failing)
}

/// The hidden `--parse-only` pass: the same walk, reads, decoding and parallelism as `lint`, and
/// the same YAML parse, with nothing built on it. Prints one line of counts.
fn parse_only(p: &Run) -> i32 {
    let (counts, errors) = p.map_inputs(|loaded, _| match loaded {
        Ok(src) => {
            let y = crate::yaml::parse(src.yaml_text(), src.bom_len);
            let broken = y.docs.iter().any(|d| d.error.is_some()) || y.stream_error.is_some();
            (1usize, y.docs.len(), usize::from(broken))
        }
        Err(_) => (1, 0, 1),
    });
    let (files, documents, broken) = counts
        .iter()
        .fold((0, 0, 0), |t, c| (t.0 + c.0, t.1 + c.1, t.2 + c.2));
    for e in &errors {
        say!("error: {e}");
    }
    let mut out = std::io::stdout().lock();
    let _ = writeln!(
        out,
        "parsed {files} files, {documents} documents ({broken} files not valid YAML or not text)"
    );
    if p.had_error || !errors.is_empty() {
        2
    } else {
        0
    }
}

/// Render the reports in the chosen format and pick the exit code from what remains.
pub fn report(
    a: &LintArgs,
    mut reports: Vec<FileReport>,
    fixed: Option<&[output::FixedOut]>,
    had_error: bool,
    errors: &[output::InputError],
) -> i32 {
    reports.sort_by(|x, y| x.name.cmp(&y.name));
    let mut stats = Stats::default();
    for r in &reports {
        stats += r.stats;
    }
    let run = output::Run {
        reports: &reports,
        stats,
        fixed,
        errors,
    };
    let threshold = threshold(a.report.fail_on);
    exit_code(
        with_format(a, Collected { a, run: &run }),
        had_error,
        || {
            !a.report.exit_zero
                && reports
                    .iter()
                    .flat_map(|r| &r.findings)
                    .any(|f| f.diagnostic.severity >= threshold)
        },
    )
}

/// Something to do with the format `--format` names (each format is its own type).
trait WithFormat {
    type Out;
    fn with<F: output::Format>(self, format: F) -> Self::Out;
}

/// Do `w` with the format the command line asks for, set up as it says.
fn with_format<W: WithFormat>(a: &LintArgs, w: W) -> W::Out {
    let summary = !a.report.quiet;
    match a.report.format {
        Format::Human => {
            let to_terminal = a.report.output.is_none() && std::io::stdout().is_terminal();
            let color = to_terminal && !a.report.no_color && std::env::var_os("NO_COLOR").is_none();
            w.with(output::human::Human::new(&output::human::Options {
                color,
                width: terminal_width().unwrap_or(100),
                summary,
            }))
        }
        Format::Concise => w.with(output::concise::Concise { summary }),
        Format::Json => w.with(output::json::Json),
        Format::Sarif => w.with(output::sarif::Sarif::new()),
        Format::Github => w.with(output::github::Github),
        Format::Gitlab => w.with(output::gitlab::Gitlab::new()),
        Format::Junit => w.with(output::xml::Junit),
        Format::Checkstyle => w.with(output::xml::Checkstyle),
    }
}

/// Writing reports already at hand (`--new-from-rev`, `fix`, `cluster`).
struct Collected<'a> {
    a: &'a LintArgs,
    run: &'a output::Run<'a>,
}

impl WithFormat for Collected<'_> {
    type Out = std::io::Result<()>;

    fn with<F: output::Format>(self, format: F) -> std::io::Result<()> {
        let mut buf = open_output(self.a)?;
        let tally = output::write(format, self.run, &mut buf)?;
        write_statistics(self.a, &tally, &mut buf)?;
        buf.flush()
    }
}

/// `--statistics`: findings per rule, after the report; on stderr for machine formats, so that
/// stdout stays parseable.
fn write_statistics(
    a: &LintArgs,
    tally: &output::Tally,
    buf: &mut dyn Write,
) -> std::io::Result<()> {
    if !a.report.statistics {
        return Ok(());
    }
    let text = statistics(&tally.by_code);
    if a.report.format.is_machine() {
        say_raw!("{text}");
        Ok(())
    } else {
        buf.write_all(text.as_bytes())
    }
}

/// 2 for a usage or I/O error (a closed pipe only ends the output early), else 1 when a finding
/// reaches the --fail-on severity.
fn exit_code(written: std::io::Result<()>, had_error: bool, failing: impl FnOnce() -> bool) -> i32 {
    match written {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
            return if had_error { 2 } else { 0 }
        }
        Err(e) => {
            say!("error: cannot write output: {e}");
            return 2;
        }
    }
    if had_error {
        2
    } else {
        i32::from(failing())
    }
}

pub fn threshold(f: FailOn) -> Severity {
    match f {
        FailOn::Error => Severity::Error,
        FailOn::Warning => Severity::Warning,
        FailOn::Info => Severity::Info,
    }
}

fn open_output(a: &LintArgs) -> std::io::Result<Box<dyn Write>> {
    Ok(match &a.report.output {
        Some(p) => Box::new(std::io::BufWriter::new(std::fs::File::create(p)?)),
        None => Box::new(std::io::BufWriter::new(std::io::stdout().lock())),
    })
}

/// `--show-settings`: for each path, the config that governs it and why that one.
fn show_settings(a: &LintArgs) -> i32 {
    let explicit = match a.report.config.as_deref().map(Config::load).transpose() {
        Ok(c) => c.is_some(),
        Err(e) => return super::fail(e.into()),
    };
    // Only the config finder is wanted: no paths are walked.
    let p = match prepare(&mut LintArgs {
        paths: vec![],
        helm: None,
        chart: None,
        new_from_rev: None,
        ..a.clone()
    }) {
        Ok(p) => p,
        Err(e) => return super::fail(e),
    };
    let mut text = String::new();
    for path in &a.paths {
        // A directory's files are governed by the config found from the directory itself.
        let probe = if path == "-" {
            PathBuf::from(a.stdin_filename.as_deref().unwrap_or("-"))
        } else if Path::new(path).is_dir() {
            Path::new(path).join("-")
        } else {
            PathBuf::from(path)
        };
        let dir = probe
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
        let cfg = match p.finder.for_file(&probe) {
            Ok(c) => c,
            Err(e) => return super::fail(e.into()),
        };
        let found = match (&cfg.path, explicit) {
            (Some(f), true) => format!("{} (--config)", crate::text::shown_path(f)),
            (Some(f), false) => crate::text::shown_path(f),
            (None, _) => "none (the built-in defaults)".to_string(),
        };
        let searched = match crate::walk::repository_root(&dir) {
            Some(root) => format!(
                "{} up to the repository root {}",
                crate::text::shown_path(&dir),
                crate::text::shown_path(&root)
            ),
            None => format!(
                "{} up to / (not in a git repository)",
                crate::text::shown_path(&dir)
            ),
        };
        text.push_str(&format!(
            "path: {}\nconfig: {found}\nsearched: {searched}\n{}\n\n",
            crate::text::printable(path),
            cfg.settings_text()
        ));
    }
    let _ = std::io::stdout()
        .lock()
        .write_all(text.trim_end().as_bytes());
    let _ = writeln!(std::io::stdout().lock());
    0
}

/// `--show-containers`: a line per container (human and concise) or a JSON document.
fn show_containers(a: &LintArgs, p: &Run) -> i32 {
    let (files, errors) = p.map_inputs(|loaded, cfg| match loaded {
        Ok(src) => crate::lint::containers(&src, cfg, &p.project),
        Err(_) => Vec::new(),
    });
    let mut had_error = p.had_error;
    for e in errors {
        had_error = true;
        say!("error: {e}");
    }
    write_containers(a, files.into_iter().flatten().collect(), had_error)
}

/// `--show-containers` output: every container with its runtime and the evidence, in order.
pub fn write_containers(
    a: &LintArgs,
    mut rows: Vec<crate::lint::ContainerRow>,
    had_error: bool,
) -> i32 {
    rows.sort_by(|x, y| (&x.file, x.line).cmp(&(&y.file, y.line)));
    let written = (|| -> std::io::Result<()> {
        let mut out = open_output(a)?;
        if a.report.format == Format::Json {
            #[derive(serde::Serialize)]
            struct Doc<'a> {
                version: u32,
                containers: &'a [crate::lint::ContainerRow],
            }
            serde_json::to_writer_pretty(
                &mut out,
                &Doc {
                    version: 1,
                    containers: &rows,
                },
            )?;
            writeln!(out)?;
        } else {
            for r in &rows {
                let o = &r.object;
                let object = crate::diagnostic::object_path(
                    o.kind.as_deref().unwrap_or("?"),
                    o.namespace.as_deref(),
                    o.name.as_deref().unwrap_or("?"),
                );
                let rt = &r.runtime;
                let language = match (&rt.language, rt.assumed) {
                    _ if rt.unknown => "unknown (its Go findings are info)",
                    (_, true) => "go (assumed)",
                    (Some(l), false) => l.as_str(),
                    (None, false) => "unknown",
                };
                // Names and evidence are the manifest's and the image's words: nothing in them
                // may act on the terminal, and no line may start as a workflow command.
                let mut lines = vec![format!(
                    "{}{}:{}: {object} container {}: {language}, because {}",
                    if r.file.trim_start().starts_with("::") {
                        "./"
                    } else {
                        ""
                    },
                    r.file,
                    r.line,
                    r.container.as_deref().unwrap_or("<unnamed>"),
                    rt.evidence
                )];
                match (&rt.go_version, &rt.go_version_evidence) {
                    (Some(v), Some(why)) => lines.push(format!("    Go {v} ({why})")),
                    (None, Some(why)) => lines.push(format!("    Go older than 1.25 ({why})")),
                    _ => {}
                }
                if let Some(s) = &rt.sizes_gomaxprocs {
                    lines.push(format!("    sizes GOMAXPROCS itself: {s}"));
                }
                if let Some(s) = &rt.sizes_gomemlimit {
                    lines.push(format!("    sizes GOMEMLIMIT itself: {s}"));
                }
                for line in lines {
                    let line = line.replace('\n', "\\n");
                    writeln!(out, "{}", crate::text::printable_lines(&line))?;
                }
            }
            if !a.report.quiet {
                let unknown = rows.iter().filter(|r| r.runtime.unknown).count();
                let assumed = rows.iter().filter(|r| r.runtime.assumed).count() - unknown;
                writeln!(
                    out,
                    "{} container{}, {unknown} of unknown runtime, {assumed} assumed to run Go",
                    rows.len(),
                    if rows.len() == 1 { "" } else { "s" }
                )?;
            }
        }
        out.flush()
    })();
    exit_code(written, had_error, || false)
}

/// `--statistics`: the number of findings per rule.
fn statistics(counts: &std::collections::BTreeMap<Code, usize>) -> String {
    let mut text = String::new();
    for (code, n) in counts {
        text.push_str(&format!("{n:>6}  {code} {}\n", code.rule().name));
    }
    text
}

fn terminal_width() -> Option<usize> {
    std::env::var("COLUMNS").ok()?.parse().ok()
}
