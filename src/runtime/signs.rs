//! What a manifest shows about a container's runtime, short of a declaration: the environment
//! variables other runtimes read, the program its command runs, and runtime names in its image
//! reference. Each sign names a language; these are generic rules about runtimes, not a list of
//! particular images (that is the catalog's job).

// The command words themselves are read in `go::command`, below the images that read an
// entrypoint the same way; the build-file reader still finds them here.
pub(super) use crate::go::command::{sign_of_words, CommandSign};
use crate::k8s::container::Container;
use crate::yaml::{NodeId, Yaml};
use std::sync::LazyLock;

/// Environment variables that another runtime reads: exact names, then prefixes.
const OTHER_ENV: &[(&str, &str)] = &[
    ("JAVA_TOOL_OPTIONS", "java"),
    ("JAVA_OPTS", "java"),
    ("JDK_JAVA_OPTIONS", "java"),
    ("_JAVA_OPTIONS", "java"),
    ("JAVA_HOME", "java"),
    ("CATALINA_OPTS", "java"),
    ("JVM_OPTS", "java"),
    ("SPRING_PROFILES_ACTIVE", "java"),
    ("NODE_OPTIONS", "node"),
    ("NODE_ENV", "node"),
    ("NODE_PATH", "node"),
    ("DJANGO_SETTINGS_MODULE", "python"),
    ("FLASK_APP", "python"),
    ("GUNICORN_CMD_ARGS", "python"),
    ("VIRTUAL_ENV", "python"),
    ("TRANSFORMERS_CACHE", "python"),
    ("HF_HOME", "python"),
    ("HF_HUB_OFFLINE", "python"),
    ("HUGGING_FACE_HUB_TOKEN", "python"),
    ("OMP_NUM_THREADS", "python"),
    ("RAILS_ENV", "ruby"),
    ("RACK_ENV", "ruby"),
    ("RUBYOPT", "ruby"),
    ("MIX_ENV", "elixir"),
    ("ERL_FLAGS", "erlang"),
    ("RUST_LOG", "rust"),
    ("RUST_BACKTRACE", "rust"),
];

const OTHER_ENV_PREFIXES: &[(&str, &str)] = &[
    ("PYTHON", "python"),
    ("PIP_", "python"),
    ("UVICORN_", "python"),
    ("VLLM_", "python"),
    ("DOTNET_", "dotnet"),
    ("ASPNETCORE_", "dotnet"),
    ("COMPlus_", "dotnet"),
    ("PHP_", "php"),
    ("BUNDLE_", "ruby"),
    ("NPM_CONFIG_", "node"),
];

/// The first variable of the container's env that another runtime reads, with its language.
pub fn other_env<'y>(c: &Container<'y>) -> Option<(&'y str, &'static str)> {
    c.env.iter().find_map(|e| {
        let exact = OTHER_ENV.iter().find(|(n, _)| *n == e.name);
        let prefix = || {
            OTHER_ENV_PREFIXES
                .iter()
                .find(|(p, _)| e.name.starts_with(p))
        };
        exact.or_else(prefix).map(|(_, lang)| (e.name, *lang))
    })
}

/// The program the container's `command` (or, without one, its `args`) runs.
pub fn command_sign<'y>(y: &'y Yaml, c: &Container<'y>) -> Option<CommandSign<'y>> {
    let words = |node: Option<NodeId>| -> Vec<&'y str> {
        match node {
            Some(n) if !y.items(n).is_empty() => {
                y.items(n).iter().filter_map(|&i| y.str(i)).collect()
            }
            _ => Vec::new(),
        }
    };
    let command = words(c.command);
    if !command.is_empty() {
        let mut all = command;
        // `command: [sh, -c]` with the script in args.
        all.extend(words(c.args));
        return sign_of_words(&all, 0);
    }
    // Without a command the image's entrypoint runs the args; they show a program only when
    // they start with one (`args: [python, app.py]`), never a mere flag.
    let first_arg = c
        .args
        .and_then(|a| y.items(a).first().and_then(|&i| y.str(i)));
    if first_arg.is_none_or(|w| w.starts_with('-')) {
        return None;
    }
    match sign_of_words(&words(c.args), 0) {
        Some(s @ CommandSign::Program { .. }) => Some(s),
        _ => None,
    }
}

/// Runtime names that, as a token of an image's repository path, say which runtime the image
/// carries (`vllm/vllm-openai`, `pytorch/pytorch`, `nvcr.io/nvidia/tritonserver`).
const IMAGE_WORDS: &[(&str, &str)] = &[
    ("python", "python"),
    ("pytorch", "python"),
    ("torchserve", "java"),
    ("tensorflow", "python"),
    ("vllm", "python"),
    ("sglang", "python"),
    ("jupyter", "python"),
    ("jupyterlab", "python"),
    ("notebook", "python"),
    ("huggingface", "python"),
    ("transformers", "python"),
    ("gradio", "python"),
    ("streamlit", "python"),
    ("django", "python"),
    ("flask", "python"),
    ("fastapi", "python"),
    ("uvicorn", "python"),
    ("gunicorn", "python"),
    ("celery", "python"),
    ("airflow", "python"),
    ("mlflow", "python"),
    ("locust", "python"),
    ("kserve", "python"),
    ("tritonserver", "cpp"),
    ("openjdk", "java"),
    ("jdk", "java"),
    ("jre", "java"),
    ("java", "java"),
    ("temurin", "java"),
    ("corretto", "java"),
    ("graalvm", "java"),
    ("spring", "java"),
    ("tomcat", "java"),
    ("jetty", "java"),
    ("wildfly", "java"),
    ("dotnet", "dotnet"),
    ("aspnet", "dotnet"),
    ("nodejs", "node"),
    ("ruby", "ruby"),
    ("rails", "ruby"),
    ("php", "php"),
    ("rust", "rust"),
    ("elixir", "elixir"),
    ("erlang", "erlang"),
    ("gradle", "java"),
    ("maven", "java"),
];

