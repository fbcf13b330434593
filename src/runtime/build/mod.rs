//! The Dockerfile behind an image built from the same repository. Sample applications and
//! monorepos keep each service's Dockerfile beside its source, and say which image it builds in a
//! `skaffold.yaml` (`build.artifacts[].image`, `context`, `docker.dockerfile`) or by naming the
//! directory after the image (`src/cartservice/Dockerfile` for the image `…/cartservice:v1`).
//! Its final stage shows the runtime: the base image (`python:3.12-slim`, `eclipse-temurin:21-jre`),
//! the program its ENTRYPOINT or CMD runs, or a Go build (`FROM golang`, `RUN go build`) copied
//! into a bare final image.
//!
//! A Cloud Build config (`cloudbuild.yaml`) beside a Dockerfile names the images it pushes; so do
//! compose files, GitHub Actions workflows and Makefiles ([`links`]) for the context they build
//! each image from, and a `Dockerfile.<name>` for the image `<name>`. A Dockerfile in the
//! manifest's own directory is taken to build what that manifest deploys when nothing else
//! matched.
//!
//! Without a Dockerfile, the build definition still names the language: a skaffold artifact built
//! by Jib (Java) or ko (Go), or a service directory that is a Maven, Gradle, npm, Python, Cargo,
//! Bundler, Composer or Go project. Skaffold files that `requires` others are followed, as
//! skaffold does, so a root `skaffold.yaml` reaches each service's own.
//!
//! Only files are read. What is not found says nothing.

mod links;

use crate::walk::Listings;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};

/// What a Dockerfile says about the runtime of the image it builds.
#[derive(Debug, PartialEq, Eq)]
pub struct BuildFacts {
    /// The build definition (a Dockerfile, `skaffold.yaml` or project file), as a path from where
    /// the manifest was named.
    pub file: String,
    pub language: &'static str,
    /// Why, in a few words: "its final stage is FROM python:3.12-slim".
    pub why: String,
    /// For a Go build, the module and main package in the Dockerfile's directory.
    pub main: Option<Arc<super::gomod::MainPackage>>,
}

/// Directories, under a manifest's directory or its parents, where a service named like the
/// image keeps its Dockerfile.
const SERVICE_DIRS: &[&str] = &["", "src", "services", "apps", "cmd", "docker", "build"];

/// How far up from the manifest a build definition is looked for.
const MAX_UP: usize = 4;

/// What one directory offers: the images its build files declare (skaffold artifacts, compose
/// services, CI workflow steps and Makefile recipes: the image, and how it is built) and the
/// service directories under it with a Dockerfile or a project file, by name.
#[derive(Default)]
struct DirIndex {
    artifacts: Vec<(String, Built)>,
    services: HashMap<String, PathBuf>,
    /// The directory's own Go module (a Go project that keeps its deployment manifests beside
    /// its code): its path without a major-version suffix, and what building it shows.
    module: Option<(String, Arc<BuildFacts>)>,
    /// The directory's own Dockerfile.
    dockerfile: Option<PathBuf>,
    /// Dockerfiles named after the image they build (`Dockerfile.api`), by that name: below a
    /// service directory or module of the same name, which also show the Go version.
    named_dockerfiles: Vec<(String, PathBuf)>,
    /// Whether the directory is a repository's root (has `.git`): the build of what a manifest
    /// deploys is not looked for above it.
    repository_root: bool,
}

/// How a skaffold artifact is built.
#[derive(Clone)]
enum Built {
    Dockerfile(PathBuf),
    /// A builder that implies the language (`jib`: Java, `ko`: Go), named in this skaffold file.
    Builder {
        skaffold: PathBuf,
        builder: &'static str,
        language: &'static str,
    },
    /// A compose file, CI workflow or Makefile (`by`) that builds the image from a context
    /// directory, with the Dockerfile it names.
    Context {
        by: PathBuf,
        context: PathBuf,
        dockerfile: Option<PathBuf>,
    },
}

/// Project files that make a directory a project of one language, in the order they are tried.
const PROJECT_FILES: &[(&str, &str, &str)] = &[
    ("go.mod", "go", "a Go module"),
    ("main.go", "go", "a Go main package"),
    ("pom.xml", "java", "a Maven project"),
    ("build.gradle", "java", "a Gradle project"),
    ("build.gradle.kts", "java", "a Gradle project"),
    ("Cargo.toml", "rust", "a Cargo project"),
    ("package.json", "node", "an npm package"),
    ("pyproject.toml", "python", "a Python project"),
    ("requirements.txt", "python", "a Python project"),
    ("setup.py", "python", "a Python project"),
    ("Gemfile", "ruby", "a Ruby (Bundler) project"),
    ("composer.json", "php", "a PHP (Composer) project"),
    ("mix.exs", "elixir", "an Elixir (Mix) project"),
];

/// The build definitions a run has read. Directories are listed once each, and each Dockerfile
/// is read once: a run over thousands of manifests in one tree asks the file system a few dozen
/// times. Owned by the run (see [`crate::project::Project`]); a language server forgets it when
/// a build file changes.
#[derive(Default)]
pub struct Builds {
    dirs: Mutex<foldhash::HashMap<PathBuf, Arc<DirIndex>>>,
    files: Mutex<foldhash::HashMap<PathBuf, Option<Arc<BuildFacts>>>>,
    /// Every container of every manifest in a directory asks: read far more often than written.
    above: RwLock<foldhash::HashMap<PathBuf, Arc<Above>>>,
}

impl Builds {
    /// Forget every directory index and build file read so far (one changed).
    pub fn forget(&mut self) {
        *self = Builds::default();
    }

    /// The build facts of `image` for a manifest at `manifest`.
    pub fn facts(
        &self,
        listings: &Listings,
        manifest: &Path,
        image: &super::catalog::ImageRef,
    ) -> Option<Arc<BuildFacts>> {
        if image.image.starts_with("ko://") {
            return None;
        }
        let above = self.indexes_above(listings, manifest.parent()?);
        // Most manifests have no build in sight: nothing to match the image against.
        if above.builds.is_empty()
            && above
                .own
                .as_ref()
                .is_none_or(|own| own.dockerfile.is_none())
        {
            return None;
        }
        let (repo, tag, name) = (image.repo, image.tag, image.name);
        if name.is_empty() {
            return None;
        }
        let service = tag.and_then(super::catalog::service_of_tag);
        for index in &above.builds {
            let artifacts = index.artifacts.iter().filter(|(built, _)| {
                let last = built.rsplit('/').next().unwrap_or(built);
                built == repo || repo.ends_with(&format!("/{built}")) || last == name
            });
            for (key, built) in artifacts {
                return match built {
                    Built::Dockerfile(d) => self.file_facts(d),
                    // A context without a build file in it says nothing: look on.
                    Built::Context {
                        by,
                        context,
                        dockerfile,
                    } => {
                        match self.context_facts(listings, key, by, context, dockerfile.as_deref())
                        {
                            Some(f) => Some(f),
                            None => continue,
                        }
                    }
                    Built::Builder {
                        skaffold,
                        builder,
                        language,
                    } => Some(Arc::new(BuildFacts {
                        file: shown(skaffold),
                        language,
                        why: format!("skaffold builds it with {builder}"),
                        main: None,
                    })),
                };
            }
            let dir = index
                .services
                .get(name)
                .or_else(|| service.and_then(|s| index.services.get(s)))
                .or_else(|| prefixed(&index.services, name));
            if let Some(d) = dir {
                return self.file_facts(d);
            }
            if let Some((module, facts)) = index.module.as_ref() {
                if last_two(repo).eq_ignore_ascii_case(last_two(module)) {
                    return Some(facts.clone());
                }
                // A well-known program's own repository: its module is the source the catalog
                // names for the image (`k8s.io/kube-state-metrics` for
                // `registry.k8s.io/kube-state-metrics/kube-state-metrics`).
                if let Some(program) = catalog_program_of(image, module) {
                    return Some(Arc::new(BuildFacts {
                        file: facts.file.clone(),
                        language: facts.language,
                        why: format!(
                            "its module {module} is the source of {program}, as the catalog names the image"
                        ),
                        main: facts.main.clone(),
                    }));
                }
            }
            if let Some((_, d)) = index.named_dockerfiles.iter().find(|(n, _)| n == name) {
                return self.file_facts(d);
            }
        }
        // A sample that keeps its Dockerfile beside the manifest that deploys it.
        let own = above.own.as_ref()?.dockerfile.as_deref()?;
        self.file_facts(own)
    }

