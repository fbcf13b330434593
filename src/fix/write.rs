//! Writing a fixed file without ever leaving it half-written: the new text goes to a temporary file
//! in the same directory, is flushed to disk, takes the original's permissions (and owner, where
//! the process may set it), and is renamed over the original in one step. A file that changed on
//! disk since it was read, or that is read-only, is left alone and reported.
//!
//! The file is compared with what was read once the temporary file is complete and flushed (the
//! slow part), right before the rename: only a change in the moment between that comparison and
//! the rename can still be overwritten.
//!
//! A rename gives the path a new file, so a file with other names (hard links) would keep its old
//! text under them, and a pipe or device would be replaced by a regular file: both are left alone
//! and reported. An interrupted run (Ctrl-C, SIGTERM, SIGHUP) removes its temporary files before it
//! exits; ones left by a run that could not (SIGKILL, power loss) are removed by the next run that
//! writes into their directory, once they are older than any write takes.

use std::io::Write;
use std::path::Path;

/// Why a fixed file was not written back; in every case the file is as it was.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error("the file is read-only; left unchanged")]
    ReadOnly,
    #[error("the file changed on disk while it was being fixed; left unchanged")]
    Changed,
    #[error("the file has no parent directory")]
    NoParent,
    #[error("not a regular file (a pipe or a device); fixes are only written to files")]
    NotRegular,
    #[error(
        "the file has {0} names (hard links), which replacing it would leave with the old text; left unchanged"
    )]
    HardLinked(u64),
    #[error("cannot keep the file's owner ({0}); left unchanged rather than taking it over")]
    Owner(std::io::Error),
    #[error("cannot {doing}: {source}")]
    Io {
        doing: &'static str,
        source: std::io::Error,
    },
}

/// An I/O failure while doing something, as [`WriteError::Io`].
fn doing(doing: &'static str) -> impl FnOnce(std::io::Error) -> WriteError {
    move |source| WriteError::Io { doing, source }
}

/// Replace the file at `path`, whose content was `original` when it was read, with `new`.
pub fn write_atomic(path: &Path, original: &[u8], new: &str) -> Result<(), WriteError> {
    write_atomic_observed(path, original, new, |_| {})
}

/// [`write_atomic`], calling `flushed` with the file's real path once the temporary file is
/// complete and on disk, before the last comparison: tests edit the file there, as a person
/// could while a slow disk flushes.
#[doc(hidden)]
pub fn write_atomic_observed(
    path: &Path,
    original: &[u8],
    new: &str,
    flushed: impl FnOnce(&Path),
) -> Result<(), WriteError> {
    // Before resolving: a pipe from `<(…)` has no path to resolve to.
    if std::fs::metadata(path).is_ok_and(|m| !m.is_file()) {
        return Err(WriteError::NotRegular);
    }
    // Write through a symlink to its target, so the link itself stays a link.
    let target = std::fs::canonicalize(path).map_err(doing("resolve"))?;
    let meta = std::fs::metadata(&target).map_err(doing("read metadata"))?;
    if let Some(n) = other_names(&meta) {
        return Err(WriteError::HardLinked(n));
    }
    if meta.permissions().readonly() {
        return Err(WriteError::ReadOnly);
    }
    let dir = target.parent().ok_or(WriteError::NoParent)?;
    sweep_once(dir);
    let (mut tmp, _known) =
        temporaries::create(dir).map_err(doing("create a temporary file next to it"))?;
    tmp.write_all(new.as_bytes())
        .and_then(|()| tmp.as_file().set_permissions(meta.permissions()))
        .map_err(doing("write the temporary file"))?;
    keep_owner(tmp.as_file(), &meta)?;
    tmp.as_file()
        .sync_all()
        .map_err(doing("flush the temporary file"))?;
    flushed(&target);
    // The same file (not one renamed over it meanwhile), with the same text.
    let still = std::fs::metadata(&target).map_err(doing("read metadata"))?;
    if !same_file(&meta, &still) || std::fs::read(&target).map_err(doing("re-read"))? != original {
        return Err(WriteError::Changed);
    }
    tmp.persist(&target)
        .map_err(|e| doing("replace the file")(e.error))?;
    // Make the rename itself durable; not every file system lets a directory be synced.
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

#[cfg(unix)]
fn other_names(meta: &std::fs::Metadata) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    (meta.nlink() > 1).then_some(meta.nlink())
}

