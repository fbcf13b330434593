//! Writing a fixed file without ever leaving it half-written: the new text goes to a temporary file
//! in the same directory, is flushed to disk, takes the original's permissions, owner and extended
//! attributes (POSIX ACLs and SELinux labels are kept as such), and is renamed over the original
//! in one step. A file that changed on
//! disk since it was read, or that is read-only, is left alone and reported.
//!
//! The file is compared with what was read once the temporary file is complete and flushed (the
//! slow part), right before the rename: only a change in the moment between that comparison and
//! the rename can still be overwritten. The comparison reads the file again rather than trusting
//! its size and modification time: an edit within one tick of the file system's clock that keeps
//! the size would pass such a check, and the read costs little next to the flush.
//!
//! What a run of many writes costs is the flushes: one `fsync` of each temporary file (its data
//! must be on disk before the rename, or a crash could leave the new name on an empty file), and
//! one of its directory to make the rename durable. Two things keep that affordable without giving
//! up either:
//! - A directory is flushed once per run ([`Writer::finish`], or when the writer is dropped), not
//!   once per file renamed into it. Until then a crash can undo a rename, which leaves that file
//!   as it was: one of the two states a file may be in. The run reports its files fixed only
//!   after the flush.
//! - Many files are written at once, on threads of their own ([`Writer::writing`]): a flush waits
//!   for the disk, not the CPU, and a journaling file system commits the flushes that wait
//!   together in one go. The fixing stays on one thread per core meanwhile: threads that fix
//!   allocate, and each extra one costs fresh pages the kernel has to clear.
//!
//! A rename gives the path a new file, so a file with other names (hard links) would keep its old
//! text under them, and a pipe or device would be replaced by a regular file: both are left alone
//! and reported. A run ended by a signal that can be caught (Ctrl-C, SIGTERM, SIGHUP, SIGUSR1,
//! SIGALRM, ...) removes its temporary files before it exits, and a write past the file size limit
//! (`ulimit -f`) is an error for that file instead of the end of the process; ones left by a run that could not (SIGKILL, power loss) are removed by the next run that
//! writes into their directory, once they are older than any write takes.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

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
    #[error("cannot keep the file's extended attribute {0} ({1}); left unchanged rather than dropping it")]
    Attribute(String, std::io::Error),
    #[error(
        "the fixed file would be larger than the file size limit of this process (`ulimit -f`); left unchanged"
    )]
    SizeLimit,
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

/// Replace the file at `path`, whose content was `original` when it was read, with `new`: one
/// write, as a run of its own (see [`Writer`] for a run of many).
pub fn write_atomic(path: &Path, original: &[u8], new: &str) -> Result<(), WriteError> {
    Writer::new().write(path, original, new)
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
    Writer::new().write_observed(path, original, new, flushed)
}

/// The writes of one `fix` run: the temporary files it has on disk (so that a signal can remove
/// them before the process ends: drop handlers do not run when a signal ends it), and the
/// directories it has swept of the temporary files earlier, killed runs left. Owned by the run;
/// the signal handling it sets up ends with it.
pub struct Writer {
    live: Arc<Mutex<Vec<PathBuf>>>,
    /// Directories with a rename in them that is not flushed yet.
    unflushed: Mutex<std::collections::HashSet<PathBuf>>,
    swept_dirs: Mutex<Vec<PathBuf>>,
    swept: AtomicUsize,
    #[cfg(unix)]
    signals: Option<(signal_hook::iterator::Handle, signal_hook::SigId)>,
}

impl Default for Writer {
    fn default() -> Writer {
        Writer::new()
    }
}

impl Writer {
    /// A writer that leaves signals alone.
    pub fn new() -> Writer {
        Writer {
            live: Default::default(),
            unflushed: Default::default(),
            swept_dirs: Default::default(),
            swept: AtomicUsize::new(0),
            #[cfg(unix)]
            signals: None,
        }
    }

