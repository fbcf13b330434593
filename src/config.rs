//! The `.golint-k8s.yaml` config file and the command-line overrides layered on top of it.
//!
//! The file is read through our own span tree (not serde) so that every unknown key and bad value
//! is reported at its line and column in the config file, which is what users of ruff and
//! kube-linter expect when they mistype a key.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use globset::{Glob, GlobSet, GlobSetBuilder};

use crate::diagnostic::registry;
use crate::diagnostic::Severity;
/// Read from `pod-spec-paths`; the model owns the type (and the integration tests find it here).
pub use crate::k8s::PodSpecPath;
use crate::source::{Origin, Source};
use crate::yaml::{self, NodeId, Yaml};

pub const FILE_NAME: &str = crate::walk::CONFIG_FILE_NAMES[0];

/// The values of `fail-on`, as `--fail-on` takes them.
pub const FAIL_ON: [&str; 3] = ["error", "warning", "info"];
/// The values of `format`, as `--format` takes them.
pub const FORMATS: [&str; 8] = [
    "human",
    "concise",
    "json",
    "sarif",
    "github",
    "gitlab",
    "junit",
    "checkstyle",
];

pub use crate::walk::SKIPPED_DIRS;
/// Every top-level key a config may have; `schema/golint-k8s.schema.json` has exactly these.
pub const KEYS: &[&str] = &[
    "go-version",
    "go-versions",
    "assume-go",
    "go-images",
    "non-go-images",
    "sizes-gomaxprocs",
    "sizes-gomemlimit",
    "node-cpus",
    "cpu-limits",
    "cpu-manager-policy",
    "gomemlimit",
    "rules",
    "exclude",
    "per-file-ignores",
    "pod-spec-paths",
    "inspect-images",
    "fail-on",
    "format",
    "image-registries",
    "chart-values",
    "extend",
];

/// Where the config's JSON Schema is published, for editors (yaml-language-server).
pub const SCHEMA_URL: &str =
    "https://raw.githubusercontent.com/golint-k8s/golint-k8s/main/schema/golint-k8s.schema.json";

/// A Go version as `major.minor` (patch releases do not change runtime defaults).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct GoVersion {
    pub major: u32,
    pub minor: u32,
}

impl GoVersion {
    pub const fn new(major: u32, minor: u32) -> Self {
        GoVersion { major, minor }
    }

    /// Accepts `1.25`, `1.25.3`, `go1.25`, `go1.25rc1`.
    pub fn parse(s: &str) -> Option<GoVersion> {
        let s = s.trim();
        let s = s.strip_prefix("go").unwrap_or(s);
        let mut parts = s.split('.');
        let major: u32 = parts.next()?.parse().ok()?;
        let minor_raw = parts.next()?;
        let digits = minor_raw
            .find(|c: char| !c.is_ascii_digit())
            .map_or(minor_raw, |end| &minor_raw[..end]);
        let minor: u32 = digits.parse().ok()?;
        if major == 0 {
            return None;
        }
        Some(GoVersion { major, minor })
    }
}

impl std::fmt::Display for GoVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpuLimits {
    Warn,
    Forbid,
    Allow,
}

/// The kubelet's `cpuManagerPolicy` on the nodes: only `static` gives a Guaranteed container
/// with whole-core requests CPUs of its own instead of a CFS quota (docs/semantics.md, CFS quota).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpuManagerPolicy {
    /// The kubelet's default: every container with a CPU limit gets a quota.
    None,
    Static,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemLimitStrategy {
    Ratio,
    FieldRef,
}

/// A glob list that remembers its patterns (for messages).
#[derive(Debug, Clone, Default)]
pub struct Globs {
    pub patterns: Vec<String>,
    set: Option<GlobSet>,
}

impl Globs {
    pub fn new(patterns: Vec<String>) -> Result<Globs, String> {
        let mut b = GlobSetBuilder::new();
        for p in &patterns {
            b.add(Glob::new(p).map_err(|e| format!("invalid glob {p:?}: {e}"))?);
        }
        let set = b.build().map_err(|e| e.to_string())?;
        Ok(Globs {
            patterns,
            set: Some(set),
        })
    }

    /// The first pattern that matches.
    pub fn matching(&self, s: &str) -> Option<&str> {
        let set = self.set.as_ref()?;
        set.matches(s).first().map(|&i| self.patterns[i].as_str())
    }
}

