//! The program an argv runs, and in which language: through wrappers (`tini --`, `env A=B`),
//! `sh -c` scripts and `go run`. Manifests' commands, Dockerfiles' entrypoints and images'
//! configs are all read this way.

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
pub fn program_start(words: &[&str]) -> usize {
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
pub fn sign_of_words<'y>(words: &[&'y str], depth: u8) -> Option<CommandSign<'y>> {
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
