//! `golint-k8s fix`: the lint pipeline, then the fix engine per file, then an atomic write (or a
//! diff, or only a verdict). Files are independent: one that cannot be parsed or written is
//! reported and the others are still fixed.

use std::io::Write;

use clap::Args;

use super::lint::{prepare, report, LintArgs};
use crate::diagnostic::Applicability;
use crate::error::Error;
use crate::fix::engine::{fix_source, Failure, Outcome};
use crate::fix::write::{Queue, Writer};
use crate::lint::{decode_failure, lint_source_with, FileReport};
use crate::output::FixedOut;
use crate::run::Run;
use crate::source::{Origin, Source};
use crate::walk::Input;

#[derive(Args, Debug, Clone)]
pub struct FixArgs {
    #[command(flatten)]
    pub common: LintArgs,
    /// Also apply unsafe fixes: they change requests or limits (scheduling, cost, QoS class).
    #[arg(long)]
    pub unsafe_fixes: bool,
    /// Print a unified diff of what would change and write nothing.
    #[arg(long)]
    pub diff: bool,
    /// Write nothing; exit 1 when a file would change.
    #[arg(long)]
    pub check: bool,
}

/// What happened to one file.
struct FileFix {
    name: String,
    /// The findings left after fixing (or of the original, when nothing was written).
    report: FileReport,
    fixed: Vec<FixedOut>,
    changed: bool,
    diff: Option<String>,
    error: Option<String>,
    note: Option<String>,
}

/// What the rest of the command still needs from an outcome once its report moved into a FileFix.
struct Rest {
    original: String,
    text: String,
    error: Option<Failure>,
}

impl FileFix {
    fn from_outcome(o: Outcome) -> (FileFix, Rest) {
        let f = FileFix {
            name: o.remaining.name.clone(),
            fixed: fixed_out(&o),
            changed: o.changed(),
            diff: None,
            error: None,
            note: None,
            report: o.remaining,
        };
        let rest = Rest {
            original: o.original,
            text: o.text,
            error: o.error,
        };
        (f, rest)
    }

    /// A file that could not be decoded: reported, never touched.
    /// A chart a walk rendered: linted, never fixed here, for its text is the render's.
    fn rendered_chart(report: FileReport) -> FileFix {
        let mut f = FileFix::undecodable(report);
        f.note = Some("rendered from a Helm chart, so not fixed here: the fix belongs in the chart (`golint-k8s fix --helm CHART` prints the values change)".into());
        f
    }

    fn kustomize_build(report: FileReport) -> FileFix {
        let mut f = FileFix::undecodable(report);
        if !f.report.findings.is_empty() {
            f.note = Some("a Kustomize build, judged with the fixes written: what it still has is for its overlay's files (each finding says which file writes the value)".into());
        }
        f
    }

    fn undecodable(report: FileReport) -> FileFix {
        FileFix {
            name: report.name.clone(),
            report,
            fixed: Vec::new(),
            changed: false,
            diff: None,
            error: None,
            note: None,
        }
    }
}