#[derive(Debug, Clone)]
pub struct Config {
    /// The file this came from (None: built-in defaults).
    pub path: Option<PathBuf>,
    pub go_version: Option<GoVersion>,
    pub go_versions: Vec<(Globs, GoVersion)>,
    pub assume_go: AssumeGo,
    pub go_images: Globs,
    pub non_go_images: Globs,
    /// Images whose Go programs size GOMAXPROCS / GOMEMLIMIT themselves (automaxprocs,
    /// automemlimit or their own code).
    pub sizes_gomaxprocs: Globs,
    pub sizes_gomemlimit: Globs,
    pub node_cpus: Option<u32>,
    pub cpu_limits: CpuLimits,
    pub cpu_manager_policy: CpuManagerPolicy,
    pub gomemlimit_ratio: f64,
    pub gomemlimit_strategy: MemLimitStrategy,
    /// Per-rule level from the config's `rules:`: off, or a severity instead of the default.
    pub rules: HashMap<crate::diagnostic::Code, RuleLevel>,
    pub exclude: Globs,
    /// Skip the [`SKIPPED_DIRS`] in a walk: true until the config sets `exclude`, which replaces
    /// them.
    pub skip_vendored: bool,
    /// `per-file-ignores`: rules that do not run on files matching a glob (relative to the
    /// config's directory), as ruff's option of that name.
    pub per_file_ignores: Vec<(Globs, Vec<crate::diagnostic::Code>)>,
    pub pod_spec_paths: Vec<PodSpecPath>,
    /// Read the images of this file's containers from their registries, as
    /// `lint --inspect-images` does for every file.
    pub inspect_images: bool,
    /// `fail-on` and `format`: the run's threshold and report format when the command line
    /// gives none, read from the config that governs the current directory.
    pub fail_on: Option<String>,
    pub format: Option<String>,
    /// `image-registries`: registries (host, host:port, `*.domain`) read besides the public
    /// ones, at any address (docs/images.md).
    pub image_registries: Vec<String>,
    /// `chart-values`: values files (names or globs relative to each chart's directory) that a
    /// walk passes to `helm template` after the chart's defaults, for the charts this config
    /// governs.
    pub chart_values: Vec<String>,
    /// `extend`: the config files this one builds on, the one it names first, then the one that
    /// one names, and so on (empty: it extends none).
    pub extends: Vec<PathBuf>,
    /// The top-level keys this file (or the files it extends) set, each with the file that set
    /// it: a key holding paths or globs resolves them against its own file's directory.
    pub origins: HashMap<&'static str, PathBuf>,
    /// The `extend` value as written, and where, before [`Config::load`] follows it.
    pub extend: Option<(String, usize, usize)>,
    /// The top-level keys the parsed text set, in its order.
    pub written: Vec<&'static str>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            path: None,
            go_version: None,
            go_versions: Vec::new(),
            assume_go: AssumeGo::Unsettled,
            go_images: Globs::default(),
            non_go_images: Globs::default(),
            sizes_gomaxprocs: Globs::default(),
            sizes_gomemlimit: Globs::default(),
            node_cpus: None,
            cpu_limits: CpuLimits::Warn,
            cpu_manager_policy: CpuManagerPolicy::None,
            gomemlimit_ratio: 0.9,
            gomemlimit_strategy: MemLimitStrategy::Ratio,
            rules: HashMap::new(),
            exclude: Globs::default(),
            skip_vendored: true,
            per_file_ignores: Vec::new(),
            pod_spec_paths: Vec::new(),
            inspect_images: false,
            image_registries: Vec::new(),
            fail_on: None,
            format: None,
            chart_values: Vec::new(),
            extends: Vec::new(),
            origins: HashMap::new(),
            extend: None,
            written: Vec::new(),
        }
    }
}

/// What a config's `rules:` says of one rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuleLevel {
    Off,
    /// On, at this severity instead of the rule's default.
    On(Severity),
}

/// A config error, located in the config file.
#[derive(Debug, Clone)]
pub struct ConfigError {
    pub file: String,
    pub line: usize,
    pub column: usize,
    pub message: String,
}

impl std::error::Error for ConfigError {}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}:{}:{}: {}",
            self.file, self.line, self.column, self.message
        )
    }
}

/// Command-line settings that override the file.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    pub go_version: Option<GoVersion>,
    pub node_cpus: Option<u32>,
    /// `--assume-go`: true or false, in place of the config's `assume-go`.
    pub assume_go: Option<bool>,
    /// The language server's `inspect-images` option, in place of the config's: there it reads
    /// only what earlier `lint --inspect-images` runs cached.
    pub inspect_images: Option<bool>,
}

/// What a container is taken to run when nothing shows its runtime (`assume-go`).
///
/// Unset, such a container is judged Go so that the Go rules still say what they would, but
/// their findings stay below the default gate: unknown is not Go, and a CI gate that failed on
/// a guess would fail on every Java service and database with no runtime hint. `true` is for
/// teams whose images are all Go; `false` keeps the Go rules off such containers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AssumeGo {
    /// Not set: judged Go, its Go findings info and their fixes unsafe.
    #[default]
    Unsettled,
    /// `assume-go: true`: Go, and its findings gate as any other.
    Go,
    /// `assume-go: false`: not Go; no Go rule runs on it.
    NotGo,
}

impl AssumeGo {
    pub fn of(on: bool) -> AssumeGo {
        if on {
            AssumeGo::Go
        } else {
            AssumeGo::NotGo
        }
    }

    /// Whether a container with no sign of its runtime is judged Go (the Go rules run on it).
    pub fn judges_go(self) -> bool {
        self != AssumeGo::NotGo
    }

    /// As `--show-settings` prints it.
    pub fn describe(self) -> &'static str {
        match self {
            AssumeGo::Unsettled => {
                "(not set: containers of unknown runtime get their Go findings as info)"
            }
            AssumeGo::Go => "true",
            AssumeGo::NotGo => "false",
        }
    }
}

impl Config {
    /// A file's path as the globs of `key` match it: relative to the directory of the config
    /// file that set `key` (itself or one it extends) when it lies below it, else as given.
    pub fn relative_path(&self, key: &str, path: &Path) -> String {
        let base = self
            .origins
            .get(key)
            .or(self.path.as_ref())
            .and_then(|p| p.parent());
        let abs = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        base.and_then(|b| std::fs::canonicalize(b).ok())
            .and_then(|b| abs.strip_prefix(b).ok().map(Path::to_path_buf))
            .unwrap_or_else(|| path.to_path_buf())
            .to_string_lossy()
            .into_owned()
    }

