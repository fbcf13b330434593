//! `golint-k8s fix` as users drive it, through the real binary on real files.
//!
//! The fix engine has unit tests of its own; what they cannot see is what happens on disk and on
//! the terminal: which files get written and which must not be touched (`--diff`, `--check`,
//! invalid YAML, read-only files), how a write is done (atomic, keeping permissions, through
//! symlinks, no leftover temporary files), that the bytes around a fix survive (CRLF, a missing
//! final newline, comments, quoting), and the exit codes and summary line scripts rely on.
//!
//! Every test works in its own temporary directory and runs the binary there, so file names in
//! the output are the short relative ones.

use std::path::Path;
use std::process::Output;

use assert_cmd::Command;
use serde_json::Value;
use tempfile::TempDir;

/// A Go container with CPU and memory limits and neither GOMAXPROCS nor GOMEMLIMIT. Memory
/// request equals limit and the CPU limit is two whole cores, so only the two safe fixes apply
/// (GK201 adds GOMAXPROCS, GK101 adds GOMEMLIMIT) and the fixed file is clean.
const SAFE: &str = r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
spec:
  template:
    spec:
      containers:
        - name: api
          image: ghcr.io/acme/api:1.0
          resources:
            requests: {cpu: "1", memory: 512Mi}
            limits: {cpu: "2", memory: 512Mi}
"#;

/// Like SAFE, but with a CPU limit below one core (GK203) and a memory request below the limit
/// (GK102): both fixes change resources, so they are unsafe and a safe run leaves them.
const UNSAFE: &str = r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
spec:
  template:
    spec:
      containers:
        - name: api
          image: ghcr.io/acme/api:1.0
          resources:
            requests: {cpu: 250m, memory: 256Mi}
            limits: {cpu: 500m, memory: 512Mi}
"#;

/// A broken manifest, not YAML: an unclosed flow sequence. Must never be written.
const INVALID: &str = "apiVersion: v1\nkind: ConfigMap\ndata: [1, 2\nb: {\n";

fn cmd() -> Command {
    Command::cargo_bin("golint-k8s").unwrap()
}

/// `golint-k8s <args>`. The manifests here stand for a repository whose images are all Go, so
/// `lint` and `fix` run with `--assume-go`: their findings gate and their fixes are safe as the
/// rules give them. (What happens to containers of unknown runtime is tests/fast/gate.rs.)
fn golint(args: &[&str]) -> Command {
    let mut c = cmd();
    c.args(args);
    if matches!(args.first(), Some(&("lint" | "fix"))) {
        c.arg("--assume-go");
    }
    c
}

/// A temporary directory holding `files` (name, content).
fn dir_with(files: &[(&str, &[u8])]) -> TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, content) in files {
        std::fs::write(dir.path().join(name), content).unwrap();
    }
    dir
}

/// Run `golint-k8s <args>` inside `dir`.
fn run_in(dir: &Path, args: &[&str]) -> Output {
    golint(args).current_dir(dir).output().unwrap()
}

fn read(dir: &TempDir, name: &str) -> String {
    std::fs::read_to_string(dir.path().join(name)).unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).unwrap()
}

/// The summary is the last line on standard error.
fn summary(o: &Output) -> String {
    stderr(o).lines().last().unwrap_or("").to_string()
}

/// What the two safe fixes insert into SAFE: one env list, between `image` and `resources`.
const SAFE_ENV: &str = r#"          image: ghcr.io/acme/api:1.0
          env:
            - name: GOMAXPROCS
              valueFrom:
                resourceFieldRef:
                  resource: limits.cpu
            - name: GOMEMLIMIT
              value: "460MiB"
          resources:
"#;

fn assert_safe_fixed(text: &str) {
    assert!(text.contains(SAFE_ENV), "{text}");
}

/// Names of the writer's temporary files left in `dir`: there must never be any.
fn stray_temps(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".golint-k8s-") || n.ends_with(".tmp"))
        .collect()
}

