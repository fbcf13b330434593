//! Which language a container runs, with the evidence and the decision kept apart. Gathering
//! reads the signs (the manifest, the config, the image's facts, the repository's build files)
//! and is the only part that touches the disk; one table, [`PRECEDENCE`], ranks the kinds of
//! sign; [`decide`] is a pure function of the signs and the settings. A new source of evidence
//! is one [`Kind`], one gatherer arm and one row of the table.

use super::{catalog, signs, Around, WhyGo};
use crate::config::Config;
use crate::k8s::container::{container_annotation, Container};
use crate::yaml::{NodeId, Yaml};

/// A kind of evidence about the language a container runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `golint-k8s.io/runtime` on the object or pod template: the user's declaration.
    Annotation,
    /// A `go-images` or `non-go-images` pattern of the config that matches the image.
    ConfigImages,
    /// The image's entrypoint, read from its registry (`--inspect-images`): a fact.
    ImageEntrypoint,
    /// A variable only the Go runtime reads (`GOMAXPROCS`, `GOGC`, …).
    GoEnv,
    /// A variable another runtime reads (`JAVA_TOOL_OPTIONS`, `NODE_OPTIONS`, …).
    OtherEnv,
    /// The program the command runs (`python app.py`, `/ko-app/…`, `go run`).
    Command,
    /// A `ko://` image: built by ko from a Go package.
    KoImage,
    /// A well-known image in the built-in catalog.
    Catalog,
    /// A runtime named in the image reference (`vllm`, a `-py3` tag).
    ImageWord,
    /// The repository's own build of the image (its Dockerfile, skaffold or project file).
    Build,
    /// A shell script as the command, with no program in sight.
    Script,
}

/// The kinds of evidence, strongest first: the decision takes the strongest sign there is. A
/// declaration beats the config, which beats facts read from the image; then what the manifest
/// shows of the container itself (a variable only one runtime reads, the program its command
/// runs, a `ko://` image); then the repository's own build of the image, which beats the
/// catalog's record of a well-known image; then what the image's name suggests, and a bare shell
/// script last. docs/rules.md ("Which containers count as Go") states the same order.
pub const PRECEDENCE: [Kind; 11] = [
    Kind::Annotation,
    Kind::ConfigImages,
    Kind::ImageEntrypoint,
    Kind::GoEnv,
    Kind::OtherEnv,
    Kind::Command,
    Kind::KoImage,
    Kind::Build,
    Kind::Catalog,
    Kind::ImageWord,
    Kind::Script,
];

fn rank(kind: Kind) -> usize {
    PRECEDENCE
        .iter()
        .position(|&k| k == kind)
        .expect("every kind has a row in PRECEDENCE")
}

/// One piece of evidence: of what kind, the language it names, and the facts a message cites.
#[derive(Debug, Clone)]
pub struct Sign<'a> {
    pub kind: Kind,
    pub language: &'a str,
    pub why: WhyGo<'a>,
}

/// What the image says, found once for the container.
pub(super) struct ImageSigns<'a> {
    pub reference: Option<catalog::ImageRef<'a>>,
    pub entry: Option<&'static catalog::Entry>,
    pub facts: Option<&'a crate::image::ImageFacts>,
}

/// What a container's signs are read from.
pub(super) struct Inputs<'a, 'r> {
    pub y: &'a Yaml<'a>,
    pub annotations: &'r [Option<NodeId>; 2],
    pub c: &'a Container<'a>,
    pub cfg: &'a Config,
    pub image: ImageSigns<'a>,
    pub around: Around<'r>,
}

/// The signs of a container, kind by kind in [`PRECEDENCE`] order. A kind is read only while it
/// could still change the decision, so once one kind has spoken no weaker one is read: in
/// particular the repository's build files are read only when the manifest said nothing
/// stronger.
pub(super) fn gather<'a>(inputs: &Inputs<'a, '_>) -> Vec<Sign<'a>> {
    let mut signs = Vec::new();
    for kind in PRECEDENCE {
        if !could_matter(&signs, kind) {
            break;
        }
        if let Some((language, why)) = gather_kind(kind, inputs) {
            signs.push(Sign {
                kind,
                language,
                why,
            });
        }
    }
    signs
}

