//! The command line as users drive it: inputs, formats, exit codes, and bad input.

use crate::common;

use assert_cmd::Command;
use serde_json::Value;

fn cmd() -> Command {
    Command::cargo_bin("golint-k8s").unwrap()
}

const BAD: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
spec:
  template:
    spec:
      containers:
        - name: api
          image: ghcr.io/acme/api:1.4.2
          resources:
            requests: {cpu: 250m, memory: 512Mi}
            limits:
              cpu: 250m
              memory: 512Mi
";

const GOOD: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
spec:
  template:
    spec:
      containers:
        - name: api
          image: ghcr.io/acme/api:1.4.2
          env:
            - name: GOMEMLIMIT
              value: \"460MiB\"
          resources:
            requests: {cpu: 250m, memory: 512Mi}
            limits:
              memory: 512Mi
";

#[test]
fn stdin_with_json_output_and_exit_code_1() {
    let out = cmd()
        .args([
            "lint",
            "-",
            "--format",
            "json",
            "--stdin-filename",
            "deploy/api.yaml",
        ])
        .write_stdin(BAD)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["version"], 1);
    assert_eq!(v["tool"]["name"], "golint-k8s");
    let f = &v["findings"];
    let gk101 = f
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["code"] == "GK101")
        .unwrap();
    assert_eq!(gk101["file"], "deploy/api.yaml");
    assert_eq!(
        (gk101["line"].as_u64(), gk101["column"].as_u64()),
        (Some(15), Some(23))
    );
    assert_eq!(
        (gk101["end_line"].as_u64(), gk101["end_column"].as_u64()),
        (Some(15), Some(28))
    );
    assert_eq!(gk101["object"]["kind"], "Deployment");
    assert_eq!(gk101["object"]["name"], "api");
    assert_eq!(gk101["container"], "api");
    assert_eq!(gk101["rule"], "memory-limit-without-gomemlimit");
    assert!(gk101["message"].as_str().unwrap().contains("512Mi"));
    // Nothing in this manifest shows the runtime: the Go finding is info, says why, and its
    // fix is unsafe (exit 1 comes from GK203, which judges any container).
    assert!(
        gk101["notes"][0]
            .as_str()
            .unwrap()
            .starts_with("unknown runtime: nothing shows that this container runs Go"),
        "{gk101}"
    );
    assert_eq!(gk101["severity"], "info", "{gk101}");
    assert_eq!(gk101["fix"]["applicability"], "unsafe", "{gk101}");
    assert_eq!(gk101["runtime"]["assumed"], true, "{gk101}");
    assert_eq!(gk101["runtime"]["language"], Value::Null, "{gk101}");
    let gk201 = f
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["code"] == "GK201")
        .unwrap();
    assert!(
        gk201["message"]
            .as_str()
            .unwrap()
            .contains("25 ms per 100 ms period"),
        "{gk201}"
    );
    assert_eq!(v["summary"]["files"], 1);
    assert_eq!(v["summary"]["containers"], 1);
}

#[test]
fn clean_input_exits_0() {
    cmd().args(["lint", "-"]).write_stdin(GOOD).assert().code(0);
}

#[test]
fn fail_on_and_select_and_ignore() {
    cmd()
        .args(["lint", "-", "--fail-on", "error"])
        .write_stdin(BAD)
        .assert()
        .code(0);
    let out = cmd()
        .args([
            "lint",
            "-",
            "--format",
            "concise",
            "--select",
            "GK2",
            "--ignore",
            "cpu-limit-throttling",
            "--assume-go",
        ])
        .write_stdin(BAD)
        .output()
        .unwrap();
    let s = String::from_utf8(out.stdout).unwrap();
    assert!(s.contains("GK201 cpu-limit-without-gomaxprocs"), "{s}");
    assert!(!s.contains("GK101") && !s.contains("GK203"), "{s}");
    assert!(s.starts_with("-:14:20: warning GK201"), "{s}");
    cmd()
        .args(["lint", "-", "--select", "GK999"])
        .write_stdin(BAD)
        .assert()
        .code(2);
}

#[test]
fn go_version_flag_silences_gk201() {
    let out = cmd()
        .args(["lint", "-", "--format", "concise", "--go-version", "1.25"])
        .write_stdin(BAD)
        .output()
        .unwrap();
    let s = String::from_utf8(out.stdout).unwrap();
    assert!(!s.contains("GK201"), "{s}");
}

#[test]
fn node_cpus_give_the_numbers() {
    let out = cmd()
        .args([
            "lint",
            "-",
            "--format",
            "concise",
            "--node-cpus",
            "8",
            "--select",
            "GK201",
        ])
        .write_stdin(BAD.replace("250m", "2"))
        .output()
        .unwrap();
    let s = String::from_utf8(out.stdout).unwrap();
    assert!(s.contains("with GOMAXPROCS = 8 (node CPUs) it can be spent in 25 ms and every goroutine then waits 75 ms"), "{s}");
}

#[test]
fn bad_files_are_findings_and_others_still_lint() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("a-bad.yaml"),
        "apiVersion: v1\nkind: ConfigMap\ndata: [1\nb: {\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("b-binary.yaml"),
        b"\x00\x01\x02apiVersion: v1\nkind: Pod",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("c-latin1.yaml"),
        b"kind: Pod\nname: caf\xe9\napiVersion: v1\n",
    )
    .unwrap();
    // Not a manifest, and not YAML either: skipped, and listed with the inputs not linted.
    std::fs::write(dir.path().join("e-notes.yaml"), "a: [1\nb: {\n").unwrap();
    std::fs::write(dir.path().join("d-deploy.yaml"), BAD).unwrap();
    std::fs::write(dir.path().join("notes.txt"), "not yaml").unwrap();
    let out = cmd()
        .args(["lint", "--format", "json"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let f = v["findings"].as_array().unwrap();
    let by = |file: &str| {
        f.iter()
            .filter(|x| x["file"].as_str().unwrap().ends_with(file))
            .collect::<Vec<_>>()
    };
    assert_eq!(by("a-bad.yaml")[0]["code"], "GK000");
    assert!(by("b-binary.yaml")[0]["message"]
        .as_str()
        .unwrap()
        .contains("binary file: NUL byte at byte offset 0"));
    let latin = by("c-latin1.yaml");
    assert!(
        latin[0]["message"]
            .as_str()
            .unwrap()
            .contains("invalid UTF-8 at byte offset 19"),
        "{latin:?}"
    );
    assert_eq!(latin[0]["line"], 2);
    assert!(by("d-deploy.yaml").iter().any(|x| x["code"] == "GK101"));
    assert!(by("e-notes.yaml").is_empty());
    let unread = v["errors"].as_array().unwrap();
    assert_eq!(unread.len(), 1, "{unread:?}");
    assert!(unread[0]["path"]
        .as_str()
        .unwrap()
        .ends_with("e-notes.yaml"));
    assert!(unread[0]["message"]
        .as_str()
        .unwrap()
        .starts_with("not linted: it names no apiVersion and kind"));
    assert_eq!(v["summary"]["files"], 5);
}

#[test]
fn missing_path_is_exit_2_but_the_rest_is_linted() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("d.yaml"), BAD).unwrap();
    let out = cmd()
        .args(["lint", "--format", "concise", "no/such/file.yaml"])
        .arg(dir.path().join("d.yaml"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("no/such/file.yaml: no such file or directory"));
    assert!(String::from_utf8_lossy(&out.stdout).contains("GK101"));
}

