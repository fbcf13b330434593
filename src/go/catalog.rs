//! The catalog of well-known images: which program an image runs, in which language, and whether
//! that program sizes GOMAXPROCS or GOMEMLIMIT itself (and from which release). It is reviewed
//! data, kept in `catalog.json` beside this file, where every entry names its source; this module
//! only loads and matches it.

use serde::Deserialize;
use std::sync::LazyLock;

/// Things a Go program does for itself, from a release on.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SelfSizing {
    /// How the program computes GOMAXPROCS: a name of the catalog's `formulas`. Every
    /// `gomaxprocs` names one (a test holds the catalog to it).
    #[serde(default)]
    pub formula: Option<String>,
    /// The first release (as image tags write it, without a `v`) that does it by default; none
    /// when every release does.
    #[serde(default)]
    pub since: Option<String>,
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
            .find(|r| {
                let at_least = |v: &Option<String>| match (v, image) {
                    (None, _) => Some(true),
                    (Some(v), Some(i)) => release_at_least(i, v),
                    (Some(_), None) => None,
                };
                at_least(&r.from) == Some(true)
                    && match &r.before {
                        None => true,
                        Some(_) => at_least(&r.before) == Some(false),
                    }
            })
            .map(|r| &r.does)
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// Image names: the last path segment (`prometheus`, also matching `prometheus-foo` and
    /// `prometheus_foo`), a path suffix when it holds a `/` (`ingress-nginx/controller`), or a
    /// prefix when it ends with `-` (`csi-`).
    pub names: Vec<String>,
    pub program: String,
    /// `go`, or the other language the program is written in.
    pub language: String,
    pub source: String,
    #[serde(default)]
    pub gomaxprocs: Option<SelfSizing>,
    #[serde(default)]
    pub gomemlimit: Option<SelfSizing>,
    /// The first release whose main module says `go 1.25` or later: from then on the runtime
    /// itself follows the CPU limit.
    #[serde(default)]
    pub go_1_25_since: Option<String>,
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

/// The tokens of the last path segment (`redis_exporter` gives `redis`, `exporter`).
fn tokens(segment: &str) -> impl Iterator<Item = &str> {
    segment.split(['-', '_', '.'])
}

/// The catalog's names by kind of match, built once, so a lookup costs a few hash probes however
/// large the catalog grows: exact names and path suffixes (`calico/node`) are found by the image's
/// last path segment, `name-…` / `name_…` matches and prefixes (`csi-`) by the segment's head
/// (its text before the first `-` or `_`), which such a name shares with every image it matches.
struct Index {
    by_name: foldhash::HashMap<&'static str, &'static Entry>,
    /// Names with a `/`, by their last segment: `calico/node` under `node`.
    paths: foldhash::HashMap<&'static str, Vec<(&'static str, &'static Entry)>>,
    /// Names without a `/` by their head; prefixes keep their trailing `-`.
    by_head: foldhash::HashMap<&'static str, Vec<(&'static str, &'static Entry)>>,
}

/// A name's text before its first `-` or `_`.
fn head(name: &str) -> &str {
    name.split(['-', '_']).next().unwrap_or(name)
}

static INDEX: LazyLock<Index> = LazyLock::new(|| {
    let mut index = Index {
        by_name: Default::default(),
        paths: Default::default(),
        by_head: Default::default(),
    };
    for entry in &CATALOG.images {
        for name in &entry.names {
            let name = name.as_str();
            if let Some((_, last)) = name.rsplit_once('/') {
                index.paths.entry(last).or_default().push((name, entry));
                continue;
            }
            if !name.ends_with('-') {
                index.by_name.entry(name).or_insert(entry);
            }
            let heads = index.by_head.entry(head(name)).or_default();
            if !heads.iter().any(|(n, _)| *n == name) {
                heads.push((name, entry));
            }
        }
    }
    index
});

/// The catalog entry for an image, and the name that matched: the longest matching name wins, so
/// `node-exporter` is not Node.js and `redis_exporter` is not Redis.
pub fn lookup(image: &str) -> Option<(&'static Entry, &'static str)> {
    lookup_ref(&ImageRef::parse(image))
}

/// [`lookup`] for a reference already read.
pub fn lookup_ref(r: &ImageRef) -> Option<(&'static Entry, &'static str)> {
    if r.repo.bytes().any(|b| b.is_ascii_uppercase()) {
        return lookup_repo(r.repo);
    }
    lookup_lowercase(r.repo, r.name)
}

