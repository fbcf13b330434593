//! Kustomize patches are partial objects: a file that a `kustomization.yaml` lists under
//! `patchesStrategicMerge` or `patches[].path` holds only the fields it changes, and the rest
//! comes from the base. Rules that report something missing (no request, no GOMEMLIMIT) would be
//! wrong there; the fields the patch sets are still checked.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{LazyLock, Mutex};

/// How many directories up a kustomization is looked for: any repository's depth.
const MAX_UP: usize = 32;

const NAMES: [&str; 3] = ["kustomization.yaml", "kustomization.yml", "Kustomization"];

/// The patch files each kustomization directory lists (canonical paths), read once per directory.
static PATCHES: LazyLock<Mutex<HashMap<PathBuf, Vec<PathBuf>>>> = LazyLock::new(Default::default);

/// What [`listed_above`] worked out per directory.
static ABOVE: LazyLock<Mutex<HashMap<PathBuf, &'static [PathBuf]>>> =
    LazyLock::new(Default::default);

/// Bumped by [`forget`], so that each thread's remembered directory is dropped too.
static GENERATION: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Forget every kustomization read so far (a long-running language server was told one
/// changed). What was handed out stays valid; it is only no longer given.
pub fn forget() {
    GENERATION.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    if let Ok(mut m) = ABOVE.lock() {
        m.clear();
    }
    if let Ok(mut c) = PATCHES.lock() {
        c.clear();
    }
}

/// Whether a kustomization in the manifest's directory or one of its parents lists it as a patch.
pub fn is_patch(manifest: &Path) -> bool {
    let Some(dir) = manifest.parent() else {
        return false;
    };
    let listed = listed_above(dir);
    // Most trees have no patches: nothing to compare.
    !listed.is_empty() && listed.contains(&crate::walk::lexical(manifest))
}

/// Every patch the kustomizations at or above a directory list: worked out once per directory
/// (and remembered per thread for the next file, which is usually in the same one).
pub fn listed_above(dir: &Path) -> &'static [PathBuf] {
    thread_local! {
        static LAST: std::cell::RefCell<Option<(u64, PathBuf, &'static [PathBuf])>> =
            const { std::cell::RefCell::new(None) };
    }
    let generation = GENERATION.load(std::sync::atomic::Ordering::SeqCst);
    let last = LAST.with_borrow(|l| {
        l.as_ref()
            .filter(|(g, d, _)| *g == generation && d.as_os_str() == dir.as_os_str())
            .map(|(_, _, listed)| *listed)
    });
    if let Some(listed) = last {
        return listed;
    }
    let cached = ABOVE.lock().ok().and_then(|m| m.get(dir).copied());
    let listed = cached.unwrap_or_else(|| {
        let mut all = Vec::new();
        for ancestor in &crate::walk::ancestors(dir, MAX_UP) {
            let ancestor = ancestor.as_path();
            // Not under the lock: reading a directory must not hold up the other threads.
            let cached = PATCHES.lock().ok().and_then(|c| c.get(ancestor).cloned());
            let patches = cached.unwrap_or_else(|| {
                let found = patches_of(ancestor);
                if let Ok(mut c) = PATCHES.lock() {
                    c.insert(ancestor.to_path_buf(), found.clone());
                }
                found
            });
            all.extend(patches);
        }
        let listed: &'static [PathBuf] = Box::leak(all.into_boxed_slice());
        if let Ok(mut m) = ABOVE.lock() {
            m.insert(dir.to_path_buf(), listed);
        }
        listed
    });
    LAST.set(Some((generation, dir.to_path_buf(), listed)));
    listed
}

/// The patch files a directory's kustomization lists.
fn patches_of(dir: &Path) -> Vec<PathBuf> {
    let listed = crate::walk::names(dir);
    let Some(text) = NAMES
        .iter()
        .filter(|n| listed.contains(**n))
        .find_map(|n| std::fs::read_to_string(dir.join(n)).ok())
    else {
        return Vec::new();
    };
    let y = crate::yaml::parse(&text, 0);
    let mut out = Vec::new();
    for doc in &y.docs {
        let Some(root) = doc.root.filter(|r| y.is_mapping(*r)) else {
            continue;
        };
        let mut add = |p: &str| {
            // An inline patch is YAML text, not a path.
            if !p.contains('\n') {
                out.push(crate::walk::lexical(&dir.join(p.trim())));
            }
        };
        if let Some(list) = y.get(root, "patchesStrategicMerge") {
            for &item in y.items(list) {
                if let Some(p) = y.str(item) {
                    add(p);
                }
            }
        }
        if let Some(list) = y.get(root, "patches") {
            for &item in y.items(list) {
                if let Some(p) = y.get_str(item, "path") {
                    add(p);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patches_are_found_from_their_kustomization() {
        let root = tempfile::tempdir().unwrap();
        let r = root.path();
        std::fs::create_dir_all(r.join("overlay/patches")).unwrap();
        std::fs::write(
            r.join("overlay/kustomization.yaml"),
            "resources: [../base]\npatchesStrategicMerge:\n  - memory.yaml\npatches:\n  - path: patches/cpu.yaml\n  - patch: |-\n      - op: remove\n",
        )
        .unwrap();
        for f in ["memory.yaml", "patches/cpu.yaml", "service.yaml"] {
            std::fs::write(r.join("overlay").join(f), "kind: Deployment\n").unwrap();
        }
        assert!(is_patch(&r.join("overlay/memory.yaml")));
        assert!(is_patch(&r.join("overlay/patches/cpu.yaml")));
        assert!(!is_patch(&r.join("overlay/service.yaml")));
        assert!(!is_patch(&r.join("overlay/missing.yaml")));
    }
}
