//! What Kustomize does to a manifest before it reaches the cluster, as far as the rules need it.
//!
//! Patches are partial objects: a file that a `kustomization.yaml` lists under
//! `patchesStrategicMerge` or `patches[].path` holds only the fields it changes, and the rest
//! comes from the base. Rules that report something missing (no request, no GOMEMLIMIT) would be
//! wrong there; the fields the patch sets are still checked. A container the patch adds (one the
//! base object it patches does not have) is whole, though: the base is found through the
//! kustomization's `resources`, and such a container is checked like any other.
//!
//! `images:` renames the image a container runs (a kubebuilder project writes `image: controller`
//! and names the real image in `config/manager/kustomization.yaml`): the runtime decision reads
//! the image Kustomize renders, through every kustomization that includes the manifest, directly
//! or through the `resources` of one above it. The manifest itself, and the fixes to it, are not
//! changed.
//!
//! Only files are read, remote resources are skipped, and every walk is bounded.

use crate::walk::Listings;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

/// How many directories up a kustomization that lists a file is looked for: any repository's
/// depth (Kustomize loads a file only from its kustomization's directory or below it).
const MAX_UP: usize = 32;

/// How far above a kustomization the ones that include it (`resources: [../manager]`) are looked
/// for, and how deep below that directory: an overlay sits beside or near its base.
const INCLUDERS_UP: usize = 3;
const SCAN_DEPTH: usize = 6;
/// How many directories one such look lists at most.
const SCAN_DIRS: usize = 2048;

/// How many kustomizations one chain of inclusions, or one walk down `resources`, follows.
const MAX_CHAIN: usize = 8;
/// How many chains from a manifest to the kustomizations at their tops are followed.
const MAX_CHAINS: usize = 64;

/// Size caps: a kustomization is small; a resource file may be a whole platform's install.
const MAX_KUSTOMIZATION_BYTES: u64 = 1 << 20;
const MAX_RESOURCE_BYTES: u64 = 8 << 20;

const NAMES: [&str; 3] = ["kustomization.yaml", "kustomization.yml", "Kustomization"];

/// One directory's kustomization, as far as the linter reads it. Paths are lexical, from where
/// the manifest was named.
#[derive(Debug)]
struct Kustomization {
    file: PathBuf,
    dir: PathBuf,
    /// `resources` and `bases`: files and directories (remote ones left out).
    resources: Vec<PathBuf>,
    /// `components`: directories whose own `images` and resources join this kustomization's.
    components: Vec<PathBuf>,
    /// Patch files (`patchesStrategicMerge`, `patches[].path`).
    patches: Vec<PathBuf>,
    /// The files a build surely reads besides its resources: `patches[].path`, and the sources
    /// of its generators (`configMapGenerator` and `secretGenerator`: `files`, `envs`, `env`).
    reads: Vec<PathBuf>,
    /// The `images` rules that apply to what this kustomization renders, in the order Kustomize
    /// applies them: its components' first, then its own.
    images: Vec<ImageRule>,
    /// `kind: Component`: only ever part of another kustomization.
    component: bool,
    /// What it needs from beyond its files (a remote resource, a Helm chart to pull), named.
    fetches: Option<String>,
}

/// One entry of `images:`.
#[derive(Debug, Clone)]
struct ImageRule {
    name: String,
    new_name: Option<String>,
    new_tag: Option<String>,
    digest: Option<String>,
    /// The kustomization that says it.
    by: PathBuf,
}

/// An image Kustomize renders under another name than the manifest's.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Rename {
    /// The name the manifest writes (without its tag).
    pub from: String,
    /// The image as rendered.
    pub image: String,
    /// The kustomizations whose `images` changed it, innermost first.
    pub by: Vec<String>,
}

impl Rename {
    /// "image controller renamed by config/manager/kustomization.yaml to quay.io/acme/x:v1".
    pub fn describe(&self) -> String {
        format!(
            "image {} renamed by {} to {}",
            self.from,
            self.by.join(" and "),
            self.image
        )
    }
}

