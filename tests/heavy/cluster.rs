//! `golint-k8s cluster` against a real kube-apiserver with a real etcd on loopback, built and
//! started by `tests/apiserver.sh` (the binaries are cached outside the checkout). Objects are
//! created through the API; the audit runs as the real binary with a kubeconfig.
//!
//! One test drives the whole story in order, because the server is one process pair and the last
//! step stops it: findings equal to linting the same objects as files, LimitRange defaults, node
//! CPUs in the throttling numbers, ownership, paging over 500 objects, a 403 that names the verb
//! and resource, the shipped read-only ClusterRole being enough, VerticalPodAutoscalers once their
//! CRD is installed (GK110 on the Deployment one resizes in place), `--inspect-images` reading
//! the digest that pods run (their status set through the API, images in a crane registry on
//! loopback), and the server going away.
#![cfg(feature = "cluster")]

use crate::common;
#[cfg(feature = "images")]
use crate::images_common;
#[cfg(feature = "images")]
use crate::tools;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use k8s_openapi::api::batch::v1::CronJob;
use k8s_openapi::api::core::v1::{LimitRange, Namespace, Node, Pod};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, PostParams};
use kube::Client;
use serde_json::{json, Value};

/// The started server; stopped when dropped, whatever happened.
struct Server {
    dir: PathBuf,
}

impl Server {
    fn start() -> Option<Server> {
        let root = common::root();
        let dir = root
            .join("target")
            .join(format!("apiserver-test-{}", std::process::id()));
        let out = Command::new("bash")
            .arg(root.join("tests").join("apiserver.sh"))
            .arg("start")
            .arg(&dir)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        if out.status.code() == Some(3) {
            assert!(
                std::env::var_os("CI").is_none(),
                "CI must run the cluster tests: {stderr}"
            );
            println!("cluster tests not run: {}", stderr.trim());
            return None;
        }
        assert!(
            out.status.success(),
            "tests/apiserver.sh start failed:\n{stderr}"
        );
        Some(Server { dir })
    }

    fn kubeconfig(&self) -> PathBuf {
        self.dir.join("kubeconfig")
    }

    fn stop(&self) {
        let _ = Command::new("bash")
            .arg(common::root().join("tests").join("apiserver.sh"))
            .arg("stop")
            .arg(&self.dir)
            .output();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn golint(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_golint-k8s"))
        .args(args)
        .current_dir(common::root())
        .env_remove("KUBECONFIG")
        .output()
        .unwrap()
}

fn json_of(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn deployment(ns: &str, name: &str, resources: Value, env: Value) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": ns, "labels": {"app": name}},
        "spec": {
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{
                    "name": "app", "image": "registry.example.com/shop/app:1.0",
                    "env": env, "resources": resources
                }]}
            }
        }
    })
}

/// The shop namespace: what the audit must find, as JSON objects (also written as a file).
fn shop() -> Vec<Value> {
    vec![
        json!({"apiVersion": "v1", "kind": "LimitRange",
               "metadata": {"name": "defaults", "namespace": "shop"},
               "spec": {"limits": [{"type": "Container",
                   "default": {"memory": "1Gi", "cpu": "2"},
                   "defaultRequest": {"memory": "1Gi", "cpu": "500m"},
                   // GK109 on the LimitRange itself: 1500m is 1.5 bytes. (The API server
                   // stores quantities canonically, so a whole number of bytes such as 64000m
                   // would come back as 64.) Every pod here requests more.
                   "min": {"memory": "1500m"}}]}}),
        // Limits from the LimitRange only: GK101 and GK201 through its defaults.
        deployment("shop", "cart", json!({}), json!([])),
        // Explicit limits, GOMEMLIMIT malformed.
        deployment(
            "shop",
            "checkout",
            json!({"limits": {"cpu": "500m", "memory": "512Mi"},
                   "requests": {"cpu": "500m", "memory": "512Mi"}}),
            json!([{"name": "GOMEMLIMIT", "value": "512Mi"}]),
        ),
        // Right as it is.
        deployment(
            "shop",
            "ledger",
            json!({"limits": {"memory": "1Gi"}, "requests": {"cpu": "1", "memory": "1Gi"}}),
            json!([{"name": "GOMEMLIMIT", "value": "900MiB"}]),
        ),
        json!({"apiVersion": "batch/v1", "kind": "CronJob",
               "metadata": {"name": "nightly", "namespace": "shop"},
               "spec": {"schedule": "0 3 * * *", "jobTemplate": {"spec": {"template": {"spec": {
                   "restartPolicy": "OnFailure",
                   "containers": [{"name": "report", "image": "registry.example.com/shop/report:2.0",
                       "resources": {"limits": {"cpu": "4", "memory": "2Gi"},
                                     "requests": {"cpu": "4", "memory": "2Gi"}}}]}}}}}}),
        json!({"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": "debug", "namespace": "shop"},
               "spec": {"containers": [{"name": "shell", "image": "registry.example.com/tools/shell:1",
                   "resources": {"limits": {"cpu": "250m", "memory": "256Mi"},
                                 "requests": {"cpu": "250m", "memory": "256Mi"}}}]}}),
    ]
}

