//! The Dockerfile behind an image built from the same repository. Sample applications and
//! monorepos keep each service's Dockerfile beside its source, and say which image it builds in a
//! `skaffold.yaml` (`build.artifacts[].image`, `context`, `docker.dockerfile`) or by naming the
//! directory after the image (`src/cartservice/Dockerfile` for the image `…/cartservice:v1`).
//! Its final stage shows the runtime: the base image (`python:3.12-slim`, `eclipse-temurin:21-jre`),
//! the program its ENTRYPOINT or CMD runs, or a Go build (`FROM golang`, `RUN go build`) copied
//! into a bare final image.
//!
//! Only files are read. What is not found says nothing.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{LazyLock, Mutex};

/// What a Dockerfile says about the runtime of the image it builds.
#[derive(Debug, PartialEq, Eq)]
pub struct BuildFacts {
    /// The Dockerfile, as a path from where the manifest was named.
    pub dockerfile: String,
    pub language: &'static str,
    /// Why, in a few words: "its final stage is FROM python:3.12-slim".
    pub why: String,
    /// For a Go build, the module and main package in the Dockerfile's directory.
    pub main: Option<std::sync::Arc<super::gomod::MainPackage>>,
}

/// Directories, under a manifest's directory or its parents, where a service named like the
/// image keeps its Dockerfile.
const SERVICE_DIRS: &[&str] = &["", "src", "services", "apps", "cmd"];

/// How far up from the manifest a build definition is looked for.
const MAX_UP: usize = 4;

/// What one directory offers: the skaffold artifacts (image, Dockerfile) it declares and the
/// service directories with a Dockerfile under it, by name.
#[derive(Default)]
struct DirIndex {
    artifacts: Vec<(String, PathBuf)>,
    services: HashMap<String, PathBuf>,
}

/// Directories are listed once each, and each Dockerfile is read once: a run over thousands of
/// manifests in one tree asks the file system a few dozen times.
static DIRS: LazyLock<Mutex<HashMap<PathBuf, &'static DirIndex>>> = LazyLock::new(Default::default);
static DOCKERFILES: LazyLock<Mutex<HashMap<PathBuf, Option<&'static BuildFacts>>>> =
    LazyLock::new(Default::default);

/// The build facts of `image` for a manifest at `manifest`. (Both caches live as long as the
/// process and never forget, so their entries are leaked rather than counted.)
pub fn facts(manifest: &Path, image: &str) -> Option<&'static BuildFacts> {
    if image.starts_with("ko://") {
        return None;
    }
    let repo = super::catalog::image_repo(image);
    let name = repo.rsplit('/').next().unwrap_or(repo);
    if name.is_empty() {
        return None;
    }
    for index in indexes_above(manifest.parent()?) {
        let artifact = index.artifacts.iter().find(|(built, _)| {
            let last = built.rsplit('/').next().unwrap_or(built);
            built == repo || repo.ends_with(&format!("/{built}")) || last == name
        });
        let dockerfile = artifact
            .map(|(_, d)| d)
            .or_else(|| index.services.get(name));
        if let Some(d) = dockerfile {
            return dockerfile_facts(d);
        }
    }
    None
}

/// The directories at and above a manifest's that offer a build, nearest first: worked out once
/// per manifest directory, as every container of every manifest there asks.
fn indexes_above(dir: &Path) -> &'static [&'static DirIndex] {
    static ABOVE: LazyLock<Mutex<HashMap<PathBuf, &'static [&'static DirIndex]>>> =
        LazyLock::new(Default::default);
    thread_local! {
        // The containers of one file ask about the same directory one after another.
        static LAST: std::cell::RefCell<Option<(PathBuf, &'static [&'static DirIndex])>> =
            const { std::cell::RefCell::new(None) };
    }
    let last = LAST.with_borrow(|l| {
        l.as_ref()
            .filter(|(d, _)| d.as_os_str() == dir.as_os_str())
            .map(|(_, found)| *found)
    });
    if let Some(found) = last {
        return found;
    }
    let cached = ABOVE.lock().ok().and_then(|m| m.get(dir).copied());
    if let Some(hit) = cached {
        LAST.set(Some((dir.to_path_buf(), hit)));
        return hit;
    }
    let found: Vec<&'static DirIndex> = dir
        .ancestors()
        .take(MAX_UP + 1)
        .map(|a| {
            if a.as_os_str().is_empty() {
                Path::new(".")
            } else {
                a
            }
        })
        .filter_map(index)
        .filter(|i| !i.artifacts.is_empty() || !i.services.is_empty())
        .collect();
    let found: &'static [&'static DirIndex] = Box::leak(found.into_boxed_slice());
    if let Ok(mut m) = ABOVE.lock() {
        m.insert(dir.to_path_buf(), found);
    }
    LAST.set(Some((dir.to_path_buf(), found)));
    found
}