    /// Read and remember the build definitions at and above `dir`, ahead of the containers that
    /// ask.
    pub fn read_above(&self, listings: &Listings, dir: &Path) {
        self.indexes_above(listings, dir);
    }

    /// The [`Above`] of a manifest directory: worked out once per directory, as every container
    /// of every manifest there asks.
    fn indexes_above(&self, listings: &Listings, dir: &Path) -> Arc<Above> {
        if let Some(hit) = self.above.read().ok().and_then(|m| m.get(dir).cloned()) {
            return hit;
        }
        let mut above = Above {
            own: None,
            builds: Vec::new(),
        };
        for (i, a) in crate::walk::ancestors(dir, MAX_UP + 1).iter().enumerate() {
            let Some(index) = self.index(listings, a) else {
                continue;
            };
            if i == 0 {
                above.own = Some(index.clone());
            }
            if !index.artifacts.is_empty()
                || !index.services.is_empty()
                || index.module.is_some()
                || !index.named_dockerfiles.is_empty()
            {
                above.builds.push(index.clone());
            }
            if index.repository_root {
                break;
            }
        }
        let found = Arc::new(above);
        if let Ok(mut m) = self.above.write() {
            m.insert(dir.to_path_buf(), found.clone());
        }
        found
    }

    fn index(&self, listings: &Listings, dir: &Path) -> Option<Arc<DirIndex>> {
        if let Some(hit) = self.dirs.lock().ok()?.get(dir) {
            return Some(hit.clone());
        }
        let index = Arc::new(index(listings, dir));
        self.dirs
            .lock()
            .ok()?
            .insert(dir.to_path_buf(), index.clone());
        Some(index)
    }

    /// What the build of `image` from `context` shows: the Dockerfile named, else the context's
    /// own Dockerfile (or Containerfile), else its project files; shown as the file that links
    /// them (`docker-compose.yaml builds rs-cart from cart (cart/Dockerfile: …)`).
    fn context_facts(
        &self,
        listings: &Listings,
        image: &str,
        by: &Path,
        context: &Path,
        dockerfile: Option<&Path>,
    ) -> Option<Arc<BuildFacts>> {
        let names = listings.names(context);
        let target = match dockerfile {
            Some(d) => d.to_path_buf(),
            None => ["Dockerfile", "Containerfile"]
                .into_iter()
                .chain(PROJECT_FILES.iter().map(|(f, _, _)| *f))
                .find(|f| names.contains(*f))
                .map(|f| context.join(f))?,
        };
        let inner = self.file_facts(&target)?;
        Some(Arc::new(BuildFacts {
            file: shown(by),
            language: inner.language,
            why: format!(
                "it builds {image} from {} ({}: {})",
                shown(context),
                inner.file,
                inner.why
            ),
            main: inner.main.clone(),
        }))
    }

    /// The facts of a Dockerfile or a project file, read once per path.
    fn file_facts(&self, path: &Path) -> Option<Arc<BuildFacts>> {
        if let Some(hit) = self.files.lock().ok()?.get(path) {
            return hit.clone();
        }
        // Anything but a project file is a Dockerfile (`Dockerfile.api`, `Containerfile`).
        let is_project = path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| PROJECT_FILES.iter().any(|(f, _, _)| *f == n));
        let facts = if is_project {
            project(path)
        } else {
            read(path)
        }
        .map(Arc::new);
        self.files
            .lock()
            .ok()?
            .insert(path.to_path_buf(), facts.clone());
        facts
    }
}

/// Whether `path` is a compose file, Makefile or GitHub Actions workflow: a file that can link
/// an image to the Dockerfile that builds it (an editor watches them).
pub fn links_images(path: &Path) -> bool {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    let workflow = path.parent().is_some_and(|p| {
        p.ends_with(Path::new(".github").join("workflows"))
            && (name.ends_with(".yml") || name.ends_with(".yaml"))
    });
    links::is_compose(name) || links::is_makefile(name) || workflow
}

/// A manifest directory's own index, and the directories at and above it that offer a build,
/// nearest first.
struct Above {
    own: Option<Arc<DirIndex>>,
    builds: Vec<Arc<DirIndex>>,
}

/// What one directory offers. Each directory is listed once; a name not listed is not opened.
fn index(listings: &Listings, dir: &Path) -> DirIndex {
    let own = listings.names(dir);
    let mut artifacts = if own.contains("skaffold.yaml") {
        skaffold(dir)
    } else {
        Vec::new()
    };
    // Compose files and Makefiles, in a stable order; then the repository's CI workflows.
    let mut files: Vec<&String> = own
        .iter()
        .filter(|n| links::is_compose(n) || links::is_makefile(n))
        .collect();
    files.sort();
    for name in files {
        let path = dir.join(name);
        if links::is_compose(name) {
            artifacts.extend(links::compose(&path));
        } else {
            artifacts.extend(links::makefile(&path));
        }
    }
    if own.contains(".github") {
        artifacts.extend(links::workflows(dir));
    }
    // One Dockerfile per image, named after it: `Dockerfile.api`, `api.Dockerfile`.
    let mut named_dockerfiles: Vec<(String, PathBuf)> = own
        .iter()
        .filter_map(|n| {
            let image = ["Dockerfile.", "Containerfile."]
                .iter()
                .find_map(|p| n.strip_prefix(p))
                .or_else(|| n.strip_suffix(".Dockerfile"))
                .or_else(|| n.strip_suffix(".dockerfile"))?;
            (!image.is_empty()).then(|| (image.to_ascii_lowercase(), dir.join(n)))
        })
        .collect();
    named_dockerfiles.sort();
    let mut index = DirIndex {
        artifacts,
        named_dockerfiles,
        module: own.contains("go.mod").then(|| own_module(dir)).flatten(),
        dockerfile: own.contains("Dockerfile").then(|| dir.join("Dockerfile")),
        repository_root: own.contains(".git"),
        ..DirIndex::default()
    };
    for sub in SERVICE_DIRS {
        if !sub.is_empty() && !own.contains(*sub) {
            continue;
        }
        let Ok(entries) = std::fs::read_dir(dir.join(sub)) else {
            continue;
        };
        for e in entries.flatten() {
            if !e.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            let path = e.path();
            let inner = listings.names(&path);
            let build = std::iter::once("Dockerfile")
                .chain(PROJECT_FILES.iter().map(|(f, _, _)| *f))
                .find(|f| inner.contains(*f))
                .map(|f| path.join(f));
            if let (Some(build), Some(name)) = (build, e.file_name().to_str()) {
                // A Cloud Build config beside it names the images it pushes.
                if inner.contains("cloudbuild.yaml") || inner.contains("cloudbuild.yml") {
                    for image in cloud_build_images(&path) {
                        index.services.entry(image).or_insert_with(|| build.clone());
                    }
                }
                index
                    .services
                    .entry(name.to_ascii_lowercase())
                    .or_insert(build);
            }
        }
    }
    index
}

