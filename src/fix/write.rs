//! Writing a fixed file without ever leaving it half-written: the new text goes to a temporary file
//! in the same directory, is flushed to disk, takes the original's permissions (and owner, where
//! the process may set it), and is renamed over the original in one step. A file that changed on
//! disk since it was read, or that is read-only, is left alone and reported.
//!
//! The file is compared with what was read once the temporary file is complete and flushed (the
//! slow part), right before the rename: only a change in the moment between that comparison and
//! the rename can still be overwritten.

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
    // Write through a symlink to its target, so the link itself stays a link.
    let target = std::fs::canonicalize(path).map_err(doing("resolve"))?;
    let meta = std::fs::metadata(&target).map_err(doing("read metadata"))?;
    if meta.permissions().readonly() {
        return Err(WriteError::ReadOnly);
    }
    let dir = target.parent().ok_or(WriteError::NoParent)?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".golint-k8s-")
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(doing("create a temporary file next to it"))?;
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
