//! The Go view of a container: is it Go (and why), which Go version (and why), and how the Go
//! runtime will read its environment. The parsers here mirror the Go runtime's own (Go 1.26
//! source, see go-k8s-semantics.md §2–§5) so that a rule can say exactly what the process does
//! with a value, including the values it silently ignores.

pub mod throttle;

use crate::config::{Config, GoVersion};
use crate::k8s::container::{container_annotation, Container};
use crate::text::{push_debug, push_int};
use crate::yaml::{NodeId, Yaml};
use std::fmt::Write as _;

pub const GO_1_16: GoVersion = GoVersion::new(1, 16);
pub const GO_1_19: GoVersion = GoVersion::new(1, 19);
pub const GO_1_25: GoVersion = GoVersion::new(1, 25);

/// Env vars only the Go runtime (or Go libraries) read: their presence says "this is Go".
pub const GO_ENV_VARS: &[&str] = &[
    "GOMAXPROCS",
    "GOMEMLIMIT",
    "GOGC",
    "GODEBUG",
    "AUTOMEMLIMIT",
    "GOTRACEBACK",
];

/// Well-known images written in Go (matched against the image's repository name).
const GO_IMAGES: &[&str] = &[
    "prometheus",
    "alertmanager",
    "node-exporter",
    "kube-state-metrics",
    "pushgateway",
    "blackbox-exporter",
    "prometheus-operator",
    "prometheus-config-reloader",
    "configmap-reload",
    "thanos",
    "loki",
    "promtail",
    "tempo",
    "mimir",
    "grafana",
    "etcd",
    "minio",
    "coredns",
    "argocd",
    "argo-rollouts",
    "argoexec",
    "workflow-controller",
    "argocli",
    "cert-manager",
    "external-dns",
    "metrics-server",
    "ingress-nginx/controller",
    "pilot",
    "proxyv2",
    "install-cni",
    "ztunnel",
    "linkerd",
    "traefik",
    "vault",
    "consul",
    "jaeger",
    "opentelemetry-collector",
    "otel",
    "velero",
    "flux",
    "kustomize-controller",
    "helm-controller",
    "source-controller",
    "kyverno",
    "sealed-secrets",
    "kube-rbac-proxy",
    "kube-apiserver",
    "kube-controller-manager",
    "kube-scheduler",
    "kube-proxy",
    "kubectl",
    "cilium",
    "calico",
    "istio",
    "keda",
    "knative",
    "dex",
    "redis_exporter",
    "postgres_exporter",
    "mysqld-exporter",
    "cluster-autoscaler",
    "external-secrets",
    "csi-",
    "snapshot-controller",
];

/// Well-known images that are not Go programs.
const NON_GO_IMAGES: &[&str] = &[
    "nginx",
    "redis",
    "memcached",
    "postgres",
    "mysql",
    "mariadb",
    "busybox",
    "alpine",
    "ubuntu",
    "debian",
    "envoy",
    "haproxy",
    "python",
    "node",
    "openjdk",
    "eclipse-temurin",
    "amazoncorretto",
    "dotnet",
    "aspnet",
    "ruby",
    "php",
    "httpd",
    "rabbitmq",
    "elasticsearch",
    "kibana",
    "logstash",
    "cassandra",
    "mongo",
    "zookeeper",
    "kafka",
    "java",
    "tomcat",
    "wordpress",
    "fluentd",
    "fluent-bit",
    "squid",
    "varnish",
    "curl",
    "perl",
    "bash",
];

/// The repository name of an image without registry, tag or digest: `docker.io/library/nginx:1.27`
/// gives `library/nginx`, and its last segment `nginx`.
fn image_repo(image: &str) -> &str {
    let no_digest = image.split('@').next().unwrap_or(image);
    // A tag follows the last ':' after the last '/' (a registry port comes before a '/').
    let last_slash = no_digest.rfind('/').map_or(0, |i| i + 1);
    let no_tag = match no_digest[last_slash..].find(':') {
        Some(i) => &no_digest[..last_slash + i],
        None => no_digest,
    };
    match no_tag.split_once('/') {
        Some((first, rest))
            if first.contains('.') || first.contains(':') || first == "localhost" =>
        {
            rest
        }
        _ => no_tag,
    }
}