/// What deciding which kustomizations to render needs to know of one: what it includes, its
/// patches, and whether it can be built from local files alone.
#[derive(Debug, Clone)]
pub struct Outline {
    pub file: PathBuf,
    /// The directories and files of `resources`, `bases` and `components`, lexically from where
    /// the directory was named.
    pub includes: Vec<PathBuf>,
    /// Patch files (`patchesStrategicMerge`, `patches[].path`).
    pub patches: Vec<PathBuf>,
    /// The files a build surely reads besides its resources (`patches[].path`, generator
    /// sources).
    pub reads: Vec<PathBuf>,
    /// `kind: Component`: never built on its own.
    pub component: bool,
    /// What a build would fetch from beyond the tree (a remote resource, a Helm chart), if
    /// anything: such a kustomization is not built, so that a lint never reaches the network.
    pub fetches: Option<String>,
}

/// The kustomization of `dir`, when it has one that can be read.
pub fn outline(dir: &Path) -> Option<Outline> {
    let k = read_kustomization(&Listings::default(), dir)?;
    Some(Outline {
        file: k.file,
        includes: k.resources.into_iter().chain(k.components).collect(),
        patches: k.patches,
        reads: k.reads,
        component: k.component,
        fetches: k.fetches,
    })
}

/// The file names a kustomization goes by.
pub fn is_kustomization_file(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| NAMES.contains(&n))
}

/// Whether `dir` holds a kustomization file, whether or not it can be read (one too large for
/// [`outline`] is still one).
pub fn has_kustomization(dir: &Path) -> bool {
    NAMES.iter().any(|n| dir.join(n).is_file())
}

/// The containers a patched base object already has, by the object's kind and name.
#[derive(Debug)]
struct BaseObject {
    kind: String,
    name: String,
    containers: HashSet<String>,
}

/// A patch file and the base objects its kustomization patches.
#[derive(Debug)]
pub struct Patch {
    bases: Vec<BaseObject>,
}

impl Patch {
    /// Whether a container of the patch is partial: it patches one of the base object's
    /// containers, or the base was not found. A container the base object does not have is
    /// added whole.
    pub fn partial(&self, kind: &str, name: Option<&str>, container: Option<&str>) -> bool {
        let (Some(name), Some(container)) = (name, container) else {
            return true;
        };
        let base = self.bases.iter().find(|b| b.kind == kind && b.name == name);
        base.is_none_or(|b| b.containers.contains(container))
    }
}

/// The kustomizations a run has read. Owned by the run (see [`crate::project::Project`]); a
/// language server forgets it when a file changes.
#[derive(Default)]
pub struct Kustomizations {
    /// Each directory's kustomization, read once.
    dirs: Mutex<HashMap<PathBuf, Option<Arc<Kustomization>>>>,
    /// What [`Kustomizations::listed_above`] worked out per directory.
    above: Mutex<HashMap<PathBuf, Arc<[PathBuf]>>>,
    /// The directories with a kustomization under a directory (bounded), per directory.
    scans: Mutex<HashMap<PathBuf, Arc<[PathBuf]>>>,
    /// Whether each scanned directory has a kustomization, and its subdirectories: listed once
    /// however many scans pass through.
    subdirs: Mutex<HashMap<PathBuf, Listed>>,
    /// Per manifest, the chains of kustomizations that include it and rename images.
    chains: Mutex<HashMap<PathBuf, Arc<[Chain]>>>,
    /// Per patch file, what it patches (None: not a patch).
    patch_files: Mutex<HashMap<PathBuf, Option<Arc<Patch>>>>,
    /// Per kustomization directory, the objects its resources render (before patches).
    bases: Mutex<HashMap<PathBuf, Arc<[BaseObject]>>>,
    renames: Kept,
}

/// Whether a directory has a kustomization, and its subdirectories.
type Listed = (bool, Arc<[PathBuf]>);

/// Kustomizations from one that lists a manifest, innermost first, up to one nothing includes.
type Chain = Vec<Arc<Kustomization>>;

