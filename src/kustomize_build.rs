//! Kustomize overlays judged as they render.
//!
//! A base's Deployment is linted as a file, but what reaches the cluster is what an overlay makes
//! of it: a patch that lowers the memory limit below the base's GOMEMLIMIT, another image, more
//! replicas. So a kustomization that no other one in the run includes (a root: an overlay, or a
//! kustomization on its own) is built with the real `kustomize` (or `kubectl kustomize`), and
//! the build is linted like any input.
//!
//! Each object of the build carries Kustomize's own record of the file it came from and of the
//! kustomizations that transformed it (`buildMetadata: [originAnnotations,
//! transformerAnnotations]`), asked for through a throwaway kustomization that includes the root,
//! so the user's files are never written. A finding in the build is traced to the file that wrote
//! the value it points at: the resource when the value is still the one it writes, else a patch
//! of a kustomization that transformed the object, else that kustomization. A finding the traced
//! file already has where it is linted on its own is not said twice: what a build adds is what
//! the overlay changed.
//!
//! A kustomization that would fetch from beyond the tree (a remote resource, `helmCharts`) is not
//! built, so that a lint never reaches the network; its files are still linted one by one.

use std::collections::{BTreeSet, HashSet};
use std::io::Read;
use std::path::{Component, Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::diagnostic::{Code, Diagnostic, KustomizeOrigin, Provenance};
use crate::fix::engine::PathSeg;
use crate::k8s::kustomize::{outline, Outline};
use crate::yaml::{NodeId, Yaml};

/// How deep a chain of kustomizations is followed to see whether a build would fetch anything.
const MAX_DEPTH: usize = 16;

/// How long one build may take before it is stopped: local builds take well under a second.
const BUILD_TIMEOUT: Duration = Duration::from_secs(120);

/// The annotations Kustomize writes with `buildMetadata`.
const ORIGIN: &str = "config.kubernetes.io/origin";
const TRANSFORMATIONS: &str = "alpha.config.kubernetes.io/transformations";

/// The kustomizations of a walk that are built, and those that are not, with why.
#[derive(Debug, Default)]
pub struct Roots {
    pub built: Vec<PathBuf>,
    pub not_built: Vec<(PathBuf, String)>,
}

/// Of the kustomization directories a walk met, those no other one includes (components
/// excluded), split by whether they can be built from local files.
pub fn roots(dirs: &[PathBuf]) -> Roots {
    let outlines: Vec<(PathBuf, Outline)> = dirs
        .iter()
        .filter_map(|d| Some((crate::walk::lexical(d), outline(d)?)))
        .collect();
    let included: HashSet<PathBuf> = outlines
        .iter()
        .flat_map(|(_, o)| o.includes.iter().cloned())
        .collect();
    let mut roots = Roots::default();
    for (dir, o) in &outlines {
        if o.component || included.contains(dir) {
            continue;
        }
        match fetches(dir, &mut BTreeSet::new(), 0) {
            Some(what) => roots.not_built.push((dir.clone(), what)),
            None => roots.built.push(dir.clone()),
        }
    }
    roots
}

/// What a build of `dir` would fetch from beyond the tree, through everything it includes.
fn fetches(dir: &Path, seen: &mut BTreeSet<PathBuf>, depth: usize) -> Option<String> {
    if depth > MAX_DEPTH || !seen.insert(dir.to_path_buf()) {
        return None;
    }
    let o = outline(dir)?;
    if let Some(what) = o.fetches {
        return Some(format!("{} needs {what}", shown(&o.file)));
    }
    o.includes
        .iter()
        .filter(|p| p.is_dir())
        .find_map(|p| fetches(p, seen, depth + 1))
}

/// A file or directory that `dir`'s kustomization, or one it includes, names and that Kustomize
/// would stop at: one that is not there, a directory without a kustomization, or a file from
/// beyond its kustomization's directory (Kustomize's default load restriction, on real paths).
/// Looked at before a build is started, since each refused build costs a process, and a
/// checkout that holds only part of a repository has many; the message names the file itself.
/// Only what a build surely reads is looked at (`resources`, `bases`, `components`,
/// `patches[].path` and generator files; not `patchesStrategicMerge`, whose entries may be
/// inline patches).
fn unloadable(dir: &Path, seen: &mut BTreeSet<PathBuf>, depth: usize) -> Option<String> {
    if depth > MAX_DEPTH || !seen.insert(dir.to_path_buf()) {
        return None;
    }
    let o = outline(dir)?;
    let real_dir = std::fs::canonicalize(dir).ok()?;
    let names = |p: &Path| format!("{} names {}", shown(&o.file), shown(p));
    let outside =
        |p: &Path| std::fs::canonicalize(p).is_ok_and(|real| !real.starts_with(&real_dir));
    for p in &o.includes {
        match std::fs::metadata(p) {
            Err(_) => return Some(format!("{}, which is not there", names(p))),
            Ok(m) if m.is_dir() => {
                if !crate::k8s::kustomize::has_kustomization(p) {
                    return Some(format!("{}, a directory without a kustomization", names(p)));
                }
                if let Some(why) = unloadable(p, seen, depth + 1) {
                    return Some(why);
                }
            }
            Ok(_) if outside(p) => {
                return Some(format!(
                    "{}, a file outside its directory, which Kustomize does not load",
                    names(p)
                ))
            }
            Ok(_) => {}
        }
    }
    for p in &o.reads {
        match std::fs::metadata(p) {
            Err(_) => return Some(format!("{}, which is not there", names(p))),
            Ok(m) if m.is_file() && outside(p) => {
                return Some(format!(
                    "{}, a file outside its directory, which Kustomize does not load",
                    names(p)
                ))
            }
            Ok(_) => {}
        }
    }
    None
}

/// Why a root was not built.
#[derive(Debug)]
pub enum NotBuilt {
    /// Neither `kustomize` nor `kubectl` is on PATH: the run cannot do what it was asked.
    NoTool(String),
    /// Kustomize refused the root (a file it names is missing, a generator needs what only a
    /// deployment pipeline has, …): the root's files are still linted one by one.
    Refused(String),
}

/// The output of `kustomize build` of `root`, with each object's origin and transformations
/// named from where the run stands.
pub fn build(root: &Path) -> Result<Vec<u8>, NotBuilt> {
    if let Some(why) = unloadable(root, &mut BTreeSet::new(), 0) {
        return Err(NotBuilt::Refused(why));
    }
    let (program, verb) = tool().map_err(NotBuilt::NoTool)?;
    built(root, &program, verb).map_err(NotBuilt::Refused)
}

/// The program that builds, and its verb.
fn tool() -> Result<(PathBuf, &'static str), String> {
    match (
        crate::helm::find_on_path("kustomize"),
        crate::helm::find_on_path("kubectl"),
    ) {
        (Some(k), _) => Ok((k, "build")),
        (None, Some(k)) => Ok((k, "kustomize")),
        (None, None) => Err(
            "building a Kustomize overlay runs `kustomize build`, and neither `kustomize` nor `kubectl` was found on PATH. Install kustomize (with Go: `go install sigs.k8s.io/kustomize/kustomize/v5@v5.8.2`)"
                .to_string(),
        ),
    }
}

fn built(root: &Path, program: &Path, verb: &str) -> Result<Vec<u8>, String> {
    let real_root =
        std::fs::canonicalize(root).map_err(|e| format!("cannot resolve {}: {e}", shown(root)))?;
    let wrapper = tempfile::Builder::new()
        .prefix("golint-k8s-kustomize")
        .tempdir()
        .map_err(|e| format!("cannot make a temporary directory: {e}"))?;
    let wrapper_dir = std::fs::canonicalize(wrapper.path())
        .map_err(|e| format!("cannot resolve a temporary directory: {e}"))?;
    // Kustomize takes no absolute path in `resources`; a relative one may climb anywhere.
    let included = relative(&wrapper_dir, &real_root);
    let text = format!(
        "resources:\n  - '{}'\nbuildMetadata: [originAnnotations, transformerAnnotations]\n",
        included.to_string_lossy().replace('\'', "''")
    );
    std::fs::write(wrapper_dir.join("kustomization.yaml"), text)
        .map_err(|e| format!("cannot write a temporary kustomization: {e}"))?;
    let out = run(Command::new(program).arg(verb).arg(&wrapper_dir))
        .map_err(|why| readable(&why, &included, &real_root, root))?;
    let here = std::env::current_dir()
        .and_then(std::fs::canonicalize)
        .unwrap_or_default();
    Ok(relocate(&out, &wrapper_dir, &here).into_bytes())
}

/// Kustomize's complaint, as the user would read it of their own root: its last error line (the
/// deprecation warnings before it are left out), with the paths of the throwaway kustomization
/// turned back into the root's name, and shortened.
fn readable(why: &str, included: &Path, real_root: &Path, root: &Path) -> String {
    let Some((head, tail)) = why.split_once("): ") else {
        return why.to_string();
    };
    let last = tail
        .lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty() && !l.starts_with('#') && !l.starts_with("Warning"))
        .unwrap_or(tail);
    // klog's `… "command failed" err="…"`: the part after err=.
    let last = match last.split_once("err=\"") {
        Some((_, e)) => e.strip_suffix('"').unwrap_or(e),
        None => last,
    };
    let shown_root = shown(root);
    let shown_root = if shown_root.is_empty() {
        "."
    } else {
        &shown_root
    };
    let mut text = last
        .replace(&*included.to_string_lossy(), shown_root)
        .replace(&*real_root.to_string_lossy(), shown_root);
    const MAX: usize = 600;
    if text.len() > MAX {
        let mut cut = MAX;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
        text.push('…');
    }
    format!("{head}): {text}")
}

