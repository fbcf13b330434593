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

/// What each file held at the revision: its bytes, or None when it did not exist there.
pub struct AtRev {
    pub files: HashMap<PathBuf, Option<Vec<u8>>>,
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

/// Read `files` as they were at `rev`, in the git repository around the current directory.
pub fn read(rev: &str, files: &[PathBuf]) -> Result<AtRev, String> {
    let here = std::env::current_dir().map_err(|e| e.to_string())?;
    let root = git(&here, &["rev-parse", "--show-toplevel"])
        .map_err(|e| format!("--new-from-rev needs a git repository: {e}"))?;
    let root = PathBuf::from(String::from_utf8_lossy(&root).trim());
    let root = std::fs::canonicalize(&root).unwrap_or(root);
    let spec = format!("{rev}^{{commit}}");
    git(&root, &["rev-parse", "--verify", "--quiet", &spec])
        .map_err(|_| format!("--new-from-rev: {rev:?} is not a commit of this repository"))?;
    let renamed = renames(&root, rev)?;
    // Each file's path in the repository at REV.
    let mut wanted: Vec<(PathBuf, String)> = Vec::new();
    let mut files_out = HashMap::new();
    for f in files {
        let rel = std::fs::canonicalize(f)
            .ok()
            .and_then(|abs| abs.strip_prefix(&root).ok().map(Path::to_path_buf));
        match rel.and_then(|r| r.to_str().map(str::to_string)) {
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
    let blobs = cat_files(&root, rev, wanted.iter().map(|(_, p)| p.as_str()))?;
    for ((f, _), blob) in wanted.into_iter().zip(blobs) {
        files_out.insert(f, blob);
    }
    Ok(AtRev { files: files_out })
}

/// Files git sees as renamed between `rev` and the working tree: new path → old path.
fn renames(root: &Path, rev: &str) -> Result<HashMap<String, String>, String> {
    let out = git(root, &["diff", "-M", "--name-status", "-z", rev, "--"])?;
    let mut fields = out
        .split(|&b| b == 0)
        .map(|f| String::from_utf8_lossy(f).into_owned());
    let mut map = HashMap::new();
    while let Some(status) = fields.next() {
        if status.is_empty() {
            break;
        }
        if status.starts_with('R') || status.starts_with('C') {
            let (Some(old), Some(new)) = (fields.next(), fields.next()) else {
                break;
            };
            if status.starts_with('R') {
                map.insert(new, old);
            }
        } else {
            fields.next();
        }
    }
    Ok(map)
}

/// The content at `rev` of each path (relative to the repository's root), through one
/// `git cat-file --batch`: one process for any number of files.
fn cat_files<'a>(
    root: &Path,
    rev: &str,
    paths: impl Iterator<Item = &'a str>,
) -> Result<Vec<Option<Vec<u8>>>, String> {
    let requests: Vec<String> = paths.map(|p| format!("{rev}:{p}\n")).collect();
    if requests.is_empty() {
        return Ok(Vec::new());
    }
    let mut child = Command::new("git")
        .arg("-C")
        .arg(root)
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
    let mut blobs = Vec::with_capacity(count);
    let mut header = String::new();
    for _ in 0..count {
        header.clear();
        out.read_line(&mut header).map_err(|e| e.to_string())?;
        let words: Vec<&str> = header.split_whitespace().collect();
        match words.as_slice() {
            [_, "blob", size] => {
                let size: usize = size.parse().map_err(|_| "git cat-file: bad size")?;
                let mut blob = vec![0; size];
                out.read_exact(&mut blob).map_err(|e| e.to_string())?;
                let mut nl = [0u8; 1];
                out.read_exact(&mut nl).map_err(|e| e.to_string())?;
                blobs.push(Some(blob));
            }
            // Missing at REV (a new file), or not a file there.
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