#[cfg(not(unix))]
fn other_names(_: &std::fs::Metadata) -> Option<u64> {
    None
}

const TEMP_PREFIX: &str = ".golint-k8s-";
const TEMP_SUFFIX: &str = ".tmp";

/// A temporary file older than this was left by a run that was killed: a write keeps its file for
/// the time a flush takes, never minutes.
const STALE: std::time::Duration = std::time::Duration::from_secs(600);

/// Temporary files removed this run because an earlier run left them.
static SWEPT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// How many temporary files left by earlier, killed runs this run removed.
pub fn stale_removed() -> usize {
    SWEPT.load(std::sync::atomic::Ordering::Relaxed)
}

/// Remove stale temporary files from `dir`, the first time this run writes there.
fn sweep_once(dir: &Path) {
    static SWEPT_DIRS: std::sync::Mutex<Vec<std::path::PathBuf>> =
        std::sync::Mutex::new(Vec::new());
    {
        let mut done = SWEPT_DIRS.lock().unwrap_or_else(|e| e.into_inner());
        if done.iter().any(|d| d == dir) {
            return;
        }
        done.push(dir.to_path_buf());
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let name = name.to_string_lossy();
        if !(name.starts_with(TEMP_PREFIX) && name.ends_with(TEMP_SUFFIX)) {
            continue;
        }
        let old = e.metadata().ok().filter(|m| m.is_file()).and_then(|m| {
            m.modified()
                .ok()
                .and_then(|t| t.elapsed().ok())
                .map(|age| age > STALE)
        });
        if old == Some(true) && std::fs::remove_file(e.path()).is_ok() {
            SWEPT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    }
}

/// The temporary files this process has on disk, so that a signal can remove them before the
/// process ends: drop handlers do not run when a signal ends it.
mod temporaries {
    use std::path::{Path, PathBuf};
    use std::sync::Mutex;

    static LIVE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

    fn live() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
        LIVE.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Known while it lives: dropped once the file was renamed into place or removed.
    pub struct Known(PathBuf);

    impl Drop for Known {
        fn drop(&mut self) {
            live().retain(|p| *p != self.0);
        }
    }

    /// Create a temporary file in `dir`, known before anything can interrupt between its creation
    /// and its registration (the signal handler waits for the same lock).
    pub fn create(dir: &Path) -> std::io::Result<(tempfile::NamedTempFile, Known)> {
        let mut live = live();
        let tmp = tempfile::Builder::new()
            .prefix(super::TEMP_PREFIX)
            .suffix(super::TEMP_SUFFIX)
            .tempfile_in(dir)?;
        live.push(tmp.path().to_path_buf());
        let known = Known(tmp.path().to_path_buf());
        Ok((tmp, known))
    }

    /// Remove every temporary file still on disk; the lock is kept, so no new one appears after.
    pub fn remove_all() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
        let live = live();
        for p in live.iter() {
            let _ = std::fs::remove_file(p);
        }
        live
    }
}

/// On SIGINT, SIGTERM or SIGHUP, remove this run's temporary files and end as the signal would
/// have (exit status 128 + its number). A file being written is then either as it was or fully
/// fixed, and nothing is left beside it.
#[cfg(unix)]
pub fn clean_up_on_signals() {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
        return;
    };
    std::thread::spawn(move || {
        if let Some(sig) = signals.forever().next() {
            let _held = temporaries::remove_all();
            std::process::exit(128 + sig);
        }
    });
}

#[cfg(not(unix))]
pub fn clean_up_on_signals() {}

#[cfg(unix)]
fn same_file(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    (a.dev(), a.ino()) == (b.dev(), b.ino())
}

#[cfg(not(unix))]
fn same_file(_: &std::fs::Metadata, _: &std::fs::Metadata) -> bool {
    true
}

#[cfg(unix)]
fn keep_owner(tmp: &std::fs::File, meta: &std::fs::Metadata) -> Result<(), WriteError> {
    use std::os::unix::fs::MetadataExt;
    let mine = tmp.metadata().map_err(doing("read the temporary file"))?;
    if mine.uid() == meta.uid() && mine.gid() == meta.gid() {
        return Ok(());
    }
    std::os::unix::fs::fchown(tmp, Some(meta.uid()), Some(meta.gid())).map_err(WriteError::Owner)
}

#[cfg(not(unix))]
fn keep_owner(_: &std::fs::File, _: &std::fs::Metadata) -> Result<(), WriteError> {
    Ok(())
}
