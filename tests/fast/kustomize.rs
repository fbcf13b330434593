//! What Kustomize does to a manifest, as the runtime decision and the rules see it: an `images`
//! entry of a kustomization that includes the manifest renames the image the decision reads, and
//! a container a patch adds to its base object is whole, so the rules that report something
//! missing run on it.

use assert_cmd::Command;
use serde_json::Value;

/// A repository in a temporary directory: `.git` marks its root, as in a checkout.
fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".git")).unwrap();
    for (path, text) in files {
        let p = dir.path().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    dir
}

fn run(dir: &std::path::Path, args: &[&str]) -> Value {
    let out = Command::cargo_bin("golint-k8s")
        .unwrap()
        .current_dir(dir)
        .args(["lint", "--format", "json"])
        // What these tests judge is each file as the tree around it renames and patches it, not
        // the builds of the roots (see tests/heavy/helm.rs for those).
        .args(["--extend-exclude", "**/kustomization.yaml"])
        .args(args)
        .arg(".")
        .output()
        .unwrap();
    assert!(
        out.status.code() == Some(0) || out.status.code() == Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The runtime decision of the container named `name`.
fn runtime(v: &Value, name: &str) -> Value {
    v["containers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["container"] == name)
        .unwrap_or_else(|| panic!("no container {name} in {v}"))["runtime"]
        .clone()
}

fn deployment(name: &str, containers: &str) -> String {
    format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\nspec:\n  template:\n    spec:\n      containers:\n{containers}"
    )
}

fn container(name: &str, image: &str, more: &str) -> String {
    format!(
        "        - name: {name}\n          image: {image}\n{more}          resources:\n            limits: {{cpu: \"1\", memory: 1Gi}}\n"
    )
}

/// A kubebuilder project names its image `controller` in config/manager/manager.yaml and the
/// real one in a kustomization above it; the root Dockerfile builds it from the root go.mod.
#[test]
fn a_kustomization_images_entry_renames_the_image_the_decision_reads() {
    let manager = deployment(
        "controller-manager",
        &container("manager", "controller:latest", ""),
    );
    let monitor = deployment(
        "monitor",
        &(container("prom", "prometheus", "") + &container("logs", "grafana/loki", "")),
    );
    let dir = tree(&[
        ("go.mod", "module github.com/acme/foo-manager\n\ngo 1.24.0\n"),
        ("cmd/main.go", "package main\n\nfunc main() {}\n"),
        (
            "Dockerfile",
            "FROM golang:1.24 AS builder\nCOPY . .\nRUN go build -o manager cmd/main.go\nFROM gcr.io/distroless/static:nonroot\nCOPY --from=builder /manager .\nENTRYPOINT [\"/manager\"]\n",
        ),
        ("config/manager/manager.yaml", &manager),
        ("config/manager/kustomization.yaml", "resources:\n- manager.yaml\n"),
        (
            "config/default/kustomization.yaml",
            "resources:\n- ../manager\nimages:\n- name: controller\n  newName: quay.io/acme/foo-manager\n  newTag: v1.2.0\n",
        ),
        ("deploy/monitor.yaml", &monitor),
        (
            "deploy/kustomization.yaml",
            "resources:\n- monitor.yaml\nimages:\n- name: prometheus\n  newName: quay.io/prometheus/prometheus\n  newTag: v2.40.0\n- name: grafana/loki\n  newName: registry.example/mirror/grafana/loki\n  newTag: 2.9.1\n",
        ),
    ]);
    let v = run(dir.path(), &["--show-containers"]);
    let manager = runtime(&v, "manager");
    assert_eq!(manager["language"], "go", "{manager}");
    assert_eq!(manager["go_version"], "1.24", "{manager}");
    let evidence = manager["evidence"].as_str().unwrap();
    assert!(
        evidence.contains(
            "image controller renamed by config/default/kustomization.yaml to quay.io/acme/foo-manager:v1.2.0"
        ),
        "{evidence}"
    );
    // The catalog reads the rendered image.
    let prom = runtime(&v, "prom");
    assert_eq!(prom["language"], "go", "{prom}");
    assert!(
        prom["evidence"]
            .as_str()
            .unwrap()
            .contains("quay.io/prometheus/prometheus:v2.40.0 is Prometheus"),
        "{prom}"
    );
    // A mirror keeps the program of the name written.
    assert_eq!(runtime(&v, "logs")["language"], "go");
}

/// Findings of `code` on the container named `name`.
fn findings_on(v: &Value, code: &str, name: &str) -> usize {
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == code && f["container"] == name)
        .count()
}

/// A patch that adds a sidecar: the sidecar is a whole container (its missing GOMEMLIMIT is
/// reported), the container it patches is partial (its base may set GOMEMLIMIT).
#[test]
fn a_container_a_patch_adds_is_whole() {
    let go = "          env:\n            - {name: GOGC, value: \"100\"}\n";
    let base = deployment("api", &container("api", "ghcr.io/acme/api:1.0", go));
    let patch = deployment(
        "api",
        &(container("api", "ghcr.io/acme/api:1.0", go)
            + &container("sidecar", "ghcr.io/acme/sidecar:1.0", go)),
    );
    let orphan = deployment(
        "elsewhere",
        &container("helper", "ghcr.io/acme/helper:1.0", go),
    );
    let dir = tree(&[
        ("base/deployment.yaml", &base),
        ("base/kustomization.yaml", "resources:\n- deployment.yaml\n"),
        ("overlay/sidecar.yaml", &patch),
        ("overlay/orphan.yaml", &orphan),
        (
            "overlay/kustomization.yaml",
            "resources:\n- ../base\npatches:\n- path: sidecar.yaml\npatchesStrategicMerge:\n- orphan.yaml\n",
        ),
    ]);
    let v = run(dir.path(), &[]);
    assert_eq!(findings_on(&v, "GK101", "sidecar"), 1, "{v}");
    // The patched container, and one of an object the base does not have, stay partial.
    let patched: Vec<_> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "GK101" && f["file"].as_str().unwrap().contains("overlay"))
        .map(|f| f["container"].clone())
        .collect();
    assert_eq!(patched, [Value::from("sidecar")], "{v}");
    // The base's own container is whole, as before.
    assert_eq!(findings_on(&v, "GK101", "api"), 1, "{v}");
}