/// A walk that finds nothing to lint (a typo in a path, a directory of other files) says so, as
/// ruff says "No Python files found": a run of zero files must not pass in silence.
#[test]
fn a_walk_that_finds_no_manifest_warns() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("docs")).unwrap();
    std::fs::write(dir.path().join("docs/README.md"), "# Deploy\n").unwrap();
    for format in ["human", "json"] {
        let out = cmd()
            .current_dir(dir.path())
            .args(["lint", "--format", format, "docs"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("warning: no YAML or JSON files found under docs: nothing was linted"),
            "{format}: {err}"
        );
        // Nothing failed: the exit code stays the findings' (none).
        assert_eq!(out.status.code(), Some(0), "{format}: {err}");
    }
    // A walk that finds a manifest says nothing of the kind.
    std::fs::write(dir.path().join("docs/d.yaml"), BAD).unwrap();
    let out = cmd()
        .current_dir(dir.path())
        .args(["lint", "docs"])
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&out.stderr).contains("nothing was linted"));
}

#[test]
fn a_later_document_is_linted_after_a_broken_one() {
    let text = format!("a: [1\n---\n{BAD}");
    let out = cmd()
        .args(["lint", "-", "--format", "json"])
        .write_stdin(text)
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let f = v["findings"].as_array().unwrap();
    assert!(f.iter().any(|x| x["code"] == "GK000" && x["document"] == 0));
    assert!(f.iter().any(|x| x["code"] == "GK101" && x["document"] == 1));
}

/// A chart met in a walk is rendered with `helm template`; without `helm` on PATH it is one
/// entry among the inputs not linted, in every format, and the findings are incomplete (exit 2):
/// a repository of charts never passes on nothing. Its templates named one by one (as pre-commit
/// names them) are the same chart, the same single entry.
#[test]
fn a_chart_without_helm_is_one_input_not_linted() {
    let dir = tempfile::tempdir().unwrap();
    let chart = dir.path().join("mychart");
    std::fs::create_dir_all(chart.join("templates")).unwrap();
    std::fs::write(
        chart.join("Chart.yaml"),
        "apiVersion: v2\nname: mychart\nversion: 0.1.0\n",
    )
    .unwrap();
    std::fs::write(chart.join("values.yaml"), "resources: {}\n").unwrap();
    for i in 0..5 {
        std::fs::write(
            chart.join("templates").join(format!("t{i}.yaml")),
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {{ .Release.Name }}\n  labels: {{- include \"x\" . | nindent 4 }}\n",
        )
        .unwrap();
    }
    let without_helm = tempfile::tempdir().unwrap();
    let out = cmd()
        .env("PATH", without_helm.path())
        .args(["lint", "--format", "json"])
        .arg(dir.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.matches("a Helm chart, not linted").count(), 1, "{err}");
    assert!(err.contains("no `helm` was found on PATH"), "{err}");
    assert_eq!(out.status.code(), Some(2), "{err}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["errors"].as_array().unwrap().len(), 1, "{v:#}");
    assert!(v["errors"][0]["path"]
        .as_str()
        .unwrap()
        .ends_with("mychart"));
    // SARIF names it where code scanning shows a tool's notes.
    let out = cmd()
        .env("PATH", without_helm.path())
        .args(["lint", "--format", "sarif"])
        .arg(dir.path())
        .output()
        .unwrap();
    let log: Value = serde_json::from_slice(&out.stdout).unwrap();
    let notes = &log["runs"][0]["invocations"][0]["toolExecutionNotifications"];
    assert_eq!(notes.as_array().map(Vec::len), Some(1), "{log:#}");
    assert!(notes[0]["message"]["text"]
        .as_str()
        .unwrap()
        .starts_with("a Helm chart, not linted"));
    // Excluded, as its Chart.yaml would be, it is neither rendered nor listed.
    let out = cmd()
        .env("PATH", without_helm.path())
        .args(["lint", "--extend-exclude", "**/mychart/**"])
        .arg(dir.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("Helm chart"), "{err}");
    assert_eq!(out.status.code(), Some(0), "{err}");
    // Named one by one, the templates are the same chart: one entry, no GK000.
    let out = cmd()
        .env("PATH", without_helm.path())
        .arg("lint")
        .args((0..5).map(|i| chart.join("templates").join(format!("t{i}.yaml"))))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.matches("a Helm chart, not linted").count(), 1, "{err}");
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(!String::from_utf8_lossy(&out.stdout).contains("GK000"));
}

#[test]
fn config_errors_point_at_the_line() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join(".golint-k8s.yaml"),
        "node-cpus: 8\ncpu-limit: forbid\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("d.yaml"), BAD).unwrap();
    let out = cmd().arg("lint").arg(dir.path()).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(".golint-k8s.yaml:2:1: unknown key \"cpu-limit\""),
        "{err}"
    );
}

#[test]
fn config_file_is_found_and_applied() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("deploy")).unwrap();
    std::fs::write(
        dir.path().join(".golint-k8s.yaml"),
        "go-version: \"1.25\"\nrules: {GK401: off, GK203: error}\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("deploy/d.yaml"), BAD).unwrap();
    let out = cmd()
        .args(["lint", "--format", "concise"])
        .arg(dir.path())
        .output()
        .unwrap();
    let s = String::from_utf8(out.stdout).unwrap();
    assert!(!s.contains("GK201"), "{s}");
    assert!(s.contains("error GK203"), "{s}");
}

#[test]
fn config_above_the_repository_root_is_not_applied() {
    // A config in a shared workspace above a checkout must not turn the checkout's rules off.
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(repo.join("deploy")).unwrap();
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    std::fs::write(
        dir.path().join(".golint-k8s.yaml"),
        "rules: {GK101: off, GK203: off}\n",
    )
    .unwrap();
    std::fs::write(repo.join("deploy/d.yaml"), BAD).unwrap();
    let lint = |args: &[&str]| {
        let out = cmd()
            .current_dir(&repo)
            .arg("lint")
            .args(args)
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap()
    };
    let s = lint(&["--format", "concise", "deploy"]);
    assert!(s.contains("GK101") && s.contains("GK203"), "{s}");
    let s = lint(&["--show-settings", "deploy"]);
    assert!(s.contains("config: none (the built-in defaults)"), "{s}");
    assert!(s.contains("up to the repository root"), "{s}");

    // The repository's own config, at its root, governs files in subdirectories.
    std::fs::write(repo.join(".golint-k8s.yml"), "rules: {GK203: off}\n").unwrap();
    let s = lint(&["--format", "concise", "deploy"]);
    assert!(s.contains("GK101") && !s.contains("GK203"), "{s}");
    let s = lint(&["--show-settings", "deploy/d.yaml"]);
    assert!(
        s.contains("config: ") && s.contains(".golint-k8s.yml"),
        "{s}"
    );
    assert!(s.contains("rules: {GK203: off}"), "{s}");

    // Outside any repository the search goes on upwards, and --show-settings names the file.
    std::fs::remove_dir(repo.join(".git")).unwrap();
    std::fs::remove_file(repo.join(".golint-k8s.yml")).unwrap();
    let s = lint(&["--show-settings", "deploy"]);
    assert!(s.contains("not in a git repository"), "{s}");
    let above = std::fs::canonicalize(dir.path())
        .unwrap()
        .join(".golint-k8s.yaml");
    assert!(s.contains(&format!("config: {}\n", above.display())), "{s}");
}

/// A repository with a root config and a nested one in `deploy/`, both holding [`BAD`].
fn nested_configs(root: &str, nested: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".git")).unwrap();
    std::fs::create_dir_all(dir.path().join("deploy")).unwrap();
    std::fs::write(dir.path().join(".golint-k8s.yaml"), root).unwrap();
    std::fs::write(dir.path().join("deploy/.golint-k8s.yaml"), nested).unwrap();
    std::fs::write(dir.path().join("deploy/d.yaml"), BAD).unwrap();
    dir
}

