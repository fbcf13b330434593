//! Turning command-line paths into inputs: files as named, directories walked in parallel
//! (honouring `.gitignore`, keeping `*.yaml`, `*.yml`, `*.json`), and `-` for standard input.
//!
//! A directory that is a raw Helm chart has templates (`{{ … }}`) that are not YAML; instead of
//! hundreds of parse errors the walk skips them and says once how to render the chart.
//!
//! A symlink is followed only to a file inside the named paths or the git repository around them
//! (a link named on the command line also to a file below its own directory):
//! a checked-out link to `~/.aws/credentials` must not be read into CI logs, nor `fix` write
//! through a link to a file the user never named.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use ignore::{WalkBuilder, WalkState};

/// The names a config file may have, in the order they are looked for. The walk knows them
/// too: a config file is never linted as a manifest.
pub const CONFIG_FILE_NAMES: [&str; 2] = [".golint-k8s.yaml", ".golint-k8s.yml"];

/// Directories a walk does not enter unless `exclude` is set: Go test data (often invalid on
/// purpose), vendored modules and npm packages hold other projects' files, not this one's
/// manifests. As in ruff, they are matched by name below the paths named on the command line,
/// so naming one (`golint-k8s lint vendor/lib`) still lints it.
pub const SKIPPED_DIRS: [&str; 3] = ["testdata", "vendor", "node_modules"];

/// A directory that holds a git repository (`.git` is a directory, or a file in a worktree or
/// submodule).
pub fn is_repository_root(dir: &Path) -> bool {
    dir.join(".git").exists()
}

/// The repository that holds `dir`, if any: the nearest directory at or above it with `.git`.
pub fn repository_root(dir: &Path) -> Option<PathBuf> {
    dir.ancestors()
        .find(|d| is_repository_root(d))
        .map(Path::to_path_buf)
}

/// The directory a file is in, `.` for a bare name.
fn dir_of(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// [`repository_root`] for many directories, each directory looked at once: pre-commit names
/// hundreds of files, and their directories share all but their last few components (a lookup
/// per file was five `.git` checks each on the shared corpus).
#[derive(Default)]
pub struct RepositoryRoots(HashMap<PathBuf, Option<PathBuf>>);

impl RepositoryRoots {
    pub fn of(&mut self, dir: &Path) -> Option<PathBuf> {
        if let Some(hit) = self.0.get(dir) {
            return hit.clone();
        }
        let found = if is_repository_root(dir) {
            Some(dir.to_path_buf())
        } else {
            dir.parent().and_then(|up| self.of(up))
        };
        self.0.insert(dir.to_path_buf(), found.clone());
        found
    }
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Input {
    /// A file, and whether the walk found it (so config `exclude` applies) or the user named it.
    File {
        path: PathBuf,
        walked: bool,
    },
    Stdin,
    /// Text another program produced (`helm template` for `--helm`), named for output.
    Rendered {
        name: String,
        /// Where its config is looked up from.
        config_path: PathBuf,
        bytes: Vec<u8>,
    },
}

#[derive(Debug, Default)]
pub struct Walked {
    pub inputs: Vec<Input>,
    /// Paths that could not be read or walked: an error each, exit code 2.
    pub errors: Vec<(String, String)>,
    /// Helm chart directories whose templates were skipped.
    pub charts: Vec<PathBuf>,
    /// What else the walk passed over, and why: a note each.
    pub notes: Vec<String>,
    /// Symlinks to files outside the named paths and their repository, and symlinks named as
    /// manifests that lead to no file: never read, a note each, and listed with the inputs that
    /// were not linted.
    pub refused: Vec<(String, String)>,
}

/// Files' real paths (every link resolved), each directory resolved once: resolving a path is a
/// system call per component, and the files of one directory share all of theirs but the name.
#[derive(Default)]
pub struct RealPaths(HashMap<PathBuf, Option<PathBuf>>);

impl RealPaths {
    /// The real path of the file at `path`; None when it does not exist.
    pub fn of(&mut self, path: &Path) -> Option<PathBuf> {
        let meta = std::fs::symlink_metadata(path).ok()?;
        let (Some(name), false) = (path.file_name(), meta.is_symlink()) else {
            return std::fs::canonicalize(path).ok();
        };
        let dir = dir_of(path);
        let real = self
            .0
            .entry(dir.to_path_buf())
            .or_insert_with(|| std::fs::canonicalize(dir).ok());
        real.as_ref().map(|d| d.join(name))
    }
}

/// The directories a link may lead into: every named directory, and the git repository that
/// holds each named path, all by their real paths. A link is judged by where it really leads, so
/// `repo/a.yaml -> ../../home/me/.aws/credentials` and a chain of links are caught alike.
struct Bounds(Vec<PathBuf>);

impl Bounds {
    fn of(paths: &[String]) -> Bounds {
        let here = std::env::current_dir().unwrap_or_default();
        let mut roots = Vec::new();
        let (mut tops, mut repositories) = (Vec::new(), RepositoryRoots::default());
        for p in paths.iter().filter(|p| *p != "-") {
            let path = Path::new(p);
            let is_dir = std::fs::metadata(path).is_ok_and(|m| m.is_dir());
            if is_dir {
                roots.extend(std::fs::canonicalize(path));
            }
            // The repository as the path was named (through any linked directory the user typed).
            let abs = lexical(&here.join(path));
            let Some(from) = (if is_dir {
                Some(abs.as_path())
            } else {
                abs.parent()
            }) else {
                continue;
            };
            tops.extend(repositories.of(from));
        }
        // Each repository resolved once, however many of the named paths lie in it.
        tops.sort();
        tops.dedup();
        roots.extend(
            tops.iter()
                .filter_map(|top| std::fs::canonicalize(top).ok()),
        );
        roots.sort();
        roots.dedup();
        Bounds(roots)
    }

    /// Whether the file at `path`, once every link is resolved, lies inside the bounds.
    fn admits(&self, path: &Path) -> bool {
        std::fs::canonicalize(path).is_ok_and(|real| self.0.iter().any(|r| real.starts_with(r)))
    }
}

/// Whether the link at `path` leads to a file in or below its own directory.
fn beside(path: &Path) -> bool {
    let dir = dir_of(path);
    match (std::fs::canonicalize(dir), std::fs::canonicalize(path)) {
        (Ok(dir), Ok(real)) => real.starts_with(dir),
        _ => false,
    }
}

fn is_link(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.is_symlink())
}

fn refuse(link: &Path) -> (String, String) {
    (
        crate::text::shown_path(link),
        "a symlink to a file outside the named paths and their git repository; not read (name \
         the file it leads to, to lint it)"
            .to_string(),
    )
}

fn is_manifest_name(p: &Path) -> bool {
    matches!(
        p.extension().and_then(|e| e.to_str()),
        Some("yaml" | "yml" | "json")
    ) && !p
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| CONFIG_FILE_NAMES.contains(&n))
}