/// The service directory an image name carries behind a project prefix: `ca-grpc-provider` for
/// the directory `grpc-provider`. The longest such directory wins.
fn prefixed<'a>(services: &'a HashMap<String, PathBuf>, name: &str) -> Option<&'a PathBuf> {
    services
        .iter()
        .filter(|(dir, _)| {
            name.len() > dir.len()
                && name.ends_with(dir.as_str())
                && name.as_bytes()[name.len() - dir.len() - 1] == b'-'
        })
        .max_by_key(|(dir, _)| dir.len())
        .map(|(_, path)| path)
}

/// The last two elements of a path: `stefanprodan/podinfo` of `ghcr.io/stefanprodan/podinfo`.
fn last_two(path: &str) -> &str {
    match path.rmatch_indices('/').nth(1) {
        Some((i, _)) => &path[i + 1..],
        None => path,
    }
}

/// The program the catalog knows `image` as, when `module` (a path without major-version
/// suffix) is that program's source: the repository the entry cites, or one of that name.
fn catalog_program_of(image: &super::catalog::ImageRef, module: &str) -> Option<&'static str> {
    let (entry, _) = super::catalog::lookup_ref(image)?;
    let source = entry
        .source
        .split_once("://")
        .map_or(&*entry.source, |(_, p)| p);
    let mut parts = source.split('/');
    let (host, owner, name) = (parts.next()?, parts.next()?, parts.next()?);
    let same_path = module.eq_ignore_ascii_case(&format!("{host}/{owner}/{name}"));
    let same_name = module
        .rsplit('/')
        .next()
        .is_some_and(|m| m.eq_ignore_ascii_case(name));
    (same_path || same_name).then_some(entry.program.as_str())
}

/// The Go module whose go.mod is in `dir`, by its path without a major-version suffix
/// (`github.com/kedacore/keda/v2` → `github.com/kedacore/keda`); images are named like its last
/// two elements.
fn own_module(dir: &Path) -> Option<(String, Arc<BuildFacts>)> {
    let gomod = dir.join("go.mod");
    let text = links::read_capped(&gomod)?;
    let module = super::gomod::module_path(&text)?;
    let unversioned = match module.rsplit_once('/') {
        Some((rest, v)) if v.starts_with('v') && v[1..].parse::<u32>().is_ok() => rest,
        _ => module,
    };
    if !last_two(unversioned).contains('/') {
        return None;
    }
    let facts = Arc::new(BuildFacts {
        file: shown(&gomod),
        language: "go",
        why: format!("the image is named after its module {module}"),
        main: super::gomod::in_dir(dir).map(Arc::new),
    });
    Some((unversioned.to_string(), facts))
}

/// A path as a user reads it: `a/b/../c/./Dockerfile` is `a/c/Dockerfile`.
fn shown(path: &Path) -> String {
    crate::walk::lexical(path).to_string_lossy().into_owned()
}

/// A service directory without a Dockerfile, built by a buildpack, Jib or ko from its project.
fn project(path: &Path) -> Option<BuildFacts> {
    let file = path.file_name()?.to_str()?;
    let (_, language, what) = PROJECT_FILES.iter().find(|(f, _, _)| *f == file)?;
    let main = (*language == "go")
        .then(|| path.parent().and_then(super::gomod::in_dir))
        .flatten()
        .map(Arc::new);
    Some(BuildFacts {
        file: shown(path),
        language,
        why: format!("its directory is {what}"),
        main,
    })
}

/// The names of the images a `cloudbuild.yaml` in `dir` pushes (its `images` list), without
/// registry, project or tag: `…/${PROJECT_ID}/models/fastdash:latest` is `fastdash`.
fn cloud_build_images(dir: &Path) -> Vec<String> {
    let Some(text) = ["cloudbuild.yaml", "cloudbuild.yml"]
        .iter()
        .find_map(|f| links::read_capped(&dir.join(f)))
    else {
        return Vec::new();
    };
    let y = crate::yaml::parse(&text, 0);
    let mut out = Vec::new();
    for doc in &y.docs {
        let Some(images) = doc.root.and_then(|r| y.get(r, "images")) else {
            continue;
        };
        for &i in y.items(images) {
            if let Some(image) = y.str(i) {
                let repo = super::catalog::image_repo(image);
                let name = repo.rsplit('/').next().unwrap_or(repo);
                out.push(name.to_ascii_lowercase());
            }
        }
    }
    out
}

/// How many `requires` a chain of skaffold files is followed through.
const MAX_REQUIRES: usize = 4;

/// The artifacts of a `skaffold.yaml` in `dir` and of the skaffold files it requires.
fn skaffold(dir: &Path) -> Vec<(String, Built)> {
    let mut out = Vec::new();
    let mut seen = Vec::new();
    skaffold_file(&dir.join("skaffold.yaml"), 0, &mut seen, &mut out);
    out
}