#[test]
fn nested_config_that_extends_the_root_inherits_all_but_the_key_it_sets() {
    let root = "rules: {GK101: off, GK203: error}\nnode-cpus: 4\nfail-on: error\n";
    let dir = nested_configs(root, "extend: ../.golint-k8s.yaml\nnode-cpus: 64\n");
    let lint = |cwd: &std::path::Path| {
        let out = cmd()
            .current_dir(cwd)
            .args(["lint", "--format", "concise", "d.yaml"])
            .output()
            .unwrap();
        let s = String::from_utf8(out.stdout).unwrap();
        (out.status.code(), s)
    };
    let (code, s) = lint(&dir.path().join("deploy"));
    // The root's rules: GK101 off, GK203 an error; the nested file's node-cpus (64 CPUs, not 4).
    assert!(!s.contains("GK101"), "{s}");
    assert!(s.contains("error GK203"), "{s}");
    assert!(s.contains("64 from node-cpus"), "{s}");
    // The root's fail-on: error gates on the GK203 error, not on the info findings.
    assert_eq!(code, Some(1), "{s}");
    std::fs::write(
        dir.path().join(".golint-k8s.yaml"),
        "rules: {GK101: off, GK203: info}\nfail-on: error\n",
    )
    .unwrap();
    assert_eq!(lint(&dir.path().join("deploy")).0, Some(0));
    let out = cmd()
        .current_dir(dir.path().join("deploy"))
        .args(["lint", "--show-settings", "d.yaml"])
        .output()
        .unwrap();
    let s = String::from_utf8(out.stdout).unwrap();
    assert!(s.contains("node-cpus: 64\n"), "{s}");
    assert!(s.contains("extend: "), "{s}");

    // Without extend, a nested config replaces the root's whole, as ruff's do.
    std::fs::write(
        dir.path().join("deploy/.golint-k8s.yaml"),
        "node-cpus: 64\n",
    )
    .unwrap();
    let (code, s) = lint(&dir.path().join("deploy"));
    assert!(s.contains("GK101") && s.contains("warning GK203"), "{s}");
    assert_eq!(code, Some(1), "{s}");
}

#[test]
fn extend_cycle_is_a_config_error_naming_the_files() {
    let dir = nested_configs(
        "extend: deploy/.golint-k8s.yaml\n",
        "rules: {GK101: off}\nextend: ../.golint-k8s.yaml\n",
    );
    let out = cmd()
        .current_dir(dir.path())
        .args(["lint", "deploy/d.yaml"])
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("extend makes a cycle: "), "{err}");
    // Both files, the first again at the end; located at the `extend` that closes the cycle
    // (which one that is depends on which file was read first).
    let cycle = &err[err.find("extend makes a cycle: ").unwrap()..];
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let root_file = root.join(".golint-k8s.yaml").display().to_string();
    let nested_file = root.join("deploy/.golint-k8s.yaml").display().to_string();
    assert!(
        cycle.contains(&format!("{root_file} -> {nested_file} -> {root_file}"))
            || cycle.contains(&format!("{nested_file} -> {root_file} -> {nested_file}")),
        "{err}"
    );
    assert!(
        err.contains("deploy/.golint-k8s.yaml:2:9: extend makes a cycle")
            || err.contains(&format!("{root_file}:1:9: extend makes a cycle")),
        "{err}"
    );
    assert!(
        !String::from_utf8_lossy(&out.stdout).contains("GK"),
        "{err}"
    );
}

#[test]
fn extend_of_a_missing_or_invalid_file_is_a_config_error_naming_both() {
    let dir = nested_configs("rules: {GK101: off}\n", "extend: ../base.yaml\n");
    let out = cmd()
        .current_dir(dir.path())
        .args(["lint", "deploy/d.yaml"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("deploy/.golint-k8s.yaml:1:9: extend: no config file at ")
            && err.contains("base.yaml"),
        "{err}"
    );

    // The extended file exists but is invalid: its own line, and who extended it.
    std::fs::write(
        dir.path().join("base.yaml"),
        "node-cpus: 4\ncpu-limit: forbid\n",
    )
    .unwrap();
    let out = cmd()
        .current_dir(dir.path())
        .args(["lint", "deploy/d.yaml"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("base.yaml:2:1: unknown key \"cpu-limit\""),
        "{err}"
    );
    assert!(
        err.contains("(extended by ") && err.contains("deploy/.golint-k8s.yaml)"),
        "{err}"
    );
}

#[test]
fn inherited_exclude_and_per_file_ignores_match_from_the_root_configs_directory() {
    let dir = nested_configs(
        "exclude: [\"deploy/generated/**\"]\nper-file-ignores: {\"deploy/legacy/**\": [GK2]}\n",
        "extend: ../.golint-k8s.yaml\nnode-cpus: 8\n",
    );
    for sub in ["generated", "legacy"] {
        std::fs::create_dir_all(dir.path().join("deploy").join(sub)).unwrap();
        std::fs::write(dir.path().join("deploy").join(sub).join("x.yaml"), BAD).unwrap();
    }
    let out = cmd()
        .current_dir(dir.path())
        .args(["lint", "--format", "concise", "."])
        .output()
        .unwrap();
    let s = String::from_utf8(out.stdout).unwrap();
    assert!(!s.contains("generated/x.yaml"), "{s}");
    assert!(
        s.contains("deploy/legacy/x.yaml") && s.contains("deploy/d.yaml"),
        "{s}"
    );
    assert!(
        !s.lines()
            .any(|l| l.starts_with("deploy/legacy/x.yaml") && l.contains(" GK2")),
        "{s}"
    );
    assert!(
        s.lines()
            .any(|l| l.starts_with("deploy/d.yaml") && l.contains(" GK203")),
        "{s}"
    );
}

#[test]
fn suppressions_by_comment_and_annotation() {
    let text = BAD
        .replace("              memory: 512Mi\n", "              memory: 512Mi # golint-k8s: ignore=GK101 -- automemlimit in the binary\n")
        .replace("metadata:\n  name: api\n", "metadata:\n  name: api\n  annotations:\n    golint-k8s.io/ignore: \"GK203,GK303\"\n");
    let out = cmd()
        .args(["lint", "-", "--format", "concise"])
        .write_stdin(text)
        .output()
        .unwrap();
    let s = String::from_utf8(out.stdout).unwrap();
    assert!(!s.contains("GK101 "), "{s}");
    assert!(!s.contains("GK203"), "{s}");
    assert!(
        s.contains("info GK901 unused-suppression: suppression of GK303 matched no finding"),
        "{s}"
    );
}

#[test]
fn human_output_has_snippet_and_link() {
    let out = cmd()
        .args(["lint", "-", "--select", "GK101"])
        .write_stdin(BAD)
        .output()
        .unwrap();
    let s = String::from_utf8(out.stdout).unwrap();
    assert!(s.contains("GK101 memory-limit-without-gomemlimit"), "{s}");
    assert!(s.contains("memory: 512Mi"), "{s}");
    assert!(
        s.contains("rules/GK101-memory-limit-without-gomemlimit.md"),
        "{s}"
    );
    assert!(!s.contains("\u{1b}["), "no colour when not a terminal");
}

#[test]
fn rules_and_explain() {
    let out = cmd().arg("rules").output().unwrap();
    let s = String::from_utf8(out.stdout).unwrap();
    // A header, then a line per rule of the registry.
    let rules = golint_k8s::rules::registry::RULES;
    assert_eq!(s.lines().count(), 1 + rules.len(), "{s}");
    for r in rules {
        assert!(s.contains(&format!("{}  {}", r.code, r.name)), "{s}");
    }
    assert!(s.contains("GK203  cpu-limit-throttling"));
    let out = cmd()
        .args(["explain", "cpu-limit-without-gomaxprocs"])
        .output()
        .unwrap();
    assert!(String::from_utf8(out.stdout)
        .unwrap()
        .starts_with("# GK201 cpu-limit-without-gomaxprocs"));
    cmd().args(["explain", "GK999"]).assert().code(2);
}

#[test]
fn closed_pipe_does_not_panic() {
    let big = BAD.to_string() + &format!("---\n{BAD}").repeat(300);
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("golint-k8s"))
        .args(["lint", "-", "--format", "concise"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(big.as_bytes()).unwrap();
    }
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
}

/// Hostile input gets a bounded, located answer: never a panic or a hang, and the other files
/// are still linted.
#[test]
#[cfg_attr(
    not(feature = "heavy-tests"),
    ignore = "heavy tier: --features heavy-tests"
)]
fn hostile_inputs_are_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    // Broken manifests (they name apiVersion and kind), so that they are judged.
    let manifest = "apiVersion: v1\nkind: List\n";
    std::fs::write(
        p.join("deep.yaml"),
        format!("{manifest}items: {}", "[".repeat(10_000)),
    )
    .unwrap();
    std::fs::write(
        p.join("deep-block.yaml"),
        (0..10_000)
            .map(|i| format!("{}k:\n", " ".repeat(i)))
            .fold(manifest.to_string(), |s, l| s + &l),
    )
    .unwrap();
    let mut bomb = String::from(
        "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
    );
    for i in 1..10u8 {
        let (prev, cur) = ((b'a' + i - 1) as char, (b'a' + i) as char);
        bomb.push_str(&format!("{cur}: &{cur} [*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev}]\n"));
    }
    std::fs::write(p.join("bomb.yaml"), bomb).unwrap();
    std::fs::write(
        p.join("long-line.yaml"),
        format!("a: \"{}\"\n", "x".repeat(1 << 20)),
    )
    .unwrap();
    std::fs::write(p.join("bom.yaml"), format!("\u{feff}{BAD}")).unwrap();
    // Just over the 512 MiB cap of a stream: reported, not read into a tree.
    let f = std::fs::File::create(p.join("huge.yaml")).unwrap();
    f.set_len(512 * 1024 * 1024 + 1).unwrap();
    std::fs::write(p.join("ok.yaml"), BAD).unwrap();
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(p.join("loop-b.yaml"), p.join("loop-a.yaml")).unwrap();
        std::os::unix::fs::symlink(p.join("loop-a.yaml"), p.join("loop-b.yaml")).unwrap();
    }
    let started = std::time::Instant::now();
    let out = cmd()
        .args(["lint", "--format", "json"])
        .arg(p)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
    assert!(
        started.elapsed().as_secs() < 60,
        "took {:?}",
        started.elapsed()
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let f = v["findings"].as_array().unwrap();
    let first = |file: &str| {
        f.iter()
            .find(|x| x["file"].as_str().unwrap().ends_with(file))
            .cloned()
    };
    assert_eq!(first("/deep.yaml").unwrap()["code"], "GK000");
    assert_eq!(first("/deep-block.yaml").unwrap()["code"], "GK000");
    assert!(
        first("/bomb.yaml").is_none(),
        "an alias bomb is valid YAML and costs nothing"
    );
    assert!(first("/long-line.yaml").is_none());
    let huge = first("/huge.yaml").unwrap();
    assert!(
        huge["message"]
            .as_str()
            .unwrap()
            .contains("above the 512 MiB limit"),
        "{huge}"
    );
    // The BOM does not shift columns.
    let bom = f
        .iter()
        .find(|x| x["file"].as_str().unwrap().ends_with("/bom.yaml") && x["code"] == "GK101")
        .unwrap();
    assert_eq!(
        (bom["line"].as_u64(), bom["column"].as_u64()),
        (Some(15), Some(23))
    );
    assert!(first("/ok.yaml").is_some());
    // Symlinks are not followed by the walk, so a loop is simply not a file there; named directly
    // it is an I/O error (exit 2) with its name.
    #[cfg(unix)]
    {
        let out = cmd()
            .arg("lint")
            .arg(p.join("loop-a.yaml"))
            .arg(p.join("ok.yaml"))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("loop-a.yaml"), "{err}");
        assert!(String::from_utf8_lossy(&out.stdout).contains("GK101"));
    }
}

