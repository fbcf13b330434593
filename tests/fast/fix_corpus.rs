//! `fix --unsafe-fixes` over the shared corpus of real manifests, checked from the outside.
//!
//! The fixer rewrites users' files in place, so "the fixed finding is gone" is not enough: it
//! must also leave every other byte and every other value alone, and be idempotent. This test
//! runs the real binary over a copy of the whole corpus and, per file, compares what Kubernetes
//! would read before and after (parsed trees, not text), confines the textual change to the
//! lines each applied fix reports, re-lints the result, and fixes it a second time.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::common::*;
use assert_cmd::Command;
use golint_k8s::source::{Origin, Source};
use golint_k8s::yaml::{self, NodeId, NodeKind, Yaml, Yaml11};
use serde_json::Value;
use similar::{DiffOp, TextDiff};

/// The corpus is copied here, under the temporary directory, and the binary runs from that
/// directory so that the file names it prints are `corpus/<relative path>`.
const COPY: &str = "corpus";

/// How many nested aliases a value tree expands. Real manifests use one or two levels; the budget
/// only keeps an alias bomb from exploding the comparison.
const ALIAS_DEPTH: usize = 4;

/// Failures listed in the panic message; the count is always given in full.
const SHOWN_FAILURES: usize = 40;

fn cmd() -> Command {
    Command::cargo_bin("golint-k8s").unwrap()
}

/// One step of a fix's path: a mapping key or a sequence index.
#[derive(Debug)]
enum Seg {
    Key(String),
    Index(usize),
}

/// An applied fix, as `fix --format json` reports it in `fixed`.
#[derive(Debug)]
struct Fixed {
    /// The file's path relative to the corpus.
    file: String,
    code: String,
    document: usize,
    container: Option<String>,
    path: Vec<Seg>,
    line: usize,
    end_line: usize,
}

impl Fixed {
    fn from_json(f: &Value) -> Fixed {
        let path = f["path"]
            .as_array()
            .expect("fixed[].path is an array")
            .iter()
            .map(|s| match s {
                Value::String(k) => Seg::Key(k.clone()),
                Value::Number(n) => Seg::Index(n.as_u64().expect("index") as usize),
                other => panic!("unexpected path segment {other}"),
            })
            .collect();
        let num = |k: &str| f[k].as_u64().unwrap_or_else(|| panic!("fixed[].{k}")) as usize;
        Fixed {
            file: relative(f["file"].as_str().unwrap()),
            code: f["code"].as_str().unwrap().to_string(),
            document: num("document"),
            container: f["container"].as_str().map(str::to_string),
            path,
            line: num("line"),
            end_line: num("end_line"),
        }
    }
}

/// A file name as the binary prints it, relative to the corpus copy.
fn relative(name: &str) -> String {
    let name = name.replace('\\', "/");
    match name.strip_prefix(&format!("{COPY}/")) {
        Some(rel) => rel.to_string(),
        None => panic!("{name} is not under {COPY}/"),
    }
}

/// A document's value as Kubernetes reads it. Scalars carry their YAML 1.1 meaning, so `200` and
/// `"200"` differ while `512Mi` and `"512Mi"` are the same string.
#[derive(Debug, PartialEq)]
enum Tree {
    Map(BTreeMap<String, Tree>),
    List(Vec<Tree>),
    Null,
    Bool(bool),
    Int(i128),
    /// The bits, so that `.nan` equals itself.
    Float(u64),
    Str(String),
    /// An alias to an undefined anchor, or nested deeper than [`ALIAS_DEPTH`].
    Unresolved,
    /// A subtree an applied fix was allowed to change.
    Fixed,
}