    /// A writer that, on any signal whose default is to end the process and that can be caught,
    /// removes its temporary files and ends the process as the signal would have (exit status
    /// 128 + its number). A file being written is then either as it was or fully fixed, and
    /// nothing is left beside it.
    ///
    /// SIGXFSZ (a write past `ulimit -f`) is caught and otherwise ignored: the write then fails
    /// with EFBIG, which ends that file's fix with an error, and the run goes on.
    #[cfg_attr(not(unix), allow(unused_mut))]
    pub fn cleaning_up_on_signals() -> Writer {
        let mut w = Writer::new();
        #[cfg(unix)]
        {
            w.signals = watch_signals(w.live.clone());
        }
        w
    }

    /// How many writes a run should have under way at once: many more than the cores, for a write
    /// spends its time waiting for the disk to flush.
    pub fn threads() -> usize {
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        (cores * 4).max(16)
    }

    /// Run `produce` while `threads` threads of their own write what it hands to the [`Queue`],
    /// so that the caller's threads go on fixing while the writes wait for the disk. Returns what
    /// `produce` returned and the writes that failed; every write is done when this returns.
    pub fn writing<R>(
        &self,
        threads: usize,
        produce: impl FnOnce(&Queue<'_>) -> R,
    ) -> (R, Vec<Unwritten>) {
        let failed = Mutex::new(Vec::new());
        // A short queue: a fixed text waits in memory only until a thread is free to write it.
        let threads = threads.max(1);
        let (tx, rx) = std::sync::mpsc::sync_channel::<Pending>(threads);
        let rx = Mutex::new(rx);
        let out = std::thread::scope(|s| {
            for _ in 0..threads {
                s.spawn(|| loop {
                    let next = lock(&rx).recv();
                    let Ok(job) = next else { break };
                    self.write_pending(job, &failed);
                });
            }
            let queue = Queue {
                tx,
                writer: self,
                failed: &failed,
            };
            produce(&queue)
            // `queue` is dropped here, which ends the threads once the queue is empty.
        });
        let failed = failed.into_inner().unwrap_or_else(|e| e.into_inner());
        (out, failed)
    }

    fn write_pending(&self, job: Pending, failed: &Mutex<Vec<Unwritten>>) {
        if let Err(error) = self.write(&job.path, job.original.as_bytes(), &job.text) {
            lock(failed).push(Unwritten {
                path: job.path,
                original: job.original,
                error,
            });
        }
    }

    /// Make every rename so far durable: flush each directory written into once. Errors are not
    /// reported, as not every file system lets a directory be flushed.
    pub fn finish(&self) {
        let dirs = std::mem::take(&mut *lock(&self.unflushed));
        for dir in dirs {
            if let Ok(d) = std::fs::File::open(&dir) {
                let _ = d.sync_all();
            }
        }
    }

    /// How many temporary files left by earlier, killed runs this run removed.
    pub fn stale_removed(&self) -> usize {
        self.swept.load(Ordering::Relaxed)
    }

    /// Replace the file at `path`, whose content was `original` when it was read, with `new`.
    pub fn write(&self, path: &Path, original: &[u8], new: &str) -> Result<(), WriteError> {
        self.write_observed(path, original, new, |_| {})
    }

    /// [`Writer::write`], calling `flushed` as [`write_atomic_observed`] does.
    #[doc(hidden)]
    pub fn write_observed(
        &self,
        path: &Path,
        original: &[u8],
        new: &str,
        flushed: impl FnOnce(&Path),
    ) -> Result<(), WriteError> {
        write_file(self, path, original, new, flushed)
    }

    /// Create a temporary file in `dir`, known before anything can interrupt between its
    /// creation and its registration (the signal handler waits for the same lock).
    fn create(&self, dir: &Path) -> std::io::Result<(tempfile::NamedTempFile, Known<'_>)> {
        let mut live = lock(&self.live);
        let tmp = tempfile::Builder::new()
            .prefix(TEMP_PREFIX)
            .suffix(TEMP_SUFFIX)
            .tempfile_in(dir)?;
        live.push(tmp.path().to_path_buf());
        let known = Known(&self.live, tmp.path().to_path_buf());
        Ok((tmp, known))
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        self.finish();
        #[cfg(unix)]
        if let Some((handle, xfsz)) = self.signals.take() {
            // The watching thread sees the close and ends; its registrations go with it.
            handle.close();
            signal_hook::low_level::unregister(xfsz);
        }
    }
}

/// Where the threads that fix hand their files to the threads that write ([`Writer::writing`]).
pub struct Queue<'w> {
    tx: std::sync::mpsc::SyncSender<Pending>,
    writer: &'w Writer,
    failed: &'w Mutex<Vec<Unwritten>>,
}

