//! The gate for containers of unknown runtime: unknown is not Go. A Go-only finding on a container
//! that nothing shows to run Go is info, says so, and carries an unsafe fix, so neither a CI gate
//! nor `golint-k8s fix` acts on a guess; `assume-go: true` (config or flag) restores gating for
//! repositories whose images are all Go, and any evidence settles a container either way.

use std::path::Path;
use std::process::Output;

use assert_cmd::Command;
use serde_json::Value;

/// A container nothing shows the runtime of (an image no catalog, name or build file explains),
/// with limits that give GK101 and GK201 and nothing else: requests equal limits, whole cores.
const UNKNOWN: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: ledger
spec:
  template:
    metadata:
      annotations: {}
    spec:
      containers:
        - name: ledger
          image: registry.example/acme/ledger:2.1
          resources:
            requests: {cpu: \"2\", memory: 512Mi}
            limits: {cpu: \"2\", memory: 512Mi}
";

fn golint(dir: &Path, args: &[&str]) -> Output {
    Command::cargo_bin("golint-k8s")
        .unwrap()
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap()
}

fn repo(manifest: &str, config: Option<&str>) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    std::fs::write(dir.path().join("ledger.yaml"), manifest).unwrap();
    if let Some(c) = config {
        std::fs::write(dir.path().join(".golint-k8s.yaml"), c).unwrap();
    }
    dir
}

/// (code, severity, fix applicability) of each finding of `lint --format json`, by code, with
/// the exit code and the whole report.
fn findings(dir: &Path, extra: &[&str]) -> (Option<i32>, Vec<(String, String, String)>, Value) {
    let mut args = vec!["lint", "--format", "json", "."];
    args.extend_from_slice(extra);
    let out = golint(dir, &args);
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    let mut found: Vec<_> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["code"].as_str().unwrap().to_string(),
                f["severity"].as_str().unwrap().to_string(),
                f["fix"]["applicability"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    found.sort();
    (out.status.code(), found, v)
}

fn row(code: &str, severity: &str, fix: &str) -> (String, String, String) {
    (code.into(), severity.into(), fix.into())
}

#[test]
fn a_go_finding_on_a_container_of_unknown_runtime_is_info_and_passes_the_gate() {
    let dir = repo(UNKNOWN, None);
    let (code, found, v) = findings(dir.path(), &[]);
    assert_eq!(code, Some(0), "{v:#}");
    assert_eq!(
        found,
        [
            row("GK101", "info", "unsafe"),
            row("GK201", "info", "unsafe")
        ],
        "{v:#}"
    );
    let note = v["findings"][0]["notes"][0].as_str().unwrap();
    // (Both findings carry it.)
    assert!(
        note.starts_with("unknown runtime: nothing shows that this container runs Go"),
        "{note}"
    );
    assert_eq!(v["summary"]["unknown_runtime_containers"], 1);
    assert_eq!(v["findings"][0]["runtime"]["unknown"], true);
    // The summary names the three ways to settle it.
    let out = golint(dir.path(), &["lint", "--no-color", "."]);
    let text = String::from_utf8(out.stdout).unwrap();
    let line = text
        .lines()
        .find(|l| l.contains("of unknown runtime"))
        .unwrap_or_else(|| panic!("no summary line: {text}"));
    for way in [
        "golint-k8s.io/runtime: go|other",
        "go-images / non-go-images",
        "--inspect-images",
        "assume-go: true",
    ] {
        assert!(line.contains(way), "{way} missing from {line}");
    }
    // `--show-containers` says it is unknown.
    let out = golint(dir.path(), &["lint", "--show-containers", "."]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("container ledger: unknown (its Go findings are info), because nothing shows which runtime it runs"),
        "{text}"
    );
    assert!(
        text.ends_with("1 container, 1 of unknown runtime, 0 assumed to run Go\n"),
        "{text}"
    );
}

#[test]
fn fix_adds_no_go_setting_to_a_container_of_unknown_runtime() {
    let dir = repo(UNKNOWN, None);
    let out = golint(dir.path(), &["fix", "."]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = std::fs::read_to_string(dir.path().join("ledger.yaml")).unwrap();
    assert_eq!(text, UNKNOWN);
    // Asked for, the unsafe fixes apply.
    let out = golint(dir.path(), &["fix", "--unsafe-fixes", "."]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = std::fs::read_to_string(dir.path().join("ledger.yaml")).unwrap();
    assert!(text.contains("name: GOMEMLIMIT"), "{text}");
    assert!(text.contains("name: GOMAXPROCS"), "{text}");
}

#[test]
fn assume_go_in_the_config_or_on_the_command_line_decides_for_unknown_runtimes() {
    let gated = [
        row("GK101", "warning", "safe"),
        row("GK201", "warning", "safe"),
    ];
    // The config says every image is Go: the findings gate with their rules' severities.
    let dir = repo(UNKNOWN, Some("assume-go: true\n"));
    let (code, found, v) = findings(dir.path(), &[]);
    assert_eq!((code, &found[..]), (Some(1), &gated[..]), "{v:#}");
    assert_eq!(v["summary"]["unknown_runtime_containers"], 0);
    // The flag replaces the config: false keeps the Go rules off.
    let (code, found, _) = findings(dir.path(), &["--assume-go=false"]);
    assert_eq!((code, found.len()), (Some(0), 0));
    // The flag alone means true.
    let dir = repo(UNKNOWN, None);
    let (code, found, _) = findings(dir.path(), &["--assume-go"]);
    assert_eq!((code, &found[..]), (Some(1), &gated[..]));
    // `fix --assume-go` applies the Go fixes as safe ones.
    let out = golint(dir.path(), &["fix", ".", "--assume-go"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = std::fs::read_to_string(dir.path().join("ledger.yaml")).unwrap();
    assert!(text.contains("name: GOMEMLIMIT"), "{text}");
}

#[test]
fn evidence_settles_a_container_whatever_assume_go_says() {
    // The annotation says Go: gated, with a safe fix.
    let declared = UNKNOWN.replace(
        "annotations: {}",
        "annotations: {golint-k8s.io/runtime: go}",
    );
    let (code, found, _) = findings(repo(&declared, None).path(), &[]);
    assert_eq!(
        (code, &found[..]),
        (
            Some(1),
            &[
                row("GK101", "warning", "safe"),
                row("GK201", "warning", "safe")
            ][..]
        )
    );
    // A go-images glob too.
    let dir = repo(UNKNOWN, Some("go-images: [\"registry.example/acme/*\"]\n"));
    let (code, found, _) = findings(dir.path(), &[]);
    assert_eq!((code, found.len()), (Some(1), 2));
    // And a runtime variable of another language keeps the Go rules off.
    let java = UNKNOWN.replace(
        "          resources:",
        "          env: [{name: JAVA_TOOL_OPTIONS, value: \"-XX:MaxRAMPercentage=75\"}]\n          resources:",
    );
    let (code, found, _) = findings(repo(&java, None).path(), &[]);
    assert_eq!((code, found.len()), (Some(0), 0));
}

#[test]
fn a_configured_severity_does_not_lift_a_guess_above_the_gate() {
    let dir = repo(UNKNOWN, Some("rules: {GK101: error}\n"));
    let (code, found, v) = findings(dir.path(), &[]);
    assert_eq!(code, Some(0), "{v:#}");
    assert_eq!(found[0], row("GK101", "info", "unsafe"));
    // With assume-go: true it is the configured error.
    let dir = repo(UNKNOWN, Some("rules: {GK101: error}\nassume-go: true\n"));
    let (code, found, _) = findings(dir.path(), &[]);
    assert_eq!((code, &found[0]), (Some(1), &row("GK101", "error", "safe")));
}

#[test]
fn init_writes_the_answer_about_assume_go() {
    let dir = tempfile::tempdir().unwrap();
    let out = golint(dir.path(), &["init", "--assume-go", "true"]);
    assert!(out.status.success(), "{out:?}");
    let text = std::fs::read_to_string(dir.path().join(".golint-k8s.yaml")).unwrap();
    assert!(text.lines().any(|l| l == "assume-go: true"), "{text}");
    // Not asked (no terminal, no flag): left unset, and init says what that means.
    let dir = tempfile::tempdir().unwrap();
    let out = golint(dir.path(), &["init"]);
    assert!(out.status.success(), "{out:?}");
    let text = std::fs::read_to_string(dir.path().join(".golint-k8s.yaml")).unwrap();
    assert!(text.lines().any(|l| l == "# assume-go: true"), "{text}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("assume-go is left unset"));
}