fn tree(y: &Yaml, id: NodeId, aliases_left: usize) -> Tree {
    match &y.node(id).kind {
        NodeKind::Alias { target: Some(t) } if aliases_left > 0 => tree(y, *t, aliases_left - 1),
        NodeKind::Alias { .. } => Tree::Unresolved,
        NodeKind::Scalar { value, .. } => match y.resolved(id) {
            Some(Yaml11::Null) => Tree::Null,
            Some(Yaml11::Bool(b)) => Tree::Bool(b),
            Some(Yaml11::Int(i)) => Tree::Int(i),
            Some(Yaml11::Float(f)) => Tree::Float(f.to_bits()),
            Some(Yaml11::Str) | None => Tree::Str(value.to_string()),
        },
        // Merge keys stay as `<<` entries: the raw structure is what fix paths walk.
        NodeKind::Mapping { entries, .. } => Tree::Map(
            entries
                .iter()
                .map(|&(k, v)| (key_text(y, k), tree(y, v, aliases_left)))
                .collect(),
        ),
        NodeKind::Sequence { items, .. } => {
            Tree::List(items.iter().map(|&i| tree(y, i, aliases_left)).collect())
        }
    }
}

/// A mapping key as fix paths name it: its scalar text. Complex keys (never seen in manifests)
/// get a rendering of their value so that two of them do not collapse into one.
fn key_text(y: &Yaml, k: NodeId) -> String {
    match y.str(k) {
        Some(s) => s.to_string(),
        None => format!("{:?}", tree(y, k, ALIAS_DEPTH)),
    }
}

/// Replace the subtree at `path` with [`Tree::Fixed`]. A path that does not exist here is left
/// alone: it either went through a node an earlier round of fixes created (and whose own fix
/// already covers it), or the trees differ there and the comparison will say so.
fn blank(root: &mut Tree, path: &[Seg]) {
    let mut node = root;
    for seg in path {
        let next = match (node, seg) {
            (Tree::Map(m), Seg::Key(k)) => m.get_mut(k),
            (Tree::List(l), Seg::Index(i)) => l.get_mut(*i),
            _ => None,
        };
        match next {
            Some(n) => node = n,
            None => return,
        }
    }
    *node = Tree::Fixed;
}

/// A parsed file: one value tree per document (None for an empty document), or why it does not
/// parse.
fn documents(text: &str) -> Result<Vec<Option<Tree>>, String> {
    let src = Source::from_text(Origin::Stdin("corpus".into()), text.to_string());
    let y = yaml::parse(src.yaml_text(), src.bom_len);
    if let Some(e) = y
        .stream_error
        .as_ref()
        .or_else(|| y.docs.iter().find_map(|d| d.error.as_ref()))
    {
        let (line, col) = src.line_col(e.offset);
        return Err(format!("{line}:{col}: {}", e.message));
    }
    Ok(y.docs
        .iter()
        .map(|d| d.root.map(|r| tree(&y, r, ALIAS_DEPTH)))
        .collect())
}