pub fn run(mut a: FixArgs) -> i32 {
    let mut p = match prepare(&mut a.common) {
        Ok(p) => p,
        Err(e) => return super::fail(e),
    };
    p.read_surroundings();
    p.index();
    super::lint::inspect_images(&mut p, &a.common.images);
    if let Some(chart) = &p.chart {
        if a.common.helm.is_some() {
            return run_helm(&a, &p, chart);
        }
    }
    let stdin = p.inputs.iter().any(|i| matches!(i, Input::Stdin));
    // Counted on the command line: a path that does not exist is no input, but still a path.
    if stdin && a.common.paths.iter().any(|x| x != "-") {
        return super::fail(Error::Usage(
            "fix reads standard input (-) on its own, not together with paths".into(),
        ));
    }
    if stdin {
        return run_stdin(&a, &p);
    }
    if let Some(rev) = &a.common.new_from_rev {
        return check_new_from_rev(&a, &p, rev);
    }
    let writer = Writer::cleaning_up_on_signals();
    let each = |loaded: Result<Source, Box<crate::source::DecodeFailure>>,
                cfg: &crate::config::Config,
                queue: Option<&Queue<'_>>| match loaded {
        Err(failure) => FileFix::undecodable(decode_failure(*failure)),
        // Standard input is fixed on its own (above): a text named so here is a chart's render
        // or a Kustomize build.
        Ok(src) if p.is_kustomize_build(&src.origin) => {
            FileFix::kustomize_build(crate::run::lint_loaded(&p, Ok(src), cfg))
        }
        Ok(src) if matches!(src.origin, Origin::Stdin(_)) => {
            FileFix::rendered_chart(crate::run::lint_loaded(&p, Ok(src), cfg))
        }
        Ok(src) => settle(
            &a,
            fix_source(src, cfg, &p.sel, &p.project, a.unsafe_fixes),
            queue,
        ),
    };
    // Files are fixed on one thread per core and written on more: a write waits for the disk.
    // Never more writing threads than files, though: a single large stream fixed under an
    // address-space limit (`ulimit -v`) must still fit.
    let ((mut results, errors), unwritten) = if a.check || a.diff {
        (p.map_inputs(|l, c| each(l, c, None)), Vec::new())
    } else {
        let threads = Writer::threads().min(p.inputs.len());
        writer.writing(threads, |q| p.map_inputs(|l, c| each(l, c, Some(q))))
    };
    writer.finish();
    for u in unwritten {
        let Some(f) = results
            .iter_mut()
            .find(|r| matches!(&r.report.origin, Origin::File(path) if *path == u.path))
        else {
            continue;
        };
        // Nothing was written: report the original's findings, not the fixed text's.
        f.error = Some(format!("not fixed: {}", u.error));
        f.changed = false;
        f.fixed.clear();
        match p.finder.for_file(&u.path) {
            Ok(cfg) => {
                f.report = lint_source_with(
                    Source::from_text(f.report.origin.clone(), u.original),
                    &cfg,
                    &p.sel,
                    &p.project,
                    |_, _, _| {},
                )
            }
            // Found once already for this file; if it now cannot be, say so with the rest.
            Err(e) => f.error = Some(format!("not fixed: {}; {e}", u.error)),
        }
    }
    // What the overlays make of the fixed files: built again once every file is written.
    let mut rebuilt_errors = Vec::new();
    if !a.check && !a.diff && results.iter().any(|r| r.changed) {
        results.retain(|r| !p.is_kustomize_build(&r.report.origin));
        for build in p.relint_kustomize_builds() {
            match build {
                Ok(report) => results.push(FileFix::kustomize_build(report)),
                Err(e) => rebuilt_errors.push(e),
            }
        }
    }
    results.sort_by(|x, y| x.name.cmp(&y.name));
    let mut had_error = p.had_error || rebuilt_errors.iter().any(|e| e.failed);
    let mut unread = p.walk_errors.clone();
    for e in rebuilt_errors {
        let level = if e.failed { "error" } else { "warning" };
        say!(
            "{level}: {}: {}",
            e.path.as_deref().unwrap_or("-"),
            e.message
        );
        unread.push(e);
    }
    for e in errors {
        had_error = true;
        say!("error: {e}");
        unread.push((&e).into());
    }
    for r in &results {
        if let Some(e) = &r.error {
            had_error = true;
            say!("error: {}: {e}", r.name);
        }
        if let Some(n) = &r.note {
            say!("note: {}: {n}", r.name);
        }
        // A file that is no manifest is listed with the inputs not linted, as `lint` lists it.
        if let Some(why) = &r.report.skipped {
            unread.push(crate::output::InputError {
                path: Some(r.name.clone()),
                message: why.clone(),
                failed: false,
            });
        }
    }
    let swept = writer.stale_removed();
    if swept > 0 {
        say!(
            "note: removed {swept} temporary file{} (.golint-k8s-*.tmp) left by an earlier fix that was killed",
            if swept == 1 { "" } else { "s" }
        );
    }
    let summary = summary(&a, &results);
    let pending = i32::from(results.iter().any(|r| r.changed));
    let machine = a.common.report.format.is_machine();
    if a.check && machine {
        // Machine formats get the report of what is left, with the fixes a run would apply.
        let fixed: Vec<FixedOut> = results.iter().flat_map(|r| r.fixed.clone()).collect();
        let reports: Vec<FileReport> = results.into_iter().map(|r| r.report).collect();
        let code = report(&a.common, reports, Some(&fixed), had_error, &unread);
        if !a.common.report.quiet {
            say!("{summary}");
        }
        return if code == 2 { 2 } else { pending };
    }
    if a.diff || a.check {
        let mut out = std::io::stdout().lock();
        for r in results.iter().filter(|r| r.changed) {
            let written = if a.diff {
                out.write_all(r.diff.as_deref().unwrap_or("").as_bytes())
            } else {
                writeln!(out, "would fix {} in {}", problems(r.fixed.len()), r.name)
            };
            if let Err(e) = written.and_then(|()| out.flush()) {
                if e.kind() == std::io::ErrorKind::BrokenPipe {
                    break;
                }
                say!("error: cannot write output: {e}");
                return 2;
            }
        }
        if !a.common.report.quiet {
            say!("{summary}");
        }
        return if had_error { 2 } else { pending };
    }
    let fixed: Vec<FixedOut> = results.iter().flat_map(|r| r.fixed.clone()).collect();
    let reports: Vec<FileReport> = results.into_iter().map(|r| r.report).collect();
    let code = report(&a.common, reports, Some(&fixed), had_error, &unread);
    if !a.common.report.quiet {
        say!("{summary}");
    }
    code
}