/// The sign of one kind, if the container shows one. Only [`Kind::Build`] reads the disk (the
/// tree around the manifest, cached for the run).
fn gather_kind<'a>(kind: Kind, i: &Inputs<'a, '_>) -> Option<(&'a str, WhyGo<'a>)> {
    let Inputs {
        y,
        annotations,
        c,
        cfg,
        ref image,
        around,
    } = *i;
    let named = image.reference.as_ref().map(|r| r.image);
    match kind {
        Kind::Annotation => {
            let (v, _, per_container) =
                container_annotation(y, annotations, c, "golint-k8s.io/runtime")?;
            let container = per_container.then(|| c.display_name());
            let value = Some(v.trim()).filter(|v| !v.is_empty())?;
            Some((value, WhyGo::Annotation { container, value }))
        }
        Kind::ConfigImages => {
            // The image as written, then as Kustomize renders it.
            let names = || [c.image, named].into_iter().flatten();
            match names().find_map(|n| cfg.go_images.matching(n)) {
                Some(pattern) => Some(("go", WhyGo::ConfigImages { go: true, pattern })),
                None => {
                    let pattern = names().find_map(|n| cfg.non_go_images.matching(n))?;
                    Some(("other", WhyGo::ConfigImages { go: false, pattern }))
                }
            }
        }
        Kind::ImageEntrypoint => {
            let f = image.facts?;
            Some((f.language()?, WhyGo::Image(f)))
        }
        Kind::GoEnv => {
            let v = c
                .env
                .iter()
                .find(|e| super::GO_ENV_VARS.contains(&e.name))?;
            Some(("go", WhyGo::GoEnv(v.name)))
        }
        Kind::OtherEnv => {
            let (name, language) = signs::other_env(c)?;
            Some((language, WhyGo::OtherEnv { name, language }))
        }
        Kind::Command => match signs::command_sign(y, c)? {
            signs::CommandSign::Program { word, language } => {
                Some((language, WhyGo::Command { word, language }))
            }
            signs::CommandSign::Script(_) => None,
        },
        Kind::KoImage => {
            let image = named.filter(|n| n.starts_with("ko://"))?;
            Some(image_name(image, "ko://", "go"))
        }
        Kind::Catalog => {
            let entry = image.entry?;
            let image = named?;
            Some((&entry.language, WhyGo::Catalog { image, entry }))
        }
        Kind::ImageWord => {
            let r = image.reference.as_ref()?;
            let (word, language) = signs::reference_sign(r)?;
            Some(image_name(r.image, word, language))
        }
        Kind::Build => {
            let (r, path) = (image.reference.as_ref()?, around.manifest?);
            let b = around.builds.facts(around.listings, path, r)?;
            Some((b.language, WhyGo::Build(b)))
        }
        Kind::Script => match signs::command_sign(y, c)? {
            signs::CommandSign::Script(word) => Some(("shell", WhyGo::Script(word))),
            signs::CommandSign::Program { .. } => None,
        },
    }
}

/// A runtime named by a word of the image reference.
fn image_name<'a>(
    image: &'a str,
    word: &'static str,
    language: &'static str,
) -> (&'a str, WhyGo<'a>) {
    let why = WhyGo::ImageName {
        image,
        word,
        language,
    };
    (language, why)
}

/// Whether signs of `kind` could change the decision `signs` give: whether none of them ranks
/// above it.
fn could_matter(signs: &[Sign], kind: Kind) -> bool {
    signs.iter().all(|s| rank(s.kind) > rank(kind))
}

/// The decision: the strongest sign's language, and whether that is Go; with no sign at all,
/// `assume-go` decides and says so. An image that is only a placeholder (`${IMAGE}`,
/// `{{ .Values.image }}`), filled in when it is deployed, stays unknown even when `assume-go`
/// is true: the config speaks of the repository's images, and nothing here names one.
pub fn decide<'a>(
    signs: Vec<Sign<'a>>,
    cfg: &Config,
    image: Option<&'a str>,
) -> (bool, Option<&'a str>, WhyGo<'a>) {
    match signs.into_iter().min_by_key(|s| rank(s.kind)) {
        Some(s) => (s.language == "go", Some(s.language), s.why),
        None => match image.filter(|i| is_placeholder(i)) {
            Some(image) if cfg.assume_go.judges_go() => (true, None, WhyGo::Placeholder(image)),
            _ => (
                cfg.assume_go.judges_go(),
                None,
                WhyGo::AssumeGo(cfg.assume_go),
            ),
        },
    }
}

