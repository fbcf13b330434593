//! The catalog of well-known images: which program an image runs, in which language, and in which
//! releases that program sizes GOMAXPROCS or GOMEMLIMIT itself or is built with Go 1.25. It is
//! reviewed data, kept in `catalog.json` beside this file, where every entry names its source and
//! the ranges of releases come from `catalog-derived.json`, which `scripts/derive-catalog.py` reads
//! from the programs' own tags; this module loads it and matches images by exact repository, so a
//! look-alike name never borrows another program's facts.

use serde::Deserialize;
use std::sync::LazyLock;

/// Releases of a program, as image tags write them without a `v`: from `from` (inclusive; every
/// earlier release when absent) to `below` (exclusive; every later release when absent).
#[derive(Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Range {
    #[serde(default)]
    pub from: Option<String>,
    #[serde(default)]
    pub below: Option<String>,
}

/// Things a Go program does for itself, in some of its releases.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SelfSizing {
    /// How the program computes GOMAXPROCS: a name of the catalog's `formulas`. Every
    /// `gomaxprocs` names one (a test holds the catalog to it).
    #[serde(default)]
    pub formula: Option<String>,
    /// The releases that do it by default: several ranges when a maintenance branch took it up
    /// later or a release dropped it; empty when every release does.
    #[serde(default)]
    pub releases: Vec<Range>,
    /// How: "links go.uber.org/automaxprocs", "--auto-gomemlimit, on by default".
    pub how: String,
    pub source: String,
}

/// A [`Formula`] for the releases `from` (inclusive) to `before` (exclusive), as image tags
/// write them without a `v`; an open end holds every release on that side.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Ranged {
    #[serde(default)]
    pub from: Option<String>,
    #[serde(default)]
    pub before: Option<String>,
    pub does: Formula,
    /// Where the source says so: a line of a file at a release, which
    /// `tests/heavy/sizing_source.rs` reads through the Go module proxy.
    #[serde(default)]
    pub evidence: Vec<Evidence>,
}

/// One line of a program's source at a release.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Evidence {
    /// The Go module and its version (`v1.103.0`).
    pub module: String,
    pub version: String,
    /// The file, relative to the module's root.
    pub file: String,
    /// A line of it, trimmed, as it is written there; `absent` when the point is that no line
    /// of the file says it (the release before a change).
    pub line: String,
    #[serde(default)]
    pub absent: bool,
}

/// How a program sets GOMAXPROCS itself (Go source: `runtime.GOMAXPROCS(n)` with n > 0 sets
/// `sched.customGOMAXPROCS`, which turns the Go 1.25 runtime's own limit-following off for the
/// rest of the process; `runtime/debug.go`, `runtime/proc.go` sysmonUpdateGOMAXPROCS).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Formula {
    /// The program leaves GOMAXPROCS to the Go runtime.
    GoRuntime,
    /// `runtime.GOMAXPROCS(max(min, round(quota)))` once at start-up, when the cgroup has a CPU
    /// quota it reads and the environment does not stop it; no quota, no call.
    Quota {
        round: Rounding,
        min: i64,
        /// Never more than the CPUs the process may use (`runtime.NumCPU`).
        #[serde(default)]
        at_most_cpus: bool,
        /// Reads only cgroup v1's `cpu.cfs_quota_us`: on a cgroup v2 node it finds no quota.
        #[serde(default)]
        cgroup_v1_only: bool,
        env: EnvStops,
    },
    /// `runtime.GOMAXPROCS(runtime.NumCPU())` at start-up, unless the environment stops it.
    NodeCpus { env: EnvStops },
    /// `runtime.GOMAXPROCS(flag)`, the flag defaulting to `default`, or to the variable `env`
    /// when it is set and not empty; a value of 0 or less changes nothing.
    Flag {
        flag: String,
        default: i64,
        #[serde(default)]
        env: Option<String>,
    },
}

/// How the quota becomes a whole number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Rounding {
    /// `int(q)`, `math.Floor`.
    Floor,
    /// `int(q + 0.5)`: 1.5 gives 2.
    Nearest,
}

/// Which GOMAXPROCS in the environment makes the program leave GOMAXPROCS alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EnvStops {
    /// Any, even empty (`os.LookupEnv`).
    Set,
    /// One that is not empty (`os.Getenv(..) != ""`).
    NotEmpty,
}