/// The config's image patterns name images as they run: a pattern for the rendered image
/// matches a container whose manifest writes the placeholder.
#[test]
fn config_image_patterns_match_the_rendered_image() {
    let manager = deployment(
        "controller-manager",
        &container("manager", "controller:latest", ""),
    );
    let dir = tree(&[
        (
            ".golint-k8s.yaml",
            "non-go-images: [\"quay.io/acme/*\"]\n",
        ),
        ("config/manager/manager.yaml", &manager),
        (
            "config/manager/kustomization.yaml",
            "resources:\n- manager.yaml\nimages:\n- name: controller\n  newName: quay.io/acme/foo-manager\n  newTag: v1.2.0\n",
        ),
    ]);
    let v = run(dir.path(), &["--show-containers"]);
    let manager = runtime(&v, "manager");
    assert_eq!(manager["language"], "other", "{manager}");
    assert!(
        manager["evidence"]
            .as_str()
            .unwrap()
            .contains("non-go-images \"quay.io/acme/*\""),
        "{manager}"
    );
}

/// A base and an overlay that patches it.
fn overlay_tree(overlay_resources: &str) -> tempfile::TempDir {
    tree(&[
        (
            "base/deployment.yaml",
            &deployment("api", &container("api", "ghcr.io/acme/api:1.0", "")),
        ),
        (
            "base/kustomization.yaml",
            "resources:\n  - deployment.yaml\n",
        ),
        (
            "overlays/prod/kustomization.yaml",
            &format!("resources:\n{overlay_resources}"),
        ),
    ])
}

/// `lint --format json [extra] .` in `dir` with neither kustomize nor kubectl on PATH.
fn lint_without_tools(dir: &std::path::Path, extra: &[&str]) -> std::process::Output {
    let no_tools = tempfile::tempdir().unwrap();
    Command::cargo_bin("golint-k8s")
        .unwrap()
        .current_dir(dir)
        .env("PATH", no_tools.path())
        .args(["lint", "--format", "json"])
        .args(extra)
        .arg(".")
        .output()
        .unwrap()
}