/// Relative paths (with `/`) of every file under `dir`.
fn files_under(dir: &Path) -> Vec<String> {
    fn walk(dir: &Path, rel: &str, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let entry = entry.unwrap();
            let name = entry.file_name().to_string_lossy().into_owned();
            let rel = if rel.is_empty() {
                name
            } else {
                format!("{rel}/{name}")
            };
            if entry.file_type().unwrap().is_dir() {
                walk(&entry.path(), &rel, out);
            } else {
                out.push(rel);
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, "", &mut out);
    out.sort();
    out
}

/// Copy the corpus, making every copy writable: the originals may be read-only, and the fixer
/// writes through a temporary file it renames over the original.
fn copy_corpus(corpus: &Path, to: &Path, files: &[String]) {
    for rel in files {
        let dest = to.join(rel);
        std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
        std::fs::copy(corpus.join(rel), &dest).unwrap();
        let mut perms = std::fs::metadata(&dest).unwrap().permissions();
        // World-writable on Unix, which is harmless inside a private temporary directory.
        #[allow(clippy::permissions_set_readonly_false)]
        perms.set_readonly(false);
        std::fs::set_permissions(&dest, perms).unwrap();
    }
}

fn read_all(dir: &Path, files: &[String]) -> BTreeMap<String, Vec<u8>> {
    files
        .iter()
        .map(|rel| (rel.clone(), std::fs::read(dir.join(rel)).unwrap()))
        .collect()
}

/// Run the binary in `dir` and return its exit code and parsed JSON output (Null unless
/// `--format json` was asked for). Exit code 2 and panics are failures in every run.
fn run(dir: &Path, args: &[&str]) -> (i32, Value) {
    let out = cmd().current_dir(dir).args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let code = out.status.code().unwrap_or(-1);
    assert!(
        !stderr.contains("panicked") && code != 2 && code != -1,
        "`golint-k8s {}` exited {code}:\n{stderr}",
        args.join(" ")
    );
    let json = if args.contains(&"json") {
        serde_json::from_slice(&out.stdout).expect("valid JSON")
    } else {
        Value::Null
    };
    (code, json)
}

/// Check 1 and 2: the file parses as before, and each document equals the original outside the
/// paths its applied fixes name.
fn compare_trees(original: &str, fixed: &str, fixes: &[&Fixed]) -> Result<(), String> {
    let before = match documents(original) {
        Ok(docs) => docs,
        Err(e) => {
            return if original == fixed {
                Ok(())
            } else {
                Err(format!(
                    "the original does not parse ({e}) but it was changed"
                ))
            };
        }
    };
    let after = documents(fixed).map_err(|e| format!("no longer parses: {e}"))?;
    if before.len() != after.len() {
        return Err(format!("{} documents became {}", before.len(), after.len()));
    }
    for (doc, (mut b, mut a)) in before.into_iter().zip(after).enumerate() {
        for f in fixes.iter().filter(|f| f.document == doc) {
            for t in [&mut b, &mut a].into_iter().flatten() {
                blank(t, &f.path);
            }
        }
        if b != a {
            let paths: Vec<String> = fixes
                .iter()
                .filter(|f| f.document == doc)
                .map(|f| format!("{} {}", f.code, path_text(&f.path)))
                .collect();
            return Err(format!(
                "document {doc} changed outside the fixed paths [{}]: {}",
                paths.join(", "),
                first_difference(b.as_ref(), a.as_ref())
            ));
        }
    }
    Ok(())
}

/// Where two trees first differ, as a path and the two values (shortened), for the report.
fn first_difference(b: Option<&Tree>, a: Option<&Tree>) -> String {
    fn go(b: Option<&Tree>, a: Option<&Tree>, path: &mut Vec<String>) -> Option<String> {
        // Walk both children lists (map keys or list indices) side by side; a child present on
        // one side only is itself the difference.
        let children: Vec<(String, Option<&Tree>, Option<&Tree>)> = match (b, a) {
            (Some(Tree::Map(mb)), Some(Tree::Map(ma))) => mb
                .keys()
                .chain(ma.keys())
                .collect::<BTreeSet<_>>()
                .into_iter()
                .map(|k| (k.clone(), mb.get(k), ma.get(k)))
                .collect(),
            (Some(Tree::List(lb)), Some(Tree::List(la))) => (0..lb.len().max(la.len()))
                .map(|i| (i.to_string(), lb.get(i), la.get(i)))
                .collect(),
            _ if b == a => return None,
            _ => return Some(format!("{} became {}", show(b), show(a))),
        };
        for (name, x, y) in children {
            path.push(name);
            if let Some(d) = go(x, y, path) {
                return Some(d);
            }
            path.pop();
        }
        None
    }
    let mut path = Vec::new();
    let what = go(b, a, &mut path).unwrap_or_default();
    format!("at /{}: {what}", path.join("/"))
}

/// A tree in a compact YAML-flow-like form, cut after a few hundred characters.
fn show(t: Option<&Tree>) -> String {
    fn render(t: &Tree, out: &mut String) {
        match t {
            Tree::Map(m) => {
                out.push('{');
                for (i, (k, v)) in m.iter().enumerate() {
                    let _ = write!(out, "{}{k}: ", if i > 0 { ", " } else { "" });
                    render(v, out);
                }
                out.push('}');
            }
            Tree::List(l) => {
                out.push('[');
                for (i, v) in l.iter().enumerate() {
                    out.push_str(if i > 0 { ", " } else { "" });
                    render(v, out);
                }
                out.push(']');
            }
            Tree::Null => out.push_str("null"),
            Tree::Bool(b) => out.push_str(&b.to_string()),
            Tree::Int(i) => out.push_str(&i.to_string()),
            Tree::Float(f) => out.push_str(&f64::from_bits(*f).to_string()),
            Tree::Str(s) => {
                let _ = write!(out, "{s:?}");
            }
            Tree::Unresolved => out.push_str("<unresolved alias>"),
            Tree::Fixed => out.push_str("<fixed>"),
        }
    }
    let Some(t) = t else {
        return "(absent)".to_string();
    };
    let mut out = String::new();
    render(t, &mut out);
    if out.chars().count() > 200 {
        out = out.chars().take(200).chain(['…']).collect();
    }
    out
}

/// A fix path as `/spec/containers/0/env`.
fn path_text(path: &[Seg]) -> String {
    let mut out = String::new();
    for seg in path {
        match seg {
            Seg::Key(k) => {
                let _ = write!(out, "/{k}");
            }
            Seg::Index(i) => {
                let _ = write!(out, "/{i}");
            }
        }
    }
    if out.is_empty() {
        out.push('/');
    }
    out
}

/// Check 5: the lines the text diff touches are lines of the applied edits.
///
/// A fix reports the original text it replaced as `line..end_line` (an insertion as an empty
/// range). The line diff may place a change one line off that range, for two reasons:
/// - an insertion at the end of line L (before its line break) or at the start of line L+1 adds
///   whole lines that the diff shows as inserted before line L+1, and one at the start of line L
///   as inserted before line L;
/// - when inserted lines repeat their neighbours (a new env entry next to a similar one), the
///   diff is free to align the repeated line on either side and shifts the change by one line.
///
/// So every deleted or replaced original line and every insertion point must lie within
/// `[line - 1, end_line + 1]` of some applied fix; anything farther away is an edit no fix owns.
fn check_lines(original: &str, fixed: &str, fixes: &[&Fixed]) -> Result<(), String> {
    let owned = |line: usize| {
        fixes
            .iter()
            .any(|f| f.line.saturating_sub(1) <= line && line <= f.end_line + 1)
    };
    let diff = TextDiff::from_lines(original, fixed);
    for op in diff.ops() {
        // 1-based original lines this operation touches; an insertion touches the line it
        // precedes (one past the last line at the end of the file).
        let lines = match *op {
            DiffOp::Equal { .. } => continue,
            DiffOp::Insert { old_index, .. } => old_index + 1..old_index + 2,
            DiffOp::Delete {
                old_index, old_len, ..
            }
            | DiffOp::Replace {
                old_index, old_len, ..
            } => old_index + 1..old_index + old_len + 1,
        };
        if let Some(line) = lines.clone().find(|&l| !owned(l)) {
            let ranges: Vec<String> = fixes
                .iter()
                .map(|f| format!("{}-{}", f.line, f.end_line))
                .collect();
            return Err(format!(
                "line {line} changed ({op:?}) but the applied fixes cover lines {}",
                ranges.join(", ")
            ));
        }
    }
    Ok(())
}

#[test]
#[cfg_attr(
    not(feature = "heavy-tests"),
    ignore = "heavy tier: --features heavy-tests"
)]
fn fix_round_trip_over_the_corpus() {
    let Some(corpus) = corpus() else {
        println!("fix corpus test not run: ../shared/corpus is not beside this checkout");
        return;
    };
    let started = Instant::now();
    let tmp = tempfile::tempdir().unwrap();
    let copy: PathBuf = tmp.path().join(COPY);
    let files = files_under(&corpus);
    copy_corpus(&corpus, &copy, &files);
    let originals = read_all(&copy, &files);

    let (_, json) = run(
        tmp.path(),
        &["fix", COPY, "--unsafe-fixes", "--format", "json"],
    );
    let applied: Vec<Fixed> = json["fixed"]
        .as_array()
        .expect("`fixed` in the JSON of fix")
        .iter()
        .map(Fixed::from_json)
        .collect();
    let mut by_file: BTreeMap<&str, Vec<&Fixed>> = BTreeMap::new();
    for f in &applied {
        assert!(
            originals.contains_key(&f.file),
            "fixed {} is not in the corpus",
            f.file
        );
        by_file.entry(&f.file).or_default().push(f);
    }
    let fixed_files = read_all(&copy, &files);

    // Checks 1, 2 and 5, per file. A file without applied fixes (every file that does not parse
    // among them) must be byte-identical, which settles all three for it.
    let mut failures: Vec<String> = Vec::new();
    for rel in &files {
        let (before, after) = (&originals[rel], &fixed_files[rel]);
        let fixes = by_file.get(rel.as_str()).map(Vec::as_slice).unwrap_or(&[]);
        if fixes.is_empty() {
            if before != after {
                failures.push(format!("{rel}: changed, but no fix was reported for it"));
            }
            continue;
        }
        let (Ok(before), Ok(after)) = (std::str::from_utf8(before), std::str::from_utf8(after))
        else {
            failures.push(format!("{rel}: fixed, but not UTF-8 before or after"));
            continue;
        };
        for check in [compare_trees, check_lines] {
            if let Err(e) = check(before, after, fixes) {
                failures.push(format!("{rel}: {e}"));
            }
        }
    }

    // Check 3: a fixed finding does not come back on a fresh lint of the fixed copy.
    let (_, lint) = run(tmp.path(), &["lint", "--format", "json", COPY]);
    let fixed_keys: BTreeSet<(&str, &str, usize, Option<&str>)> = applied
        .iter()
        .map(|f| {
            (
                f.file.as_str(),
                f.code.as_str(),
                f.document,
                f.container.as_deref(),
            )
        })
        .collect();
    for finding in lint["findings"].as_array().expect("lint findings") {
        let rel = relative(finding["file"].as_str().unwrap());
        let key = (
            rel.as_str(),
            finding["code"].as_str().unwrap(),
            finding["document"].as_u64().unwrap() as usize,
            finding["container"].as_str(),
        );
        if fixed_keys.contains(&key) {
            failures.push(format!(
                "{rel}: {} still fires after its fix (document {}, container {:?}, line {}): {}",
                key.1, key.2, key.3, finding["line"], finding["message"]
            ));
        }
    }

    // Check 4: fixing is idempotent, both as `--check` reports it and as bytes on disk.
    let (check_code, _) = run(tmp.path(), &["fix", COPY, "--unsafe-fixes", "--check"]);
    if check_code != 0 {
        failures.push(format!(
            "`fix --unsafe-fixes --check` on the fixed copy exited {check_code}, not 0"
        ));
    }
    run(tmp.path(), &["fix", COPY, "--unsafe-fixes", "--quiet"]);
    let refixed = read_all(&copy, &files);
    for rel in &files {
        if refixed[rel] != fixed_files[rel] {
            failures.push(format!(
                "{rel}: a second `fix --unsafe-fixes` changed it again"
            ));
        }
    }

    let mut per_rule: BTreeMap<&str, usize> = BTreeMap::new();
    for f in &applied {
        *per_rule.entry(f.code.as_str()).or_default() += 1;
    }
    let changed = files
        .iter()
        .filter(|rel| originals[*rel] != fixed_files[*rel])
        .count();
    let mut rules = String::new();
    for (code, n) in &per_rule {
        let _ = write!(rules, " {code}={n}");
    }
    println!(
        "fix corpus: {} fixes ({}) in {changed} of {} files, {:.1}s",
        applied.len(),
        rules.trim_start(),
        files.len(),
        started.elapsed().as_secs_f64()
    );

    assert!(
        failures.is_empty(),
        "{} failures (first {}):\n{}",
        failures.len(),
        SHOWN_FAILURES.min(failures.len()),
        failures
            .iter()
            .take(SHOWN_FAILURES)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
    // The corpus has hundreds of fixable findings: a run that applies few of them would make
    // every check above pass vacuously.
    assert!(
        applied.len() >= 300,
        "only {} fixes applied over the corpus (about 560 expected)",
        applied.len()
    );
}