impl Queue<'_> {
    /// Write `text` over the file at `path`, whose content was `original` when it was read; waits
    /// while every writing thread is busy and the queue is full.
    pub fn push(&self, path: PathBuf, original: String, text: String) {
        if let Err(std::sync::mpsc::SendError(job)) = self.tx.send(Pending {
            path,
            original,
            text,
        }) {
            // No thread left to write (they only end with the queue): write here rather than
            // lose the fix.
            self.writer.write_pending(job, self.failed);
        }
    }
}

struct Pending {
    path: PathBuf,
    original: String,
    text: String,
}

/// A write that failed; the file is as it was.
pub struct Unwritten {
    pub path: PathBuf,
    /// The text that was read, and is still the file's.
    pub original: String,
    pub error: WriteError,
}

/// A temporary file, known to its [`Writer`] while it lives: dropped once the file was renamed
/// into place or removed.
struct Known<'w>(&'w Mutex<Vec<PathBuf>>, PathBuf);

impl Drop for Known<'_> {
    fn drop(&mut self) {
        lock(self.0).retain(|p| *p != self.1);
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn write_file(
    writer: &Writer,
    path: &Path,
    original: &[u8],
    new: &str,
    flushed: impl FnOnce(&Path),
) -> Result<(), WriteError> {
    // Before resolving: a pipe from `<(…)` has no path to resolve to.
    if std::fs::metadata(path).is_ok_and(|m| !m.is_file()) {
        return Err(WriteError::NotRegular);
    }
    // Write through a symlink to its target, so the link itself stays a link. A path that is no
    // link is its own target: resolving it (a readlink per component) cost more than the write.
    let own = std::fs::symlink_metadata(path).map_err(doing("read metadata"))?;
    let (target, meta) = if own.file_type().is_symlink() {
        let target = std::fs::canonicalize(path).map_err(doing("resolve"))?;
        let meta = std::fs::metadata(&target).map_err(doing("read metadata"))?;
        (target, meta)
    } else {
        (path.to_path_buf(), own)
    };
    if let Some(n) = other_names(&meta) {
        return Err(WriteError::HardLinked(n));
    }
    if meta.permissions().readonly() {
        return Err(WriteError::ReadOnly);
    }
    let dir = match target.parent().ok_or(WriteError::NoParent)? {
        d if d.as_os_str().is_empty() => Path::new("."),
        d => d,
    };
    sweep_once(writer, dir);
    let (mut tmp, _known) = writer
        .create(dir)
        .map_err(doing("create a temporary file next to it"))?;
    tmp.write_all(new.as_bytes())
        .and_then(|()| tmp.as_file().set_permissions(meta.permissions()))
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::FileTooLarge => WriteError::SizeLimit,
            _ => doing("write the temporary file")(e),
        })?;
    keep_owner(tmp.as_file(), &meta)?;
    // After the owner: changing it drops some attributes (security.capability).
    attributes::copy(&target, tmp.as_file())?;
    tmp.as_file()
        .sync_all()
        .map_err(doing("flush the temporary file"))?;
    flushed(&target);
    // The same file (not one renamed over it meanwhile), with the same text.
    let still = std::fs::metadata(&target).map_err(doing("read metadata"))?;
    if !same_file(&meta, &still) || !holds(&target, original).map_err(doing("re-read"))? {
        return Err(WriteError::Changed);
    }
    tmp.persist(&target)
        .map_err(|e| doing("replace the file")(e.error))?;
    // The rename is made durable with the run's others in this directory (`Writer::finish`).
    lock(&writer.unflushed).insert(dir.to_path_buf());
    Ok(())
}