/// Run a build to its end, or stop it at [`BUILD_TIMEOUT`]; its output is capped as a file is.
fn run(cmd: &mut Command) -> Result<String, String> {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run kustomize: {e}"))?;
    let cap = crate::source::MAX_FILE_BYTES;
    let mut stdout = child.stdout.take().expect("stdout is piped");
    let mut stderr = child.stderr.take().expect("stderr is piped");
    let reading = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = (&mut stdout).take(cap + 1).read_to_end(&mut buf);
        buf
    });
    let errors = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = (&mut stderr).take(64 << 10).read_to_end(&mut buf);
        buf
    });
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() < BUILD_TIMEOUT => {
                std::thread::sleep(Duration::from_millis(10))
            }
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "`kustomize build` did not finish in {} s",
                    BUILD_TIMEOUT.as_secs()
                ));
            }
            Err(e) => return Err(format!("cannot wait for kustomize: {e}")),
        }
    };
    let out = reading.join().unwrap_or_default();
    let err = errors.join().unwrap_or_default();
    if !status.success() {
        let err = String::from_utf8_lossy(&err);
        return Err(format!(
            "`kustomize build` failed ({status}): {}",
            err.trim()
        ));
    }
    if out.len() as u64 > cap {
        return Err(format!("`kustomize build` wrote more than {cap} bytes"));
    }
    String::from_utf8(out).map_err(|_| "`kustomize build` wrote text that is not UTF-8".into())
}