impl Kustomizations {
    /// Forget every kustomization read so far (one changed).
    pub fn forget(&mut self) {
        *self = Kustomizations::default();
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
            if let Some(k) = self.kustomization(listings, ancestor) {
                all.extend(k.patches.iter().cloned());
            }
        }
        let listed: Arc<[PathBuf]> = all.into();
        if let Ok(mut m) = self.above.lock() {
            m.insert(dir.to_path_buf(), listed.clone());
        }
        listed
    }

    /// The patch a manifest is, with the base objects it patches; None when no kustomization
    /// lists it as a patch.
    pub fn patch(&self, listings: &Listings, manifest: &Path) -> Option<Arc<Patch>> {
        if !self.is_patch(listings, manifest) {
            return None;
        }
        let manifest = crate::walk::lexical(manifest);
        if let Some(hit) = self
            .patch_files
            .lock()
            .ok()
            .and_then(|m| m.get(&manifest).cloned())
        {
            return hit;
        }
        let dir = manifest.parent().unwrap_or(Path::new(""));
        let mut bases = Vec::new();
        for ancestor in &crate::walk::ancestors(dir, MAX_UP) {
            let Some(k) = self.kustomization(listings, ancestor) else {
                continue;
            };
            if k.patches.contains(&manifest) {
                let objects = self.base_objects(listings, &k);
                bases.extend(objects.iter().map(|o| BaseObject {
                    kind: o.kind.clone(),
                    name: o.name.clone(),
                    containers: o.containers.clone(),
                }));
            }
        }
        let patch = Some(Arc::new(Patch { bases }));
        if let Ok(mut m) = self.patch_files.lock() {
            m.insert(manifest, patch.clone());
        }
        patch
    }

    /// The image Kustomize renders for `image` in `manifest`, when a kustomization that includes
    /// the manifest renames it. With several tops (two overlays of one base), the first by path
    /// that renames it.
    pub fn rename(&self, listings: &Listings, manifest: &Path, image: &str) -> Option<&Rename> {
        let chains = self.chains(listings, manifest);
        // Most manifests are in no kustomization that renames anything.
        if chains.is_empty() {
            return None;
        }
        let rename = chains.iter().find_map(|chain| render(chain, image))?;
        self.renames.keep(rename)
    }

    /// The chains of kustomizations that include a manifest, those with an `images` rule.
    fn chains(&self, listings: &Listings, manifest: &Path) -> Arc<[Chain]> {
        if let Some(hit) = self
            .chains
            .lock()
            .ok()
            .and_then(|m| m.get(manifest).cloned())
        {
            return hit;
        }
        let file = crate::walk::lexical(manifest);
        let dir = file.parent().unwrap_or(Path::new("")).to_path_buf();
        let mut chains = Vec::new();
        for ancestor in &crate::walk::ancestors(&dir, MAX_UP) {
            let Some(k) = self.kustomization(listings, ancestor) else {
                continue;
            };
            if k.resources.contains(&file) || k.patches.contains(&file) {
                self.extend(listings, vec![k], &mut chains);
            }
        }
        chains.retain(|c: &Chain| c.iter().any(|k| !k.images.is_empty()));
        // The first by the path of its top, whatever order the walk found them in.
        chains.sort_by(|a, b| {
            let top = |c: &Chain| c.last().map(|k| k.dir.clone());
            top(a).cmp(&top(b))
        });
        let chains: Arc<[Chain]> = chains.into();
        if let Ok(mut m) = self.chains.lock() {
            m.insert(manifest.to_path_buf(), chains.clone());
        }
        chains
    }

    /// Follow a chain up through the kustomizations that include its top.
    fn extend(&self, listings: &Listings, chain: Chain, out: &mut Vec<Chain>) {
        if out.len() >= MAX_CHAINS {
            return;
        }
        let top = chain.last().expect("a chain starts with one kustomization");
        let ups: Vec<Arc<Kustomization>> = if chain.len() >= MAX_CHAIN {
            Vec::new()
        } else {
            self.includers(listings, &top.dir)
                .into_iter()
                .filter(|up| !chain.iter().any(|k| k.dir == up.dir))
                .collect()
        };
        if ups.is_empty() {
            out.push(chain);
            return;
        }
        for up in ups {
            let mut longer = chain.clone();
            longer.push(up);
            self.extend(listings, longer, out);
        }
    }

    /// The kustomizations near `dir` that include it as a resource or a component.
    fn includers(&self, listings: &Listings, dir: &Path) -> Vec<Arc<Kustomization>> {
        // Not above the repository's root, nor above the directory the run was started in.
        let mut top = None;
        for a in crate::walk::ancestors(dir, INCLUDERS_UP + 1) {
            if a.ends_with("..") {
                break;
            }
            let root = listings.names(&a).contains(".git");
            top = Some(a);
            if root {
                break;
            }
        }
        let Some(top) = top else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for d in self.scan(&top).iter() {
            if d == dir {
                continue;
            }
            if let Some(k) = self.kustomization(listings, d) {
                if k.resources.iter().chain(&k.components).any(|r| r == dir) {
                    out.push(k);
                }
            }
        }
        out
    }

    /// The directories with a kustomization at and under `top`, bounded in depth and count.
    fn scan(&self, top: &Path) -> Arc<[PathBuf]> {
        if let Some(hit) = self.scans.lock().ok().and_then(|m| m.get(top).cloned()) {
            return hit;
        }
        let mut found = Vec::new();
        let mut level = vec![top.to_path_buf()];
        let mut listed = 0;
        for _ in 0..=SCAN_DEPTH {
            let mut next = Vec::new();
            for dir in level {
                listed += 1;
                if listed > SCAN_DIRS {
                    break;
                }
                let (kustomized, subdirs) = self.subdirs(&dir);
                if kustomized {
                    found.push(dir.clone());
                }
                next.extend(subdirs.iter().cloned());
            }
            if next.is_empty() || listed > SCAN_DIRS {
                break;
            }
            level = next;
        }
        let found: Arc<[PathBuf]> = found.into();
        if let Ok(mut m) = self.scans.lock() {
            m.insert(top.to_path_buf(), found.clone());
        }
        found
    }

    /// Whether a directory has a kustomization, and its subdirectories that may hold one, in
    /// path order: one listing.
    fn subdirs(&self, dir: &Path) -> Listed {
        if let Some(hit) = self.subdirs.lock().ok().and_then(|m| m.get(dir).cloned()) {
            return hit;
        }
        let mut kustomized = false;
        let mut subs = Vec::new();
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let name = e.file_name();
            let Some(name) = name.to_str() else { continue };
            if NAMES.contains(&name) {
                kustomized = true;
            } else if e.file_type().is_ok_and(|t| t.is_dir())
                && !name.starts_with('.')
                && name != "node_modules"
                && name != "vendor"
            {
                subs.push(dir.join(name));
            }
        }
        subs.sort();
        let found = (kustomized, Arc::from(subs));
        if let Ok(mut m) = self.subdirs.lock() {
            m.insert(dir.to_path_buf(), found.clone());
        }
        found
    }

    /// A directory's kustomization, read once per run.
    fn kustomization(&self, listings: &Listings, dir: &Path) -> Option<Arc<Kustomization>> {
        if let Some(hit) = self.dirs.lock().ok().and_then(|m| m.get(dir).cloned()) {
            return hit;
        }
        // Not under the lock: reading a file must not hold up the other threads.
        let mut read = read_kustomization(listings, dir);
        if let Some(k) = &mut read {
            // A component's `images` apply to what includes it, before the includer's own.
            let mut rules = Vec::new();
            for c in &k.components {
                if c != dir {
                    if let Some(component) = read_kustomization(listings, c) {
                        rules.extend(component.images);
                    }
                }
            }
            rules.append(&mut k.images);
            k.images = rules;
        }
        let read = read.map(Arc::new);
        if let Ok(mut m) = self.dirs.lock() {
            m.insert(dir.to_path_buf(), read.clone());
        }
        read
    }

    /// The objects with a pod spec that a kustomization's resources and components render,
    /// followed down through directories with their own kustomization.
    fn base_objects(&self, listings: &Listings, k: &Kustomization) -> Arc<[BaseObject]> {
        if let Some(hit) = self.bases.lock().ok().and_then(|m| m.get(&k.dir).cloned()) {
            return hit;
        }
        let mut out = Vec::new();
        let mut seen = HashSet::new();
        self.collect_objects(listings, k, 0, &mut seen, &mut out);
        let out: Arc<[BaseObject]> = out.into();
        if let Ok(mut m) = self.bases.lock() {
            m.insert(k.dir.clone(), out.clone());
        }
        out
    }

    fn collect_objects(
        &self,
        listings: &Listings,
        k: &Kustomization,
        depth: usize,
        seen: &mut HashSet<PathBuf>,
        out: &mut Vec<BaseObject>,
    ) {
        if depth >= MAX_CHAIN || !seen.insert(k.dir.clone()) {
            return;
        }
        for r in k.resources.iter().chain(&k.components) {
            match self.kustomization(listings, r) {
                Some(inner) => self.collect_objects(listings, &inner, depth + 1, seen, out),
                None => objects_in(r, out),
            }
        }
    }
}

