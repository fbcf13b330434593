//! What a manifest shows about a container's runtime, short of a declaration: the environment
//! variables other runtimes read, the program its command runs, and runtime names in its image
//! reference. Each sign names a language; these are generic rules about runtimes, not a list of
//! particular images (that is the catalog's job).

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

/// Programs and the language they run, by the command's base name.
const PROGRAMS: &[(&str, &str)] = &[
    ("python", "python"),
    ("pypy", "python"),
    ("uvicorn", "python"),
    ("gunicorn", "python"),
    ("hypercorn", "python"),
    ("daphne", "python"),
    ("celery", "python"),
    ("flask", "python"),
    ("django-admin", "python"),
    ("jupyter", "python"),
    ("jupyterhub", "python"),
    ("streamlit", "python"),
    ("gradio", "python"),
    ("vllm", "python"),
    ("text-generation-launcher", "python"),
    ("torchrun", "python"),
    ("accelerate", "python"),
    ("deepspeed", "python"),
    ("ray", "python"),
    ("mlflow", "python"),
    ("airflow", "python"),
    ("locust", "python"),
    ("dask-scheduler", "python"),
    ("dask-worker", "python"),
    ("supervisord", "python"),
    ("tritonserver", "cpp"),
    ("torchserve", "java"),
    ("tensorflow_model_server", "cpp"),
    ("java", "java"),
    ("catalina.sh", "java"),
    ("mvn", "java"),
    ("gradle", "java"),
    ("spark-submit", "java"),
    ("node", "node"),
    ("nodejs", "node"),
    ("npm", "node"),
    ("npx", "node"),
    ("yarn", "node"),
    ("pnpm", "node"),
    ("bun", "node"),
    ("deno", "node"),
    ("dotnet", "dotnet"),
    ("ruby", "ruby"),
    ("bundle", "ruby"),
    ("rails", "ruby"),
    ("rake", "ruby"),
    ("puma", "ruby"),
    ("sidekiq", "ruby"),
    ("php", "php"),
    ("php-fpm", "php"),
    ("apache2-foreground", "php"),
    ("perl", "perl"),
    ("nginx", "c"),
    ("openresty", "c"),
    ("httpd", "c"),
    ("httpd-foreground", "c"),
    ("apache2", "c"),
    ("haproxy", "c"),
    ("redis-server", "c"),
    ("memcached", "c"),
    ("postgres", "c"),
    ("mysqld", "cpp"),
    ("mongod", "cpp"),
    ("envoy", "cpp"),
    ("elixir", "elixir"),
    ("mix", "elixir"),
    ("erl", "erlang"),
    ("Rscript", "r"),
    ("julia", "julia"),
];

/// Programs that only start another one: the program after them is the one that runs.
const WRAPPERS: &[&str] = &[
    "tini",
    "dumb-init",
    "exec",
    "env",
    "nice",
    "nohup",
    "timeout",
    "gosu",
    "su-exec",
    "catatonit",
    "time",
    "stdbuf",
    "taskset",
    "numactl",
];

const SHELLS: &[&str] = &["sh", "bash", "ash", "dash", "zsh", "ksh"];

/// What the command shows: a program with its language.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommandSign<'y> {
    /// A program of a known runtime (`python3`, `java`, `/ko-app/controller` for Go).
    Program {
        word: &'y str,
        language: &'static str,
    },
    /// A shell script file (`/entrypoint.sh`): some other program, not itself Go.
    Script(&'y str),
}

/// The language of one command word, by its base name (`/usr/bin/python3.11` is python).
fn program_language(word: &str) -> Option<&'static str> {
    // ko puts the binary it builds from a Go main package at /ko-app/<name>.
    if word.starts_with("/ko-app/") {
        return Some("go");
    }
    let base = word.rsplit('/').next().unwrap_or(word);
    // `python3`, `python3.11`, `java17`: a version glued to the name.
    let name = base.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    let name = if name.is_empty() { base } else { name };
    PROGRAMS
        .iter()
        .find(|(p, _)| *p == name || *p == base)
        .map(|(_, lang)| *lang)
}

