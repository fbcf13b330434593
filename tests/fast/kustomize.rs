//! What Kustomize does to a manifest, as the runtime decision and the rules see it: an `images`
//! entry of a kustomization that includes the manifest renames the image the decision reads.

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