/// `skip_vendored(dir)`: whether a walk of `dir` passes over the directories named in
/// [`SKIPPED_DIRS`] below it (the config that governs `dir` decides).
pub fn collect(paths: &[String], skip_vendored: impl Fn(&Path) -> bool) -> Walked {
    let mut w = Walked::default();
    let bounds = Bounds::of(paths);
    let mut charts: HashMap<PathBuf, Option<PathBuf>> = HashMap::new();
    for p in paths {
        if p == "-" {
            w.inputs.push(Input::Stdin);
            continue;
        }
        let path = PathBuf::from(p);
        match std::fs::metadata(&path) {
            Err(e) => w
                .errors
                .push((crate::text::printable(p).into_owned(), describe_io(&e))),
            Ok(m) if m.is_dir() => match chart_of(&path, 0) {
                // `chart/templates` named directly holds what a walk of `chart` skips.
                Some(chart) => {
                    if !w.charts.contains(&chart) {
                        w.charts.push(chart);
                    }
                }
                None => {
                    let skip = skip_vendored(&path);
                    walk_dir(&path, &bounds, skip, &mut w)
                }
            },
            Ok(_) => {
                let link = is_link(&path);
                // A file named through a link is judged by where the link leads; naming the link
                // also names the directory it sits in.
                if link && !bounds.admits(&path) && !beside(&path) {
                    w.refused.push(refuse(&path));
                    continue;
                }
                // A file lies in its directory's chart; a link, in the chart of where it leads.
                // pre-commit names hundreds of files in a few directories: each is resolved once.
                let chart = if link {
                    chart_of(&path, 1)
                } else {
                    let dir = dir_of(&path);
                    charts
                        .entry(dir.to_path_buf())
                        .or_insert_with(|| chart_of(dir, 0))
                        .clone()
                };
                match chart {
                    // pre-commit and editors name template files one by one; they are no more
                    // YAML than when a directory walk finds them.
                    Some(chart) => {
                        if !w.charts.contains(&chart) {
                            w.charts.push(chart);
                        }
                    }
                    None => w.inputs.push(Input::File {
                        path,
                        walked: false,
                    }),
                }
            }
        }
    }
    // A file named twice (`fix dir dir`, `dir ./dir`, `dir/a.yaml dir`) is one input: reported
    // once, and fixed once instead of by two threads at once. Standard input is read once.
    let mut seen = std::collections::HashSet::new();
    let mut stdin = false;
    w.inputs.retain(|i| match i {
        Input::File { path, .. } => seen.insert(lexical(path)),
        Input::Stdin => !std::mem::replace(&mut stdin, true),
        Input::Rendered { .. } => true,
    });
    w
}

