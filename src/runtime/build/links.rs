//! Images that a repository builds outside skaffold: a compose file's services (`image:` with
//! `build:`), a GitHub Actions workflow's `docker/build-push-action` steps and `docker build`
//! command lines, and the `docker build` / `podman build` recipes of a Makefile. Each names an
//! image and the context (and Dockerfile) it is built from, which is all the link needs: the
//! Dockerfile or project files in that context then say the language, as for a skaffold artifact.
//!
//! Image names in these files are often templated (`${REGISTRY}/rs-cart:${TAG}`,
//! `ghcr.io/${{ github.repository_owner }}/api:${{ github.sha }}`, `$(IMG)`): what is left after
//! the last `/` once variables are taken out still names the image, so that part is matched;
//! a name that is itself a variable links nothing.

use super::Built;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The largest build file read (a Dockerfile, go.mod, skaffold, Cloud Build or compose file,
/// workflow or Makefile): one bigger than this is not a hand-written build definition.
pub(super) const MAX_BYTES: u64 = 512 * 1024;

/// How many workflow files of one repository are read.
const MAX_WORKFLOWS: usize = 64;

/// The text of a build file, when it is no larger than [`MAX_BYTES`].
pub(super) fn read_capped(path: &Path) -> Option<String> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() || meta.len() > MAX_BYTES {
        return None;
    }
    std::fs::read_to_string(path).ok()
}

/// Whether a file name is a compose file's: `docker-compose.yaml`, `compose.yml`,
/// `compose.build.yaml`, `docker-compose.prod.yml`, `docker-compose-load.yaml`.
pub(super) fn is_compose(name: &str) -> bool {
    let stem = name
        .strip_suffix(".yaml")
        .or_else(|| name.strip_suffix(".yml"));
    stem.is_some_and(|s| {
        s == "compose"
            || s.starts_with("compose.")
            || s.strip_prefix("docker-compose")
                .is_some_and(|r| r.is_empty() || r.starts_with(['.', '-']))
    })
}

/// Whether a file name is a Makefile's.
pub(super) fn is_makefile(name: &str) -> bool {
    matches!(name, "Makefile" | "makefile" | "GNUmakefile") || name.ends_with(".mk")
}

/// What an image is matched by: its repository when the reference is written out
/// (`quay.io/acme/api:v1` is `acme/api`), or the part after its last `/` when variables stand
/// for the rest (`${REPO}/rs-cart:${TAG}` is `rs-cart`). `None` when the name itself is a
/// variable.
pub(super) fn image_key(raw: &str) -> Option<String> {
    const HOLE: char = '\u{1}';
    let raw = raw.trim().trim_matches(['"', '\'']);
    let plain = without_variables(raw, HOLE);
    let r = crate::go::catalog::ImageRef::parse(&plain);
    // A tag that is a variable leaves `name:` behind; the name is what counts.
    let (repo, name) = (r.repo, r.name);
    if name.is_empty() || name.contains(HOLE) || name.contains(['$', ' ', '{', '}', '(', ')']) {
        return None;
    }
    let key = if repo.contains(HOLE) { name } else { repo };
    Some(key.to_ascii_lowercase())
}

/// `s` with each variable reference (`${{ … }}`, `${…}`, `$(…)`, `$NAME`, `$$NAME`) replaced by
/// `hole`.
fn without_variables(s: &str, hole: char) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = rest[at..].trim_start_matches('$');
        let len = if let Some(inner) = after.strip_prefix("{{") {
            inner.find("}}").map_or(after.len(), |e| e + 4)
        } else if after.starts_with('{') || after.starts_with('(') {
            closing(after).unwrap_or(after.len())
        } else {
            after
                .bytes()
                .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
                .count()
        };
        out.push(hole);
        rest = &after[len..];
    }
    out.push_str(rest);
    out
}

/// The length of a bracketed reference `{…}` or `(…)` at the start of `s`, nesting included.
fn closing(s: &str) -> Option<usize> {
    let (open, close) = match s.as_bytes().first()? {
        b'{' => (b'{', b'}'),
        _ => (b'(', b')'),
    };
    let mut depth = 0usize;
    for (i, b) in s.bytes().enumerate() {
        if b == open {
            depth += 1;
        } else if b == close {
            depth -= 1;
            if depth == 0 {
                return Some(i + 1);
            }
        }
    }
    None
}

/// A context directory as written, joined to the directory it is relative to; `None` for a
/// remote context (a Git URL) or one that is still a variable.
fn local(base: &Path, path: &str) -> Option<PathBuf> {
    let path = path.trim().trim_matches(['"', '\'']);
    if path.is_empty() || path.contains("://") || path.starts_with("git@") || path.contains('$') {
        return None;
    }
    if path == "." || path == "./" {
        return Some(base.to_path_buf());
    }
    Some(base.join(path.trim_end_matches('/')))
}