    /// The rules `per-file-ignores` turns off for a file.
    pub fn ignored_in(&self, path: &Path) -> Vec<crate::diagnostic::Code> {
        if self.per_file_ignores.is_empty() {
            return Vec::new();
        }
        let rel = self.relative_path("per-file-ignores", path);
        self.per_file_ignores
            .iter()
            .filter(|(g, _)| g.matching(&rel).is_some())
            .flat_map(|(_, codes)| codes.iter().copied())
            .collect()
    }

    /// Whether `exclude` (as this config has it, its own or inherited) matches `path`.
    pub fn excludes(&self, path: &Path) -> bool {
        !self.exclude.patterns.is_empty()
            && self
                .exclude
                .matching(&self.relative_path("exclude", path))
                .is_some()
    }

    /// The values files `chart-values` names in the chart at `chart`, in the order the entries
    /// are listed (a glob's files sorted by name; a file named twice is passed once), and the
    /// entries that match no file there.
    pub fn chart_values_in(&self, chart: &Path) -> (Vec<PathBuf>, Vec<&str>) {
        let mut files: Vec<PathBuf> = Vec::new();
        let mut unmatched = Vec::new();
        for entry in &self.chart_values {
            let mut matched: Vec<PathBuf> = match entry.contains(['*', '?', '[', '{']) {
                false => Some(chart.join(entry))
                    .filter(|p| p.is_file())
                    .into_iter()
                    .collect(),
                true => {
                    let Ok(glob) = globset::GlobBuilder::new(entry)
                        .literal_separator(true)
                        .build()
                    else {
                        unmatched.push(entry.as_str());
                        continue;
                    };
                    let glob = glob.compile_matcher();
                    let mut rel = Vec::new();
                    files_below(chart, Path::new(""), entry.contains('/'), &mut rel);
                    rel.sort();
                    rel.into_iter()
                        .filter(|r| glob.is_match(r))
                        .map(|r| chart.join(r))
                        .collect()
                }
            };
            if matched.is_empty() {
                unmatched.push(entry.as_str());
            }
            matched.retain(|m| !files.contains(m));
            files.extend(matched);
        }
        (files, unmatched)
    }

    /// The settings as `lint --show-settings` prints them: one `key: value` line each, in the
    /// config file's own key names.
    pub fn settings_text(&self) -> String {
        let list = |g: &Globs| format!("{:?}", g.patterns);
        let mut rules: Vec<_> = self.rules.iter().collect();
        rules.sort_by_key(|(c, _)| **c);
        let rules: Vec<String> = rules
            .iter()
            .map(|(c, l)| match l {
                RuleLevel::Off => format!("{c}: off"),
                RuleLevel::On(s) => format!("{c}: {}", s.as_str()),
            })
            .collect();
        let versions: Vec<String> = self
            .go_versions
            .iter()
            .map(|(g, v)| format!("{:?}: {v}", g.patterns))
            .collect();
        let ignores: Vec<String> = self
            .per_file_ignores
            .iter()
            .map(|(g, codes)| {
                let codes: Vec<String> = codes.iter().map(ToString::to_string).collect();
                format!("{:?}: [{}]", g.patterns, codes.join(", "))
            })
            .collect();
        let opt = |v: Option<String>| v.unwrap_or_else(|| "(not set)".into());
        [
            format!(
                "go-version: {}",
                opt(self.go_version.map(|v| v.to_string()))
            ),
            format!("go-versions: {{{}}}", versions.join(", ")),
            format!("assume-go: {}", self.assume_go.describe()),
            format!("go-images: {}", list(&self.go_images)),
            format!("non-go-images: {}", list(&self.non_go_images)),
            format!("sizes-gomaxprocs: {}", list(&self.sizes_gomaxprocs)),
            format!("sizes-gomemlimit: {}", list(&self.sizes_gomemlimit)),
            format!("node-cpus: {}", opt(self.node_cpus.map(|n| n.to_string()))),
            format!(
                "cpu-limits: {}",
                format!("{:?}", self.cpu_limits).to_lowercase()
            ),
            format!(
                "cpu-manager-policy: {}",
                format!("{:?}", self.cpu_manager_policy).to_lowercase()
            ),
            format!(
                "gomemlimit: {{ratio: {}, strategy: {}}}",
                self.gomemlimit_ratio,
                match self.gomemlimit_strategy {
                    MemLimitStrategy::Ratio => "ratio",
                    MemLimitStrategy::FieldRef => "field-ref",
                }
            ),
            format!("rules: {{{}}}", rules.join(", ")),
            match self.skip_vendored {
                true => format!(
                    "exclude: {} (not set: walks skip {} directories)",
                    list(&self.exclude),
                    SKIPPED_DIRS.join(", ")
                ),
                false => format!("exclude: {}", list(&self.exclude)),
            },
            format!("per-file-ignores: {{{}}}", ignores.join(", ")),
            format!("pod-spec-paths: {}", self.pod_spec_paths.len()),
            format!("inspect-images: {}", self.inspect_images),
            format!("fail-on: {}", opt(self.fail_on.clone())),
            format!("format: {}", opt(self.format.clone())),
            format!("chart-values: {:?}", self.chart_values),
        ]
        .into_iter()
        .chain((!self.extends.is_empty()).then(|| {
            let chain: Vec<String> = self
                .extends
                .iter()
                .map(|p| crate::text::shown_path(p))
                .collect();
            format!("extend: {}", chain.join(" -> "))
        }))
        .collect::<Vec<_>>()
        .join("\n")
    }

