//! `--new-from-rev REV`: report only the findings a file did not have at a git revision, so that
//! a repository with old findings can gate new ones from its first day (golangci-lint's option).
//!
//! The files are linted as git has them at REV, with today's config, and findings are matched by
//! [`crate::fingerprint`], which holds no line numbers: a finding that moved with its object is
//! old, one on a new object, container, key or rule is new. Each fingerprint is counted, so a
//! second identical finding in a file is new. A file git finds renamed since REV is compared with
//! its old name's content; a file that did not exist at REV has only new findings.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// What each file held at the revision: its blob, or None when it did not exist there.
pub struct AtRev {
    pub files: HashMap<PathBuf, Option<Blob>>,
}

/// A file's content at the revision.
#[derive(Debug, Clone)]
pub enum Blob {
    Bytes(Vec<u8>),
    /// Larger than any input is read (this many bytes): not read, reported as a file that size
    /// is.
    OverCap(u64),
}

fn git(dir: &Path, args: &[&str]) -> Result<Vec<u8>, String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run git: {e}"))?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).trim().to_string());
    }
    Ok(out.stdout)
}

/// A path as git spells it in its own output: the bytes of the name, `/` between parts.
#[cfg(unix)]
fn git_path(p: &Path) -> Vec<u8> {
    use std::os::unix::ffi::OsStrExt;
    p.as_os_str().as_bytes().to_vec()
}

#[cfg(not(unix))]
fn git_path(p: &Path) -> Vec<u8> {
    p.to_string_lossy().replace('\\', "/").into_bytes()
}

#[cfg(unix)]
fn from_git_path(p: &[u8]) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;
    PathBuf::from(std::ffi::OsStr::from_bytes(p))
}

#[cfg(not(unix))]
fn from_git_path(p: &[u8]) -> PathBuf {
    PathBuf::from(String::from_utf8_lossy(p).into_owned())
}

/// Read `files` as they were at `rev`, in the git repository around the current directory.
///
/// Every path travels between git and here NUL-terminated (`-z`), and `git cat-file` is asked for
/// object ids only: a file name holding a line break cannot make git answer for another path.
pub fn read(rev: &str, files: &[PathBuf]) -> Result<AtRev, String> {
    let here = std::env::current_dir().map_err(|e| e.to_string())?;
    let root = git(&here, &["rev-parse", "--show-toplevel"])
        .map_err(|e| format!("--new-from-rev needs a git repository: {e}"))?;
    let root = PathBuf::from(String::from_utf8_lossy(&root).trim());
    let root = std::fs::canonicalize(&root).unwrap_or(root);
    let commit = resolve(&root, rev)?;
    let renamed = renames(&root, &commit)?;
    // Each file's path in the repository at REV.
    let mut wanted: Vec<(PathBuf, Vec<u8>)> = Vec::new();
    let mut files_out = HashMap::new();
    for f in files {
        let rel = std::fs::canonicalize(f)
            .ok()
            .and_then(|abs| abs.strip_prefix(&root).ok().map(git_path));
        match rel {
            Some(rel) => {
                let then = renamed.get(&rel).cloned().unwrap_or(rel);
                wanted.push((f.clone(), then));
            }
            // Outside the repository: nothing to compare with, every finding is new.
            None => {
                files_out.insert(f.clone(), None);
            }
        }
    }
    let paths: Vec<&[u8]> = wanted.iter().map(|(_, p)| p.as_slice()).collect();
    let blobs = in_tree(&root, &commit, &paths)?;
    for ((f, _), blob) in wanted.into_iter().zip(blobs) {
        files_out.insert(f, blob);
    }
    Ok(AtRev { files: files_out })
}

/// The commit `rev` names, as an object id: every later git command gets the id, never the
/// user's text (which could read as an option).
fn resolve(root: &Path, rev: &str) -> Result<String, String> {
    let spec = format!("{rev}^{{commit}}");
    if let Ok(id) = git(
        root,
        &[
            "rev-parse",
            "--verify",
            "--quiet",
            "--end-of-options",
            &spec,
        ],
    ) {
        return Ok(String::from_utf8_lossy(&id).trim().to_string());
    }
    let shallow =
        git(root, &["rev-parse", "--is-shallow-repository"]).is_ok_and(|o| o.starts_with(b"true"));
    if shallow {
        return Err(format!(
            "--new-from-rev: {rev:?} is not in this clone, which is shallow (it has only the \
             latest commits): fetch the history first, e.g. `git fetch --deepen=100` or \
             `git fetch --unshallow` (in GitHub Actions, `fetch-depth: 0` on actions/checkout)"
        ));
    }
    Err(format!(
        "--new-from-rev: {rev:?} is not a commit of this repository"
    ))
}

/// Files git sees as renamed between `commit` and the working tree: new path → old path, both
/// relative to the repository's root whatever the user's git config says.
fn renames(root: &Path, commit: &str) -> Result<HashMap<Vec<u8>, Vec<u8>>, String> {
    let out = git(
        root,
        &[
            "diff",
            "--no-relative",
            "--no-ext-diff",
            "-M",
            "--name-status",
            "-z",
            commit,
            "--",
        ],
    )?;
    let mut fields = out.split(|&b| b == 0).map(<[u8]>::to_vec);
    let mut map = HashMap::new();
    while let Some(status) = fields.next() {
        if status.is_empty() {
            break;
        }
        if status.starts_with(b"R") || status.starts_with(b"C") {
            let (Some(old), Some(new)) = (fields.next(), fields.next()) else {
                break;
            };
            if status.starts_with(b"R") {
                map.insert(new, old);
            }
        } else {
            fields.next();
        }
    }
    Ok(map)
}