impl SelfSizing {
    /// The formula for an image's release: the first item of the named formula whose range
    /// holds it. An item with a range needs a release the tag shows; an image without a tag, or
    /// tagged `latest`, is taken to be the newest release.
    pub fn formula_for(&self, image: Option<&ImageRef>) -> Option<&'static Formula> {
        CATALOG
            .formulas
            .get(self.formula.as_deref()?)?
            .iter()
            .find(|r| match (&r.from, &r.before, image) {
                (None, None, _) => true,
                (_, _, None) => false,
                (from, before, Some(i)) => {
                    let range = Range {
                        from: from.clone(),
                        below: before.clone(),
                    };
                    release_in(i, std::slice::from_ref(&range)) == Some(true)
                }
            })
            .map(|r| &r.does)
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// The image repositories that publish this program, each with its registry host
    /// (`quay.io/prometheus/prometheus`, `docker.io/library/nginx`): an image matches only its own
    /// repository, or a mirror of it listed in [`Catalog::mirrors`].
    pub repositories: Vec<String>,
    pub program: String,
    /// `go`, or the other language the program is written in.
    pub language: String,
    pub source: String,
    #[serde(default)]
    pub gomaxprocs: Option<SelfSizing>,
    #[serde(default)]
    pub gomemlimit: Option<SelfSizing>,
    /// The releases whose main module says `go 1.25` or later, whose runtime itself follows the
    /// CPU limit: several ranges when maintenance branches moved after a newer minor release.
    #[serde(default)]
    pub go_1_25: Vec<Range>,
    #[serde(default)]
    pub source_go_1_25: Option<String>,
}

impl Entry {
    pub fn is_go(&self) -> bool {
        self.language == "go"
    }
}

/// A Go package whose import makes a main package size itself at start-up.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Framework {
    /// The import path (a package, or a module whose packages all count).
    pub import: String,
    #[serde(default)]
    pub gomaxprocs: Option<SelfSizing>,
    #[serde(default)]
    pub gomemlimit: Option<SelfSizing>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Catalog {
    pub images: Vec<Entry>,
    pub frameworks: Vec<Framework>,
    /// How programs size GOMAXPROCS, by name, each a list of [`Ranged`] formulas.
    #[serde(default)]
    pub formulas: std::collections::BTreeMap<String, Vec<Ranged>>,
    /// Registries (or a registry path) that serve the same repositories as another.
    pub mirrors: Vec<Mirror>,
}

/// A registry that copies another's repositories under the same paths: `k8s.gcr.io/pause` is
/// `registry.k8s.io/pause`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Mirror {
    /// A registry host, or a host and path prefix (`public.ecr.aws/docker/library`).
    pub mirror: String,
    /// What it copies, written the same way.
    pub of: String,
    pub why: String,
    pub source: String,
}

pub static CATALOG: LazyLock<Catalog> = LazyLock::new(|| {
    // The file is part of the build and checked by a unit test: a parse error is a bug here.
    serde_json::from_str(include_str!("catalog.json")).expect("catalog.json is valid")
});

/// Words in an image's last path segment that name a tool built around another program (an
/// exporter for Redis, an operator for PostgreSQL): these are usually Go, so the other program's
/// name says nothing about their runtime.
pub const WRAPPER_WORDS: &[&str] = &[
    "exporter",
    "operator",
    "controller",
    "webhook",
    "injector",
    "provisioner",
    "reloader",
    "admission",
    "csi",
    "cni",
    "driver",
    "sidecar",
];

/// An image reference read once per container: the repository without registry, tag or digest
/// (`docker.io/library/nginx:1.27` gives `library/nginx`), its last segment (`nginx`) and the tag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImageRef<'a> {
    pub image: &'a str,
    pub repo: &'a str,
    pub name: &'a str,
    pub tag: Option<&'a str>,
}