    pub fn apply(&mut self, o: &Overrides) {
        if o.go_version.is_some() {
            self.go_version = o.go_version;
        }
        if o.node_cpus.is_some() {
            self.node_cpus = o.node_cpus;
        }
        if let Some(on) = o.assume_go {
            self.assume_go = AssumeGo::of(on);
        }
        if let Some(on) = o.inspect_images {
            self.inspect_images = on;
        }
    }

    /// The Go version configured for an image (per-image globs first, then the global one).
    /// The Go version `go-versions` gives an image, and the pattern that gave it. The file-wide
    /// `go-version` is not one: it ranks below everything that places an image
    /// (`runtime::VERSION_PRECEDENCE`).
    pub fn go_version_by_image(&self, image: Option<&str>) -> Option<(GoVersion, &str)> {
        let image = image?;
        self.go_versions
            .iter()
            .find_map(|(globs, v)| globs.matching(image).map(|p| (*v, p)))
    }

    /// Reads a config file and, when it says `extend`, the files it builds on.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        Config::load_extending(path, &mut Vec::new())
    }

    /// [`Config::load`], with the files that extend this one, outermost first (`chain`), to
    /// tell a cycle from a chain.
    fn load_extending(path: &Path, chain: &mut Vec<PathBuf>) -> Result<Config, ConfigError> {
        let mut cfg = Config::load_one(path)?;
        for key in &cfg.written {
            cfg.origins.insert(key, path.to_path_buf());
        }
        let Some((target, line, column)) = cfg.extend.take() else {
            return Ok(cfg);
        };
        let at = |message: String| ConfigError {
            file: path.display().to_string(),
            line,
            column,
            message,
        };
        let base_path = path.parent().unwrap_or(Path::new(".")).join(&target);
        if !base_path.is_file() {
            return Err(at(format!(
                "extend: no config file at {} ({target:?} from this file's directory)",
                base_path.display()
            )));
        }
        let real = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
        chain.push(real(path));
        let base_real = real(&base_path);
        if let Some(first) = chain.iter().position(|p| *p == base_real) {
            let mut cycle: Vec<String> = chain[first..]
                .iter()
                .map(|p| p.display().to_string())
                .collect();
            cycle.push(base_real.display().to_string());
            return Err(at(format!("extend makes a cycle: {}", cycle.join(" -> "))));
        }
        let mut base = Config::load_extending(&base_path, chain).map_err(|mut e| {
            let by = path.display();
            e.message = match e.message.strip_suffix(')') {
                Some(m) if m.contains(" (extended by ") => format!("{m}, in turn by {by})"),
                _ => format!("{} (extended by {by})", e.message),
            };
            e
        })?;
        chain.pop();
        // The nearest file wins per top-level key: each key it sets replaces the base's whole.
        for key in &cfg.written {
            base.inherit(key, &cfg);
            base.origins.insert(key, path.to_path_buf());
        }
        base.extends.insert(0, base_real);
        base.path = cfg.path;
        base.written = cfg.written;
        Ok(base)
    }

    /// Takes `key`'s settings from `from`, in place of this config's.
    fn inherit(&mut self, key: &str, from: &Config) {
        match key {
            "go-version" => self.go_version = from.go_version,
            "go-versions" => self.go_versions = from.go_versions.clone(),
            "assume-go" => self.assume_go = from.assume_go,
            "go-images" => self.go_images = from.go_images.clone(),
            "non-go-images" => self.non_go_images = from.non_go_images.clone(),
            "sizes-gomaxprocs" => self.sizes_gomaxprocs = from.sizes_gomaxprocs.clone(),
            "sizes-gomemlimit" => self.sizes_gomemlimit = from.sizes_gomemlimit.clone(),
            "node-cpus" => self.node_cpus = from.node_cpus,
            "cpu-limits" => self.cpu_limits = from.cpu_limits,
            "cpu-manager-policy" => self.cpu_manager_policy = from.cpu_manager_policy,
            "gomemlimit" => {
                self.gomemlimit_ratio = from.gomemlimit_ratio;
                self.gomemlimit_strategy = from.gomemlimit_strategy;
            }
            "rules" => self.rules = from.rules.clone(),
            "exclude" => {
                self.exclude = from.exclude.clone();
                self.skip_vendored = from.skip_vendored;
            }
            "per-file-ignores" => self.per_file_ignores = from.per_file_ignores.clone(),
            "pod-spec-paths" => self.pod_spec_paths = from.pod_spec_paths.clone(),
            "inspect-images" => self.inspect_images = from.inspect_images,
            "fail-on" => self.fail_on = from.fail_on.clone(),
            "format" => self.format = from.format.clone(),
            "image-registries" => self.image_registries = from.image_registries.clone(),
            "chart-values" => self.chart_values = from.chart_values.clone(),
            // The chain itself, followed by the loader.
            "extend" => {}
            other => unreachable!("config key {other} has no inheritance"),
        }
    }

    fn load_one(path: &Path) -> Result<Config, ConfigError> {
        let bytes = std::fs::read(path).map_err(|e| ConfigError {
            file: path.display().to_string(),
            line: 1,
            column: 1,
            message: format!("cannot read config: {e}"),
        })?;
        let src =
            Source::decode(Origin::File(path.to_path_buf()), bytes).map_err(|f| ConfigError {
                file: path.display().to_string(),
                line: 1,
                column: 1,
                message: f.error.message(),
            })?;
        let mut cfg = Config::parse(&src)?;
        cfg.path = Some(path.to_path_buf());
        Ok(cfg)
    }

    pub fn parse(src: &Source) -> Result<Config, ConfigError> {
        let y = yaml::parse(src.yaml_text(), src.bom_len);
        let err = |offset: usize, message: String| {
            let (line, column) = src.line_col(offset);
            ConfigError {
                file: src.name.clone(),
                line,
                column,
                message,
            }
        };
        if let Some(doc) = y.docs.iter().find(|d| d.error.is_some()) {
            let e = doc.error.as_ref().unwrap();
            return Err(err(e.offset, format!("invalid YAML: {}", e.message)));
        }
        if let Some(d) = y.duplicates.first() {
            return Err(err(y.span(d.second).start, "duplicate key".into()));
        }
        let mut cfg = Config::default();
        let Some(root) = y.docs.first().and_then(|d| d.root) else {
            return Ok(cfg);
        };
        if y.is_null(root) {
            return Ok(cfg);
        }
        if !y.is_mapping(root) {
            return Err(err(
                y.span(root).start,
                "the config must be a mapping".into(),
            ));
        }
        let p = ConfigReader { y: &y, err: &err };
        for (k, v) in y.entries(root) {
            let key = y.str(k).unwrap_or("");
            if let Some(known) = KEYS.iter().find(|&&known| known == key) {
                cfg.written.push(known);
            }
            match key {
                "extend" => {
                    let target = p.string(v)?;
                    if target.is_empty() {
                        return Err(p.at(v, "extend needs the path of a config file".into()));
                    }
                    let (line, column) = src.line_col(y.span(v).start);
                    cfg.extend = Some((target.to_string(), line, column));
                }
                "go-version" => cfg.go_version = Some(p.go_version(v)?),
                "go-versions" => {
                    for (ik, iv) in p.map(v)? {
                        let glob = y.str(ik).unwrap_or("").to_string();
                        let globs = Globs::new(vec![glob]).map_err(|m| err(y.span(ik).start, m))?;
                        cfg.go_versions.push((globs, p.go_version(iv)?));
                    }
                }
                "assume-go" => cfg.assume_go = AssumeGo::of(p.bool(v)?),
                "inspect-images" => cfg.inspect_images = p.bool(v)?,
                "fail-on" => cfg.fail_on = Some(p.one_of(v, "fail-on", &FAIL_ON)?),
                "format" => cfg.format = Some(p.one_of(v, "format", &FORMATS)?),
                "image-registries" => {
                    for i in p.seq(v)? {
                        cfg.image_registries.push(p.string(i)?.to_string());
                    }
                }
                "chart-values" => {
                    for i in p.seq(v)? {
                        let entry = p.string(i)?;
                        if entry.is_empty() {
                            return Err(p.at(i, "a chart-values entry names a file or glob".into()));
                        }
                        Glob::new(entry)
                            .map_err(|e| p.at(i, format!("invalid glob {entry:?}: {e}")))?;
                        cfg.chart_values.push(entry.to_string());
                    }
                }
                "go-images" => cfg.go_images = p.globs(v)?,
                "non-go-images" => cfg.non_go_images = p.globs(v)?,
                "sizes-gomaxprocs" => cfg.sizes_gomaxprocs = p.globs(v)?,
                "sizes-gomemlimit" => cfg.sizes_gomemlimit = p.globs(v)?,
                "node-cpus" => {
                    let n = p.int(v)?;
                    if !(1..=100_000).contains(&n) {
                        return Err(err(y.span(v).start, "node-cpus must be 1 or more".into()));
                    }
                    cfg.node_cpus = Some(n as u32);
                }
                "cpu-limits" => {
                    cfg.cpu_limits = match p.string(v)? {
                        "warn" => CpuLimits::Warn,
                        "forbid" => CpuLimits::Forbid,
                        "allow" => CpuLimits::Allow,
                        other => {
                            return Err(err(
                                y.span(v).start,
                                format!("cpu-limits must be warn, forbid or allow, not {other:?}"),
                            ))
                        }
                    }
                }
                "cpu-manager-policy" => {
                    cfg.cpu_manager_policy = match p.string(v)? {
                        "none" => CpuManagerPolicy::None,
                        "static" => CpuManagerPolicy::Static,
                        other => {
                            return Err(err(
                                y.span(v).start,
                                format!("cpu-manager-policy must be none or static, not {other:?}"),
                            ))
                        }
                    }
                }
                "gomemlimit" => {
                    for (ik, iv) in p.map(v)? {
                        match y.str(ik).unwrap_or("") {
                            "ratio" => {
                                let text = p.string(iv)?;
                                let r: f64 = text.parse().map_err(|_| {
                                    err(
                                        y.span(iv).start,
                                        format!("ratio must be a number, not {text:?}"),
                                    )
                                })?;
                                if !(r > 0.0 && r <= 1.0) {
                                    return Err(err(
                                        y.span(iv).start,
                                        format!("ratio must be above 0 and at most 1, not {r}"),
                                    ));
                                }
                                cfg.gomemlimit_ratio = r;
                            }
                            "strategy" => {
                                cfg.gomemlimit_strategy = match p.string(iv)? {
                                    "ratio" => MemLimitStrategy::Ratio,
                                    "field-ref" => MemLimitStrategy::FieldRef,
                                    other => {
                                        return Err(err(
                                            y.span(iv).start,
                                            format!(
                                                "strategy must be ratio or field-ref, not {other:?}"
                                            ),
                                        ))
                                    }
                                }
                            }
                            other => {
                                return Err(err(
                                    y.span(ik).start,
                                    format!(
                                        "unknown key gomemlimit.{other} (expected ratio, strategy)"
                                    ),
                                ))
                            }
                        }
                    }
                }
                "rules" => {
                    for (ik, iv) in p.map(v)? {
                        let name = y.str(ik).unwrap_or("");
                        let Some(rule) = registry::find(name) else {
                            return Err(err(
                                y.span(ik).start,
                                format!(
                                    "unknown rule {name:?}{} (see `golint-k8s rules`)",
                                    registry::did_you_mean(name)
                                ),
                            ));
                        };
                        let word = p.string(iv)?;
                        let sev = match (word, Severity::parse(word)) {
                            ("off" | "false", _) => RuleLevel::Off,
                            (_, Some(severity)) => RuleLevel::On(severity),
                            (other, None) => {
                                return Err(err(
                                    y.span(iv).start,
                                    format!(
                                    "rule level must be off, info, warning or error, not {other:?}"
                                ),
                                ))
                            }
                        };
                        cfg.rules.insert(rule.code, sev);
                    }
                }
                "exclude" => {
                    cfg.exclude = p.globs(v)?;
                    cfg.skip_vendored = false;
                }
                "per-file-ignores" => {
                    for (ik, iv) in p.map(v)? {
                        let glob = p.string(ik)?.to_string();
                        let globs = Globs::new(vec![glob]).map_err(|m| p.at(ik, m))?;
                        let mut codes = Vec::new();
                        for c in p.seq(iv)? {
                            let name = p.string(c)?;
                            let matched = registry::matching(name);
                            if matched.is_empty() {
                                return Err(err(
                                    y.span(c).start,
                                    format!(
                                        "unknown rule or rule block {name:?}{} (see `golint-k8s rules`)",
                                        registry::did_you_mean(name)
                                    ),
                                ));
                            }
                            codes.extend(matched.into_iter().map(|r| r.code));
                        }
                        cfg.per_file_ignores.push((globs, codes));
                    }
                }
                "pod-spec-paths" => {
                    for item in p.seq(v)? {
                        let mut api_version = None;
                        let mut kind = None;
                        let mut path = None;
                        for (ik, iv) in p.map(item)? {
                            match y.str(ik).unwrap_or("") {
                                "api-version" => api_version = Some(p.string(iv)?.to_string()),
                                "kind" => kind = Some(p.string(iv)?.to_string()),
                                "path" => path = Some(p.string(iv)?.to_string()),
                                other => {
                                    return Err(err(
                                        y.span(ik).start,
                                        format!("unknown key {other:?} in pod-spec-paths (expected api-version, kind, path)"),
                                    ))
                                }
                            }
                        }
                        let (Some(kind), Some(path)) = (kind, path) else {
                            return Err(err(
                                y.span(item).start,
                                "a pod-spec-paths entry needs kind and path".into(),
                            ));
                        };
                        cfg.pod_spec_paths.push(PodSpecPath {
                            api_version: api_version.unwrap_or_default(),
                            kind,
                            path: path.split('.').map(str::to_string).collect(),
                        });
                    }
                }
                other => {
                    let close = crate::text::nearest(other, KEYS.iter().copied());
                    return Err(err(
                        y.span(k).start,
                        format!(
                            "unknown key {other:?}{} (expected one of: {})",
                            close.map_or_else(String::new, |k| format!(", did you mean {k}?")),
                            KEYS.join(", ")
                        ),
                    ));
                }
            }
        }
        Ok(cfg)
    }
}