#[test]
fn fix_rewrites_in_place_and_a_second_run_finds_nothing() {
    let dir = dir_with(&[("api.yaml", SAFE.as_bytes())]);
    let out = run_in(dir.path(), &["fix", "api.yaml"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(summary(&out), "fixed 2 problems in 1 file; 0 remaining");
    let fixed = read(&dir, "api.yaml");
    assert_safe_fixed(&fixed);

    // Idempotent: the fixed file has nothing left to fix, so nothing is written a second time.
    let again = run_in(dir.path(), &["fix", "--check", "api.yaml"]);
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    assert_eq!(stdout(&again), "");
    let again = run_in(dir.path(), &["fix", "api.yaml"]);
    assert_eq!(summary(&again), "fixed 0 problems in 0 files; 0 remaining");
    assert_eq!(read(&dir, "api.yaml"), fixed);
    assert_eq!(stray_temps(dir.path()), Vec::<String>::new());
}

/// A file named twice, directly or through its directory, is fixed and counted once.
#[test]
fn a_file_named_twice_is_fixed_once() {
    let dir = dir_with(&[]);
    std::fs::create_dir(dir.path().join("deploy")).unwrap();
    std::fs::write(dir.path().join("deploy/api.yaml"), SAFE).unwrap();
    let out = run_in(
        dir.path(),
        &["fix", "deploy", "deploy", "./deploy", "deploy/api.yaml"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(summary(&out), "fixed 2 problems in 1 file; 0 remaining");
    assert_safe_fixed(&read(&dir, "deploy/api.yaml"));

    std::fs::write(dir.path().join("deploy/api.yaml"), SAFE).unwrap();
    let out = run_in(
        dir.path(),
        &["lint", "--format", "json", "deploy", "deploy"],
    );
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["findings"].as_array().unwrap().len(), 2, "{json}");
}

#[test]
fn diff_prints_a_unified_diff_and_writes_nothing() {
    let dir = dir_with(&[("api.yaml", SAFE.as_bytes())]);
    let out = run_in(dir.path(), &["fix", "--diff", "api.yaml"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(read(&dir, "api.yaml"), SAFE, "--diff must not write");
    let diff = stdout(&out);
    assert!(
        diff.starts_with("--- a/api.yaml\n+++ b/api.yaml\n@@ -8,6 +8,13 @@\n"),
        "{diff}"
    );
    // Only additions: the fixes insert the env list and touch no existing line.
    let changed: Vec<&str> = diff
        .lines()
        .skip(3)
        .filter(|l| !l.starts_with(' '))
        .collect();
    assert_eq!(
        changed,
        [
            "+          env:",
            "+            - name: GOMAXPROCS",
            "+              valueFrom:",
            "+                resourceFieldRef:",
            "+                  resource: limits.cpu",
            "+            - name: GOMEMLIMIT",
            "+              value: \"460MiB\"",
        ],
        "{diff}"
    );
    assert_eq!(summary(&out), "would fix 2 problems in 1 file; 0 remaining");

    // A file with nothing to fix: no diff at all, exit 0.
    run_in(dir.path(), &["fix", "api.yaml"]);
    let clean = run_in(dir.path(), &["fix", "--diff", "api.yaml"]);
    assert_eq!(clean.status.code(), Some(0), "{}", stderr(&clean));
    assert_eq!(stdout(&clean), "");
}

#[test]
fn check_reports_per_file_and_writes_nothing() {
    let dir = dir_with(&[("api.yaml", SAFE.as_bytes())]);
    let out = run_in(dir.path(), &["fix", "--check", "api.yaml"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(stdout(&out), "would fix 2 problems in api.yaml\n");
    assert_eq!(read(&dir, "api.yaml"), SAFE, "--check must not write");

    run_in(dir.path(), &["fix", "api.yaml"]);
    let after = run_in(dir.path(), &["fix", "--check", "api.yaml"]);
    assert_eq!(after.status.code(), Some(0), "{}", stderr(&after));
    assert_eq!(stdout(&after), "");
}

#[test]
fn stdin_fixed_text_goes_to_stdout_and_the_rest_to_stderr() {
    let out = golint(&["fix", "-", "--stdin-filename", "deploy/api.yaml"])
        .write_stdin(SAFE)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // Exactly the text an in-place fix writes, and nothing else on stdout, so it can be piped on.
    let dir = dir_with(&[("api.yaml", SAFE.as_bytes())]);
    run_in(dir.path(), &["fix", "api.yaml"]);
    assert_eq!(stdout(&out), read(&dir, "api.yaml"));
    assert_eq!(summary(&out), "fixed 2 problems in 1 file; 0 remaining");

    // Findings left after fixing are reported on stderr under the given name; exit follows them.
    let out = golint(&["fix", "-", "--stdin-filename", "deploy/api.yaml"])
        .write_stdin(UNSAFE)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    // Positions are in the fixed text, which the new env list made seven lines longer.
    assert!(
        err.contains("deploy/api.yaml:20:27: warning GK203"),
        "{err}"
    );
    assert!(
        err.contains("deploy/api.yaml:19:43: warning GK102"),
        "{err}"
    );
    assert!(!stdout(&out).contains("deploy/api.yaml"));
    golint(&["fix", "-", "--fail-on", "error"])
        .write_stdin(UNSAFE)
        .assert()
        .code(0);
}

#[test]
fn stdin_diff_and_check_print_no_fixed_text() {
    let out = golint(&["fix", "--diff", "-", "--stdin-filename", "deploy/api.yaml"])
        .write_stdin(SAFE)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let diff = stdout(&out);
    assert!(
        diff.starts_with("--- a/deploy/api.yaml\n+++ b/deploy/api.yaml\n"),
        "{diff}"
    );
    assert!(
        diff.contains("\n+              value: \"460MiB\"\n"),
        "{diff}"
    );

    let out = golint(&["fix", "--check", "-"])
        .write_stdin(SAFE)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(stdout(&out), "");
}

#[test]
fn stdin_that_cannot_be_fixed_passes_through_byte_for_byte() {
    // Invalid YAML, and bytes that are not UTF-8 at all: a pipeline must get its input back.
    let not_utf8: &[u8] = b"apiVersion: v1\nkind: Pod\nmetadata: {name: \xff\xfe}\r\n";
    for input in [INVALID.as_bytes(), not_utf8] {
        let out = golint(&["fix", "-"]).write_stdin(input).output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        assert_eq!(out.stdout, input);
        assert!(stderr(&out).contains("GK000"), "{}", stderr(&out));
    }
}

#[test]
fn invalid_yaml_is_never_touched_and_other_files_are_still_fixed() {
    let not_utf8: &[u8] = b"apiVersion: v1\nkind: Pod\nmetadata: {name: \xff}\n";
    let dir = dir_with(&[
        ("api.yaml", SAFE.as_bytes()),
        ("broken.yaml", INVALID.as_bytes()),
        ("binary.yaml", not_utf8),
    ]);
    let out = run_in(dir.path(), &["fix", "."]);
    // GK000 is a finding (exit 1), not an I/O error (exit 2).
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(read(&dir, "broken.yaml"), INVALID);
    assert_eq!(
        std::fs::read(dir.path().join("binary.yaml")).unwrap(),
        not_utf8
    );
    assert_safe_fixed(&read(&dir, "api.yaml"));
    let err = stderr(&out);
    assert!(err.contains("broken.yaml: not fixed"), "{err}");
    assert_eq!(summary(&out), "fixed 2 problems in 1 file; 2 remaining");
    assert_eq!(stray_temps(dir.path()), Vec::<String>::new());
}

#[cfg(unix)]
#[test]
fn permissions_are_kept_and_the_file_is_replaced_by_rename() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let dir = dir_with(&[("api.yaml", SAFE.as_bytes())]);
    let path = dir.path().join("api.yaml");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
    let inode = std::fs::metadata(&path).unwrap().ino();

    let out = run_in(dir.path(), &["fix", "api.yaml"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let meta = std::fs::metadata(&path).unwrap();
    assert_eq!(meta.permissions().mode() & 0o7777, 0o640);
    // A new inode shows the text was written elsewhere and renamed over the file, never
    // truncated and rewritten in place (which a crash could leave half-written).
    assert_ne!(meta.ino(), inode, "the file was rewritten in place");
    assert_safe_fixed(&read(&dir, "api.yaml"));
}

/// The writer refuses a read-only file by its permission bits, not by trying to open it, so this
/// holds for root too (who could open it for writing) and needs no skip.
#[cfg(unix)]
#[test]
fn read_only_file_is_reported_by_name_and_the_others_are_fixed() {
    use std::os::unix::fs::PermissionsExt;
    let dir = dir_with(&[
        ("a.yaml", SAFE.as_bytes()),
        ("locked.yaml", SAFE.as_bytes()),
        ("z.yaml", SAFE.as_bytes()),
    ]);
    let locked = dir.path().join("locked.yaml");
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o444)).unwrap();

    let out = run_in(dir.path(), &["fix", "."]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.lines()
            .any(|l| l.starts_with("error: locked.yaml:") && l.contains("read-only")),
        "{err}"
    );
    assert_eq!(read(&dir, "locked.yaml"), SAFE);
    let mode = std::fs::metadata(&locked).unwrap().permissions().mode();
    assert_eq!(mode & 0o7777, 0o444);
    // Files before and after it in walk order are both fixed.
    assert_safe_fixed(&read(&dir, "a.yaml"));
    assert_safe_fixed(&read(&dir, "z.yaml"));
    // The locked file's two findings are still there, and not counted as fixed.
    assert_eq!(summary(&out), "fixed 4 problems in 2 files; 2 remaining");
    assert_eq!(stray_temps(dir.path()), Vec::<String>::new());
}

#[cfg(unix)]
#[test]
fn fixing_through_a_symlink_rewrites_the_target_and_keeps_the_link() {
    let dir = dir_with(&[]);
    let real = dir.path().join("real");
    std::fs::create_dir(&real).unwrap();
    std::fs::write(real.join("api.yaml"), SAFE).unwrap();
    std::os::unix::fs::symlink("real/api.yaml", dir.path().join("link.yaml")).unwrap();

    let out = run_in(dir.path(), &["fix", "link.yaml"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let link = dir.path().join("link.yaml");
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(
        std::fs::read_link(&link).unwrap(),
        Path::new("real/api.yaml")
    );
    assert_safe_fixed(&std::fs::read_to_string(real.join("api.yaml")).unwrap());
    // The temporary file lives next to the target, and is gone from both directories.
    assert_eq!(stray_temps(dir.path()), Vec::<String>::new());
    assert_eq!(stray_temps(&real), Vec::<String>::new());
}

#[test]
fn line_endings_and_a_missing_final_newline_survive() {
    let crlf = SAFE.replace('\n', "\r\n");
    let no_final_newline = SAFE.strip_suffix('\n').unwrap();
    let dir = dir_with(&[
        ("crlf.yaml", crlf.as_bytes()),
        ("open.yaml", no_final_newline.as_bytes()),
    ]);
    let out = run_in(dir.path(), &["fix", "."]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));

    let fixed = read(&dir, "crlf.yaml");
    assert!(fixed.contains("GOMEMLIMIT"), "{fixed}");
    // Every line break is still CRLF: one inserted bare \n would give the file mixed endings.
    assert_eq!(
        fixed.matches('\n').count(),
        fixed.matches("\r\n").count(),
        "{fixed:?}"
    );
    assert_safe_fixed(&fixed.replace("\r\n", "\n"));

    let fixed = read(&dir, "open.yaml");
    assert!(fixed.contains("GOMEMLIMIT"), "{fixed}");
    assert!(
        fixed.ends_with("limits: {cpu: \"2\", memory: 512Mi}"),
        "{fixed:?}"
    );
}

#[test]
fn comments_and_quoting_are_kept() {
    let text = r#"# Owned by team-a; do not edit by hand.
apiVersion: apps/v1
kind: Deployment
metadata:
  name: 'api'  # the public API
spec:
  template:
    spec:
      containers:
        # The main container.
        - name: "api"
          image: 'ghcr.io/acme/api:1.0'
          resources:
            # Sized for the p99 load test.
            requests: {cpu: "1", memory: '512Mi'}
            limits: {cpu: "2", memory: "512Mi"}  # keep in sync with HPA
"#;
    let dir = dir_with(&[("api.yaml", text.as_bytes())]);
    let out = run_in(dir.path(), &["fix", "api.yaml"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let fixed = read(&dir, "api.yaml");
    assert!(fixed.contains("GOMAXPROCS") && fixed.contains("GOMEMLIMIT"));
    // Safe fixes only insert: every original line is still there, unchanged and in order.
    let mut lines = fixed.lines();
    for want in text.lines() {
        assert!(
            lines.any(|l| l == want),
            "line {want:?} lost or reordered:\n{fixed}"
        );
    }
}

#[test]
fn unsafe_fixes_change_resources_only_when_asked() {
    let dir = dir_with(&[
        ("safe.yaml", UNSAFE.as_bytes()),
        ("all.yaml", UNSAFE.as_bytes()),
    ]);

    let out = run_in(dir.path(), &["fix", "safe.yaml"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(
        summary(&out),
        "fixed 2 problems in 1 file; 2 remaining (2 more fixable with --unsafe-fixes)"
    );
    let fixed = read(&dir, "safe.yaml");
    assert!(
        fixed.contains(
            "            requests: {cpu: 250m, memory: 256Mi}\n\
             \x20           limits: {cpu: 500m, memory: 512Mi}\n"
        ),
        "a safe run changed resources:\n{fixed}"
    );

    let out = run_in(dir.path(), &["fix", "--unsafe-fixes", "all.yaml"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(summary(&out), "fixed 3 problems in 1 file; 0 remaining");
    let fixed = read(&dir, "all.yaml");
    // GK102: request raised to the limit. GK203: the sub-core CPU limit removed, so no
    // GOMAXPROCS is derived from it.
    assert!(
        fixed.contains(
            "            requests: {cpu: 250m, memory: 512Mi}\n\
             \x20           limits: {memory: 512Mi}\n"
        ),
        "{fixed}"
    );
    assert!(fixed.contains("GOMEMLIMIT"), "{fixed}");
    assert!(!fixed.contains("limits.cpu"), "{fixed}");

    // The unsafe run on the safely fixed file must not leave GOMAXPROCS pointing at the CPU
    // limit it removes.
    let out = run_in(dir.path(), &["fix", "--unsafe-fixes", "safe.yaml"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let fixed = read(&dir, "safe.yaml");
    assert!(fixed.contains("limits: {memory: 512Mi}"), "{fixed}");
    assert!(!fixed.contains("limits.cpu"), "{fixed}");
}

#[test]
fn select_and_ignore_limit_the_fixes() {
    let dir = dir_with(&[("mem.yaml", SAFE.as_bytes()), ("cpu.yaml", SAFE.as_bytes())]);

    let out = run_in(dir.path(), &["fix", "--select", "GK101", "mem.yaml"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(summary(&out), "fixed 1 problem in 1 file; 0 remaining");
    let fixed = read(&dir, "mem.yaml");
    assert!(fixed.contains("- name: GOMEMLIMIT"), "{fixed}");
    assert!(!fixed.contains("GOMAXPROCS"), "{fixed}");

    let out = run_in(
        dir.path(),
        &[
            "fix",
            "--ignore",
            "memory-limit-without-gomemlimit",
            "cpu.yaml",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let fixed = read(&dir, "cpu.yaml");
    assert!(fixed.contains("- name: GOMAXPROCS"), "{fixed}");
    assert!(!fixed.contains("GOMEMLIMIT"), "{fixed}");
}

/// The JSON of `fix --format json <args>` run in `dir`.
fn fixed_json(dir: &TempDir, args: &[&str]) -> Value {
    let mut all = vec!["fix", "--format", "json"];
    all.extend_from_slice(args);
    let out = run_in(dir.path(), &all);
    assert_ne!(out.status.code(), Some(2), "{}", stderr(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn path_of(entry: &Value) -> Vec<Value> {
    entry["path"].as_array().unwrap().clone()
}

#[test]
fn json_lists_what_was_fixed_and_what_remains() {
    let dir = dir_with(&[("api.yaml", UNSAFE.as_bytes())]);
    let v = fixed_json(&dir, &["api.yaml"]);

    // Remaining findings are the lint JSON of the fixed file: the two unsafe ones.
    let mut left: Vec<&str> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["code"].as_str().unwrap())
        .collect();
    left.sort_unstable();
    assert_eq!(left, ["GK102", "GK203"], "{v:#}");
    assert_eq!(v["summary"]["findings"], 2);

    let fixed = v["fixed"].as_array().unwrap();
    let mut codes: Vec<&str> = fixed.iter().map(|f| f["code"].as_str().unwrap()).collect();
    codes.sort_unstable();
    assert_eq!(codes, ["GK101", "GK201"], "{v:#}");
    let container = serde_json::json!(["spec", "template", "spec", "containers", 0]);
    for f in fixed {
        assert_eq!(f["file"], "api.yaml", "{f:#}");
        assert_eq!(f["applicability"], "safe", "{f:#}");
        assert_eq!(f["object"], "api", "{f:#}");
        assert_eq!(f["container"], "api", "{f:#}");
        // Both insert the env list where `resources:` was, line 11 of the original.
        assert_eq!(
            (f["line"].as_u64(), f["end_line"].as_u64()),
            (Some(11), Some(11)),
            "{f:#}"
        );
        assert!(
            path_of(f).starts_with(container.as_array().unwrap()),
            "{f:#}"
        );
    }
}

/// The path of a fixed entry is "the smallest node that holds every edit": a fix appending to an
/// env list must name that list, not the last item that happens to sit before the insertion.
#[test]
fn json_path_of_an_appended_env_entry_names_the_env_list() {
    // An env list that already exists: GK101 appends GOMEMLIMIT to it.
    let existing = r#"apiVersion: v1
kind: Pod
metadata:
  name: api
spec:
  containers:
    - name: api
      image: ghcr.io/acme/api:1.0
      env:
        - name: FOO
          value: bar
      resources:
        requests: {cpu: 250m, memory: 512Mi}
        limits: {memory: 512Mi}
"#;
    let dir = dir_with(&[
        ("pod.yaml", existing.as_bytes()),
        ("api.yaml", SAFE.as_bytes()),
    ]);
    let v = fixed_json(&dir, &["pod.yaml"]);
    let f = &v["fixed"][0];
    assert_eq!(f["code"], "GK101", "{v:#}");
    assert_eq!(
        f["path"],
        serde_json::json!(["spec", "containers", 0, "env"]),
        "{f:#}"
    );

    // An env list created by GK201 in the same run: GK101 appends to it in the next round.
    let v = fixed_json(&dir, &["api.yaml"]);
    let gk101 = v["fixed"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == "GK101")
        .unwrap();
    let container = serde_json::json!(["spec", "template", "spec", "containers", 0]);
    let env = serde_json::json!(["spec", "template", "spec", "containers", 0, "env"]);
    assert!(
        gk101["path"] == container || gk101["path"] == env,
        "{gk101:#}"
    );
}

#[test]
fn no_temporary_files_remain() {
    let dir = dir_with(&[
        ("a.yaml", SAFE.as_bytes()),
        ("b.yaml", UNSAFE.as_bytes()),
        ("c.yaml", INVALID.as_bytes()),
    ]);
    for args in [
        &["fix", "."][..],
        &["fix", "--unsafe-fixes", "."],
        &["fix", "--diff", "."],
        &["fix", "--check", "."],
    ] {
        run_in(dir.path(), args);
        assert_eq!(stray_temps(dir.path()), Vec::<String>::new(), "{args:?}");
    }
    // And nothing but the three inputs is there.
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["a.yaml", "b.yaml", "c.yaml"]);
}

/// A container whose last env entry is a block scalar, followed by `volumeMounts:` (issue 39).
const BLOCK_SCALAR_ENV: &str = r#"apiVersion: v1
kind: Pod
metadata:
  name: api
spec:
  containers:
  - name: api
    image: ghcr.io/acme/api:1.0
    resources:
      limits: {cpu: "2", memory: 512Mi}
    env:
    - name: CONFIG
      value: |
        a: 1
        b: 2
    volumeMounts:
    - name: data
      mountPath: /data
  volumes:
  - name: data
    emptyDir: {}
"#;

/// Issue 39: the new entries were written one line too late, under `volumeMounts:` (mounts
/// without a mountPath, still valid YAML), and every later run added two more.
#[test]
fn fix_after_block_scalar_appends_to_env_once() {
    let dir = dir_with(&[("api.yaml", BLOCK_SCALAR_ENV.as_bytes())]);
    let out = run_in(dir.path(), &["fix", "api.yaml"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(summary(&out), "fixed 2 problems in 1 file; 0 remaining");
    let expected = BLOCK_SCALAR_ENV.replace(
        "        b: 2\n",
        "        b: 2\n    - name: GOMAXPROCS\n      valueFrom:\n        resourceFieldRef:\n          resource: limits.cpu\n    - name: GOMEMLIMIT\n      value: \"460MiB\"\n",
    );
    assert_eq!(read(&dir, "api.yaml"), expected);
    let again = run_in(dir.path(), &["fix", "api.yaml"]);
    assert_eq!(summary(&again), "fixed 0 problems in 0 files; 0 remaining");
    assert_eq!(read(&dir, "api.yaml"), expected);
}

/// Issue 39: removing an env entry whose value is a block scalar also removed the comment line
/// after it (or, when a key followed, offered no fix at all).
#[test]
fn fix_removing_a_block_scalar_entry_keeps_the_next_comment() {
    let text = r#"apiVersion: v1
kind: Pod
metadata:
  name: api
spec:
  containers:
  - name: api
    image: ghcr.io/acme/api:1.0
    env:
    - name: GOMEMLIMIT
      value: "460MiB"
    - name: GODEBUG
      value: >-
        madvdontneed=1
    # keep: mounts below are managed by the operator
    volumeMounts:
    - name: data
      mountPath: /data
"#;
    let dir = dir_with(&[("api.yaml", text.as_bytes())]);
    let out = run_in(dir.path(), &["fix", "--select", "GK108", "api.yaml"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        read(&dir, "api.yaml"),
        text.replace(
            "    - name: GODEBUG\n      value: >-\n        madvdontneed=1\n",
            ""
        )
    );
}

/// The codes `lint --format json <file>` reports in `dir`.
fn lint_codes(dir: &TempDir, file: &str) -> Vec<String> {
    let out = run_in(dir.path(), &["lint", "--format", "json", file]);
    assert_ne!(out.status.code(), Some(2), "{}", stderr(&out));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["code"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn gomemlimit_comes_from_the_merge_key_that_overrides_the_memory_limit() {
    // kubectl (go-yaml v2) writes a merge key's entries where it stands: the `<<` after
    // `memory: 2Gi` wins, so the container gets 256Mi, and 90 % of 2Gi (1843MiB) would OOM it.
    let text = r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
spec:
  template:
    spec:
      containers:
        - name: api
          image: ghcr.io/acme/api:1.0
          resources:
            requests: {cpu: "2", memory: 256Mi}
            limits:
              cpu: "2"
              memory: 2Gi
              <<: {memory: 256Mi}
"#;
    let dir = dir_with(&[("api.yaml", text.as_bytes())]);
    let out = run_in(dir.path(), &["fix", "api.yaml"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let fixed = read(&dir, "api.yaml");
    assert!(
        fixed.contains("- name: GOMEMLIMIT\n              value: \"230MiB\"\n"),
        "{fixed}"
    );
    assert!(!fixed.contains("1843MiB"), "{fixed}");
    assert_eq!(lint_codes(&dir, "api.yaml"), Vec::<String>::new());
}

#[test]
fn fix_adds_env_to_the_repeated_env_key_that_takes_effect() {
    // A repeated key keeps its last value for kubectl: the first `env:` never reaches the API
    // server, so an entry added there is lost while `fix` reports success.
    let first_env = "          env:\n            - name: OLD\n              value: \"x\"\n";
    let text = format!(
        r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
spec:
  template:
    spec:
      containers:
        - name: api
          image: ghcr.io/acme/api:1.0
{first_env}          resources:
            requests: {{cpu: "2", memory: 512Mi}}
            limits: {{cpu: "2", memory: 512Mi}}
          env:
            - name: LOG_LEVEL
              value: info
"#
    );
    let dir = dir_with(&[("api.yaml", text.as_bytes())]);
    let out = run_in(dir.path(), &["fix", "api.yaml"]);
    assert_ne!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(summary(&out), "fixed 2 problems in 1 file; 1 remaining");
    let fixed = read(&dir, "api.yaml");
    let (before_last_env, last_env) = fixed.rsplit_once("          env:\n").unwrap();
    assert!(before_last_env.contains(first_env), "{fixed}");
    assert!(!before_last_env.contains("GOM"), "{fixed}");
    assert!(
        last_env.contains("- name: GOMAXPROCS") && last_env.contains("value: \"460MiB\""),
        "{fixed}"
    );
    // Only the repeated key itself is left to report.
    assert_eq!(lint_codes(&dir, "api.yaml"), vec!["GK001".to_string()]);
}

#[test]
fn removing_a_cpu_limit_that_a_merge_key_would_bring_back_is_refused() {
    // Removing `cpu: 500m` leaves the merged `cpu: 250m` in effect: the limit would stay while
    // the fix says it removed it. The fix is refused with the reason instead.
    let text = r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
spec:
  template:
    spec:
      containers:
        - name: api
          image: ghcr.io/acme/api:1.0
          env:
            - name: GOMEMLIMIT
              value: "460MiB"
          resources:
            requests: {cpu: 250m, memory: 512Mi}
            limits:
              <<: {cpu: 250m}
              memory: 512Mi
              cpu: 500m
"#;
    let dir = dir_with(&[("api.yaml", text.as_bytes())]);
    let v = fixed_json(&dir, &["--unsafe-fixes", "api.yaml"]);
    let after = read(&dir, "api.yaml");
    assert!(
        after.contains(
            "              <<: {cpu: 250m}\n              memory: 512Mi\n              cpu: 500m\n"
        ),
        "{after}"
    );
    let remaining = v["findings"].as_array().unwrap();
    let gk203 = remaining
        .iter()
        .find(|f| f["code"] == "GK203")
        .unwrap_or_else(|| panic!("{v:#}"));
    assert!(
        gk203.to_string().contains("written more than once"),
        "{gk203:#}"
    );
}

#[test]
fn a_value_merged_from_a_shared_anchor_is_judged_and_left_to_the_anchor() {
    // Container b's `<<: *res` comes after its own request, so kubectl gives it the anchor's
    // 256Mi request: b has the same finding as a, and its fix would edit the anchor both share.
    let text = r#"apiVersion: v1
kind: Pod
metadata:
  name: p
spec:
  containers:
    - name: a
      image: ghcr.io/acme/api:1.0
      env:
        - {name: GOMAXPROCS, value: "1"}
        - {name: GOMEMLIMIT, value: "460MiB"}
      resources: &res
        requests: {cpu: "1", memory: 256Mi}
        limits: {cpu: "1", memory: 512Mi}
    - name: b
      image: ghcr.io/acme/api:1.0
      env:
        - {name: GOMAXPROCS, value: "1"}
        - {name: GOMEMLIMIT, value: "460MiB"}
      resources:
        requests: {cpu: "1", memory: 512Mi}
        <<: *res
"#;
    let dir = dir_with(&[("pod.yaml", text.as_bytes())]);
    let v = fixed_json(&dir, &["--unsafe-fixes", "pod.yaml"]);
    assert_eq!(read(&dir, "pod.yaml"), text, "{v:#}");
    let mut gk102: Vec<&str> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "GK102")
        .map(|f| f["container"].as_str().unwrap())
        .collect();
    gk102.sort_unstable();
    assert_eq!(gk102, ["a", "b"], "{v:#}");
    assert!(
        v.to_string().contains("anchored node"),
        "the refusal names the shared anchor: {v:#}"
    );
}

/// A Go container with a memory limit and `GOMEMLIMIT` set to a value the runtime reads as no
/// limit: `off` in one container, the empty string in the other.
const MEMLIMIT_OFF: &str = r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
spec:
  template:
    spec:
      containers:
        - name: api
          image: ghcr.io/acme/api:1.0
          env:
            - name: GOMEMLIMIT
              value: "off"
          resources:
            limits: {memory: 512Mi}
        - name: worker
          image: ghcr.io/acme/worker:1.0
          env:
            - name: GOMEMLIMIT
              value: ""
          resources:
            limits: {memory: 1Gi}
"#;

/// JSON findings of `lint --select GK101` over `dir` with extra `args`.
fn gk101_findings(dir: &Path, args: &[&str]) -> Vec<Value> {
    let mut all = vec!["lint", "--format", "json", "--select", "GK101"];
    all.extend_from_slice(args);
    all.push("d.yaml");
    let out = run_in(dir, &all);
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    json["findings"].as_array().unwrap().clone()
}

#[test]
fn gomemlimit_off_or_empty_under_a_memory_limit_is_reported_and_fixed_unsafely() {
    let dir = dir_with(&[("d.yaml", MEMLIMIT_OFF.as_bytes())]);
    let found = gk101_findings(dir.path(), &[]);
    assert_eq!(found.len(), 2, "{found:#?}");
    let lines: Vec<u64> = found.iter().map(|f| f["line"].as_u64().unwrap()).collect();
    assert_eq!(
        lines,
        [13, 20],
        "each finding points at the GOMEMLIMIT value"
    );
    for f in &found {
        let m = f["message"].as_str().unwrap();
        assert!(m.contains("reads as no limit"), "{m}");
        assert_eq!(f["fix"]["applicability"], "unsafe", "{f:#?}");
    }
    // A safe run leaves the written values alone; an unsafe one replaces them.
    run_in(dir.path(), &["fix", "--select", "GK101", "d.yaml"]);
    assert_eq!(read(&dir, "d.yaml"), MEMLIMIT_OFF);
    run_in(
        dir.path(),
        &["fix", "--unsafe-fixes", "--select", "GK101", "d.yaml"],
    );
    let fixed = read(&dir, "d.yaml");
    let want = MEMLIMIT_OFF
        .replace("value: \"off\"", "value: \"460MiB\"")
        .replace("value: \"\"", "value: \"921MiB\"");
    assert_eq!(fixed, want);
    assert!(gk101_findings(dir.path(), &[]).is_empty());
}

#[test]
fn go_before_1_19_gets_no_gomemlimit_and_is_told_to_upgrade_or_lower_gogc() {
    let dir = dir_with(&[("d.yaml", SAFE.as_bytes())]);
    let found = gk101_findings(dir.path(), &["--go-version", "1.18"]);
    assert_eq!(found.len(), 1, "{found:#?}");
    let f = &found[0];
    let m = f["message"].as_str().unwrap();
    assert!(m.contains("Go 1.18, which has no GOMEMLIMIT"), "{m}");
    let notes: Vec<&str> = f["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    let advice = notes.join("\n");
    assert!(advice.contains("upgrade Go to 1.19 or later"), "{advice}");
    assert!(advice.contains("lower GOGC"), "{advice}");
    assert!(!advice.contains("leaving headroom"), "{advice}");
    assert!(f["fix"].is_null(), "{f:#?}");
    // Neither a safe nor an unsafe run adds a variable the runtime would ignore.
    run_in(
        dir.path(),
        &[
            "fix",
            "--unsafe-fixes",
            "--select",
            "GK101",
            "--go-version",
            "1.18",
            "d.yaml",
        ],
    );
    assert_eq!(read(&dir, "d.yaml"), SAFE);
    // From 1.19 on the variable counts, and the fix adds it.
    let found = gk101_findings(dir.path(), &["--go-version", "1.19"]);
    assert_eq!(found[0]["fix"]["applicability"], "safe", "{found:#?}");
}

/// GOGC=off beside a GOMEMLIMIT entry that has no value (the empty string): GK107's fix once
/// wrote its value over the entry's name.
#[test]
fn gogc_off_fix_never_renames_a_gomemlimit_entry_without_a_value() {
    let text = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n    - name: app\n      image: ghcr.io/acme/app:1\n      env:\n        - name: GOGC\n          value: \"off\"\n        - name: GOMEMLIMIT\n      resources:\n        limits: {memory: 512Mi}\n";
    let dir = dir_with(&[("d.yaml", text.as_bytes())]);
    run_in(
        dir.path(),
        &["fix", "--unsafe-fixes", "--select", "GK107", "d.yaml"],
    );
    assert_eq!(read(&dir, "d.yaml"), text);
}
