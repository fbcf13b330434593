//! The Go view of a container: is it Go (and why), which Go version (and why), and how the Go
//! runtime will read its environment. The parsers here mirror the Go runtime's own (Go 1.26
//! source: `runtime/mgcpacer.go` readGOGC, `runtime/mgcpacer.go` readGOMEMLIMIT and
//! `runtime/string.go` parseByteCount, `runtime/proc.go` schedinit) so that a rule can say exactly
//! what the process does with a value, including the values it silently ignores.
//!
//! Which runtime a container runs is decided from evidence, strongest first: the annotation, the
//! config, Go runtime variables, other runtimes' variables, the program the command runs, a
//! `ko://` image, the catalog of well-known images ([`catalog`]), runtime names in the image
//! reference ([`signs`]), the repository's Dockerfile for the image ([`build`]), a shell script
//! as the command, and only then the `assume-go` assumption.

pub mod build;
pub mod evidence;
pub mod gomod;
pub mod process;
pub mod signs;
pub mod throttle;

use crate::config::{AssumeGo, Config, GoVersion};
use crate::go::{catalog, godebug_value};
use crate::k8s::container::{container_annotation, Container};
use crate::text::{push_debug, push_int};
use crate::yaml::{NodeId, Yaml};
use gomod::MainPackage;
use std::fmt::Write as _;
use std::sync::Arc;

pub const GO_1_16: GoVersion = GoVersion::new(1, 16);
pub const GO_1_19: GoVersion = GoVersion::new(1, 19);
pub const GO_1_25: GoVersion = GoVersion::new(1, 25);
pub const GO_1_26: GoVersion = GoVersion::new(1, 26);

/// Env vars only the Go runtime (or Go libraries) read: their presence says "this is Go".
pub const GO_ENV_VARS: &[&str] = &[
    "GOMAXPROCS",
    "GOMEMLIMIT",
    "GOGC",
    "GODEBUG",
    "AUTOMEMLIMIT",
    "GOTRACEBACK",
];

/// The Go view of a container: whether it runs Go (and the evidence), which Go version (and why),
/// and whether the program sizes GOMAXPROCS or GOMEMLIMIT itself.
#[derive(Debug, Clone)]
pub struct GoView<'a> {
    /// Whether Go-only rules run: Go by evidence, or by the assumption.
    pub is_go: bool,
    /// `go`, another language, or None when nothing says (the assumption may still judge it Go).
    pub language: Option<&'a str>,
    pub why_go: WhyGo<'a>,
    pub version: Option<GoVersion>,
    pub why_version: WhyVersion<'a>,
    /// A declared version below the main module's `go` line, which the line overruled.
    pub overruled: Option<(GoVersion, WhyVersion<'a>)>,
    pub sizes_gomaxprocs: Option<Sizing<'a>>,
    pub sizes_gomemlimit: Option<Sizing<'a>>,
    /// How the program sets GOMAXPROCS itself, for its release ([`Sizing::gomaxprocs_formula`]),
    /// and the value its arguments give the formula's flag.
    pub gomaxprocs_formula: Option<&'static catalog::Formula>,
    pub gomaxprocs_flag: Option<&'a str>,
    /// The main package behind a `ko://` image, when its source is in the linted tree.
    pub main: Option<Arc<MainPackage>>,
    /// The env's GODEBUG, when its last entry is written in the manifest (or, failing that, in
    /// the inspected image's config).
    pub godebug: Option<&'a str>,
    /// What `--inspect-images` read from the container's image, when it applies to what the
    /// container runs (its `command` does not replace the entrypoint).
    pub image: Option<&'a crate::image::ImageFacts>,
    /// What `--inspect-images` could not tell of the image (it could not be read, or its
    /// entrypoint was not found), for the notes.
    pub image_note: Option<String>,
    /// The image Kustomize renders for the container, when a kustomization renames it: the
    /// image the decision read.
    pub renamed: Option<&'a crate::k8s::kustomize::Rename>,
    /// The pod's `app.kubernetes.io/version`, when it named the release of an image pinned by
    /// digest alone for the catalog.
    pub release_label: Option<&'a str>,
}

/// What the runtime decision may read beyond the manifest: the project files around it and what
/// reading images found, lent by the run that owns them ([`crate::project::Project::around`]).
#[derive(Clone, Copy)]
pub struct Around<'p> {
    /// The file the container was read from, when it is a file (for `ko://` and the build).
    pub manifest: Option<&'p std::path::Path>,
    pub listings: &'p crate::walk::Listings,
    pub builds: &'p build::Builds,
    pub modules: &'p gomod::Modules,
    pub images: &'p crate::image::Inspected,
    /// The kustomizations around the manifest: the image Kustomize renders for a container.
    pub kustomizations: &'p crate::k8s::kustomize::Kustomizations,
}

/// The CPU numbers a container's GOMAXPROCS depends on.
#[derive(Debug, Clone, Copy, Default)]
pub struct CpuView<'q> {
    pub limit: Option<&'q crate::k8s::Quantity>,
    pub request: Option<&'q crate::k8s::Quantity>,
    pub node_cpus: Option<u32>,
}

/// GOMAXPROCS and the reason, as a message quotes it (`GOMAXPROCS = 2, Go 1.25's default …`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Threads {
    pub n: i128,
    /// How many run at once: `n`, or the node's CPUs when there are fewer (the reason says so).
    pub running: i128,
    pub why: String,
}

/// What the kubelet writes for a CPU `resourceFieldRef` of this container: ceil(value / divisor)
/// in the divisor's unit (`divisor: 1m` gives millicores), and how the message names it.
fn downward_cpu(
    f: &crate::k8s::container::FieldRef,
    c: &Container,
    cpu: CpuView,
) -> Option<(i128, String)> {
    if f.container_name.is_some_and(|(n, _)| Some(n) != c.name) {
        return None;
    }
    let (resource, _) = f.resource?;
    let value = match resource {
        "limits.cpu" => cpu.limit?,
        "requests.cpu" => cpu.request?,
        _ => return None,
    };
    let divisor = match &f.divisor {
        None => 1000,
        Some((_, _, q)) => q.as_ref()?.milli_value_ceil(),
    };
    if divisor <= 0 {
        return None;
    }
    let n = (value.milli_value_ceil() + divisor - 1) / divisor;
    let from = match &f.divisor {
        Some((text, _, _)) => format!(" from resourceFieldRef {resource} with divisor {text}"),
        None => format!(" from resourceFieldRef {resource}"),
    };
    Some((n, from))
}