/// The objects with a pod spec in a resource file, with their containers' names.
fn objects_in(path: &Path, out: &mut Vec<BaseObject>) {
    let Some(text) = read_capped(path, MAX_RESOURCE_BYTES) else {
        return;
    };
    let y = crate::yaml::parse(&text, 0);
    for root in y.docs.iter().filter_map(|d| d.root) {
        for obj in super::objects(&y, root) {
            let (Some(name), Some(spec)) = (obj.name, super::pod_spec(&y, &obj, &[])) else {
                continue;
            };
            let pod = super::container::Pod::read(&y, spec);
            out.push(BaseObject {
                kind: obj.kind.to_string(),
                name: name.to_string(),
                containers: pod
                    .containers
                    .iter()
                    .filter_map(|c| c.name.map(str::to_string))
                    .collect(),
            });
        }
    }
}

/// A file's text, when it is a file no larger than `cap`.
fn read_capped(path: &Path, cap: u64) -> Option<String> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() || meta.len() > cap {
        return None;
    }
    std::fs::read_to_string(path).ok()
}

/// A path a kustomization names that is on another host (`github.com/x/y//dir?ref=v1`,
/// `https://…`): never read.
fn is_remote(p: &str) -> bool {
    p.contains("://")
        || p.contains("?ref=")
        || p.starts_with("git@")
        || p.starts_with("github.com/")
}

