//! Helm and Kustomize with the real tools: `helm template` renders the test chart under
//! `fixtures/charts/goservice`, `kustomize build` the base and overlay under `fixtures/kustomize`,
//! and golint-k8s lints what they print, maps findings back to template lines and values keys,
//! and turns fixes into values changes. Every mapping to a values key is proven by rendering the
//! chart again with that key set to a marker and finding the marker on the finding's line.

use crate::common;
use crate::tools;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

const CHART: &str = "fixtures/charts/goservice";

/// PATH with the pinned helm and kustomize first.
fn path_with(t: &tools::Tools) -> std::ffi::OsString {
    let mut dirs = vec![t.helm.parent().unwrap().to_path_buf()];
    dirs.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    std::env::join_paths(dirs).unwrap()
}

fn golint(t: &tools::Tools, args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_golint-k8s"));
    c.args(args)
        .current_dir(common::root())
        .env("PATH", path_with(t))
        .env_remove("NO_COLOR")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    run_with_stdin(c, stdin)
}

fn run_with_stdin(mut c: Command, stdin: Option<&[u8]>) -> Output {
    c.stdin(if stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    });
    let mut child = c.spawn().unwrap();
    if let Some(bytes) = stdin {
        use std::io::Write;
        let mut pipe = child.stdin.take().unwrap();
        pipe.write_all(bytes).unwrap();
    }
    child.wait_with_output().unwrap()
}

/// Run a pinned tool from the repository root; it must succeed. Its standard output.
fn tool(program: &Path, args: &[&str]) -> Vec<u8> {
    let out = Command::new(program)
        .args(args)
        .current_dir(common::root())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{} {args:?}: {}",
        program.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn helm(t: &tools::Tools, args: &[&str]) -> Vec<u8> {
    tool(&t.helm, args)
}

fn findings(out: &Output) -> Vec<Value> {
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    v["findings"].as_array().unwrap().clone()
}

fn find<'a>(fs: &'a [Value], code: &str, container: &str) -> &'a Value {
    fs.iter()
        .find(|f| f["code"] == code && f["container"] == container)
        .unwrap_or_else(|| panic!("no {code} for {container} in {fs:#?}"))
}

#[test]
fn helm_findings_point_at_template_lines_and_values_keys() {
    let Some(t) = tools::ensure() else { return };
    let out = golint(&t, &["lint", "--helm", CHART, "--format", "json"], None);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let fs = findings(&out);
    let deployment = format!("{CHART}/templates/deployment.yaml");
    let expect = [
        ("GK104", "api", 24, Some("env[0].value")),
        ("GK201", "api", 27, Some("resources.limits.cpu")),
        ("GK102", "api", 27, Some("resources.requests.memory")),
        ("GK203", "proxy", 34, Some("proxy.cpuLimit")),
        ("GK101", "proxy", 35, None),
    ];
    for (code, container, line, key) in expect {
        let f = find(&fs, code, container);
        assert_eq!(f["source_template"], "goservice/templates/deployment.yaml");
        let c = &f["chart"];
        assert_eq!(c["file"], deployment.as_str(), "{f:#}");
        assert_eq!(c["line"], line, "{code} {container}: {f:#}");
        assert_eq!(c["values_key"].as_str(), key, "{code} {container}: {f:#}");
        assert!(c["unmapped"].is_null());
    }
    // The worker's container comes from a helper template: said, not guessed.
    let w = find(&fs, "GK101", "worker");
    assert!(w["chart"]["line"].is_null());
    let why = w["chart"]["unmapped"].as_str().unwrap();
    assert!(why.contains("goservice.workerContainer"), "{why}");
}

/// The proof of a values-key mapping: set the key to a marker, render again, and the marker is
/// on the line the finding was on.
#[test]
fn every_mapped_values_key_is_what_renders_the_finding() {
    let Some(t) = tools::ensure() else { return };
    let out = golint(&t, &["lint", "--helm", CHART, "--format", "json"], None);
    let fs = findings(&out);
    let dir = tempfile::tempdir().unwrap();
    let mut checked = 0;
    for f in &fs {
        let Some(key) = f["chart"]["values_key"].as_str() else {
            continue;
        };
        let line = f["line"].as_u64().unwrap() as usize;
        let marker = "golint-marker";
        let rendered = match key.split_once('[') {
            // A scalar key takes the marker with --set.
            None => helm(
                &t,
                &[
                    "template",
                    "release-name",
                    CHART,
                    "--set-string",
                    &format!("{key}={marker}"),
                ],
            ),
            // `--set list[0].x` would replace the whole list, so the list is passed whole, from
            // values.yaml, with only that field changed (JSON is YAML to helm).
            Some((list, rest)) => {
                let (index, field) = rest.split_once("].").unwrap();
                let mut values = values_json();
                let item = &mut values[list][index.parse::<usize>().unwrap()];
                item[field] = Value::String(marker.into());
                let file = dir.path().join("marker.json");
                std::fs::write(&file, serde_json::json!({ list: values[list] }).to_string())
                    .unwrap();
                helm(
                    &t,
                    &[
                        "template",
                        "release-name",
                        CHART,
                        "--values",
                        file.to_str().unwrap(),
                    ],
                )
            }
        };
        let text = String::from_utf8(rendered).unwrap();
        let at = text.lines().nth(line - 1).unwrap_or("");
        assert!(
            at.contains(marker),
            "{} at line {line}: setting {key} did not change that line ({at:?})",
            f["code"]
        );
        checked += 1;
    }
    assert!(checked >= 4, "only {checked} values keys were checked");
}