/// The files under `dir` (below `rel` in it), as paths relative to `dir`; into subdirectories
/// only when `deep` (a `chart-values` glob with a `/`), and never through a symlinked directory.
fn files_below(dir: &Path, rel: &Path, deep: bool, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir.join(rel)) else {
        return;
    };
    for e in entries.flatten() {
        let path = rel.join(e.file_name());
        match e.file_type() {
            Ok(t) if t.is_dir() && deep => files_below(dir, &path, deep, out),
            Ok(_) if dir.join(&path).is_file() => out.push(path),
            _ => {}
        }
    }
}

struct ConfigReader<'y, 'a, F> {
    y: &'y Yaml<'a>,
    err: &'y F,
}

impl<F: Fn(usize, String) -> ConfigError> ConfigReader<'_, '_, F> {
    fn at(&self, n: NodeId, m: String) -> ConfigError {
        (self.err)(self.y.span(n).start, m)
    }

    fn string(&self, n: NodeId) -> Result<&str, ConfigError> {
        self.y
            .str(n)
            .ok_or_else(|| self.at(n, "expected a single value".into()))
    }

    /// A value from a closed list of names.
    fn one_of(&self, n: NodeId, key: &str, names: &[&str]) -> Result<String, ConfigError> {
        let v = self.string(n)?;
        match names.contains(&v) {
            true => Ok(v.to_string()),
            false => Err(self.at(
                n,
                format!("{key} must be one of {}, not {v:?}", names.join(", ")),
            )),
        }
    }