/// A directory's kustomization, parsed.
fn read_kustomization(listings: &Listings, dir: &Path) -> Option<Kustomization> {
    let listed = listings.names(dir);
    let (file, text) = NAMES
        .iter()
        .filter(|n| listed.contains(**n))
        .find_map(|n| {
            let file = dir.join(n);
            read_capped(&file, MAX_KUSTOMIZATION_BYTES).map(|t| (file, t))
        })?;
    let y = crate::yaml::parse(&text, 0);
    let mut k = Kustomization {
        file: crate::walk::lexical(&file),
        dir: crate::walk::lexical(dir),
        resources: Vec::new(),
        components: Vec::new(),
        patches: Vec::new(),
        reads: Vec::new(),
        images: Vec::new(),
        component: false,
        fetches: None,
    };
    let path = |p: &str| crate::walk::lexical(&dir.join(p.trim()));
    for doc in &y.docs {
        let Some(root) = doc.root.filter(|r| y.is_mapping(*r)) else {
            continue;
        };
        let strings = |key: &str| -> Vec<&str> {
            y.get(root, key)
                .map_or(&[][..], |l| y.items(l))
                .iter()
                .filter_map(|&i| y.str(i))
                .collect()
        };
        k.component |= y.get_str(root, "kind") == Some("Component");
        if y.get(root, "helmCharts").is_some() {
            k.fetches
                .get_or_insert_with(|| "Helm charts (helmCharts)".to_string());
        }
        for r in strings("resources").into_iter().chain(strings("bases")) {
            if is_remote(r) {
                k.fetches
                    .get_or_insert_with(|| format!("the remote resource {}", r.trim()));
            } else if !r.trim().is_empty() {
                k.resources.push(path(r));
            }
        }
        for r in strings("components") {
            if is_remote(r) {
                k.fetches
                    .get_or_insert_with(|| format!("the remote component {}", r.trim()));
            } else if !r.trim().is_empty() {
                k.components.push(path(r));
            }
        }
        // An inline patch is YAML text, not a path.
        let mut add = |p: &str| {
            if !p.contains('\n') {
                k.patches.push(path(p));
            }
        };
        for p in strings("patchesStrategicMerge") {
            add(p);
        }
        if let Some(list) = y.get(root, "patches") {
            for &item in y.items(list) {
                if let Some(p) = y.get_str(item, "path") {
                    add(p);
                    if !p.contains('\n') {
                        k.reads.push(path(p));
                    }
                }
            }
        }
        // `files: [key=path]` names a key and a file; `env` is the one-file form of `envs`.
        for generator in ["configMapGenerator", "secretGenerator"] {
            for &item in y.get(root, generator).map_or(&[][..], |l| y.items(l)) {
                let listed = |key: &str| y.get(item, key).map_or(&[][..], |l| y.items(l));
                let sources = listed("files")
                    .iter()
                    .filter_map(|&f| y.str(f))
                    .map(|f| f.split_once('=').map_or(f, |(_, path)| path))
                    .chain(listed("envs").iter().filter_map(|&f| y.str(f)))
                    .chain(y.get_str(item, "env"));
                for f in sources.filter(|f| !f.trim().is_empty() && !is_remote(f)) {
                    k.reads.push(path(f));
                }
            }
        }
        if let Some(list) = y.get(root, "images") {
            for &item in y.items(list) {
                let field = |key: &str| {
                    y.get_str(item, key)
                        .map(str::trim)
                        .filter(|v| !v.is_empty())
                        .map(str::to_string)
                };
                let Some(name) = field("name") else { continue };
                k.images.push(ImageRule {
                    name,
                    new_name: field("newName"),
                    new_tag: field("newTag"),
                    digest: field("digest"),
                    by: k.file.clone(),
                });
            }
        }
    }
    Some(k)
}