#[test]
fn piped_helm_output_keeps_the_template_and_maps_with_chart() {
    let Some(t) = tools::ensure() else { return };
    let rendered = helm(&t, &["template", "release-name", CHART]);
    let plain = golint(&t, &["lint", "-", "--format", "json"], Some(&rendered));
    let fs = findings(&plain);
    assert!(!fs.is_empty());
    for f in &fs {
        assert!(f["source_template"]
            .as_str()
            .unwrap()
            .starts_with("goservice/templates/"));
        // Without the chart's sources nothing is guessed.
        assert!(f.get("chart").is_none(), "{f:#}");
    }
    let mapped = golint(
        &t,
        &["lint", "-", "--chart", CHART, "--format", "json"],
        Some(&rendered),
    );
    let fs2 = findings(&mapped);
    assert_eq!(fs.len(), fs2.len());
    assert_eq!(
        find(&fs2, "GK104", "api")["chart"]["values_key"],
        "env[0].value"
    );
    // Human output says where the finding came from.
    let human = golint(&t, &["lint", "-", "--chart", CHART], Some(&rendered));
    let text = String::from_utf8_lossy(&human.stdout);
    assert!(
        text.contains("rendered from goservice/templates/deployment.yaml"),
        "{text}"
    );
    assert!(text.contains("values key"), "{text}");
}

#[test]
fn sarif_points_at_the_template_line() {
    let Some(t) = tools::ensure() else { return };
    let out = golint(&t, &["lint", "--helm", CHART, "--format", "sarif"], None);
    let log: Value = serde_json::from_slice(&out.stdout).unwrap();
    let results = log["runs"][0]["results"].as_array().unwrap();
    let r = results
        .iter()
        .find(|r| r["ruleId"] == "GK104")
        .expect("GK104 in SARIF");
    let related = r["relatedLocations"].as_array().unwrap();
    let line = related
        .iter()
        .find(|l| l["physicalLocation"]["region"]["startLine"] == 24)
        .unwrap_or_else(|| panic!("no related location at line 24: {related:#?}"));
    assert!(line["physicalLocation"]["artifactLocation"]["uri"]
        .as_str()
        .unwrap()
        .ends_with("charts/goservice/templates/deployment.yaml"));
}

#[test]
fn fix_helm_prints_values_that_make_the_chart_render_clean() {
    let Some(t) = tools::ensure() else { return };
    let chart = common::root().join(CHART);
    let before = snapshot(&chart);
    let out = golint(&t, &["fix", "--helm", CHART, "--unsafe-fixes"], None);
    assert_eq!(out.status.code(), Some(1));
    let values = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    // The header names GOMEMLIMIT too: look at the values themselves.
    let parsed = common::yaml_to_json(&values);
    let env = parsed["env"]
        .as_array()
        .unwrap_or_else(|| panic!("{values}"));
    assert!(
        env.iter()
            .any(|e| e["name"] == "GOMEMLIMIT" && e["value"] == "512MiB"),
        "{values}"
    );
    assert!(stderr.contains("nothing was written"), "{stderr}");
    // The worker's fix cannot be a values change, and the note says where to edit instead.
    assert!(stderr.contains("goservice.workerContainer"), "{stderr}");
    assert_eq!(snapshot(&chart), before, "fix --helm changed the chart");

    // Rendering with the suggested values removes the findings the suggestion covered.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("fix-values.yaml");
    std::fs::write(&file, &values).unwrap();
    let after = golint(
        &t,
        &[
            "lint",
            "--helm",
            CHART,
            "--values",
            file.to_str().unwrap(),
            "--format",
            "json",
        ],
        None,
    );
    let left = findings(&after);
    for (code, container) in [("GK104", "api"), ("GK102", "api"), ("GK201", "api")] {
        assert!(
            !left
                .iter()
                .any(|f| f["code"] == code && f["container"] == container),
            "{code} on {container} is still there after the suggested values:\n{values}"
        );
    }
    // What no values key can change is still reported.
    find(&left, "GK101", "worker");
}

