//! The pre-commit hook of `.pre-commit-hooks.yaml`, run by the real pre-commit in a throwaway
//! repository the way a user's repository runs it: pre-commit builds this crate with
//! `cargo install` (`language: rust`) and passes the manifests to `golint-k8s lint`.
//!
//! The release build takes minutes on a small machine, so cargo's target directory is
//! `target/release-build`, shared with the wheel's build (tests/heavy/packaging.rs) and built with
//! the same lighter profile (`common::release_build_env`), and pre-commit's store is kept in
//! `target/test-tools/pre-commit-home`: the hook is built once for every test of a run, and on a
//! rerun with unchanged sources pre-commit finds it already installed.

use crate::tools;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The tests share one cargo target directory (with the wheel's build too) and two cores: run
/// them one at a time, so that the timing is not taken while another test builds.
fn serial() -> std::sync::MutexGuard<'static, ()> {
    crate::common::release_build_lock()
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .current_dir(dir)
        // A fixed identity and dates: the snapshot's commit id then depends on its files only.
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
        .env("GIT_AUTHOR_DATE", "2000-01-01T00:00:00Z")
        .env("GIT_COMMITTER_DATE", "2000-01-01T00:00:00Z")
        .output()
        .expect("run git");
    assert!(
        out.status.success(),
        "git {args:?} in {}: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// This checkout as pre-commit would fetch it once committed: a repository holding the working
/// tree's files, tracked and untracked (but not ignored), in one commit.
///
/// `pre-commit try-repo` on the checkout itself would carry only tracked changes: a file not yet
/// added to git (a new module, or `.pre-commit-hooks.yaml` itself) would be missing from what it
/// builds. The snapshot keeps a fixed path, and for unchanged files the same commit id, so that
/// pre-commit's store recognises the hook it installed on an earlier run.
struct Snapshot {
    path: PathBuf,
    rev: String,
}

fn snapshot() -> &'static Snapshot {
    static SNAPSHOT: OnceLock<Snapshot> = OnceLock::new();
    SNAPSHOT.get_or_init(|| {
        let root = root();
        let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join("precommit-snapshot");
        if path.exists() {
            std::fs::remove_dir_all(&path).unwrap();
        }
        std::fs::create_dir_all(&path).unwrap();
        let files = git(
            &root,
            &[
                "ls-files",
                "-z",
                "--cached",
                "--others",
                "--exclude-standard",
            ],
        );
        for rel in files.split('\0').filter(|f| !f.is_empty()) {
            let from = root.join(rel);
            // Files deleted in the working tree are still listed as cached.
            if !from.is_file() {
                continue;
            }
            let to = path.join(rel);
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            std::fs::copy(&from, &to).unwrap();
        }
        assert!(
            path.join(".pre-commit-hooks.yaml").is_file(),
            "the snapshot has no .pre-commit-hooks.yaml"
        );
        git(&path, &["init", "--quiet"]);
        git(&path, &["add", "--all"]);
        git(
            &path,
            &["commit", "--quiet", "--no-verify", "-m", "snapshot"],
        );
        let rev = git(&path, &["rev-parse", "HEAD"]).trim().to_string();
        Snapshot { path, rev }
    })
}

fn pre_commit(tools: &tools::Tools, repo: &Path, args: &[&OsStr]) -> Output {
    let root = root();
    let home = root
        .join("target")
        .join("test-tools")
        .join("pre-commit-home");
    crate::common::release_build_env(&mut Command::new(&tools.pre_commit))
        .current_dir(repo)
        .args(args)
        .env("PRE_COMMIT_HOME", home)
        .output()
        .expect("run pre-commit")
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// A user's repository, committed, with the given files.
fn user_repo<N: AsRef<Path>>(files: &[(N, String)]) -> tempfile::TempDir {
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

/// A Go Deployment (its annotation says so); `fixed` gives it a GOMEMLIMIT and a memory request
/// equal to the limit.
fn deployment(name: &str, memory_mib: u64, fixed: bool) -> String {
    let env = if fixed {
        format!(
            "          env:\n            - name: GOMEMLIMIT\n              value: \"{}MiB\"\n",
            memory_mib * 9 / 10
        )
    } else {
        String::new()
    };
    let requests = if fixed {
        format!("{{cpu: 100m, memory: {memory_mib}Mi}}")
    } else {
        "{cpu: 100m}".to_string()
    };
    format!(
        "apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
spec:
  replicas: 2
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

/// A `.pre-commit-config.yaml` that takes one hook from the snapshot at its revision.
fn config_naming_snapshot(hook: &str) -> String {
    let snapshot = snapshot();
    format!(
        "repos:\n  - repo: {}\n    rev: {}\n    hooks:\n      - id: {hook}\n",
        serde_json::to_string(&snapshot.path.to_string_lossy()).unwrap(),
        snapshot.rev
    )
}

fn run_lint_hook(tools: &tools::Tools, repo: &Path) -> Output {
    run_hook(tools, repo, "golint-k8s")
}

/// Run one hook of the snapshot on every file of `repo`, as a user's `.pre-commit-config.yaml`
/// naming this repository and revision would.
///
/// The configuration is passed with `--config` from outside the user's repository, so the hook
/// sees only the repository's own files. Not `pre-commit try-repo`: it installs the hook into a
/// new temporary store on every call, a release build of the crate each time, where a
/// configuration shares pre-commit's store and the build is done once.
fn run_hook(tools: &tools::Tools, repo: &Path, hook: &str) -> Output {
    run_hook_on(tools, repo, hook, &[OsStr::new("--all-files")])
}

/// Run one hook of the snapshot as `run_hook` does, on the files `which` selects (`--all-files`,
/// or nothing: the staged files, as on a commit).
fn run_hook_on(tools: &tools::Tools, repo: &Path, hook: &str, which: &[&OsStr]) -> Output {
    let config = tempfile::Builder::new()
        .prefix("pre-commit-config-")
        .suffix(".yaml")
        .tempfile_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap();
    std::fs::write(config.path(), config_naming_snapshot(hook)).unwrap();
    pre_commit(
        tools,
        repo,
        &[
            &[OsStr::new("run"), OsStr::new(hook)],
            which,
            &[
                OsStr::new("--color=never"),
                OsStr::new("--config"),
                config.path().as_os_str(),
            ],
        ]
        .concat(),
    )
}

#[test]
fn the_hook_manifest_is_valid() {
    let Some(tools) = tools::ensure() else { return };
    let out = pre_commit(
        &tools,
        &root(),
        &[
            OsStr::new("validate-manifest"),
            OsStr::new(".pre-commit-hooks.yaml"),
        ],
    );
    assert!(out.status.success(), "{}", text(&out));
}

#[test]
fn the_hook_fails_on_a_missing_gomemlimit_and_passes_once_fixed() {
    let Some(tools) = tools::ensure() else { return };
    let _serial = serial();
    let repo = user_repo(&[
        ("deploy/api.yaml", deployment("api", 512, false)),
        ("deploy/web.yaml", deployment("web", 1024, true)),
        // Not a manifest, and not YAML: the hook must not be given it.
        ("README.md", "# Deploy\n\nkey: [not yaml\n".to_string()),
    ]);

    let out = run_lint_hook(&tools, repo.path());
    let log = text(&out);
    // 1 is a failed hook; pre-commit's own errors (a failed build among them) exit 3.
    assert_eq!(out.status.code(), Some(1), "{log}");
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
    let out = run_lint_hook(&tools, repo.path());
    let log = text(&out);
    assert_eq!(out.status.code(), Some(0), "{log}");
    assert_hook_passed(&log);
}

/// A commit that stages only a Deployment gets the answer `lint .` gives: its memory limit comes
/// from a LimitRange in another file of the repository, which pre-commit does not pass to the
/// hook, so GK101 fires (and GK401 does not, the LimitRange giving requests too).
#[test]
fn a_staged_file_sees_the_limit_range_elsewhere_in_the_repository() {
    let Some(tools) = tools::ensure() else { return };
    let _serial = serial();
    let api = |replicas: u32| {
        format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: api, namespace: shop}}\nspec:\n  replicas: {replicas}\n  template:\n    metadata:\n      annotations: {{golint-k8s.io/runtime: go}}\n    spec:\n      containers:\n        - name: api\n          image: ghcr.io/acme/api:1.0\n"
        )
    };
    let limits = "apiVersion: v1\nkind: LimitRange\nmetadata: {name: defaults, namespace: shop}\nspec:\n  limits:\n    - type: Container\n      default: {memory: 1Gi}\n      defaultRequest: {memory: 1Gi, cpu: 250m}\n";
    let repo = user_repo(&[
        ("deploy/api.yaml", api(2)),
        ("platform/limits.yaml", limits.to_string()),
    ]);
    std::fs::write(repo.path().join("deploy/api.yaml"), api(3)).unwrap();
    git(repo.path(), &["add", "deploy/api.yaml"]);
    let out = run_hook_on(&tools, repo.path(), "golint-k8s", &[]);
    let log = text(&out);
    assert_eq!(out.status.code(), Some(1), "{log}");
    assert!(log.contains("GK101"), "no GK101 in:\n{log}");
    assert!(
        log.contains("platform/limits.yaml"),
        "the LimitRange is not named:\n{log}"
    );
    assert!(
        !log.contains("GK401"),
        "the LimitRange's requests were not seen:\n{log}"
    );
}

/// The fix hook rewrites the bad manifest (pre-commit fails a hook that modifies files, so the
/// user reviews the change), and passes once the change is staged.
#[test]
fn the_fix_hook_rewrites_the_manifest_then_passes() {
    let Some(tools) = tools::ensure() else { return };
    let _serial = serial();
    let repo = user_repo(&[
        ("deploy/api.yaml", deployment("api", 512, false)),
        ("deploy/web.yaml", deployment("web", 1024, true)),
    ]);
    let web_before = std::fs::read(repo.path().join("deploy/web.yaml")).unwrap();

    let out = run_hook(&tools, repo.path(), "golint-k8s-fix");
    let log = text(&out);
    assert_eq!(out.status.code(), Some(1), "{log}");
    assert!(
        log.contains("files were modified by this hook"),
        "pre-commit did not see the rewrite:\n{log}"
    );
    let api = std::fs::read_to_string(repo.path().join("deploy/api.yaml")).unwrap();
    assert!(
        api.contains("- name: GOMEMLIMIT\n              value: \"460MiB\"\n"),
        "GOMEMLIMIT was not added as expected:\n{api}"
    );
    assert_eq!(
        std::fs::read(repo.path().join("deploy/web.yaml")).unwrap(),
        web_before,
        "the clean manifest was touched"
    );

    git(repo.path(), &["add", "--all"]);
    let out = run_hook(&tools, repo.path(), "golint-k8s-fix");
    let log = text(&out);
    assert_eq!(out.status.code(), Some(0), "{log}");
    assert!(
        log.lines()
            .any(|l| l.starts_with("golint-k8s (fix)") && l.ends_with("Passed")),
        "the fix hook did not run and pass:\n{log}"
    );
}

/// The hook's run time on a repository of 100 manifests once pre-commit has built it: what a user
/// waits for on each commit that touches every manifest.
#[test]
fn time_the_hook_on_100_manifests() {
    let Some(tools) = tools::ensure() else { return };
    let _serial = serial();
    let mut files = Vec::new();
    for i in 0..100u64 {
        let name = format!("svc{i:03}");
        let memory = [256, 512, 1024, 2048][i as usize % 4];
        // Every tenth manifest is JSON, which the hook takes too.
        if i % 10 == 9 {
            files.push((
                format!("deploy/{name}.json"),
                deployment_json(&name, memory),
            ));
        } else {
            files.push((
                format!("deploy/{name}.yaml"),
                deployment(&name, memory, true),
            ));
        }
    }
    files.push((
        ".pre-commit-config.yaml".to_string(),
        config_naming_snapshot("golint-k8s"),
    ));
    let repo = user_repo(&files);

    let run = || {
        let start = Instant::now();
        let out = pre_commit(
            &tools,
            repo.path(),
            &[
                OsStr::new("run"),
                OsStr::new("--all-files"),
                OsStr::new("--verbose"),
                OsStr::new("--color=never"),
            ],
        );
        let took = start.elapsed();
        let log = text(&out);
        assert_eq!(out.status.code(), Some(0), "{log}");
        assert_hook_passed(&log);
        // --verbose shows the linter's summary ("... in 101 files") even on success. The hook
        // is `require_serial`, so one run of the linter gets every YAML and JSON file: the 100
        // manifests, JSON ones included, and the config itself (without it, pre-commit splits
        // them into a batch per core, and a LimitRange in one batch misses the others).
        let summaries: Vec<u64> = log.lines().filter_map(files_in_summary).collect();
        assert_eq!(
            summaries,
            [101],
            "the hook did not lint every manifest in one run:\n{log}"
        );
        // pre-commit's own measure of the hook alone, without its start-up.
        let hook = log
            .lines()
            .find_map(|l| l.trim().strip_prefix("- duration: "))
            .and_then(|d| d.trim_end_matches('s').parse::<f64>().ok())
            .expect("pre-commit --verbose printed no duration");
        (took, hook)
    };
    // The first run installs the hook unless an earlier run left it in pre-commit's store.
    let (first, _) = run();
    let mut timed: Vec<(Duration, f64)> = (0..3).map(|_| run()).collect();
    timed.sort_by_key(|t| t.0);
    let (wall, hook) = timed[1];
    println!(
        "pre-commit hook on 100 manifests, build cached: {:.2}s wall-clock (median of 3; \
         pre-commit's own hook duration {hook:.2}s); the first run took {:.1}s",
        wall.as_secs_f64(),
        first.as_secs_f64()
    );
}

/// The file count in a summary line of the linter, such as "... in 51 files, 51 documents".
fn files_in_summary(line: &str) -> Option<u64> {
    let (_, rest) = line.rsplit_once(" in ")?;
    let (n, unit) = rest.split_once(' ')?;
    unit.starts_with("file").then(|| n.parse().ok())?
}

/// The fixed Deployment as JSON, the form `kubectl get -o json` gives.
fn deployment_json(name: &str, memory_mib: u64) -> String {
    let memory = format!("{memory_mib}Mi");
    let doc = serde_json::json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{
                    "name": name,
                    "image": format!("example/{name}:1.0"),
                    "env": [{"name": "GOMEMLIMIT", "value": format!("{}MiB", memory_mib * 9 / 10)}],
                    "resources": {
                        "requests": {"cpu": "100m", "memory": memory},
                        "limits": {"memory": memory},
                    },
                }]},
            },
        },
    });
    serde_json::to_string_pretty(&doc).unwrap()
}

/// pre-commit prints one status line per hook; ours must have run and passed.
fn assert_hook_passed(log: &str) {
    assert!(
        log.lines()
            .any(|l| l.starts_with("golint-k8s") && l.ends_with("Passed")),
        "the hook did not run and pass:\n{log}"
    );
}
