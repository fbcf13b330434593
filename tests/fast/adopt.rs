//! Adopting golint-k8s on a repository that already has findings: a gate on new findings only
//! (`--new-from-rev`, fingerprints that survive moved lines and renamed files), the switches a CI
//! job needs (`--exit-zero`, `--exclude`, `--extend-exclude`), and the reports CI systems read
//! (SARIF fingerprints, GitLab Code Quality, JUnit, checkstyle). Every run is the real binary, in
//! a real git repository made for the test.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_golint-k8s");

/// A Go Deployment with two findings: GK101 (memory limit, no GOMEMLIMIT) and GK201 (CPU limit,
/// no GOMAXPROCS).
const OLD: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
spec:
  template:
    spec:
      containers:
        - name: api
          image: golang:1.22
          resources:
            requests: {cpu: \"1\", memory: 512Mi}
            limits: {cpu: \"1\", memory: 512Mi}
";

struct Ran {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

fn run(dir: &Path, args: &[&str]) -> Ran {
    let out = Command::new(BIN)
        .current_dir(dir)
        .args(args)
        .output()
        .expect("run golint-k8s");
    let ran = Ran {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    assert!(!ran.stderr.contains("panicked"), "{}", ran.stderr);
    ran
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .current_dir(dir)
        .args(["-c", "user.email=ci@example.com", "-c", "user.name=ci"])
        .args(args)
        .output()
        .expect("git");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn json(ran: &Ran) -> Value {
    serde_json::from_str(&ran.stdout).unwrap_or_else(|e| panic!("{e}: {}", ran.stdout))
}

fn findings(v: &Value) -> Vec<(String, String)> {
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["file"].as_str().unwrap().to_string(),
                f["code"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// A repository with findings is gated from its first commit: moving old findings (lines pushed
/// down, a file renamed with git) passes; a new manifest, a new container in an old object and a
/// second copy of an old finding fail; a file outside git's knowledge has only new findings.
#[test]
fn new_from_rev_gates_new_findings_only() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    git(d, &["init", "-q", "-b", "main"]);
    write(&d.join("deploy/api.yaml"), OLD);
    write(
        &d.join("deploy/worker.yaml"),
        &OLD.replace("name: api", "name: worker"),
    );
    git(d, &["add", "."]);
    git(d, &["commit", "-q", "-m", "first"]);
    let all = run(d, &["lint", "--format", "json", "."]);
    assert_eq!(findings(&json(&all)).len(), 4, "{}", all.stdout);

    // Lines moved and a file renamed: nothing new.
    write(
        &d.join("deploy/api.yaml"),
        &format!("# owned by the api team\n\n{OLD}"),
    );
    git(d, &["mv", "deploy/worker.yaml", "deploy/jobs.yaml"]);
    let gate = run(
        d,
        &["lint", "--new-from-rev", "HEAD", "--format", "json", "."],
    );
    assert_eq!(gate.code, Some(0), "{}{}", gate.stdout, gate.stderr);
    assert!(findings(&json(&gate)).is_empty(), "{}", gate.stdout);

    // A new manifest: its findings, and only them, fail the gate.
    write(
        &d.join("deploy/new.yaml"),
        &OLD.replace("name: api\nspec", "name: new\nspec"),
    );
    let gate = run(
        d,
        &["lint", "--new-from-rev", "main", "--format", "concise", "."],
    );
    assert_eq!(gate.code, Some(1));
    let lines: Vec<&str> = gate.stdout.lines().filter(|l| l.contains(": ")).collect();
    assert_eq!(lines.len(), 2, "{}", gate.stdout);
    assert!(
        lines.iter().all(|l| l.starts_with("deploy/new.yaml:")),
        "{}",
        gate.stdout
    );
    // `fix --check` asks the same of fixable findings: both of the new file's are.
    let check = run(d, &["fix", "--check", "--new-from-rev", "HEAD", "."]);
    assert_eq!(check.code, Some(1), "{}", check.stderr);
    assert_eq!(check.stdout, "would fix 2 problems in deploy/new.yaml\n");
    let fix = run(d, &["fix", "--new-from-rev", "HEAD", "."]);
    assert_eq!(fix.code, Some(2));
    assert!(
        fix.stderr.contains("goes with `fix --check`"),
        "{}",
        fix.stderr
    );
    std::fs::remove_file(d.join("deploy/new.yaml")).unwrap();
    let check = run(d, &["fix", "--check", "--new-from-rev", "HEAD", "."]);
    assert_eq!(check.code, Some(0), "{}{}", check.stdout, check.stderr);

    // A second container with the same problems in an old object: new.
    let two = OLD.replace(
        "          resources:",
        "          resources:\n            limits: {memory: 256Mi}\n        - name: sidecar\n          image: golang:1.22\n          resources:",
    );
    write(&d.join("deploy/api.yaml"), &two);
    let gate = run(
        d,
        &["lint", "--new-from-rev", "HEAD", "--format", "json", "."],
    );
    let new = findings(&json(&gate));
    assert!(!new.is_empty(), "{}", gate.stdout);
    assert!(
        json(&gate)["findings"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f["container"] == "sidecar" || f["code"] != "GK201"),
        "{}",
        gate.stdout
    );
    git(d, &["checkout", "-q", "--", "deploy/api.yaml"]);

    // Not a commit, or not a repository: a usage error, exit 2.
    let bad = run(d, &["lint", "--new-from-rev", "no-such-branch", "."]);
    assert_eq!(bad.code, Some(2));
    assert!(
        bad.stderr.contains("\"no-such-branch\" is not a commit"),
        "{}",
        bad.stderr
    );
    let outside = tempfile::tempdir().unwrap();
    write(&outside.path().join("a.yaml"), OLD);
    let bad = run(outside.path(), &["lint", "--new-from-rev", "HEAD", "."]);
    assert_eq!(bad.code, Some(2));
    assert!(
        bad.stderr.contains("needs a git repository"),
        "{}",
        bad.stderr
    );
}

/// Fingerprints name a finding without its line: the same in JSON and SARIF, unchanged when the
/// object moves down the file, different for another object, container or rule.
#[test]
fn fingerprints_survive_moved_lines_and_reach_sarif() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(&d.join("a.yaml"), OLD);
    let before = json(&run(d, &["lint", "--format", "json", "a.yaml"]));
    write(&d.join("a.yaml"), &format!("---\n# moved\n\n{OLD}"));
    let after = json(&run(d, &["lint", "--format", "json", "a.yaml"]));
    let prints = |v: &Value| -> Vec<String> {
        v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["fingerprint"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(prints(&before), prints(&after));
    assert_ne!(
        before["findings"][0]["line"], after["findings"][0]["line"],
        "the lines did move"
    );
    let p = prints(&before);
    assert_eq!(p.len(), 2);
    assert_ne!(p[0], p[1]);
    assert!(p.iter().all(|x| x.len() == 16));
    write(
        &d.join("a.yaml"),
        &OLD.replace("name: api\nspec", "name: other\nspec"),
    );
    let other = json(&run(d, &["lint", "--format", "json", "a.yaml"]));
    assert!(prints(&other).iter().all(|x| !p.contains(x)));

    write(&d.join("a.yaml"), OLD);
    let sarif: Value =
        serde_json::from_str(&run(d, &["lint", "--format", "sarif", "a.yaml"]).stdout).unwrap();
    let from_sarif: Vec<String> = sarif["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            r["partialFingerprints"]["golintK8s/v1"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(from_sarif, p);
}

/// `--exit-zero` reports but never fails on findings; an unreadable input still exits 2.
/// `--exclude` replaces the config's `exclude`, `--extend-exclude` adds to it; both apply to
/// walked files only, as the config's does.
#[test]
fn exit_zero_and_excludes() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(&d.join("app/a.yaml"), OLD);
    write(&d.join("vendor/v.yaml"), OLD);
    write(&d.join("generated/g.yaml"), OLD);
    write(&d.join(".golint-k8s.yaml"), "exclude: [\"generated/**\"]\n");

    let ran = run(d, &["lint", "--exit-zero", "--format", "concise", "."]);
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    assert!(ran.stdout.contains("app/a.yaml:"));
    let ran = run(
        d,
        &[
            "lint",
            "--exit-zero",
            "--format",
            "json",
            ".",
            "missing.yaml",
        ],
    );
    assert_eq!(ran.code, Some(2));

    let files = |args: &[&str]| -> Vec<String> {
        let mut all = vec!["lint", "--format", "json"];
        all.extend_from_slice(args);
        let mut f: Vec<String> = findings(&json(&run(d, &all)))
            .into_iter()
            .map(|(file, _)| file)
            .collect();
        f.dedup();
        f
    };
    assert_eq!(files(&["."]), ["app/a.yaml", "vendor/v.yaml"]);
    assert_eq!(
        files(&["--extend-exclude", "vendor/**", "."]),
        ["app/a.yaml"]
    );
    assert_eq!(
        files(&["--exclude", "vendor/**", "."]),
        ["app/a.yaml", "generated/g.yaml"]
    );
    // A file named on the command line is linted whatever the globs say.
    assert_eq!(
        files(&["--exclude", "vendor/**", "vendor/v.yaml"]),
        ["vendor/v.yaml"]
    );
    let bad = run(d, &["lint", "--exclude", "[", "."]);
    assert_eq!(bad.code, Some(2));
    assert!(
        bad.stderr.contains("--exclude: invalid glob"),
        "{}",
        bad.stderr
    );
}

/// GitLab Code Quality: the fields GitLab documents, with its severities, paths relative to the
/// repository and fingerprints unique in the report (two identical findings in one file too).
#[test]
fn gitlab_code_quality_report() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    git(d, &["init", "-q"]);
    let twice = format!("{OLD}---\n{OLD}");
    write(&d.join("deploy/a.yaml"), &twice);
    let ran = run(&d.join("deploy"), &["lint", "--format", "gitlab", "a.yaml"]);
    assert_eq!(ran.code, Some(1), "{}", ran.stderr);
    let v: Value = serde_json::from_str(&ran.stdout).unwrap();
    let issues = v.as_array().unwrap();
    assert_eq!(issues.len(), 4);
    let mut prints = std::collections::HashSet::new();
    for i in issues {
        let keys: Vec<&str> = i.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "check_name",
                "description",
                "fingerprint",
                "location",
                "severity"
            ]
        );
        assert!(["info", "minor", "major", "critical", "blocker"]
            .contains(&i["severity"].as_str().unwrap()));
        assert_eq!(i["location"]["path"], "deploy/a.yaml");
        assert!(i["location"]["lines"]["begin"].as_u64().unwrap() >= 1);
        assert!(i["check_name"].as_str().unwrap().starts_with("GK"));
        assert!(prints.insert(i["fingerprint"].as_str().unwrap().to_string()));
    }
}

/// JUnit and checkstyle: well-formed XML with one failure / error per finding, escaped text, and
/// a passing case for a clean file.
#[test]
fn junit_and_checkstyle_reports() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(&d.join("a&b.yaml"), OLD);
    write(
        &d.join("clean.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n",
    );
    let junit = run(d, &["lint", "--format", "junit", "."]);
    assert_eq!(junit.code, Some(1));
    let x = &junit.stdout;
    assert!(x.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites"));
    assert!(x.contains("tests=\"3\" failures=\"2\""), "{x}");
    assert_eq!(x.matches("<failure ").count(), 2);
    assert!(x.contains("name=\"a&amp;b.yaml\""), "{x}");
    assert!(
        x.contains("<testcase name=\"golint-k8s\" classname=\"clean.yaml\""),
        "{x}"
    );
    assert_eq!(
        x.matches("<testsuite ").count(),
        x.matches("</testsuite>").count()
    );
    assert!(!x.contains("a&b"));

    let cs = run(d, &["lint", "--format", "checkstyle", "."]);
    let x = &cs.stdout;
    assert!(x.contains("<checkstyle version=\"4.3\">"));
    assert_eq!(x.matches("<error ").count(), 2);
    assert!(x.contains("source=\"golint-k8s.GK101\""), "{x}");
    assert!(x.contains("<file name=\"a&amp;b.yaml\">"), "{x}");
    assert!(
        !x.contains("clean.yaml"),
        "a clean file has no element: {x}"
    );
}

/// `per-file-ignores` in the config turns rules off for the files its globs match (relative to
/// the config's directory), as ruff's option does; a code that names no rule is a config error.
#[test]
fn per_file_ignores_turn_rules_off_for_matching_files() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(&d.join("apps/a.yaml"), OLD);
    write(&d.join("legacy/b.yaml"), OLD);
    write(
        &d.join(".golint-k8s.yaml"),
        "per-file-ignores:\n  \"legacy/**\": [GK101]\n  \"apps/*.yaml\": [GK2]\n",
    );
    let v = json(&run(d, &["lint", "--format", "json", "."]));
    assert_eq!(
        findings(&v),
        [
            ("apps/a.yaml".to_string(), "GK101".to_string()),
            ("legacy/b.yaml".to_string(), "GK201".to_string()),
        ]
    );
    write(
        &d.join(".golint-k8s.yaml"),
        "per-file-ignores:\n  \"legacy/**\": [GK999]\n",
    );
    let bad = run(d, &["lint", "."]);
    assert_eq!(bad.code, Some(2));
    assert!(
        bad.stderr.contains("unknown rule or rule block \"GK999\""),
        "{}",
        bad.stderr
    );
}

/// A path that cannot be read never leaves a clean-looking report: exit 2, JSON's `errors` names
/// it, and human and concise output end by saying so instead of "no problems found".
#[test]
fn unreadable_paths_never_look_clean() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(
        &d.join("clean.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n",
    );
    let ran = run(
        d,
        &["lint", "--format", "json", "clean.yaml", "missing.yaml"],
    );
    assert_eq!(ran.code, Some(2));
    let v = json(&ran);
    assert_eq!(
        v["errors"],
        serde_json::json!([{"path": "missing.yaml", "message": "no such file or directory"}])
    );
    let clean = json(&run(d, &["lint", "--format", "json", "clean.yaml"]));
    assert_eq!(clean["errors"], serde_json::json!([]));
    for format in ["human", "concise"] {
        let ran = run(
            d,
            &["lint", "--format", format, "clean.yaml", "missing.yaml"],
        );
        assert_eq!(ran.code, Some(2));
        assert!(
            !ran.stdout.contains("no problems found"),
            "{format}: {}",
            ran.stdout
        );
        assert!(
            ran.stdout.contains("1 path could not be linted"),
            "{format}: {}",
            ran.stdout
        );
    }
}

fn git_out(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .current_dir(dir)
        .args(args)
        .output()
        .expect("git");
    assert!(out.status.success(), "git {args:?}");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// A file name with a line break in it (`y⏎HEAD:z.yaml`) cannot make git answer for another path:
/// `z.yaml`'s new findings are still new, and every file keeps its own revision.
#[test]
fn new_from_rev_is_not_fooled_by_a_line_break_in_a_file_name() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    git(d, &["init", "-q", "-b", "main"]);
    write(&d.join("old.yaml"), OLD);
    git(d, &["add", "."]);
    git(d, &["commit", "-q", "-m", "first"]);
    git(d, &["checkout", "-q", "-b", "pr"]);
    write(&d.join("z.yaml"), &OLD.replace("name: api", "name: z"));
    write(&d.join("y\nHEAD:z.yaml"), "# nothing\n");
    git(d, &["add", "."]);
    git(d, &["commit", "-q", "-m", "pr"]);
    let gate = run(
        d,
        &["lint", "--new-from-rev", "main", "--format", "json", "."],
    );
    assert_eq!(gate.code, Some(1), "{}{}", gate.stdout, gate.stderr);
    let new = findings(&json(&gate));
    assert_eq!(new.len(), 2, "{}", gate.stdout);
    assert!(new.iter().all(|(f, _)| f == "z.yaml"), "{}", gate.stdout);
}

/// Files in a submodule that did not change since REV are old, read from the submodule's own
/// repository at the commit REV records; run from a subdirectory of the repository with
/// relative paths, the gate is the same.
#[test]
fn new_from_rev_reads_submodules_and_works_from_a_subdirectory() {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("sub");
    git(dir.path(), &["init", "-q", "-b", "main", "sub"]);
    write(&sub.join("deploy/lib.yaml"), OLD);
    git(&sub, &["add", "."]);
    git(&sub, &["commit", "-q", "-m", "lib"]);
    let d = &dir.path().join("top");
    git(dir.path(), &["init", "-q", "-b", "main", "top"]);
    write(&d.join("app/api.yaml"), OLD);
    git(
        d,
        &[
            "-c",
            "protocol.file.allow=always",
            "submodule",
            "add",
            "-q",
            sub.to_str().unwrap(),
            "vendor/lib",
        ],
    );
    git(d, &["add", "."]);
    git(d, &["commit", "-q", "-m", "first"]);
    let gate = run(
        d,
        &["lint", "--new-from-rev", "HEAD", "--format", "json", "."],
    );
    assert_eq!(gate.code, Some(0), "{}{}", gate.stdout, gate.stderr);
    assert!(findings(&json(&gate)).is_empty(), "{}", gate.stdout);

    // A new object in the submodule's working tree is new.
    let lib = d.join("vendor/lib/deploy/lib.yaml");
    write(
        &lib,
        &format!("{OLD}---\n{}", OLD.replace("name: api", "name: more")),
    );
    // From a subdirectory, naming files relative to it.
    let gate = run(
        &d.join("app"),
        &[
            "lint",
            "--new-from-rev",
            "HEAD",
            "--format",
            "json",
            ".",
            "../vendor/lib/deploy",
        ],
    );
    assert_eq!(gate.code, Some(1), "{}{}", gate.stdout, gate.stderr);
    let new = findings(&json(&gate));
    assert_eq!(new.len(), 2, "{}", gate.stdout);
    assert!(
        new.iter()
            .all(|(f, _)| f == "../vendor/lib/deploy/lib.yaml"),
        "{}",
        gate.stdout
    );
}

/// A shallow clone that lacks REV says that it is shallow and how to fetch the history, instead
/// of calling REV no commit.
#[test]
fn new_from_rev_in_a_shallow_clone_says_how_to_deepen_it() {
    let dir = tempfile::tempdir().unwrap();
    let d = &dir.path().join("origin");
    git(dir.path(), &["init", "-q", "-b", "main", "origin"]);
    write(&d.join("a.yaml"), OLD);
    git(d, &["add", "."]);
    git(d, &["commit", "-q", "-m", "first"]);
    let first = git_out(d, &["rev-parse", "HEAD"]);
    write(&d.join("b.yaml"), OLD);
    git(d, &["add", "."]);
    git(d, &["commit", "-q", "-m", "second"]);
    let url = format!("file://{}", d.display());
    git(dir.path(), &["clone", "-q", "--depth", "1", &url, "clone"]);
    let ran = run(
        &dir.path().join("clone"),
        &["lint", "--new-from-rev", &first, "."],
    );
    assert_eq!(ran.code, Some(2), "{}", ran.stderr);
    assert!(ran.stderr.contains("shallow"), "{}", ran.stderr);
    assert!(ran.stderr.contains("git fetch --deepen"), "{}", ran.stderr);
    assert!(ran.stderr.contains("fetch-depth: 0"), "{}", ran.stderr);
}

/// A blob at REV is read up to the size cap of a file, as the file itself is: a 1.1 GiB file
/// committed and unchanged is "too large" at both ends (an old finding), within a 1 GiB address
/// space, where reading the whole blob would abort.
#[cfg(unix)]
#[test]
#[cfg_attr(
    not(feature = "heavy-tests"),
    ignore = "heavy tier: --features heavy-tests"
)]
fn new_from_rev_reads_a_huge_blob_only_up_to_the_cap() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    git(d, &["init", "-q", "-b", "main"]);
    // Sparse: no disk for the working copy, and zeros deflate to almost nothing in git.
    let f = std::fs::File::create(d.join("huge.yaml")).unwrap();
    f.set_len(1100 << 20).unwrap();
    drop(f);
    write(&d.join("ok.yaml"), OLD);
    git(d, &["-c", "core.looseCompression=1", "add", "."]);
    git(d, &["commit", "-q", "-m", "first"]);
    let out = Command::new("sh")
        .current_dir(d)
        .args([
            "-c",
            "ulimit -v 1048576 && exec \"$0\" lint --new-from-rev HEAD --format json .",
            BIN,
        ])
        .output()
        .unwrap();
    let ran = Ran {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    assert_eq!(ran.code, Some(0), "{}{}", ran.stdout, ran.stderr);
    assert!(findings(&json(&ran)).is_empty(), "{}", ran.stdout);
}