#[test]
fn unreadable_file_is_exit_2_with_its_name() {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let secret = dir.path().join("secret.yaml");
        std::fs::write(&secret, BAD).unwrap();
        std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o000)).unwrap();
        if std::fs::read(&secret).is_ok() {
            println!("unreadable-file check not run: this user (root) can read mode 000 files");
            return;
        }
        let out = cmd().arg("lint").arg(&secret).output().unwrap();
        assert_eq!(out.status.code(), Some(2));
        assert!(String::from_utf8_lossy(&out.stderr).contains("secret.yaml: permission denied"));
    }
}

#[test]
fn config_severity_applies_to_suppression_findings() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join(".golint-k8s.yaml"),
        "rules: {GK901: error}\n",
    )
    .unwrap();
    let text = BAD.replace(
        "      containers:\n",
        "      # golint-k8s: ignore=GK303 -- nothing to silence\n      containers:\n",
    );
    std::fs::write(dir.path().join("d.yaml"), text).unwrap();
    let out = cmd()
        .args(["lint", "--format", "concise", "--select", "GK9,GK303"])
        .arg(dir.path())
        .output()
        .unwrap();
    let s = String::from_utf8(out.stdout).unwrap();
    assert!(s.contains("error GK901"), "{s}");
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn invalid_utf8_on_stdin_is_located() {
    let mut bytes = b"apiVersion: v1\nkind: Pod\nmetadata: {name: caf".to_vec();
    bytes.push(0xe9);
    bytes.extend_from_slice(b"}\n");
    let out = cmd()
        .args(["lint", "-", "--format", "json"])
        .write_stdin(bytes)
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let f = &v["findings"][0];
    assert!(
        f["message"]
            .as_str()
            .unwrap()
            .contains("invalid UTF-8 at byte offset 45"),
        "{f}"
    );
    assert_eq!(
        (f["line"].as_u64(), f["column"].as_u64()),
        (Some(3), Some(21)),
        "{f}"
    );
}

/// The benchmarks' parse-only pass reads and parses what `lint` would, counts it, and reports
/// nothing else: exit 0 even for a file with findings, and invalid YAML is counted, not reported.
#[test]
fn parse_only_counts_files_and_documents() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("two.yaml"), "a: 1\n---\nb: 2\n").unwrap();
    std::fs::write(dir.path().join("bad.yaml"), "a: [1\n").unwrap();
    std::fs::copy("examples/deployment.yaml", dir.path().join("example.yaml")).unwrap();
    let out = cmd()
        .args(["lint", "--parse-only"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "parsed 3 files, 4 documents (1 files not valid YAML or not text)\n"
    );
    // It is hidden: benchmarks only.
    let help = cmd().args(["lint", "--help"]).output().unwrap();
    assert!(!String::from_utf8_lossy(&help.stdout).contains("parse-only"));
}

