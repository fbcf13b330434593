//! Machine formats other tools parse: GitHub workflow commands (snapshotted, escaping included).

use assert_cmd::Command;

#[test]
fn github_annotations_escape_commas_colons_and_newlines() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/deployment.yaml"
    ))
    .unwrap();
    // A file name with a comma and a colon must not break the property list.
    let out = Command::cargo_bin("golint-k8s")
        .unwrap()
        .args([
            "lint",
            "-",
            "--format",
            "github",
            "--stdin-filename",
            "deploy/shop,eu:west.yaml",
        ])
        .write_stdin(text)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let s = String::from_utf8(out.stdout).unwrap();
    for line in s.lines() {
        let (head, message) = line
            .split_once("::")
            .map(|(_, rest)| rest.split_once("::").unwrap())
            .unwrap();
        // Exactly the six properties: the escaped file name adds no separators.
        assert_eq!(head.split(',').count(), 6, "{head}");
        assert!(head.contains("file=deploy/shop%2Ceu%3Awest.yaml"), "{head}");
        assert!(!message.contains('\n') && !message.contains('\r'));
    }
    assert!(
        s.contains("%0Ajudged Go because"),
        "notes ride on escaped newlines"
    );
    // The snapshot keeps the name and place it had when this file was its own test binary.
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/snapshots"));
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| {
        insta::assert_snapshot!(
            "formats__github_annotations_escape_commas_colons_and_newlines",
            s
        )
    });
}

/// Every format goes through one interface, which `lint` streams file by file as it lints, and
/// which reports already at hand (`--new-from-rev`, `fix`, `cluster`) are written through at once.
/// Against a revision before any file existed every finding is new, so both ways must write the
/// same bytes and exit alike: in every format, with findings, clean files, a file that is not
/// YAML and one that is not text, and with `--statistics` and `--quiet`.
#[test]
fn every_format_streams_the_bytes_it_writes_for_reports_at_hand() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .current_dir(root)
            .args(["-c", "user.email=ci@example.com", "-c", "user.name=ci"])
            .args(args)
            .output()
            .expect("git");
        assert!(out.status.success(), "git {args:?}");
    };
    git(&["init", "-q"]);
    git(&["commit", "-q", "--allow-empty", "-m", "empty"]);
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let mut copied = 0;
    for rule in ["GK000", "GK101", "GK102", "GK201", "GK203", "GK301"] {
        for entry in std::fs::read_dir(fixtures.join(rule)).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if name.ends_with(".yaml") && (name.starts_with("fire-") || name.starts_with("silent-"))
            {
                let to = root.join("manifests").join(rule).join(&name);
                std::fs::create_dir_all(to.parent().unwrap()).unwrap();
                std::fs::copy(&path, &to).unwrap();
                copied += 1;
            }
        }
    }
    assert!(copied > 20, "{copied} fixtures");
    std::fs::write(root.join("manifests/binary.yaml"), b"kind: \x00\xff\xfe").unwrap();
    let lint = |extra: &[&str]| {
        let out = Command::cargo_bin("golint-k8s")
            .unwrap()
            .current_dir(root)
            .args(["lint", "manifests"])
            .args(extra)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let formats = [
        "human",
        "concise",
        "json",
        "sarif",
        "github",
        "gitlab",
        "junit",
        "checkstyle",
    ];
    for format in formats {
        for options in [&[][..], &["--statistics"], &["--quiet"]] {
            let mut args = vec!["--format", format];
            args.extend_from_slice(options);
            let streamed = lint(&args);
            args.extend_from_slice(&["--new-from-rev", "HEAD"]);
            let at_hand = lint(&args);
            assert_eq!(streamed.0, Some(1), "{format} {options:?}");
            assert!(streamed.1.contains("GK101"), "{format} {options:?}");
            assert_eq!(streamed, at_hand, "{format} {options:?}");
        }
    }
}

