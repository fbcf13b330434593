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

    /// The evidence, appended to `s`: "from image sha256:0123456789ab: Go 1.24.3 (/app/server),
    /// links go.uber.org/automaxprocs v1.6.0", control characters escaped (an image's words are
    /// its author's). Written into the caller's string: a warm `--inspect-images` run gives it for
    /// every container with findings (28,658 times on the bench's corpus), and a string of its
    /// own built from `format!` pieces was four allocations a time.
    pub fn describe_to(&self, s: &mut String) {
        let start = s.len();
        self.describe_raw(s);
        if let std::borrow::Cow::Owned(escaped) = crate::text::printable(&s[start..]) {
            s.truncate(start);
            s.push_str(&escaped);
        }
    }

    /// [`ImageFacts::describe_to`] before control characters are escaped.
    fn describe_raw(&self, s: &mut String) {
        use std::fmt::Write as _;
        let _ = write!(s, "from image {}: ", self.short_digest());
        match &self.kind {
            Runtime::Go(g) => {
                let v = g.go_version.strip_prefix("go").unwrap_or(&g.go_version);
                let _ = write!(s, "Go {v} ({})", g.path);
                if let Some(v) = g.default_godebug("containermaxprocs") {
                    let _ = write!(
                        s,
                        ", built with DefaultGODEBUG containermaxprocs={v} (a go.mod go line before 1.25)"
                    );
                }
                // The modules the catalog knows to size GOMAXPROCS or GOMEMLIMIT themselves.
                for f in &crate::go::catalog::CATALOG.frameworks {
                    if let Some(v) = g.dep(&f.import) {
                        let _ = write!(s, ", links {} {v}", f.import);
                    }
                }
            }
            Runtime::OtherElf { path } => {
                let _ = write!(s, "{path} is an ELF executable without Go build info");
            }
            Runtime::Interpreter { language, why } => {
                let _ = write!(s, "{why} ({language})");
            }
            Runtime::Unknown(why) => s.push_str(why),
        }
        for name in ["GOMAXPROCS", "GOMEMLIMIT", "GOGC", "GODEBUG"] {
            if let Some(v) = self.env_var(name) {
                let _ = write!(s, ", ENV {name}={v}");
            }
        }
    }
}

/// What reading images found, by image reference as the manifests write it, for
/// [`crate::runtime::GoView::decide`] to look up for every container. Owned by the run (see
/// [`crate::project::Project`]): the CLI fills it before linting, or (a warm `--offline` run)
/// has it ask the cache for each image the first time a container names it, so the inputs are
/// not read and parsed once more just to list their images; the language server adds the images
/// of each document as it first sees them (from the disk cache only).
#[derive(Default)]
pub struct Inspected {
    known: HashMap<String, Result<ImageFacts, String>>,
    on_demand: Option<OnDemand>,
}

/// How an image is looked up on demand: its facts, why they are missing, or None when the
/// reference names no registry image (a template, `ko://…`).
pub type Lookup = Box<dyn Fn(&str) -> Option<Result<ImageFacts, String>> + Send + Sync>;

/// The images asked for so far, each looked up once whichever thread asks first; an answer stays
/// in place for the rest of the run, so a container's runtime view borrows it as it borrows the
/// rest of the project.
struct OnDemand {
    look: Lookup,
    /// Hashed with foldhash: every container of a warm run asks here (18,714 on the bench's
    /// 10,000 files), and the default hasher was a visible part of that.
    slots: std::sync::Mutex<HashMap<String, usize, foldhash::fast::RandomState>>,
    answers: Slots<Option<Result<ImageFacts, String>>>,
}

impl Inspected {
    /// Records what reading images found; an image already recorded keeps its first answer.
    pub fn remember(&mut self, facts: HashMap<String, Result<ImageFacts, String>>) {
        for (image, result) in facts {
            self.known.entry(image).or_insert(result);
        }
    }

    /// Answer every image not recorded with `look`, the first time a container asks for it.
    pub fn look_up_on_demand(&mut self, look: Lookup) {
        self.on_demand = Some(OnDemand {
            look,
            slots: Default::default(),
            answers: Slots::default(),
        });
    }

    /// Whether `image` was recorded (read, or found unreadable).
    pub fn is_known(&self, image: &str) -> bool {
        self.known.contains_key(image)
    }

    /// What inspecting `image` gave, when it was inspected: the facts, or why they are missing.
    pub fn get(&self, image: &str) -> Option<&Result<ImageFacts, String>> {
        if let Some(d) = &self.on_demand {
            if let Some(known) = self.known.get(image) {
                return Some(known);
            }
            return d.get(image);
        }
        // Most runs read no image: their containers skip the hashing.
        if self.known.is_empty() {
            return None;
        }
        self.known.get(image)
    }

    /// The images looked up on demand so far, with what each gave, in no order.
    pub fn looked_up(&self) -> Vec<(String, &Result<ImageFacts, String>)> {
        let Some(d) = &self.on_demand else {
            return Vec::new();
        };
        let slots: Vec<(String, usize)> = match d.slots.lock() {
            Ok(s) => s.iter().map(|(k, &v)| (k.clone(), v)).collect(),
            Err(_) => return Vec::new(),
        };
        slots
            .into_iter()
            .filter_map(|(image, slot)| Some((image, d.answers.get(slot)?.get()?.as_ref()?)))
            .collect()
    }
}