fn catalog_match(image: &str) -> Option<(bool, &'static str)> {
    let repo = image_repo(image).to_ascii_lowercase();
    let last = repo.rsplit('/').next().unwrap_or(&repo);
    // Called for every container against every catalog name: no allocation here, and a name
    // whose first byte is not the last segment's (all it could be a prefix of) and whose last
    // byte is not the repository's (all it could be a suffix of) is passed over at once.
    let (first, end) = (last.as_bytes().first(), repo.as_bytes().last());
    let may_match = |name: &&str| {
        let n = name.as_bytes();
        n.first() == first || n.last() == end
    };
    let matches = |name: &&str| {
        last.strip_prefix(*name)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with(['-', '_']))
            || (name.contains('/') && repo.ends_with(name))
            || (name.ends_with('-') && last.starts_with(name))
    };
    // Non-Go first for exact names: `node` (Node.js) must not fall to `node-exporter` logic.
    if let Some(n) = NON_GO_IMAGES.iter().find(|n| last == **n) {
        return Some((false, n));
    }
    if let Some(n) = GO_IMAGES.iter().find(|n| may_match(n) && matches(n)) {
        return Some((true, n));
    }
    if let Some(n) = NON_GO_IMAGES.iter().find(|n| may_match(n) && matches(n)) {
        return Some((false, n));
    }
    // Projects that put the language in the name.
    if repo
        .split(['/', '-', '_'])
        .any(|p| p == "golang" || p == "go")
    {
        return Some((true, "golang"));
    }
    None
}

/// Whether a container runs Go, which Go version, and why we think so.
#[derive(Debug, Clone)]
pub struct GoView<'a> {
    pub is_go: bool,
    pub why_go: WhyGo<'a>,
    pub version: Option<GoVersion>,
    pub why_version: WhyVersion<'a>,
}

/// What decided whether a container runs Go. Kept as the facts rather than a sentence: every
/// container is judged, and only those with a Go finding need it written out.
#[derive(Debug, Clone, Copy)]
pub enum WhyGo<'a> {
    /// The runtime annotation: the container's name when it was the per-container key, and the
    /// value (trimmed).
    Annotation {
        container: Option<&'a str>,
        value: &'a str,
    },
    /// A `go-images` (true) or `non-go-images` (false) pattern of the config.
    ConfigImages {
        go: bool,
        pattern: &'a str,
    },
    /// A Go runtime variable the container sets.
    GoEnv(&'a str),
    /// The built-in catalog of images: the image and the catalog's name for it.
    Catalog {
        go: bool,
        image: &'a str,
        name: &'static str,
    },
    AssumeGo {
        on: bool,
    },
}

/// Where the Go version came from.
#[derive(Debug, Clone, Copy)]
pub enum WhyVersion<'a> {
    /// The go-version annotation, as written.
    Annotation(&'a str),
    /// A `go-versions` pattern of the config, or (None) its `go-version`.
    Config(Option<&'a str>, GoVersion),
    Unknown,
}

impl WhyGo<'_> {
    /// The reason as the Go note gives it.
    fn write_to(&self, s: &mut String) {
        let non = |go: bool| if go { "" } else { "non-" };
        match *self {
            WhyGo::Annotation { container, value } => {
                s.push_str("of the annotation golint-k8s.io/runtime");
                if let Some(name) = container {
                    s.push('.');
                    s.push_str(name);
                }
                s.push_str(": ");
                s.push_str(value);
            }
            WhyGo::ConfigImages { go, pattern } => {
                s.push_str("the image matches ");
                s.push_str(non(go));
                s.push_str("go-images ");
                push_debug(s, pattern);
            }
            WhyGo::GoEnv(name) => {
                s.push_str("it sets the Go runtime variable ");
                s.push_str(name);
            }
            WhyGo::Catalog { go, image, name } => {
                s.push_str("the image ");
                s.push_str(image);
                s.push_str(" is a known ");
                s.push_str(non(go));
                s.push_str("Go program (");
                s.push_str(name);
                s.push(')');
            }
            WhyGo::AssumeGo { on: true } => {
                s.push_str("assume-go is on (the default) and nothing says otherwise")
            }
            WhyGo::AssumeGo { on: false } => s.push_str("assume-go is off"),
        }
    }
}