/// A repository as a first run meets it: a Deployment with findings, a compose file (YAML, but no
/// Kubernetes manifest), a symlink named like a manifest that leads nowhere (passed over, a note)
/// and a Helm chart that cannot be rendered because no `helm` is on PATH (an input that could not
/// be linted, exit 2). Returns the directory and the run of `lint --format FORMAT .` in it.
fn first_run(format: &str) -> (tempfile::TempDir, std::process::Output) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let git = std::process::Command::new("git")
        .args(["init", "-q"])
        .arg(root)
        .status()
        .unwrap();
    assert!(git.success());
    std::fs::copy(
        concat!(env!("CARGO_MANIFEST_DIR"), "/examples/deployment.yaml"),
        root.join("deploy.yaml"),
    )
    .unwrap();
    std::fs::write(
        root.join("compose.yaml"),
        "services:\n  web:\n    image: nginx:1.27\n    ports: [\"8080:80\"]\n",
    )
    .unwrap();
    std::os::unix::fs::symlink("gone.yaml", root.join("broken.yaml")).unwrap();
    let chart = root.join("chart");
    std::fs::create_dir_all(chart.join("templates")).unwrap();
    std::fs::write(
        chart.join("Chart.yaml"),
        "apiVersion: v2\nname: chart\nversion: 0.1.0\n",
    )
    .unwrap();
    std::fs::write(
        chart.join("templates/pod.yaml"),
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {{ .Release.Name }}\n",
    )
    .unwrap();
    let without_helm = tempfile::tempdir().unwrap();
    let out = Command::cargo_bin("golint-k8s")
        .unwrap()
        .current_dir(root)
        .env("PATH", without_helm.path())
        .args(["lint", "--format", format, "."])
        .output()
        .unwrap();
    // The chart could not be linted: the findings are incomplete, whatever the format.
    assert_eq!(
        out.status.code(),
        Some(2),
        "{format}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (dir, out)
}

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}

/// The elements of an XML text opened and closed alike (a test of balance, not of a schema).
fn assert_balanced(x: &str, tag: &str) {
    let open = x.matches(&format!("<{tag} ")).count() + x.matches(&format!("<{tag}>")).count();
    let self_closed = x
        .split(&format!("<{tag} "))
        .skip(1)
        .filter(|rest| rest.split('>').next().unwrap_or("").ends_with('/'))
        .count();
    assert_eq!(
        open - self_closed,
        x.matches(&format!("</{tag}>")).count(),
        "<{tag}> in\n{x}"
    );
}