fn link(
    by: &Path,
    image: &str,
    context: PathBuf,
    dockerfile: Option<PathBuf>,
) -> Option<(String, Built)> {
    let key = image_key(image)?;
    let built = Built::Context {
        by: by.to_path_buf(),
        context,
        dockerfile,
    };
    Some((key, built))
}

/// The services of a compose file that build their image: `image:` with `build:` (a context, or
/// `context:` and `dockerfile:`).
pub(super) fn compose(file: &Path) -> Vec<(String, Built)> {
    let Some(text) = read_capped(file) else {
        return Vec::new();
    };
    let dir = file.parent().unwrap_or(Path::new("."));
    let y = crate::yaml::parse(&text, 0);
    let mut out = Vec::new();
    for doc in &y.docs {
        let Some(services) = doc.root.and_then(|r| y.get(r, "services")) else {
            continue;
        };
        for (_, service) in y.entries(services) {
            let (Some(image), Some(build)) = (y.get_str(service, "image"), y.get(service, "build"))
            else {
                continue;
            };
            let (context, dockerfile) = match y.str(build) {
                Some(context) => (context, None),
                None => (
                    y.get_str(build, "context").unwrap_or("."),
                    y.get_str(build, "dockerfile"),
                ),
            };
            let Some(context) = local(dir, context) else {
                continue;
            };
            let dockerfile = dockerfile.and_then(|d| local(&context, d));
            out.extend(link(file, image, context, dockerfile));
        }
    }
    out
}

/// The images the workflows under `.github/workflows` of `root` build.
pub(super) fn workflows(root: &Path) -> Vec<(String, Built)> {
    let Ok(entries) = std::fs::read_dir(root.join(".github").join("workflows")) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "yml" || x == "yaml"))
        .collect();
    files.sort();
    files.truncate(MAX_WORKFLOWS);
    let mut out = Vec::new();
    for file in files {
        workflow(root, &file, &mut out);
    }
    out
}

fn workflow(root: &Path, file: &Path, out: &mut Vec<(String, Built)>) {
    let Some(text) = read_capped(file) else {
        return;
    };
    let y = crate::yaml::parse(&text, 0);
    let env_of = |node: Option<crate::yaml::NodeId>, vars: &mut HashMap<String, String>| {
        if let Some(env) = node.and_then(|n| y.get(n, "env")) {
            for (k, v) in y.entries(env) {
                if let (Some(k), Some(v)) = (y.str(k), y.str(v)) {
                    vars.insert(k.to_string(), v.to_string());
                }
            }
        }
    };
    for doc in &y.docs {
        let Some(root_node) = doc.root else { continue };
        let mut top = HashMap::new();
        env_of(Some(root_node), &mut top);
        let Some(jobs) = y.get(root_node, "jobs") else {
            continue;
        };
        for (_, job) in y.entries(jobs) {
            let mut vars = top.clone();
            env_of(Some(job), &mut vars);
            let steps = y.get(job, "steps").map_or(&[][..], |s| y.items(s));
            // The images a `docker/metadata-action` step names, by the step's id: a build step
            // tags with `${{ steps.meta.outputs.tags }}`.
            let mut meta: HashMap<&str, Vec<String>> = HashMap::new();
            for &step in steps {
                let mut vars = vars.clone();
                env_of(Some(step), &mut vars);
                let expand = |s: &str| expand_workflow(s, &vars);
                let uses = y.get_str(step, "uses").unwrap_or("");
                let with = y.get(step, "with");
                let with_str = |k: &str| with.and_then(|w| y.get_str(w, k)).map(expand);
                if uses.starts_with("docker/metadata-action") {
                    if let (Some(id), Some(images)) = (y.get_str(step, "id"), with_str("images")) {
                        let names = split_list(&images)
                            .map(|i| i.split(',').next().unwrap_or(i).trim().to_string())
                            .filter(|i| !i.starts_with("name="))
                            .collect();
                        meta.insert(id, names);
                    }
                } else if uses.starts_with("docker/build-push-action") {
                    let context = with_str("context").unwrap_or_else(|| ".".to_string());
                    let Some(context) = local(root, &context) else {
                        continue;
                    };
                    let dockerfile = with_str("file").and_then(|f| local(root, &f));
                    let tags = with_str("tags").unwrap_or_default();
                    let mut images: Vec<String> = split_list(&tags).map(str::to_string).collect();
                    for (id, names) in &meta {
                        if tags.contains(&format!("steps.{id}.outputs")) {
                            images.extend(names.iter().cloned());
                        }
                    }
                    for image in images {
                        out.extend(link(file, &image, context.clone(), dockerfile.clone()));
                    }
                } else if let Some(run) = y.get_str(step, "run") {
                    let dir = y
                        .get_str(step, "working-directory")
                        .and_then(|d| local(root, d))
                        .unwrap_or_else(|| root.to_path_buf());
                    for (image, context, dockerfile) in command_builds(&expand(run)) {
                        let Some(context) = local(&dir, &context) else {
                            continue;
                        };
                        let dockerfile = dockerfile.and_then(|f| local(&dir, &f));
                        out.extend(link(file, &image, context, dockerfile));
                    }
                }
            }
        }
    }
}