#[test]
fn fix_on_rendered_stdin_writes_only_stdout_and_says_where_fixes_belong() {
    let Some(t) = tools::ensure() else { return };
    let rendered = helm(&t, &["template", "release-name", CHART]);
    let out = golint(&t, &["fix", "-"], Some(&rendered));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("belongs in the chart"), "{stderr}");
    let fixed = String::from_utf8(out.stdout).unwrap();
    assert!(fixed.contains("512MiB"), "{fixed}");
    assert_ne!(fixed.as_bytes(), rendered.as_slice());
}

#[test]
fn without_helm_on_path_the_error_says_what_to_install() {
    let empty = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_golint-k8s"))
        .args(["lint", "--helm", CHART])
        .current_dir(common::root())
        .env("PATH", empty.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("no `helm` was found on PATH"), "{stderr}");
    assert!(stderr.contains("Install Helm 3"), "{stderr}");
    assert!(stderr.contains("| golint-k8s lint -"), "{stderr}");
}

#[test]
fn a_failing_render_is_a_usage_error_with_helms_message() {
    let Some(t) = tools::ensure() else { return };
    let out = golint(
        &t,
        &["lint", "--helm", CHART, "--set", "replicaCount={{"],
        None,
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("helm template"), "{stderr}");
    let out = golint(&t, &["lint", "--helm", "fixtures/kustomize"], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a Helm chart"));
}

#[test]
fn kustomize_overlay_limits_are_linted() {
    let Some(t) = tools::ensure() else { return };
    let build = |dir: &str| tool(&t.kustomize, &["build", dir]);
    let base = golint(
        &t,
        &["lint", "-", "--format", "json"],
        Some(&build("fixtures/kustomize/base")),
    );
    let base = findings(&base);
    assert!(base.iter().all(|f| f["code"] == "GK401"), "{base:#?}");
    let prod = golint(
        &t,
        &["lint", "-", "--format", "json"],
        Some(&build("fixtures/kustomize/overlays/prod")),
    );
    let prod = findings(&prod);
    for code in ["GK101", "GK102", "GK201"] {
        let f = find(&prod, code, "ledger");
        // The overlay put the object in its namespace: the finding names it.
        assert_eq!(f["object"]["namespace"], "payments");
    }
}

/// The chart's values.yaml as JSON (scalars as strings).
fn values_json() -> Value {
    common::yaml_to_json(
        &std::fs::read_to_string(common::root().join(CHART).join("values.yaml")).unwrap(),
    )
}

/// Every file under a directory with its bytes.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push((p.clone(), std::fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

/// A repository that is only a chart: `lint .` renders it with the real `helm` and the chart's
/// own values, and its findings point back at the template lines and values keys, as with
/// `--helm` (the chart's values set `GOMEMLIMIT: 512Mi`, which Go refuses at start-up).
#[test]
fn a_chart_found_in_a_walk_is_rendered_and_mapped() {
    let Some(t) = tools::ensure() else { return };
    let repo = tempfile::tempdir().unwrap();
    let status = Command::new("cp")
        .arg("-R")
        .arg(common::root().join(CHART))
        .arg(repo.path().join("goservice"))
        .status()
        .unwrap();
    assert!(status.success());
    std::fs::create_dir(repo.path().join(".git")).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_golint-k8s"))
        .args(["lint", ".", "--format", "json"])
        .current_dir(repo.path())
        .env("PATH", path_with(&t))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("goservice is a Helm chart: linted as `helm template` renders it"));
    let fs = findings(&out);
    let gk104 = find(&fs, "GK104", "api");
    assert_eq!(
        gk104["chart"]["file"], "./goservice/templates/deployment.yaml",
        "{gk104:#}"
    );
    assert_eq!(gk104["chart"]["line"], 24, "{gk104:#}");
    assert_eq!(gk104["chart"]["values_key"], "env[0].value", "{gk104:#}");
    // `fix .` reports the render's findings but writes nothing: the fix belongs in the chart.
    let before = snapshot(repo.path());
    let out = Command::new(env!("CARGO_BIN_EXE_golint-k8s"))
        .args(["fix", "."])
        .current_dir(repo.path())
        .env("PATH", path_with(&t))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("rendered from a Helm chart, so not fixed here"),
        "{err}"
    );
    assert_eq!(snapshot(repo.path()), before);
    // Without helm: one input not linted, and the findings are incomplete.
    let empty = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_golint-k8s"))
        .args(["lint", ".", "--format", "sarif"])
        .current_dir(repo.path())
        .env("PATH", empty.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("a Helm chart, not linted"));
}