/// What decided a container's runtime. Kept as the facts rather than a sentence: every container
/// is judged, and only those with a finding need it written out.
#[derive(Debug, Clone)]
pub enum WhyGo<'a> {
    /// The runtime annotation: the container's name when it was the per-container key, and the
    /// value (trimmed).
    Annotation {
        container: Option<&'a str>,
        value: &'a str,
    },
    /// A `go-images` (true) or `non-go-images` (false) pattern of the config.
    ConfigImages { go: bool, pattern: &'a str },
    /// A Go runtime variable the container sets.
    GoEnv(&'a str),
    /// A variable another runtime reads.
    OtherEnv {
        name: &'a str,
        language: &'static str,
    },
    /// The program the command runs.
    Command {
        word: &'a str,
        language: &'static str,
    },
    /// A shell script as the command, with no known program in sight.
    Script(&'a str),
    /// The Dockerfile that builds the image, in the linted tree ([`build`]).
    Build(Arc<build::BuildFacts>),
    /// A runtime named by the image reference (`ko://`, `vllm`, a `-py3` tag).
    ImageName {
        image: &'a str,
        word: &'static str,
        language: &'static str,
    },
    /// The image itself, read from its registry (`--inspect-images`).
    Image(&'a crate::image::ImageFacts),
    /// The built-in catalog of images: the image and its entry.
    Catalog {
        image: &'a str,
        entry: &'static catalog::Entry,
    },
    /// Nothing showed a runtime: `assume-go` decided.
    AssumeGo(crate::config::AssumeGo),
    /// Nothing showed a runtime and the image is a placeholder filled in at deploy time: taken as
    /// Go below the gate, as with `assume-go` unset.
    Placeholder(&'a str),
}

/// How a user settles what a container runs, as the notes and the summary name the ways.
pub const SETTLE: &str = "settle it with the annotation golint-k8s.io/runtime: go|other, go-images / non-go-images in .golint-k8s.yaml, or --inspect-images";

/// Where the Go version came from.
#[derive(Debug, Clone, Copy)]
pub enum WhyVersion<'a> {
    /// The go-version annotation, as written.
    Annotation(&'a str),
    /// A `go-versions` pattern of the config, or (None) its `go-version`.
    Config(Option<&'a str>, GoVersion),
    /// The `go` line of the main module behind a `ko://` image ([`GoView::main`]).
    GoMod,
    /// The build info of the image's executable (`--inspect-images`).
    Image(&'a crate::image::ImageFacts),
    /// The catalog: the program's main module says `go 1.25` or later in this release.
    Catalog(&'static catalog::Entry),
    /// The catalog: the program's main module said an older `go` line in this release.
    CatalogBefore(&'static catalog::Entry),
    Unknown,
}

/// A source of a container's Go version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VersionSourceKind {
    Annotation,
    ConfigByImage,
    ImageBuildInfo,
    CatalogRelease,
    MainModule,
    ConfigDefault,
}

/// Where a Go version can come from, strongest first; the first that says wins, except that no
/// declared version (the annotation, the config) goes below a main module's `go` line, which no
/// older Go can build. The catalog's record of a tagged release comes before the repository's
/// go.mod: the tree's go.mod describes its source as it is now, and an image tagged with an
/// older release was built from older source.
///
/// [`choose_version`] walks this table; docs/rules.md ("Which Go version") lists the same sources
/// in the same order, each item naming the words of its row (a unit test holds them together).
pub const VERSION_PRECEDENCE: [(VersionSourceKind, &str); 6] = [
    (VersionSourceKind::Annotation, "golint-k8s.io/go-version"),
    (VersionSourceKind::ConfigByImage, "`go-versions`"),
    (VersionSourceKind::ImageBuildInfo, "build info"),
    (
        VersionSourceKind::CatalogRelease,
        "the catalog, for an image",
    ),
    (
        VersionSourceKind::MainModule,
        "`go` line of the repository's main module",
    ),
    (VersionSourceKind::ConfigDefault, "`--go-version`"),
];

/// A version and where it came from; None for a version known only to be older than Go 1.25
/// (the catalog's releases before their main module said `go 1.25`).
pub type VersionSource<'a> = (Option<GoVersion>, WhyVersion<'a>);

/// Each source's version, when it has one (the fields in the order of [`VERSION_PRECEDENCE`]).
pub struct VersionSources<'a> {
    pub annotated: Option<VersionSource<'a>>,
    pub by_image: Option<VersionSource<'a>>,
    pub read: Option<VersionSource<'a>>,
    /// A lower bound as well as a version (`go 1.25` or later) when it is one.
    pub cataloged: Option<VersionSource<'a>>,
    /// A lower bound as well as a version.
    pub built: Option<VersionSource<'a>>,
    pub default: Option<VersionSource<'a>>,
}

impl<'a> VersionSources<'a> {
    fn of(&self, kind: VersionSourceKind) -> Option<VersionSource<'a>> {
        match kind {
            VersionSourceKind::Annotation => self.annotated,
            VersionSourceKind::ConfigByImage => self.by_image,
            VersionSourceKind::ImageBuildInfo => self.read,
            VersionSourceKind::CatalogRelease => self.cataloged,
            VersionSourceKind::MainModule => self.built,
            VersionSourceKind::ConfigDefault => self.default,
        }
    }
}

/// The version a container's Go view uses, where it came from, and the declared version a `go`
/// line overruled.
#[derive(Debug, Clone, Copy)]
pub struct ChosenVersion<'a> {
    pub version: Option<GoVersion>,
    pub why: WhyVersion<'a>,
    pub overruled: Option<(GoVersion, WhyVersion<'a>)>,
}

/// The one function from the sources of a Go version to the version (see [`VERSION_PRECEDENCE`]).
/// A version read from the image's executable is a fact and stands; one declared by the
/// annotation or the config goes no lower than a main module's `go` line.
pub fn choose_version(s: VersionSources<'_>) -> ChosenVersion<'_> {
    let first = VERSION_PRECEDENCE.iter().find_map(|&(kind, _)| s.of(kind));
    let Some((version, why)) = first else {
        return ChosenVersion {
            version: None,
            why: WhyVersion::Unknown,
            overruled: None,
        };
    };
    let declared = matches!(why, WhyVersion::Annotation(_) | WhyVersion::Config(..));
    // The sources that read a main module's `go` line.
    let floor = [
        VersionSourceKind::CatalogRelease,
        VersionSourceKind::MainModule,
    ]
    .into_iter()
    .filter_map(|kind| s.of(kind))
    .filter_map(|(g, by)| Some((g?, by)))
    .max_by_key(|(g, _)| *g);
    match (floor, version) {
        (Some((line, by)), Some(v)) if declared && line > v => ChosenVersion {
            version: Some(line),
            why: by,
            overruled: Some((v, why)),
        },
        _ => ChosenVersion {
            version,
            why,
            overruled: None,
        },
    }
}

/// Why a Go program sizes GOMAXPROCS or GOMEMLIMIT itself.
#[derive(Debug, Clone, Copy)]
pub enum Sizing<'a> {
    /// A `sizes-gomaxprocs` / `sizes-gomemlimit` pattern of the config.
    Config(&'a str),
    /// The main package imports a package that does it at start-up.
    Import(&'static catalog::Framework),
    /// The image's executable links a module that does it (`--inspect-images`).
    Image {
        facts: &'a crate::image::ImageFacts,
        framework: &'static catalog::Framework,
    },
    /// The catalog says this program does it, from a release on.
    Catalog {
        entry: &'static catalog::Entry,
        sizing: &'static catalog::SelfSizing,
    },
}

impl WhyGo<'_> {
    /// The reason as the notes give it.
    pub fn write_to(&self, s: &mut String) {
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
                s.push_str(if go { "" } else { "non-" });
                s.push_str("go-images ");
                push_debug(s, pattern);
            }
            WhyGo::GoEnv(name) => {
                s.push_str("it sets the Go runtime variable ");
                s.push_str(name);
            }
            WhyGo::OtherEnv { name, language } => {
                let _ = write!(s, "it sets {name}, which {language} reads");
            }
            WhyGo::Command { word, language } => {
                let _ = write!(s, "its command runs {word} ({language})");
            }
            WhyGo::Script(word) => {
                let _ = write!(s, "its command runs the shell script {word}");
            }
            WhyGo::Build(ref b) => {
                let _ = write!(s, "the image is built by {}: {}", b.file, b.why);
            }
            WhyGo::ImageName {
                image,
                word: "ko://",
                ..
            } => {
                let _ = write!(s, "the image {image} is built by ko from a Go main package");
            }
            WhyGo::ImageName {
                image,
                word,
                language,
            } => {
                let _ = write!(s, "the image {image} names {word} ({language})");
            }
            WhyGo::Catalog { image, entry } => {
                let _ = write!(s, "the image {image} is {}", entry.program);
                if entry.is_go() {
                    s.push_str(", a Go program");
                } else {
                    let _ = write!(s, ", written in {}", entry.language);
                }
                let _ = write!(s, " (catalog: {})", entry.source);
            }
            WhyGo::Image(f) => {
                s.push_str("the entrypoint read ");
                f.describe_to(s);
            }
            WhyGo::AssumeGo(AssumeGo::Unsettled) => s.push_str(
                "nothing shows which runtime it runs: taken as Go, with its Go findings below the gate",
            ),
            WhyGo::AssumeGo(AssumeGo::Go) => {
                s.push_str("assume-go is on and nothing says otherwise")
            }
            WhyGo::AssumeGo(AssumeGo::NotGo) => s.push_str("assume-go is off"),
            WhyGo::Placeholder(image) => {
                s.push_str("the image ");
                push_debug(s, image);
                s.push_str(" is a placeholder filled in at deploy time: taken as Go, with its Go findings below the gate");
            }
        }
    }

    pub fn describe(&self) -> String {
        let mut s = String::new();
        self.write_to(&mut s);
        s
    }
}

/// What config's `sizes-gomaxprocs` stands for: a program that sizes itself as
/// go.uber.org/automaxprocs does, the common way.
pub const SIZES_LIKE_AUTOMAXPROCS: catalog::Formula = catalog::Formula::Quota {
    round: catalog::Rounding::Floor,
    min: 1,
    at_most_cpus: false,
    cgroup_v1_only: false,
    env: catalog::EnvStops::Set,
};

/// The value the container's `command` and `args` give `flag` (`--flag=4` or `--flag 4`), the
/// last one given.
fn flag_value<'a>(y: &'a Yaml, c: &Container, flag: &str) -> Option<&'a str> {
    let mut words = [c.command, c.args]
        .into_iter()
        .flatten()
        .flat_map(|n| y.items(n).iter().map(|&i| y.str(i)));
    let mut value = None;
    while let Some(w) = words.next() {
        let Some(w) = w else { continue };
        let Some(rest) = w.strip_prefix(flag) else {
            continue;
        };
        if let Some(v) = rest.strip_prefix('=') {
            value = Some(v);
        } else if rest.is_empty() {
            value = words.next().flatten();
        }
    }
    value
}

impl Sizing<'_> {
    /// How the program sets GOMAXPROCS, for the image's release where the catalog has several.
    pub fn gomaxprocs_formula(
        &self,
        image: Option<&catalog::ImageRef>,
    ) -> Option<&'static catalog::Formula> {
        match *self {
            Sizing::Config(_) => Some(&SIZES_LIKE_AUTOMAXPROCS),
            Sizing::Import(f) | Sizing::Image { framework: f, .. } => {
                f.gomaxprocs.as_ref()?.formula_for(None)
            }
            Sizing::Catalog { sizing, .. } => sizing.formula_for(image),
        }
    }

    /// Why, as the notes give it: "links go.uber.org/automaxprocs (…)".
    pub fn describe(&self, main: Option<&MainPackage>) -> String {
        match *self {
            Sizing::Config(pattern) => {
                let mut s = String::from("the image matches ");
                push_debug(&mut s, pattern);
                s.push_str(" in the config");
                s
            }
            Sizing::Import(f) => {
                let how = f
                    .gomaxprocs
                    .as_ref()
                    .or(f.gomemlimit.as_ref())
                    .map_or("", |x| x.how.as_str());
                match main {
                    Some(m) => format!(
                        "its main package ({}) imports {} ({how})",
                        m.gomod, f.import
                    ),
                    None => format!("its main package imports {} ({how})", f.import),
                }
            }
            Sizing::Image { facts, framework } => {
                let how = framework
                    .gomaxprocs
                    .as_ref()
                    .or(framework.gomemlimit.as_ref())
                    .map_or("", |x| x.how.as_str());
                let version = facts
                    .go()
                    .and_then(|g| g.dep(&framework.import))
                    .unwrap_or("");
                format!(
                    "the executable of image {} links {} {version} ({how})",
                    facts.short_digest(),
                    framework.import
                )
            }
            Sizing::Catalog { entry, sizing } if sizing.releases.is_empty() => format!(
                "{} does it: {} (catalog: {})",
                entry.program, sizing.how, sizing.source
            ),
            Sizing::Catalog { entry, sizing } => format!(
                "{} does it {}: {} (catalog: {})",
                entry.program,
                catalog::describe_releases(&sizing.releases),
                sizing.how,
                sizing.source
            ),
        }
    }
}