/// Whether an image reference names no image, only a variable of a template or a script
/// (`${IMAGE}`, `#{API_IMAGE}`, `{{ .Values.image }}`, `$(IMG)`, `<REPO>`): its name, the last
/// path element before the tag, is one. (`${REGISTRY}/cart:${TAG}` names the image `cart`.)
pub fn is_placeholder(image: &str) -> bool {
    let image = image.trim();
    // A Helm expression may hold slashes and colons of its own.
    let last = match image.find("{{") {
        Some(0) => return true,
        _ => image.rsplit('/').next().unwrap_or(image),
    };
    let name = last.split(['@', ':']).next().unwrap_or(last);
    name.is_empty()
        || ["${", "#{", "{{", "$(", "<"]
            .iter()
            .any(|m| name.contains(m))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sign(kind: Kind, language: &str) -> Sign<'_> {
        Sign {
            kind,
            language,
            why: WhyGo::GoEnv("GOGC"),
        }
    }

    #[test]
    fn every_kind_has_one_row_in_the_table() {
        for (i, k) in PRECEDENCE.iter().enumerate() {
            assert_eq!(rank(*k), i, "{k:?} appears twice");
        }
    }

    #[test]
    fn the_strongest_sign_decides_whatever_the_order_it_was_found_in() {
        let cfg = Config::default();
        let signs = vec![
            sign(Kind::Script, "shell"),
            sign(Kind::GoEnv, "go"),
            sign(Kind::OtherEnv, "java"),
        ];
        assert_eq!(decide(signs, &cfg, None).1, Some("go"));
        // The repository's own build of the image beats the catalog's record of it.
        let signs = vec![sign(Kind::Catalog, "c"), sign(Kind::Build, "go")];
        let (is_go, language, _) = decide(signs, &cfg, None);
        assert_eq!((is_go, language), (true, Some("go")));
    }

    #[test]
    fn no_sign_leaves_it_to_assume_go() {
        let cfg = Config {
            assume_go: crate::config::AssumeGo::NotGo,
            ..Default::default()
        };
        let (is_go, language, why) = decide(Vec::new(), &cfg, None);
        assert_eq!((is_go, language), (false, None));
        assert!(matches!(
            why,
            WhyGo::AssumeGo(crate::config::AssumeGo::NotGo)
        ));
    }

    #[test]
    fn a_placeholder_image_stays_unknown_even_when_every_image_is_go() {
        for image in [
            "${IMAGE}",
            "#{API_IMAGE}",
            "{{ .Values.image.repository }}:{{ .Values.image.tag }}",
            "$(IMG)",
            "<DOCKER_REPO>",
            "registry.example/${NAME}:1",
        ] {
            assert!(is_placeholder(image), "{image}");
        }
        for image in [
            "${REGISTRY}/cart:${TAG}",
            "<DOCKER_REPO>/chatbot:1.0",
            "registry.k8s.io/autoscaler:{{ .Values.tag }}",
            "nginx",
        ] {
            assert!(!is_placeholder(image), "{image}");
        }
        let cfg = Config {
            assume_go: crate::config::AssumeGo::Go,
            ..Default::default()
        };
        let (is_go, _, why) = decide(Vec::new(), &cfg, Some("${IMAGE}"));
        assert!(is_go && matches!(why, WhyGo::Placeholder("${IMAGE}")));
        let (is_go, _, why) = decide(Vec::new(), &cfg, Some("ghcr.io/acme/api"));
        assert!(is_go && matches!(why, WhyGo::AssumeGo(crate::config::AssumeGo::Go)));
    }

    #[test]
    fn the_tree_is_read_only_when_the_manifest_said_less() {
        assert!(could_matter(&[sign(Kind::Script, "shell")], Kind::Build));
        assert!(could_matter(&[], Kind::Build));
        assert!(!could_matter(&[sign(Kind::Command, "python")], Kind::Build));
    }
}