/// The image a chain of kustomizations renders for `image`, when it differs.
fn render(chain: &Chain, image: &str) -> Option<Rename> {
    let mut now = image.to_string();
    let mut by: Vec<String> = Vec::new();
    for rule in chain.iter().flat_map(|k| &k.images) {
        if !matches(&now, &rule.name) {
            continue;
        }
        let next = apply(&now, rule);
        if next != now {
            let file = rule.by.to_string_lossy().into_owned();
            if !by.contains(&file) {
                by.push(file);
            }
            now = next;
        }
    }
    (now != image).then(|| Rename {
        from: split(image).0.to_string(),
        image: now,
        by,
    })
}

/// Whether an `images` entry's `name` names this image: the image is the name, with a tag or a
/// digest or neither (Kustomize's `^name(@sha256)?(:[a-zA-Z0-9_.{}-]*)?$`).
fn matches(image: &str, name: &str) -> bool {
    let Some(rest) = image.strip_prefix(name) else {
        return false;
    };
    let rest = rest.strip_prefix("@sha256").unwrap_or(rest);
    match rest.strip_prefix(':') {
        Some(tag) => tag
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_.{}-".contains(&b)),
        None => rest.is_empty(),
    }
}

/// Name, tag and digest of an image, split as Kustomize splits them: a registry's port before
/// the first `/` is no tag.
fn split(image: &str) -> (&str, &str, &str) {
    let from = image.find('/').filter(|&i| i > 0).unwrap_or(0);
    let search = &image[from..];
    let at = search.find('@').map(|i| i + from);
    let colon = search.find(':').map(|i| i + from);
    match (colon, at) {
        (None, None) => (image, "", ""),
        (c, Some(d)) if c.is_none_or(|c| d < c) => (&image[..d], "", &image[d + 1..]),
        (Some(c), Some(d)) => (&image[..c], &image[c + 1..d], &image[d + 1..]),
        (Some(c), None) => (&image[..c], &image[c + 1..], ""),
        (None, Some(_)) => unreachable!("a digest alone is the arm above"),
    }
}

/// What one `images` entry makes of an image it names: a new tag or digest replaces both the
/// tag and the digest written.
fn apply(image: &str, rule: &ImageRule) -> String {
    let (name, tag, digest) = split(image);
    let name = rule.new_name.as_deref().unwrap_or(name);
    let (tag, digest) = match (rule.new_tag.as_deref(), rule.digest.as_deref()) {
        (Some(t), Some(d)) => (t, d),
        (Some(t), None) => (t, ""),
        (None, Some(d)) => ("", d),
        (None, None) => (tag, digest),
    };
    let mut out = name.to_string();
    if !tag.is_empty() {
        out.push(':');
        out.push_str(tag);
    }
    if !digest.is_empty() {
        out.push('@');
        out.push_str(digest);
    }
    out
}

/// How many renames one run keeps: far more than the kustomizations of any repository name.
const KEPT_CHUNKS: usize = 64;
const KEPT_CHUNK: usize = 256;

/// Slots for renames, filled once each.
type Chunk = Box<[OnceLock<Rename>]>;

/// The renames a run found, each kept once in place for the rest of the run, so that a
/// container's runtime view borrows one as it borrows the rest of the run's project. Chunks are
/// allocated as they fill and never move.
struct Kept {
    chunks: Box<[OnceLock<Chunk>]>,
    index: Mutex<(HashMap<Rename, usize>, usize)>,
}

impl Default for Kept {
    fn default() -> Kept {
        Kept {
            chunks: (0..KEPT_CHUNKS).map(|_| OnceLock::new()).collect(),
            index: Mutex::default(),
        }
    }
}