impl<'a> GoView<'a> {
    /// `annotations`: the pod's annotation mappings (see [`crate::k8s::annotation_maps`]);
    /// `around`: the manifest file and what the run knows of the project around it.
    pub fn decide(
        y: &'a Yaml,
        annotations: &[Option<NodeId>; 2],
        c: &'a Container,
        cfg: &'a Config,
        around: Around<'a>,
    ) -> GoView<'a> {
        GoView::decide_in_pod(y, annotations, c, cfg, around, None)
    }

    /// As [`GoView::decide`], with the release the pod's labels give the container
    /// ([`release_label`]).
    pub fn decide_in_pod(
        y: &'a Yaml,
        annotations: &[Option<NodeId>; 2],
        c: &'a Container,
        cfg: &'a Config,
        around: Around<'a>,
        release_label: Option<&'a str>,
    ) -> GoView<'a> {
        // The image as Kustomize renders it, when a kustomization renames it.
        let renamed = match (c.image, around.manifest) {
            (Some(image), Some(path)) => around.kustomizations.rename(around.listings, path, image),
            _ => None,
        };
        let reference = renamed.map(|r| r.image.as_str()).or(c.image);
        let main = match (
            reference.and_then(|i| i.strip_prefix("ko://")),
            around.manifest,
        ) {
            (Some(import), Some(path)) => around.modules.main_package(path, import),
            _ => None,
        };
        let image = reference.map(catalog::ImageRef::parse);
        // A rename that moves the image to a mirror (`registry.example/mirror/grafana/loki`)
        // keeps the program: the written name is looked up too, at the rendered tag.
        let written =
            renamed
                .and(c.image)
                .map(catalog::ImageRef::parse)
                .map(|w| catalog::ImageRef {
                    tag: image.and_then(|r| r.tag),
                    ..w
                });
        let entry = image
            .and_then(|r| {
                catalog::lookup_ref(&r).or_else(|| {
                    let service = r.tag.and_then(catalog::service_of_tag)?;
                    catalog::lookup_service(service)
                })
            })
            .or_else(|| written.and_then(|w| catalog::lookup_ref(&w)))
            .map(|(e, _)| e);
        let inspected = c.image.and_then(|i| around.images.get(i));
        let facts = inspected
            .and_then(|r| r.as_ref().ok())
            .filter(|f| image_runs(y, c, f));
        let image_note = match inspected {
            Some(Err(e)) => Some(format!(
                "the image was not read: {}",
                crate::text::printable(e)
            )),
            Some(Ok(f)) => match &f.kind {
                crate::image::Runtime::Unknown(why) => Some(format!(
                    "image {} did not show its runtime: {}",
                    f.short_digest(),
                    crate::text::printable(why)
                )),
                _ => None,
            },
            None => None,
        };
        let signs = evidence::gather(&evidence::Inputs {
            y,
            annotations,
            c,
            cfg,
            image: evidence::ImageSigns {
                reference: image,
                entry,
                facts,
            },
            around,
        });
        let (is_go, language, why_go) = evidence::decide(signs, cfg, c.image);
        // The image's facts count only for a Go program: another runtime's image says nothing of
        // the Go version.
        let facts = match why_go {
            WhyGo::Image(_) => facts,
            _ => facts.filter(|f| f.go().is_some() && is_go),
        };
        // A Go service built by a Dockerfile in the tree: its module, as for `ko://`.
        let main = match &why_go {
            WhyGo::Build(b) if main.is_none() => b.main.clone(),
            _ => main,
        };
        // Every source of a Go version, in the order of VERSION_PRECEDENCE.
        let annotated = container_annotation(y, annotations, c, "golint-k8s.io/go-version")
            .and_then(|(v, _, _)| {
                GoVersion::parse(v).map(|g| (Some(g), WhyVersion::Annotation(v)))
            });
        let by_image = cfg
            .go_version_by_image(c.image)
            .or_else(|| cfg.go_version_by_image(renamed.map(|r| r.image.as_str())))
            .map(|(g, pattern)| (Some(g), WhyVersion::Config(Some(pattern), g)));
        let read = facts.and_then(|f| {
            let toolchain = f.go()?.go_version.split(' ').next()?;
            Some((Some(GoVersion::parse(toolchain)?), WhyVersion::Image(f)))
        });
        let built = main
            .as_ref()
            .and_then(|m| m.go)
            .map(|g| (Some(g), WhyVersion::GoMod));
        // The catalog places a tagged release on either side of Go 1.25 when it records the
        // releases whose main module says `go 1.25` (derived from every release's go.mod).
        // An image pinned by digest alone names no release; the pod's version label does.
        let labelled = match (image, release_label) {
            (Some(r), Some(v)) if r.tag.is_none() && r.image.contains('@') => {
                Some(catalog::ImageRef { tag: Some(v), ..r })
            }
            _ => None,
        };
        let release = labelled.or(image);
        let placed = match (
            entry.filter(|e| e.is_go() && !e.go_1_25.is_empty()),
            release,
        ) {
            (Some(e), Some(image)) => catalog::release_in(&image, &e.go_1_25).map(|at| (e, at)),
            _ => None,
        };
        let cataloged = placed.map(|(e, at)| match at {
            true => (Some(GO_1_25), WhyVersion::Catalog(e)),
            false => (None, WhyVersion::CatalogBefore(e)),
        });
        let default = cfg
            .go_version
            .map(|g| (Some(g), WhyVersion::Config(None, g)));
        let chosen = choose_version(VersionSources {
            annotated,
            by_image,
            read,
            built,
            cataloged,
            default,
        });
        let (version, why_version, overruled) = (chosen.version, chosen.why, chosen.overruled);
        let mut view = GoView {
            is_go,
            language,
            why_go,
            version,
            why_version,
            overruled,
            sizes_gomaxprocs: None,
            sizes_gomemlimit: None,
            gomaxprocs_formula: None,
            gomaxprocs_flag: None,
            main,
            godebug: match c.env_var("GODEBUG") {
                Some(v) => v.literal(),
                None => facts.and_then(|f| f.env_var("GODEBUG")),
            },
            image: facts,
            image_note,
            renamed,
            release_label: labelled.and(placed).and(release_label),
        };
        if is_go {
            view.sizes_gomaxprocs = view.sizing(
                c,
                &cfg.sizes_gomaxprocs,
                release,
                entry,
                |x| x.gomaxprocs.as_ref(),
                |f| f.gomaxprocs.as_ref(),
            );
            view.sizes_gomemlimit = view.sizing(
                c,
                &cfg.sizes_gomemlimit,
                release,
                entry,
                |x| x.gomemlimit.as_ref(),
                |f| f.gomemlimit.as_ref(),
            );
            view.gomaxprocs_formula = view
                .sizes_gomaxprocs
                .and_then(|s| s.gomaxprocs_formula(release.as_ref()));
            // A program that leaves GOMAXPROCS to the Go runtime does not size it: the runtime
            // does, by the version and GODEBUG this view settles ([`GoView::adaptive_gomaxprocs`]),
            // so a stronger source's version or `containermaxprocs=0` is not overruled by a
            // catalog line written for Go 1.25.
            if let Some(catalog::Formula::GoRuntime) = view.gomaxprocs_formula {
                view.sizes_gomaxprocs = None;
                view.gomaxprocs_formula = None;
            }
            if let Some(catalog::Formula::Flag { flag, .. }) = view.gomaxprocs_formula {
                view.gomaxprocs_flag = flag_value(y, c, flag);
            }
        }
        view
    }

    /// Whether the program sizes one setting itself: config, then the main package's imports,
    /// then the catalog (for releases the image tag shows are new enough).
    fn sizing(
        &self,
        c: &'a Container,
        globs: &'a crate::config::Globs,
        image: Option<catalog::ImageRef>,
        entry: Option<&'static catalog::Entry>,
        of_entry: impl Fn(&'static catalog::Entry) -> Option<&'static catalog::SelfSizing>,
        of_framework: impl Fn(&'static catalog::Framework) -> Option<&'static catalog::SelfSizing>,
    ) -> Option<Sizing<'a>> {
        let rendered = self.renamed.map(|r| r.image.as_str());
        if let Some(pattern) = [c.image, rendered]
            .into_iter()
            .flatten()
            .find_map(|i| globs.matching(i))
        {
            return Some(Sizing::Config(pattern));
        }
        // The executable itself: it links the module or it does not. Build info lists modules,
        // so a framework named by a package (knative's sharedmain) never matches here; the
        // automaxprocs module it brings does.
        if let Some((facts, go)) = self.image.and_then(|f| Some((f, f.go()?))) {
            let framework = catalog::CATALOG
                .frameworks
                .iter()
                .find(|f| of_framework(f).is_some() && go.dep(&f.import).is_some());
            return framework.map(|framework| Sizing::Image { facts, framework });
        }
        if let Some(m) = &self.main {
            let framework = catalog::CATALOG.frameworks.iter().find(|f| {
                of_framework(f).is_some()
                    && m.imports.iter().any(|i| {
                        i == &f.import
                            || i.strip_prefix(f.import.as_str())
                                .is_some_and(|r| r.starts_with('/'))
                    })
            });
            if let Some(f) = framework {
                return Some(Sizing::Import(f));
            }
        }
        let (entry, image) = (entry?, image?);
        let sizing = of_entry(entry)?;
        catalog::holds_for(&image, &sizing.releases).then_some(Sizing::Catalog { entry, sizing })
    }

    /// The Go runtime sizes GOMAXPROCS from the CPU limit itself: Go ≥ 1.25, unless
    /// `containermaxprocs=0` is set by the env's GODEBUG or, failing that, by the build's default
    /// GODEBUG (go.mod `godebug`, `//go:debug`).
    /// A program that calls `runtime.GOMAXPROCS` itself turns it off, whatever the
    /// environment.
    pub fn adaptive_gomaxprocs(&self) -> bool {
        let setting = self.containermaxprocs().map(|(v, _)| v);
        self.version
            .is_some_and(|v| process::container_aware(v, setting))
            && !self.program_sets_gomaxprocs()
    }

    /// The program calls `runtime.GOMAXPROCS(n)` itself when GOMAXPROCS is not set (under a
    /// CPU limit), by its formula.
    pub fn program_sets_gomaxprocs(&self) -> bool {
        let Some(formula) = self.gomaxprocs_formula.filter(|_| self.is_go) else {
            return false;
        };
        process::program_calls(&process::Facts {
            version: self.version,
            program: Some(formula),
            flag: self.gomaxprocs_flag,
            ..process::Facts::default()
        })
    }

    /// As [`GoView::adaptive_gomaxprocs`] for the binary as built, before the env's GODEBUG.
    pub fn build_adaptive_gomaxprocs(&self) -> bool {
        let setting = self.build_godebug("containermaxprocs").map(|(v, _)| v);
        self.version
            .is_some_and(|v| process::container_aware(v, setting))
            && !self.program_sets_gomaxprocs()
    }

    /// Go ≥ 1.25 with `containermaxprocs=0`: where it is set (`env GODEBUG` or the go.mod).
    pub fn containermaxprocs_off(&self) -> Option<&str> {
        let (value, from) = self.containermaxprocs()?;
        (self.version.is_some_and(|v| v >= GO_1_25) && value == "0").then_some(from)
    }

    /// The `containermaxprocs` setting the process starts with and where it comes from: the env's
    /// GODEBUG overrides the build's default.
    fn containermaxprocs(&self) -> Option<(&str, &str)> {
        let from_env = self
            .godebug
            .and_then(|g| godebug_value(g, "containermaxprocs"));
        match from_env {
            Some(v) => Some((v, "env GODEBUG")),
            None => self.build_godebug("containermaxprocs"),
        }
    }

    fn build_godebug(&self, key: &str) -> Option<(&str, &str)> {
        if let Some(g) = self.image.and_then(|f| f.go()) {
            return Some((
                g.default_godebug(key)?,
                "the image's build (DefaultGODEBUG)",
            ));
        }
        let m = self.main.as_ref()?;
        Some((m.godebug(key)?, m.gomod.as_str()))
    }

    /// How many threads the scheduler runs (GOMAXPROCS), and why: the one answer every rule
    /// quotes, from [`process::gomaxprocs`]. From the env's GOMAXPROCS as this release parses it
    /// (a `resourceFieldRef` as the kubelet writes it, divisor included), the program's own
    /// `runtime.GOMAXPROCS` call, and the runtime's default for the CPU limit and node. None when
    /// the input does not show it: GOMAXPROCS from a ConfigMap or Secret, or one thread per node
    /// CPU with `node-cpus` unset. A container that is not Go is counted as one busy thread per
    /// node CPU.
    pub fn gomaxprocs(&self, c: &Container, cpu: CpuView) -> Option<Threads> {
        let (procs, from) = self.procs(c, cpu, None)?;
        let n = procs.start?;
        let mut why = match procs.by {
            process::By::Env => format!("GOMAXPROCS = {n}{from}"),
            process::By::Program(call) => self.program_why(n, call),
            process::By::RuntimeLimit => {
                format!("GOMAXPROCS = {n}, Go 1.25's default of max(2, ceil(limit))")
            }
            process::By::RuntimeCpus => {
                let mut why = format!("one per node CPU, {n} from node-cpus");
                if let Some(from) = self.is_go.then(|| self.containermaxprocs_off()).flatten() {
                    why.push_str(&format!(
                        "; containermaxprocs=0 in {from} turns Go 1.25's limit-aware default off"
                    ));
                }
                why
            }
        };
        let running = throttle::at_once(n, cpu.node_cpus);
        if running < n {
            why.push_str(&format!(", {running} at a time on the node's CPUs"));
        }
        Some(Threads { n, running, why })
    }

    /// GOMAXPROCS at start (and after an in-place resize to `resized_to`), from this
    /// container's facts, with the text that says where an env value came from (` from
    /// resourceFieldRef limits.cpu`). None when the env's GOMAXPROCS is not shown.
    pub fn procs(
        &self,
        c: &Container,
        cpu: CpuView,
        resized_to: Option<Option<i128>>,
    ) -> Option<(process::Procs, String)> {
        let limit = cpu.limit.map(throttle::limit_millis);
        let mut env = None;
        let mut from = String::new();
        if self.is_go {
            if let Some(var) = c.env_var("GOMAXPROCS") {
                env = Some(match &var.value {
                    crate::k8s::container::EnvValue::ResourceFieldRef(f) => {
                        let (value, said) = downward_cpu(f, c, cpu)?;
                        from = said;
                        std::borrow::Cow::Owned(value.to_string())
                    }
                    _ => std::borrow::Cow::Borrowed(var.literal()?),
                });
            }
        }
        let facts = process::Facts {
            version: self.version.filter(|_| self.is_go),
            containermaxprocs: self.containermaxprocs().map(|(v, _)| v),
            updatemaxprocs: self.godebug_setting("updatemaxprocs"),
            env: env.as_deref(),
            program: self.gomaxprocs_formula.filter(|_| self.is_go),
            flag: self.gomaxprocs_flag,
            cgroup_v1: false,
        };
        let procs = process::gomaxprocs(&facts, cpu.node_cpus, limit, resized_to);
        Some((procs, from))
    }

    /// The reason for a GOMAXPROCS the program's own call set.
    fn program_why(&self, n: i128, call: process::ProgramCall) -> String {
        let how = match call {
            process::ProgramCall::Quota(catalog::Rounding::Floor) => {
                "sized from the limit by the program itself, rounded down"
            }
            process::ProgramCall::Quota(catalog::Rounding::Nearest) => {
                "sized from the limit by the program itself, rounded to the nearest whole CPU"
            }
            process::ProgramCall::NodeCpus => "set to the node's CPU count by the program itself",
            process::ProgramCall::Flag {
                from: process::FlagFrom::Args,
            } => "set by the program from its flag in the arguments",
            process::ProgramCall::Flag {
                from: process::FlagFrom::Env,
            } => "set by the program from its flag, read from the variable",
            process::ProgramCall::Flag {
                from: process::FlagFrom::Default,
            } => "set by the program from its flag's default",
        };
        let mut s = format!("GOMAXPROCS = {n}, {how}");
        if self.version.is_some_and(|v| v >= GO_1_25) {
            s.push_str(", which turns Go 1.25's own sizing off");
        }
        s
    }

    /// A GODEBUG setting in force: the env's, else the build's default.
    fn godebug_setting(&self, key: &str) -> Option<&str> {
        match self.godebug.and_then(|g| godebug_value(g, key)) {
            Some(v) => Some(v),
            None => self.build_godebug(key).map(|(v, _)| v),
        }
    }

    /// A variable the inspected image's config sets (`ENV`), which the container inherits
    /// unless its own env sets the name.
    pub fn image_env(&self, name: &str) -> Option<&str> {
        self.image?.env_var(name)
    }

    pub fn version_below(&self, v: GoVersion) -> bool {
        self.version.is_some_and(|have| have < v)
    }

    /// The decision as the JSON `runtime` object and `--show-containers` give it.
    pub fn info(&self) -> crate::diagnostic::RuntimeInfo {
        let main = self.main.as_deref();
        crate::diagnostic::RuntimeInfo {
            language: self.language.map(str::to_string),
            evidence: {
                let mut s = self.why_go.describe();
                for note in [self.renamed.map(|r| r.describe()), self.image_note.clone()]
                    .into_iter()
                    .flatten()
                {
                    s.push_str("; ");
                    s.push_str(&note);
                }
                s
            },
            assumed: self.is_go && self.assumed(),
            unknown: self.unsettled(),
            // A declared Go version says nothing about a container that does not run Go.
            go_version: self.version.filter(|_| self.is_go).map(|v| v.to_string()),
            // Also for a release the catalog places below Go 1.25 without a version.
            go_version_evidence: (self.is_go && !matches!(self.why_version, WhyVersion::Unknown))
                .then(|| self.describe_version()),
            sizes_gomaxprocs: self.sizes_gomaxprocs.map(|s| s.describe(main)),
            sizes_gomemlimit: self.sizes_gomemlimit.map(|s| s.describe(main)),
        }
    }

    /// How this container's Go release reads its environment's numbers.
    pub fn grammar(&self) -> Grammar {
        Grammar::of(self.version)
    }

    /// Judged Go only because nothing said otherwise.
    pub fn assumed(&self) -> bool {
        matches!(self.why_go, WhyGo::AssumeGo(_) | WhyGo::Placeholder(_))
    }

    /// Judged Go on no evidence with `assume-go` unset: its Go findings stay below the gate.
    pub fn unsettled(&self) -> bool {
        matches!(
            self.why_go,
            WhyGo::AssumeGo(AssumeGo::Unsettled) | WhyGo::Placeholder(_)
        )
    }

    /// Where the version came from, as the notes give it.
    /// A declared version that a main module's `go` line overruled is named after it.
    pub fn describe_version(&self) -> String {
        let mut s = self.describe_source(self.why_version);
        if let (Some(v), WhyVersion::Catalog(_) | WhyVersion::CatalogBefore(_)) =
            (self.release_label, self.why_version)
        {
            let _ = write!(
                s,
                "; the image is pinned by digest, its release {v} is the pod's label app.kubernetes.io/version"
            );
        }
        if let (Some((declared, by)), Some(v)) = (self.overruled, self.version) {
            let _ = write!(
                s,
                "; {} says {declared}, but no Go {declared} can build a main module whose go line says {v}",
                self.describe_source(by)
            );
        }
        s
    }

    /// A source of a Go version, as the notes name it.
    fn describe_source(&self, why: WhyVersion) -> String {
        let mut s = String::new();
        match why {
            WhyVersion::Annotation(raw) => {
                s.push_str("annotation golint-k8s.io/go-version: ");
                push_debug(&mut s, raw);
            }
            WhyVersion::Config(Some(pattern), g) => {
                s.push_str("config go-versions ");
                push_debug(&mut s, pattern);
                let _ = write!(s, " {g}");
            }
            WhyVersion::Config(None, g) => {
                let _ = write!(s, "config go-version {g}");
            }
            WhyVersion::GoMod => {
                if let Some(m) = &self.main {
                    let _ = write!(s, "the go line of {}", m.gomod);
                }
            }
            WhyVersion::Image(f) => {
                if let Some(g) = f.go() {
                    // The path and version are the image's words, escaped as in `ImageFacts::describe_to`.
                    let _ = write!(
                        s,
                        "the build info of {} in image {}: {}",
                        crate::text::printable(&g.path),
                        f.short_digest(),
                        crate::text::printable(&g.go_version)
                    );
                }
            }
            WhyVersion::Catalog(e) => {
                let _ = write!(
                    s,
                    "catalog: {}'s main module says go 1.25 or later {}, {}",
                    e.program,
                    catalog::describe_releases(&e.go_1_25),
                    e.source_go_1_25.as_deref().unwrap_or(&e.source)
                );
            }
            WhyVersion::CatalogBefore(e) => {
                let _ = write!(
                    s,
                    "catalog: {}'s main module says go 1.25 or later only {}, not in this release, {}",
                    e.program,
                    catalog::describe_releases(&e.go_1_25),
                    e.source_go_1_25.as_deref().unwrap_or(&e.source)
                );
            }
            WhyVersion::Unknown => s.push_str("unknown"),
        }
        s
    }

    /// The note every Go-only finding carries.
    pub fn note(&self) -> String {
        let mut s = String::with_capacity(256);
        if self.unsettled() {
            s.push_str("unknown runtime: nothing shows that this container runs Go, so this finding is info and its fix unsafe (");
            s.push_str(SETTLE);
            s.push_str("; or assume-go: true when every image is Go)");
        } else if let WhyGo::AssumeGo(AssumeGo::Go) = self.why_go {
            s.push_str("assumed Go: nothing in the manifest shows which runtime this container runs (declare it with the annotation golint-k8s.io/runtime: go|other, or go-images / non-go-images in .golint-k8s.yaml)");
        } else {
            s.push_str("judged Go because ");
            self.why_go.write_to(&mut s);
        }
        match self.version {
            Some(v) => {
                let _ = write!(s, "; Go {v}");
                if let WhyVersion::Catalog(_) = self.why_version {
                    s.push_str(" or later");
                }
                s.push_str(" (");
                s.push_str(&self.describe_version());
                s.push(')');
            }
            None if matches!(self.why_version, WhyVersion::CatalogBefore(_)) => {
                s.push_str("; Go older than 1.25 (");
                s.push_str(&self.describe_version());
                s.push(')');
            }
            None => s.push_str("; Go version unknown, treated as older than 1.25 (declare it with the annotation golint-k8s.io/go-version or go-version in .golint-k8s.yaml)"),
        }
        if let Some(r) = self.renamed {
            let _ = write!(s, "; {}", r.describe());
        }
        if let Some(n) = &self.image_note {
            let _ = write!(s, "; {n}");
        }
        s
    }
}