/// A runtime named by the image reference: `ko://` (a Go main package built by ko) or a runtime
/// word in the repository path, or `py3`/`jdk` in the tag. Tools named after the runtime they
/// wrap (`jupyter-operator`) are not counted.
pub fn image_sign(image: &str) -> Option<(&'static str, &'static str)> {
    reference_sign(&crate::go::catalog::ImageRef::parse(image))
}

/// [`image_sign`] for a reference already read.
pub fn reference_sign(r: &crate::go::catalog::ImageRef) -> Option<(&'static str, &'static str)> {
    if r.image.starts_with("ko://") {
        return Some(("ko://", "go"));
    }
    let (repo, last) = (r.repo, r.name);
    // `python3`, `jdk17`: a version glued to the name.
    fn words(s: &str) -> impl Iterator<Item = &str> {
        s.split(['/', '-', '_', '.'])
            .map(|t| t.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.'))
    }
    let is = |t: &str, w: &str| t.eq_ignore_ascii_case(w);
    if words(last).any(|t| crate::go::catalog::WRAPPER_WORDS.iter().any(|w| is(t, w))) {
        return None;
    }
    static BY_WORD: LazyLock<foldhash::HashMap<&str, &str>> =
        LazyLock::new(|| IMAGE_WORDS.iter().copied().collect());
    // Image names are lowercase (the reference grammar allows no other), so an exact match.
    for token in words(repo) {
        if let Some((w, lang)) = BY_WORD.get_key_value(token) {
            return Some((w, lang));
        }
    }
    for token in r.tag?.split(['-', '_']) {
        let name = token.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
        if ["py", "python"].iter().any(|w| is(name, w)) {
            return Some(("py", "python"));
        }
        if ["jdk", "jre", "openjdk", "temurin", "corretto"]
            .iter()
            .any(|w| is(name, w))
        {
            return Some(("jdk", "java"));
        }
        // `documentdb-local:pg17-0.112.0`: a PostgreSQL build.
        if ["pg", "postgres", "postgresql"].iter().any(|w| is(name, w)) {
            return Some(("pg", "c"));
        }
        if ["node", "nodejs"].iter().any(|w| is(name, w)) {
            return Some(("node", "node"));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::go::command::program_start;

    #[test]
    fn wrappers_are_skipped() {
        let first = |w: &[&'static str]| w.get(program_start(w)).copied();
        assert_eq!(first(&["/tini", "--", "/app/x"]), Some("/app/x"));
        assert_eq!(first(&["env", "A=B", "server"]), Some("server"));
        assert_eq!(
            first(&["env", "A=B", "C=D", "timeout", "5", "python3"]),
            Some("python3")
        );
        assert_eq!(first(&["tini", "--"]), None);
    }

    fn words(s: &str) -> Option<CommandSign<'_>> {
        let w: Vec<&str> = s.split(' ').collect();
        sign_of_words(&w, 0)
    }

    fn lang(s: &str) -> Option<&'static str> {
        match words(s)? {
            CommandSign::Program { language, .. } => Some(language),
            CommandSign::Script(_) => Some("script"),
        }
    }

    #[test]
    fn commands_name_their_runtime() {
        assert_eq!(lang("python3 -m uvicorn app:app"), Some("python"));
        assert_eq!(lang("/usr/local/bin/python3.11 serve.py"), Some("python"));
        assert_eq!(lang("tini -- java -jar app.jar"), Some("java"));
        assert_eq!(lang("/ko-app/controller"), Some("go"));
        assert_eq!(lang("go run ./cmd/api"), Some("go"));
        assert_eq!(lang("node server.js"), Some("node"));
        assert_eq!(lang("dotnet Api.dll"), Some("dotnet"));
        assert_eq!(lang("/entrypoint.sh"), Some("script"));
        assert_eq!(lang("/manager --leader-elect"), None);
        assert_eq!(lang("/bin/sh -c exec /app/server --port 80"), None);
        let w = ["/bin/sh", "-c", "pip install x && python app.py"];
        assert_eq!(
            sign_of_words(&w, 0),
            Some(CommandSign::Program {
                word: "python",
                language: "python"
            })
        );
        assert_eq!(lang("bash run.sh"), Some("script"));
        assert_eq!(lang("sh"), None);
    }

    #[test]
    fn images_name_their_runtime() {
        let lang = |i: &str| image_sign(i).map(|(_, l)| l);
        assert_eq!(lang("ko://github.com/acme/api/cmd/api"), Some("go"));
        assert_eq!(lang("vllm/vllm-openai:v0.6.0"), Some("python"));
        assert_eq!(lang("nvcr.io/nvidia/tritonserver:24.01-py3"), Some("cpp"));
        assert_eq!(
            lang("pytorch/pytorch:2.1.0-cuda12.1-cudnn8-runtime"),
            Some("python")
        );
        assert_eq!(lang("ghcr.io/acme/worker:1.2-py3.11"), Some("python"));
        assert_eq!(lang("mcr.microsoft.com/dotnet/aspnet:8.0"), Some("dotnet"));
        assert_eq!(lang("ghcr.io/kubeflow/jupyter-operator:v1"), None);
        assert_eq!(lang("ghcr.io/acme/api:1.4.2"), None);
        assert_eq!(lang("ghcr.io/acme/pythonic:1"), None);
    }
}
