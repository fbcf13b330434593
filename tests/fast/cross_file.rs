//! Objects that act across files: a LimitRange and a VerticalPodAutoscaler written in one file
//! change what is found in another file of the same run (`src/k8s/index.rs`), as the API server
//! would apply them; linted alone, the other file does not see them.

use assert_cmd::Command;
use serde_json::Value;

fn lint(dir: &std::path::Path, args: &[&str]) -> Value {
    let out = Command::cargo_bin("golint-k8s")
        .unwrap()
        .current_dir(dir)
        .args(["lint", "--format", "json"])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.code() == Some(0) || out.status.code() == Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// (file, code) of every finding.
fn found(v: &Value) -> Vec<(String, String)> {
    let mut out: Vec<_> = v["findings"]
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
    out.sort();
    out
}

fn deployment(namespace: Option<&str>, env: &str) -> String {
    let ns = namespace
        .map(|n| format!("  namespace: {n}\n"))
        .unwrap_or_default();
    format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: api\n{ns}spec:\n  template:\n    spec:\n      containers:\n        - name: api\n          image: ghcr.io/acme/api:1.4.2\n{env}          resources:\n            requests: {{cpu: \"1\", memory: 1Gi}}\n"
    )
}

fn limit_range(namespace: Option<&str>) -> String {
    let ns = namespace
        .map(|n| format!("  namespace: {n}\n"))
        .unwrap_or_default();
    format!(
        "apiVersion: v1\nkind: LimitRange\nmetadata:\n  name: defaults\n{ns}spec:\n  limits:\n    - type: Container\n      default:\n        memory: 1Gi\n"
    )
}

#[test]
fn a_limit_range_in_one_file_applies_to_a_deployment_in_another() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("apps")).unwrap();
    std::fs::write(d.join("apps/api.yaml"), deployment(Some("shop"), "")).unwrap();
    std::fs::write(d.join("namespace.yaml"), limit_range(Some("shop"))).unwrap();

    // Together: the LimitRange's default limit is the container's, so GK101 fires and says where
    // the limit comes from.
    let both = lint(d, &["."]);
    let gk101: Vec<&Value> = both["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "GK101")
        .collect();
    assert_eq!(gk101.len(), 1, "{both:#}");
    assert_eq!(gk101[0]["file"], "apps/api.yaml");
    assert!(
        gk101[0]["notes"]
            .to_string()
            .contains("comes from LimitRange defaults (default, in namespace.yaml)"),
        "{:#}",
        gk101[0]
    );
    // Alone, the Deployment has no memory limit.
    let alone = lint(d, &["apps/api.yaml"]);
    assert!(
        !found(&alone).iter().any(|(_, c)| c == "GK101"),
        "{alone:#}"
    );
    // `fix` sees the same: it adds GOMEMLIMIT for the LimitRange's limit.
    let out = Command::cargo_bin("golint-k8s")
        .unwrap()
        .current_dir(d)
        .args(["fix", "--diff", ".", "--assume-go"])
        .output()
        .unwrap();
    let diff = String::from_utf8_lossy(&out.stdout);
    assert!(diff.contains("+            - name: GOMEMLIMIT"), "{diff}");
}

#[test]
fn across_files_only_written_namespaces_match() {
    // Across files only written namespaces match: a namespace-less object goes wherever it is
    // applied, and a tree of examples applies its files to different namespaces.
    for (lr_ns, app_ns, applies) in [
        (Some("shop"), Some("shop"), true),
        (None, None, false),
        (Some("default"), None, false),
        (Some("shop"), Some("billing"), false),
        (Some("shop"), None, false),
        (None, Some("shop"), false),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("a.yaml"), deployment(app_ns, "")).unwrap();
        std::fs::write(d.join("b.yaml"), limit_range(lr_ns)).unwrap();
        let v = lint(d, &["."]);
        assert_eq!(
            found(&v).iter().any(|(_, c)| c == "GK101"),
            applies,
            "LimitRange in {lr_ns:?}, Deployment in {app_ns:?}: {v:#}"
        );
    }
}