/// The release the pod's labels give a container: `app.kubernetes.io/version` (of the pod
/// template, else of the object), for the container whose image is named like
/// `app.kubernetes.io/name` or, failing that, the pod's only container.
/// `metadata`: the pod template's and the object's metadata.
pub fn release_label<'y>(
    y: &'y Yaml,
    metadata: [Option<NodeId>; 2],
    pod: &crate::k8s::container::Pod,
    c: &Container,
) -> Option<&'y str> {
    let labels = metadata.map(|m| m.and_then(|m| y.get(m, "labels")));
    let label = |key: &str| {
        labels
            .iter()
            .flatten()
            .find_map(|&l| y.get_str(l, key))
            .map(str::trim)
            .filter(|v| !v.is_empty())
    };
    let version = label("app.kubernetes.io/version")?;
    let named = match (label("app.kubernetes.io/name"), c.image) {
        (Some(name), Some(image)) => catalog::ImageRef::parse(image)
            .name
            .eq_ignore_ascii_case(name),
        _ => false,
    };
    let only = pod.containers.len() == 1;
    (named || only).then_some(version)
}

/// Whether the image's entrypoint is what the container runs: a `command` replaces it (unless it
/// names the same program), and `args` replace a program that came from the image's `Cmd`.
fn image_runs(y: &Yaml, c: &Container, f: &crate::image::ImageFacts) -> bool {
    let first = |n: Option<NodeId>| n.and_then(|n| y.items(n).first().and_then(|&i| y.str(i)));
    match (c.command, c.args) {
        (Some(_), _) => {
            first(c.command).is_some_and(|w| f.entrypoint.first().is_some_and(|e| e == w))
        }
        (None, Some(_)) if f.from_cmd => false,
        _ => true,
    }
}