/// Turn the engine's outcome into a file handed to the writers (or a diff) and what is left to
/// report.
fn settle(a: &FixArgs, o: Outcome, queue: Option<&Queue<'_>>) -> FileFix {
    let name = o.remaining.name.clone();
    let (mut f, o) = FileFix::from_outcome(o);
    match o.error {
        // A file that is no manifest says that rather than why it was not fixed.
        Some(Failure::Unparseable(m)) => f.note = Some(f.report.skipped.clone().unwrap_or(m)),
        Some(Failure::Broken(m)) => f.error = Some(m),
        None => {}
    }
    if !f.changed {
        return f;
    }
    if a.diff {
        f.diff = Some(unified_diff(&name, &o.original, &o.text));
    } else if let (Some(queue), Origin::File(path)) = (queue, &f.report.origin) {
        queue.push(path.clone(), o.original, o.text);
    }
    f
}

fn fixed_out(o: &Outcome) -> Vec<FixedOut> {
    if o.applied.is_empty() {
        return Vec::new();
    }
    let src = Source::from_text(o.remaining.origin.clone(), o.original.clone());
    o.applied
        .iter()
        .map(|x| {
            let (line, column) = src.line_col(x.original_range.start);
            let (end_line, end_column) = src.line_col(x.original_range.end);
            FixedOut {
                file: o.remaining.name.clone(),
                code: x.code,
                rule: x.code.rule().name,
                applicability: x.applicability,
                title: x.title.clone(),
                document: x.document,
                object: x.object.clone(),
                container: x.container.clone(),
                path: x.path.clone(),
                line,
                column,
                end_line,
                end_column,
            }
        })
        .collect()
}

pub fn unified_diff(name: &str, old: &str, new: &str) -> String {
    if let Some(diff) = stream_diff(name, old, new, STREAM_DIFF_LINES) {
        return diff;
    }
    similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{name}"), &format!("b/{name}"))
        .to_string()
}

/// From this many lines, a multi-document file is diffed document by document.
const STREAM_DIFF_LINES: usize = 20_000;

