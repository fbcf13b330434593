//! The pinned external tools that some integration tests drive (the SARIF Multitool, pre-commit,
//! the official SARIF schema, Helm, Kustomize, crane, the distribution registry), installed by `scripts/test-tools.sh` into `target/test-tools`.
//!
//! Include with `mod tools;` and call [`ensure`]: it returns `None` only where the tools cannot be
//! had (no npm, no python3, no go, another platform), after printing one line saying so, and the caller
//! then skips. In CI it panics instead, so a missing tool can never turn into a silent skip; a
//! failed install panics everywhere.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

#[derive(Clone, Debug)]
pub struct Tools {
    /// The Sarif.Multitool binary of `@microsoft/sarif-multitool-linux`.
    pub sarif_multitool: PathBuf,
    /// `pre-commit`, in its own virtualenv.
    pub pre_commit: PathBuf,
    /// `sarif-schema-2.1.0.json` as OASIS publishes it.
    pub sarif_schema: PathBuf,
    /// `helm` (v3), built from its Go module.
    pub helm: PathBuf,
    /// `kustomize` (v5), built from its Go module.
    pub kustomize: PathBuf,
    /// `crane` (go-containerregistry), built from its Go module: a registry on loopback and the
    /// images pushed to it.
    pub crane: PathBuf,
    /// The CNCF distribution registry (`registry serve`), built from its Go module: a registry
    /// that asks for credentials (htpasswd).
    pub distribution_registry: PathBuf,
}

/// The script's exit status for "this machine cannot have the tools", as opposed to a failure.
const IMPOSSIBLE: i32 = 3;

fn in_ci() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty())
}

/// Install the tools once per test process and say where they are.
pub fn ensure() -> Option<Tools> {
    static TOOLS: OnceLock<Option<Tools>> = OnceLock::new();
    TOOLS.get_or_init(install).clone()
}

fn install() -> Option<Tools> {
    let mut paths = script_paths("test-tools.sh")?;
    let mut take = |key: &str| paths.take(key);
    Some(Tools {
        sarif_multitool: take("SARIF_MULTITOOL"),
        pre_commit: take("PRE_COMMIT"),
        sarif_schema: take("SARIF_SCHEMA"),
        helm: take("HELM"),
        kustomize: take("KUSTOMIZE"),
        crane: take("CRANE"),
        distribution_registry: take("DISTRIBUTION_REGISTRY"),
    })
}

/// What one of the project's tool scripts printed: its `KEY=path` lines.
pub struct ScriptPaths {
    script: String,
    stdout: String,
    paths: BTreeMap<String, PathBuf>,
}

impl ScriptPaths {
    /// The path the script printed for `key`; a panic when it printed none or the path is
    /// missing (the script succeeded, so that is a bug, never a reason to skip).
    pub fn take(&mut self, key: &str) -> PathBuf {
        let path = self.paths.remove(key).unwrap_or_else(|| {
            panic!(
                "scripts/{} did not print {key}=\n{}",
                self.script, self.stdout
            )
        });
        assert!(path.exists(), "{key}={} does not exist", path.display());
        path
    }
}

/// Run `scripts/NAME`, which installs pinned tools and prints where they are. None where it says
/// this machine cannot have them (exit 3), after saying so in one line (in CI, a panic); any other
/// failure panics.
pub fn script_paths(name: &str) -> Option<ScriptPaths> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let script = root.join("scripts").join(name);
    let out = match Command::new("bash").arg(&script).current_dir(root).output() {
        Ok(out) => out,
        Err(e) => return unavailable(&format!("cannot run bash: {e}")),
    };
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        // The script's last line names the step that failed; the rest is install chatter.
        let why = stderr.lines().rev().find(|l| !l.trim().is_empty());
        let why = why.unwrap_or("no message").trim();
        if out.status.code() == Some(IMPOSSIBLE) {
            return unavailable(&format!("scripts/{name}: {why}"));
        }
        // A failed download or a broken step is a bug to see, not a reason to skip.
        panic!("scripts/{name} failed ({}):\n{stderr}", out.status);
    }
    // Once the script succeeded, anything unexpected in its answer is a bug, never a skip.
    let stdout = String::from_utf8(out.stdout)
        .unwrap_or_else(|_| panic!("scripts/{name} printed non-UTF-8"));
    let mut paths = BTreeMap::new();
    for line in stdout.lines().filter(|l| !l.trim().is_empty()) {
        let (key, value) = line
            .split_once('=')
            .unwrap_or_else(|| panic!("scripts/{name} printed {line:?}, not KEY=path"));
        paths.insert(key.to_string(), PathBuf::from(value));
    }
    Some(ScriptPaths {
        script: name.to_string(),
        stdout,
        paths,
    })
}

fn unavailable<T>(why: &str) -> Option<T> {
    if in_ci() {
        panic!("CI must run the tool-driven tests, but the test tools are unavailable: {why}");
    }
    println!("test tools unavailable, tests that need them were not run: {why}");
    None
}