fn skaffold_file(
    file: &Path,
    depth: usize,
    seen: &mut Vec<PathBuf>,
    out: &mut Vec<(String, Built)>,
) {
    if depth > MAX_REQUIRES || seen.iter().any(|s| s == file) {
        return;
    }
    seen.push(file.to_path_buf());
    let Some(text) = links::read_capped(file) else {
        return;
    };
    let dir = file.parent().unwrap_or(Path::new("."));
    let y = crate::yaml::parse(&text, 0);
    for doc in &y.docs {
        let Some(root) = doc.root else { continue };
        // Artifacts of the default build and of each profile's.
        let profiles = y.path(root, &["profiles"]).map_or(&[][..], |p| y.items(p));
        let artifacts = std::iter::once(root)
            .chain(profiles.iter().copied())
            .filter_map(|b| y.path(b, &["build", "artifacts"]))
            .flat_map(|a| y.items(a).iter().copied());
        for a in artifacts {
            let Some(image) = y.get_str(a, "image") else {
                continue;
            };
            let builder = [("jib", "Jib", "java"), ("ko", "ko", "go")]
                .into_iter()
                .find(|(key, _, _)| y.get(a, key).is_some());
            let built = match builder {
                Some((_, builder, language)) => Built::Builder {
                    skaffold: file.to_path_buf(),
                    builder,
                    language,
                },
                // Buildpacks and custom builds say nothing of the language.
                None if ["buildpacks", "custom", "bazel"]
                    .iter()
                    .any(|k| y.get(a, k).is_some()) =>
                {
                    continue
                }
                None => {
                    let context = y.get_str(a, "context").unwrap_or(".");
                    let dockerfile = y
                        .get(a, "docker")
                        .and_then(|d| y.get_str(d, "dockerfile"))
                        .unwrap_or("Dockerfile");
                    let context = if context == "." {
                        dir.to_path_buf()
                    } else {
                        dir.join(context)
                    };
                    Built::Dockerfile(context.join(dockerfile))
                }
            };
            out.push((image.to_string(), built));
        }
        for &r in y.path(root, &["requires"]).map_or(&[][..], |r| y.items(r)) {
            if let Some(path) = y.get_str(r, "path") {
                let required = dir.join(path);
                let required = if required.is_dir() {
                    required.join("skaffold.yaml")
                } else {
                    required
                };
                skaffold_file(&required, depth + 1, seen, out);
            }
        }
    }
}

fn read(path: &Path) -> Option<BuildFacts> {
    let text = links::read_capped(path)?;
    let (language, why) = judge(&text)?;
    let main = (language == "go")
        .then(|| {
            let dir = path.parent()?;
            let module = copied_module(&text, dir);
            super::gomod::in_dir(module.as_deref().unwrap_or(dir))
        })
        .flatten()
        .map(Arc::new);
    Some(BuildFacts {
        file: shown(path),
        language,
        why,
        main,
    })
}

/// The module a Go build copies into its working directory from the build context (the
/// Dockerfile's directory): `COPY flyteadmin .` in a monorepo whose services are modules of their
/// own, each with its go.mod. Without such a copy, the nearest go.mod above the Dockerfile is the
/// main module (`COPY . .` at a module's root).
fn copied_module(text: &str, context: &Path) -> Option<PathBuf> {
    let mut workdir = String::new();
    for line in text.lines().map(str::trim) {
        let mut words = line.split_whitespace();
        let Some(instruction) = words.next() else {
            continue;
        };
        if instruction.eq_ignore_ascii_case("WORKDIR") {
            workdir = words.next().unwrap_or("").trim_end_matches('/').to_string();
            continue;
        }
        if !instruction.eq_ignore_ascii_case("COPY") {
            continue;
        }
        let args: Vec<&str> = words.collect();
        // A copy from another stage or image brings nothing of the context.
        if args.iter().any(|a| a.starts_with("--from")) {
            continue;
        }
        let args: Vec<&str> = args.into_iter().filter(|a| !a.starts_with("--")).collect();
        let Some((dest, sources)) = args.split_last() else {
            continue;
        };
        let dest = dest.trim_end_matches('/');
        if !(dest == "." || dest.is_empty() || (!workdir.is_empty() && dest == workdir)) {
            continue;
        }
        for source in sources {
            let source = source.trim_end_matches('/');
            if source == "." || source.contains(['*', '?', '$', '[']) || source.contains("..") {
                continue;
            }
            let dir = context.join(source);
            if dir.join("go.mod").is_file() {
                return Some(dir);
            }
        }
    }
    None
}

/// Bases that carry no runtime of their own: what is copied in decides.
const BARE: &[&str] = &[
    "scratch",
    "distroless",
    "static",
    "static-debian11",
    "static-debian12",
    "base",
    "base-debian11",
    "base-debian12",
    "alpine",
    "busybox",
    "debian",
    "ubuntu",
    "ubi",
    "ubi-minimal",
    "ubi-micro",
    "chainguard",
    "wolfi-base",
];

/// A base image that carries no runtime of its own (what is copied in decides): `scratch`, the
/// OS images, and distroless's static, base and cc images.
fn is_bare(base: &str) -> bool {
    let repo = super::catalog::image_repo(base).to_ascii_lowercase();
    let last = repo.rsplit('/').next().unwrap_or(&repo);
    BARE.contains(&last)
        || (repo.contains("distroless")
            && ["static", "base", "cc"]
                .iter()
                .any(|b| last == *b || last.starts_with(&format!("{b}-"))))
}

/// The language an image carries, from the catalog or the runtime words in its name.
fn language_of(base: &str) -> Option<&'static str> {
    super::catalog::lookup(base)
        .map(|(e, _)| e.language.as_str())
        .or_else(|| super::signs::image_sign(base).map(|(_, l)| l))
        .filter(|l| *l != "shell")
}

/// `$NAME`, `${NAME}` and `${NAME:-default}` replaced by the ARG values known; other references
/// are kept as written. One pass, so the result does not depend on the order ARGs are tried in.
fn expand_args(s: &str, args: &HashMap<String, String>) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let name_len = |t: &str| {
            t.bytes()
                .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
                .count()
        };
        let (reference, name, default) = if let Some(inner) = after.strip_prefix('{') {
            match inner.find('}') {
                Some(end) => {
                    let body = &inner[..end];
                    let (name, default) = match body.split_once(":-") {
                        Some((n, d)) => (n, Some(d)),
                        None => (body, None),
                    };
                    (&rest[at..at + end + 3], name, default)
                }
                None => (&rest[at..], "", None),
            }
        } else {
            let n = name_len(after);
            (&rest[at..at + 1 + n], &after[..n], None)
        };
        match args.get(name).map(String::as_str).or(default) {
            Some(value) if !name.is_empty() => out.push_str(value),
            _ => out.push_str(reference),
        }
        rest = &rest[at + reference.len()..];
    }
    out.push_str(rest);
    out
}

/// Whether a base image is a Go toolchain: `golang`, Red Hat's `go-toolset`, a
/// `…golang-builder`, Chainguard's `go`.
fn is_go_toolchain(base: &str) -> bool {
    let repo = super::catalog::image_repo(base).to_ascii_lowercase();
    let last = repo.rsplit('/').next().unwrap_or(&repo);
    last == "golang"
        || last == "go"
        || last.starts_with("go-toolset")
        || last.starts_with("golang-")
        || last.ends_with("-golang")
        || last.contains("-golang-")
}

/// Whether the instruction line is a RUN that runs `program sub` as a command of its own.
fn runs_in(line: &str, program: &str, sub: &str) -> bool {
    let words: Vec<&str> = line
        .split(|c: char| c.is_whitespace() || c == ';' || c == '&' || c == '|')
        .filter(|w| !w.is_empty())
        .collect();
    words.first().is_some_and(|w| w.eq_ignore_ascii_case("RUN"))
        && words.windows(2).any(|p| p[0] == program && p[1] == sub)
}