fn index(dir: &Path) -> Option<&'static DirIndex> {
    if let Some(hit) = DIRS.lock().ok()?.get(dir) {
        return Some(hit);
    }
    let mut index = DirIndex {
        artifacts: skaffold(dir),
        ..DirIndex::default()
    };
    for sub in SERVICE_DIRS {
        let Ok(entries) = std::fs::read_dir(dir.join(sub)) else {
            continue;
        };
        for e in entries.flatten() {
            if !e.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            let dockerfile = e.path().join("Dockerfile");
            if dockerfile.is_file() {
                if let Some(name) = e.file_name().to_str() {
                    index
                        .services
                        .entry(name.to_ascii_lowercase())
                        .or_insert(dockerfile);
                }
            }
        }
    }
    let index: &'static DirIndex = Box::leak(Box::new(index));
    DIRS.lock().ok()?.insert(dir.to_path_buf(), index);
    Some(index)
}

fn dockerfile_facts(path: &Path) -> Option<&'static BuildFacts> {
    if let Some(hit) = DOCKERFILES.lock().ok()?.get(path) {
        return *hit;
    }
    let facts = read(path).map(|f| &*Box::leak(Box::new(f)));
    DOCKERFILES.lock().ok()?.insert(path.to_path_buf(), facts);
    facts
}

/// The artifacts of a `skaffold.yaml` in `dir`: the image each builds and its Dockerfile.
fn skaffold(dir: &Path) -> Vec<(String, PathBuf)> {
    let Ok(text) = std::fs::read_to_string(dir.join("skaffold.yaml")) else {
        return Vec::new();
    };
    let y = crate::yaml::parse(&text, 0);
    let mut out = Vec::new();
    for doc in &y.docs {
        let Some(root) = doc.root else { continue };
        let Some(artifacts) = y.path(root, &["build", "artifacts"]) else {
            continue;
        };
        for &a in y.items(artifacts) {
            let Some(image) = y.get_str(a, "image") else {
                continue;
            };
            let context = y.get_str(a, "context").unwrap_or(".");
            let dockerfile = y
                .get(a, "docker")
                .and_then(|d| y.get_str(d, "dockerfile"))
                .unwrap_or("Dockerfile");
            out.push((image.to_string(), dir.join(context).join(dockerfile)));
        }
    }
    out
}

fn read(path: &Path) -> Option<BuildFacts> {
    let text = std::fs::read_to_string(path).ok()?;
    let (language, why) = judge(&text)?;
    let main = (language == "go")
        .then(|| path.parent().and_then(super::gomod::in_dir))
        .flatten()
        .map(std::sync::Arc::new);
    Some(BuildFacts {
        dockerfile: path.to_string_lossy().trim_start_matches("./").to_string(),
        language,
        why,
        main,
    })
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

/// The runtime a Dockerfile's final stage runs, and why.
fn judge(text: &str) -> Option<(&'static str, String)> {
    // Line continuations joined, comments dropped.
    let joined = text.replace("\\\r\n", " ").replace("\\\n", " ");
    let mut stages: Vec<(String, Vec<String>)> = Vec::new();
    for line in joined.lines() {
        let l = line.trim();
        if l.starts_with('#') || l.is_empty() {
            continue;
        }
        let (instr, rest) = l.split_once(char::is_whitespace).unwrap_or((l, ""));
        if instr.eq_ignore_ascii_case("FROM") {
            let base = rest
                .split_whitespace()
                .find(|w| !w.starts_with("--"))
                .unwrap_or("")
                .to_string();
            stages.push((base, Vec::new()));
        } else if let Some((_, lines)) = stages.last_mut() {
            lines.push(l.to_string());
        }
    }
    let (base, lines) = stages.last()?;
    let go_built = stages.iter().any(|(b, ls)| {
        super::catalog::image_repo(b).rsplit('/').next() == Some("golang")
            || ls.iter().any(|l| {
                let u = l.to_ascii_lowercase();
                u.starts_with("run") && (u.contains("go build") || u.contains("go install"))
            })
    });
    // The final stage's own program.
    let program = lines.iter().rev().find_map(|l| {
        let (instr, rest) = l.split_once(char::is_whitespace)?;
        if !(instr.eq_ignore_ascii_case("ENTRYPOINT") || instr.eq_ignore_ascii_case("CMD")) {
            return None;
        }
        let rest = rest.trim();
        let words: Vec<String> = if rest.starts_with('[') {
            serde_json::from_str(rest).ok()?
        } else {
            rest.split_whitespace().map(str::to_string).collect()
        };
        let refs: Vec<&str> = words.iter().map(String::as_str).collect();
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
    let base_name = super::catalog::image_repo(base).to_ascii_lowercase();
    let last = base_name.rsplit('/').next().unwrap_or(&base_name);
    if !BARE.contains(&last) {
        let by_base = super::catalog::lookup(base)
            .map(|(e, _)| e.language.as_str())
            .or_else(|| super::signs::image_sign(base).map(|(_, l)| l));
        if let Some(lang) = by_base.filter(|l| *l != "shell") {
            return Some((lang, format!("its final stage is FROM {base}")));
        }
    }
    go_built.then(|| {
        (
            "go",
            format!("it builds a Go program and runs it on FROM {base}"),
        )
    })
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
    }
}