#[test]
fn show_containers_lists_each_runtime_decision() {
    let out = Command::cargo_bin("golint-k8s")
        .unwrap()
        .current_dir(common::root())
        .args([
            "lint",
            "--show-containers",
            "--format",
            "json",
            "fixtures/GK101/silent-dockerfile-python.yaml",
            "fixtures/GK101/silent-dockerfile-automemlimit.yaml",
            "fixtures/GK201/silent-non-go-image.yaml",
            "fixtures/kustomize/overlays/prod/limits.yaml",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = v["containers"].as_array().unwrap();
    let by_container = |name: &str| {
        rows.iter()
            .find(|r| r["container"] == name)
            .unwrap_or_else(|| panic!("no {name} in {v}"))["runtime"]
            .clone()
    };
    let mailer = by_container("mailer");
    assert_eq!(mailer["language"], "python");
    assert!(mailer["evidence"]
        .as_str()
        .unwrap()
        .contains("src/mailer/Dockerfile"));
    let billing = by_container("billing");
    assert_eq!(billing["language"], "go");
    assert_eq!(billing["go_version"], "1.24");
    assert!(billing["sizes_gomemlimit"]
        .as_str()
        .unwrap()
        .contains("github.com/KimMachineGun/automemlimit"));
    assert_eq!(by_container("nginx")["language"], "c");
    let ledger = by_container("ledger");
    assert_eq!(ledger["assumed"], true);
    assert_eq!(ledger["unknown"], true);
    assert_eq!(ledger["language"], Value::Null);
    // The human listing names the same decisions, one line per container and a count.
    let out = Command::cargo_bin("golint-k8s")
        .unwrap()
        .current_dir(common::root())
        .args([
            "lint",
            "--show-containers",
            "fixtures/GK101/silent-dockerfile-python.yaml",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("Deployment/mailer container mailer: python, because the image is built by fixtures/GK101/src/mailer/Dockerfile"),
        "{text}"
    );
    assert!(
        text.ends_with("1 container, 0 of unknown runtime, 0 assumed to run Go\n"),
        "{text}"
    );
}

/// An image pinned by digest alone takes its release from the pod's `app.kubernetes.io/version`,
/// for the catalog's record of that release: for the container named by
/// `app.kubernetes.io/name`, or the only one.
#[test]
fn a_version_label_names_the_release_of_an_image_pinned_by_digest() {
    let digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
    let am = format!("quay.io/prometheus/alertmanager@{digest}");
    let pg = format!("quay.io/prometheus/pushgateway@{digest}");
    let versions = |labels: &str, containers: &[(&str, &str)]| {
        let mut text = format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: am\n  labels: {{{labels}}}\nspec:\n  template:\n    spec:\n      containers:\n"
        );
        for (name, image) in containers {
            text.push_str(&format!("      - {{name: {name}, image: \"{image}\"}}\n"));
        }
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("am.yaml"), text).unwrap();
        let out = cmd()
            .current_dir(dir.path())
            .args(["lint", "--show-containers", "--format", "json", "am.yaml"])
            .output()
            .unwrap();
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        v["containers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["runtime"].clone())
            .collect::<Vec<_>>()
    };
    let version = "app.kubernetes.io/version: v0.32.0";
    let rows = versions(version, &[("am", &am)]);
    assert_eq!(rows[0]["go_version"], "1.25", "{rows:?}");
    assert!(
        rows[0]["go_version_evidence"]
            .as_str()
            .unwrap()
            .contains("app.kubernetes.io/version"),
        "{rows:?}"
    );
    // Two containers: only the one the name label names.
    let named = format!("{version}, app.kubernetes.io/name: alertmanager");
    let rows = versions(&named, &[("am", &am), ("pg", &pg)]);
    assert_eq!(rows[0]["go_version"], "1.25", "{rows:?}");
    assert_eq!(rows[1]["go_version"], Value::Null, "{rows:?}");
    let rows = versions(version, &[("am", &am), ("pg", &pg)]);
    assert!(rows.iter().all(|r| r["go_version"].is_null()), "{rows:?}");
}

/// `rules --format json` lists every rule with what `rules` prints; a misspelt rule gets the
/// nearest name, on the command line, in `explain` and in the config.
#[test]
fn rules_as_json_and_did_you_mean() {
    let out = cmd().args(["rules", "--format", "json"]).output().unwrap();
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let rules = v["rules"].as_array().unwrap();
    assert_eq!(rules.len(), golint_k8s::rules::registry::RULES.len());
    let gk101 = rules.iter().find(|r| r["code"] == "GK101").unwrap();
    assert_eq!(gk101["name"], "memory-limit-without-gomemlimit");
    assert_eq!(gk101["fix"], "safe");
    assert!(gk101["url"]
        .as_str()
        .unwrap()
        .ends_with("GK101-memory-limit-without-gomemlimit.md"));

    let out = cmd()
        .args(["lint", "--ignore", "memory-limit-without-gomemlimt", "-"])
        .write_stdin(GOOD)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("(did you mean memory-limit-without-gomemlimit?)"));
    let out = cmd().args(["explain", "GK1O1"]).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("(did you mean GK101?)"));
    // Nothing close: no guess.
    let out = cmd().args(["explain", "hadolint-DL3008"]).output().unwrap();
    assert!(!String::from_utf8_lossy(&out.stderr).contains("did you mean"));
}

/// Human output names each file once before its findings and links each rule's doc once, after
/// them; the summary says how many findings `fix` can fix. Concise lines for unnamed standard
/// input say which object and container a finding is in.
#[test]
fn human_output_groups_by_file_and_links_each_rule_once() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.yaml"), BAD).unwrap();
    std::fs::write(
        dir.path().join("b.yaml"),
        BAD.replace("name: api\n", "name: web\n"),
    )
    .unwrap();
    let out = cmd()
        .current_dir(dir.path())
        .args(["lint", "--no-color", ".", "--assume-go"])
        .output()
        .unwrap();
    let s = String::from_utf8(out.stdout).unwrap();
    assert_eq!(s.matches("── a.yaml (").count(), 1, "{s}");
    assert_eq!(s.matches("── b.yaml (").count(), 1, "{s}");
    assert!(s.find("── a.yaml").unwrap() < s.find("── b.yaml").unwrap());
    let url = "rules/GK101-memory-limit-without-gomemlimit.md";
    assert_eq!(s.matches(url).count(), 1, "{s}");
    assert!(
        s.find(url).unwrap() > s.rfind("╰────").unwrap(),
        "the links come last: {s}"
    );
    let summary = s.lines().find(|l| l.starts_with("found ")).unwrap();
    assert!(
        summary.contains("fixable with `golint-k8s fix`"),
        "{summary}"
    );

    let out = cmd()
        .args(["lint", "--format", "concise", "-"])
        .write_stdin(BAD)
        .output()
        .unwrap();
    let s = String::from_utf8(out.stdout).unwrap();
    let first = s.lines().next().unwrap();
    assert!(first.starts_with("-:"), "{first}");
    assert!(
        first.ends_with("(in Deployment api, container api)"),
        "{first}"
    );
    let named = cmd()
        .args([
            "lint",
            "--format",
            "concise",
            "--stdin-filename",
            "x.yaml",
            "-",
        ])
        .write_stdin(BAD)
        .output()
        .unwrap();
    assert!(!String::from_utf8(named.stdout)
        .unwrap()
        .contains("(in Deployment"));
}

/// Text that an input writes (values, names, comments, the source shown in excerpts) must
/// neither act on a terminal (escape sequences, a carriage return that overwrites the line) nor
/// start a line that GitHub Actions runs as a workflow command, in any format.
#[test]
fn input_text_cannot_drive_a_terminal_or_a_ci_log() {
    let dir = tempfile::tempdir().unwrap();
    // Valid YAML: escapes in double quotes make real control characters in the values, and the
    // messages quote those values.
    let valid = "apiVersion: v1
kind: Pod
metadata:
  name: \"x\\e]0;title\\a\"
  annotations:
    b: |
      ::error file=x::block
      ::add-mask::oops
spec:
  containers:
  - name: \"c\\e[2J\\r\\n::error::name\"
    image: golang:1.22
    env:
    - name: \"GOGC\\n::error::envname\"
      value: off
    - name: GOMEMLIMIT
      value: \"1Gi\\e[31m\\n  ::stop-commands::t\\x9b2J\"
";
    // Not valid YAML: the excerpt shows raw control characters of the text.
    let invalid = "a: 1\n  \u{1b}[31m::error::x\r\n  \u{9b}2J\n::add-mask::y\n";
    std::fs::write(dir.path().join("valid.yaml"), valid).unwrap();
    std::fs::write(dir.path().join("invalid.yaml"), invalid).unwrap();
    std::fs::write(dir.path().join("::error::named.yaml"), valid).unwrap();
    let runs: Vec<(&str, Vec<&str>)> = [
        "human",
        "concise",
        "github",
        "gitlab",
        "junit",
        "checkstyle",
        "sarif",
        "json",
    ]
    .iter()
    .map(|f| (*f, vec!["lint", "--format", f, "."]))
    .chain([("human", vec!["lint", "--show-containers", "."])])
    .collect();
    for (format, args) in runs {
        let out = cmd().current_dir(dir.path()).args(&args).output().unwrap();
        let containers = args.contains(&"--show-containers");
        assert_eq!(out.status.code(), Some(i32::from(!containers)), "{args:?}");
        for (stream, bytes) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
            let text = String::from_utf8(bytes.clone()).unwrap();
            if stream == "stdout" {
                let want = if containers { "container" } else { "GK302" };
                assert!(text.contains(want), "{args:?}: {text}");
            }
            let acting: Vec<char> = text
                .chars()
                .filter(|&c| c.is_control() && c != '\n' && c != '\t')
                .collect();
            assert!(
                acting.is_empty(),
                "{args:?} {stream}: {acting:?} in\n{text}"
            );
            for line in text.lines() {
                let own = format == "github"
                    && ["::error file=", "::warning file=", "::notice file="]
                        .iter()
                        .any(|p| line.starts_with(p));
                assert!(
                    own || !line.trim_start().starts_with("::"),
                    "{args:?} {stream}: a workflow command from the input: {line}"
                );
            }
        }
    }
}