/// The chart directory when `path` lies under a Helm chart's `templates/` (a `templates` directory
/// whose parent holds `Chart.yaml`), or with `skip` 0 is that directory itself.
pub(crate) fn chart_of(path: &Path, skip: usize) -> Option<PathBuf> {
    let abs = std::fs::canonicalize(path).ok()?;
    let chart = abs
        .ancestors()
        .skip(skip)
        .find(|d| {
            d.file_name().is_some_and(|n| n == "templates")
                && d.parent().is_some_and(|c| c.join("Chart.yaml").is_file())
        })?
        .parent()?
        .to_path_buf();
    // Name the chart as the user would: relative to where they are when possible.
    let rel = std::env::current_dir()
        .ok()
        .and_then(|d| chart.strip_prefix(d).ok().map(Path::to_path_buf))
        .filter(|r| !r.as_os_str().is_empty());
    Some(rel.unwrap_or(chart))
}

fn walk_dir(root: &Path, bounds: &Bounds, skip_vendored: bool, w: &mut Walked) {
    let found = Mutex::new(Vec::new());
    let errors = Mutex::new(Vec::new());
    let charts = Mutex::new(Vec::new());
    let links = Mutex::new(Vec::new());
    WalkBuilder::new(root)
        .require_git(false)
        .follow_links(false)
        // Pruned, not filtered: a `node_modules` of thousands of files is never listed. The
        // root itself is never skipped (depth 0): it was named.
        .filter_entry(move |e| {
            !(skip_vendored
                && e.depth() > 0
                && e.file_type().is_some_and(|t| t.is_dir())
                && e.file_name()
                    .to_str()
                    .is_some_and(|n| SKIPPED_DIRS.contains(&n)))
        })
        .threads(2)
        .build_parallel()
        .run(|| {
            Box::new(|entry| {
                match entry {
                    Ok(e) => {
                        let is_file = e.file_type().is_some_and(|t| t.is_file());
                        if is_file && e.file_name() == "Chart.yaml" {
                            if let Some(dir) = e.path().parent() {
                                charts.lock().unwrap().push(dir.to_path_buf());
                            }
                        }
                        if is_file && is_manifest_name(e.path()) {
                            found.lock().unwrap().push(e.into_path());
                        } else if e.path_is_symlink() {
                            links.lock().unwrap().push(e.into_path());
                        }
                    }
                    Err(err) => {
                        let path = match &err {
                            ignore::Error::WithPath { path, .. } => crate::text::shown_path(path),
                            _ => crate::text::shown_path(root),
                        };
                        errors.lock().unwrap().push((path, err.to_string()));
                    }
                }
                WalkState::Continue
            })
        });
    let charts = charts.into_inner().unwrap();
    let mut files = found.into_inner().unwrap();
    // Chart templates are Go templates, not YAML; Chart.yaml and values files are not manifests.
    files.retain(|f| {
        !charts.iter().any(|c| {
            f.starts_with(c.join("templates"))
                || f.starts_with(c.join("charts"))
                || f.parent() == Some(c.as_path())
        })
    });
    let mut links = links.into_inner().unwrap();
    sort_paths(&mut links);
    files.extend(linked_files(root, &files, links, bounds, w));
    sort_paths(&mut files);
    w.inputs.extend(
        files
            .into_iter()
            .map(|path| Input::File { path, walked: true }),
    );
    w.errors.extend(errors.into_inner().unwrap());
    w.charts.extend(charts);
}