/// The unified diff of a large stream, computed between each pair of `---` lines and joined.
/// One Myers diff of a 400,000-line `helm template` output with ten thousand fixed places took
/// 1.5 s; fixes never add or remove a document, so when both texts have the same `---` lines
/// the documents pair up, and the hunks are grouped and printed exactly as `similar` prints
/// the diff of the whole (a unit test compares the two). None: diff the whole text.
fn stream_diff(name: &str, old: &str, new: &str, min_lines: usize) -> Option<String> {
    use similar::{DiffOp, DiffableStr};
    // Counted before splitting into lines: most files are far below the threshold, and
    // `similar` splits them again for the whole-text diff.
    if memchr::memchr_iter(b'\n', old.as_bytes()).count() + 1 < min_lines {
        return None;
    }
    let old_lines = old.tokenize_lines();
    let new_lines = new.tokenize_lines();
    if old_lines.len() < min_lines {
        return None;
    }
    let cuts = |lines: &[&str]| -> Vec<usize> {
        lines
            .iter()
            .enumerate()
            .filter(|(_, l)| l.trim_end_matches(['\n', '\r']) == "---")
            .map(|(i, _)| i)
            .collect()
    };
    let (old_cuts, new_cuts) = (cuts(&old_lines), cuts(&new_lines));
    if old_cuts.len() != new_cuts.len()
        || old_cuts.len() < 2
        || old_cuts
            .iter()
            .zip(&new_cuts)
            .any(|(&a, &b)| old_lines[a] != new_lines[b])
    {
        return None;
    }
    let bounds = |cuts: &[usize], len: usize| -> Vec<(usize, usize)> {
        let starts: Vec<usize> = std::iter::once(0).chain(cuts.iter().copied()).collect();
        let ends = cuts.iter().copied().chain(std::iter::once(len));
        starts.into_iter().zip(ends).collect()
    };
    let mut ops: Vec<DiffOp> = Vec::new();
    for ((oa, ob), (na, nb)) in bounds(&old_cuts, old_lines.len())
        .into_iter()
        .zip(bounds(&new_cuts, new_lines.len()))
    {
        // Diffed within the pair's line ranges, so the operations index the whole texts.
        for op in similar::capture_diff(
            similar::Algorithm::Myers,
            &old_lines[..],
            oa..ob,
            &new_lines[..],
            na..nb,
        ) {
            // Equal runs that meet at a cut are one run in the whole text's diff.
            match (ops.last_mut(), op) {
                (Some(DiffOp::Equal { len, .. }), DiffOp::Equal { len: more, .. }) => *len += more,
                _ => ops.push(op),
            }
        }
    }
    let mut out = String::new();
    for group in similar::group_diff_ops(ops, 3) {
        if out.is_empty() {
            out.push_str(&format!("--- a/{name}\n+++ b/{name}\n"));
        }
        out.push_str(&format!(
            "{}\n",
            similar::udiff::UnifiedHunkHeader::new(&group)
        ));
        for op in &group {
            let (old_r, new_r) = (op.old_range(), op.new_range());
            let lines: Vec<(char, &str)> = match op {
                DiffOp::Equal { .. } => old_lines[old_r].iter().map(|l| (' ', *l)).collect(),
                DiffOp::Delete { .. } => old_lines[old_r].iter().map(|l| ('-', *l)).collect(),
                DiffOp::Insert { .. } => new_lines[new_r].iter().map(|l| ('+', *l)).collect(),
                DiffOp::Replace { .. } => old_lines[old_r]
                    .iter()
                    .map(|l| ('-', *l))
                    .chain(new_lines[new_r].iter().map(|l| ('+', *l)))
                    .collect(),
            };
            for (tag, line) in lines {
                out.push(tag);
                out.push_str(line);
                if !line.ends_with(['\r', '\n']) {
                    out.push_str("\n\\ No newline at end of file\n");
                }
            }
        }
    }
    Some(out)
}

fn problems(n: usize) -> String {
    format!("{n} problem{}", if n == 1 { "" } else { "s" })
}

/// "fixed 3 problems in 2 files; 1 remaining (1 more fixable with --unsafe-fixes)".
fn summary(a: &FixArgs, results: &[FileFix]) -> String {
    let applied: usize = results.iter().map(|r| r.fixed.len()).sum();
    let files = results.iter().filter(|r| r.changed).count();
    let remaining: usize = results.iter().map(|r| r.report.findings.len()).sum();
    let hidden = if a.unsafe_fixes {
        0
    } else {
        results
            .iter()
            .flat_map(|r| &r.report.findings)
            .filter(|f| {
                f.diagnostic
                    .fix
                    .as_ref()
                    .is_some_and(|x| x.applicability == Applicability::Unsafe)
            })
            .count()
    };
    let verb = if a.diff || a.check {
        "would fix"
    } else {
        "fixed"
    };
    let mut s = format!(
        "{verb} {} in {} file{}; {remaining} remaining",
        problems(applied),
        files,
        if files == 1 { "" } else { "s" }
    );
    if hidden > 0 {
        s.push_str(&format!(" ({hidden} more fixable with --unsafe-fixes)"));
    }
    s
}

