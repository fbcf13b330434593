//! What a run knows beyond the file it lints: the project files around it (directory listings,
//! Dockerfiles, skaffold and Cloud Build files, go.mod, kustomizations), what reading images
//! found, and the objects of the run's other files that act across files. These are inputs to the
//! rules as much as the file is, so they travel as one value that the caller owns and passes to
//! the linter: a CLI run makes one and drops it at the end, the language server keeps one for its
//! session and forgets the project files when the editor reports that one changed. Nothing of it
//! is process-wide, so two runs in one process (tests on parallel threads, a server linting
//! after an edit) never see each other's reads.

use crate::image::Inspected;
use crate::k8s::index::Index;
use crate::k8s::kustomize::{Kustomizations, Patch};
use crate::runtime::build::Builds;
use crate::runtime::gomod::Modules;
use crate::walk::Listings;
use std::path::Path;

/// One run's knowledge of the project around its files. Its caches fill as the files are linted
/// (on any thread); they are emptied only through `&mut`, between lints.
#[derive(Default)]
pub struct Project {
    /// The LimitRanges and VPAs of the run's files, which apply across files.
    pub index: Index,
    /// What `--inspect-images` (or, in the editor, the image cache) found, by image reference.
    pub images: Inspected,
    listings: Listings,
    builds: Builds,
    modules: Modules,
    kustomizations: Kustomizations,
}

impl Project {
    /// Forget every project file read so far: one was created, changed or removed. The index
    /// and the images stay (they come from the linted files and the registries, not from files
    /// around them).
    pub fn forget_files(&mut self) {
        self.listings.forget();
        self.builds.forget();
        self.modules.forget();
        self.kustomizations.forget();
    }

    /// Read the build definitions and kustomizations at and above `dir`, ahead of the files
    /// there that will ask.
    pub fn read_around(&self, dir: &Path) {
        self.builds.read_above(&self.listings, dir);
        self.kustomizations.listed_above(&self.listings, dir);
    }

    /// Whether a kustomization at or above the manifest lists it as a patch (a partial object).
    pub fn is_patch(&self, manifest: &Path) -> bool {
        self.kustomizations.is_patch(&self.listings, manifest)
    }

    /// The patch a manifest is, with what it patches: a container it adds to the base object is
    /// whole ([`Patch::partial`]). None when it is no patch.
    pub fn patch(&self, manifest: &Path) -> Option<std::sync::Arc<Patch>> {
        self.kustomizations.patch(&self.listings, manifest)
    }

    /// What the runtime decision of a container in `manifest` (a file, when it is one) may read
    /// beyond the manifest.
    pub fn around<'p>(&'p self, manifest: Option<&'p Path>) -> crate::runtime::Around<'p> {
        crate::runtime::Around {
            manifest,
            listings: &self.listings,
            builds: &self.builds,
            modules: &self.modules,
            images: &self.images,
            kustomizations: &self.kustomizations,
        }
    }
}

#[cfg(test)]
mod tests {
    /// Every Rust source of the library, with its path.
    fn sources() -> Vec<(std::path::PathBuf, String)> {
        fn walk(dir: &std::path::Path, out: &mut Vec<(std::path::PathBuf, String)>) {
            for e in std::fs::read_dir(dir).unwrap().flatten() {
                let path = e.path();
                if path.is_dir() {
                    walk(&path, out);
                } else if path.extension().is_some_and(|x| x == "rs") {
                    let text = std::fs::read_to_string(&path).unwrap();
                    out.push((path, text));
                }
            }
        }
        let mut out = Vec::new();
        walk(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
            &mut out,
        );
        assert!(out.len() > 20, "the library's sources were not found");
        out
    }

    /// What a run knows lives in the value its caller owns: no static holds something that
    /// changes (a lock, an atomic, a cell), no thread keeps its own copy, and nothing is leaked to
    /// live as long as the process. Immutable tables (the catalog, word lists) may be static.
    #[test]
    fn no_process_wide_mutable_state_and_no_leaks() {
        // Spelled in pieces, so that this file does not find itself.
        let leak = ["Box::", "leak("].concat();
        let per_thread = ["thread_", "local!"].concat();
        let changing = ["Mutex", "RwLock", "Atomic", "Cell<", "OnceCell"];
        let mut found = Vec::new();
        for (path, text) in sources() {
            for (i, line) in text.lines().enumerate() {
                let at = format!("{}:{}", path.display(), i + 1);
                if line.contains(&leak) || line.contains(&per_thread) {
                    found.push(format!("{at}: {}", line.trim()));
                }
                let code = line.trim_start();
                let declared = code
                    .strip_prefix("pub ")
                    .or(code.strip_prefix("pub(crate) "))
                    .unwrap_or(code);
                let Some(rest) = declared.strip_prefix("static ") else {
                    continue;
                };
                // The declared type runs to the `=`, over as many lines as it takes.
                let start = text.lines().take(i).map(|l| l.len() + 1).sum::<usize>()
                    + (line.len() - line.trim_start().len())
                    + (code.len() - rest.len());
                let ty = &text[start..];
                let ty = &ty[..ty.find('=').unwrap_or(ty.len())];
                if changing.iter().any(|c| ty.contains(c)) {
                    found.push(format!("{at}: static {}", ty.trim()));
                }
            }
        }
        assert!(
            found.is_empty(),
            "process-wide state:\n{}",
            found.join("\n")
        );
    }
}