/// A chart met in a walk is rendered with the values files that the config governing its
/// Chart.yaml names in `chart-values`, after the chart's own: values-prod.yaml sets GOMEMLIMIT
/// above the memory limit, a finding (GK103) only that file gives, mapped back to the template
/// line and values key as the chart's own findings are. An entry that names no file is a note.
#[test]
fn a_walked_chart_is_rendered_with_the_configs_chart_values() {
    let Some(t) = tools::ensure() else { return };
    let repo = tempfile::tempdir().unwrap();
    let status = Command::new("cp")
        .arg("-R")
        .arg(common::root().join(CHART))
        .arg(repo.path().join("goservice"))
        .status()
        .unwrap();
    assert!(status.success());
    std::fs::create_dir(repo.path().join(".git")).unwrap();
    std::fs::write(
        repo.path().join("goservice/values-prod.yaml"),
        "env:\n  - name: GOMEMLIMIT\n    value: 2GiB\n",
    )
    .unwrap();
    let lint = || {
        Command::new(env!("CARGO_BIN_EXE_golint-k8s"))
            .args(["lint", ".", "--format", "json"])
            .current_dir(repo.path())
            .env("PATH", path_with(&t))
            .output()
            .unwrap()
    };
    let out = lint();
    assert!(!findings(&out).iter().any(|f| f["code"] == "GK103"));
    assert!(String::from_utf8_lossy(&out.stderr).contains("with the chart's own values"));

    std::fs::write(
        repo.path().join(".golint-k8s.yaml"),
        "chart-values: [values-prod.yaml, \"values-staging-*.yaml\"]\n",
    )
    .unwrap();
    let out = lint();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("goservice is a Helm chart: linted as `helm template` renders it with the chart's values and then values-prod.yaml (chart-values)"),
        "{err}"
    );
    assert!(
        err.contains("note: goservice: chart-values entry 'values-staging-*.yaml' matches no file"),
        "{err}"
    );
    let fs = findings(&out);
    let gk103 = find(&fs, "GK103", "api");
    assert!(
        gk103["message"].as_str().unwrap().contains("2GiB"),
        "{gk103:#}"
    );
    // The template line and values key; which values file set the key is not part of the map.
    assert_eq!(
        gk103["chart"]["file"], "./goservice/templates/deployment.yaml",
        "{gk103:#}"
    );
    assert_eq!(gk103["chart"]["line"], 24, "{gk103:#}");
    assert_eq!(gk103["chart"]["values_key"], "env[0].value", "{gk103:#}");
}