#[test]
fn without_kustomize_or_kubectl_an_overlay_is_an_input_not_linted() {
    let dir = overlay_tree("  - ../../base\n");
    let out = lint_without_tools(dir.path(), &[]);
    assert_eq!(out.status.code(), Some(2), "the findings are incomplete");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let errors = v["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0]["path"], "overlays/prod");
    let message = errors[0]["message"].as_str().unwrap();
    assert!(message.contains("kustomize build"), "{message}");
    // The base's files are still linted one by one.
    assert!(v["summary"]["files"].as_u64().unwrap() >= 1, "{v}");
    // Excluding the kustomizations says: lint their files only (excluding only the overlay's
    // would make the base a root of its own).
    let out = lint_without_tools(dir.path(), &["--extend-exclude", "**/kustomization.yaml"]);
    assert_ne!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn an_overlay_with_a_remote_resource_is_not_built_and_says_so() {
    // A build would fetch from the network: never done by a lint, whatever is on PATH.
    let dir = overlay_tree("  - ../../base\n  - https://github.com/acme/platform//deploy?ref=v1\n");
    let out = lint_without_tools(dir.path(), &[]);
    assert_ne!(out.status.code(), Some(2), "not built is no failure");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["errors"], serde_json::json!([]));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("overlays/prod: a kustomization not built (overlays/prod/kustomization.yaml needs the remote resource https://github.com/acme/platform//deploy?ref=v1)"),
        "{err}"
    );
}

#[test]
fn parse_only_and_index_only_build_nothing() {
    // They time reading the files alone: without kustomize they still succeed, silently.
    let dir = overlay_tree("  - ../../base\n");
    for mode in ["--parse-only", "--index-only"] {
        let out = lint_without_tools(dir.path(), &[mode]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{mode}: {err}");
        assert!(!err.contains("kustomize"), "{mode}: {err}");
    }
}

#[test]
fn an_overlay_naming_a_missing_file_is_refused_before_any_build() {
    // A checkout of part of a repository names files that are not there: Kustomize would stop
    // at them, so no build is started, and the message names the file (no tool is needed to say
    // so, and the run does not fail for the want of one).
    let cases = [
        ("  - ../../base\n  - ingress.yaml\n", "overlays/prod/kustomization.yaml names overlays/prod/ingress.yaml, which is not there"),
        ("  - ../../base\n  - ../../gone\n", "overlays/prod/kustomization.yaml names gone, which is not there"),
        ("  - ../../base\n  - ../../base/deployment.yaml\n", "overlays/prod/kustomization.yaml names base/deployment.yaml, a file outside its directory"),
        ("  - ../../base\nconfigMapGenerator:\n  - name: settings\n    files: [app=settings.properties]\n", "overlays/prod/kustomization.yaml names overlays/prod/settings.properties, which is not there"),
        ("  - ../../base\npatches:\n  - path: memory.yaml\n", "overlays/prod/kustomization.yaml names overlays/prod/memory.yaml, which is not there"),
    ];
    for (resources, said) in cases {
        let dir = overlay_tree(resources);
        let out = lint_without_tools(dir.path(), &[]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_ne!(out.status.code(), Some(2), "{resources}: {err}");
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        let errors = v["errors"].as_array().unwrap();
        assert_eq!(errors.len(), 1, "{resources}: {errors:?}");
        assert_eq!(errors[0]["path"], "overlays/prod");
        let message = errors[0]["message"].as_str().unwrap();
        assert!(message.contains(said), "{resources}: {message}");
    }
    // A base directory without a kustomization is named as such.
    let dir = overlay_tree("  - ../../base\n  - ../../plain\n");
    std::fs::create_dir_all(dir.path().join("plain")).unwrap();
    let out = lint_without_tools(dir.path(), &[]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        v["errors"][0]["message"]
            .as_str()
            .unwrap()
            .contains("names plain, a directory without a kustomization"),
        "{v}"
    );
}

#[test]
fn a_base_whose_kustomization_is_too_large_to_read_is_not_called_missing() {
    // The linter reads kustomizations up to 1 MiB; one past that is still a kustomization, and
    // Kustomize may build it: the overlay goes to the build (here: no tool, so exit 2), not
    // refused as naming a directory without one.
    let dir = overlay_tree("  - ../../base\n");
    let padding = format!("# {}\n", "x".repeat(100)).repeat(11_000);
    std::fs::write(
        dir.path().join("base/kustomization.yaml"),
        format!("{padding}resources:\n  - deployment.yaml\n"),
    )
    .unwrap();
    let out = lint_without_tools(dir.path(), &[]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        !v.to_string()
            .contains("a directory without a kustomization"),
        "{v}"
    );
    assert_eq!(out.status.code(), Some(2), "{v}");
}