/// Codes and lines of the findings of `yaml` linted as JSON.
fn findings_of(yaml: &str) -> Vec<(String, u64)> {
    let out = cmd()
        .args(["lint", "-", "--format", "json"])
        .write_stdin(yaml)
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["code"].as_str().unwrap().to_string(),
                f["line"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// Tags resolve as go-yaml v2 resolves them for kubectl: `!!int "100"` is the integer 100 (the
/// API server refuses it as an env value), `!!str 100` a string, and `!!binary` the text it
/// encodes (`b2Zm` is `off`, a valid GOGC).
#[test]
fn tagged_env_values_are_read_as_kubectl_decodes_them() {
    let pod = "apiVersion: v1
kind: Pod
metadata:
  name: p
spec:
  containers:
  - name: c
    image: golang:1.22
    env:
    - name: GOGC
      value: !!binary b2Zm
    - name: GOMEMLIMIT
      value: !!binary |
        OTAwTWlC
    - name: X
      value: !!int \"100\"
    - name: Y
      value: !!str 100
    - name: Z
      value: !!bool \"yes\"
    resources: {requests: {cpu: 1, memory: 1Gi}, limits: {memory: 1Gi}}
";
    let found = findings_of(pod);
    let want: Vec<(String, u64)> = vec![("GK302".into(), 16), ("GK302".into(), 20)];
    assert_eq!(found, want);
}

/// kubectl refuses a `%YAML 1.2` document (go-yaml v2 reads YAML 1.1 only) and never decodes a
/// document that follows `...` without a `---` line: neither may be linted as if it applied.
#[test]
fn documents_kubectl_refuses_or_ignores_are_gk000() {
    let pod = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: c\n    image: golang:1.22\n    env:\n    - name: GOGC\n      value: off\n";
    let found = findings_of(&format!("%YAML 1.2\n---\n{pod}"));
    assert_eq!(found, vec![("GK000".to_string(), 1)]);
    let found = findings_of(&format!("a: 1\n...\n{pod}---\n{pod}"));
    let codes: Vec<&str> = found.iter().map(|(c, _)| c.as_str()).collect();
    assert_eq!(found[0], ("GK000".to_string(), 3), "{found:?}");
    // The document after `---` is linted.
    assert!(codes.contains(&"GK302"), "{found:?}");
    assert_eq!(codes.iter().filter(|c| **c == "GK000").count(), 1);
}

/// A chart's templates directory named directly (or a directory under it) is the same Go
/// template source that a walk of the chart renders: the same single entry (here without
/// `helm`), not false findings.
#[test]
fn a_charts_templates_directory_named_directly_is_its_chart() {
    let dir = tempfile::tempdir().unwrap();
    let chart = dir.path().join("mychart");
    std::fs::create_dir_all(chart.join("templates/sub")).unwrap();
    std::fs::write(
        chart.join("Chart.yaml"),
        "apiVersion: v2\nname: mychart\nversion: 0.1.0\n",
    )
    .unwrap();
    // Valid YAML that reads as a Go container without GOMEMLIMIT, until Helm renders it.
    let template = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: c\n    image: golang:1.22\n    env:\n    - name: GOMAXPROCS\n      value: \"{{ .Values.procs }}\"\n    resources:\n      limits: {memory: 1Gi}\n";
    std::fs::write(chart.join("templates/pod.yaml"), template).unwrap();
    std::fs::write(chart.join("templates/sub/pod.yaml"), template).unwrap();
    let without_helm = tempfile::tempdir().unwrap();
    for named in [chart.join("templates"), chart.join("templates/sub")] {
        let out = cmd()
            .env("PATH", without_helm.path())
            .arg("lint")
            .arg(&named)
            .output()
            .unwrap();
        let (stdout, err) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert_eq!(
            err.matches("a Helm chart, not linted").count(),
            1,
            "{named:?}: {err}"
        );
        assert!(!stdout.contains("GK"), "{named:?}: {stdout}");
        assert_eq!(out.status.code(), Some(2), "{named:?}: {err}");
    }
}

/// kubectl reads a stream that starts with `{` as JSON values, one after the other with or
/// without white space between them: each is applied, so each is linted.
#[test]
fn each_object_of_a_json_stream_is_linted() {
    let pod = |n: &str| {
        format!(
            "{{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {{\"name\": \"{n}\"}}, \"spec\": {{\"containers\": [{{\"name\": \"c\", \"image\": \"golang:1.22\", \"env\": [{{\"name\": \"GOGC\", \"value\": \"of\"}}]}}]}}}}"
        )
    };
    for sep in ["", "\n", " \r\n\n"] {
        let stream = format!("{}{sep}{}\n", pod("a"), pod("b"));
        let found = findings_of(&stream);
        let gk301: Vec<&(String, u64)> = found.iter().filter(|(c, _)| c == "GK301").collect();
        assert_eq!(gk301.len(), 2, "{sep:?}: {found:?}");
        assert!(
            !found.iter().any(|(c, _)| c == "GK000"),
            "{sep:?}: {found:?}"
        );
    }
}

/// kubectl decodes a UTF-16 file that starts with a byte order mark (go-yaml reads the mark),
/// and only its first YAML document: `---` in UTF-16 is not the line kubectl cuts at. Such a file
/// is linted at the right lines, and `fix` leaves it alone with a reason.
#[test]
fn utf16_files_are_linted_as_kubectl_decodes_them() {
    let pod = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: c\n    image: golang:1.22\n    env:\n    - name: GOGC\n      value: \"of\"\n";
    let text = format!("# é\n{pod}---\n{pod}");
    let dir = tempfile::tempdir().unwrap();
    for big in [false, true] {
        let mut bytes = if big {
            vec![0xfe, 0xff]
        } else {
            vec![0xff, 0xfe]
        };
        for u in text.encode_utf16() {
            bytes.extend(if big {
                u.to_be_bytes()
            } else {
                u.to_le_bytes()
            });
        }
        let path = dir.path().join(if big { "be.yaml" } else { "le.yaml" });
        std::fs::write(&path, &bytes).unwrap();
        let out = cmd()
            .args(["lint", "--format", "json"])
            .arg(&path)
            .output()
            .unwrap();
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        let found: Vec<(&str, u64, u64)> = v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                (
                    f["code"].as_str().unwrap(),
                    f["line"].as_u64().unwrap(),
                    f["column"].as_u64().unwrap(),
                )
            })
            .collect();
        assert!(found.contains(&("GK301", 12, 14)), "{big}: {found:?}");
        // The second document is not applied by kubectl: said, not linted.
        assert!(found.contains(&("GK000", 13, 1)), "{big}: {found:?}");
        assert!(
            !found.iter().any(|f| f.0 == "GK301" && f.1 > 13),
            "{found:?}"
        );
        let out = cmd()
            .args(["fix", "--unsafe-fixes"])
            .arg(&path)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("UTF-16"), "{err}");
        assert_eq!(std::fs::read(&path).unwrap(), bytes, "{err}");
    }
}