/// [`lookup`] for a repository name alone (a tag's service: `checkout`).
pub fn lookup_repo(repo: &str) -> Option<(&'static Entry, &'static str)> {
    fn last(repo: &str) -> &str {
        repo.rsplit('/').next().unwrap_or(repo)
    }
    if repo.bytes().any(|b| b.is_ascii_uppercase()) {
        let lower = repo.to_ascii_lowercase();
        return lookup_lowercase(&lower, last(&lower));
    }
    lookup_lowercase(repo, last(repo))
}

fn lookup_lowercase(repo: &str, last: &str) -> Option<(&'static Entry, &'static str)> {
    let index = &*INDEX;
    let mut best: Option<(&'static Entry, &'static str)> = None;
    let mut consider = |entry: &'static Entry, name: &'static str| {
        if best.is_none_or(|(_, b)| name.len() > b.len()) {
            best = Some((entry, name));
        }
    };
    if let Some((name, entry)) = index.by_name.get_key_value(last) {
        consider(entry, name);
    }
    for &(name, entry) in index.paths.get(last).into_iter().flatten() {
        let whole_segments = repo
            .strip_suffix(name)
            .is_some_and(|before| before.is_empty() || before.ends_with('/'));
        if whole_segments {
            consider(entry, name);
        }
    }
    // `name-…` and `name_…`, and prefixes (`csi-`): a non-Go program's name inside a wrapper's
    // name (`redis-operator`) is no match.
    let wrapper = || tokens(last).any(|t| WRAPPER_WORDS.contains(&t));
    for &(name, entry) in index.by_head.get(head(last)).into_iter().flatten() {
        let matches = match name.strip_suffix('-') {
            Some(_) => last.starts_with(name),
            None => last
                .strip_prefix(name)
                .is_some_and(|rest| rest.starts_with(['-', '_'])),
        };
        if matches && (entry.is_go() || !wrapper()) {
            consider(entry, name);
        }
    }
    best
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

/// Whether an image's release is at least `since`: Some(true/false) when the tag names a release,
/// Some(true) for no tag, `latest` and the tags of a development branch's tip (`main`, `master`,
/// `edge`, `nightly`), which are newer than every release; None when the tag says nothing.
pub fn release_at_least(image: &ImageRef, since: &str) -> Option<bool> {
    let Some(tag) = image.tag else {
        // An image pinned only by digest: no release to read.
        return (!image.image.contains('@')).then_some(true);
    };
    if matches!(
        tag,
        "latest" | "main" | "master" | "edge" | "nightly" | "dev"
    ) {
        return Some(true);
    }
    let have = tag_release(tag)?;
    let want = tag_release(since)?;
    Some(have >= want)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_catalog_loads_and_every_entry_names_a_source() {
        assert!(CATALOG.images.len() > 50);
        for e in &CATALOG.images {
            assert!(e.source.starts_with("https://"), "{}", e.program);
            assert!(!e.names.is_empty(), "{}", e.program);
            for s in [&e.gomaxprocs, &e.gomemlimit].into_iter().flatten() {
                assert!(s.source.starts_with("https://"), "{}", e.program);
                assert!(e.is_go(), "{} sizes Go settings but is not Go", e.program);
                if let Some(v) = &s.since {
                    assert!(tag_release(v).is_some(), "{}: since {v}", e.program);
                }
            }
            if let Some(v) = &e.go_1_25_since {
                assert!(tag_release(v).is_some(), "{}: go_1_25_since {v}", e.program);
                assert!(e.source_go_1_25.is_some(), "{}", e.program);
            }
        }
        for f in &CATALOG.frameworks {
            for s in [&f.gomaxprocs, &f.gomemlimit].into_iter().flatten() {
                assert!(s.source.starts_with("https://"), "{}", f.import);
            }
        }
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
            let first = s.since.as_deref().map(|v| format!("x:{v}"));
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
            .find(|e| e.names.iter().any(|n| n == "vmagent"))
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
        assert_eq!(lang("python-worker:1"), Some("python"));
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
        let release_at_least = |image, since| release_at_least(&ImageRef::parse(image), since);
        assert_eq!(
            release_at_least("prom/prometheus:v3.1.0", "3.0.0"),
            Some(true)
        );
        assert_eq!(
            release_at_least("prom/prometheus:v2.55.0", "3.0.0"),
            Some(false)
        );
        assert_eq!(release_at_least("prom/prometheus", "3.0.0"), Some(true));
        assert_eq!(release_at_least("prom/prometheus@sha256:ab", "3.0.0"), None);
        assert_eq!(
            release_at_least("prom/prometheus:main", "3.0.0"),
            Some(true)
        );
        assert_eq!(
            release_at_least("prom/prometheus:sha-1a2b3c", "3.0.0"),
            None
        );
    }
}