/// The stage a `COPY --from=<stage>` line copies `program` from.
fn copied_from<'l>(line: &'l str, program: &str) -> Option<&'l str> {
    let mut words = line.split_whitespace();
    if !words.next()?.eq_ignore_ascii_case("COPY") {
        return None;
    }
    let mut from = None;
    let mut paths = Vec::new();
    for w in words {
        match w.strip_prefix("--from=") {
            Some(f) => from = Some(f),
            None if w.starts_with("--") => {}
            None => paths.push(w.trim_matches(['[', ']', ',', '"'])),
        }
    }
    let named = |p: &&str| p.trim_end_matches('/').rsplit('/').next() == Some(program);
    // The program is the destination file, or keeps a source's name in a destination directory.
    let (dest, sources) = paths.split_last()?;
    (named(dest) || sources.iter().any(named)).then_some(from?)
}

/// A Dockerfile stage: its base, its name, and its instructions.
type Stage = (String, Option<String>, Vec<String>);

/// Go, when the program the final stage runs (`argv`, ENTRYPOINT then CMD) is a file it copies
/// from a Go build stage.
fn copied_from_go(
    stages: &[Stage],
    go_stages: &[bool],
    lines: &[String],
    argv: &[&str],
) -> Option<(&'static str, String)> {
    let run = argv
        .get(crate::go::command::program_start(argv))
        .map(|w| w.rsplit('/').next().unwrap_or(w))
        .filter(|w| !w.is_empty() && !w.starts_with('$'))?;
    let builder = lines.iter().find_map(|l| {
        let stage = copied_from(l, run)?;
        let i = stages
            .iter()
            .position(|(_, n, _)| n.as_deref().is_some_and(|n| n.eq_ignore_ascii_case(stage)))
            .or_else(|| stage.parse::<usize>().ok())
            .filter(|i| *i + 1 < stages.len())?;
        go_stages[i].then(|| stages[i].0.clone())
    })?;
    Some((
        "go",
        format!("its final stage runs {run}, copied from the Go build on FROM {builder}"),
    ))
}