/// `lint .` at the root of a repository with YAML that is not a manifest (KEP metadata, an
/// Alertmanager config with Go templates, a dashboard's JSON behind a comment, Go test data that
/// is invalid on purpose) and vendored packages: only manifests are judged, the unparseable
/// others are listed as not linted (exit code the findings'), and the vendored directories are
/// not walked until the user names one or sets `exclude`.
#[test]
fn only_manifests_are_judged_in_a_repository() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join(".git")).unwrap();
    let files: &[(&str, &str)] = &[
        ("deploy/api.yaml", GOOD),
        (
            "keps/1234/kep.yaml",
            "title: Pod resize\nkep-number: 1234\nauthors: [\"@a\", \"@b\"]\nstage: beta\nstage: alpha\n",
        ),
        (
            "monitoring/alertmanager.yaml",
            "route:\n  receiver: {{ .Values.receiver }}\n  group_by: [alertname\n",
        ),
        (
            "dashboards/api.json",
            "// generated, do not edit\n{\"title\": \"API\", \"panels\": []}\n",
        ),
        ("pkg/parse/testdata/broken.yaml", "apiVersion: v1\nkind: Pod\nspec: [\n"),
        ("vendor/lib/deploy.yaml", "apiVersion: v1\nkind: Pod\nspec: [\n"),
        ("web/node_modules/pkg/x.yaml", "apiVersion: v1\nkind: Pod\nspec: [\n"),
    ];
    for (name, text) in files {
        let path = d.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let lint = |args: &[&str]| {
        let out = cmd()
            .current_dir(d)
            .args(["lint", "--format", "json"])
            .args(args)
            .output()
            .unwrap();
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        (out.status.code(), v, String::from_utf8(out.stderr).unwrap())
    };
    let (code, v, stderr) = lint(&["."]);
    assert_eq!(code, Some(0), "{v:#}\n{stderr}");
    assert_eq!(v["findings"].as_array().unwrap().len(), 0, "{v:#}");
    // deploy, the KEP, the Alertmanager config and the dashboard: nothing under testdata,
    // vendor or node_modules.
    assert_eq!(v["summary"]["files"], 4, "{v:#}");
    let unread: Vec<&str> = v["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        unread,
        ["dashboards/api.json", "monitoring/alertmanager.yaml"],
        "{v:#}"
    );
    assert!(
        stderr.contains(
            "note: monitoring/alertmanager.yaml: not linted: it names no apiVersion and kind"
        ),
        "{stderr}"
    );
    // Named, a vendored directory is linted; its broken manifest is GK000.
    let (code, v, _) = lint(&["vendor/lib"]);
    assert_eq!(code, Some(1));
    assert_eq!(v["findings"][0]["code"], "GK000", "{v:#}");
    // A config that sets `exclude` replaces the default skip: test data is walked again.
    std::fs::write(d.join(".golint-k8s.yaml"), "exclude: [\"web/**\"]\n").unwrap();
    let (code, v, _) = lint(&["."]);
    assert_eq!(code, Some(1));
    let files: Vec<&str> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["file"].as_str().unwrap())
        .collect();
    assert_eq!(
        files,
        ["pkg/parse/testdata/broken.yaml", "vendor/lib/deploy.yaml"],
        "{v:#}"
    );
}

/// A load-test config written as a Go template names `apiVersion` and `kind` only deep inside it
/// (the objects it waits for): it is not a manifest, so it is skipped with a note, not a GK000.
/// A templated manifest, whose keys are at the left margin, is skipped as a template (see
/// `a_go_template_that_does_not_parse_is_skipped_with_a_note`); a broken JSON manifest keeps its
/// GK000.
#[test]
fn a_template_that_nests_apiversion_and_kind_is_not_taken_for_a_manifest() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join(".git")).unwrap();
    let files: &[(&str, &str)] = &[
        (
            "testing/load/config.yaml",
            "{{$N := DefaultParam .N 10}}\n\nname: load\nsteps:\n- name: create\n  phases:\n  - replicas: {{$N}}\n    objectTemplatePath: job.yaml\n  measurements:\n  - Identifier: WaitForJobs\n    Params:\n      apiVersion: batch/v1\n      kind: Job\n",
        ),
        (
            "testing/load/deployment.yaml",
            "{{$replicas := .Replicas}}\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{.Name}}\nspec:\n  replicas: {{$replicas}}\n",
        ),
        ("pod.json", "{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"spec\": [\n"),
    ];
    for (name, text) in files {
        let path = d.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let out = cmd()
        .current_dir(d)
        .args(["lint", ".", "--format", "json"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut judged: Vec<(&str, &str)> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["file"].as_str().unwrap(), f["code"].as_str().unwrap()))
        .collect();
    judged.sort();
    assert_eq!(judged, [("pod.json", "GK000")], "{v:#}");
    let unread: Vec<(&str, &str)> = v["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["path"].as_str().unwrap(), e["message"].as_str().unwrap()))
        .collect();
    assert_eq!(unread.len(), 2, "{v:#}");
    assert_eq!(unread[0].0, "testing/load/config.yaml");
    assert!(unread[0]
        .1
        .starts_with("not linted: it names no apiVersion and kind"));
    assert_eq!(unread[1].0, "testing/load/deployment.yaml");
    assert!(unread[1].1.starts_with("a template (`{{ … }}`), not YAML"));
}

/// `fail-on` and `format` in the config that governs the directory a run starts in apply when
/// the flags are not given; the flags win; a value the flag would refuse is a config error.
#[test]
fn fail_on_and_format_come_from_the_config_unless_the_flags_say() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join(".git")).unwrap();
    std::fs::write(d.join("api.yaml"), BAD).unwrap();
    std::fs::write(
        d.join(".golint-k8s.yaml"),
        "fail-on: error\nformat: concise\n",
    )
    .unwrap();
    let run = |args: &[&str]| {
        cmd()
            .current_dir(d)
            .arg("lint")
            .args(args)
            .output()
            .unwrap()
    };
    // BAD's findings are warnings and info: below the configured threshold.
    let out = run(&["."]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with("api.yaml:"), "{text}");
    let out = run(&[".", "--fail-on", "warning", "--format", "json"]);
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(!v["findings"].as_array().unwrap().is_empty());
    std::fs::write(d.join(".golint-k8s.yaml"), "format: xml\n").unwrap();
    let out = run(&["."]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("format must be one of human, concise"),
        "{err}"
    );
}

