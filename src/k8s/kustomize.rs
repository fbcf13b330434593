//! Kustomize patches are partial objects: a file that a `kustomization.yaml` lists under
//! `patchesStrategicMerge` or `patches[].path` holds only the fields it changes, and the rest
//! comes from the base. Rules that report something missing (no request, no GOMEMLIMIT) would be
//! wrong there; the fields the patch sets are still checked.

use crate::walk::Listings;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// How many directories up a kustomization is looked for: any repository's depth.
const MAX_UP: usize = 32;

const NAMES: [&str; 3] = ["kustomization.yaml", "kustomization.yml", "Kustomization"];

/// The kustomizations a run has read. Owned by the run (see [`crate::project::Project`]); a
/// language server forgets it when a kustomization changes.
#[derive(Default)]
pub struct Patches {
    /// The patch files each kustomization directory lists (canonical paths), read once per
    /// directory.
    listed: Mutex<HashMap<PathBuf, Arc<[PathBuf]>>>,
    /// What [`Patches::listed_above`] worked out per directory.
    above: Mutex<HashMap<PathBuf, Arc<[PathBuf]>>>,
}

impl Patches {
    /// Forget every kustomization read so far (one changed).
    pub fn forget(&mut self) {
        *self = Patches::default();
    }

    /// Whether a kustomization in the manifest's directory or one of its parents lists it as a
    /// patch.
    pub fn is_patch(&self, listings: &Listings, manifest: &Path) -> bool {
        let Some(dir) = manifest.parent() else {
            return false;
        };
        let listed = self.listed_above(listings, dir);
        // Most trees have no patches: nothing to compare.
        !listed.is_empty() && listed.contains(&crate::walk::lexical(manifest))
    }

    /// Every patch the kustomizations at or above a directory list: worked out once per
    /// directory.
    pub fn listed_above(&self, listings: &Listings, dir: &Path) -> Arc<[PathBuf]> {
        if let Some(hit) = self.above.lock().ok().and_then(|m| m.get(dir).cloned()) {
            return hit;
        }
        let mut all = Vec::new();
        for ancestor in &crate::walk::ancestors(dir, MAX_UP) {
            let ancestor = ancestor.as_path();
            // Not under the lock: reading a directory must not hold up the other threads.
            let cached = self
                .listed
                .lock()
                .ok()
                .and_then(|c| c.get(ancestor).cloned());
            let patches = cached.unwrap_or_else(|| {
                let found: Arc<[PathBuf]> = patches_of(listings, ancestor).into();
                if let Ok(mut c) = self.listed.lock() {
                    c.insert(ancestor.to_path_buf(), found.clone());
                }
                found
            });
            all.extend(patches.iter().cloned());
        }
        let listed: Arc<[PathBuf]> = all.into();
        if let Ok(mut m) = self.above.lock() {
            m.insert(dir.to_path_buf(), listed.clone());
        }
        listed
    }
}

/// The patch files a directory's kustomization lists.
fn patches_of(listings: &Listings, dir: &Path) -> Vec<PathBuf> {
    let listed = listings.names(dir);
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
        let (patches, listings) = (Patches::default(), Listings::default());
        let is_patch = |p: &Path| patches.is_patch(&listings, p);
        assert!(is_patch(&r.join("overlay/memory.yaml")));
        assert!(is_patch(&r.join("overlay/patches/cpu.yaml")));
        assert!(!is_patch(&r.join("overlay/service.yaml")));
        assert!(!is_patch(&r.join("overlay/missing.yaml")));
    }
}