/// The content of each path (relative to `repo`'s root) in the tree of `treeish`. A path inside
/// a submodule is read from the submodule's own repository at the commit the tree records for
/// it, so an unchanged submodule has no new findings.
fn in_tree(repo: &Path, treeish: &str, paths: &[&[u8]]) -> Result<Vec<Option<Blob>>, String> {
    let mut out = vec![None; paths.len()];
    if paths.is_empty() {
        return Ok(out);
    }
    let listing = git(repo, &["ls-tree", "-r", "-z", "--full-tree", treeish])?;
    // `<mode> <type> <id>\t<path>`, each entry ended by NUL.
    let mut blobs: HashMap<&[u8], &str> = HashMap::new();
    let mut gitlinks: Vec<(&[u8], &str)> = Vec::new();
    for entry in listing.split(|&b| b == 0) {
        let Some(tab) = entry.iter().position(|&b| b == b'\t') else {
            continue;
        };
        let (meta, path) = (&entry[..tab], &entry[tab + 1..]);
        let meta = std::str::from_utf8(meta).unwrap_or("");
        match meta.split(' ').collect::<Vec<_>>().as_slice() {
            // A symlink's blob is the link's target, not the file it leads to.
            [mode, "blob", id] if *mode != "120000" => {
                blobs.insert(path, id);
            }
            ["160000", "commit", id] => gitlinks.push((path, id)),
            _ => {}
        }
    }
    let mut requests: Vec<(usize, &str)> = Vec::new();
    let mut nested: HashMap<usize, Vec<(usize, &[u8])>> = HashMap::new();
    for (i, p) in paths.iter().enumerate() {
        if let Some(id) = blobs.get(p) {
            requests.push((i, id));
        } else if let Some(g) = gitlinks
            .iter()
            .position(|(g, _)| p.len() > g.len() && p.starts_with(g) && p[g.len()] == b'/')
        {
            nested
                .entry(g)
                .or_default()
                .push((i, &p[gitlinks[g].0.len() + 1..]));
        }
    }
    let got = cat_blobs(repo, requests.iter().map(|(_, id)| *id))?;
    for ((i, _), blob) in requests.iter().zip(got) {
        out[*i] = blob;
    }
    for (g, inside) in nested {
        let (path, id) = gitlinks[g];
        let sub = repo.join(from_git_path(path));
        let sub_paths: Vec<&[u8]> = inside.iter().map(|(_, p)| *p).collect();
        // A submodule that is not checked out, or lacks the recorded commit, has nothing to
        // compare with: its findings are new.
        if let Ok(blobs) = in_tree(&sub, id, &sub_paths) {
            for ((i, _), blob) in inside.iter().zip(blobs) {
                out[*i] = blob;
            }
        }
    }
    Ok(out)
}

/// The blobs with these object ids, through one `git cat-file --batch`: one process for any
/// number of files. A blob is read up to the size cap of any input (one byte past it, so that it
/// is refused as a file of that size would be); the rest is passed over unread.
fn cat_blobs<'a>(
    repo: &Path,
    ids: impl Iterator<Item = &'a str>,
) -> Result<Vec<Option<Blob>>, String> {
    let requests: Vec<String> = ids.map(|id| format!("{id}\n")).collect();
    if requests.is_empty() {
        return Ok(Vec::new());
    }
    let mut child = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(["cat-file", "--batch"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot run git: {e}"))?;
    let mut stdin = child.stdin.take().ok_or("git cat-file has no input")?;
    let count = requests.len();
    // Written on a thread: git answers as it reads, and a full pipe either way would stall both.
    let writer = std::thread::spawn(move || {
        for r in requests {
            if stdin.write_all(r.as_bytes()).is_err() {
                return;
            }
        }
    });
    let mut out = BufReader::new(child.stdout.take().ok_or("git cat-file has no output")?);
    let cap = crate::source::MAX_STREAM_BYTES;
    let mut blobs = Vec::with_capacity(count);
    let mut header = String::new();
    for _ in 0..count {
        header.clear();
        out.read_line(&mut header).map_err(|e| e.to_string())?;
        let words: Vec<&str> = header.split_whitespace().collect();
        match words.as_slice() {
            [_, "blob", size] => {
                let size: u64 = size.parse().map_err(|_| "git cat-file: bad size")?;
                let kept = if size > cap { 0 } else { size };
                let mut blob = Vec::with_capacity(kept as usize);
                (&mut out)
                    .take(kept)
                    .read_to_end(&mut blob)
                    .map_err(|e| e.to_string())?;
                // What is past the cap, and the line break after each object.
                let rest = size - kept + 1;
                let skipped = std::io::copy(&mut (&mut out).take(rest), &mut std::io::sink())
                    .map_err(|e| e.to_string())?;
                if blob.len() as u64 != kept || skipped != rest {
                    return Err("git cat-file ended early".into());
                }
                blobs.push(Some(if size > cap {
                    Blob::OverCap(size)
                } else {
                    Blob::Bytes(blob)
                }));
            }
            // Not a blob there.
            _ => blobs.push(None),
        }
    }
    let _ = writer.join();
    let _ = child.wait();
    Ok(blobs)
}

/// How many times each fingerprint occurs among a file's findings at REV.
pub type Counts = HashMap<u64, usize>;

/// Keep the findings that are new: for each fingerprint, those past the count it had at REV.
pub fn keep_new<T>(items: Vec<T>, mut then: Counts, fingerprint: impl Fn(&T) -> u64) -> Vec<T> {
    items
        .into_iter()
        .filter(|item| match then.get_mut(&fingerprint(item)) {
            Some(n) if *n > 0 => {
                *n -= 1;
                false
            }
            _ => true,
        })
        .collect()
}