/// The build with the paths of its origin and transformation annotations, which Kustomize
/// writes relative to the throwaway kustomization, rewritten to name the files as the run does
/// (relative to where it stands, else absolute). Only lines inside those two annotations
/// change.
fn relocate(text: &str, wrapper: &Path, here: &Path) -> String {
    let mut out = String::with_capacity(text.len());
    // The indentation of the annotation key whose block is being read.
    let mut inside: Option<usize> = None;
    for line in text.split_inclusive('\n') {
        let indent = line.len() - line.trim_start().len();
        let trimmed = line.trim();
        if inside.is_some_and(|key| indent <= key || trimmed.is_empty()) {
            inside = None;
        }
        if let Some(_key) = inside {
            let value = trimmed
                .strip_prefix("path: ")
                .or_else(|| trimmed.strip_prefix("- configuredIn: "))
                .or_else(|| trimmed.strip_prefix("configuredIn: "));
            if let Some(v) = value.filter(|v| !v.contains("://")) {
                let named = named_from(&crate::walk::lexical(&wrapper.join(v)), here);
                let at = line.find(v).unwrap_or(0);
                out.push_str(&line[..at]);
                out.push_str(&named.to_string_lossy());
                out.push_str(&line[at + v.len()..]);
                continue;
            }
        }
        if trimmed == format!("{ORIGIN}: |") || trimmed == format!("{TRANSFORMATIONS}: |") {
            inside = Some(indent);
        }
        out.push_str(line);
    }
    out
}

