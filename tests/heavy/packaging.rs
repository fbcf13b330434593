//! How golint-k8s reaches users, checked with the real tools: the Python wheel (built by the
//! pinned maturin from `pyproject.toml`, installed into a fresh virtualenv without an index), the
//! wheel-based pre-commit hook that docs/ci.md documents (run by the real pre-commit, with pip
//! held to a local directory of wheels), the GitHub workflows (actionlint), and the GitHub Action
//! (`action.yml`), whose shell steps run here against an archive made by the release workflow's
//! own archive step.
//!
//! The wheel is built in release mode into `target/release-build`, the directory the pre-commit
//! hook's build (tests/heavy/precommit.rs) shares, so a rerun only rebuilds what changed. The tools come from `scripts/test-tools.sh`; where they cannot be had these tests
//! say so and pass, except under `CI`, where they fail (see `tests/tools/mod.rs`).

use crate::tools;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{MutexGuard, OnceLock};
use std::time::Instant;

use serde_json::Value;

const VERSION: &str = env!("CARGO_PKG_VERSION");
const BIN: &str = env!("CARGO_BIN_EXE_golint-k8s");

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The tools these tests drive, from the script's `KEY=path` lines.
struct Packaging {
    pre_commit: PathBuf,
    /// The Python of pre-commit's virtualenv, which has PyYAML (a dependency of pre-commit).
    python: PathBuf,
    maturin: PathBuf,
    actionlint: PathBuf,
    setuptools_wheel: PathBuf,
}

fn packaging() -> Option<&'static Packaging> {
    static PACKAGING: OnceLock<Option<Packaging>> = OnceLock::new();
    PACKAGING
        .get_or_init(|| {
            // `ensure` installs the tools, or decides that they are unavailable here (and then
            // panics under CI). `Tools` names only the tools every test needs, so the script is
            // asked once more for the rest: with everything installed it only prints.
            let tools = tools::ensure()?;
            let mut paths = tools::script_paths("test-tools.sh")?;
            let mut take = |key: &str| paths.take(key);
            let python = tools.pre_commit.with_file_name("python");
            assert!(
                python.exists(),
                "no python beside {}",
                tools.pre_commit.display()
            );
            Some(Packaging {
                pre_commit: tools.pre_commit,
                python,
                maturin: take("MATURIN"),
                actionlint: take("ACTIONLINT"),
                setuptools_wheel: take("SETUPTOOLS_WHEEL"),
            })
        })
        .as_ref()
}

/// The wheel, built once per test process with the pinned maturin.
fn wheel(p: &Packaging) -> &'static Path {
    static WHEEL: OnceLock<PathBuf> = OnceLock::new();
    WHEEL.get_or_init(|| {
        let out_dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("packaging-wheels");
        if out_dir.exists() {
            std::fs::remove_dir_all(&out_dir).unwrap();
        }
        std::fs::create_dir_all(&out_dir).unwrap();
        let start = Instant::now();
        let out = crate::common::release_build_env(&mut Command::new(&p.maturin))
            .args(["build", "--release", "--locked", "--out"])
            .arg(&out_dir)
            .current_dir(root())
            .output()
            .expect("run maturin");
        let took = start.elapsed();
        assert!(
            out.status.success(),
            "maturin build failed:\n{}",
            text(&out)
        );
        let wheels: Vec<PathBuf> = std::fs::read_dir(&out_dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "whl"))
            .collect();
        assert_eq!(wheels.len(), 1, "maturin built {wheels:?}");
        let wheel = wheels.into_iter().next().unwrap();
        let name = wheel.file_name().unwrap().to_string_lossy().into_owned();
        // A binary wheel for any Python 3, named after the crate's own version.
        assert!(
            name.starts_with(&format!("golint_k8s-{VERSION}-py3-none-")),
            "unexpected wheel name {name}"
        );
        let size = std::fs::metadata(&wheel).unwrap().len();
        eprintln!(
            "wheel {name}: built in {:.1}s (target/release-build), {:.2} MB",
            took.as_secs_f64(),
            size as f64 / 1e6
        );
        wheel
    })
}