impl WhyVersion<'_> {
    /// Where the version came from, as the Go note gives it.
    fn write_to(&self, s: &mut String) {
        match *self {
            WhyVersion::Annotation(raw) => {
                s.push_str("annotation golint-k8s.io/go-version: ");
                push_debug(s, raw);
            }
            WhyVersion::Config(Some(pattern), g) => {
                s.push_str("config go-versions ");
                push_debug(s, pattern);
                s.push(' ');
                let _ = write!(s, "{g}");
            }
            WhyVersion::Config(None, g) => {
                s.push_str("config go-version ");
                let _ = write!(s, "{g}");
            }
            WhyVersion::Unknown => s.push_str("unknown"),
        }
    }
}

impl<'a> GoView<'a> {
    /// `annotations`: the pod's annotation mappings (see [`crate::k8s::annotation_maps`]).
    pub fn decide(
        y: &'a Yaml,
        annotations: &[Option<NodeId>; 2],
        c: &'a Container,
        cfg: &'a Config,
    ) -> GoView<'a> {
        let (is_go, why_go) = detect_go(y, annotations, c, cfg);
        let (version, why_version) =
            match container_annotation(y, annotations, c, "golint-k8s.io/go-version")
                .and_then(|(v, _, _)| GoVersion::parse(v).map(|g| (g, v)))
            {
                Some((g, raw)) => (Some(g), WhyVersion::Annotation(raw)),
                None => match cfg.go_version_for(c.image) {
                    Some((g, pattern)) => (Some(g), WhyVersion::Config(pattern, g)),
                    None => (None, WhyVersion::Unknown),
                },
            };
        GoView {
            is_go,
            why_go,
            version,
            why_version,
        }
    }

    /// Declared Go ≥ 1.25: the runtime sizes GOMAXPROCS from the CPU limit itself.
    pub fn adaptive_gomaxprocs(&self) -> bool {
        self.version.is_some_and(|v| v >= GO_1_25)
    }

    pub fn version_below(&self, v: GoVersion) -> bool {
        self.version.is_some_and(|have| have < v)
    }

    /// The note every Go-only finding carries.
    pub fn note(&self) -> String {
        // Written piece by piece (see [`crate::text`]): most containers with a finding get one.
        let mut s = String::with_capacity(256);
        s.push_str("judged Go because ");
        self.why_go.write_to(&mut s);
        match self.version {
            Some(v) => {
                s.push_str("; Go ");
                let _ = write!(s, "{v}");
                s.push_str(" (");
                self.why_version.write_to(&mut s);
                s.push(')');
            }
            None => s.push_str("; Go version unknown, treated as older than 1.25 (declare it with the annotation golint-k8s.io/go-version or go-version in .golint-k8s.yaml)"),
        }
        s
    }
}

fn detect_go<'a>(
    y: &'a Yaml,
    annotations: &[Option<NodeId>; 2],
    c: &'a Container,
    cfg: &'a Config,
) -> (bool, WhyGo<'a>) {
    if let Some((v, _, per_container)) =
        container_annotation(y, annotations, c, "golint-k8s.io/runtime")
    {
        let container = per_container.then(|| c.display_name());
        match v.trim() {
            "" => {}
            value => return (value == "go", WhyGo::Annotation { container, value }),
        }
    }
    if let Some(image) = &c.image {
        if let Some(pattern) = cfg.go_images.matching(image) {
            return (true, WhyGo::ConfigImages { go: true, pattern });
        }
        if let Some(pattern) = cfg.non_go_images.matching(image) {
            return (false, WhyGo::ConfigImages { go: false, pattern });
        }
    }
    if let Some(v) = c.env.iter().find(|e| GO_ENV_VARS.contains(&e.name)) {
        return (true, WhyGo::GoEnv(v.name));
    }
    if let Some(image) = &c.image {
        if let Some((go, name)) = catalog_match(image) {
            return (go, WhyGo::Catalog { go, image, name });
        }
    }
    (cfg.assume_go, WhyGo::AssumeGo { on: cfg.assume_go })
}

/// `strconv.ParseInt(s, 10, bits)`: one optional sign, ASCII digits, no spaces or underscores.
pub fn go_parse_int(s: &str, bits: u32) -> Option<i64> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let v: i128 = s.trim_start_matches('+').parse().ok()?;
    let max = (1i128 << (bits - 1)) - 1;
    let min = -(1i128 << (bits - 1));
    (min..=max).contains(&v).then_some(v as i64)
}

