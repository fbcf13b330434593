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
/// declaration beats the config, which beats facts read from the image, which beat what the
/// manifest shows of the container, which beats what its image's name suggests; the repository's
/// build files come after everything the manifest says, and a bare shell script last.
pub const PRECEDENCE: [Kind; 11] = [
    Kind::Annotation,
    Kind::ConfigImages,
    Kind::ImageEntrypoint,
    Kind::GoEnv,
    Kind::OtherEnv,
    Kind::Command,
    Kind::KoImage,
    Kind::Catalog,
    Kind::ImageWord,
    Kind::Build,
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

/// The signs the manifest, the config and the image's facts give: no disk is read.
pub(super) fn gather<'a>(
    y: &'a Yaml,
    annotations: &[Option<NodeId>; 2],
    c: &'a Container,
    cfg: &'a Config,
    image: &ImageSigns<'a>,
) -> Vec<Sign<'a>> {
    let mut out = Vec::new();
    let mut sign = |kind, language, why| {
        out.push(Sign {
            kind,
            language,
            why,
        })
    };
    if let Some((v, _, per_container)) =
        container_annotation(y, annotations, c, "golint-k8s.io/runtime")
    {
        let container = per_container.then(|| c.display_name());
        match v.trim() {
            "" => {}
            value => sign(
                Kind::Annotation,
                value,
                WhyGo::Annotation { container, value },
            ),
        }
    }
    if let Some(name) = &c.image {
        if let Some(pattern) = cfg.go_images.matching(name) {
            sign(
                Kind::ConfigImages,
                "go",
                WhyGo::ConfigImages { go: true, pattern },
            );
        } else if let Some(pattern) = cfg.non_go_images.matching(name) {
            sign(
                Kind::ConfigImages,
                "other",
                WhyGo::ConfigImages { go: false, pattern },
            );
        }
    }
    if let Some(f) = image.facts {
        if let Some(language) = f.language() {
            sign(Kind::ImageEntrypoint, language, WhyGo::Image(f));
        }
    }
    if let Some(v) = c.env.iter().find(|e| super::GO_ENV_VARS.contains(&e.name)) {
        sign(Kind::GoEnv, "go", WhyGo::GoEnv(v.name));
    }
    if let Some((name, language)) = signs::other_env(c) {
        sign(Kind::OtherEnv, language, WhyGo::OtherEnv { name, language });
    }
    match signs::command_sign(y, c) {
        Some(signs::CommandSign::Program { word, language }) => {
            sign(Kind::Command, language, WhyGo::Command { word, language });
        }
        Some(signs::CommandSign::Script(word)) => sign(Kind::Script, "shell", WhyGo::Script(word)),
        None => {}
    }
    if let Some(r) = &image.reference {
        let name = r.image;
        if name.starts_with("ko://") {
            let (word, language) = ("ko://", "go");
            let why = WhyGo::ImageName {
                image: name,
                word,
                language,
            };
            sign(Kind::KoImage, language, why);
        }
        if let Some(entry) = image.entry {
            sign(
                Kind::Catalog,
                &entry.language,
                WhyGo::Catalog { image: name, entry },
            );
        }
        if let Some((word, language)) = signs::reference_sign(r) {
            let why = WhyGo::ImageName {
                image: name,
                word,
                language,
            };
            sign(Kind::ImageWord, language, why);
        }
    }
    out
}

/// The sign the repository's own build of the image gives, read from the tree around the
/// manifest (Dockerfiles, skaffold and project files; cached for the run).
pub(super) fn gather_build<'a>(image: &ImageSigns<'a>, around: Around<'_>) -> Option<Sign<'a>> {
    let (r, path) = (image.reference.as_ref()?, around.manifest?);
    let b = around.builds.facts(around.listings, path, r)?;
    Some(Sign {
        kind: Kind::Build,
        language: b.language,
        why: WhyGo::Build(b),
    })
}

/// Whether signs of `kind` could change the decision `signs` give: whether none of them ranks
/// above it. Reading the tree is skipped when the manifest already said more.
pub(super) fn could_matter(signs: &[Sign], kind: Kind) -> bool {
    signs.iter().all(|s| rank(s.kind) > rank(kind))
}

/// The decision: the strongest sign's language, and whether that is Go; with no sign at all,
/// `assume-go` decides and says so.
pub fn decide<'a>(signs: Vec<Sign<'a>>, cfg: &Config) -> (bool, Option<&'a str>, WhyGo<'a>) {
    match signs.into_iter().min_by_key(|s| rank(s.kind)) {
        Some(s) => (s.language == "go", Some(s.language), s.why),
        None => (cfg.assume_go, None, WhyGo::AssumeGo { on: cfg.assume_go }),
    }
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
        assert_eq!(decide(signs, &cfg).1, Some("go"));
        let signs = vec![sign(Kind::Build, "go"), sign(Kind::Catalog, "c")];
        let (is_go, language, _) = decide(signs, &cfg);
        assert_eq!((is_go, language), (false, Some("c")));
    }

    #[test]
    fn no_sign_leaves_it_to_assume_go() {
        let cfg = Config {
            assume_go: false,
            ..Default::default()
        };
        let (is_go, language, why) = decide(Vec::new(), &cfg);
        assert_eq!((is_go, language), (false, None));
        assert!(matches!(why, WhyGo::AssumeGo { on: false }));
    }

    #[test]
    fn the_tree_is_read_only_when_the_manifest_said_less() {
        assert!(could_matter(&[sign(Kind::Script, "shell")], Kind::Build));
        assert!(could_matter(&[], Kind::Build));
        assert!(!could_matter(
            &[sign(Kind::ImageWord, "python")],
            Kind::Build
        ));
    }
}