#[test]
fn junit_lists_inputs_not_linted_and_no_compose_file_passes() {
    let (_dir, out) = first_run("junit");
    let x = stdout(&out);
    for tag in ["testsuites", "testsuite", "testcase"] {
        assert_balanced(&x, tag);
    }
    // The chart is an error case, the broken link a skipped one, each in a suite of its own.
    let suite = |name: &str| {
        let start = x
            .find(&format!(r#"<testsuite name="{name}""#))
            .unwrap_or_else(|| panic!("no suite {name} in\n{x}"));
        let end = x[start..].find("</testsuite>").unwrap() + start;
        x[start..end].to_string()
    };
    let chart = suite("chart");
    assert!(chart.contains(r#"errors="1""#), "{chart}");
    assert!(
        chart.contains(r#"<error message="a Helm chart, not linted"#),
        "{chart}"
    );
    let link = suite("broken.yaml");
    assert!(link.contains(r#"skipped="1""#), "{link}");
    assert!(
        link.contains("<skipped message=\"a symlink that leads to no file"),
        "{link}"
    );
    // The compose file is no manifest: skipped, never a passing test case.
    let compose = suite("compose.yaml");
    assert!(compose.contains(r#"skipped="1""#), "{compose}");
    assert!(
        compose.contains("<skipped message=\"not linted"),
        "{compose}"
    );
    assert!(!compose.contains(r#"file="compose.yaml"/>"#), "{compose}");
    // Totals: 5 findings, 3 skipped or erroneous inputs; the one error counted on the root.
    assert!(
        x.contains(r#"<testsuites name="golint-k8s" tests="8" failures="5" errors="1">"#),
        "{x}"
    );
}

#[test]
fn checkstyle_lists_inputs_not_linted_and_not_the_compose_file() {
    let (_dir, out) = first_run("checkstyle");
    let x = stdout(&out);
    assert_balanced(&x, "file");
    assert!(x.contains(r#"<file name="chart">"#), "{x}");
    assert!(
        x.contains(r#"severity="error" message="a Helm chart, not linted"#),
        "{x}"
    );
    assert!(x.contains(r#"<file name="broken.yaml">"#), "{x}");
    assert!(
        x.contains(r#"severity="info" message="a symlink that leads to no file"#),
        "{x}"
    );
    assert_eq!(x.matches(r#"source="golint-k8s.input""#).count(), 2, "{x}");
    assert!(!x.contains("compose.yaml"), "{x}");
}

#[test]
fn github_annotates_inputs_not_linted_and_not_the_compose_file() {
    let (_dir, out) = first_run("github");
    let s = stdout(&out);
    assert!(
        s.lines().any(|l| l
            .starts_with("::error file=chart,title=input not linted::a Helm chart, not linted")),
        "{s}"
    );
    assert!(
        s.lines().any(|l| l.starts_with(
            "::notice file=broken.yaml,title=input not linted::a symlink that leads to no file"
        )),
        "{s}"
    );
    assert!(!s.contains("compose.yaml"), "{s}");
}

#[test]
fn gitlab_reports_inputs_not_linted_and_not_the_compose_file() {
    let (_dir, out) = first_run("gitlab");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let issues = v.as_array().unwrap();
    let mut prints = std::collections::HashSet::new();
    for i in issues {
        // Every issue has the fields GitLab reads, and no other.
        let keys: Vec<&str> = i.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "check_name",
                "description",
                "fingerprint",
                "location",
                "severity"
            ],
            "{i}"
        );
        assert!(i["location"]["lines"]["begin"].as_u64().unwrap() >= 1);
        assert!(prints.insert(i["fingerprint"].as_str().unwrap().to_string()));
    }
    let input = |path: &str| {
        issues
            .iter()
            .find(|i| i["check_name"] == "golint-k8s.input" && i["location"]["path"] == path)
            .unwrap_or_else(|| panic!("no issue for {path}: {v:#}"))
    };
    assert_eq!(input("chart")["severity"], "critical");
    assert!(input("chart")["description"]
        .as_str()
        .unwrap()
        .starts_with("a Helm chart, not linted"));
    assert_eq!(input("broken.yaml")["severity"], "info");
    assert!(!v.to_string().contains("compose.yaml"), "{v:#}");
}

#[test]
fn concise_lists_inputs_not_linted_one_line_each_and_not_the_compose_file() {
    let (_dir, out) = first_run("concise");
    let s = stdout(&out);
    assert!(
        s.lines()
            .any(|l| l.starts_with("chart: error: a Helm chart, not linted")),
        "{s}"
    );
    assert!(
        s.lines()
            .any(|l| l.starts_with("broken.yaml: note: a symlink that leads to no file")),
        "{s}"
    );
    assert!(!s.contains("compose.yaml"), "{s}");
}

#[test]
fn human_names_inputs_not_linted_and_not_the_compose_file() {
    let (_dir, out) = first_run("human");
    let s = stdout(&out);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(s.contains("2 paths could not be linted"), "{s}");
    assert!(err.contains("chart: a Helm chart, not linted"), "{err}");
    assert!(
        err.contains("note: broken.yaml: a symlink that leads to no file"),
        "{err}"
    );
    assert!(!s.contains("compose.yaml"), "{s}");
}

#[test]
fn json_lists_inputs_not_linted_and_not_the_compose_file() {
    let (_dir, out) = first_run("json");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let errors: Vec<(&str, &str)> = v["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["path"].as_str().unwrap(), e["message"].as_str().unwrap()))
        .collect();
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert_eq!(errors[0].0, "broken.yaml");
    assert!(errors[0].1.starts_with("a symlink that leads to no file"));
    assert_eq!(errors[1].0, "chart");
    assert!(errors[1].1.starts_with("a Helm chart, not linted"));
    // Only the errors' two keys: the level other formats show is not (yet) in JSON.
    assert_eq!(v["errors"][0].as_object().unwrap().len(), 2);
    assert!(!v.to_string().contains("compose.yaml"), "{v:#}");
}

#[test]
fn sarif_lists_inputs_not_linted_and_not_the_compose_file() {
    let (_dir, out) = first_run("sarif");
    let log: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let notes = log["runs"][0]["invocations"][0]["toolExecutionNotifications"]
        .as_array()
        .unwrap();
    let uris: Vec<&str> = notes
        .iter()
        .map(|n| {
            n["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                .as_str()
                .unwrap()
        })
        .collect();
    assert_eq!(uris, ["broken.yaml", "chart"], "{notes:?}");
    assert!(!log.to_string().contains("compose.yaml"));
}

/// `fix` lists a file that is no manifest and not YAML either with the inputs not linted, as
/// `lint` does: in JSON's `errors`, and in JUnit as a skipped case rather than a passing one.
#[test]
fn fix_lists_a_file_that_is_no_manifest_with_the_inputs_not_linted() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.yaml"), "a: [unclosed\n").unwrap();
    let fix = |format: &str| {
        let out = Command::cargo_bin("golint-k8s")
            .unwrap()
            .current_dir(dir.path())
            .args(["fix", "--check", "--format", format, "."])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{format}");
        stdout(&out)
    };
    let v: serde_json::Value = serde_json::from_str(&fix("json")).unwrap();
    assert_eq!(v["errors"][0]["path"], "notes.yaml", "{v:#}");
    assert!(v["errors"][0]["message"]
        .as_str()
        .unwrap()
        .starts_with("not linted"));
    let x = fix("junit");
    assert!(
        x.contains(
            r#"<testsuite name="notes.yaml" tests="1" failures="0" errors="0" skipped="1">"#
        ),
        "{x}"
    );
    assert!(!x.contains(r#"file="notes.yaml"/>"#), "{x}");
}
