//! Writing a fixed file without ever leaving it half-written: the new text goes to a temporary file
//! in the same directory, is flushed to disk, takes the original's permissions (and owner, where
//! the process may set it), and is renamed over the original in one step. A file that changed on
//! disk since it was read, or that is read-only, is left alone and reported.

use std::io::Write;
use std::path::Path;

/// Replace the file at `path`, whose content was `original` when it was read, with `new`.
pub fn write_atomic(path: &Path, original: &[u8], new: &str) -> Result<(), String> {
    // Write through a symlink to its target, so the link itself stays a link.
    let target = std::fs::canonicalize(path).map_err(|e| format!("cannot resolve: {e}"))?;
    let meta = std::fs::metadata(&target).map_err(|e| format!("cannot read metadata: {e}"))?;
    if meta.permissions().readonly() {
        return Err("the file is read-only; left unchanged".into());
    }
    let now = std::fs::read(&target).map_err(|e| format!("cannot re-read: {e}"))?;
    if now != original {
        return Err("the file changed on disk while it was being fixed; left unchanged".into());
    }
    let dir = target
        .parent()
        .ok_or_else(|| "the file has no parent directory".to_string())?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".golint-k8s-")
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(|e| format!("cannot create a temporary file next to it: {e}"))?;
    tmp.write_all(new.as_bytes())
        .and_then(|()| tmp.as_file().set_permissions(meta.permissions()))
        .map_err(|e| format!("cannot write the temporary file: {e}"))?;
    keep_owner(tmp.as_file(), &meta)?;
    tmp.as_file()
        .sync_all()
        .map_err(|e| format!("cannot flush the temporary file: {e}"))?;
    tmp.persist(&target)
        .map_err(|e| format!("cannot replace the file: {}", e.error))?;
    // Make the rename itself durable; not every file system lets a directory be synced.
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

#[cfg(unix)]
fn keep_owner(tmp: &std::fs::File, meta: &std::fs::Metadata) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt;
    let mine = tmp
        .metadata()
        .map_err(|e| format!("cannot read the temporary file: {e}"))?;
    if mine.uid() == meta.uid() && mine.gid() == meta.gid() {
        return Ok(());
    }
    std::os::unix::fs::fchown(tmp, Some(meta.uid()), Some(meta.gid())).map_err(|e| {
        format!("cannot keep the file's owner ({e}); left unchanged rather than taking it over")
    })
}

#[cfg(not(unix))]
fn keep_owner(_: &std::fs::File, _: &std::fs::Metadata) -> Result<(), String> {
    Ok(())
}