/// `path` as the run names files: relative to `here` when under it.
fn named_from(path: &Path, here: &Path) -> PathBuf {
    match path.strip_prefix(here) {
        Ok(rel) if !rel.as_os_str().is_empty() => rel.to_path_buf(),
        _ => path.to_path_buf(),
    }
}

/// The relative path from directory `from` to `to`, both absolute.
fn relative(from: &Path, to: &Path) -> PathBuf {
    let a: Vec<Component> = from.components().collect();
    let b: Vec<Component> = to.components().collect();
    let common = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let mut out = PathBuf::new();
    for _ in common..a.len() {
        out.push("..");
    }
    for c in &b[common..] {
        out.push(c.as_os_str());
    }
    out
}

/// A file a build names, read when it is a file within the size cap of an input.
fn read_capped(path: &Path) -> Option<Vec<u8>> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() || meta.len() > crate::source::MAX_FILE_BYTES {
        return None;
    }
    std::fs::read(path).ok()
}

fn shown(p: &Path) -> String {
    crate::text::shown_path(p)
}

/// Whether a finding of rule `code` starts on `line` of `file` when the file is linted on its
/// own (None: the file is not linted in this run).
pub type AlreadySaid<'a> = dyn Fn(&Path, Code, usize) -> Option<bool> + Sync + 'a;

/// Trace the findings of a build named `build` to the files behind them, and drop those the
/// traced file already has.
pub fn trace(y: &Yaml, build: &str, diags: &mut Vec<Diagnostic>, already: &AlreadySaid) {
    let mut files = Files::default();
    diags.retain_mut(|d| {
        let origin = locate(y, d, &mut files);
        let said = match (&origin.file, origin.line) {
            (Some(file), Some(line)) => already(Path::new(file), d.code, line) == Some(true),
            _ => false,
        };
        // `fix` rewrites files, never a build: the edit would be for the overlay's author.
        d.fix = None;
        d.provenance = Some(Box::new(Provenance::Kustomize(KustomizeOrigin {
            build: build.to_string(),
            ..origin
        })));
        !said
    });
}

/// The files a trace read, each parsed once.
#[derive(Default)]
struct Files {
    read: Vec<(PathBuf, Option<crate::source::Source>)>,
}

impl Files {
    fn get(&mut self, path: &Path) -> Option<&crate::source::Source> {
        let i = match self.read.iter().position(|(p, _)| p == path) {
            Some(i) => i,
            None => {
                let src = read_capped(path).and_then(|bytes| {
                    crate::source::Source::decode(
                        crate::source::Origin::File(path.to_path_buf()),
                        bytes,
                    )
                    .ok()
                });
                self.read.push((path.to_path_buf(), src));
                self.read.len() - 1
            }
        };
        self.read[i].1.as_ref()
    }
}