/// What the runtime does with a GOMAXPROCS value (`schedinit`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GoMaxProcs {
    /// A positive int32: used as is, and it switches off the runtime's own updates.
    Set(i64),
    /// Anything else: ignored, as if unset (the runtime default applies).
    Ignored,
}

pub fn parse_gomaxprocs(s: &str) -> GoMaxProcs {
    match go_parse_int(s, 32) {
        Some(n) if n > 0 => GoMaxProcs::Set(n),
        _ => GoMaxProcs::Ignored,
    }
}

/// What the runtime does with a GOMEMLIMIT value (`readGOMEMLIMIT` / `parseByteCount`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GoMemLimit {
    /// `""` or `off`: no limit.
    Off,
    Bytes(i64),
    /// The runtime throws at start-up: "malformed GOMEMLIMIT".
    Malformed,
}

pub fn parse_gomemlimit(s: &str) -> GoMemLimit {
    if s.is_empty() || s == "off" {
        return GoMemLimit::Off;
    }
    let (num, unit): (&str, i128) = if let Some(n) = s.strip_suffix("TiB") {
        (n, 1 << 40)
    } else if let Some(n) = s.strip_suffix("GiB") {
        (n, 1 << 30)
    } else if let Some(n) = s.strip_suffix("MiB") {
        (n, 1 << 20)
    } else if let Some(n) = s.strip_suffix("KiB") {
        (n, 1 << 10)
    } else if let Some(n) = s.strip_suffix('B') {
        (n, 1)
    } else {
        (s, 1)
    };
    match go_parse_int(num, 64) {
        Some(n) if n >= 0 => {
            let bytes = n as i128 * unit;
            if bytes > i64::MAX as i128 {
                GoMemLimit::Malformed
            } else {
                GoMemLimit::Bytes(bytes as i64)
            }
        }
        _ => GoMemLimit::Malformed,
    }
}

/// What the runtime does with a GOGC value (`readGOGC`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GoGc {
    Off,
    Percent(i64),
    /// Silently replaced by 100.
    Invalid,
}

pub fn parse_gogc(s: &str) -> GoGc {
    if s == "off" {
        return GoGc::Off;
    }
    match go_parse_int(s, 32) {
        Some(n) if n < 0 => GoGc::Off,
        Some(n) => GoGc::Percent(n),
        None => GoGc::Invalid,
    }
}

/// The effective value of one GODEBUG key: entries are applied left to right, the last wins.
pub fn godebug_value<'s>(godebug: &'s str, key: &str) -> Option<&'s str> {
    godebug
        .rsplit(',')
        .filter_map(|kv| kv.split_once('='))
        .find(|(k, _)| k.trim() == key)
        .map(|(_, v)| v.trim())
}

/// `x` rounded to a whole number as `{:.0}` prints it, when that is sure without the
/// formatter's exact (and slow) algorithm: `x` is positive (not even -0), below 1e10, and more
/// than 1e-6 from a tie. The margin also covers the rounding of a product such as `v × 10`
/// below 1e10, whose error is under half of 2^-19; ties and the rest are left to the formatter.
pub fn round_clear_of_tie(x: f64) -> Option<u64> {
    let near_tie = (x.fract() - 0.5).abs() < 1e-6;
    (x.is_sign_positive() && x < 1e10 && !near_tie).then(|| x.round() as u64)
}

/// What `{:.0}` prints for `v` (a percentage in a message).
pub fn whole(v: f64) -> String {
    match round_clear_of_tie(v) {
        Some(n) => itoa::Buffer::new().format(n).to_string(),
        None => format!("{v:.0}"),
    }
}

/// `num / den` in tenths, rounded to nearest, when `{:.1}` of the float quotient is sure to
/// print the same: positive values the float holds exactly (`den` a power of two, `num` below
/// 2^53) and no tie, whose rounding direction is left to the formatter.
fn rounded_tenths(num: i128, den: i128) -> Option<i128> {
    if num <= 0 || num >= 1 << 53 || den <= 0 || den & (den - 1) != 0 {
        return None;
    }
    let (q, r) = ((num * 10) / den, (num * 10) % den);
    match (2 * r).cmp(&den) {
        std::cmp::Ordering::Less => Some(q),
        std::cmp::Ordering::Greater => Some(q + 1),
        std::cmp::Ordering::Equal => None,
    }
}