/// `${{ env.NAME }}` replaced by the workflow's, job's or step's `env` value; other expressions
/// are kept.
fn expand_workflow(s: &str, vars: &HashMap<String, String>) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(at) = rest.find("${{") {
        out.push_str(&rest[..at]);
        let Some(end) = rest[at..].find("}}") else {
            break;
        };
        let expr = &rest[at..at + end + 2];
        let inner = expr[3..expr.len() - 2].trim();
        match inner.strip_prefix("env.").and_then(|n| vars.get(n)) {
            Some(v) if !v.contains("${{") => out.push_str(v),
            _ => out.push_str(expr),
        }
        rest = &rest[at + end + 2..];
    }
    out.push_str(rest);
    out
}

/// The items of a list written one a line or comma-separated.
fn split_list(s: &str) -> impl Iterator<Item = &str> {
    s.split(['\n', ','])
        .map(str::trim)
        .filter(|t| !t.is_empty() && !t.starts_with('#'))
}

/// The images the recipes of a Makefile build, its simple variables (`IMG ?= controller:latest`)
/// filled in once.
pub(super) fn makefile(file: &Path) -> Vec<(String, Built)> {
    let Some(text) = read_capped(file) else {
        return Vec::new();
    };
    let dir = file.parent().unwrap_or(Path::new("."));
    let joined = text.replace("\\\r\n", " ").replace("\\\n", " ");
    let mut vars: HashMap<&str, &str> = HashMap::new();
    for line in joined.lines() {
        if line.starts_with('\t') {
            continue;
        }
        let Some((name, value)) = assignment(line) else {
            continue;
        };
        vars.entry(name).or_insert(value);
    }
    let mut out = Vec::new();
    for line in joined.lines().filter(|l| l.starts_with('\t')) {
        let line = expand_make(line, &vars);
        for (image, context, dockerfile) in command_builds(&line) {
            let Some(context) = local(dir, &context) else {
                continue;
            };
            let dockerfile = dockerfile.and_then(|f| local(dir, &f));
            out.extend(link(file, &image, context, dockerfile));
        }
    }
    out
}

/// A simple variable assignment (`NAME ?= value`, `NAME := value`, `NAME = value`): the name
/// and the value.
fn assignment(line: &str) -> Option<(&str, &str)> {
    let line = line.strip_prefix("export ").unwrap_or(line);
    let at = line.find('=')?;
    let (left, value) = (&line[..at], line[at + 1..].trim());
    let name = left.trim_end_matches(['?', ':', '+', '!']).trim();
    let simple = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b == b'.');
    // An appended or shell-computed value is not a value the file states.
    let computed = left.ends_with('+') || left.ends_with('!') || value.starts_with("$(shell");
    (simple && !computed).then(|| (name, value.split(" #").next().unwrap_or(value).trim()))
}

/// `$(NAME)` and `${NAME}` replaced by the Makefile's value for NAME, once; others kept.
fn expand_make(s: &str, vars: &HashMap<&str, &str>) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let reference = match after.as_bytes().first() {
            Some(b'(') | Some(b'{') => closing(after).map(|n| &after[..n]),
            _ => None,
        };
        match reference {
            Some(r) => {
                match vars.get(&r[1..r.len() - 1]) {
                    Some(v) => out.push_str(v),
                    None => {
                        out.push('$');
                        out.push_str(r);
                    }
                }
                rest = &after[r.len()..];
            }
            None => {
                out.push('$');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The words of a command line, as a shell splits them: quotes removed, and variable
/// references (`${{ … }}`, `$(…)`, `${…}`) kept whole.
fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.char_indices().peekable();
    let mut quote: Option<char> = None;
    while let Some((i, c)) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                in_word = true;
            }
            (None, '$') if matches!(line[i + 1..].chars().next(), Some('(' | '{')) => {
                let n = closing(&line[i + 1..]).unwrap_or(line.len() - i - 1);
                word.push_str(&line[i..i + 1 + n]);
                in_word = true;
                while chars.peek().is_some_and(|(j, _)| *j < i + 1 + n) {
                    chars.next();
                }
            }
            (None, c) if c.is_whitespace() || c == ';' || c == '|' || c == '&' => {
                if in_word {
                    out.push(std::mem::take(&mut word));
                    in_word = false;
                }
                if matches!(c, ';' | '|' | '&') {
                    out.push(c.to_string());
                }
            }
            (None, c) => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        out.push(word);
    }
    out
}