/// Where the value a finding of the build points at was written.
fn locate(y: &Yaml, d: &Diagnostic, files: &mut Files) -> KustomizeOrigin {
    let unmapped = |why: &str| KustomizeOrigin {
        build: String::new(),
        file: None,
        line: None,
        column: None,
        end_line: None,
        end_column: None,
        unmapped: Some(why.to_string()),
    };
    let Some(root) = y.docs.get(d.document).and_then(|doc| doc.root) else {
        return unmapped("no object");
    };
    let annotation = |key: &str| {
        let meta = y.get(root, "metadata")?;
        y.get_str(y.get(meta, "annotations")?, key)
    };
    let Some(origin) = annotation(ORIGIN).and_then(|o| field(o, "path")) else {
        return unmapped("Kustomize recorded no file for this object");
    };
    let kind = y.get_str(root, "kind").unwrap_or("");
    let name = y
        .get(root, "metadata")
        .and_then(|m| y.get_str(m, "name"))
        .unwrap_or("");
    let (path, names) = crate::helm::path_to(y, d.document, d.range.start);
    let on_key = on_key(y, root, &path, d.range.start);
    let wanted = value_at(y, root, &path);
    // The resource, when it still writes the value the build has.
    let resource = PathBuf::from(origin);
    if let Some(at) = find_in(files, &resource, kind, name, &path, &names, on_key, &wanted) {
        return at;
    }
    // Else a patch of a kustomization that transformed the object, last applied first.
    let by: Vec<String> = annotation(TRANSFORMATIONS)
        .map(|t| {
            t.lines()
                .filter_map(|l| field(l.trim().trim_start_matches("- "), "configuredIn"))
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    for kustomization in by.iter().rev() {
        let dir = Path::new(kustomization).parent().unwrap_or(Path::new(""));
        let patches = outline(dir).map(|o| o.patches).unwrap_or_default();
        for patch in &patches {
            if let Some(at) = find_in(files, patch, kind, name, &path, &names, on_key, &wanted) {
                return at;
            }
        }
    }
    match by.last() {
        Some(k) => KustomizeOrigin {
            build: String::new(),
            file: Some(k.clone()),
            line: None,
            column: None,
            end_line: None,
            end_column: None,
            unmapped: Some(format!(
                "the value is not in {origin} nor in a patch file: {k} sets it"
            )),
        },
        None => KustomizeOrigin {
            file: Some(origin.to_string()),
            ..unmapped(&format!("the value is not where {origin} writes it"))
        },
    }
}

/// `key: value` in an annotation's text.
fn field<'t>(text: &'t str, key: &str) -> Option<&'t str> {
    text.lines().find_map(|l| {
        l.trim()
            .strip_prefix(key)
            .and_then(|r| r.strip_prefix(':'))
            .map(str::trim)
            .filter(|v| !v.is_empty())
    })
}

/// Whether `pos` is on the key the path ends at rather than on its value.
fn on_key(y: &Yaml, root: NodeId, path: &[PathSeg], pos: usize) -> bool {
    let Some((PathSeg::Key(last), above)) = path.split_last() else {
        return false;
    };
    let Some(parent) = walk_plain(y, root, above) else {
        return false;
    };
    y.get_entry(parent, last)
        .is_some_and(|(k, _)| y.span(k).contains(&pos))
}

/// The node at `path`, following indices as they are.
fn walk_plain(y: &Yaml, root: NodeId, path: &[PathSeg]) -> Option<NodeId> {
    let mut node = root;
    for seg in path {
        node = match seg {
            PathSeg::Key(k) => y.get(node, k)?,
            PathSeg::Index(i) => *y.items(node).get(*i)?,
        };
    }
    Some(node)
}

/// The scalar at the path in the build (None: a mapping or a sequence).
fn value_at(y: &Yaml, root: NodeId, path: &[PathSeg]) -> Option<String> {
    walk_plain(y, root, path)
        .and_then(|n| y.str(n))
        .map(str::to_string)
}