async fn post<K>(api: Api<K>, o: &Value) -> Result<(), kube::Error>
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + serde::Serialize + std::fmt::Debug,
{
    let obj: K = serde_json::from_value(o.clone()).unwrap();
    api.create(&PostParams::default(), &obj).await.map(drop)
}

async fn create(client: &Client, objects: &[Value]) {
    for o in objects {
        let ns = o["metadata"]["namespace"].as_str().unwrap_or("default");
        let kind = o["kind"].as_str().unwrap();
        let c = client.clone();
        let r = match kind {
            "Deployment" => post(Api::<Deployment>::namespaced(c, ns), o).await,
            "LimitRange" => post(Api::<LimitRange>::namespaced(c, ns), o).await,
            "CronJob" => post(Api::<CronJob>::namespaced(c, ns), o).await,
            "Pod" => post(Api::<Pod>::namespaced(c, ns), o).await,
            "ReplicaSet" => post(Api::<ReplicaSet>::namespaced(c, ns), o).await,
            "Node" => post(Api::<Node>::all(c), o).await,
            "Namespace" => post(Api::<Namespace>::all(c), o).await,
            "ClusterRole" => post(Api::<ClusterRole>::all(c), o).await,
            "ClusterRoleBinding" => post(Api::<ClusterRoleBinding>::all(c), o).await,
            "CustomResourceDefinition" => post(Api::<CustomResourceDefinition>::all(c), o).await,
            "VerticalPodAutoscaler" => {
                let gvk = GroupVersionKind::gvk("autoscaling.k8s.io", "v1", kind);
                let ar = ApiResource::from_gvk_with_plural(&gvk, "verticalpodautoscalers");
                let api = Api::<DynamicObject>::namespaced_with(c, ns, &ar);
                let obj: DynamicObject = serde_json::from_value(o.clone()).unwrap();
                api.create(&PostParams::default(), &obj).await.map(drop)
            }
            k => panic!("no create for {k}"),
        };
        r.unwrap_or_else(|e| panic!("creating {kind} {}: {e}", o["metadata"]["name"]));
    }
}

async fn client(kubeconfig: &Path) -> Client {
    let kc = kube::config::Kubeconfig::read_from(kubeconfig).unwrap();
    let cfg = kube::Config::from_custom_kubeconfig(kc, &Default::default())
        .await
        .unwrap();
    Client::try_from(cfg).unwrap()
}

/// An arm64 node (multi-platform images are read for linux/arm64 in step 8).
fn node(name: &str, cpu: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
           "status": {"capacity": {"cpu": cpu, "memory": "64Gi", "pods": "110"},
                      "allocatable": {"cpu": cpu, "memory": "62Gi", "pods": "110"},
                      "nodeInfo": {"operatingSystem": "linux", "architecture": "arm64",
                          "machineID": name, "systemUUID": name, "bootID": name,
                          "kernelVersion": "6.12.0", "osImage": "Linux",
                          "containerRuntimeVersion": "containerd://2.1.0",
                          "kubeletVersion": "v1.36.3", "kubeProxyVersion": "v1.36.3"}}})
}