/// A Go or Helm template that does not parse is no manifest a user can fix: it is skipped with a
/// note, like other files that are not YAML. A template is told by an action `{{ … }}` where YAML
/// expects a node; one inside a quoted or plain scalar, a block scalar or a comment does not make
/// a broken manifest a template, and that keeps its GK000.
#[test]
fn a_go_template_that_does_not_parse_is_skipped_with_a_note() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| std::fs::write(dir.path().join(name), text).unwrap();
    // Templates: actions on lines of their own, as mapping values, in a flow sequence.
    write(
        "t-lines.yaml",
        "{{$replicas := DefaultParam .Replicas 1}}\n\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{.Name}}\nspec:\n  replicas: {{$replicas}}\n{{if .Paused}}\n  paused: true\n{{end}}\n",
    );
    write(
        "t-values.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {{.Name}}\nspec:\n  containers:\n  - name: app\n    image: {{.Registry}}/app:1.0\n",
    );
    write(
        "t-flow.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: app\nspec:\n  containers:\n  - name: app\n    image: app:1.0\n    args: [\"--registry\", {{ .Registry }}/x, \"-v\"]\n",
    );
    // A multi-document template: the document without actions parses, the file is still one.
    write(
        "t-docs.yaml",
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: app\n---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: app\nspec:\n  containers:\n  - name: app\n    image: app:1.0\n    {{- if .Debug }}\n    args: [\"-v\"]\n    {{- end }}\n",
    );
    // Broken manifests: `{{` in a quoted scalar, in a plain one, in a block scalar, or nowhere.
    write(
        "m-quoted.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: alerts\n  annotations:\n    summary: \"{{ $labels.instance }} is down\"\ndata: [1\n",
    );
    write(
        "m-plain.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: alerts\n  annotations:\n    summary: Instance {{ $labels.instance }} is down\ndata: [1\n",
    );
    write(
        "m-block.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: alerts\ndata:\n  note.tmpl: |\n    {{ range .Alerts }}\n    {{ .Summary }}\n    {{ end }}\n  b: [1\n",
    );
    write(
        "m-plain-broken.yaml",
        "apiVersion: v1\nkind: Pod\nspec: [\n",
    );
    // A double-quoted scalar over several lines, as a dashboard's JSON is folded into a
    // ConfigMap: a continuation line is text, whatever it looks like.
    write(
        "m-folded.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dashboards\ndata:\n  mesh.json: \"{\\\"legendFormat\\\": \\\"{{\n    workload }} : {{ code }}\\\"}\"\n  b: [1\n",
    );
    let out = cmd()
        .args(["lint", "--format", "json", "."])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut found: Vec<(String, String)> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["file"].as_str().unwrap().to_string(),
                f["code"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    found.sort();
    let gk000 = |f: &str| (f.to_string(), "GK000".to_string());
    assert_eq!(
        found,
        [
            gk000("m-block.yaml"),
            gk000("m-folded.yaml"),
            gk000("m-plain-broken.yaml"),
            gk000("m-plain.yaml"),
            gk000("m-quoted.yaml")
        ],
        "{v:#}"
    );
    let mut skipped: Vec<(&str, &str)> = v["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["path"].as_str().unwrap(), e["message"].as_str().unwrap()))
        .collect();
    skipped.sort();
    let names: Vec<&str> = skipped.iter().map(|s| s.0).collect();
    assert_eq!(
        names,
        [
            "t-docs.yaml",
            "t-flow.yaml",
            "t-lines.yaml",
            "t-values.yaml"
        ]
    );
    for (name, why) in &skipped {
        assert!(
            why.starts_with("a template (`{{ … }}`), not YAML: not linted"),
            "{name}: {why}"
        );
    }
    assert_eq!(
        out.status.code(),
        Some(1),
        "the broken manifests still fail"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("note: t-lines.yaml: a template (`{{ … }}`), not YAML: not linted"),
        "{err}"
    );
}

/// A warm `--offline` run keeps a snapshot of the cache entries it read, and the next one reads
/// that one file instead of two per image; but only while the entries' directories are as they
/// were: an entry the writer replaces (renamed into place) is read from its file again, and a
/// snapshot that is not JSON is ignored.
#[test]
fn a_warm_offline_run_reads_the_cache_snapshot_while_it_is_current() {
    use std::time::{Duration, SystemTime};
    let dir = tempfile::tempdir().unwrap();
    let images = ["ghcr.io/acme/api:1.4.2", "acme/worker:v2"];
    let manifest: String = images
        .iter()
        .enumerate()
        .map(|(i, image)| {
            BAD.replace("name: api", &format!("name: c{i}"))
                .replace("ghcr.io/acme/api:1.4.2", image)
        })
        .collect::<Vec<_>>()
        .join("---\n");
    let path = dir.path().join("m.yaml");
    std::fs::write(&path, manifest).unwrap();
    let cache = dir.path().join("cache");
    let run = |extra: &[&str]| {
        let mut args = vec!["lint", "--inspect-images", "--offline"];
        args.extend_from_slice(extra);
        args.extend(["--format", "json", path.to_str().unwrap()]);
        cmd()
            .env("GOLINT_K8S_CACHE", &cache)
            .args(&args)
            .output()
            .unwrap()
    };
    run(&["--warm-image-cache"]);
    let (tags, facts) = (cache.join("images/tags"), cache.join("images/facts"));
    // As a directory last changed a while ago (a snapshot of one that just changed is not kept).
    let hour_ago = SystemTime::now() - Duration::from_secs(3600);
    let age = |d: &std::path::Path, t: SystemTime| {
        std::fs::File::open(d).unwrap().set_modified(t).unwrap();
    };
    age(&tags, hour_ago);
    age(&facts, hour_ago);
    let first = run(&[]);
    assert!(!String::from_utf8_lossy(&first.stderr).contains("not inspected"));
    let snapshot = cache.join("images/snapshot.json");
    assert!(snapshot.is_file(), "no snapshot was kept");

    // The entries' files gone, the directory as it was: the snapshot answers alone.
    std::fs::rename(&facts, cache.join("images/facts-away")).unwrap();
    std::fs::create_dir(&facts).unwrap();
    age(&facts, hour_ago);
    let from_snapshot = run(&[]);
    assert_eq!(from_snapshot.stdout, first.stdout);
    assert!(!String::from_utf8_lossy(&from_snapshot.stderr).contains("not inspected"));

    // A tag the writer moves to another digest: the snapshot is stale, the file counts.
    let other = format!("sha256:{}", "ab".repeat(32));
    let tag = std::fs::read_dir(&tags)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().contains("worker"))
        .unwrap();
    let moved = tags.join("moved.tmp");
    std::fs::write(&moved, format!(r#"{{"digest": "{other}", "at": 1}}"#)).unwrap();
    std::fs::rename(&moved, &tag).unwrap();
    let stale = run(&[]);
    let stderr = String::from_utf8_lossy(&stale.stderr);
    assert!(
        stderr.contains(&format!(
            "image acme/worker:v2 was not inspected: --offline, and the facts of {other} are not in the cache"
        )),
        "{stderr}"
    );

    // A snapshot that is not JSON is no answer: the entries' files are read.
    std::fs::remove_dir_all(&facts).unwrap();
    std::fs::rename(cache.join("images/facts-away"), &facts).unwrap();
    std::fs::write(&snapshot, "{ not json").unwrap();
    let poisoned = run(&[]);
    let stderr = String::from_utf8_lossy(&poisoned.stderr);
    assert!(
        stderr.contains("acme/worker:v2 was not inspected"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("ghcr.io/acme/api:1.4.2 was not inspected"),
        "{stderr}"
    );
}

/// A cache warmed through its own writer (the benchmarks' hidden `--warm-image-cache`) answers a
/// later `--offline` run for every image, whatever its shape: none is missing, and each
/// container's runtime is read from its image.
#[test]
fn a_warm_image_cache_answers_offline_for_every_image() {
    let dir = tempfile::tempdir().unwrap();
    let digest = format!("sha256:{}", "0123456789abcdef".repeat(4));
    let images = [
        "ghcr.io/acme/api:1.4.2".to_string(),
        "nginx".to_string(),
        "acme/worker:v2".to_string(),
        "localhost:5000/team/svc:1".to_string(),
        format!("registry.example.com/acme/pinned@{digest}"),
    ];
    let manifest: String = images
        .iter()
        .enumerate()
        .map(|(i, image)| {
            BAD.replace("name: api", &format!("name: c{i}"))
                .replace("ghcr.io/acme/api:1.4.2", image)
        })
        .collect::<Vec<_>>()
        .join("---\n");
    let path = dir.path().join("m.yaml");
    std::fs::write(&path, manifest).unwrap();
    let cache = dir.path().join("cache");
    let run = |extra: &[&str]| {
        let mut args = vec!["lint", "--inspect-images", "--offline", "--show-containers"];
        args.extend_from_slice(extra);
        args.extend(["--format", "json", path.to_str().unwrap()]);
        cmd()
            .env("GOLINT_K8S_CACHE", &cache)
            .args(&args)
            .output()
            .unwrap()
    };
    let cold = run(&[]);
    assert!(String::from_utf8_lossy(&cold.stderr).contains("not in the cache"));
    run(&["--warm-image-cache"]);
    let warm = run(&[]);
    let stderr = String::from_utf8_lossy(&warm.stderr);
    assert!(!stderr.contains("not inspected"), "{stderr}");
    let doc: Value = serde_json::from_slice(&warm.stdout).unwrap();
    let rows = doc["containers"].as_array().unwrap();
    assert_eq!(rows.len(), images.len());
    for row in rows {
        let rt = &row["runtime"];
        assert_eq!(rt["language"], "go", "{row}");
        assert_eq!(rt["assumed"], false, "{row}");
    }
}