/// The place in `file` where the object of this kind, whose build name is `name`, has the path,
/// with the same scalar value the build has.
#[allow(clippy::too_many_arguments)]
fn find_in(
    files: &mut Files,
    file: &Path,
    kind: &str,
    name: &str,
    path: &[PathSeg],
    names: &[Option<String>],
    on_key: bool,
    wanted: &Option<String>,
) -> Option<KustomizeOrigin> {
    let src = files.get(file)?;
    let fy = src.parse();
    // The object: of the same kind, and a name the build's name holds (a prefix or suffix may
    // have been added); the longest such name, or the only object of the kind.
    let candidates: Vec<(NodeId, &str)> = fy
        .docs
        .iter()
        .filter_map(|doc| doc.root)
        .filter(|&r| fy.get_str(r, "kind") == Some(kind))
        .map(|r| {
            let n = fy
                .get(r, "metadata")
                .and_then(|m| fy.get_str(m, "name"))
                .unwrap_or("");
            (r, n)
        })
        .collect();
    let object = candidates
        .iter()
        .filter(|(_, n)| !n.is_empty() && name.contains(n))
        .max_by_key(|(_, n)| n.len())
        .or(match candidates.as_slice() {
            [only] => Some(only),
            _ => None,
        })?
        .0;
    let mut node = object;
    let mut key = None;
    let mut named = names.iter();
    for seg in path {
        key = None;
        node = match seg {
            PathSeg::Key(k) => {
                let (kn, v) = fy.get_entry(node, k)?;
                key = Some(kn);
                v
            }
            PathSeg::Index(i) => {
                let items = fy.items(node);
                match named.next().cloned().flatten() {
                    Some(n) => *items
                        .iter()
                        .find(|&&it| crate::helm::item_name(&fy, it).as_deref() == Some(&n))?,
                    None => *items.get(*i)?,
                }
            }
        };
    }
    if wanted.is_some() && fy.str(node).map(str::to_string) != *wanted {
        return None;
    }
    let span = match (on_key, key) {
        (true, Some(k)) => fy.span(k),
        _ => fy.span(node),
    };
    let (line, column) = src.line_col(span.start);
    let (end_line, end_column) = src.line_col(span.end.max(span.start));
    Some(KustomizeOrigin {
        build: String::new(),
        file: Some(shown(file)),
        line: Some(line),
        column: Some(column),
        end_line: Some(end_line),
        end_column: Some(end_column),
        unmapped: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_climbs_to_the_common_ancestor() {
        assert_eq!(
            relative(Path::new("/tmp/w"), Path::new("/srv/repo/overlays/prod")),
            PathBuf::from("../../srv/repo/overlays/prod")
        );
        assert_eq!(
            relative(Path::new("/a/b"), Path::new("/a/b/c")),
            PathBuf::from("c")
        );
    }

    #[test]
    fn relocate_rewrites_only_the_annotation_paths() {
        let text = "\
metadata:
  annotations:
    alpha.config.kubernetes.io/transformations: |
      - configuredIn: ../repo/overlays/prod/kustomization.yaml
        configuredBy:
          kind: PatchTransformer
    config.kubernetes.io/origin: |
      path: ../repo/base/deployment.yaml
    note: |
      path: ../elsewhere
data:
  path: ../repo/x
";
        let out = relocate(text, Path::new("/tmp/w"), Path::new("/tmp/repo"));
        assert!(out.contains("- configuredIn: overlays/prod/kustomization.yaml\n"));
        assert!(out.contains("      path: base/deployment.yaml\n"));
        assert!(out.contains("      path: ../elsewhere\n"), "{out}");
        assert!(out.contains("  path: ../repo/x\n"), "{out}");
    }

    #[test]
    fn readable_keeps_the_last_error_in_the_roots_name() {
        let why = "`kustomize build` failed (exit status: 1): # Warning: 'commonLabels' is deprecated.
E1128 04:21:52.955697   26506 run.go:72] \"command failed\" err=\"accumulating resources from '../../srv/repo/overlays/prod': lstat /srv/repo/overlays/prod/x.yaml: no such file or directory\"";
        let text = readable(
            why,
            Path::new("../../srv/repo/overlays/prod"),
            Path::new("/srv/repo/overlays/prod"),
            Path::new("overlays/prod"),
        );
        assert_eq!(
            text,
            "`kustomize build` failed (exit status: 1): accumulating resources from 'overlays/prod': lstat overlays/prod/x.yaml: no such file or directory"
        );
    }

    #[test]
    fn field_reads_one_key_of_an_annotation() {
        assert_eq!(
            field("path: base/d.yaml\nrepo: x\n", "path"),
            Some("base/d.yaml")
        );
        assert_eq!(field("- configuredIn: k.yaml", "configuredIn"), None);
    }
}