/// Flags of `docker build` that take no value.
const BOOLEAN_FLAGS: &[&str] = &[
    "--push",
    "--load",
    "--no-cache",
    "--pull",
    "--rm",
    "--force-rm",
    "-q",
    "--quiet",
    "--squash",
    "--compress",
    "--disable-content-trust",
    "--layers",
    "--debug",
];

/// The builds a command line runs (`docker build -t NAME -f FILE CONTEXT`, `docker buildx
/// build`, `podman build`, `buildah bud`, or a variable for the tool followed by `build`): each
/// image it tags, its context and its Dockerfile, as written.
fn command_builds(line: &str) -> Vec<(String, String, Option<String>)> {
    let mut out = Vec::new();
    for line in line.lines() {
        let w = words(line);
        let mut i = 0;
        while i < w.len() {
            let tool = w[i].rsplit('/').next().unwrap_or(&w[i]);
            let is_tool = matches!(tool, "docker" | "podman" | "buildah" | "nerdctl")
                || (w[i].starts_with("$(") || w[i].starts_with("${")) && w[i].len() > 3;
            let mut j = i + 1;
            if w.get(j).is_some_and(|s| s == "buildx") {
                j += 1;
            }
            if !(is_tool && w.get(j).is_some_and(|s| s == "build" || s == "bud")) {
                i += 1;
                continue;
            }
            let (mut tags, mut file, mut positional) = (Vec::new(), None, Vec::new());
            j += 1;
            while j < w.len() && !matches!(w[j].as_str(), ";" | "|" | "&") {
                let a = w[j].as_str();
                let value = |j: usize| w.get(j + 1).cloned();
                if let Some(v) = a.strip_prefix("--tag=").or(a.strip_prefix("-t=")) {
                    tags.push(v.to_string());
                } else if a == "-t" || a == "--tag" {
                    tags.extend(value(j));
                    j += 1;
                } else if let Some(v) = a.strip_prefix("--file=").or(a.strip_prefix("-f=")) {
                    file = Some(v.to_string());
                } else if a == "-f" || a == "--file" {
                    file = value(j);
                    j += 1;
                } else if a.starts_with('-') {
                    if !a.contains('=') && !BOOLEAN_FLAGS.contains(&a) {
                        j += 1;
                    }
                } else {
                    positional.push(a.to_string());
                }
                j += 1;
            }
            if let Some(context) = positional.last() {
                for tag in tags {
                    out.push((tag, context.clone(), file.clone()));
                }
            }
            i = j;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_names_survive_their_variables() {
        assert_eq!(
            image_key("${REPO}/rs-cart:${TAG}").as_deref(),
            Some("rs-cart")
        );
        assert_eq!(
            image_key("ghcr.io/${{ github.repository_owner }}/api:${{ github.sha }}").as_deref(),
            Some("api")
        );
        assert_eq!(
            image_key("quay.io/acme/api:v1").as_deref(),
            Some("acme/api")
        );
        assert_eq!(
            image_key("controller:latest").as_deref(),
            Some("controller")
        );
        assert_eq!(image_key("${IMG}"), None);
        assert_eq!(image_key("ghcr.io/acme/${NAME}:1"), None);
        assert_eq!(image_key("$(REGISTRY)/svc-$(NAME):1"), None);
    }

    #[test]
    fn build_command_lines_name_image_context_and_dockerfile() {
        let b = command_builds(
            "cd x && docker buildx build --platform linux/amd64 --push -t a/b:1 --tag=c -f build/Dockerfile.api .",
        );
        assert_eq!(
            b,
            vec![
                (
                    "a/b:1".into(),
                    ".".into(),
                    Some("build/Dockerfile.api".into())
                ),
                ("c".into(), ".".into(), Some("build/Dockerfile.api".into())),
            ]
        );
        let b = command_builds(
            "$(CONTAINER_TOOL) build -t ${IMG} --build-arg X=\"a b\" ./svc ; echo done",
        );
        assert_eq!(b, vec![("${IMG}".into(), "./svc".into(), None)]);
        assert!(command_builds("docker push a/b:1").is_empty());
    }

    #[test]
    fn compose_file_names() {
        for n in [
            "docker-compose.yaml",
            "compose.yml",
            "compose.build.yaml",
            "docker-compose.prod.yml",
            "docker-compose-load.yaml",
        ] {
            assert!(is_compose(n), "{n}");
        }
        for n in [
            "composer.json",
            "compose.json",
            "my-compose.yaml",
            "composer.yaml",
        ] {
            assert!(!is_compose(n), "{n}");
        }
    }
}