/// The symlinks found by a walk that lead to manifests not already among `files`. Links to
/// directories are not followed (a link can lead out of the tree, or into a loop), and neither
/// they nor broken links pass without a note; nor do links that lead out of bounds.
fn linked_files(
    root: &Path,
    files: &[PathBuf],
    links: Vec<PathBuf>,
    bounds: &Bounds,
    w: &mut Walked,
) -> Vec<PathBuf> {
    let notes = &mut w.notes;
    if links.is_empty() {
        return Vec::new();
    }
    // The files the walk found, by real path: the walk follows no link, so under the root's real
    // path they keep their names.
    let real_root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let mut seen: std::collections::HashSet<PathBuf> = files
        .iter()
        .filter_map(|f| f.strip_prefix(root).ok().map(|rel| real_root.join(rel)))
        .collect();
    let mut out = Vec::new();
    for link in links {
        match std::fs::metadata(&link) {
            Err(e) if is_manifest_name(&link) => w.refused.push((
                crate::text::shown_path(&link),
                format!("a symlink that leads to no file ({}); skipped", describe_io(&e)),
            )),
            Err(_) => {}
            Ok(m) if m.is_dir() => notes.push(format!(
                "{}: a symlink to a directory; not followed (name it on the command line to lint it)",
                crate::text::shown_path(&link)
            )),
            Ok(m) if m.is_file() && is_manifest_name(&link) && !bounds.admits(&link) => {
                w.refused.push(refuse(&link));
            }
            Ok(m) if m.is_file() && is_manifest_name(&link) => {
                // The same file under two names is linted once, under the first.
                let real = std::fs::canonicalize(&link).unwrap_or_else(|_| link.clone());
                if seen.insert(real) {
                    out.push(link);
                }
            }
            Ok(_) => {}
        }
    }
    out
}

/// Paths in `Path`'s order (component by component), without its cost: comparing two paths
/// splits both into components each time, and sorting a few thousand walked files that way was
/// most of the time before the first file was read. Every path here is the walk's root joined
/// with plain names, so mapping the separator to the lowest byte gives the same order.
fn sort_paths(files: &mut [PathBuf]) {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        files.sort_by_cached_key(|p| {
            p.as_os_str()
                .as_bytes()
                .iter()
                .map(|&b| if b == b'/' { 0 } else { b })
                .collect::<Vec<u8>>()
        });
    }
    #[cfg(not(unix))]
    files.sort();
}

pub fn describe_io(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file or directory".into(),
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        _ => e.to_string(),
    }
}

/// `dir` and at most `limit - 1` directories above it, nearest first, each named from where `dir`
/// was named: `../a` gives `../a`, `..`, `../..`. (`Path::ancestors` ends a relative path with
/// the empty path, which stands for the current directory: the parent of `..` is not that.) The
/// file system's root is left out: no project lives there, and listing it lists the machine.
pub fn ancestors(dir: &Path, limit: usize) -> Vec<PathBuf> {
    use std::path::Component;
    // How many `..` from the current directory reach the root.
    static DEPTH: std::sync::LazyLock<usize> = std::sync::LazyLock::new(|| {
        std::env::current_dir().map_or(usize::MAX, |d| {
            d.components()
                .filter(|c| matches!(c, Component::Normal(_)))
                .count()
        })
    });
    let is_root = |p: &Path| match p.components().next_back() {
        Some(Component::ParentDir) => p.components().count() >= *DEPTH,
        Some(Component::CurDir) => *DEPTH == 0,
        Some(Component::Normal(_)) => false,
        _ => true,
    };
    let mut out = Vec::new();
    let mut at = lexical(dir);
    if at.as_os_str().is_empty() {
        at = PathBuf::from(".");
    }
    while out.len() < limit && !is_root(&at) {
        out.push(at.clone());
        match at.components().next_back() {
            Some(Component::Normal(_)) => {
                at.pop();
                if at.as_os_str().is_empty() {
                    at = PathBuf::from(".");
                }
            }
            Some(Component::CurDir) => at = PathBuf::from(".."),
            _ => at.push(".."),
        }
    }
    out
}