/// How one Go release reads the numbers of its environment variables. Go 1.26 reads GOGC,
/// GOMAXPROCS and GOMEMLIMIT with a leading `+`; earlier releases do not (GOMEMLIMIT `+512MiB`
/// stops them at start-up, GOGC `+50` and GOMAXPROCS `+4` are ignored). Measured on Go 1.19.13,
/// 1.21.13, 1.24.9, 1.25.0 and 1.26.8 by `tests/heavy/go_oracle.rs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Grammar {
    pub plus_sign: bool,
}

impl Grammar {
    /// The grammar of `version`; of Go 1.25 and earlier when the version is not known, so a
    /// value only the newest runtime accepts is still reported.
    pub fn of(version: Option<GoVersion>) -> Grammar {
        Grammar {
            plus_sign: version.is_some_and(|v| v >= GO_1_26),
        }
    }
}

impl GoView<'_> {
    /// A note for a value that this container's Go rejects only for its leading `+`, which
    /// Go 1.26 reads.
    pub fn plus_sign_note(&self, text: &str) -> Option<String> {
        if self.grammar().plus_sign || !text.starts_with('+') {
            return None;
        }
        let running = match self.version {
            Some(v) => format!("this container's Go {v} does not"),
            None => "Go 1.25 and earlier do not (set golint-k8s.io/go-version if it runs 1.26)"
                .to_string(),
        };
        Some(format!("Go 1.26 and later read a leading +; {running}"))
    }
}