    fn bool(&self, n: NodeId) -> Result<bool, ConfigError> {
        match self.y.resolved(n) {
            Some(yaml::Yaml11::Bool(b)) => Ok(b),
            _ => Err(self.at(n, "expected true or false".into())),
        }
    }

    fn int(&self, n: NodeId) -> Result<i64, ConfigError> {
        self.string(n)?
            .parse()
            .map_err(|_| self.at(n, "expected a whole number".into()))
    }

    fn go_version(&self, n: NodeId) -> Result<GoVersion, ConfigError> {
        let s = self.string(n)?;
        GoVersion::parse(s).ok_or_else(|| {
            self.at(
                n,
                format!("expected a Go version such as \"1.25\", not {s:?} (quote it: 1.20 unquoted is the number 1.2)"),
            )
        })
    }

    fn map(&self, n: NodeId) -> Result<Vec<(NodeId, NodeId)>, ConfigError> {
        if self.y.is_null(n) {
            return Ok(Vec::new());
        }
        if !self.y.is_mapping(n) {
            return Err(self.at(n, "expected a mapping".into()));
        }
        Ok(self.y.entries(n))
    }

    fn seq(&self, n: NodeId) -> Result<Vec<NodeId>, ConfigError> {
        if self.y.is_null(n) {
            return Ok(Vec::new());
        }
        let r = self.y.resolve(n);
        match r.map(|r| &self.y.node(r).kind) {
            Some(yaml::NodeKind::Sequence { items, .. }) => Ok(items.to_vec()),
            _ => Err(self.at(n, "expected a list".into())),
        }
    }