/// A path with `.` dropped and `..` applied to the part before it, without asking the file
/// system (`a/b/../c/./d` is `a/c/d`): two names of one file given from the same place compare
/// equal, and a path reads as a user would write it.
pub fn lexical(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir
                if matches!(out.components().next_back(), Some(Component::Normal(_))) =>
            {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// The names in each directory a run looked into, listed once per run however many lookups ask.
/// The runtime decision and the kustomization lookup ask about the same few directories for
/// every manifest in them; a name not listed is never opened. Owned by the run (see
/// [`crate::project::Project`]), so a long-lived language server can forget what changed.
#[derive(Default)]
pub struct Listings(Mutex<foldhash::HashMap<PathBuf, std::sync::Arc<foldhash::HashSet<String>>>>);

impl Listings {
    /// The names in `dir` (nothing when it cannot be listed).
    pub fn names(&self, dir: &Path) -> std::sync::Arc<foldhash::HashSet<String>> {
        if let Some(hit) = self.0.lock().ok().and_then(|m| m.get(dir).cloned()) {
            return hit;
        }
        let names: foldhash::HashSet<String> = std::fs::read_dir(dir)
            .map(|entries| {
                entries
                    .flatten()
                    .filter_map(|e| e.file_name().into_string().ok())
                    .collect()
            })
            .unwrap_or_default();
        let names = std::sync::Arc::new(names);
        if let Ok(mut m) = self.0.lock() {
            m.insert(dir.to_path_buf(), names.clone());
        }
        names
    }

    /// Forget every listing: files were created or removed.
    pub fn forget(&mut self) {
        if let Ok(m) = self.0.get_mut() {
            m.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ancestors_of_relative_paths_go_up_through_dot_dot() {
        let up = |p: &str, n: usize| -> Vec<String> {
            ancestors(Path::new(p), n)
                .iter()
                .map(|a| a.display().to_string())
                .collect()
        };
        // From the current directory up to just below the root.
        let depth = std::env::current_dir().unwrap().components().count() - 1;
        assert!(depth >= 1, "the tests run below the root");
        let dots = |n: usize| vec![".."; n].join("/");
        let below_root: Vec<String> = (1..depth).map(dots).collect();
        assert_eq!(up("a/b", 3), ["a/b", "a", "."]);
        assert_eq!(up("a/b", 99)[3..], below_root);
        assert_eq!(up("../x", 99)[1..], below_root);
        assert_eq!(up("", 1), ["."]);
        assert_eq!(up("./a/../b", 2), ["b", "."]);
        assert_eq!(up("/srv/app", 9), ["/srv/app", "/srv"]);
        assert!(up("/", 9).is_empty());
        assert_eq!(up("a", 1), ["a"]);
    }

    /// The memos answer what the lookups they stand for answer, file by file: through linked
    /// directories, for links to files elsewhere, for names relative to the current directory.
    #[test]
    fn remembered_lookups_equal_the_direct_ones() {
        use std::os::unix::fs::symlink;
        let tmp = tempfile::tempdir().unwrap();
        let t = tmp.path();
        for d in ["repo/.git", "repo/a/b", "other/c"] {
            std::fs::create_dir_all(t.join(d)).unwrap();
        }
        for f in [
            "repo/a/x.yaml",
            "repo/a/b/y.yaml",
            "other/c/z.yaml",
            "other/w.yaml",
        ] {
            std::fs::write(t.join(f), "kind: Pod\n").unwrap();
        }
        symlink(t.join("other/c/z.yaml"), t.join("repo/a/link.yaml")).unwrap();
        symlink(t.join("repo/a"), t.join("other/linked")).unwrap();
        let files = [
            "repo/a/x.yaml",
            "repo/a/b/y.yaml",
            "repo/a/link.yaml",
            "repo/a/b/../x.yaml",
            "other/c/z.yaml",
            "other/w.yaml",
            "other/linked/x.yaml",
            "other/linked/b/y.yaml",
            "repo/a/missing.yaml",
        ];
        let (mut real, mut roots) = (RealPaths::default(), RepositoryRoots::default());
        // Twice, so the second round answers from what the first remembered.
        for _ in 0..2 {
            for f in files {
                let path = t.join(f);
                assert_eq!(real.of(&path), std::fs::canonicalize(&path).ok(), "{f}");
                let dir = path.parent().unwrap();
                assert_eq!(roots.of(dir), repository_root(dir), "{f}");
            }
        }
        assert_eq!(roots.of(&t.join("repo/a/b")), Some(t.join("repo")));
        assert_eq!(roots.of(&t.join("other/c")), repository_root(t));
    }

    #[test]
    fn walked_paths_sort_as_path_orders_them() {
        // Names around the separator's byte: `-` and `.` sort below `/`, letters above it.
        let names = [
            "a", "a-b", "a.b", "a b", "ab", "a0", "A", "b", "é", "a~", "z.yaml", "a.yaml", "a-",
        ];
        for root in ["root", "./root/", "../r o/ot", "/abs/root"] {
            let mut files = Vec::new();
            for n in names {
                files.push(Path::new(root).join(n).join("x.yaml"));
                files.push(Path::new(root).join(format!("{n}.yaml")));
                for m in names {
                    files.push(Path::new(root).join(n).join(m).join("deploy.yml"));
                }
            }
            let mut want = files.clone();
            want.sort();
            // From a shuffled start, so the test does not pass by leaving the input alone.
            files.reverse();
            files.rotate_left(7);
            sort_paths(&mut files);
            assert_eq!(files, want, "root {root}");
        }
    }
}