/// Where the program of an argv starts: past wrappers and their options (`tini --`,
/// `timeout 5`, `env A=B`).
pub(crate) fn program_start(words: &[&str]) -> usize {
    let mut i = 0;
    while let Some(w) = words.get(i) {
        let base = w.rsplit('/').next().unwrap_or(w);
        if !WRAPPERS.contains(&base) {
            return i;
        }
        i += 1;
        // The wrapper's options, and env's assignments, are not the program.
        while words.get(i).is_some_and(|a| {
            a.starts_with('-') || a.parse::<f64>().is_ok() || (base == "env" && a.contains('='))
        }) {
            i += 1;
        }
    }
    i
}

/// The program a word list runs, looking through wrappers, `sh -c "…"` scripts and
/// `go run`. `depth` bounds the nesting of shell scripts.
pub(crate) fn sign_of_words<'y>(words: &[&'y str], depth: u8) -> Option<CommandSign<'y>> {
    let i = program_start(words);
    let w = *words.get(i)?;
    let base = w.rsplit('/').next().unwrap_or(w);
    if SHELLS.contains(&base) {
        // `sh -c "script"`: the script's words; `sh script.sh`: a script.
        let rest = &words[i + 1..];
        if let Some(pos) = rest
            .iter()
            .position(|a| a.starts_with('-') && a.contains('c'))
        {
            let script = rest.get(pos + 1)?;
            if depth > 2 {
                return None;
            }
            return script_sign(script, depth + 1);
        }
        return rest
            .iter()
            .find(|a| !a.starts_with('-'))
            .map(|s| sign_of_words(&[s], depth).unwrap_or(CommandSign::Script(s)));
    }
    if base == "go" && words.get(i + 1) == Some(&"run") {
        return Some(CommandSign::Program {
            word: w,
            language: "go",
        });
    }
    if let Some(language) = program_language(w) {
        return Some(CommandSign::Program { word: w, language });
    }
    if base.ends_with(".sh") {
        return Some(CommandSign::Script(w));
    }
    match base.rsplit_once('.') {
        Some((_, "py")) => Some(CommandSign::Program {
            word: w,
            language: "python",
        }),
        Some((_, "jar")) => Some(CommandSign::Program {
            word: w,
            language: "java",
        }),
        Some((_, "js" | "mjs" | "cjs" | "ts")) => Some(CommandSign::Program {
            word: w,
            language: "node",
        }),
        Some((_, "rb")) => Some(CommandSign::Program {
            word: w,
            language: "ruby",
        }),
        Some((_, "php")) => Some(CommandSign::Program {
            word: w,
            language: "php",
        }),
        Some((_, "dll")) => Some(CommandSign::Program {
            word: w,
            language: "dotnet",
        }),
        _ => None,
    }
}

/// The program a shell script runs: the first command of each line or `&&`/`;` part that is a
/// known program. A script that only prepares and then `exec`s a binary says nothing.
fn script_sign(script: &str, depth: u8) -> Option<CommandSign<'_>> {
    for part in script.split(['\n', ';', '&', '|']) {
        let words: Vec<&str> = part
            .split_whitespace()
            .map(|w| w.trim_matches(['"', '\'', '(', ')']))
            .filter(|w| !w.is_empty())
            .collect();
        if let Some(CommandSign::Program { word, language }) = sign_of_words(&words, depth) {
            return Some(CommandSign::Program { word, language });
        }
    }
    None
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
    reference_sign(&super::catalog::ImageRef::parse(image))
}

/// [`image_sign`] for a reference already read.
pub fn reference_sign(r: &super::catalog::ImageRef) -> Option<(&'static str, &'static str)> {
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
    if words(last).any(|t| super::catalog::WRAPPER_WORDS.iter().any(|w| is(t, w))) {
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