/// The runtime's decimal integer: an optional `-` (and `+` where the grammar takes it), ASCII
/// digits, no spaces or underscores, within `bits`.
pub fn go_parse_int(s: &str, bits: u32, g: Grammar) -> Option<i64> {
    let unsigned = match s.strip_prefix('+') {
        Some(rest) if g.plus_sign => rest,
        Some(_) => return None,
        None => s.strip_prefix('-').unwrap_or(s),
    };
    if unsigned.is_empty() || !unsigned.bytes().all(|b| b.is_ascii_digit()) {
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

pub fn parse_gomaxprocs(s: &str, g: Grammar) -> GoMaxProcs {
    match go_parse_int(s, 32, g) {
        Some(n) if n > 0 => GoMaxProcs::Set(n),
        _ => GoMaxProcs::Ignored,
    }
}

/// What the runtime does with a GOMEMLIMIT value (`readGOMEMLIMIT` / `parseByteCount`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GoMemLimit {
    /// `""`, `off`, or the largest int64 (the runtime's own "no limit"; `debug.SetMemoryLimit`
    /// reports the same number for all three).
    Off,
    Bytes(i64),
    /// The runtime throws at start-up: "malformed GOMEMLIMIT".
    Malformed,
}

pub fn parse_gomemlimit(s: &str, g: Grammar) -> GoMemLimit {
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
    match go_parse_int(num, 64, g) {
        Some(n) if n >= 0 => {
            let bytes = n as i128 * unit;
            if bytes > i64::MAX as i128 {
                GoMemLimit::Malformed
            } else if bytes == i64::MAX as i128 {
                GoMemLimit::Off
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

pub fn parse_gogc(s: &str, g: Grammar) -> GoGc {
    if s == "off" {
        return GoGc::Off;
    }
    match go_parse_int(s, 32, g) {
        Some(n) if n < 0 => GoGc::Off,
        Some(n) => GoGc::Percent(n),
        None => GoGc::Invalid,
    }
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

    const OLD: Grammar = Grammar { plus_sign: false };
    const NEW: Grammar = Grammar { plus_sign: true };

    /// The rule docs' list of version sources is the code's table: the same sources, in the
    /// same order.
    #[test]
    fn the_rule_docs_list_the_version_sources_in_the_order_of_the_code() {
        let doc = include_str!("../../docs/rules.md");
        let section = doc
            .split("**Which Go version.**")
            .nth(1)
            .expect("docs/rules.md has a \"Which Go version\" paragraph");
        let mut items: Vec<String> = Vec::new();
        for line in section.lines().skip(1) {
            let numbered = line
                .split_once(". ")
                .filter(|(n, _)| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()));
            match numbered {
                Some((_, text)) => items.push(text.to_string()),
                None if line.starts_with("   ") && !items.is_empty() => {
                    let last = items.last_mut().unwrap();
                    last.push(' ');
                    last.push_str(line.trim());
                }
                None => break,
            }
        }
        assert_eq!(items.len(), VERSION_PRECEDENCE.len(), "{items:#?}");
        for (i, ((kind, words), item)) in VERSION_PRECEDENCE.iter().zip(&items).enumerate() {
            assert!(
                item.contains(words),
                "item {} of docs/rules.md's version sources should be {kind:?} ({words}): {item}",
                i + 1
            );
        }
    }

    #[test]
    fn a_plus_sign_is_read_from_go_1_26() {
        assert_eq!(Grammar::of(None), OLD);
        assert_eq!(Grammar::of(Some(GO_1_25)), OLD);
        assert_eq!(Grammar::of(Some(GO_1_26)), NEW);
        assert_eq!(
            parse_gomemlimit("+100MiB", NEW),
            GoMemLimit::Bytes(100 << 20)
        );
        assert_eq!(parse_gomemlimit("+100MiB", OLD), GoMemLimit::Malformed);
        assert_eq!(parse_gogc("+50", NEW), GoGc::Percent(50));
        assert_eq!(parse_gogc("+50", OLD), GoGc::Invalid);
        assert_eq!(parse_gomaxprocs("+3", NEW), GoMaxProcs::Set(3));
        assert_eq!(parse_gomaxprocs("+3", OLD), GoMaxProcs::Ignored);
        assert_eq!(parse_gomaxprocs("+-3", NEW), GoMaxProcs::Ignored);
    }

    #[test]
    fn gomemlimit_grammar() {
        for (s, want) in [
            ("512MiB", GoMemLimit::Bytes(512 << 20)),
            ("1000", GoMemLimit::Bytes(1000)),
            ("1000B", GoMemLimit::Bytes(1000)),
            ("007MiB", GoMemLimit::Bytes(7 << 20)),
            ("-0", GoMemLimit::Bytes(0)),
            ("off", GoMemLimit::Off),
            ("", GoMemLimit::Off),
            ("9223372036854775807", GoMemLimit::Off),
            ("8388607TiB", GoMemLimit::Bytes(8388607 << 40)),
        ] {
            assert_eq!(parse_gomemlimit(s, OLD), want, "{s}");
            assert_eq!(parse_gomemlimit(s, NEW), want, "{s}");
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
            assert_eq!(parse_gomemlimit(s, OLD), GoMemLimit::Malformed, "{s}");
            assert_eq!(parse_gomemlimit(s, NEW), GoMemLimit::Malformed, "{s}");
        }
    }

    #[test]
    fn a_declared_version_goes_no_lower_than_the_go_line() {
        let (v24, v25, v26) = (
            GoVersion::new(1, 24),
            GoVersion::new(1, 25),
            GoVersion::new(1, 26),
        );
        let none = || VersionSources {
            annotated: None,
            by_image: None,
            read: None,
            cataloged: None,
            built: None,
            default: None,
        };
        let chosen = |s| {
            let c = choose_version(s);
            (c.version, c.overruled.map(|(v, _)| v))
        };
        assert_eq!(chosen(none()), (None, None));
        // The annotation is raised to the repository's go line, and the line says why.
        let s = VersionSources {
            annotated: Some((Some(v24), WhyVersion::Annotation("1.24"))),
            built: Some((Some(v26), WhyVersion::GoMod)),
            ..none()
        };
        assert_eq!(chosen(s), (Some(v26), Some(v24)));
        // A declared version above the line stands.
        let s = VersionSources {
            by_image: Some((Some(v26), WhyVersion::Config(Some("*"), v26))),
            cataloged: Some((Some(v25), WhyVersion::Unknown)),
            ..none()
        };
        assert_eq!(chosen(s), (Some(v26), None));
        // The image's executable was built by what it says, whatever the tree's go.mod says now.
        let s = VersionSources {
            read: Some((Some(v24), WhyVersion::Unknown)),
            built: Some((Some(v26), WhyVersion::GoMod)),
            ..none()
        };
        assert_eq!(chosen(s), (Some(v24), None));
        // The catalog places the tagged release before the tree's go.mod, and before the
        // blanket go-version.
        let s = VersionSources {
            cataloged: Some((None, WhyVersion::Unknown)),
            built: Some((Some(v26), WhyVersion::GoMod)),
            default: Some((Some(v26), WhyVersion::Config(None, v26))),
            ..none()
        };
        assert_eq!(chosen(s), (None, None));
        let s = VersionSources {
            built: Some((Some(v25), WhyVersion::GoMod)),
            default: Some((Some(v24), WhyVersion::Config(None, v24))),
            ..none()
        };
        assert_eq!(chosen(s), (Some(v25), None));
    }

    #[test]
    fn go_notes_name_every_reason() {
        const UNKNOWN: &str = "; Go version unknown, treated as older than 1.25 (declare it with the annotation golint-k8s.io/go-version or go-version in .golint-k8s.yaml)";
        let v = GoVersion::new(1, 24);
        let note = |why_go, version, why_version| {
            GoView {
                is_go: true,
                language: Some("go"),
                why_go,
                version,
                why_version,
                overruled: None,
                sizes_gomaxprocs: None,
                sizes_gomemlimit: None,
                gomaxprocs_formula: None,
                gomaxprocs_flag: None,
                main: None,
                godebug: None,
                image: None,
                image_note: None,
                renamed: None,
                release_label: None,
            }
            .note()
        };
        let prom = catalog::lookup("prom/prometheus:v2.40.0").unwrap().0;
        let reasons = [
            (
                WhyGo::Annotation { container: None, value: "go" },
                "judged Go because of the annotation golint-k8s.io/runtime: go",
            ),
            (
                WhyGo::Annotation { container: Some("app"), value: "go" },
                "judged Go because of the annotation golint-k8s.io/runtime.app: go",
            ),
            (
                WhyGo::ConfigImages { go: true, pattern: "ghcr.io/acme/*" },
                "judged Go because the image matches go-images \"ghcr.io/acme/*\"",
            ),
            (WhyGo::GoEnv("GOGC"), "judged Go because it sets the Go runtime variable GOGC"),
            (
                WhyGo::Command { word: "/ko-app/api", language: "go" },
                "judged Go because its command runs /ko-app/api (go)",
            ),
            (
                WhyGo::ImageName { image: "ko://example.com/api", word: "ko://", language: "go" },
                "judged Go because the image ko://example.com/api is built by ko from a Go main package",
            ),
            (
                WhyGo::Catalog { image: "prom/prometheus:v2.40.0", entry: prom },
                "judged Go because the image prom/prometheus:v2.40.0 is Prometheus, a Go program (catalog: https://github.com/prometheus/prometheus)",
            ),
            (
                WhyGo::AssumeGo(AssumeGo::Unsettled),
                "unknown runtime: nothing shows that this container runs Go, so this finding is info and its fix unsafe (settle it with the annotation golint-k8s.io/runtime: go|other, go-images / non-go-images in .golint-k8s.yaml, or --inspect-images; or assume-go: true when every image is Go)",
            ),
            (
                WhyGo::AssumeGo(AssumeGo::Go),
                "assumed Go: nothing in the manifest shows which runtime this container runs (declare it with the annotation golint-k8s.io/runtime: go|other, or go-images / non-go-images in .golint-k8s.yaml)",
            ),
        ];
        for (why, text) in reasons {
            assert_eq!(
                note(why, None, WhyVersion::Unknown),
                format!("{text}{UNKNOWN}")
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
                note(env.clone(), Some(v), why),
                format!("judged Go because it sets the Go runtime variable GOGC{text}")
            );
        }
    }

    #[test]
    fn gomaxprocs_and_gogc_grammar() {
        assert_eq!(parse_gomaxprocs("4", OLD), GoMaxProcs::Set(4));
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
            assert_eq!(parse_gomaxprocs(s, NEW), GoMaxProcs::Ignored, "{s}");
        }
        assert_eq!(
            parse_gomaxprocs("2147483647", OLD),
            GoMaxProcs::Set(2147483647)
        );
        assert_eq!(parse_gogc("off", OLD), GoGc::Off);
        assert_eq!(parse_gogc("-50", OLD), GoGc::Off);
        assert_eq!(parse_gogc("0", OLD), GoGc::Percent(0));
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
            assert_eq!(parse_gogc(s, NEW), GoGc::Invalid, "{s}");
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
}