/// `fix --check --new-from-rev REV`: whether any finding that is new since REV has a fix this
/// run would apply (safe ones, and unsafe ones with --unsafe-fixes). Old findings are the
/// repository's debt, not this change's: they neither fail the check nor are counted.
fn check_new_from_rev(a: &FixArgs, p: &Run, rev: &str) -> i32 {
    if !a.check {
        return super::fail(Error::Usage(
            "--new-from-rev goes with `fix --check` (or `lint`): fixing rewrites whole files, old findings included".into(),
        ));
    }
    let (reports, errors) = p.map_inputs(|loaded, cfg| crate::run::lint_loaded(p, loaded, cfg));
    let mut had_error = p.had_error;
    for e in errors {
        had_error = true;
        say!("error: {e}");
    }
    let mut reports = match crate::run::only_new(p, rev, reports) {
        Ok(r) => r,
        Err(e) => return super::fail(e),
    };
    reports.sort_by(|x, y| x.name.cmp(&y.name));
    let fixable = |f: &&crate::lint::Finding| {
        f.diagnostic
            .fix
            .as_ref()
            .is_some_and(|x| a.unsafe_fixes || x.applicability == Applicability::Safe)
    };
    let mut total = 0;
    let mut files = 0;
    let mut out = std::io::stdout().lock();
    for r in &reports {
        let n = r.findings.iter().filter(fixable).count();
        if n > 0 {
            total += n;
            files += 1;
            // A closed pipe (`| head`) ends the list, not the run.
            let _ = writeln!(out, "would fix {} in {}", problems(n), r.name);
        }
    }
    let _ = out.flush();
    if !a.common.report.quiet {
        say!(
            "would fix {} new since {rev} in {files} file{}",
            problems(total),
            if files == 1 { "" } else { "s" }
        );
    }
    if had_error {
        2
    } else {
        i32::from(total > 0)
    }
}

/// `fix -`: the fixed text (or the diff) on standard output, everything else on standard error,
/// so `helm template … | golint-k8s fix - > fixed.yaml` works.
fn run_stdin(a: &FixArgs, p: &Run) -> i32 {
    let (src, cfg) = match p.load(&Input::Stdin) {
        Err(e) => return super::fail(e),
        Ok(None) => return 0,
        Ok(Some((Err(failure), _))) => {
            // Not text we can fix: pass the bytes through untouched and say why.
            let bytes = failure.bytes.clone();
            let report = decode_failure(*failure);
            if !(a.check || a.diff) {
                // Past the cap, what was not read is passed on too: nothing is lost.
                let mut out = std::io::stdout().lock();
                let over_cap = p.take_stdin_over_cap();
                let _ = std::iter::once(&bytes)
                    .chain(&over_cap)
                    .try_for_each(|b| out.write_all(b))
                    .and_then(|()| std::io::copy(&mut std::io::stdin().lock(), &mut out))
                    .and_then(|_| out.flush());
            }
            eprint_findings(std::slice::from_ref(&report));
            // With --check/--diff the exit code speaks of pending changes, and there are none.
            return i32::from(!(a.check || a.diff));
        }
        Ok(Some((Ok(src), cfg))) => (src, cfg),
    };
    let rendered = is_helm_output(&src.text);
    // A UTF-16 input is passed through in its own encoding (fixes leave it alone).
    let utf16 = src.utf16.then(|| src.encode(&src.text));
    let o = fix_source(src, &cfg, &p.sel, &p.project, a.unsafe_fixes);
    let name = o.remaining.name.clone();
    if rendered && o.changed() {
        say!("note: {name} was rendered by Helm: the fixed text goes to standard output only, and the next render undoes it; the lasting fix belongs in the chart (`golint-k8s fix --helm CHART` prints the values change)");
    }
    let (f, o) = FileFix::from_outcome(o);
    if let Some(Failure::Broken(m) | Failure::Unparseable(m)) = &o.error {
        say!("note: {name}: {m}");
    }
    let out = if a.diff {
        unified_diff(&name, &o.original, &o.text)
    } else if a.check {
        String::new()
    } else {
        o.text.clone()
    };
    let out = match utf16 {
        Some(bytes) if !(a.diff || a.check) => bytes,
        _ => out.into_bytes(),
    };
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout.write_all(&out).and_then(|()| stdout.flush()) {
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            say!("error: cannot write output: {e}");
            return 2;
        }
    }
    if !a.common.report.quiet {
        eprint_findings(std::slice::from_ref(&f.report));
        say!("{}", summary(a, std::slice::from_ref(&f)));
    }
    if matches!(o.error, Some(Failure::Broken(_))) {
        return 2;
    }
    if a.diff || a.check {
        return i32::from(f.changed);
    }
    let threshold = super::lint::threshold(a.common.report.fail_on);
    i32::from(
        f.report
            .findings
            .iter()
            .any(|x| x.diagnostic.severity >= threshold),
    )
}