impl Kept {
    /// The kept copy of a rename (None only past the capacity: the image is then read as
    /// written).
    fn keep(&self, rename: Rename) -> Option<&Rename> {
        let slot = {
            let mut index = self.index.lock().ok()?;
            match index.0.get(&rename) {
                Some(&slot) => slot,
                None => {
                    let slot = index.1;
                    if slot >= KEPT_CHUNKS * KEPT_CHUNK {
                        return None;
                    }
                    let chunk = self.chunks[slot / KEPT_CHUNK]
                        .get_or_init(|| (0..KEPT_CHUNK).map(|_| OnceLock::new()).collect());
                    // Only this thread, under the index's lock, fills this slot.
                    let _ = chunk[slot % KEPT_CHUNK].set(rename.clone());
                    index.0.insert(rename, slot);
                    index.1 += 1;
                    slot
                }
            }
        };
        self.chunks[slot / KEPT_CHUNK].get()?[slot % KEPT_CHUNK].get()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let p = dir.path().join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        dir
    }

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
        let (k, listings) = (Kustomizations::default(), Listings::default());
        let is_patch = |p: &Path| k.is_patch(&listings, p);
        assert!(is_patch(&r.join("overlay/memory.yaml")));
        assert!(is_patch(&r.join("overlay/patches/cpu.yaml")));
        assert!(!is_patch(&r.join("overlay/service.yaml")));
        assert!(!is_patch(&r.join("overlay/missing.yaml")));
    }

    #[test]
    fn images_render_as_kustomize_renders_them() {
        let rule = |name: &str, new_name: Option<&str>, tag: Option<&str>, digest: Option<&str>| {
            ImageRule {
                name: name.into(),
                new_name: new_name.map(Into::into),
                new_tag: tag.map(Into::into),
                digest: digest.map(Into::into),
                by: PathBuf::new(),
            }
        };
        let r = rule("controller", Some("quay.io/acme/foo"), Some("v1.2.0"), None);
        assert!(matches("controller:latest", "controller"));
        assert!(matches("controller", "controller"));
        assert!(matches("controller@sha256:ab", "controller"));
        assert!(!matches("controller-x:latest", "controller"));
        assert!(!matches("my/controller:latest", "controller"));
        assert_eq!(apply("controller:latest", &r), "quay.io/acme/foo:v1.2.0");
        let d = rule("x", None, None, Some("sha256:ab"));
        assert_eq!(apply("reg:5000/x:1", &d), "reg:5000/x@sha256:ab");
        let both = rule("x", None, Some("v2"), Some("sha256:ab"));
        assert_eq!(apply("x@sha256:00", &both), "x:v2@sha256:ab");
        assert_eq!(
            split("reg:5000/a/b:1@sha256:c"),
            ("reg:5000/a/b", "1", "sha256:c")
        );
    }

    #[test]
    fn an_image_is_renamed_by_a_kustomization_that_includes_its_manifest_from_beside_it() {
        let dir = tree(&[
            // The repository's root: what includes a kustomization is not looked for above it.
            (".git/HEAD", "ref: refs/heads/main\n"),
            ("config/manager/manager.yaml", "kind: Deployment\n"),
            ("config/manager/kustomization.yaml", "resources:\n- manager.yaml\n"),
            (
                "config/default/kustomization.yaml",
                "resources:\n- ../manager\nimages:\n- name: controller\n  newName: quay.io/acme/foo-manager\n  newTag: v1.2.0\n",
            ),
            ("config/other/kustomization.yaml", "resources:\n- ../manager\n"),
            ("config/manager/unlisted.yaml", "kind: Deployment\n"),
        ]);
        let (k, listings) = (Kustomizations::default(), Listings::default());
        let m = dir.path().join("config/manager/manager.yaml");
        let r = k.rename(&listings, &m, "controller:latest").unwrap();
        assert_eq!(r.image, "quay.io/acme/foo-manager:v1.2.0");
        assert_eq!(r.from, "controller");
        assert!(
            r.by[0].ends_with("config/default/kustomization.yaml"),
            "{:?}",
            r.by
        );
        assert!(k.rename(&listings, &m, "other:1").is_none());
        let unlisted = dir.path().join("config/manager/unlisted.yaml");
        assert!(k
            .rename(&listings, &unlisted, "controller:latest")
            .is_none());
    }
}