/// A repository with a base Deployment (a Go service whose memory limit is 512Mi) and two
/// overlays: prod patches the limit down to 256Mi, dev only prefixes names. `gomemlimit` is the
/// base's env entry, or nothing.
fn base_and_overlays(gomemlimit: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    let files = [
        (
            "base/deployment.yaml",
            format!(
                "apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
  annotations:
    golint-k8s.io/runtime: go
spec:
  template:
    spec:
      containers:
        - name: api
          image: ghcr.io/acme/api:1.0
          env:
            - name: GOMAXPROCS
              value: \"1\"
{gomemlimit}          resources:
            requests:
              cpu: 500m
              memory: 512Mi
            limits:
              memory: 512Mi
"
            ),
        ),
        (
            "base/kustomization.yaml",
            "resources:\n  - deployment.yaml\n".to_string(),
        ),
        (
            "overlays/prod/kustomization.yaml",
            "resources:\n  - ../../base\nnamePrefix: prod-\npatches:\n  - path: memory.yaml\n"
                .to_string(),
        ),
        (
            "overlays/prod/memory.yaml",
            "apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
spec:
  template:
    spec:
      containers:
        - name: api
          resources:
            requests:
              memory: 256Mi
            limits:
              memory: 256Mi
"
            .to_string(),
        ),
        (
            "overlays/dev/kustomization.yaml",
            "resources:\n  - ../../base\nnamePrefix: dev-\n".to_string(),
        ),
    ];
    for (path, text) in files {
        let p = dir.path().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    dir
}

fn golint_in(t: &tools::Tools, dir: &Path, args: &[&str]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_golint-k8s"));
    c.args(args)
        .current_dir(dir)
        .env("PATH", path_with(t))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    run_with_stdin(c, None)
}

#[test]
fn an_overlay_that_lowers_the_limit_below_the_base_gomemlimit_is_reported_on_the_overlay() {
    let Some(t) = tools::ensure() else { return };
    let dir =
        base_and_overlays("            - name: GOMEMLIMIT\n              value: \"460MiB\"\n");
    let out = golint_in(&t, dir.path(), &["lint", "--format", "json", "."]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let fs = findings(&out);
    // The base is right on its own, and so is the dev overlay, which keeps its limit.
    assert_eq!(fs.len(), 1, "{fs:#?}");
    let f = &fs[0];
    assert_eq!(f["code"], "GK103");
    assert_eq!(f["file"], "overlays/prod (kustomize build)");
    assert_eq!(f["object"]["name"], "prod-api");
    // Traced to the line that writes the value, in the base.
    assert_eq!(f["kustomize"]["file"], "base/deployment.yaml");
    assert_eq!(f["kustomize"]["line"], 17);
    assert_eq!(f["fix"], Value::Null, "a build is never rewritten");
    // The same in the human report, with the file that writes the value.
    let out = golint_in(&t, dir.path(), &["lint", "."]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("in the build of overlays/prod (kustomize build): written at base/deployment.yaml:17:22"),
        "{text}"
    );
}

#[test]
fn fix_on_a_base_reports_what_the_overlay_makes_of_it() {
    let Some(t) = tools::ensure() else { return };
    let dir = base_and_overlays("");
    // Before: the base lacks GOMEMLIMIT for its 512Mi, the prod build for its 256Mi.
    let out = golint_in(&t, dir.path(), &["lint", "--format", "json", "."]);
    let fs = findings(&out);
    let on = |fs: &[Value], file: &str, code: &str| {
        fs.iter()
            .filter(|f| f["file"] == file && f["code"] == code)
            .count()
    };
    assert_eq!(on(&fs, "base/deployment.yaml", "GK101"), 1, "{fs:#?}");
    assert_eq!(
        on(&fs, "overlays/prod (kustomize build)", "GK101"),
        1,
        "{fs:#?}"
    );
    // The dev build adds nothing to what the base has: it is not said twice.
    assert_eq!(
        on(&fs, "overlays/dev (kustomize build)", "GK101"),
        0,
        "{fs:#?}"
    );
    assert_eq!(
        fs.iter()
            .find(|f| f["file"] == "overlays/prod (kustomize build)")
            .unwrap()["kustomize"]["file"],
        "overlays/prod/memory.yaml"
    );

    // The fix sizes GOMEMLIMIT for the base's limit; the prod overlay makes it too large, and
    // the fix says so, from a build made after the fix was written.
    let out = golint_in(&t, dir.path(), &["fix", "--format", "json", "."]);
    let base = std::fs::read_to_string(dir.path().join("base/deployment.yaml")).unwrap();
    assert!(base.contains("- name: GOMEMLIMIT"), "{base}");
    let fs = findings(&out);
    assert_eq!(
        on(&fs, "overlays/prod (kustomize build)", "GK103"),
        1,
        "{fs:#?}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(fs.len(), 1, "{fs:#?}");
    assert_eq!(out.status.code(), Some(1));
    // And lint agrees.
    let out = golint_in(&t, dir.path(), &["lint", "--format", "json", "."]);
    let again = findings(&out);
    assert_eq!(again.len(), 1, "{again:#?}");
    assert_eq!(again[0]["code"], "GK103");
}

#[test]
fn every_overlay_refused_before_a_build_is_one_kustomize_refuses() {
    // golint-k8s refuses a root without building it when a file it names is not there, or lies
    // beyond its kustomization's directory. The pinned kustomize is the oracle: each root so
    // refused under fixtures/ (parts of real repositories, with files left out) must fail
    // `kustomize build` too. A root wrongly refused would lose its overlay's findings.
    let Some(t) = tools::ensure() else { return };
    let out = golint(&t, &["lint", "--format", "json", "fixtures"], None);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let refused: Vec<String> = v["errors"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| {
            let m = e["message"].as_str().unwrap_or_default();
            m.contains("kustomization")
                && (m.contains(", which is not there")
                    || m.contains(", a file outside its directory")
                    || m.contains(", a directory without a kustomization"))
        })
        .map(|e| e["path"].as_str().unwrap().to_string())
        .collect();
    assert!(refused.len() >= 50, "{:#?}", v["errors"]);
    for root in &refused {
        let built = Command::new(&t.kustomize)
            .args(["build", root])
            .current_dir(common::root())
            .output()
            .unwrap();
        assert!(
            !built.status.success(),
            "golint-k8s refused {root} before building it, but kustomize builds it"
        );
    }
}