/// Whether the file at `path` holds exactly `expected`, read a block at a time: the threads that
/// write (sixteen of them) would otherwise each take a copy of every file onto heaps of their own.
fn holds(path: &Path, expected: &[u8]) -> std::io::Result<bool> {
    use std::io::Read;
    let mut file = std::fs::File::open(path)?;
    let mut block = [0u8; 8192];
    let mut at = 0;
    loop {
        let n = match file.read(&mut block) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if n == 0 {
            return Ok(at == expected.len());
        }
        if expected.get(at..at + n) != Some(&block[..n]) {
            return Ok(false);
        }
        at += n;
    }
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

/// Remove stale temporary files from `dir`, the first time this run writes there.
fn sweep_once(writer: &Writer, dir: &Path) {
    {
        let mut done = lock(&writer.swept_dirs);
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
            writer.swept.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// Watch the signals that end the process, on a thread of its own that holds the run's list of
/// temporary files: a signal handler proper could do no I/O, and this needs no process-wide
/// state.
#[cfg(unix)]
fn watch_signals(
    live: Arc<Mutex<Vec<PathBuf>>>,
) -> Option<(signal_hook::iterator::Handle, signal_hook::SigId)> {
    use signal_hook::consts::*;
    // A handler, unlike SIG_IGN, is not inherited by the programs `fix` runs (git, helm).
    let xfsz =
        signal_hook::flag::register(SIGXFSZ, Arc::new(std::sync::atomic::AtomicBool::new(false)))
            .ok()?;
    let ending = [
        SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF, SIGXCPU,
    ];
    let Ok(mut signals) = signal_hook::iterator::Signals::new(ending) else {
        signal_hook::low_level::unregister(xfsz);
        return None;
    };
    let handle = signals.handle();
    std::thread::spawn(move || {
        if let Some(sig) = signals.forever().next() {
            // Remove every temporary file still on disk; the lock is kept, so no new one
            // appears after.
            let held = lock(&live);
            for p in held.iter() {
                let _ = std::fs::remove_file(p);
            }
            // Ctrl-C says why by itself; another signal (from a CI runner's timeout, a stray
            // `kill`) would otherwise end the run with no word.
            if sig != SIGINT {
                let shown = if held.is_empty() {
                    ""
                } else {
                    "; the files being written were left as they were"
                };
                eprintln!("error: fix stopped by signal {sig}{shown}");
            }
            std::process::exit(128 + sig);
        }
    });
    Some((handle, xfsz))
}

/// Extended attributes (with the ACLs and security labels Linux keeps as attributes), copied from
/// the original to its replacement; an attribute that cannot be set stops the write.
#[cfg(target_os = "linux")]
mod attributes {
    use super::WriteError;
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::io::AsRawFd;
    use std::path::Path;

    /// A value read with the usual size-then-read protocol, retried if it grew in between.
    fn sized(call: impl Fn(&mut [u8]) -> libc::ssize_t) -> std::io::Result<Vec<u8>> {
        loop {
            let n = call(&mut []);
            if n < 0 {
                return Err(std::io::Error::last_os_error());
            }
            let mut buf = vec![0u8; n as usize];
            let m = call(&mut buf);
            if m >= 0 {
                buf.truncate(m as usize);
                return Ok(buf);
            }
            let e = std::io::Error::last_os_error();
            if e.raw_os_error() != Some(libc::ERANGE) {
                return Err(e);
            }
        }
    }

    pub fn copy(from: &Path, to: &std::fs::File) -> Result<(), WriteError> {
        let Ok(path) = CString::new(from.as_os_str().as_bytes()) else {
            return Ok(());
        };
        let names = match sized(|b| unsafe {
            // SAFETY: `path` is NUL-terminated and `b` is writable for its length.
            libc::listxattr(path.as_ptr(), b.as_mut_ptr().cast(), b.len())
        }) {
            Ok(n) => n,
            // A file system without attributes has none to keep.
            Err(e) if e.raw_os_error() == Some(libc::ENOTSUP) => return Ok(()),
            Err(e) => return Err(WriteError::Attribute("(list)".into(), e)),
        };
        let fd = to.as_raw_fd();
        for name in names.split(|&b| b == 0).filter(|n| !n.is_empty()) {
            let shown = String::from_utf8_lossy(name).into_owned();
            let Ok(cname) = CString::new(name) else {
                continue;
            };
            let value = sized(|b| unsafe {
                // SAFETY: both strings are NUL-terminated; `b` is writable for its length.
                libc::getxattr(
                    path.as_ptr(),
                    cname.as_ptr(),
                    b.as_mut_ptr().cast(),
                    b.len(),
                )
            });
            let value = match value {
                Ok(v) => v,
                // Removed since it was listed.
                Err(e) if e.raw_os_error() == Some(libc::ENODATA) => continue,
                Err(e) => return Err(WriteError::Attribute(shown, e)),
            };
            // SAFETY: `fd` is open; `cname` is NUL-terminated; `value` is readable for its length.
            let set = unsafe {
                libc::fsetxattr(fd, cname.as_ptr(), value.as_ptr().cast(), value.len(), 0)
            };
            if set != 0 {
                let e = std::io::Error::last_os_error();
                // Refused, yet already so (a label the new file got from its directory).
                let now = sized(|b| unsafe {
                    // SAFETY: as above.
                    libc::fgetxattr(fd, cname.as_ptr(), b.as_mut_ptr().cast(), b.len())
                });
                if now.is_ok_and(|v| v == value) {
                    continue;
                }
                return Err(WriteError::Attribute(shown, e));
            }
        }
        Ok(())
    }
}

#[cfg(not(target_os = "linux"))]
mod attributes {
    pub fn copy(_: &std::path::Path, _: &std::fs::File) -> Result<(), super::WriteError> {
        Ok(())
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Renames into one directory are made durable by one flush of it, when the run's writes
    /// are done, and not by one per file.
    #[test]
    fn a_directory_is_flushed_once_per_run_not_once_per_file() {
        let dir = tempfile::tempdir().unwrap();
        let writer = Writer::new();
        for name in ["a.yaml", "b.yaml", "c.yaml"] {
            let path = dir.path().join(name);
            std::fs::write(&path, "old\n").unwrap();
            writer.write(&path, b"old\n", "new\n").unwrap();
            assert_eq!(std::fs::read_to_string(&path).unwrap(), "new\n");
        }
        assert_eq!(
            lock(&writer.unflushed).iter().collect::<Vec<_>>(),
            vec![&dir.path().to_path_buf()]
        );
        writer.finish();
        assert!(lock(&writer.unflushed).is_empty());
    }

    /// The re-read before the rename tells a file from its text however they differ: in a later
    /// block, by a byte more or less at the end.
    #[test]
    fn a_file_holds_its_text_only_byte_for_byte() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.yaml");
        let text: Vec<u8> = (0..20_000u32).map(|i| b'a' + (i % 26) as u8).collect();
        std::fs::write(&path, &text).unwrap();
        assert!(holds(&path, &text).unwrap());
        assert!(!holds(&path, &text[..text.len() - 1]).unwrap());
        let mut longer = text.clone();
        longer.push(b'\n');
        assert!(!holds(&path, &longer).unwrap());
        let mut changed = text.clone();
        changed[17_000] = b'#';
        assert!(!holds(&path, &changed).unwrap());
        std::fs::write(&path, "").unwrap();
        assert!(holds(&path, b"").unwrap());
        assert!(!holds(&path, b"x").unwrap());
    }

    #[test]
    fn writes_wait_for_the_disk_on_more_threads_than_cores() {
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        assert!(Writer::threads() > cores);
    }
}