/// The tests that time or install run one at a time, so that the first-run time printed is not
/// taken while another virtualenv is being made, or the pre-commit hook built, on the same cores.
fn serial() -> MutexGuard<'static, ()> {
    crate::common::release_build_lock()
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .current_dir(dir)
        .args([
            "-c",
            "user.name=golint-k8s tests",
            "-c",
            "user.email=tests@golint-k8s.invalid",
            "-c",
            "commit.gpgsign=false",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .output()
        .expect("run git");
    assert!(out.status.success(), "git {args:?}: {}", text(&out));
}

/// A git repository with the given files, committed.
fn user_repo(files: &[(&str, String)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    git(dir.path(), &["init", "--quiet"]);
    for (name, content) in files {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }
    git(dir.path(), &["add", "--all"]);
    git(
        dir.path(),
        &["commit", "--quiet", "--no-verify", "-m", "manifests"],
    );
    dir
}

/// A Go Deployment (its annotation says so) with a memory limit; `fixed` gives it a GOMEMLIMIT and a memory request equal
/// to the limit, without it GK101 fires.
fn deployment(name: &str, memory_mib: u64, fixed: bool) -> String {
    let (env, requests) = if fixed {
        (
            format!(
                "          env:\n            - name: GOMEMLIMIT\n              value: \"{}MiB\"\n",
                memory_mib * 9 / 10
            ),
            format!("{{cpu: 100m, memory: {memory_mib}Mi}}"),
        )
    } else {
        (String::new(), "{cpu: 100m}".to_string())
    };
    format!(
        "apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
spec:
  selector:
    matchLabels:
      app: {name}
  template:
    metadata:
      labels:
        app: {name}
      annotations:
        golint-k8s.io/runtime: go
    spec:
      containers:
        - name: {name}
          image: example/{name}:1.0
{env}          resources:
            requests: {requests}
            limits: {{memory: {memory_mib}Mi}}
"
    )
}

/// The fenced blocks of a Markdown file with the given info string.
fn fenced_blocks(markdown: &str, info: &str) -> Vec<String> {
    let open = format!("```{info}\n");
    markdown
        .split(open.as_str())
        .skip(1)
        .map(|rest| rest[..rest.find("```").expect("an unclosed block")].to_string())
        .collect()
}

/// The wheel-based hook as docs/ci.md documents it: the YAML block with `repo: local`.
fn documented_wheel_hook() -> String {
    let doc = std::fs::read_to_string(root().join("docs").join("ci.md")).unwrap();
    let blocks: Vec<String> = fenced_blocks(&doc, "yaml")
        .into_iter()
        .filter(|b| b.contains("repo: local"))
        .collect();
    assert_eq!(blocks.len(), 1, "docs/ci.md should show one local hook");
    blocks.into_iter().next().unwrap()
}

#[test]
fn the_wheel_installs_into_a_fresh_virtualenv_and_runs() {
    let Some(p) = packaging() else { return };
    let wheel = wheel(p);
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let venv = dir.path().join("venv");
    let out = Command::new("python3")
        .args(["-m", "venv"])
        .arg(&venv)
        .output()
        .expect("run python3 -m venv");
    assert!(out.status.success(), "{}", text(&out));
    let python = venv.join("bin").join("python");
    let out = Command::new(&python)
        .args([
            "-m",
            "pip",
            "install",
            "--no-index",
            "--disable-pip-version-check",
        ])
        .arg(wheel)
        .output()
        .unwrap();
    assert!(out.status.success(), "pip install: {}", text(&out));
    let out = Command::new(&python)
        .args(["-m", "pip", "show", "golint-k8s"])
        .output()
        .unwrap();
    assert!(
        text(&out)
            .lines()
            .any(|l| l == format!("Version: {VERSION}")),
        "{}",
        text(&out)
    );

    let exe = venv.join("bin").join("golint-k8s");
    let out = Command::new(&exe).arg("--version").output().unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("golint-k8s {VERSION}\n")
    );

    // The example has errors, so exit 1, and the installed binary reports exactly what this
    // build does.
    let lint = |program: &Path, format: &str| {
        Command::new(program)
            .args(["lint", "examples/deployment.yaml", "--format", format])
            .current_dir(root())
            .env_remove("COLUMNS")
            .output()
            .unwrap()
    };
    for format in ["concise", "human", "json"] {
        let installed = lint(&exe, format);
        let built = lint(Path::new(BIN), format);
        assert_eq!(installed.status.code(), Some(1), "{}", text(&installed));
        assert_eq!(
            String::from_utf8_lossy(&installed.stdout),
            String::from_utf8_lossy(&built.stdout),
            "--format {format}"
        );
    }
    let concise = String::from_utf8(lint(&exe, "concise").stdout).unwrap();
    for code in ["GK104", "GK201", "GK302"] {
        assert!(concise.contains(code), "no {code} in:\n{concise}");
    }
}

#[test]
fn the_documented_wheel_hook_runs_under_pre_commit() {
    let Some(p) = packaging() else { return };
    let wheel = wheel(p);
    let _serial = serial();
    let config = documented_wheel_hook();
    for line in [
        "language: python",
        "entry: golint-k8s lint",
        "types_or: [yaml, json]",
    ] {
        assert!(config.contains(line), "the hook lacks {line:?}:\n{config}");
    }
    assert!(
        config.contains(&format!("additional_dependencies: [golint-k8s=={VERSION}]")),
        "the hook does not pin this version ({VERSION}):\n{config}"
    );

    // The only place pip may install from: this wheel, and the setuptools that pip needs to
    // build pre-commit's placeholder package for a local hook.
    let links = tempfile::tempdir().unwrap();
    for file in [wheel, p.setuptools_wheel.as_path()] {
        std::fs::copy(file, links.path().join(file.file_name().unwrap())).unwrap();
    }
    let repo = user_repo(&[
        (".pre-commit-config.yaml", config),
        ("deploy/api.yaml", deployment("api", 512, false)),
        ("deploy/web.yaml", deployment("web", 1024, true)),
        // Not YAML: the hook must not be given it.
        ("README.md", "# Deploy\n\nkey: [not yaml\n".to_string()),
    ]);
    // An empty pre-commit home: the first run creates the hook's environment.
    let home = tempfile::tempdir().unwrap();
    let run = || {
        let start = Instant::now();
        let out = Command::new(&p.pre_commit)
            .current_dir(repo.path())
            .args(["run", "--all-files", "--color=never"])
            .env("PRE_COMMIT_HOME", home.path())
            .env("PIP_NO_INDEX", "1")
            .env("PIP_FIND_LINKS", links.path())
            .env("PIP_DISABLE_PIP_VERSION_CHECK", "1")
            .output()
            .expect("run pre-commit");
        (out, start.elapsed())
    };

    let (out, first) = run();
    let log = text(&out);
    // 1 is a failed hook; pre-commit's own errors (a failed install among them) exit 3.
    assert_eq!(out.status.code(), Some(1), "{log}");
    assert!(
        log.contains("Installing environment"),
        "the environment was not installed:\n{log}"
    );
    assert!(log.contains("GK101"), "no GK101 in:\n{log}");
    assert!(
        log.contains("deploy/api.yaml:"),
        "the bad manifest is not named:\n{log}"
    );
    assert!(
        !log.contains("deploy/web.yaml:"),
        "the good manifest has findings:\n{log}"
    );
    assert!(
        !log.contains("README.md"),
        "a non-manifest was linted:\n{log}"
    );

    std::fs::write(
        repo.path().join("deploy/api.yaml"),
        deployment("api", 512, true),
    )
    .unwrap();
    git(repo.path(), &["add", "--all"]);
    let (out, again) = run();
    let log = text(&out);
    assert_eq!(out.status.code(), Some(0), "{log}");
    assert!(
        log.lines()
            .any(|l| l.starts_with("golint-k8s") && l.ends_with("Passed")),
        "the hook did not run and pass:\n{log}"
    );
    eprintln!(
        "wheel-based pre-commit hook: first run {:.1}s (empty pre-commit home: virtualenv, pip \
         install of the wheel, lint), later run {:.2}s",
        first.as_secs_f64(),
        again.as_secs_f64()
    );
}

#[test]
fn actionlint_passes_every_workflow() {
    let Some(p) = packaging() else { return };
    let mut workflows: Vec<String> = std::fs::read_dir(root().join(".github").join("workflows"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".yml") || n.ends_with(".yaml"))
        .collect();
    workflows.sort();
    for expected in ["ci.yml", "release.yml"] {
        assert!(workflows.iter().any(|w| w == expected), "{workflows:?}");
    }
    // Without arguments actionlint finds the workflows itself; -verbose names each file it read.
    let out = Command::new(&p.actionlint)
        .args(["-verbose", "-no-color"])
        .current_dir(root())
        .output()
        .expect("run actionlint");
    let log = text(&out);
    assert!(out.status.success(), "actionlint:\n{log}");
    for w in &workflows {
        assert!(
            log.contains(&format!("for .github/workflows/{w}")),
            "actionlint did not check {w}:\n{log}"
        );
    }
    assert!(
        log.contains(&format!("Found 0 errors in {} files", workflows.len())),
        "{log}"
    );
    if log.contains("Rule \"shellcheck\" was disabled") {
        eprintln!("actionlint ran without shellcheck (not on PATH); the scripts were not linted");
    }
}

/// A YAML file as PyYAML reads it (YAML 1.1, so the key `on` becomes `true`), as JSON.
fn yaml(p: &Packaging, file: &str) -> Value {
    let out = Command::new(&p.python)
        .args([
            "-c",
            "import json, sys, yaml; json.dump(yaml.safe_load(open(sys.argv[1], encoding='utf-8')), sys.stdout)",
        ])
        .arg(root().join(file))
        .output()
        .expect("run python");
    assert!(out.status.success(), "{file} is not YAML: {}", text(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn step<'a>(steps: &'a Value, key: &str, value: &str) -> &'a Value {
    steps
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s[key] == value)
        .unwrap_or_else(|| panic!("no step with {key} {value:?}"))
}

fn script(step: &Value) -> &str {
    step["run"].as_str().expect("a run step")
}

/// The release workflow's five platforms: target → archive name.
fn release_assets(release: &Value) -> BTreeMap<String, String> {
    release["jobs"]["build"]["strategy"]["matrix"]["include"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["target"].as_str().unwrap().to_string(),
                e["asset"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn the_release_workflow_and_the_action_agree() {
    let Some(p) = packaging() else { return };
    let release = yaml(p, ".github/workflows/release.yml");
    // PyYAML reads `on:` as the boolean true.
    assert_eq!(release["true"]["push"]["tags"], serde_json::json!(["v*"]));
    let assets = release_assets(&release);
    let targets: BTreeSet<&str> = assets.keys().map(String::as_str).collect();
    assert_eq!(
        targets,
        BTreeSet::from([
            "aarch64-apple-darwin",
            "aarch64-unknown-linux-musl",
            "x86_64-apple-darwin",
            "x86_64-pc-windows-msvc",
            "x86_64-unknown-linux-musl",
        ])
    );
    for (target, asset) in &assets {
        let ext = if target.contains("windows") {
            "zip"
        } else {
            "tar.gz"
        };
        assert_eq!(asset, &format!("golint-k8s-{target}.{ext}"));
    }
    // Every build makes a wheel too, and the release takes all the artifacts.
    let build = &release["jobs"]["build"]["steps"];
    assert_eq!(
        step(build, "name", "Build the wheel, and with it the binary")["uses"],
        "PyO3/maturin-action@v1"
    );
    let publish = script(step(
        &release["jobs"]["github-release"]["steps"],
        "name",
        "Create the release with every archive, checksum, wheel and VS Code package",
    ));
    assert!(publish.contains("gh release create"), "{publish}");
    // One VS Code package per platform, each from a build's own archive, before the release.
    let needs = &release["jobs"]["github-release"]["needs"];
    assert!(
        needs.as_array().unwrap().iter().any(|n| n == "vscode"),
        "{needs}"
    );
    let vsix = release["jobs"]["vscode"]["strategy"]["matrix"]["include"]
        .as_array()
        .unwrap();
    let mut platforms = BTreeSet::new();
    for v in vsix {
        let target = v["target"].as_str().unwrap();
        assert_eq!(
            v["asset"].as_str(),
            assets.get(target).map(String::as_str),
            "{v}"
        );
        platforms.insert(v["vsce-target"].as_str().unwrap());
    }
    assert_eq!(
        platforms,
        BTreeSet::from([
            "alpine-arm64",
            "alpine-x64",
            "darwin-arm64",
            "darwin-x64",
            "linux-arm64",
            "linux-x64",
            "win32-x64",
        ])
    );
    // The workflow's maturin is the one the tests build the wheel with.
    let pinned = std::fs::read_to_string(root().join("scripts/test-tools.sh")).unwrap();
    let pinned = pinned
        .lines()
        .find_map(|l| l.strip_prefix("readonly MATURIN_VERSION="))
        .expect("scripts/test-tools.sh pins maturin");
    assert_eq!(release["env"]["MATURIN_VERSION"], format!("v{pinned}"));

    let action = yaml(p, "action.yml");
    assert_eq!(action["runs"]["using"], "composite");
    let inputs = &action["inputs"];
    for (name, default) in [
        ("version", ""),
        ("paths", "."),
        ("format", "github"),
        ("args", ""),
        ("sarif", "false"),
        ("inspect-images", "true"),
        ("fail-on", "warning"),
        ("config", ""),
        ("working-directory", "."),
    ] {
        assert_eq!(inputs[name]["default"], default, "input {name}");
    }
    // The image cache is kept between runs when images are read.
    let cache = step(&action["runs"]["steps"], "name", "Restore the image cache");
    assert!(cache["uses"]
        .as_str()
        .unwrap()
        .starts_with("actions/cache@"));
    assert_eq!(cache["if"], "inputs.inspect-images == 'true'");
    assert_eq!(
        cache["with"]["path"],
        "${{ runner.temp }}/golint-k8s-images"
    );
    let steps = &action["runs"]["steps"];
    for s in steps.as_array().unwrap() {
        if s.get("run").is_some() {
            assert_eq!(s["shell"], "bash", "{s}");
            // Values reach the scripts through env only, so that they can be run here.
            assert!(!script(s).contains("${{"), "{s}");
        }
    }
    let upload = step(steps, "name", "Upload the SARIF log to code scanning");
    assert!(upload["uses"]
        .as_str()
        .unwrap()
        .starts_with("github/codeql-action/upload-sarif@"));
    // Skipped on a pull request from a fork, whose token cannot write security events.
    let condition = upload["if"].as_str().unwrap();
    assert!(
        condition.starts_with("inputs.sarif == 'true' && "),
        "{condition}"
    );
    assert!(
        condition.contains("github.event.pull_request.head.repo.full_name == github.repository"),
        "{condition}"
    );
    for s in steps.as_array().unwrap() {
        if s.get("run").is_some() && s["id"] != "install" {
            assert_eq!(
                s["working-directory"], "${{ inputs.working-directory }}",
                "{s}"
            );
        }
    }

    // Which archive the install step asks for on each runner: exactly the release's five.
    let install = script(step(steps, "id", "install"));
    let expected = [
        ("Linux", "X64", "x86_64-unknown-linux-musl"),
        ("Linux", "ARM64", "aarch64-unknown-linux-musl"),
        ("macOS", "X64", "x86_64-apple-darwin"),
        ("macOS", "ARM64", "aarch64-apple-darwin"),
        ("Windows", "X64", "x86_64-pc-windows-msvc"),
    ];
    let empty = tempfile::tempdir().unwrap();
    for (os, arch, target) in expected {
        let run = ActionRun::new(empty.path());
        let out = run.install(install, &[("RUNNER_OS", os), ("RUNNER_ARCH", arch)]);
        // Nothing is served, so the download fails, after asking for the right file.
        assert!(!out.status.success(), "{}", text(&out));
        let urls = run.requested();
        assert_eq!(
            urls,
            [format!(
                "https://github.com/golint-k8s/golint-k8s/releases/download/v{VERSION}/{}",
                assets[target]
            )],
            "{os}/{arch}"
        );
    }
    let run = ActionRun::new(empty.path());
    let out = run.install(install, &[("RUNNER_OS", "Linux"), ("RUNNER_ARCH", "ARM")]);
    assert!(!out.status.success());
    assert!(
        text(&out).contains("no release binary for Linux/ARM"),
        "{}",
        text(&out)
    );
    assert!(run.requested().is_empty());
}

/// One run of the action's steps on this machine: a runner's temporary directory and files, a
/// `curl` that serves the files of a local directory as the release's downloads, and a
/// `cygpath` that leaves paths as they are.
struct ActionRun {
    dir: tempfile::TempDir,
    served: PathBuf,
}

impl ActionRun {
    fn new(served: &Path) -> ActionRun {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::create_dir_all(dir.path().join("runner-temp")).unwrap();
        let curl = bin.join("curl");
        std::fs::write(
            &curl,
            r#"#!/usr/bin/env bash
# Serves "$FAKE_RELEASE/<last part of the URL>" and logs each URL asked for.
out= url=
while [[ $# -gt 0 ]]; do
  case $1 in
    --output | -o | --retry) [[ $1 == --retry ]] || out=$2; shift 2 ;;
    -*) shift ;;
    *) url=$1; shift ;;
  esac
done
echo "$url" >>"$FAKE_CURL_LOG"
src=$FAKE_RELEASE/${url##*/}
if [[ ! -f $src ]]; then echo "curl: (22) The requested URL returned error: 404" >&2; exit 22; fi
cp "$src" "$out"
"#,
        )
        .unwrap();
        // Git Bash's path converter, which the install step calls on Windows.
        let cygpath = bin.join("cygpath");
        std::fs::write(&cygpath, "#!/usr/bin/env bash\nprintf '%s\\n' \"${!#}\"\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        for file in [&curl, &cygpath] {
            std::fs::set_permissions(file, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        ActionRun {
            dir,
            served: served.to_path_buf(),
        }
    }

    fn file(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// A step's script run as GitHub runs `shell: bash`, with the runner's variables.
    fn step(&self, script: &str, env: &[(&str, &str)]) -> Output {
        let file = self.file("step.sh");
        std::fs::write(&file, script).unwrap();
        let path = format!(
            "{}:{}",
            self.file("bin").display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let mut cmd = Command::new("bash");
        cmd.args(["--noprofile", "--norc", "-eo", "pipefail"])
            .arg(&file)
            .current_dir(root())
            .env("PATH", path)
            .env("RUNNER_TEMP", self.file("runner-temp"))
            .env("GITHUB_PATH", self.file("github-path"))
            .env("GITHUB_OUTPUT", self.file("github-output"))
            .env("GITHUB_ACTION_PATH", root())
            .env("FAKE_RELEASE", &self.served)
            .env("FAKE_CURL_LOG", self.file("curl.log"))
            .env("INPUT_VERSION", "")
            .env("ACTION_REF", format!("v{VERSION}"))
            .env("ACTION_REPOSITORY", "golint-k8s/golint-k8s")
            .env("RUNNER_OS", "Linux")
            .env("RUNNER_ARCH", "X64");
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.output().expect("run bash")
    }

    fn install(&self, script: &str, env: &[(&str, &str)]) -> Output {
        self.step(script, env)
    }

    fn requested(&self) -> Vec<String> {
        std::fs::read_to_string(self.file("curl.log"))
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }

    /// What the steps wrote to `$GITHUB_OUTPUT`.
    fn outputs(&self) -> BTreeMap<String, String> {
        std::fs::read_to_string(self.file("github-output"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }
}

/// The release workflow's archive step packs this build as the Linux x86-64 release would be
/// packed; the action's steps then download it (from a local directory), check its checksum,
/// run it, and refuse it once it no longer matches its checksum.
#[test]
fn the_action_installs_and_runs_what_the_release_archives() {
    let Some(p) = packaging() else { return };
    let release = yaml(p, ".github/workflows/release.yml");
    let action = yaml(p, "action.yml");
    let target = "x86_64-unknown-linux-musl";
    let asset = release_assets(&release)[target].clone();

    // The archive step, in a workspace laid out as after the build step.
    let ws = tempfile::tempdir().unwrap();
    let built = ws.path().join("target").join(target).join("release");
    std::fs::create_dir_all(&built).unwrap();
    std::fs::copy(BIN, built.join("golint-k8s")).unwrap();
    for file in ["LICENSE", "README.md", "CHANGELOG.md"] {
        std::fs::copy(root().join(file), ws.path().join(file)).unwrap();
    }
    let archive = script(step(
        &release["jobs"]["build"]["steps"],
        "name",
        "Archive the binary with its checksum",
    ));
    let out = Command::new("bash")
        .args(["--noprofile", "--norc", "-eo", "pipefail", "-c", archive])
        .current_dir(ws.path())
        .env("TARGET", target)
        .env("ASSET", &asset)
        .output()
        .unwrap();
    assert!(out.status.success(), "the archive step: {}", text(&out));
    let served = ws.path().join("release");
    assert!(served.join(&asset).is_file());
    let sum = std::fs::read_to_string(served.join(format!("{asset}.sha256"))).unwrap();
    assert!(sum.ends_with(&format!("  {asset}\n")), "{sum}");

    let steps = &action["runs"]["steps"];
    let install = script(step(steps, "id", "install"));
    let sarif = script(step(steps, "id", "sarif"));
    let lint = script(step(steps, "name", "Lint"));
    let base = "https://github.com/golint-k8s/golint-k8s/releases";
    let tagged = format!("{base}/download/v{VERSION}/{asset}");
    let latest = format!("{base}/latest/download/{asset}");

    // Where the version comes from: the input (with or without its v), the action's ref, the
    // directory the runner checked the action out to; at a branch or commit, the version of the
    // action's own Cargo.toml; the latest release only when none of these says.
    let action_path = format!("/runner/_actions/golint-k8s/golint-k8s/v{VERSION}");
    let no_manifest = tempfile::tempdir().unwrap();
    let no_manifest = no_manifest.path().to_string_lossy().into_owned();
    let bare = VERSION.to_string();
    for (env, url) in [
        (vec![], &tagged),
        (vec![("INPUT_VERSION", bare.as_str())], &tagged),
        (vec![("ACTION_REF", "main")], &tagged),
        (vec![("ACTION_REF", "3f2c9e1")], &tagged),
        (
            vec![
                ("ACTION_REF", ""),
                ("GITHUB_ACTION_PATH", action_path.as_str()),
            ],
            &tagged,
        ),
        (vec![("ACTION_REF", "")], &tagged),
        (
            vec![
                ("ACTION_REF", "main"),
                ("GITHUB_ACTION_PATH", no_manifest.as_str()),
            ],
            &latest,
        ),
    ] {
        let run = ActionRun::new(&served);
        let out = run.install(install, &env);
        assert!(out.status.success(), "{env:?}: {}", text(&out));
        assert_eq!(
            run.requested(),
            [url.clone(), format!("{url}.sha256")],
            "{env:?}"
        );
    }

    let run = ActionRun::new(&served);
    let out = run.install(install, &[]);
    assert!(out.status.success(), "{}", text(&out));
    let outputs = run.outputs();
    assert_eq!(outputs["version"], VERSION);
    let exe = outputs["exe"].clone();
    let path_dir = std::fs::read_to_string(run.file("github-path")).unwrap();
    assert_eq!(
        Path::new(path_dir.trim()).join("golint-k8s"),
        Path::new(&exe)
    );

    // The linting step with the default format: annotations, and exit 1 on the example.
    let inputs = [
        ("GOLINT_K8S", exe.as_str()),
        ("INPUT_PATHS", "examples/deployment.yaml"),
        ("INPUT_ARGS", "--node-cpus 8 --ignore GK102"),
        ("INPUT_FORMAT", "github"),
        ("INPUT_FAIL_ON", "warning"),
    ];
    let out = run.step(lint, &inputs);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let annotations = String::from_utf8(out.stdout).unwrap();
    assert!(
        annotations.lines().all(|l| l.starts_with("::error ")
            || l.starts_with("::warning ")
            || l.starts_with("::notice ")),
        "{annotations}"
    );
    assert!(
        annotations.contains("file=examples/deployment.yaml"),
        "{annotations}"
    );
    assert!(
        annotations.contains("GK201") && !annotations.contains("GK102"),
        "{annotations}"
    );

    // `fail-on: error` lets the warnings pass; the errors of the example still fail it.
    let mut only_errors = inputs.to_vec();
    only_errors[4] = ("INPUT_FAIL_ON", "error");
    only_errors[2] = ("INPUT_ARGS", "--node-cpus 8 --select GK2");
    let out = run.step(lint, &only_errors);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    // A `config` input replaces the config found beside the files.
    let config = run.file("off.yaml");
    std::fs::write(&config, "rules: {GK201: off, GK203: off}\n").unwrap();
    let config_text = config.to_string_lossy().into_owned();
    let mut configured = inputs.to_vec();
    configured[2] = ("INPUT_ARGS", "--select GK2");
    configured.push(("INPUT_CONFIG", &config_text));
    let out = run.step(lint, &configured);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));

    // The report step counts the findings for the outputs and writes the job summary.
    let report = script(step(steps, "id", "report"));
    let summary = run.file("step-summary.md");
    let report_file = run.file("report.json");
    let summary_text = summary.to_string_lossy().into_owned();
    let report_text = report_file.to_string_lossy().into_owned();
    let mut env = inputs.to_vec();
    env.push(("GITHUB_STEP_SUMMARY", &summary_text));
    env.push(("REPORT_FILE", &report_text));
    let out = run.step(report, &env);
    assert!(out.status.success(), "{}", text(&out));
    let report_json: Value = serde_json::from_slice(&std::fs::read(&report_file).unwrap()).unwrap();
    let total = report_json["summary"]["findings"].as_u64().unwrap();
    assert!(total > 0);
    assert_eq!(run.outputs()["findings"], total.to_string());
    let summary = std::fs::read_to_string(&summary).unwrap();
    let errors = report_json["summary"]["by_severity"]["error"]
        .as_u64()
        .unwrap();
    assert!(
        summary.contains(&format!("| 1 | {total} | {errors} |")),
        "{summary}"
    );

    // With inspect-images (the input's default) the lint reads the images, here from the cache
    // alone (`--offline`), which the step names through GOLINT_K8S_CACHE.
    let cache_dir = tempfile::tempdir().unwrap();
    let cache_path = cache_dir.path().to_string_lossy().into_owned();
    let inspecting = [
        ("GOLINT_K8S", exe.as_str()),
        ("INPUT_PATHS", "examples/deployment.yaml"),
        ("INPUT_ARGS", "--offline --node-cpus 8"),
        ("INPUT_FORMAT", "github"),
        ("INPUT_FAIL_ON", "warning"),
        ("INPUT_INSPECT_IMAGES", "true"),
        ("GOLINT_K8S_CACHE", cache_path.as_str()),
    ];
    let out = run.step(lint, &inspecting);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains("not in the cache"),
        "the images were not looked up: {}",
        text(&out)
    );

    // The SARIF step writes its log and never fails on findings.
    let log = run.file("out.sarif");
    let mut env = inputs.to_vec();
    let log_text = log.to_string_lossy().into_owned();
    env.push(("SARIF_FILE", &log_text));
    let out = run.step(sarif, &env);
    assert!(out.status.success(), "{}", text(&out));
    let sarif_log: Value = serde_json::from_slice(&std::fs::read(&log).unwrap()).unwrap();
    assert_eq!(sarif_log["version"], "2.1.0");
    assert!(!sarif_log["runs"][0]["results"]
        .as_array()
        .unwrap()
        .is_empty());
    assert_eq!(run.outputs()["file"], log_text);

    // An archive that does not match its published checksum is refused before it is unpacked.
    let mut bytes = std::fs::read(served.join(&asset)).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    std::fs::write(served.join(&asset), bytes).unwrap();
    let run = ActionRun::new(&served);
    let out = run.install(install, &[]);
    assert!(!out.status.success());
    assert!(
        text(&out).contains("does not match its published SHA-256"),
        "{}",
        text(&out)
    );
    assert!(run.outputs().is_empty());
}

/// Every version a user copies from the docs is this crate's: the wheel pin of the local hook,
/// the `rev` of the remote hook and the action's ref.
#[test]
fn documented_versions_are_this_version() {
    let mut files = vec![root().join("README.md"), root().join("action.yml")];
    for entry in std::fs::read_dir(root().join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            files.push(path);
        }
    }
    let mut seen = 0;
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for marker in ["golint-k8s==", "rev: v", "golint-k8s/golint-k8s@v"] {
            for (at, _) in text.match_indices(marker) {
                let rest = &text[at + marker.len()..];
                let end = rest
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '.' || c == '-'))
                    .unwrap_or(rest.len());
                assert_eq!(
                    &rest[..end],
                    VERSION,
                    "{}: {marker}{}",
                    file.display(),
                    &rest[..end]
                );
                seen += 1;
            }
        }
    }
    assert!(seen >= 4, "only {seen} pinned versions found in the docs");
    // The wheel takes its version from Cargo.toml.
    let pyproject = std::fs::read_to_string(root().join("pyproject.toml")).unwrap();
    assert!(pyproject.contains("dynamic = [\"version\"]"), "{pyproject}");
    assert!(pyproject.contains("bindings = \"bin\""), "{pyproject}");
}