/// A finding's identity across the two runs.
fn key(f: &Value) -> (String, String, String, String) {
    let o = &f["object"];
    (
        f["code"].as_str().unwrap().to_string(),
        format!(
            "{}/{}",
            o["kind"].as_str().unwrap_or(""),
            o["name"].as_str().unwrap_or("")
        ),
        f["container"].as_str().unwrap_or("").to_string(),
        f["message"].as_str().unwrap().to_string(),
    )
}

/// A YAML file of strings, lists and mappings (deploy/rbac.yaml) as JSON.
fn yaml_file_as_json(path: &Path) -> Value {
    common::yaml_to_json(&std::fs::read_to_string(path).unwrap())
}

#[test]
fn cluster_audit_against_a_real_apiserver() {
    let Some(server) = Server::start() else {
        return;
    };
    let kubeconfig = server.kubeconfig();
    let kc = kubeconfig.to_str().unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let client = rt.block_on(client(&kubeconfig));

    // The objects, through the API.
    let shop = shop();
    let mut setup = vec![
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}}),
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "paging"}}),
        node("pool-a-1", "4"),
        node("pool-b-1", "16"),
    ];
    setup.extend(shop.iter().cloned());
    rt.block_on(create(&client, &setup));
    // A ReplicaSet controlled by the checkout Deployment: reported through its owner only.
    let uid = rt
        .block_on(Api::<Deployment>::namespaced(client.clone(), "shop").get("checkout"))
        .unwrap()
        .metadata
        .uid
        .unwrap();
    let mut rs = deployment(
        "shop",
        "checkout-5d4f",
        json!({"limits": {"cpu": "500m", "memory": "512Mi"}}),
        json!([]),
    );
    rs["kind"] = json!("ReplicaSet");
    rs["metadata"]["ownerReferences"] = json!([{"apiVersion": "apps/v1", "kind": "Deployment",
        "name": "checkout", "uid": uid, "controller": true}]);
    rt.block_on(create(&client, &[rs]));

    // 1. The same findings as linting the same objects as a file (node CPUs: the largest node).
    let audit = golint(&[
        "cluster",
        "--kubeconfig",
        kc,
        "-n",
        "shop",
        "--format",
        "json",
    ]);
    let stderr = String::from_utf8_lossy(&audit.stderr);
    assert_eq!(audit.status.code(), Some(1), "{stderr}");
    // No VPA CRD yet: said once, and the audit goes on.
    assert!(
        stderr.contains("no VerticalPodAutoscaler resource (the VPA's CRD is not installed)"),
        "{stderr}"
    );
    let audit = json_of(&audit);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("shop.yaml");
    let text: Vec<String> = shop
        .iter()
        .map(|o| serde_json::to_string_pretty(o).unwrap())
        .collect();
    std::fs::write(&file, text.join("\n---\n")).unwrap();
    let linted = json_of(&golint(&[
        "lint",
        file.to_str().unwrap(),
        "--node-cpus",
        "16",
        "--format",
        "json",
    ]));
    let mut a: Vec<_> = audit["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(key)
        .collect();
    let mut l: Vec<_> = linted["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(key)
        .collect();
    a.sort();
    l.sort();
    assert_eq!(a, l, "cluster audit and file lint differ");
    assert!(a.iter().any(|k| k.0 == "GK109"), "{a:#?}");
    // Appended LimitRanges are context: the counts are those of the objects.
    for count in ["documents", "objects"] {
        assert_eq!(audit["summary"][count], linted["summary"][count], "{count}");
    }
    let findings = audit["findings"].as_array().unwrap();
    assert!(!findings.is_empty());

    // 2. LimitRange defaults: cart has no limits of its own.
    let cart = findings
        .iter()
        .find(|f| f["code"] == "GK101" && f["object"]["name"] == "cart")
        .expect("GK101 on cart from the LimitRange default");
    assert!(cart["notes"].to_string().contains("LimitRange"), "{cart:#}");

    // 3. Node CPUs from the cluster, and said so.
    let gk201 = findings
        .iter()
        .find(|f| f["code"] == "GK201" && f["object"]["name"] == "checkout")
        .expect("GK201 on checkout");
    assert!(
        gk201["message"].as_str().unwrap().contains("16"),
        "{gk201:#}"
    );
    assert!(gk201["notes"].to_string().contains("pool-b-1"), "{gk201:#}");
    let r = &gk201["object_ref"];
    assert_eq!(r["kind"], "Deployment");
    assert_eq!(r["namespace"], "shop");
    assert_eq!(r["container"], "app");
    assert_eq!(
        r["path"],
        "spec.template.spec.containers[0].resources.limits.cpu"
    );

    // 4. Ownership: the CronJob and the bare Pod are reported, the owned ReplicaSet is not.
    let objects: std::collections::BTreeSet<String> = findings
        .iter()
        .map(|f| {
            format!(
                "{}/{}",
                f["object"]["kind"].as_str().unwrap(),
                f["object"]["name"].as_str().unwrap()
            )
        })
        .collect();
    assert!(objects.contains("CronJob/nightly"), "{objects:?}");
    assert!(objects.contains("Pod/debug"), "{objects:?}");
    assert!(
        !objects.iter().any(|o| o.starts_with("ReplicaSet/")),
        "{objects:?}"
    );

    // SARIF: logical locations, no file.
    let sarif = json_of(&golint(&[
        "cluster",
        "--kubeconfig",
        kc,
        "-n",
        "shop",
        "--format",
        "sarif",
    ]));
    let result = &sarif["runs"][0]["results"][0];
    let logical = &result["locations"][0]["logicalLocations"][0];
    assert!(
        logical["fullyQualifiedName"]
            .as_str()
            .unwrap()
            .contains("/shop/"),
        "{result:#}"
    );
    assert!(result["locations"][0].get("physicalLocation").is_none());

    // 5. Paging: more objects than one page (500) in one namespace.
    let many: Vec<Value> = (0..520)
        .map(|i| {
            deployment(
                "paging",
                &format!("svc-{i:03}"),
                json!({"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "1", "memory": "1Gi"}}),
                json!([{"name": "GOMEMLIMIT", "value": "900MiB"}]),
            )
        })
        .collect();
    rt.block_on(create(&client, &many));
    let paged = json_of(&golint(&[
        "cluster",
        "--kubeconfig",
        kc,
        "-n",
        "paging",
        "--format",
        "json",
    ]));
    let names: std::collections::BTreeSet<&str> = paged["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["object"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names.len(), 520, "every object of both pages is audited");
    // A selector narrows the workloads.
    let one = json_of(&golint(&[
        "cluster",
        "--kubeconfig",
        kc,
        "-n",
        "paging",
        "-l",
        "app=svc-007",
        "--format",
        "json",
    ]));
    let names: Vec<&str> = one["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["object"]["name"].as_str().unwrap())
        .collect();
    assert!(
        !names.is_empty() && names.iter().all(|n| *n == "svc-007"),
        "{names:?}"
    );

    // 6. Least privilege: a token with no permissions gets the verb and resource it lacks.
    let nobody = server.dir.join("kubeconfig-nobody");
    let denied = golint(&["cluster", "--kubeconfig", nobody.to_str().unwrap()]);
    assert_eq!(denied.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&denied.stderr);
    assert!(stderr.contains("403 Forbidden"), "{stderr}");
    assert!(stderr.contains("\"list\""), "{stderr}");
    assert!(stderr.contains("deploy/rbac.yaml"), "{stderr}");
    // The shipped ClusterRole is enough.
    let mut role = yaml_file_as_json(&common::root().join("deploy").join("rbac.yaml"));
    role["metadata"]["labels"] = json!({});
    let binding = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
        "metadata": {"name": "golint-k8s-audit"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "golint-k8s-audit"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "nobody"}]});
    rt.block_on(create(&client, &[role, binding]));
    let mut allowed = None;
    // RBAC changes reach the authorizer's cache within a moment.
    for _ in 0..50 {
        let out = golint(&[
            "cluster",
            "--kubeconfig",
            nobody.to_str().unwrap(),
            "-n",
            "shop",
            "--format",
            "json",
        ]);
        if out.status.code() != Some(2) {
            allowed = Some(out);
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    let allowed = allowed.expect("the ClusterRole in deploy/rbac.yaml lets the audit run");
    assert_eq!(json_of(&allowed)["findings"], audit["findings"]);

    // 7. In-place resize: with the VPA's CRD installed (from the pinned autoscaler module), a
    // VPA in InPlaceOrRecreate mode makes the GOMEMLIMIT of the Deployment it targets stale.
    let crd_path = Command::new("bash")
        .arg(common::root().join("tests").join("apiserver.sh"))
        .arg("vpa-crd")
        .output()
        .expect("run tests/apiserver.sh vpa-crd");
    assert!(
        crd_path.status.success(),
        "{}",
        String::from_utf8_lossy(&crd_path.stderr)
    );
    let crd_path = String::from_utf8(crd_path.stdout).unwrap();
    let crds = common::yaml_stream_to_json(&std::fs::read_to_string(crd_path.trim()).unwrap());
    assert_eq!(crds.len(), 2, "the checkpoint and VPA CRDs");
    rt.block_on(create(&client, &crds));
    let resized = deployment(
        "resize",
        "api",
        json!({"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "1", "memory": "1Gi"}}),
        json!([{"name": "GOMEMLIMIT", "valueFrom": {"resourceFieldRef": {"resource": "limits.memory"}}}]),
    );
    let vpa = |name: &str, target: &str, mode: &str| {
        json!({"apiVersion": "autoscaling.k8s.io/v1", "kind": "VerticalPodAutoscaler",
            "metadata": {"name": name, "namespace": "resize"},
            "spec": {"targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": target},
                     "updatePolicy": {"updateMode": mode}}})
    };
    rt.block_on(create(
        &client,
        &[
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "resize"}}),
            resized,
            deployment(
                "resize",
                "web",
                json!({"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "1", "memory": "1Gi"}}),
                json!([{"name": "GOMEMLIMIT", "valueFrom": {"resourceFieldRef": {"resource": "limits.memory"}}}]),
            ),
        ],
    ));
    // A new CRD is served once it is established: retry the first VPA for a moment.
    let mut created = false;
    for _ in 0..100 {
        let first = vpa("api", "api", "InPlaceOrRecreate");
        let c = client.clone();
        let r = rt.block_on(async move {
            let gvk = GroupVersionKind::gvk("autoscaling.k8s.io", "v1", "VerticalPodAutoscaler");
            let ar = ApiResource::from_gvk_with_plural(&gvk, "verticalpodautoscalers");
            let api = Api::<DynamicObject>::namespaced_with(c, "resize", &ar);
            let obj: DynamicObject = serde_json::from_value(first).unwrap();
            api.create(&PostParams::default(), &obj).await
        });
        if r.is_ok() {
            created = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert!(created, "the VPA CRD was never established");
    // The other Deployment's VPA only recommends: no finding there.
    rt.block_on(create(&client, &[vpa("web", "web", "Off")]));
    for config in [kc, nobody.to_str().unwrap()] {
        let out = golint(&[
            "cluster",
            "--kubeconfig",
            config,
            "-n",
            "resize",
            "--format",
            "json",
        ]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("VerticalPodAutoscaler"), "{stderr}");
        let report = json_of(&out);
        let stale: Vec<&Value> = report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["code"] == "GK110")
            .collect();
        assert_eq!(stale.len(), 1, "{report:#}");
        assert_eq!(stale[0]["object"]["name"], "api");
        assert!(
            stale[0]["message"]
                .as_str()
                .unwrap()
                .contains("VerticalPodAutoscaler api (updateMode InPlaceOrRecreate)"),
            "{:#}",
            stale[0]
        );
        // The VPAs are context, not objects of the report.
        assert_eq!(report["summary"]["objects"], 2, "{report:#}");
    }

    // 8. --inspect-images reads what runs: the digest the kubelet reports.
    #[cfg(feature = "images")]
    images_that_run(&client, &rt, kc);

    // 9. The server goes away: a clear error, not a hang.
    server.stop();
    let t0 = std::time::Instant::now();
    let gone = golint(&["cluster", "--kubeconfig", kc, "--timeout", "5"]);
    assert_eq!(gone.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&gone.stderr);
    assert!(
        stderr.contains("cannot reach the API server at https://127.0.0.1:"),
        "{stderr}"
    );
    assert!(t0.elapsed().as_secs() < 30, "took {:?}", t0.elapsed());
}

/// A Deployment's pods run a Go image; its tag was pushed again since, with a Python program.
/// The audit reads the digest the pods' status reports (two pods of three; the third runs the
/// new push, which is said), so GK101 stands on the Go that runs. Deployments no pod runs are
/// read by their tags, a multi-platform one for the nodes' platform (linux/arm64: Python).
#[cfg(feature = "images")]
fn images_that_run(client: &Client, rt: &tokio::runtime::Runtime, kc: &str) {
    use images_common::{crane_registry, go_binary, image, layer, run};
    use kube::api::{Patch, PatchParams};

    let Some(tools) = tools::ensure() else { return };
    if !common::go_available() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must run this: no go command"
        );
        println!("cluster images: not run: no go command on PATH");
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let dir = work.path();
    let (_registry, reg) = crane_registry(&tools.crane, dir);
    let digest = |tag: &str| {
        run(
            Command::new(&tools.crane).args(["digest", tag]),
            "crane digest",
        )
        .trim()
        .to_string()
    };
    let go_layer = layer(dir, "go.tgz", &[("app/server", &go_binary())]);
    let py_layer = layer(dir, "py.tgz", &[("app/main.py", b"print('hi')\n")]);
    let python = ["--entrypoint", "python3,/app/main.py"];
    let api = image(
        &tools.crane,
        None,
        &reg,
        "shop/api",
        &[&go_layer],
        &["--entrypoint", "/app/server"],
    );
    let go_digest = digest(&api);
    assert_eq!(
        api,
        image(&tools.crane, None, &reg, "shop/api", &[&py_layer], &python)
    );
    let py_digest = digest(&api);
    assert_ne!(go_digest, py_digest);
    let web = image(&tools.crane, None, &reg, "shop/web", &[&py_layer], &python);
    // A multi-platform index: Go for linux/amd64, Python for linux/arm64, which the nodes run.
    let amd = image(
        &tools.crane,
        None,
        &reg,
        "shop/multi-amd64",
        &[&go_layer],
        &[
            "--entrypoint",
            "/app/server",
            "--set-platform",
            "linux/amd64",
        ],
    );
    let arm = image(
        &tools.crane,
        None,
        &reg,
        "shop/multi-arm64",
        &[&py_layer],
        &[python[0], python[1], "--set-platform", "linux/arm64"],
    );
    let multi = format!("{reg}/shop/multi:v1");
    run(
        Command::new(&tools.crane).args(["index", "append", "-m", &amd, "-m", &arm, "-t", &multi]),
        "crane index append",
    );

    let limits = json!({"limits": {"cpu": "2", "memory": "512Mi"}});
    let mut objects = vec![
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "images"}}),
        deployment("images", "api", limits.clone(), json!([])),
        deployment("images", "web", limits.clone(), json!([])),
        deployment("images", "multi", limits.clone(), json!([])),
    ];
    objects[1]["spec"]["template"]["spec"]["containers"][0]["image"] = json!(api);
    objects[2]["spec"]["template"]["spec"]["containers"][0]["image"] = json!(web);
    objects[3]["spec"]["template"]["spec"]["containers"][0]["image"] = json!(multi);
    let pods: Vec<(String, &str)> = vec![
        ("api-7c9d-a".into(), &go_digest),
        ("api-7c9d-b".into(), &go_digest),
        ("api-7c9d-c".into(), &py_digest),
    ];
    for (name, _) in &pods {
        objects.push(json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "images", "labels": {"app": "api"},
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                    "name": "api-7c9d", "uid": "6f1c2b1e-7a4e-4c5b-9d43-2f0e8b1a9c11",
                    "controller": true}]},
            "spec": {"containers": [{"name": "app", "image": api, "resources": limits}]}}));
    }
    rt.block_on(create(client, &objects));
    // What a kubelet writes once the containers run (containerd's form of imageID).
    let repo = api.rsplit_once(':').unwrap().0;
    for (name, running) in &pods {
        let status = json!({"status": {"phase": "Running", "containerStatuses": [{
            "name": "app", "image": api, "imageID": format!("{repo}@{running}"),
            "ready": true, "restartCount": 0,
            "state": {"running": {"startedAt": "2026-11-26T06:00:00Z"}}}]}});
        rt.block_on(
            Api::<Pod>::namespaced(client.clone(), "images").patch_status(
                name,
                &PatchParams::default(),
                &Patch::Merge(&status),
            ),
        )
        .unwrap_or_else(|e| panic!("status of {name}: {e}"));
    }

    let out = Command::new(env!("CARGO_BIN_EXE_golint-k8s"))
        .args([
            "cluster",
            "--kubeconfig",
            kc,
            "-n",
            "images",
            "--inspect-images",
            "--format",
            "json",
        ])
        // A loopback registry is read only when named (docs/images.md).
        .args(["--insecure-registry", &reg])
        .env_remove("KUBECONFIG")
        .env("GOLINT_K8S_CACHE", dir.join("cache"))
        .env("DOCKER_CONFIG", dir.join("no-docker-config"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!(
        "cluster --inspect-images: exit {:?}, stderr:\n{stderr}",
        out.status.code()
    );
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "note: the pods of image {api} run 2 digests; read is {go_digest}, which 2 of 3 run"
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "note: images read at the digest their pods run (the kubelet's imageID): 1 of 3; \
             the others, which no listed pod runs, by their reference"
        ),
        "{stderr}"
    );
    let report = json_of(&out);
    let codes = |name: &str| -> Vec<Value> {
        report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["object"]["name"] == name)
            .cloned()
            .collect()
    };
    let api_findings = codes("api");
    let gk101 = api_findings
        .iter()
        .find(|f| f["code"] == "GK101")
        .unwrap_or_else(|| panic!("GK101 on the Go that runs: {report:#}"));
    let short = &go_digest[..19];
    assert!(
        gk101.to_string().contains(&format!("from image {short}")),
        "{gk101:#}"
    );
    // web is read by its tag: Python, no Go rule; so is multi, for the nodes' linux/arm64.
    for name in ["web", "multi"] {
        assert!(
            codes(name).iter().all(|f| f["code"] != "GK101"),
            "{name}: {report:#}"
        );
    }
    assert!(!stderr.contains("more than one platform"), "{stderr}");

    // --show-containers shows each decision, from the cache this time.
    let shown = Command::new(env!("CARGO_BIN_EXE_golint-k8s"))
        .args([
            "cluster",
            "--kubeconfig",
            kc,
            "-n",
            "images",
            "--inspect-images",
            "--offline",
        ])
        .args(["--show-containers", "--format", "json"])
        .env_remove("KUBECONFIG")
        .env("GOLINT_K8S_CACHE", dir.join("cache"))
        .output()
        .unwrap();
    assert_eq!(
        shown.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&shown.stderr)
    );
    let rows = json_of(&shown);
    let runtime = |name: &str| -> Value {
        rows["containers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["object"]["name"] == name)
            .unwrap_or_else(|| panic!("no row for {name}: {rows:#}"))["runtime"]
            .clone()
    };
    assert_eq!(runtime("api")["language"], "go", "{rows:#}");
    assert!(
        runtime("api")["evidence"]
            .as_str()
            .unwrap()
            .contains(&format!("from image {short}")),
        "{rows:#}"
    );
    for name in ["web", "multi"] {
        assert_eq!(runtime(name)["language"], "python", "{name}: {rows:#}");
    }
}