#[test]
fn a_vpa_in_another_file_makes_gomemlimit_stale() {
    let env = "          env:\n            - name: GOMEMLIMIT\n              valueFrom:\n                resourceFieldRef: {resource: limits.memory}\n";
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("api.yaml"),
        deployment(Some("shop"), env).replace(
            "requests: {cpu: \"1\", memory: 1Gi}",
            "requests: {cpu: \"1\", memory: 1Gi}\n            limits: {memory: 1Gi}",
        ),
    )
    .unwrap();
    let vpa = |mode: &str| {
        format!("apiVersion: autoscaling.k8s.io/v1\nkind: VerticalPodAutoscaler\nmetadata:\n  name: api\n  namespace: shop\nspec:\n  targetRef: {{apiVersion: apps/v1, kind: Deployment, name: api}}\n  updatePolicy: {{updateMode: {mode}}}\n")
    };
    std::fs::write(d.join("vpa.yaml"), vpa("InPlaceOrRecreate")).unwrap();
    let v = lint(d, &["."]);
    assert_eq!(
        found(&v)
            .iter()
            .filter(|(_, c)| c == "GK110")
            .collect::<Vec<_>>(),
        vec![&("api.yaml".to_string(), "GK110".to_string())],
        "{v:#}"
    );
    // A VPA that evicts instead: the new pod reads its env again.
    std::fs::write(d.join("vpa.yaml"), vpa("Recreate")).unwrap();
    let v = lint(d, &["."]);
    assert!(!found(&v).iter().any(|(_, c)| c == "GK110"), "{v:#}");
}

#[test]
fn a_namespace_less_vpa_reaches_a_namespace_less_workload_in_its_own_directory() {
    let env = "          env:\n            - name: GOMEMLIMIT\n              valueFrom:\n                resourceFieldRef: {resource: limits.memory}\n";
    let app = deployment(None, env).replace(
        "requests: {cpu: \"1\", memory: 1Gi}",
        "requests: {cpu: \"1\", memory: 1Gi}\n            limits: {memory: 1Gi}",
    );
    let vpa = "apiVersion: autoscaling.k8s.io/v1\nkind: VerticalPodAutoscaler\nmetadata:\n  name: api\nspec:\n  targetRef: {apiVersion: apps/v1, kind: Deployment, name: api}\n  updatePolicy: {updateMode: InPlaceOrRecreate}\n";
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for sub in ["base", "other"] {
        std::fs::create_dir(d.join(sub)).unwrap();
    }
    // A Kustomize base: both files side by side, the namespace set for both by the overlay.
    std::fs::write(d.join("base/api.yaml"), &app).unwrap();
    std::fs::write(d.join("base/vpa.yaml"), vpa).unwrap();
    // The same Deployment elsewhere is not that VPA's target.
    std::fs::write(d.join("other/api.yaml"), &app).unwrap();
    let v = lint(d, &["."]);
    let stale: Vec<_> = found(&v)
        .into_iter()
        .filter(|(_, c)| c == "GK110")
        .collect();
    assert_eq!(
        stale,
        vec![("base/api.yaml".to_string(), "GK110".to_string())],
        "{v:#}"
    );
}

/// A file named on its own inside a git repository (what pre-commit passes) is judged with the
/// LimitRanges of the whole repository, as `lint .` at its root judges it; outside a repository
/// it stands alone.
#[test]
fn a_file_named_alone_sees_the_limit_ranges_of_its_repository() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir_all(d.join("apps")).unwrap();
    std::fs::create_dir_all(d.join("platform")).unwrap();
    std::fs::write(d.join("apps/api.yaml"), deployment(Some("shop"), "")).unwrap();
    std::fs::write(d.join("platform/limits.yaml"), limit_range(Some("shop"))).unwrap();
    // Outside a repository, alone: no memory limit.
    assert!(!found(&lint(d, &["apps/api.yaml", "--assume-go"]))
        .iter()
        .any(|(_, c)| c == "GK101"));
    std::fs::create_dir(d.join(".git")).unwrap();
    for args in [&["apps/api.yaml"][..], &["."]] {
        let v = lint(d, &[args, &["--assume-go"]].concat());
        let gk101: Vec<&Value> = v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["code"] == "GK101")
            .collect();
        assert_eq!(gk101.len(), 1, "{args:?}: {v:#}");
        assert!(
            gk101[0]["notes"]
                .to_string()
                .contains("platform/limits.yaml"),
            "{:#}",
            gk101[0]
        );
    }
}