impl<'a> ImageRef<'a> {
    pub fn parse(image: &'a str) -> ImageRef<'a> {
        let no_digest = image.split_once('@').map_or(image, |(name, _)| name);
        // A tag follows the first ':' after the last '/' (a registry port comes before a '/').
        let name_start = no_digest.rfind('/').map_or(0, |i| i + 1);
        let (no_tag, tag) = match no_digest[name_start..].split_once(':') {
            Some((name, tag)) => (&no_digest[..name_start + name.len()], Some(tag)),
            None => (no_digest, None),
        };
        let repo = match no_tag.split_once('/') {
            Some((first, rest)) if first.contains(['.', ':']) || first == "localhost" => rest,
            _ => no_tag,
        };
        ImageRef {
            image,
            repo,
            name: &no_tag[name_start..],
            tag: tag.filter(|t| !t.is_empty()),
        }
    }
}

/// The repository name of an image: [`ImageRef::repo`].
pub fn image_repo(image: &str) -> &str {
    ImageRef::parse(image).repo
}

/// Words a tag adds to a version to name a build flavour, not a program.
const FLAVOURS: &[&str] = &[
    "alpine",
    "slim",
    "debian",
    "bookworm",
    "bullseye",
    "buster",
    "trixie",
    "ubuntu",
    "jammy",
    "noble",
    "focal",
    "distroless",
    "static",
    "nonroot",
    "rootless",
    "scratch",
    "amd64",
    "arm64",
    "windows",
    "ubi",
    "minimal",
    "musl",
    "glibc",
    "fips",
    "debug",
    "dev",
    "rc",
    "beta",
    "alpha",
    "cuda",
    "cpu",
    "gpu",
    "full",
    "lite",
    "light",
    "root",
    "main",
    "latest",
    "stable",
    "edge",
];

/// The service a tag names after its version, in repositories that publish every service of a
/// project under one image name (`ghcr.io/acme/demo:2.1.3-checkout` is the `checkout` service).
pub fn service_of_tag(tag: &str) -> Option<&str> {
    let t = tag.strip_prefix('v').unwrap_or(tag);
    let rest = t.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.');
    if rest.len() == t.len() {
        return None;
    }
    let name = rest.strip_prefix(['-', '_'])?;
    let plain = name
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_');
    let first = name.split(['-', '_']).next().unwrap_or(name);
    let flavour = FLAVOURS.contains(&first)
        || first.starts_with("py")
        || first.starts_with("jdk")
        || first.starts_with("jre")
        || first.starts_with('r') && first[1..].bytes().all(|b| b.is_ascii_digit());
    (plain
        && name.len() > 1
        && !flavour
        && first.bytes().next().is_some_and(|b| b.is_ascii_lowercase()))
    .then_some(name)
}

/// The repository an image names, written as the catalog writes it: registry host and path,
/// lowercase, with Docker's implied host (`docker.io`) and namespace (`library/`) made explicit and
/// a known mirror replaced by the registry it copies (`nginx:1.27` and
/// `public.ecr.aws/docker/library/nginx` both give `docker.io/library/nginx`).
pub fn repository(image: &str) -> String {
    let no_digest = image.split_once('@').map_or(image, |(name, _)| name);
    let name_start = no_digest.rfind('/').map_or(0, |i| i + 1);
    let no_tag = match no_digest[name_start..].split_once(':') {
        Some((name, _)) => &no_digest[..name_start + name.len()],
        None => no_digest,
    };
    canonical_repository(no_tag)
}

/// [`repository`] for a name without tag or digest.
fn canonical_repository(name: &str) -> String {
    let name = name.to_ascii_lowercase();
    let mut full = match name.split_once('/') {
        Some((first, _)) if first.contains(['.', ':']) || first == "localhost" => name,
        _ => format!("docker.io/{name}"),
    };
    // Mirrors are written as their origin is, so one pass suffices.
    if let Some(m) = CATALOG.mirrors.iter().find(|m| {
        full.strip_prefix(m.mirror.as_str())
            .is_some_and(|rest| rest.starts_with('/'))
    }) {
        full = format!("{}{}", m.of, &full[m.mirror.len()..]);
    }
    if let Some(path) = full.strip_prefix("docker.io/") {
        if !path.contains('/') {
            full = format!("docker.io/library/{path}");
        }
    }
    full
}

/// The catalog's repositories, each written as [`repository`] gives it.
struct Index {
    by_repository: foldhash::HashMap<&'static str, &'static Entry>,
}

static INDEX: LazyLock<Index> = LazyLock::new(|| {
    let mut index = Index {
        by_repository: Default::default(),
    };
    for entry in &CATALOG.images {
        for repo in &entry.repositories {
            let repo = repo.as_str();
            index.by_repository.entry(repo).or_insert(entry);
        }
    }
    index
});

/// The catalog entry for an image, and the repository that matched: only the exact repository
/// (after [`repository`]'s normalisation) matches, so `node-problem-detector` is not Node.js and
/// `cert-manager-webhook-pdns` is not cert-manager.
pub fn lookup(image: &str) -> Option<(&'static Entry, &'static str)> {
    lookup_ref(&ImageRef::parse(image))
}

/// [`lookup`] for a reference already read.
pub fn lookup_ref(r: &ImageRef) -> Option<(&'static Entry, &'static str)> {
    let repo = repository(r.image);
    INDEX
        .by_repository
        .get_key_value(repo.as_str())
        .map(|(name, entry)| (*entry, *name))
}

/// The entry for a service a tag names in a repository that publishes every service of a project
/// under one image (`ghcr.io/open-telemetry/demo:2.1.3-kafka`): the service name read as the
/// repository of Docker's official image of that name, else Bitnami's (`docker.io/bitnami/kafka`).
/// A generic name (`frontend`) names no such repository.
pub fn lookup_service(service: &str) -> Option<(&'static Entry, &'static str)> {
    if service.contains(['/', ':', '@']) {
        return None;
    }
    let service = service.to_ascii_lowercase();
    ["docker.io/library/", "docker.io/bitnami/"]
        .iter()
        .find_map(|namespace| {
            INDEX
                .by_repository
                .get_key_value(format!("{namespace}{service}").as_str())
        })
        .map(|(name, entry)| (*entry, *name))
}

/// A release number from an image tag: `v3.1.0`, `3.1`, `2.53.1-distroless` give (3, 1, 0),
/// (3, 1, 0), (2, 53, 1). None for tags that name no release (`latest`, `main`, a commit).
pub fn tag_release(tag: &str) -> Option<(u32, u32, u32)> {
    let t = tag.strip_prefix('v').unwrap_or(tag);
    let mut parts = t
        .split(|c: char| !c.is_ascii_digit())
        .take_while(|p| !p.is_empty());
    let major = parts.next()?.parse().ok()?;
    // A bare number is a build or a date, not a release.
    let minor = parts.next()?.parse().ok()?;
    let patch = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
    Some((major, minor, patch))
}

/// Whether an image's release is in one of `ranges`: Some(true/false) when the tag names a
/// release; for no tag, `latest` and the tags of a development branch's tip (`main`, `master`,
/// `edge`, `nightly`), which are newer than every release, whether the last range is open; None
/// when the tag says nothing.
pub fn release_in(image: &ImageRef, ranges: &[Range]) -> Option<bool> {
    let bound = |v: &Option<String>| v.as_deref().and_then(tag_release);
    let newest = || ranges.iter().any(|r| r.below.is_none());
    let Some(tag) = image.tag else {
        // An image pinned only by digest: no release to read.
        return (!image.image.contains('@')).then(newest);
    };
    if matches!(
        tag,
        "latest" | "main" | "master" | "edge" | "nightly" | "dev"
    ) {
        return Some(newest());
    }
    let have = tag_release(tag)?;
    Some(ranges.iter().any(|r| {
        bound(&r.from).is_none_or(|from| have >= from)
            && bound(&r.below).is_none_or(|below| have < below)
    }))
}

/// Whether a fact given by ranges holds for an image: every release when there are none.
pub fn holds_for(image: &ImageRef, ranges: &[Range]) -> bool {
    ranges.is_empty() || release_in(image, ranges) == Some(true)
}

/// The releases as the notes give them: "since release 3.0.0" for one open range, else "in
/// releases 3.5.28 up to 3.6.0 (not included), and from 3.6.9".
pub fn describe_releases(ranges: &[Range]) -> String {
    match ranges {
        [Range {
            from: Some(v),
            below: None,
        }] => format!("since release {v}"),
        _ => format!("in releases {}", describe_ranges(ranges)),
    }
}

fn describe_ranges(ranges: &[Range]) -> String {
    let parts: Vec<String> = ranges
        .iter()
        .map(|r| match (&r.from, &r.below) {
            (Some(f), Some(b)) => format!("{f} up to {b} (not included)"),
            (Some(f), None) => format!("from {f}"),
            (None, Some(b)) => format!("below {b}"),
            (None, None) => "every release".to_string(),
        })
        .collect();
    parts.join(", and ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ranges in order, each non-empty, apart from each other, with releases a tag can name.
    fn assert_ranges(ranges: &[Range], program: &str) {
        let v = |s: &Option<String>| {
            s.as_deref()
                .map(|s| tag_release(s).unwrap_or_else(|| panic!("{program}: release {s}")))
        };
        for (i, r) in ranges.iter().enumerate() {
            assert!(
                r.from.is_some() || r.below.is_some(),
                "{program}: an empty range"
            );
            if let (Some(f), Some(b)) = (v(&r.from), v(&r.below)) {
                assert!(f < b, "{program}: {r:?}");
            }
            if let Some(next) = ranges.get(i + 1) {
                assert!(
                    v(&r.below).is_some() && v(&r.below) < v(&next.from),
                    "{program}"
                );
            }
        }
    }

    #[test]
    fn the_catalog_loads_and_every_entry_names_a_source() {
        assert!(CATALOG.images.len() > 50);
        for e in &CATALOG.images {
            assert!(e.source.starts_with("https://"), "{}", e.program);
            assert!(!e.repositories.is_empty(), "{}", e.program);
            for r in &e.repositories {
                // Written as an image reference normalises, so the index finds it.
                assert_eq!(&repository(r), r, "{}: write {r} in full", e.program);
                assert_eq!(
                    lookup(r).map(|(_, name)| name),
                    Some(r.as_str()),
                    "{r} is in two entries"
                );
            }
            for s in [&e.gomaxprocs, &e.gomemlimit].into_iter().flatten() {
                assert!(s.source.starts_with("https://"), "{}", e.program);
                assert!(e.is_go(), "{} sizes Go settings but is not Go", e.program);
                assert_ranges(&s.releases, &e.program);
            }
            assert_ranges(&e.go_1_25, &e.program);
            if !e.go_1_25.is_empty() {
                assert!(e.source_go_1_25.is_some(), "{}", e.program);
            }
        }
        for f in &CATALOG.frameworks {
            for s in [&f.gomaxprocs, &f.gomemlimit].into_iter().flatten() {
                assert!(s.source.starts_with("https://"), "{}", f.import);
            }
        }
        for m in &CATALOG.mirrors {
            assert!(m.source.starts_with("https://"), "{}", m.mirror);
            assert!(
                CATALOG.mirrors.iter().all(|o| o.mirror != m.of),
                "{} copies a mirror",
                m.mirror
            );
        }
    }

    /// The catalog's ranges are those `scripts/derive-catalog.py` read from the programs' own
    /// releases (go.mod `go` lines, main packages' imports) into `catalog-derived.json`.
    #[test]
    fn catalog_ranges_are_the_derived_ones() {
        let derived: serde_json::Value =
            serde_json::from_str(include_str!("catalog-derived.json")).unwrap();
        let ranges = |v: &serde_json::Value| -> Vec<Range> {
            v.as_array()
                .unwrap()
                .iter()
                .map(|r| Range {
                    from: r["from"].as_str().map(str::to_string),
                    below: r["below"].as_str().map(str::to_string),
                })
                .collect()
        };
        let programs = derived["programs"].as_array().unwrap();
        assert!(programs.len() >= 10);
        for p in programs {
            let d = &p["derived"];
            for e in p["entries"].as_array().unwrap() {
                let name = e.as_str().unwrap();
                let entry = CATALOG
                    .images
                    .iter()
                    .find(|x| x.program == name)
                    .unwrap_or_else(|| panic!("no catalog entry {name}"));
                assert_eq!(entry.go_1_25, ranges(&d["go_1_25"]), "{name}: go_1_25");
                for (fact, from) in p["checks"].as_object().unwrap() {
                    let sizing = match fact.as_str() {
                        "gomaxprocs" => entry.gomaxprocs.as_ref(),
                        _ => entry.gomemlimit.as_ref(),
                    };
                    let sizing = sizing.unwrap_or_else(|| panic!("{name}: no {fact}"));
                    let want = ranges(&d[from.as_str().unwrap()]);
                    assert_eq!(sizing.releases, want, "{name}: {fact}");
                }
            }
            // Every range boundary names the release, file and line that decided it.
            // `unreadable` lists the release tags without a go.mod, not ranges.
            for (fact, rs) in d.as_object().unwrap() {
                if fact == "unreadable" {
                    continue;
                }
                for r in rs.as_array().into_iter().flatten() {
                    let evidence = r["evidence"].as_array().unwrap();
                    let bounds = 1 + usize::from(r.get("below").is_some());
                    assert_eq!(evidence.len(), bounds, "{fact}: {r}");
                    for ev in evidence {
                        assert!(ev["tag"].is_string() && ev["file"].is_string(), "{ev}");
                    }
                }
            }
        }
    }

    #[test]
    fn every_go_entry_is_derived_or_says_why() {
        let derived: serde_json::Value =
            serde_json::from_str(include_str!("catalog-derived.json")).unwrap();
        let names = |p: &serde_json::Value, key: &str| -> Vec<String> {
            p[key]
                .as_array()
                .into_iter()
                .flatten()
                .map(|e| e.as_str().unwrap().to_string())
                .collect()
        };
        let mut named = std::collections::BTreeSet::new();
        for p in derived["programs"].as_array().unwrap() {
            let unlinked = names(p, "unlinked_entries");
            // An entry left out of the derived ranges needs the reason beside it.
            assert!(
                unlinked.is_empty() || p["note"].as_str().is_some_and(|n| !n.is_empty()),
                "{}: unlinked entries without a note",
                p["program"]
            );
            named.extend(names(p, "entries"));
            named.extend(unlinked);
        }
        for name in &named {
            assert!(
                CATALOG.images.iter().any(|e| &e.program == name),
                "no catalog entry {name}"
            );
        }
        let missing: Vec<&str> = CATALOG
            .images
            .iter()
            .filter(|e| e.is_go() && !named.contains(&e.program))
            .map(|e| e.program.as_str())
            .collect();
        assert!(missing.is_empty(), "neither derived nor noted: {missing:?}");
    }

    #[test]
    fn images_match_by_exact_repository_not_by_name_prefix() {
        let program = |image: &str| lookup(image).map(|(e, _)| e.program.as_str());
        // Other programs whose names start with a catalog program's name.
        for image in [
            "registry.k8s.io/node-problem-detector/node-problem-detector:v0.8.20",
            "registry.k8s.io/nfd/node-feature-discovery:v0.17.3",
            "nginx/nginx-ingress:5.0.0",
            "ghcr.io/nginx/nginx-gateway-fabric:2.0.0",
            "quay.io/jcmoraisjr/haproxy-ingress:v0.15.0",
            "grafana/grafana-image-renderer:v4.0.0",
            "quay.io/fabxc/prometheus_demo_service",
            "quay.io/argoproj/argo-rollouts-dashboard:v1.7",
            "ghcr.io/acme/xnginx",
            "python-worker:1",
            "acme/node-labeler:0.1.0",
        ] {
            assert_eq!(program(image), None, "{image}");
        }
        // A numeric release compared with another program's releases.
        assert_eq!(program("zachomedia/cert-manager-webhook-pdns:v2.5.2"), None);
        assert_eq!(program("acme/pilot:2.0.0"), None);
        assert_eq!(program("quay.io/cilium/cilium-envoy:v1.33"), Some("Envoy"));
        assert_eq!(
            lookup("selenium/node-chrome:4.20").map(|(e, _)| e.language.as_str()),
            Some("java")
        );
        assert_eq!(
            program("quay.io/cilium/cilium:v1.18.0"),
            Some("Cilium (agent, operator, hubble-relay)")
        );
        // The host is optional for Docker Hub, and mirrors give their origin.
        for image in [
            "nginx:1.27",
            "docker.io/nginx",
            "docker.io/library/nginx:1.27",
            "index.docker.io/library/nginx@sha256:ab",
            "public.ecr.aws/docker/library/nginx:1.27",
            "mirror.gcr.io/library/nginx",
            "NGINX:1.27",
        ] {
            assert_eq!(repository(image), "docker.io/library/nginx", "{image}");
            assert_eq!(program(image), Some("nginx"), "{image}");
        }
        assert_eq!(
            program("k8s.gcr.io/ingress-nginx/controller:v1.9.0"),
            Some("ingress-nginx controller")
        );
        let lang = |image: &str| lookup(image).map(|(e, _)| e.language.as_str());
        assert_eq!(lang("cr.l5d.io/linkerd/proxy-init:v2.4.1"), Some("go"));
        assert_eq!(lang("k8s.gcr.io/pause:3.9"), Some("c"));
        assert_eq!(
            lang("docker.io/istio/examples-bookinfo-reviews-v2:1.20"),
            Some("java")
        );
        assert_eq!(program("registry.example.com/library/nginx"), None);
        assert_eq!(program("localhost:5000/nginx"), None);
        assert_eq!(
            lookup_service("kafka").map(|(e, _)| e.language.as_str()),
            Some("java")
        );
        assert_eq!(
            lookup_service("postgresql").map(|(e, _)| e.language.as_str()),
            Some("c")
        );
        assert!(lookup_service("frontend").is_none());
        assert!(lookup_service("checkout").is_none());
    }

    /// The program and language of an image the catalog must name.
    fn found(image: &str) -> (&'static str, &'static str) {
        lookup(image)
            .map(|(e, _)| (e.program.as_str(), e.language.as_str()))
            .unwrap_or_else(|| panic!("{image} is not in the catalog"))
    }

    /// Go programs whose images the shared corpus runs and that the linter could only assume were
    /// Go: each is now an entry, found by its exact repository, with the ranges the script derived.
    #[test]
    fn go_programs_the_corpus_only_assumed_are_in_the_catalog() {
        for (image, program) in [
            ("quay.io/kiali/kiali:v2.27", "Kiali"),
            ("docker.io/fortio/fortio:latest_release", "Fortio"),
            (
                "docker.io/envoyproxy/ratelimit:30a4ce1a",
                "Envoy rate limit service",
            ),
            ("ghcr.io/spiffe/spire-server:1.5.4", "SPIRE (server, agent)"),
            ("ghcr.io/spiffe/spire-agent:1.5.4", "SPIRE (server, agent)"),
            (
                "ghcr.io/spiffe/spire-controller-manager:0.2.3",
                "SPIRE controller manager",
            ),
            ("docker.io/mccutchen/go-httpbin:v2.15.0", "go-httpbin"),
            ("traefik/whoami:latest", "Traefik whoami"),
            (
                "quay.io/argoproj/kubectl-argo-rollouts:v1.9.0",
                "Argo Rollouts",
            ),
            ("newrelic/infrastructure", "New Relic infrastructure agent"),
            (
                "ghcr.io/jkroepke/access-log-exporter:0.4.11",
                "access-log-exporter",
            ),
            (
                "registry.k8s.io/autoscaling/addon-resizer:1.8.23",
                "addon-resizer (pod nanny)",
            ),
            (
                "docker.io/bitnami/minio-object-browser:2.0.2-debian-12-r3",
                "MinIO Console (object-browser)",
            ),
        ] {
            assert_eq!(found(image), (program, "go"), "{image}");
        }
        // Kiali sizes both settings itself in the release the corpus runs.
        let kiali = lookup("quay.io/kiali/kiali:v2.27").unwrap().0;
        let image = ImageRef::parse("quay.io/kiali/kiali:v2.27");
        for sizing in [&kiali.gomaxprocs, &kiali.gomemlimit] {
            let releases = &sizing.as_ref().unwrap().releases;
            assert_eq!(release_in(&image, releases), Some(true));
        }
        // The addon-resizer the corpus runs is before its move to Go 1.25; the newest is after.
        let resizer = lookup("registry.k8s.io/autoscaling/addon-resizer")
            .unwrap()
            .0;
        let on_1_25 = |tag: &str| {
            let image = format!("registry.k8s.io/autoscaling/addon-resizer:{tag}");
            release_in(&ImageRef::parse(&image), &resizer.go_1_25)
        };
        assert_eq!(on_1_25("1.8.23"), Some(false));
        assert_eq!(on_1_25("1.8.24"), Some(true));
    }

    /// Well-known programs in other languages that the corpus runs and the linter assumed were Go.
    #[test]
    fn other_programs_the_corpus_only_assumed_are_in_the_catalog() {
        for (image, program, language) in [
            (
                "docker.io/apache/skywalking-oap-server:9.7.0",
                "Apache SkyWalking OAP server",
                "java",
            ),
            ("docker.io/openzipkin/zipkin-slim:3.4.0", "Zipkin", "java"),
            ("internetsystemsconsortium/bind9:9.21", "BIND 9", "c"),
            ("koalaman/shellcheck:v0.11.0", "ShellCheck", "haskell"),
            (
                "docker.io/bats/bats:1.14.0",
                "Bats (Bash Automated Testing System)",
                "shell",
            ),
            ("ghost", "Ghost", "node"),
            ("fedora", "Fedora base image (a shell)", "shell"),
            (
                "cr.l5d.io/linkerd/debug:edge-25.1.1",
                "Linkerd debug sidecar (tshark)",
                "c",
            ),
        ] {
            assert_eq!(found(image), (program, language), "{image}");
        }
        assert_eq!(found("docker.io/apache/skywalking-ui:9.1.0").1, "java");
        let bookinfo = "registry.istio.io/release/examples-bookinfo-mongodb:1.20.3";
        assert_eq!(found(bookinfo).1, "cpp");
        // Amazon ECR Public's dual-stack host serves the same copies of the official images.
        assert_eq!(
            repository("ecr-public.aws.com/docker/library/redis:8.2.3-alpine"),
            "docker.io/library/redis"
        );
        assert_eq!(
            found("ecr-public.aws.com/docker/library/haproxy:3.3.10-alpine"),
            ("HAProxy", "c")
        );
    }

    #[test]
    fn every_gomaxprocs_names_a_formula_that_covers_its_releases() {
        let sizings = CATALOG
            .images
            .iter()
            .filter_map(|e| Some((e.program.as_str(), e.gomaxprocs.as_ref()?)))
            .chain(
                CATALOG
                    .frameworks
                    .iter()
                    .filter_map(|f| Some((f.import.as_str(), f.gomaxprocs.as_ref()?))),
            );
        for (who, s) in sizings {
            let name = s
                .formula
                .as_deref()
                .unwrap_or_else(|| panic!("{who}: no formula"));
            let items = CATALOG
                .formulas
                .get(name)
                .unwrap_or_else(|| panic!("{who}: no formula {name:?}"));
            // The first release that sizes itself has a formula, and so has the newest.
            let first = s
                .releases
                .first()
                .and_then(|r| r.from.as_deref())
                .map(|v| format!("x:{v}"));
            let first = first.as_deref().map(ImageRef::parse);
            assert!(s.formula_for(first.as_ref()).is_some(), "{who}");
            assert!(
                s.formula_for(Some(&ImageRef::parse("x:latest"))).is_some(),
                "{who}"
            );
            assert!(!items.is_empty(), "{name}");
        }
        for (name, items) in &CATALOG.formulas {
            for r in items {
                for v in [&r.from, &r.before].into_iter().flatten() {
                    assert!(tag_release(v).is_some(), "{name}: {v}");
                }
                if let Formula::Flag { env: Some(e), .. } = &r.does {
                    // The runtime reads the same variable; no other is modelled.
                    assert_eq!(e, "GOMAXPROCS", "{name}");
                }
                let program = !matches!(r.does, Formula::GoRuntime);
                assert!(!program || !r.evidence.is_empty(), "{name}: no evidence");
                for e in &r.evidence {
                    assert!(e.version.starts_with('v') && !e.line.is_empty(), "{name}");
                }
            }
        }
    }

    #[test]
    fn formulas_follow_the_release_of_the_image() {
        let vm = CATALOG
            .images
            .iter()
            .find(|e| e.repositories.iter().any(|n| n.ends_with("/vmagent")))
            .unwrap()
            .gomaxprocs
            .as_ref()
            .unwrap();
        let round = |image: &str| match vm.formula_for(Some(&ImageRef::parse(image))) {
            Some(Formula::Quota { round, .. }) => Some(*round),
            _ => None,
        };
        assert_eq!(round("victoriametrics/vmagent:v1.39.0"), None);
        assert_eq!(
            round("victoriametrics/vmagent:v1.40.0"),
            Some(Rounding::Nearest)
        );
        assert_eq!(
            round("victoriametrics/vmagent:v1.97.8"),
            Some(Rounding::Nearest)
        );
        assert_eq!(
            round("victoriametrics/vmagent:v1.97.9"),
            Some(Rounding::Floor)
        );
        assert_eq!(
            round("victoriametrics/vmagent:v1.102.3"),
            Some(Rounding::Nearest)
        );
        assert_eq!(
            round("victoriametrics/vmagent:v1.102.4"),
            Some(Rounding::Floor)
        );
        assert_eq!(
            round("victoriametrics/vmagent:v1.103.0"),
            Some(Rounding::Nearest)
        );
        assert_eq!(
            round("victoriametrics/vmagent:v1.104.0"),
            Some(Rounding::Floor)
        );
        assert_eq!(
            round("victoriametrics/vmagent:v1.125.0-cluster"),
            Some(Rounding::Floor)
        );
        assert_eq!(round("victoriametrics/vmagent"), Some(Rounding::Floor));
        assert_eq!(round("victoriametrics/vmagent@sha256:ab"), None);
        let v1_only = |image: &str| match vm.formula_for(Some(&ImageRef::parse(image))) {
            Some(Formula::Quota { cgroup_v1_only, .. }) => *cgroup_v1_only,
            _ => panic!("{image}"),
        };
        assert!(v1_only("victoriametrics/vmagent:v1.59.0"));
        assert!(!v1_only("victoriametrics/vmagent:v1.60.0"));
    }

    #[test]
    fn images_match_their_programs() {
        let lang = |image: &str| lookup(image).map(|(e, _)| e.language.as_str());
        assert_eq!(image_repo("docker.io/library/nginx:1.27"), "library/nginx");
        assert_eq!(image_repo("localhost:5000/api@sha256:abc"), "api");
        for (image, name) in [
            ("nginx:1.27", "nginx"),
            ("reg.io:5000/team/api:2.0-go", "api"),
            ("localhost:5000/api@sha256:abc", "api"),
            ("ghcr.io/a/b/c", "c"),
        ] {
            assert_eq!(ImageRef::parse(image).name, name, "{image}");
        }
        let cases = [
            ("nginx", "nginx", None),
            ("nginx:1.27", "nginx", Some("1.27")),
            ("nginx:", "nginx", None),
            ("acme/api:v1@sha256:ab", "acme/api", Some("v1")),
            ("reg.io:5000/team/api:2.0-go", "team/api", Some("2.0-go")),
            ("reg.io:5000/team/api", "team/api", None),
            ("localhost/api:dev", "api", Some("dev")),
            ("team/api@sha256:ab:cd", "team/api", None),
            ("ghcr.io/a/b/c", "a/b/c", None),
        ];
        for (image, repo, tag) in cases {
            assert_eq!(
                (image_repo(image), ImageRef::parse(image).tag),
                (repo, tag),
                "{image}"
            );
        }
        assert_eq!(lang("nginx:1.27"), Some("c"));
        assert_eq!(lang("quay.io/prometheus/node-exporter:v1"), Some("go"));
        assert_eq!(lang("node:20-alpine"), Some("node"));
        assert_eq!(lang("oliver006/redis_exporter:v1.6"), Some("go"));
        assert_eq!(lang("redis:7"), Some("c"));
        assert_eq!(
            lang("registry.k8s.io/ingress-nginx/controller:v1.10"),
            Some("go")
        );
        assert_eq!(lang("ghcr.io/zalando/postgres-operator:v1"), None);
        assert_eq!(lang("python:3.12-slim"), Some("python"));
        assert_eq!(lang("ghcr.io/acme/api:1.4.2"), None);
        assert_eq!(lang("ghcr.io/acme/xnginx"), None);
        assert_eq!(lang(""), None);
    }

    #[test]
    fn releases_from_tags() {
        let tag_service = |image| ImageRef::parse(image).tag.and_then(service_of_tag);
        assert_eq!(
            tag_service("ghcr.io/open-telemetry/demo:2.1.3-checkout"),
            Some("checkout")
        );
        assert_eq!(
            tag_service("ghcr.io/acme/demo:v1.0-load-generator"),
            Some("load-generator")
        );
        assert_eq!(tag_service("nginx:1.27-alpine"), None);
        assert_eq!(tag_service("bitnami/etcd:3.6.4-debian-12-r3"), None);
        assert_eq!(tag_service("python:3.12-slim"), None);
        assert_eq!(tag_service("acme/api:1.4.2"), None);
        assert_eq!(tag_service("acme/api:latest"), None);
        assert_eq!(tag_release("v3.1.0"), Some((3, 1, 0)));
        assert_eq!(tag_release("2.53.1-distroless"), Some((2, 53, 1)));
        assert_eq!(tag_release("1.25"), Some((1, 25, 0)));
        assert_eq!(tag_release("latest"), None);
        assert_eq!(tag_release("20240101"), None);
        let from = |f: &str| Range {
            from: Some(f.to_string()),
            below: None,
        };
        let span = |f: &str, b: &str| Range {
            from: Some(f.to_string()),
            below: Some(b.to_string()),
        };
        let at_least = |image, since| release_in(&ImageRef::parse(image), &[from(since)]);
        assert_eq!(at_least("prom/prometheus:v3.1.0", "3.0.0"), Some(true));
        assert_eq!(at_least("prom/prometheus:v2.55.0", "3.0.0"), Some(false));
        assert_eq!(at_least("prom/prometheus", "3.0.0"), Some(true));
        assert_eq!(at_least("prom/prometheus@sha256:ab", "3.0.0"), None);
        assert_eq!(at_least("prom/prometheus:main", "3.0.0"), Some(true));
        assert_eq!(at_least("prom/prometheus:sha-1a2b3c", "3.0.0"), None);
        // A maintenance branch and the newer minor releases, and a fact a release removed.
        let etcd = [span("3.5.28", "3.6.0"), from("3.6.9")];
        let r = |image| release_in(&ImageRef::parse(image), &etcd);
        assert_eq!(r("etcd:v3.5.27"), Some(false));
        assert_eq!(r("etcd:v3.5.28"), Some(true));
        assert_eq!(r("etcd:v3.6.0"), Some(false));
        assert_eq!(r("etcd:v3.6.8"), Some(false));
        assert_eq!(r("etcd:v3.6.9"), Some(true));
        assert_eq!(r("etcd:latest"), Some(true));
        let thanos = [span("0.7.0", "0.42.0")];
        let r = |image| release_in(&ImageRef::parse(image), &thanos);
        assert_eq!(r("thanos:v0.41.0"), Some(true));
        assert_eq!(r("thanos:v0.42.0"), Some(false));
        assert_eq!(r("thanos:latest"), Some(false));
        assert_eq!(r("thanos"), Some(false));
        assert!(holds_for(&ImageRef::parse("thanos:x"), &[]));
    }
}