    fn globs(&self, n: NodeId) -> Result<Globs, ConfigError> {
        let mut pats = Vec::new();
        for i in self.seq(n)? {
            pats.push(self.string(i)?.to_string());
        }
        Globs::new(pats).map_err(|m| self.at(n, m))
    }
}

/// Finds the config for each linted file by walking up from its directory, caching per directory.
/// The walk stops at the root of the git repository that holds the file; outside a repository it
/// goes on to `/`, as ruff's does.
pub struct ConfigFinder {
    explicit: Option<std::sync::Arc<Config>>,
    overrides: Overrides,
    cache: std::sync::Mutex<HashMap<PathBuf, Result<std::sync::Arc<Config>, ConfigError>>>,
    /// The same answers keyed by the directory as the file's path spells it.
    by_written_dir: std::sync::Mutex<HashMap<PathBuf, Result<std::sync::Arc<Config>, ConfigError>>>,
    default: std::sync::Arc<Config>,
}

impl ConfigFinder {
    pub fn new(explicit: Option<Config>, overrides: Overrides) -> ConfigFinder {
        let mut default = Config::default();
        default.apply(&overrides);
        ConfigFinder {
            explicit: explicit.map(|mut c| {
                c.apply(&overrides);
                std::sync::Arc::new(c)
            }),
            overrides,
            cache: std::sync::Mutex::new(HashMap::new()),
            by_written_dir: std::sync::Mutex::new(HashMap::new()),
            default: std::sync::Arc::new(default),
        }
    }

    /// The same finder with nothing read yet, as the config files beside the inputs changed on
    /// disk (a config named on the command line was read once and stays).
    pub fn fresh(&self) -> ConfigFinder {
        ConfigFinder {
            explicit: self.explicit.clone(),
            overrides: self.overrides.clone(),
            cache: Default::default(),
            by_written_dir: Default::default(),
            default: self.default.clone(),
        }
    }

    /// The config that governs `file` (a path, or the stdin name resolved against the cwd).
    pub fn for_file(&self, file: &Path) -> Result<std::sync::Arc<Config>, ConfigError> {
        if let Some(c) = &self.explicit {
            return Ok(c.clone());
        }
        let dir = file
            .parent()
            .map(Path::to_path_buf)
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or_else(|| PathBuf::from("."));
        // Files of one directory share its answer: resolving the directory again for each of
        // them was a few system calls per path component, per file.
        if let Some(hit) = self.by_written_dir.lock().unwrap().get(&dir) {
            return hit.clone();
        }
        let real = std::fs::canonicalize(&dir).unwrap_or_else(|_| dir.clone());
        let result = self.for_dir(&real);
        self.by_written_dir
            .lock()
            .unwrap()
            .insert(dir, result.clone());
        result
    }