impl OnDemand {
    fn get(&self, image: &str) -> Option<&Result<ImageFacts, String>> {
        let slot = {
            let mut slots = self.slots.lock().ok()?;
            match slots.get(image) {
                Some(&slot) => slot,
                None => {
                    let slot = slots.len();
                    slots.insert(image.to_string(), slot);
                    slot
                }
            }
        };
        // Looked up outside the lock: other images are looked up meanwhile, and a thread
        // asking for the same one waits for this answer rather than reading it again.
        self.answers
            .get(slot)?
            .get_or_init(|| (self.look)(image))
            .as_ref()
    }
}

/// The first chunk's slots; each further chunk doubles them.
const FIRST_CHUNK: usize = 64;

/// Slots filled once each, allocated in chunks as they are reached and never moved, so that what
/// one holds can be borrowed while others fill.
struct Slots<T> {
    chunks: Box<[std::sync::OnceLock<Chunk<T>>]>,
}

type Chunk<T> = Box<[std::sync::OnceLock<T>]>;

impl<T> Default for Slots<T> {
    fn default() -> Self {
        // 48 doublings of 64 slots: more than any run can ask for.
        Slots {
            chunks: (0..48).map(|_| std::sync::OnceLock::new()).collect(),
        }
    }
}

impl<T> Slots<T> {
    /// Slot `i`, its chunk allocated when first reached.
    fn get(&self, i: usize) -> Option<&std::sync::OnceLock<T>> {
        let n = i.checked_add(FIRST_CHUNK)?;
        let chunk = (n.ilog2() - FIRST_CHUNK.ilog2()) as usize;
        let start = FIRST_CHUNK << chunk;
        let slots = self
            .chunks
            .get(chunk)?
            .get_or_init(|| (0..start).map(|_| std::sync::OnceLock::new()).collect());
        slots.get(n - start)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
    use std::sync::Arc;

    fn facts(digest: &str) -> ImageFacts {
        ImageFacts {
            digest: digest.to_string(),
            kind: Runtime::Unknown(String::new()),
            env: Vec::new(),
            entrypoint: Vec::new(),
            from_cmd: false,
            bytes_read: 0,
            image_size: 0,
        }
    }

    /// The evidence quotes the image's own words with what acts on a terminal escaped, and
    /// escapes only what it appends: the caller's text before it stays as it was.
    #[test]
    fn image_evidence_escapes_only_what_it_appends() {
        let mut f = facts("sha256:0123456789abcdef");
        f.kind = Runtime::Go(GoSummary {
            path: "/app\u{1b}[31m".into(),
            go_version: "go1.24.3".into(),
            deps: Vec::new(),
            default_godebug: String::new(),
        });
        f.env = vec![("GOMAXPROCS".into(), "4\u{7}".into())];
        let raw =
            "from image sha256:0123456789ab: Go 1.24.3 (/app\u{1b}[31m), ENV GOMAXPROCS=4\u{7}";
        let escaped = crate::text::printable(raw);
        assert_ne!(escaped, raw, "the oracle escapes nothing");
        let before = "kept\u{1b} as is; ";
        let mut s = before.to_string();
        f.describe_to(&mut s);
        assert_eq!(s, format!("{before}{escaped}"));
        let mut alone = String::new();
        f.describe_to(&mut alone);
        assert_eq!(alone, escaped);
    }

    /// Thousands of images asked for from several threads, each many times: every one is looked
    /// up once, every answer is its own and stays where it was borrowed.
    #[test]
    fn images_asked_on_demand_are_looked_up_once_each() {
        let calls = Arc::new(AtomicUsize::new(0));
        let counted = calls.clone();
        let mut inspected = Inspected::default();
        inspected.look_up_on_demand(Box::new(move |image| {
            counted.fetch_add(1, Relaxed);
            match image.strip_prefix("bad/") {
                Some(why) => Some(Err(why.to_string())),
                None if image.contains("{{") => None,
                None => Some(Ok(facts(image))),
            }
        }));
        let images: Vec<String> = (0..5000).map(|i| format!("acme/svc-{i}:v1")).collect();
        let inspected = &inspected;
        let borrowed: Vec<Vec<&ImageFacts>> = std::thread::scope(|s| {
            let threads: Vec<_> = (0..4)
                .map(|t| {
                    let images = &images;
                    s.spawn(move || {
                        let mut seen = Vec::new();
                        for round in 0..3 {
                            for (i, image) in images.iter().enumerate() {
                                if (i + t + round) % 2 == 0 {
                                    let f = inspected.get(image).unwrap().as_ref().unwrap();
                                    assert_eq!(f.digest, *image);
                                    seen.push(f);
                                }
                            }
                        }
                        seen
                    })
                })
                .collect();
            threads.into_iter().map(|t| t.join().unwrap()).collect()
        });
        assert_eq!(calls.load(Relaxed), images.len());
        for f in borrowed.into_iter().flatten() {
            assert!(f.digest.starts_with("acme/svc-"));
        }
        assert_eq!(
            inspected.get("bad/unreadable"),
            Some(&Err("unreadable".to_string()))
        );
        assert_eq!(inspected.get("{{ .Values.image }}"), None);
        assert_eq!(inspected.get("{{ .Values.image }}"), None);
        assert_eq!(calls.load(Relaxed), images.len() + 2);
        // What was looked up, for the notes: the answered images, not the templates.
        assert_eq!(inspected.looked_up().len(), images.len() + 1);
    }
}