/// Formats a byte count for messages: `536870912 bytes (512 MiB)`.
pub fn describe_bytes(bytes: i128) -> String {
    const UNITS: [(&str, i128); 4] = [
        ("TiB", 1 << 40),
        ("GiB", 1 << 30),
        ("MiB", 1 << 20),
        ("KiB", 1 << 10),
    ];
    // Written piece by piece: most memory findings describe two byte counts, and `format!` of
    // an i128 cost several times the arithmetic.
    let mut s = String::with_capacity(16);
    for (name, size) in UNITS {
        if bytes >= size {
            if bytes % size == 0 {
                push_int(&mut s, bytes / size);
            } else if let Some(tenths) = rounded_tenths(bytes, size) {
                // What `{:.1}` prints, without its exact float algorithm (slow, and run for
                // most memory findings).
                push_int(&mut s, tenths / 10);
                s.push('.');
                push_int(&mut s, tenths % 10);
            } else {
                return format!("{:.1} {name}", bytes as f64 / size as f64);
            }
            s.push(' ');
            s.push_str(name);
            return s;
        }
    }
    push_int(&mut s, bytes);
    s.push_str(" bytes");
    s
}

/// The GOMEMLIMIT value our fixes write for a limit: floor(limit × ratio) in whole MiB (bytes when
/// below 1 MiB), as a string the Go runtime accepts.
pub fn gomemlimit_for(limit_bytes: i128, ratio: f64) -> String {
    // Integer arithmetic on a ratio in thousandths avoids float rounding on exact products.
    let permille = (ratio * 1000.0).round() as i128;
    let target = limit_bytes * permille / 1000;
    let mut s = String::with_capacity(16);
    if target >= 1 << 20 {
        push_int(&mut s, target >> 20);
        s.push_str("MiB");
    } else {
        push_int(&mut s, target.max(0));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gomemlimit_grammar() {
        for (s, want) in [
            ("512MiB", GoMemLimit::Bytes(512 << 20)),
            ("1000", GoMemLimit::Bytes(1000)),
            ("1000B", GoMemLimit::Bytes(1000)),
            ("+100MiB", GoMemLimit::Bytes(100 << 20)),
            ("007MiB", GoMemLimit::Bytes(7 << 20)),
            ("-0", GoMemLimit::Bytes(0)),
            ("off", GoMemLimit::Off),
            ("", GoMemLimit::Off),
            ("9223372036854775807", GoMemLimit::Bytes(i64::MAX)),
            ("8388607TiB", GoMemLimit::Bytes(8388607 << 40)),
        ] {
            assert_eq!(parse_gomemlimit(s), want, "{s}");
        }
        for s in [
            "1kiB",
            "1Mi",
            "1G",
            "1GB",
            "1KB",
            "1kB",
            "1gib",
            "1024b",
            "1.5GiB",
            "512 MiB",
            " 512MiB",
            "512MiB ",
            "OFF",
            "-1",
            "0x100",
            "1_000",
            "1PiB",
            "8EiB",
            "8388608TiB",
            "9223372036854775808",
            "B",
            "KiB",
            "max",
        ] {
            assert_eq!(parse_gomemlimit(s), GoMemLimit::Malformed, "{s}");
        }
    }

    #[test]
    fn go_notes_name_every_reason() {
        // Every reason and version source, as the note spelled them when they were `format!`
        // templates (`{:?}` for patterns and raw versions, escapes included).
        const UNKNOWN: &str = "; Go version unknown, treated as older than 1.25 (declare it with the annotation golint-k8s.io/go-version or go-version in .golint-k8s.yaml)";
        let v = GoVersion::new(1, 24);
        let note = |why_go, version, why_version| {
            GoView {
                is_go: true,
                why_go,
                version,
                why_version,
            }
            .note()
        };
        let reasons = [
            (
                WhyGo::Annotation { container: None, value: "go" },
                "of the annotation golint-k8s.io/runtime: go",
            ),
            (
                WhyGo::Annotation { container: Some("app"), value: "go" },
                "of the annotation golint-k8s.io/runtime.app: go",
            ),
            (
                WhyGo::ConfigImages { go: true, pattern: "ghcr.io/acme/*" },
                "the image matches go-images \"ghcr.io/acme/*\"",
            ),
            (
                WhyGo::ConfigImages { go: false, pattern: "a\"b\\c\u{e9}" },
                "the image matches non-go-images \"a\\\"b\\\\c\u{e9}\"",
            ),
            (WhyGo::GoEnv("GOGC"), "it sets the Go runtime variable GOGC"),
            (
                WhyGo::Catalog { go: true, image: "quay.io/prometheus/node-exporter:v1", name: "node-exporter" },
                "the image quay.io/prometheus/node-exporter:v1 is a known Go program (node-exporter)",
            ),
            (
                WhyGo::Catalog { go: false, image: "nginx:1.27", name: "nginx" },
                "the image nginx:1.27 is a known non-Go program (nginx)",
            ),
            (
                WhyGo::AssumeGo { on: true },
                "assume-go is on (the default) and nothing says otherwise",
            ),
            (WhyGo::AssumeGo { on: false }, "assume-go is off"),
        ];
        for (why, text) in reasons {
            assert_eq!(
                note(why, None, WhyVersion::Unknown),
                format!("judged Go because {text}{UNKNOWN}")
            );
        }
        let env = WhyGo::GoEnv("GOGC");
        for (why, text) in [
            (
                WhyVersion::Annotation("go1.24"),
                "; Go 1.24 (annotation golint-k8s.io/go-version: \"go1.24\")",
            ),
            (
                WhyVersion::Config(Some("ghcr.io/*"), v),
                "; Go 1.24 (config go-versions \"ghcr.io/*\" 1.24)",
            ),
            (
                WhyVersion::Config(None, v),
                "; Go 1.24 (config go-version 1.24)",
            ),
        ] {
            assert_eq!(
                note(env, Some(v), why),
                format!("judged Go because it sets the Go runtime variable GOGC{text}")
            );
        }
    }

    #[test]
    fn gomaxprocs_and_gogc_grammar() {
        assert_eq!(parse_gomaxprocs("4"), GoMaxProcs::Set(4));
        assert_eq!(parse_gomaxprocs("+3"), GoMaxProcs::Set(3));
        for s in [
            "0",
            "-1",
            "",
            "abc",
            "1.5",
            "0x10",
            "1_0",
            " 3",
            "3 ",
            "2147483648",
        ] {
            assert_eq!(parse_gomaxprocs(s), GoMaxProcs::Ignored, "{s}");
        }
        assert_eq!(parse_gomaxprocs("2147483647"), GoMaxProcs::Set(2147483647));
        assert_eq!(parse_gogc("off"), GoGc::Off);
        assert_eq!(parse_gogc("-50"), GoGc::Off);
        assert_eq!(parse_gogc("+50"), GoGc::Percent(50));
        assert_eq!(parse_gogc("0"), GoGc::Percent(0));
        for s in [
            "OFF",
            "Off",
            "abc",
            "1.5",
            " 50",
            "200%",
            "2147483648",
            "false",
        ] {
            assert_eq!(parse_gogc(s), GoGc::Invalid, "{s}");
        }
    }

    #[test]
    fn godebug_last_wins() {
        assert_eq!(
            godebug_value("updatemaxprocs=1,updatemaxprocs=0", "updatemaxprocs"),
            Some("0")
        );
        assert_eq!(godebug_value("madvdontneed=1", "containermaxprocs"), None);
    }

    #[test]
    fn whole_numbers_read_as_the_float_formatter_prints_them() {
        let mut values: Vec<f64> = (0..=1000).map(|i| f64::from(i) / 1000.0 * 100.0).collect();
        values.extend((0..=1000).map(|i| (1.0 - f64::from(i) / 1000.0) * 100.0));
        values.extend((0..400).map(|i| f64::from(i) / 8.0));
        values.extend([
            -0.3,
            -0.0,
            -2.5,
            0.5,
            1.5,
            2.5,
            1e15,
            1e300,
            f64::NAN,
            f64::INFINITY,
        ]);
        for v in values {
            assert_eq!(whole(v), format!("{v:.0}"), "{v}");
        }
    }

    #[test]
    fn byte_counts_read_as_the_float_formatter_prints_them() {
        let reference = |bytes: i128, size: i128, name: &str| {
            format!("{:.1} {name}", bytes as f64 / size as f64)
        };
        let mut checked = 0;
        for (name, size) in [("KiB", 1i128 << 10), ("MiB", 1 << 20), ("GiB", 1 << 30)] {
            // Around every tenth (ties included) of the first units, and scattered further out.
            for tenth in 10..400 {
                let at = tenth * size / 10;
                for bytes in [at - 1, at, at + 1, at + size / 20, at + size / 20 + 1] {
                    if bytes % size == 0 || bytes < size || bytes >= size * 1024 {
                        continue;
                    }
                    assert_eq!(
                        describe_bytes(bytes),
                        reference(bytes, size, name),
                        "{bytes}"
                    );
                    checked += 1;
                }
            }
        }
        assert!(checked > 5000);
        // A tie, left to the formatter.
        assert_eq!(describe_bytes(2304), "2.2 KiB");
        // Whole units and counts below a KiB, as `{}` prints them.
        for (name, size) in [("KiB", 1i128 << 10), ("MiB", 1 << 20), ("TiB", 1 << 40)] {
            for n in [1i128, 2, 3, 512, 1023] {
                assert_eq!(describe_bytes(n * size), format!("{n} {name}"));
            }
        }
        assert_eq!(describe_bytes(8_388_607 << 40), "8388607 TiB");
        for bytes in [-7i128, 0, 1, 999, 1023] {
            assert_eq!(describe_bytes(bytes), format!("{bytes} bytes"));
        }
    }

    #[test]
    fn fix_values() {
        assert_eq!(gomemlimit_for(512 << 20, 0.9), "460MiB");
        assert_eq!(gomemlimit_for(1 << 30, 0.9), "921MiB");
        assert_eq!(gomemlimit_for(1000, 0.9), "900");
    }

    #[test]
    fn catalog_prefilter_passes_over_no_match() {
        // The catalog test without the first/last byte shortcut.
        fn reference(image: &str) -> Option<(bool, &'static str)> {
            let repo = image_repo(image).to_ascii_lowercase();
            let last = repo.rsplit('/').next().unwrap_or(&repo);
            let matches = |name: &str| {
                last.strip_prefix(name)
                    .is_some_and(|rest| rest.is_empty() || rest.starts_with(['-', '_']))
                    || (name.contains('/') && repo.ends_with(name))
                    || (name.ends_with('-') && last.starts_with(name))
            };
            NON_GO_IMAGES
                .iter()
                .find(|n| last == **n)
                .map(|n| (false, *n))
                .or_else(|| GO_IMAGES.iter().find(|n| matches(n)).map(|n| (true, *n)))
                .or_else(|| {
                    NON_GO_IMAGES
                        .iter()
                        .find(|n| matches(n))
                        .map(|n| (false, *n))
                })
                .or_else(|| {
                    repo.split(['/', '-', '_'])
                        .any(|p| p == "golang" || p == "go")
                        .then_some((true, "golang"))
                })
        }
        let mut tried = 0;
        for name in GO_IMAGES.iter().chain(NON_GO_IMAGES) {
            let tail = name.rsplit('/').next().unwrap_or(name);
            for image in [
                name.to_string(),
                format!("{name}:1.2"),
                format!("Docker.IO/{name}:v1"),
                format!("ghcr.io/acme/{tail}"),
                format!("ghcr.io/acme/x{tail}"),
                format!("{tail}-operator"),
                format!("{tail}_x"),
                format!("{tail}x"),
                format!("x/{name}"),
                format!("x{name}"),
                tail[1..].to_string(),
                name[..name.len() - 1].to_string(),
                format!("go-{tail}"),
                String::new(),
            ] {
                assert_eq!(catalog_match(&image), reference(&image), "{image}");
                tried += 1;
            }
        }
        assert!(tried > 1000);
    }

    #[test]
    fn image_catalog() {
        assert_eq!(image_repo("docker.io/library/nginx:1.27"), "library/nginx");
        assert_eq!(image_repo("localhost:5000/api@sha256:abc"), "api");
        assert_eq!(catalog_match("nginx:1.27").map(|m| m.0), Some(false));
        assert_eq!(
            catalog_match("quay.io/prometheus/node-exporter:v1").map(|m| m.0),
            Some(true)
        );
        assert_eq!(catalog_match("node:20-alpine").map(|m| m.0), Some(false));
        assert_eq!(
            catalog_match("registry.k8s.io/ingress-nginx/controller:v1.10").map(|m| m.0),
            Some(true)
        );
        assert_eq!(catalog_match("ghcr.io/acme/api:1.4.2"), None);
    }
}
