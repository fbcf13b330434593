//! What a container image's files say about the program it runs.
//!
//! The manifest alone only suggests that a container runs Go (see the `runtime` module); the
//! binary in the image says it for certain, with the toolchain that built it, the modules it
//! links (`go.uber.org/automaxprocs`, `github.com/KimMachineGun/automemlimit`, which set
//! GOMAXPROCS and GOMEMLIMIT themselves) and the default GODEBUG its go.mod's go line chose.
//! [`buildinfo`] reads that from an executable's bytes, as `go version -m` prints it.

pub mod buildinfo;

#[cfg(feature = "images")]
pub mod layers;
#[cfg(feature = "images")]
pub mod registry;

use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// What reading one image from its registry found (`lint --inspect-images`): the program its
/// entrypoint runs and the environment its config sets. Cached as JSON by digest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImageFacts {
    /// The digest of the (platform's) image manifest: `sha256:…`.
    pub digest: String,
    /// What the entrypoint runs.
    pub kind: Runtime,
    /// The config's `Env`, in order.
    pub env: Vec<(String, String)>,
    /// The config's `Entrypoint` followed by its `Cmd`: the argv the image runs
    /// ([`ImageFacts::from_cmd`] says the program itself came from `Cmd`).
    pub entrypoint: Vec<String>,
    /// The program came from `Cmd` (no `Entrypoint`): a container's `args` replace it.
    #[serde(default)]
    pub from_cmd: bool,
    /// Compressed layer bytes read to find the entrypoint.
    pub bytes_read: u64,
    /// Compressed size of all layers.
    pub image_size: u64,
}

/// The program an image's entrypoint runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Runtime {
    /// A Go executable, with what its build info says.
    Go(GoSummary),
    /// An ELF executable without Go build info (C, Rust, a stripped Go binary).
    OtherElf { path: String },
    /// An interpreter runs the program (`python`, `java`, `node`, `shell`, …).
    Interpreter { language: String, why: String },
    /// The entrypoint could not be classified: why.
    Unknown(String),
}

/// The parts of a Go executable's build info that the rules use.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GoSummary {
    /// The file in the image.
    pub path: String,
    /// `go1.24.3`.
    pub go_version: String,
    /// Dependency modules: path and version.
    pub deps: Vec<(String, String)>,
    /// The build setting `DefaultGODEBUG` (empty when absent): the go line's GODEBUG defaults.
    pub default_godebug: String,
}

impl GoSummary {
    pub fn from_build_info(path: &str, b: &buildinfo::BuildInfo) -> GoSummary {
        GoSummary {
            path: path.to_string(),
            go_version: b.go_version.clone(),
            deps: b
                .deps
                .iter()
                .map(|m| (m.path.clone(), m.version.clone()))
                .collect(),
            default_godebug: b.setting("DefaultGODEBUG").unwrap_or("").to_string(),
        }
    }

    /// The version of a dependency module.
    pub fn dep(&self, path: &str) -> Option<&str> {
        self.deps
            .iter()
            .find(|(p, _)| p == path)
            .map(|(_, v)| v.as_str())
    }

    /// The build's default for one GODEBUG key (the last setting counts).
    pub fn default_godebug(&self, key: &str) -> Option<&str> {
        crate::go::godebug_value(&self.default_godebug, key)
    }
}

impl ImageFacts {
    /// `sha256:0123456789ab`: the digest as the evidence names it.
    pub fn short_digest(&self) -> &str {
        let end = self.digest.find(':').map_or(12, |i| i + 13);
        // The digest comes from a registry or the cache: it may be short, or not ASCII.
        self.digest.get(..end).unwrap_or(&self.digest)
    }

    /// The language the image runs, when it says.
    pub fn language(&self) -> Option<&str> {
        match &self.kind {
            Runtime::Go(_) => Some("go"),
            Runtime::OtherElf { .. } => Some("other"),
            Runtime::Interpreter { language, .. } => Some(language),
            Runtime::Unknown(_) => None,
        }
    }

    pub fn go(&self) -> Option<&GoSummary> {
        match &self.kind {
            Runtime::Go(g) => Some(g),
            _ => None,
        }
    }

    /// A variable of the image's `Env` (the last one counts).
    pub fn env_var(&self, name: &str) -> Option<&str> {
        self.env
            .iter()
            .rev()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The evidence: "from image sha256:0123456789ab: Go 1.24.3 (/app/server), links
    /// go.uber.org/automaxprocs v1.6.0".
    pub fn describe(&self) -> String {
        crate::text::printable(&self.describe_raw()).into_owned()
    }

    /// [`ImageFacts::describe`] before control characters (an image's words are its author's)
    /// are escaped.
    fn describe_raw(&self) -> String {
        let mut s = format!("from image {}: ", self.short_digest());
        match &self.kind {
            Runtime::Go(g) => {
                let v = g.go_version.strip_prefix("go").unwrap_or(&g.go_version);
                s.push_str(&format!("Go {v} ({})", g.path));
                if let Some(v) = g.default_godebug("containermaxprocs") {
                    s.push_str(&format!(
                        ", built with DefaultGODEBUG containermaxprocs={v} (a go.mod go line before 1.25)"
                    ));
                }
                // The modules the catalog knows to size GOMAXPROCS or GOMEMLIMIT themselves.
                for f in &crate::go::catalog::CATALOG.frameworks {
                    if let Some(v) = g.dep(&f.import) {
                        s.push_str(&format!(", links {} {v}", f.import));
                    }
                }
            }
            Runtime::OtherElf { path } => s.push_str(&format!(
                "{path} is an ELF executable without Go build info"
            )),
            Runtime::Interpreter { language, why } => {
                s.push_str(&format!("{why} ({language})"));
            }
            Runtime::Unknown(why) => s.push_str(why),
        }
        for name in ["GOMAXPROCS", "GOMEMLIMIT", "GOGC", "GODEBUG"] {
            if let Some(v) = self.env_var(name) {
                s.push_str(&format!(", ENV {name}={v}"));
            }
        }
        s
    }
}

/// What reading images found, by image reference as the manifests write it, for
/// [`crate::runtime::GoView::decide`] to look up for every container. Owned by the run (see
/// [`crate::project::Project`]): the CLI fills it once before linting, the language server adds
/// the images of each document as it first sees them (from the disk cache only).
#[derive(Default)]
pub struct Inspected(HashMap<String, Result<ImageFacts, String>>);

impl Inspected {
    /// Records what reading images found; an image already recorded keeps its first answer.
    pub fn remember(&mut self, facts: HashMap<String, Result<ImageFacts, String>>) {
        for (image, result) in facts {
            self.0.entry(image).or_insert(result);
        }
    }

    /// Whether `image` was recorded (read, or found unreadable).
    pub fn is_known(&self, image: &str) -> bool {
        self.0.contains_key(image)
    }

    /// What inspecting `image` gave, when it was inspected: the facts, or why they are missing.
    pub fn get(&self, image: &str) -> Option<&Result<ImageFacts, String>> {
        // Most runs read no image: their containers skip the hashing.
        if self.0.is_empty() {
            return None;
        }
        self.0.get(image)
    }
}