    fn for_dir(&self, dir: &Path) -> Result<std::sync::Arc<Config>, ConfigError> {
        if let Some(hit) = self.cache.lock().unwrap().get(dir) {
            return hit.clone();
        }
        let found: Vec<PathBuf> = crate::walk::CONFIG_FILE_NAMES
            .iter()
            .map(|n| dir.join(n))
            .filter(|p| p.is_file())
            .collect();
        let result = if let [first, second, ..] = found.as_slice() {
            // Which one wins would be a guess: the user says.
            Err(ConfigError {
                file: first.display().to_string(),
                line: 1,
                column: 1,
                message: format!("{} is here too; keep one of the two", second.display()),
            })
        } else if let [candidate] = found.as_slice() {
            Config::load(candidate).map(|mut c| {
                c.apply(&self.overrides);
                std::sync::Arc::new(c)
            })
        } else {
            match dir.parent() {
                // A repository's root ends the search: a config above it (in a shared workspace
                // or a temporary directory) belongs to somebody else and must not switch the
                // repository's rules off.
                Some(parent) if parent != dir && !crate::walk::is_repository_root(dir) => {
                    self.for_dir(parent)
                }
                _ => Ok(self.default.clone()),
            }
        };
        self.cache
            .lock()
            .unwrap()
            .insert(dir.to_path_buf(), result.clone());
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostic::Code;

    /// The language server's `inspect-images` option replaces the config's, either way.
    #[test]
    fn the_inspect_images_override_replaces_the_configs() {
        let mut c = Config::default();
        c.apply(&Overrides {
            inspect_images: Some(true),
            ..Default::default()
        });
        assert!(c.inspect_images);
        c.apply(&Overrides::default());
        assert!(c.inspect_images, "no override keeps what the config says");
        c.apply(&Overrides {
            inspect_images: Some(false),
            ..Default::default()
        });
        assert!(!c.inspect_images);
    }

    fn parse(text: &str) -> Result<Config, ConfigError> {
        Config::parse(&Source::from_text(
            Origin::Stdin(FILE_NAME.into()),
            text.to_string(),
        ))
    }

    #[test]
    fn full_config_parses() {
        let c = parse(
            "go-version: \"1.24\"\ngo-versions: {\"ghcr.io/acme/*\": \"1.25\"}\nassume-go: true\ngo-images: [\"ghcr.io/acme/*\"]\nnon-go-images: [\"docker.io/library/nginx*\"]\nnode-cpus: 16\ncpu-limits: warn\ncpu-manager-policy: static\ngomemlimit: {ratio: 0.9, strategy: ratio}\nrules: {GK401: off, GK203: error}\nexclude: [\"charts/**/templates/**\"]\npod-spec-paths:\n  - {api-version: \"example.com/v1\", kind: Worker, path: \"spec.template.spec\"}\n",
        )
        .unwrap();
        assert_eq!(c.go_version, Some(GoVersion::new(1, 24)));
        assert_eq!(
            c.go_version_by_image(Some("ghcr.io/acme/api:1")).unwrap().0,
            GoVersion::new(1, 25)
        );
        assert_eq!(c.node_cpus, Some(16));
        assert_eq!(c.cpu_manager_policy, CpuManagerPolicy::Static);
        assert_eq!(c.rules.get(&Code::GK401), Some(&RuleLevel::Off));
        assert_eq!(
            c.rules.get(&Code::GK203),
            Some(&RuleLevel::On(Severity::Error))
        );
        assert_eq!(c.pod_spec_paths[0].path, vec!["spec", "template", "spec"]);
    }

    #[test]
    fn errors_point_at_the_line() {
        let e = parse("node-cpus: 4\nnode-cpu: 4\n").unwrap_err();
        assert_eq!((e.line, e.column), (2, 1));
        assert!(e.message.contains("unknown key \"node-cpu\""));
        let e = parse("cpu-limits: sometimes\n").unwrap_err();
        assert_eq!((e.line, e.column), (1, 13));
        let e = parse("rules:\n  GK999: off\n").unwrap_err();
        assert_eq!(e.line, 2);
        let e = parse("gomemlimit: {ratio: 1.5}\n").unwrap_err();
        assert!(e.message.contains("at most 1"));
    }

    #[test]
    fn every_key_is_inherited_whole() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().join("base.yaml");
        std::fs::write(
            &base,
            "node-cpus: 4\nrules: {GK101: off}\nexclude: [\"a/**\"]\n",
        )
        .unwrap();
        let nested = dir.path().join("sub/.golint-k8s.yaml");
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(&nested, "extend: ../base.yaml\nrules: {GK203: error}\n").unwrap();
        let c = Config::load(&nested).unwrap();
        assert_eq!(c.node_cpus, Some(4));
        // The nearest file's rules replace the base's whole: GK101 is on again.
        assert_eq!(c.rules.len(), 1);
        assert_eq!(std::fs::canonicalize(&c.origins["exclude"]).unwrap(), base);
        assert_eq!(c.origins["rules"], nested);
        assert!(!c.skip_vendored);
        // Every key has its inheritance (none falls through to the unreachable arm).
        let mut into = Config::default();
        for key in KEYS {
            into.inherit(key, &c);
        }
        assert_eq!(into.node_cpus, Some(4));
    }

    #[test]
    fn chart_values_keep_the_listed_order_and_sort_within_a_glob() {
        let chart = tempfile::tempdir().unwrap();
        std::fs::create_dir(chart.path().join("env")).unwrap();
        for f in [
            "values-b.yaml",
            "values-a.yaml",
            "prod.yaml",
            "env/x.yaml",
            "env/w.yaml",
        ] {
            std::fs::write(chart.path().join(f), "{}\n").unwrap();
        }
        let c = parse(
            "chart-values: [prod.yaml, \"values-*.yaml\", \"env/*.yaml\", values-a.yaml, staging.yaml, \"*.json\"]\n",
        )
        .unwrap();
        let (files, unmatched) = c.chart_values_in(chart.path());
        let names: Vec<String> = files
            .iter()
            .map(|f| f.strip_prefix(chart.path()).unwrap().display().to_string())
            .collect();
        assert_eq!(
            names,
            [
                "prod.yaml",
                "values-a.yaml",
                "values-b.yaml",
                "env/w.yaml",
                "env/x.yaml"
            ]
        );
        assert_eq!(unmatched, ["staging.yaml", "*.json"]);
        let e = parse("chart-values: [\"values-[.yaml\"]\n").unwrap_err();
        assert!(e.message.contains("invalid glob"), "{e}");
    }

    #[test]
    fn go_versions_parse() {
        assert_eq!(GoVersion::parse("go1.25rc1"), Some(GoVersion::new(1, 25)));
        assert_eq!(GoVersion::parse("1.25.3"), Some(GoVersion::new(1, 25)));
        assert_eq!(GoVersion::parse("1"), None);
    }
}