/// The runtime a Dockerfile's final stage runs, and why.
fn judge(text: &str) -> Option<(&'static str, String)> {
    // Line continuations joined, comments dropped.
    let joined = text.replace("\\\r\n", " ").replace("\\\n", " ");
    let mut args: HashMap<String, String> = HashMap::new();
    // Each stage: its base (ARG defaults filled in, a stage name resolved to that stage's base),
    // its name, and its instructions.
    let mut stages: Vec<Stage> = Vec::new();
    for line in joined.lines() {
        let l = line.trim();
        if l.starts_with('#') || l.is_empty() {
            continue;
        }
        let (instr, rest) = l.split_once(char::is_whitespace).unwrap_or((l, ""));
        if instr.eq_ignore_ascii_case("ARG") && stages.is_empty() {
            if let Some((k, v)) = rest.trim().split_once('=') {
                // A default may use the ARGs declared before it.
                let v = expand_args(v.trim().trim_matches('"'), &args);
                args.insert(k.trim().to_string(), v);
            }
        } else if instr.eq_ignore_ascii_case("FROM") {
            let mut words = rest.split_whitespace().filter(|w| !w.starts_with("--"));
            let mut base = expand_args(words.next().unwrap_or(""), &args);
            if let Some(named) = stages.iter().find(|(_, n, _)| n.as_deref() == Some(&base)) {
                base = named.0.clone();
            }
            let name = match (words.next(), words.next()) {
                (Some(a), Some(n)) if a.eq_ignore_ascii_case("AS") => Some(n.to_string()),
                _ => None,
            };
            stages.push((base, name, Vec::new()));
        } else if let Some((_, _, lines)) = stages.last_mut() {
            lines.push(l.to_string());
        }
    }
    let (base, _, lines) = stages.last()?;
    // Whether a RUN instruction runs `program` (followed by `sub`, when given) as a command of
    // its own: `cargo install` is no `go install`.
    let runs = |program: &str, sub: Option<&str>| {
        stages.iter().flat_map(|(_, _, ls)| ls).any(|l| {
            let words: Vec<&str> = l
                .split(|c: char| c.is_whitespace() || c == ';' || c == '&' || c == '|')
                .filter(|w| !w.is_empty())
                .collect();
            words.first().is_some_and(|w| w.eq_ignore_ascii_case("RUN"))
                && words
                    .iter()
                    .enumerate()
                    .any(|(i, w)| *w == program && sub.is_none_or(|s| words.get(i + 1) == Some(&s)))
        })
    };
    // The stages that build Go: on a Go toolchain image, or running `go build`/`go install`.
    let go_stages: Vec<bool> = stages
        .iter()
        .map(|(b, _, ls)| {
            is_go_toolchain(b)
                || ls
                    .iter()
                    .any(|l| runs_in(l, "go", "build") || runs_in(l, "go", "install"))
        })
        .collect();
    let go_built = go_stages.iter().any(|g| *g);
    // The final stage's own program: ENTRYPOINT and CMD, the last of each, as the image runs
    // them (ENTRYPOINT first).
    let argv = |instr: &str| {
        let rest = lines.iter().rev().find_map(|l| {
            let (i, rest) = l.split_once(char::is_whitespace)?;
            i.eq_ignore_ascii_case(instr).then(|| rest.trim())
        })?;
        if rest.starts_with('[') {
            serde_json::from_str::<Vec<String>>(rest).ok()
        } else {
            Some(rest.split_whitespace().map(str::to_string).collect())
        }
    };
    let words: Vec<String> = argv("ENTRYPOINT")
        .into_iter()
        .chain(argv("CMD"))
        .flatten()
        .collect();
    let refs: Vec<&str> = words.iter().map(String::as_str).collect();
    // A known program on the last ENTRYPOINT or CMD line.
    let program = lines.iter().rev().find_map(|l| {
        let (instr, _) = l.split_once(char::is_whitespace)?;
        let w = ["ENTRYPOINT", "CMD"]
            .into_iter()
            .find(|i| instr.eq_ignore_ascii_case(i))
            .and_then(argv)?;
        let refs: Vec<&str> = w.iter().map(String::as_str).collect();
        match super::signs::sign_of_words(&refs, 0) {
            Some(super::signs::CommandSign::Program { word, language }) => {
                Some((language, format!("its final stage runs {word}")))
            }
            _ => None,
        }
    });
    if let Some(p) = program {
        return Some(p);
    }
    if !is_bare(base) {
        if let Some(lang) = language_of(base) {
            // The program it runs was copied from a Go build stage: whatever the base, that is Go.
            if let Some(go) = copied_from_go(&stages, &go_stages, lines, &refs) {
                return Some(go);
            }
            return Some((lang, format!("its final stage is FROM {base}")));
        }
    }
    if go_built {
        return Some((
            "go",
            format!("it builds a Go program and runs it on FROM {base}"),
        ));
    }
    // A compiled program of another language copied onto a bare image: its build stage says
    // which (`rust:1.91`, `hexpm/elixir`, a cmake build).
    let built = stages[..stages.len() - 1]
        .iter()
        .find_map(|(b, _, _)| language_of(b).map(|l| (l, b.clone())));
    if let Some((lang, builder)) = built {
        return Some((
            lang,
            format!("it builds on FROM {builder} and runs the result on FROM {base}"),
        ));
    }
    (runs("cmake", None) || runs("g++", None) || runs("clang++", None))
        .then(|| ("cpp", format!("it builds C++ and runs it on FROM {base}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dockerfiles_show_their_runtime() {
        let lang = |t: &str| judge(t).map(|(l, _)| l);
        assert_eq!(
            lang("FROM golang:1.24 AS build\nRUN go build -o /app .\nFROM gcr.io/distroless/static\nCOPY --from=build /app /app\nENTRYPOINT [\"/app\"]\n"),
            Some("go")
        );
        assert_eq!(
            lang("FROM python:3.12-slim\nCOPY . .\nCMD [\"python\", \"email_server.py\"]\n"),
            Some("python")
        );
        assert_eq!(
            lang("FROM eclipse-temurin:21 AS builder\nRUN ./gradlew build\nFROM eclipse-temurin:21-jre-alpine\nENTRYPOINT [\"/app/build/install/hipstershop/bin/AdService\"]\n"),
            Some("java")
        );
        assert_eq!(
            lang("FROM mcr.microsoft.com/dotnet/sdk:8.0 AS build\nFROM mcr.microsoft.com/dotnet/runtime-deps:8.0-alpine\nENTRYPOINT [\"/app/cartservice\"]\n"),
            Some("dotnet")
        );
        assert_eq!(
            lang("FROM node:20-alpine\nCMD node server.js\n"),
            Some("node")
        );
        assert_eq!(
            lang("FROM alpine:3.20\nCOPY app /app\nENTRYPOINT [\"/app\"]\n"),
            None
        );
        assert_eq!(lang("# nothing\n"), None);
        // `cargo install` is no `go install`; the builder stage names the language.
        assert_eq!(
            lang("FROM rust:1.91 AS builder\nRUN cargo install --locked x && cargo build\nFROM gcr.io/distroless/cc-debian12\nCOPY --from=builder /x /x\nENTRYPOINT [\"/x\"]\n"),
            Some("rust")
        );
        // A stage named after another resolves to that stage's base.
        assert_eq!(
            lang("ARG V=1.96\nFROM rust:${V} AS chef\nFROM chef AS builder\nFROM debian:bookworm-slim\nCMD [\"./svc\"]\n"),
            Some("rust")
        );
    }

    #[test]
    fn args_expand_once_in_declaration_order() {
        let mut args = HashMap::new();
        args.insert("V".to_string(), "1.2".to_string());
        args.insert("VERSION".to_string(), "9".to_string());
        assert_eq!(expand_args("x:${V}-$VERSION-$V", &args), "x:1.2-9-1.2");
        assert_eq!(
            expand_args("${MISSING:-d} ${MISSING} $ ${V", &args),
            "d ${MISSING} $ ${V"
        );
        // A later ARG reads an earlier one; the FROM reads both, whatever the map's order.
        let text = "ARG E=1.19\nARG D=bookworm\nARG B=\"elixir:${E}-debian-${D}\"\nFROM ${B} AS build\nFROM debian:${D}\n";
        for _ in 0..8 {
            let (_, why) = judge(text).expect("an Elixir build");
            assert!(why.contains("elixir:1.19-debian-bookworm"), "{why}");
            assert!(why.contains("debian:bookworm"), "{why}");
        }
    }

    fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let p = dir.path().join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        dir
    }

    /// [`super::facts`] for an image written out.
    fn facts(manifest: &Path, image: &str) -> Option<Arc<BuildFacts>> {
        let image = crate::runtime::catalog::ImageRef::parse(image);
        Builds::default().facts(&Listings::default(), manifest, &image)
    }

    fn language(dir: &tempfile::TempDir, manifest: &str, image: &str) -> Option<&'static str> {
        facts(&dir.path().join(manifest), image).map(|f| f.language)
    }

    #[test]
    fn build_definitions_without_a_dockerfile_name_the_language() {
        let dir = tree(&[
            // A root skaffold.yaml that requires each service's own: Jib builds Java.
            (
                "skaffold.yaml",
                "requires:\n- path: src/ledger/skaffold.yaml\n",
            ),
            (
                "src/ledger/skaffold.yaml",
                "requires:\n- path: reader/skaffold.yaml\n",
            ),
            (
                "src/ledger/reader/skaffold.yaml",
                "build:\n  artifacts:\n  - image: balancereader\n    jib: {}\n",
            ),
            // A service directory with a project file and no Dockerfile.
            ("src/orders/package.json", "{}"),
            // A Cloud Build config names the image a directory pushes.
            (
                "build/webapp/Dockerfile",
                "FROM python:3.12\nCMD [\"python\", \"app.py\"]\n",
            ),
            (
                "build/webapp/cloudbuild.yaml",
                "images:\n- 'europe-docker.pkg.dev/$PROJECT_ID/x/diffusion-web:latest'\n",
            ),
            // A Go main package without go.mod, inside a module further up.
            ("tools/go.mod", "module example.com/tools\n\ngo 1.25.0\n"),
            ("tools/a/b/examples/grpc-provider/main.go", "package main\n"),
            ("k8s/app.yaml", ""),
            ("tools/a/b/examples/manifests/app.yaml", ""),
        ]);
        let m = "k8s/app.yaml";
        assert_eq!(
            language(&dir, m, "reg.example/bank/balancereader:v1"),
            Some("java")
        );
        assert_eq!(
            language(&dir, m, "reg.example/shop/orders:2.0"),
            Some("node")
        );
        assert_eq!(
            language(&dir, m, "reg.example/x/diffusion-web:latest"),
            Some("python")
        );
        assert_eq!(language(&dir, m, "reg.example/x/unrelated:1"), None);
        // A project prefix before the directory's name.
        let m = "tools/a/b/examples/manifests/app.yaml";
        let f = facts(&dir.path().join(m), "ca-grpc-provider:dev").unwrap();
        assert_eq!(f.language, "go");
        assert_eq!(
            f.main.as_ref().and_then(|p| p.go).map(|g| g.minor),
            Some(25)
        );
    }

    #[test]
    fn a_repository_named_like_its_go_module_builds_its_image() {
        let dir = tree(&[
            ("go.mod", "module github.com/acme/podinfo/v6\n\ngo 1.26.0\n"),
            ("deploy/app.yaml", ""),
        ]);
        let f = facts(
            &dir.path().join("deploy/app.yaml"),
            "ghcr.io/acme/podinfo:6.1",
        )
        .unwrap();
        assert_eq!(f.language, "go");
        assert_eq!(
            f.main.as_ref().and_then(|p| p.go).map(|g| g.minor),
            Some(26)
        );
        // Another owner's image of the same name is not this module's.
        assert!(facts(
            &dir.path().join("deploy/app.yaml"),
            "ghcr.io/other/podinfo:1"
        )
        .is_none());
    }

    #[test]
    fn a_compose_service_links_its_image_to_the_context_it_builds() {
        let dir = tree(&[
            (
                "docker-compose.yaml",
                "services:\n  manager:\n    image: ${REGISTRY}/manager:${TAG}\n    build:\n      context: src/manager/easyTradeManager\n  web:\n    image: ${REPO}/rs-web:${TAG}\n    build: frontend\n  api:\n    image: acme/api:1\n    build:\n      context: .\n      dockerfile: build/api.Dockerfile\n  redis:\n    image: redis:7\n",
            ),
            (
                "src/manager/easyTradeManager/Dockerfile",
                "FROM mcr.microsoft.com/dotnet/sdk:8.0 AS build\nFROM mcr.microsoft.com/dotnet/aspnet:8.0\nENTRYPOINT [\"dotnet\", \"Manager.dll\"]\n",
            ),
            ("frontend/package.json", "{}"),
            (
                "build/api.Dockerfile",
                "FROM golang:1.24 AS b\nRUN go build -o /api .\nFROM alpine:3.20\nCOPY --from=b /api /api\nENTRYPOINT [\"/api\"]\n",
            ),
            ("k8s/app.yaml", ""),
        ]);
        let m = dir.path().join("k8s/app.yaml");
        let f = facts(&m, "europe-docker.pkg.dev/x/easytrade/manager:fa6ccf2").unwrap();
        assert_eq!(f.language, "dotnet");
        assert!(f.file.ends_with("docker-compose.yaml"), "{}", f.file);
        assert!(
            f.why.starts_with("it builds manager from ")
                && f.why
                    .contains("easyTradeManager/Dockerfile: its final stage runs dotnet"),
            "{}",
            f.why
        );
        assert_eq!(
            facts(&m, "robotshop/rs-web:latest").unwrap().language,
            "node"
        );
        assert_eq!(facts(&m, "quay.io/acme/api:2").unwrap().language, "go");
        // A service that only pulls its image builds nothing.
        assert!(facts(&m, "redis:7").is_none());
    }

    #[test]
    fn ci_workflows_and_makefiles_link_the_images_they_build() {
        let go = "FROM registry.access.redhat.com/ubi9/go-toolset:1.22 AS builder\nRUN CGO_ENABLED=0 go build -o /opt/manager ./cmd\nFROM registry.access.redhat.com/ubi9/ubi-minimal\nCOPY --from=builder /opt/manager .\nENTRYPOINT [\"/manager\"]\n";
        let dir = tree(&[
            // The kubebuilder layout: the image is a Makefile variable.
            (
                "operator/Makefile",
                "IMG ?= controller:latest\nCONTAINER_TOOL ?= docker\n\ndocker-build:\n\t$(CONTAINER_TOOL) build \\\n\t\t-f Containerfile \\\n\t\t-t ${IMG} \\\n\t\t.\nother:\n\tdocker build -t $(UNSET)/x:1 ./x\n",
            ),
            ("operator/Containerfile", go),
            ("operator/config/manager/manager.yaml", ""),
            (
                ".github/workflows/release.yml",
                "env:\n  WEB: portal-frontend\njobs:\n  web:\n    steps:\n    - id: meta\n      uses: docker/metadata-action@v5\n      with:\n        images: |\n          ghcr.io/acme/portal-api\n    - uses: docker/build-push-action@v6\n      with:\n        context: services/api\n        tags: ${{ steps.meta.outputs.tags }}\n    - uses: docker/build-push-action@v6\n      with:\n        context: web\n        file: web/build/Dockerfile.prod\n        tags: docker.io/acme/${{ env.WEB }}:${{ github.sha }},docker.io/acme/web:latest\n    - run: |\n        docker build -t ghcr.io/${{ github.repository_owner }}/worker:${{ github.sha }} --file jobs/worker.Dockerfile jobs\n",
            ),
            ("services/api/go.mod", "module example.com/api\n\ngo 1.23.0\n"),
            (
                "web/build/Dockerfile.prod",
                "FROM node:20 AS b\nRUN npm run build\nFROM nginx:1.27\nCOPY --from=b /app/dist /usr/share/nginx/html\n",
            ),
            (
                "jobs/worker.Dockerfile",
                "FROM python:3.12-slim\nCMD [\"python\", \"worker.py\"]\n",
            ),
            ("deploy/app.yaml", ""),
        ]);
        let m = dir.path().join("operator/config/manager/manager.yaml");
        let f = facts(&m, "controller:latest").unwrap();
        assert_eq!(f.language, "go");
        assert!(f.file.ends_with("operator/Makefile"), "{}", f.file);
        assert!(f.why.contains("Containerfile"), "{}", f.why);
        // A variable the Makefile does not set links nothing.
        assert!(facts(&m, "quay.io/acme/x:1").is_none());
        let m = dir.path().join("deploy/app.yaml");
        let f = facts(&m, "ghcr.io/acme/portal-api:v2").unwrap();
        assert_eq!(f.language, "go");
        assert!(
            f.file.ends_with(".github/workflows/release.yml"),
            "{}",
            f.file
        );
        assert_eq!(facts(&m, "acme/portal-frontend:3.1").unwrap().language, "c");
        assert_eq!(facts(&m, "acme/web:3.1").unwrap().language, "c");
        assert_eq!(
            facts(&m, "ghcr.io/acme/worker:1").unwrap().language,
            "python"
        );
    }

    #[test]
    fn a_go_binary_copied_from_a_build_stage_is_go_whatever_the_final_base() {
        let lang = |t: &str| judge(t).map(|(l, _)| l);
        // A Go toolchain image other than `golang`, building through make.
        let (language, why) = judge("FROM registry.access.redhat.com/ubi9/go-toolset:1.22 AS builder\nRUN make build\nFROM registry.access.redhat.com/ubi9/ubi-minimal:9.4\nCOPY --from=builder /opt/app-root/src/bin/manager /usr/local/bin\nENTRYPOINT [\"/usr/local/bin/manager\"]\n").unwrap();
        assert_eq!(language, "go");
        assert!(why.contains("builds a Go program"), "{why}");
        // The final base has a runtime of its own, but the program is the Go binary.
        let (language, why) = judge("FROM golang:1.24 AS build\nRUN go build -o /out/server ./cmd/server\nFROM python:3.12-slim\nRUN pip install awscli\nCOPY --from=build /out/server /server\nENTRYPOINT [\"/server\", \"--port=8080\"]\n").unwrap();
        assert_eq!(language, "go");
        assert!(
            why.contains("runs server, copied from the Go build on FROM golang:1.24"),
            "{why}"
        );
        // A stage referred to by its index.
        assert_eq!(
            lang("FROM golang:1.24\nRUN go build -o /app .\nFROM node:20\nCOPY --from=0 /app /usr/bin/app\nCMD app serve\n"),
            Some("go")
        );
        // A Go tool copied beside the program that runs decides nothing.
        assert_eq!(
            lang("FROM golang:1.24 AS tools\nRUN go install example.com/x@latest\nFROM node:20\nCOPY --from=tools /go/bin/x /usr/bin/x\nCMD [\"node\", \"server.js\"]\n"),
            Some("node")
        );
        assert_eq!(
            lang("FROM golang:1.24 AS tools\nRUN go build -o /x .\nFROM python:3.12\nCOPY --from=tools /x /usr/bin/x\nENTRYPOINT [\"/docker-entrypoint.sh\"]\n"),
            Some("python")
        );
    }

    #[test]
    fn a_go_build_reads_the_module_it_copies_into_its_working_directory() {
        // A monorepo whose services are modules of their own, built from the root.
        let dir = tree(&[
            ("Dockerfile.scheduler", "FROM golang:1.26 AS builder\nWORKDIR /go/src/app\nCOPY --chown=1:1 lib ../lib\nCOPY admin .\nRUN go build -o /out/scheduler ./cmd/scheduler\nFROM alpine:3.18\nCOPY --from=builder /out/scheduler /usr/bin/\nENTRYPOINT [\"scheduler\"]\n"),
            ("admin/go.mod", "module example.com/admin\n\ngo 1.26.0\n"),
            ("lib/go.mod", "module example.com/lib\n\ngo 1.21\n"),
        ]);
        let f = read(&dir.path().join("Dockerfile.scheduler")).unwrap();
        let main = f.main.expect("the copied module");
        assert!(main.gomod.ends_with("admin/go.mod"), "{}", main.gomod);
        // `COPY . .` at a module's root: the nearest go.mod above the Dockerfile, as before.
        let dir = tree(&[
            ("Dockerfile", "FROM golang:1.24\nWORKDIR /src\nCOPY . .\nRUN go build -o /app .\nFROM scratch\nCOPY --from=0 /app /app\nENTRYPOINT [\"/app\"]\n"),
            ("go.mod", "module example.com/app\n\ngo 1.24\n"),
        ]);
        let f = read(&dir.path().join("Dockerfile")).unwrap();
        assert!(f.main.unwrap().gomod.ends_with("go.mod"));
    }

    #[test]
    fn a_well_known_programs_own_repository_builds_its_image() {
        let dir = tree(&[
            (
                "go.mod",
                "module k8s.io/kube-state-metrics/v2\n\ngo 1.25.0\n",
            ),
            ("main.go", "package main\n"),
            ("examples/standard/deployment.yaml", ""),
        ]);
        let m = dir.path().join("examples/standard/deployment.yaml");
        let f = facts(
            &m,
            "registry.k8s.io/kube-state-metrics/kube-state-metrics:v2.13.0",
        )
        .expect("the repository's go.mod builds the image the catalog knows");
        assert_eq!(f.language, "go");
        assert!(f.why.contains("k8s.io/kube-state-metrics"), "{}", f.why);
        assert_eq!(
            f.main.as_ref().and_then(|p| p.go).map(|g| g.minor),
            Some(25)
        );
        // Another well-known image is not this module's.
        assert!(facts(&m, "quay.io/prometheus/node-exporter:v1.8.2").is_none());
    }

    #[test]
    fn a_dockerfile_named_after_an_image_builds_it() {
        let dir = tree(&[
            (
                "Dockerfile.scheduler",
                "FROM golang:1.24 AS builder\nRUN go build -o /bin/scheduler ./cmd/scheduler\nFROM alpine:3.18\nCOPY --from=builder /bin/scheduler /bin/\nCMD [\"scheduler\"]\n",
            ),
            ("web.Dockerfile", "FROM node:20\nCMD [\"node\", \"server.js\"]\n"),
            ("deployment/eks/all.yaml", ""),
        ]);
        let m = dir.path().join("deployment/eks/all.yaml");
        let f = facts(&m, "cr.example.org/acme/scheduler:v1.16.8").unwrap();
        assert_eq!(f.language, "go");
        assert!(f.file.ends_with("Dockerfile.scheduler"), "{}", f.file);
        assert_eq!(facts(&m, "acme/web:1").unwrap().language, "node");
        assert!(facts(&m, "acme/api:1").is_none());
    }

    #[test]
    fn malformed_build_files_link_nothing_and_do_not_stop_the_others() {
        let big = format!(
            "services:\n  big:\n    image: big\n    build: huge/app\n{}",
            "#\n".repeat(300_000)
        );
        let dir = tree(&[
            ("compose.yaml", "services:\n- image: a\n  build: [1, 2]\n"),
            ("compose.override.yml", "services: {x: {image: {a: b}, build: {context: {c: d}}}}\n"),
            ("docker-compose.yml", "services:\n  y:\n    image: \"unterminated\n"),
            ("compose.big.yaml", big.as_str()),
            ("huge/app/Dockerfile", "FROM node:20\nCMD [\"node\", \"x.js\"]\n"),
            ("Makefile", "IMG ?= $(unclosed\nbuild:\n\tdocker build -t $(IMG $(( ${ \"' .\n\tdocker build\n\tpodman build -t\n"),
            ("x.mk", "\u{0}\u{1}\tdocker build -t good:1 ./good\n"),
            (".github/workflows/a.yml", "jobs: 3\n"),
            (".github/workflows/b.yaml", "jobs:\n  j:\n    steps:\n    - uses: docker/build-push-action@v6\n      with: [1]\n    - run: [docker, build]\n    - uses: docker/build-push-action@v6\n      with:\n        tags: ${{ steps.x.outputs.tags\n"),
            (
                "docker-compose.good.yaml",
                "services:\n  good:\n    image: ${R}/good:${T}\n    build: ./good\n",
            ),
            ("good/Dockerfile", "FROM python:3.12\nCMD [\"python\", \"a.py\"]\n"),
            ("k8s/app.yaml", ""),
        ]);
        let m = dir.path().join("k8s/app.yaml");
        assert_eq!(facts(&m, "acme/good:1").unwrap().language, "python");
        // Larger than a build file is: not read.
        assert!(facts(&m, "acme/big:1").is_none());
        assert!(facts(&m, "acme/a:1").is_none());
    }

    #[test]
    fn a_build_link_to_an_empty_context_leaves_the_image_to_other_evidence() {
        let dir = tree(&[
            (
                "compose.yaml",
                "services:\n  api:\n    image: ${R}/api:${T}\n    build: ./missing\n",
            ),
            ("src/api/go.mod", "module example.com/api\n\ngo 1.24.0\n"),
            ("k8s/app.yaml", ""),
        ]);
        let f = facts(&dir.path().join("k8s/app.yaml"), "acme/api:1").unwrap();
        assert_eq!(f.language, "go");
        assert!(f.file.ends_with("src/api/go.mod"), "{}", f.file);
    }

    #[test]
    fn a_go_build_on_an_os_base_image_is_go() {
        for base in [
            "registry.access.redhat.com/ubi9",
            "registry.access.redhat.com/ubi9/ubi-minimal:9.4",
            "redhat/ubi9-minimal",
            "quay.io/centos/centos:stream9",
            "fedora:40",
            "rockylinux:9",
            "amazonlinux:2023",
            "bitnami/minideb:bookworm",
            "debian:bookworm-slim",
            "photon:5.0",
            "registry.suse.com/bci/bci-micro:15.6",
            "cgr.dev/chainguard/glibc-dynamic",
            "gcr.io/distroless/base-nossl-debian12",
        ] {
            let text = format!("FROM golang:1.24 AS b\nRUN go build -o /app .\nFROM {base}\nCOPY --from=b /app /usr/bin/\nCOPY run.sh /\nENTRYPOINT [\"/run.sh\"]\n");
            assert_eq!(judge(&text).map(|(l, _)| l), Some("go"), "{base}");
        }
    }
}