fn eprint_findings(reports: &[FileReport]) {
    let mut stats = crate::lint::Stats::default();
    for r in reports {
        stats += r.stats;
    }
    let run = crate::output::Run {
        reports,
        stats,
        fixed: None,
        errors: &[],
    };
    let mut err = std::io::stderr().lock();
    let _ = crate::output::concise::write(&run, &mut err);
}

/// Whether a text is `helm template` output: a document carries a `# Source:` comment.
fn is_helm_output(text: &str) -> bool {
    text.starts_with("# Source: ") || text.contains("\n# Source: ")
}

/// `fix --helm CHART`: fix the rendering in memory, write nothing, and print the values change
/// that would make the chart render the fixed output (a values.yaml fragment on standard output;
/// what could not be turned into values on standard error).
fn run_helm(a: &FixArgs, p: &Run, chart: &crate::helm::Chart) -> i32 {
    let Some(input) = p.inputs.first() else {
        return 2;
    };
    let (src, cfg) = match p.load(input) {
        Ok(Some((Ok(src), cfg))) => (src, cfg),
        Ok(Some((Err(failure), _))) => {
            eprint_findings(std::slice::from_ref(&decode_failure(*failure)));
            return 2;
        }
        Ok(None) => return 0,
        Err(e) => return super::fail(e),
    };
    let o = fix_source(src, &cfg, &p.sel, &p.project, a.unsafe_fixes);
    if let Some(Failure::Broken(m) | Failure::Unparseable(m)) = &o.error {
        say!("note: {}: {m}", o.remaining.name);
    }
    let s = crate::helm::suggest::suggest(&o, chart);
    let in_values: Vec<_> = s
        .placed
        .iter()
        .filter(|x| x.origin.values_key.is_some())
        .collect();
    let mut text = String::new();
    if in_values.is_empty() {
        text.push_str(&format!(
            "# golint-k8s: no values change fixes the findings in {}\n",
            chart.root.display()
        ));
    } else {
        text.push_str(&format!(
            "# golint-k8s: values for {} that fix {} of {} fixable findings; review, then merge into\n# your values file or pass with --values.\n",
            chart.root.display(),
            in_values.len(),
            s.placed.len()
        ));
        for x in &in_values {
            text.push_str(&format!(
                "#   {} {}: {}\n",
                x.code,
                x.title,
                x.origin.describe()
            ));
        }
        text.push_str(&s.values);
    }
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            say!("error: cannot write output: {e}");
            return 2;
        }
    }
    for x in s.placed.iter().filter(|x| x.origin.values_key.is_none()) {
        say!(
            "note: {} {}: not a values change; edit the chart: {}",
            x.code,
            x.title,
            x.origin.describe()
        );
    }
    if !a.common.report.quiet {
        say!(
            "{} of {} fixes expressed as values; {} left for the templates; nothing was written",
            in_values.len(),
            s.placed.len(),
            s.placed.len() - in_values.len()
        );
    }
    i32::from(!s.placed.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Apply a unified diff to `old`, checking every context and removed line on the way.
    fn patch(old: &str, diff: &str) -> String {
        use similar::DiffableStr;
        let old_lines = old.tokenize_lines();
        let mut out = String::new();
        let mut at = 0;
        let mut lines = diff.split_inclusive('\n').skip(2).peekable();
        while let Some(header) = lines.next() {
            let from: usize = header[4..]
                .split([',', ' '])
                .next()
                .unwrap()
                .parse()
                .unwrap();
            let from = from.saturating_sub(1).max(at);
            // An empty old range names the line before it.
            let from = if header.starts_with("@@ -0,0") {
                0
            } else {
                from
            };
            old_lines[at..from].iter().for_each(|l| out.push_str(l));
            at = from;
            while let Some(l) = lines.next_if(|l| !l.starts_with("@@")) {
                let text = match lines.next_if(|n| n.starts_with("\\ No newline")) {
                    Some(_) => l[1..].trim_end_matches('\n'),
                    None => &l[1..],
                };
                match &l[..1] {
                    " " | "-" => {
                        assert_eq!(old_lines[at], text, "line {at}");
                        if l.starts_with(' ') {
                            out.push_str(text);
                        }
                        at += 1;
                    }
                    _ => out.push_str(text),
                }
            }
        }
        old_lines[at..].iter().for_each(|l| out.push_str(l));
        out
    }

    fn changed(diff: &str) -> usize {
        diff.lines()
            .filter(|l| {
                (l.starts_with('+') || l.starts_with('-'))
                    && !l.starts_with("---")
                    && !l.starts_with("+++")
            })
            .count()
    }

    #[test]
    fn a_stream_diffed_by_document_is_a_minimal_diff_of_the_whole() {
        // Documents with lines changed, added and removed, at their start, middle and end, next
        // to each other across a `---`, in LF and CRLF, and a last line without a line break.
        let mut old = String::new();
        let mut new = String::new();
        for doc in 0..60 {
            let nl = if doc % 7 == 3 { "\r\n" } else { "\n" };
            old.push_str(&format!("---{nl}"));
            new.push_str(&format!("---{nl}"));
            for line in 0..12 {
                let text = format!("k{}: v{line}{nl}", line % 3);
                let edit = (doc * 12 + line) % 11;
                match edit {
                    0 => new.push_str(&format!("k{line}: changed{nl}")),
                    1 => {
                        new.push_str(&text);
                        new.push_str(&format!("added: {doc}{nl}"));
                    }
                    2 if line == 11 || line == 0 => {}
                    _ => new.push_str(&text),
                }
                old.push_str(&text);
            }
        }
        old.push_str("tail: old");
        new.push_str("tail: new");
        let whole = similar::TextDiff::from_lines(old.as_str(), new.as_str())
            .unified_diff()
            .context_radius(3)
            .header("a/s.yaml", "b/s.yaml")
            .to_string();
        let by_doc = stream_diff("s.yaml", &old, &new, 0).expect("documents pair up");
        assert_eq!(patch(&old, &by_doc), new);
        assert_eq!(patch(&old, &whole), new, "the patch helper itself");
        assert_eq!(changed(&by_doc), changed(&whole));
        assert!(by_doc.starts_with("--- a/s.yaml\n+++ b/s.yaml\n@@ -1,"));

        // Changes far from each other and from any `---` leave Myers no choice: the same text.
        let far_old: String = (0..40)
            .map(|d| {
                format!(
                    "---\n{}",
                    (0..30).map(|i| format!("a{i}: {d}\n")).collect::<String>()
                )
            })
            .collect();
        let far_new = far_old
            .replace("a15: 7\n", "a15: seven\n")
            .replace("a14: 20\n", "");
        let whole = similar::TextDiff::from_lines(far_old.as_str(), far_new.as_str())
            .unified_diff()
            .context_radius(3)
            .header("a/f.yaml", "b/f.yaml")
            .to_string();
        assert_eq!(stream_diff("f.yaml", &far_old, &far_new, 0).unwrap(), whole);

        // Documents that do not pair up, and short texts, are left to the whole-text diff.
        assert!(stream_diff("x", "---\na: 1\n---\nb: 2\n", "---\na: 1\nb: 2\n", 0).is_none());
        assert!(stream_diff("x", &old, &new, 1_000_000).is_none());
        assert_eq!(stream_diff("x", &old, &old, 0).unwrap(), "");
    }
}
