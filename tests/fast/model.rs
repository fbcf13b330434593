//! Where pod specs live: every kind the linter knows, `List` items, and configured CRD paths.

use crate::common::*;
use golint_k8s::config::Config;

const CONTAINER: &str = "
        - name: app
          image: ghcr.io/acme/app:1
          resources:
            requests: {cpu: 1, memory: 1Gi}
            limits: {memory: 1Gi}";

fn containers_seen(text: &str, cfg: &Config) -> (usize, Vec<String>) {
    let r = lint_text("t.yaml", text, cfg);
    let codes = r
        .findings
        .iter()
        .map(|f| f.diagnostic.code.to_string())
        .collect();
    (r.stats.containers, codes)
}

fn doc(api: &str, kind: &str, path: &[&str]) -> String {
    let mut s = format!("apiVersion: {api}\nkind: {kind}\nmetadata:\n  name: x\n");
    let mut indent = String::new();
    for (i, p) in path.iter().enumerate() {
        if i == 0 {
            s.push_str(&format!("{p}:\n"));
        } else {
            s.push_str(&format!("{indent}{p}:\n"));
        }
        indent.push_str("  ");
    }
    s.push_str(&format!(
        "{indent}containers:{}\n",
        CONTAINER.replace("\n        ", &format!("\n{indent}  "))
    ));
    s
}

#[test]
fn every_known_kind_yields_its_containers() {
    let cfg = Config::default();
    for (api, kind, path) in [
        ("v1", "Pod", vec!["spec"]),
        ("apps/v1", "Deployment", vec!["spec", "template", "spec"]),
        ("apps/v1", "StatefulSet", vec!["spec", "template", "spec"]),
        ("apps/v1", "DaemonSet", vec!["spec", "template", "spec"]),
        ("apps/v1", "ReplicaSet", vec!["spec", "template", "spec"]),
        (
            "v1",
            "ReplicationController",
            vec!["spec", "template", "spec"],
        ),
        ("batch/v1", "Job", vec!["spec", "template", "spec"]),
        (
            "batch/v1",
            "CronJob",
            vec!["spec", "jobTemplate", "spec", "template", "spec"],
        ),
        ("v1", "PodTemplate", vec!["template", "spec"]),
        (
            "argoproj.io/v1alpha1",
            "Rollout",
            vec!["spec", "template", "spec"],
        ),
        (
            "serving.knative.dev/v1",
            "Service",
            vec!["spec", "template", "spec"],
        ),
        (
            "apps.kruise.io/v1alpha1",
            "CloneSet",
            vec!["spec", "template", "spec"],
        ),
    ] {
        let text = doc(api, kind, &path);
        let (n, codes) = containers_seen(&text, &cfg);
        assert_eq!(n, 1, "{kind}: {text}");
        assert!(codes.contains(&"GK101".to_string()), "{kind}: {codes:?}");
    }
    // A kind that has no pod spec is not searched.
    let (n, _) = containers_seen(&doc("v1", "Service", &["spec", "template", "spec"]), &cfg);
    assert_eq!(n, 0);
}

#[test]
fn list_items_and_configured_paths() {
    let cfg = Config::default();
    let list = format!(
        "apiVersion: v1\nkind: List\nitems:\n{}",
        [
            doc("apps/v1", "Deployment", &["spec", "template", "spec"]),
            doc("v1", "Pod", &["spec"])
        ]
        .iter()
        .map(|d| {
            let mut lines = d.lines();
            let first = lines.next().unwrap();
            format!(
                "  - {first}\n{}",
                lines.map(|l| format!("    {l}\n")).collect::<String>()
            )
        })
        .collect::<String>()
    );
    let (n, _) = containers_seen(&list, &cfg);
    assert_eq!(n, 2, "{list}");

    let worker = doc("example.com/v1", "Worker", &["spec", "workload", "podSpec"]);
    assert_eq!(containers_seen(&worker, &cfg).0, 0);
    let mut cfg = Config::default();
    cfg.pod_spec_paths.push(golint_k8s::config::PodSpecPath {
        api_version: "example.com/v1".into(),
        kind: "Worker".into(),
        path: vec!["spec".into(), "workload".into(), "podSpec".into()],
    });
    assert_eq!(containers_seen(&worker, &cfg).0, 1);
}

#[test]
fn init_sidecar_and_ephemeral_containers() {
    let text = "apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  initContainers:
    - {name: init, image: busybox:1.36}
    - {name: proxy, image: ghcr.io/acme/proxy:1, restartPolicy: Always, resources: {limits: {memory: 64Mi}}}
  containers:
    - {name: app, image: ghcr.io/acme/app:1, resources: {requests: {cpu: 1, memory: 1Gi}}}
  ephemeralContainers:
    - {name: debug, image: busybox:1.36}
";
    let r = lint_text("p.yaml", text, &Config::default());
    assert_eq!(r.stats.containers, 4);
    let on = |code: &str| {
        r.findings
            .iter()
            .filter(|f| f.diagnostic.code.as_str() == code)
            .map(|f| f.diagnostic.container.as_deref().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    // The sidecar's memory limit needs GOMEMLIMIT; busybox is not Go.
    assert_eq!(on("GK101"), vec!["proxy"]);
    // Ephemeral containers cannot have resources, so they are never told to add requests.
    assert_eq!(on("GK401"), vec!["init", "proxy"]);
}

/// One container of `image` under a CPU limit (and a smaller request: a Guaranteed pod of
/// whole cores is another matter), with `extra` lines (env, args) spliced in at the container's
/// indentation.
fn sized(image: &str, cpu: &str, extra: &str) -> String {
    format!(
        "apiVersion: apps/v1
kind: Deployment
metadata: {{name: x}}
spec:
  selector: {{matchLabels: {{app: x}}}}
  template:
    metadata: {{labels: {{app: x}}}}
    spec:
      containers:
        - name: app
          image: {image}
{extra}          resources:
            requests: {{cpu: 100m, memory: 512Mi}}
            limits: {{cpu: {cpu}, memory: 512Mi}}
"
    )
}

/// The messages of `code` for `text`, linted on a node of 8 CPUs.
fn messages(text: &str, code: &str, cfg: Option<Config>) -> Vec<String> {
    let mut cfg = cfg.unwrap_or_default();
    cfg.node_cpus = Some(8);
    lint_text("t.yaml", text, &cfg)
        .findings
        .iter()
        .filter(|f| f.diagnostic.code.as_str() == code)
        .map(|f| f.diagnostic.message.clone())
        .collect()
}

/// automaxprocs' `runtime.GOMAXPROCS(floor(limit))` turns the Go 1.25 default off: a program
/// built for Go 1.25 that calls it runs floor(limit) threads, at least one, not max(2, ceil).
#[test]
fn self_sizing_beats_the_go_1_25_default() {
    // CoreDNS from 1.14.2 is built for Go 1.25 and calls maxprocs.Set (catalog).
    let coredns = |cpu| sized("registry.k8s.io/coredns/coredns:v1.14.2", cpu, "");
    let m = messages(&coredns("500m"), "GK203", None);
    assert_eq!(m.len(), 1, "{m:?}");
    assert!(
        m[0].contains("with 1 busy thread (GOMAXPROCS = 1, sized from the limit by the program itself, rounded down, which turns Go 1.25's own sizing off)"),
        "{m:?}"
    );
    assert_eq!(
        messages(&coredns("1500m"), "GK203", None),
        Vec::<String>::new()
    );
    // containermaxprocs=0 changes nothing that the program does not override anyway (GK206).
    let godebug = sized(
        "registry.k8s.io/coredns/coredns:v1.14.2",
        "1500m",
        "          env:\n            - name: GODEBUG\n              value: containermaxprocs=0\n",
    );
    assert_eq!(messages(&godebug, "GK206", None), Vec::<String>::new());
    assert_eq!(messages(&godebug, "GK203", None), Vec::<String>::new());
    // Nor does GOMAXPROCS pin what the runtime would track: without it the program pins (GK204).
    let pinned = sized(
        "registry.k8s.io/coredns/coredns:v1.14.2",
        "1500m",
        "          env:\n            - name: GOMAXPROCS\n              value: \"1\"\n",
    );
    assert_eq!(messages(&pinned, "GK204", None), Vec::<String>::new());
    let plain = sized(
        "ghcr.io/acme/api:1.0",
        "1500m",
        "          env:\n            - name: GOMAXPROCS\n              value: \"1\"\n",
    );
    let go125 = Config {
        go_version: Some(golint_k8s::config::GoVersion::new(1, 25)),
        ..Config::default()
    };
    assert_eq!(messages(&plain, "GK204", Some(go125)).len(), 1);
    // The config's sizes-gomaxprocs stands for the same floor.
    let cfg = Config {
        go_version: Some(golint_k8s::config::GoVersion::new(1, 25)),
        sizes_gomaxprocs: golint_k8s::config::Globs::new(vec!["ghcr.io/acme/*".into()]).unwrap(),
        ..Config::default()
    };
    let acme = sized("ghcr.io/acme/api:1.0", "1500m", "");
    assert_eq!(messages(&acme, "GK203", Some(cfg)), Vec::<String>::new());
}

/// VictoriaMetrics rounds the quota to the nearest whole CPU up to 1.103 (1.5 gives 2 threads,
/// which spend a 1.5-CPU quota in 75 ms) and rounds it down from 1.104.
#[test]
fn victoriametrics_rounds_to_nearest_before_1_104() {
    let vm = |tag| sized(&format!("victoriametrics/vmagent:{tag}"), "1500m", "");
    let m = messages(&vm("v1.103.0"), "GK203", None);
    assert_eq!(m.len(), 1, "{m:?}");
    assert!(
        m[0].contains("with 2 busy threads (GOMAXPROCS = 2, sized from the limit by the program itself, rounded to the nearest whole CPU)"),
        "{m:?}"
    );
    assert_eq!(
        messages(&vm("v1.104.0"), "GK203", None),
        Vec::<String>::new()
    );
    assert_eq!(
        messages(&vm("v1.102.4"), "GK203", None),
        Vec::<String>::new()
    );
    assert_eq!(messages(&vm("v1.102.3"), "GK203", None).len(), 1);
}

/// Node exporter sets GOMAXPROCS from its `--runtime.gomaxprocs` flag (default 1), whatever
/// the CPU limit.
#[test]
fn node_exporter_pins_gomaxprocs_to_its_flag() {
    let image = "quay.io/prometheus/node-exporter:v1.9.1";
    let flagged = sized(image, "2", "          args: [\"--runtime.gomaxprocs=4\"]\n");
    let m = messages(&flagged, "GK203", None);
    assert_eq!(m.len(), 1, "{m:?}");
    assert!(
        m[0].contains("with 4 busy threads (GOMAXPROCS = 4, set by the program from its flag in the arguments)"),
        "{m:?}"
    );
    let two_words = sized(
        image,
        "2",
        "          args: [\"--runtime.gomaxprocs\", \"3\"]\n",
    );
    assert!(messages(&two_words, "GK203", None)[0].contains("with 3 busy threads"));
    let m = messages(&sized(image, "500m", ""), "GK203", None);
    assert!(
        m[0].contains(
            "with 1 busy thread (GOMAXPROCS = 1, set by the program from its flag's default)"
        ),
        "{m:?}"
    );
    assert_eq!(
        messages(&sized(image, "3", ""), "GK203", None),
        Vec::<String>::new()
    );
}

/// The Calico API server sets GOMAXPROCS to the node's CPU count unless GOMAXPROCS is set:
/// under a limit that is throttling on any Go, and setting GOMAXPROCS is the fix (GK201).
#[test]
fn calico_apiserver_runs_one_thread_per_node_cpu() {
    let image = "quay.io/calico/apiserver:v3.31.5";
    let text = sized(image, "2", "");
    let m = messages(&text, "GK203", None);
    assert_eq!(m.len(), 1, "{m:?}");
    assert!(
        m[0].contains("with 8 busy threads (GOMAXPROCS = 8, set to the node's CPU count by the program itself, which turns Go 1.25's own sizing off)"),
        "{m:?}"
    );
    assert_eq!(messages(&text, "GK201", None).len(), 1);
    let with_env = sized(
        image,
        "2",
        "          env:\n            - name: GOMAXPROCS\n              value: \"2\"\n",
    );
    assert_eq!(messages(&with_env, "GK203", None), Vec::<String>::new());
    assert_eq!(messages(&with_env, "GK201", None), Vec::<String>::new());
    // The rest of Calico leaves GOMAXPROCS to the Go runtime.
    let node = sized("quay.io/calico/node:v3.31.5", "2", "");
    assert_eq!(messages(&node, "GK203", None), Vec::<String>::new());
}

/// Where a program stopped calling automaxprocs (Thanos 0.42.0, KEDA 2.20.0, NATS 2.12.5,
/// Prometheus Operator 0.91.0), the Go 1.25 runtime sizes it again: max(2, ceil(limit)).
#[test]
fn releases_that_dropped_automaxprocs_get_the_runtime_default() {
    let thanos = |tag| sized(&format!("quay.io/thanos/thanos:{tag}"), "1500m", "");
    assert_eq!(
        messages(&thanos("v0.41.0"), "GK203", None),
        Vec::<String>::new()
    );
    let m = messages(&thanos("v0.42.0"), "GK203", None);
    assert_eq!(m.len(), 1, "{m:?}");
    assert!(
        m[0].contains(
            "with 2 busy threads (GOMAXPROCS = 2, Go 1.25's default of max(2, ceil(limit)))"
        ),
        "{m:?}"
    );
}

/// A program that sizes GOMAXPROCS itself does it once: GK207 does not promise that Go 1.25
/// follows an in-place resize once GOMAXPROCS is gone.
#[test]
fn gk207_says_a_self_sizing_program_needs_a_restart_on_resize() {
    let text = sized(
        "registry.k8s.io/coredns/coredns:v1.14.2",
        "2",
        "          env:\n            - name: GOMAXPROCS\n              valueFrom: {resourceFieldRef: {resource: limits.cpu}}\n          resizePolicy:\n            - {resourceName: cpu, restartPolicy: NotRequired}\n",
    );
    let r = lint_text("t.yaml", &text, &Config::default());
    let notes: Vec<&String> = r
        .findings
        .iter()
        .filter(|f| f.diagnostic.code.as_str() == "GK207")
        .flat_map(|f| &f.diagnostic.notes)
        .collect();
    assert!(
        notes.iter().any(|n| n.starts_with(
            "without GOMAXPROCS the program sizes itself once, at start-up, on every Go release"
        )),
        "{notes:?}"
    );
    assert!(
        !notes
            .iter()
            .any(|n| n.contains("follow the CPU limit by themselves")),
        "{notes:?}"
    );
}

/// The codes each container of a Deployment gets, by container name.
fn codes_by_container(containers: &[(&str, &str)], cfg: &Config) -> Vec<(String, Vec<String>)> {
    let mut text = String::from(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: x\nspec:\n  template:\n    spec:\n      containers:\n",
    );
    for (name, image) in containers {
        text.push_str(&format!(
            "        - name: {name}\n          image: {image}\n          resources:\n            limits: {{cpu: 2, memory: 1Gi}}\n"
        ));
    }
    let r = lint_text("t.yaml", &text, cfg);
    containers
        .iter()
        .map(|(name, _)| {
            let mut codes: Vec<String> = r
                .findings
                .iter()
                .filter(|f| f.diagnostic.container.as_deref() == Some(*name))
                .map(|f| f.diagnostic.code.to_string())
                .filter(|c| c == "GK101" || c == "GK201")
                .collect();
            codes.sort();
            codes.dedup();
            (name.to_string(), codes)
        })
        .collect()
}

#[test]
fn catalog_facts_hold_only_for_the_exact_repository() {
    // Programs whose names start with a catalog program's name: Go programs judged by someone
    // else's catalog entry (Node.js, nginx, HAProxy) or given someone else's releases' facts
    // (cert-manager's Go 1.25, Istio's automemlimit).
    let images = [
        (
            "npd",
            "registry.k8s.io/node-problem-detector/node-problem-detector:v0.8.20",
        ),
        ("nfd", "registry.k8s.io/nfd/node-feature-discovery:v0.17.3"),
        ("nic", "nginx/nginx-ingress:5.0.0"),
        ("ngf", "ghcr.io/nginx/nginx-gateway-fabric:2.0.0"),
        ("hai", "quay.io/jcmoraisjr/haproxy-ingress:v0.15.0"),
        ("pdns", "zachomedia/cert-manager-webhook-pdns:v2.5.2"),
        ("pilot", "acme/pilot:2.0.0"),
    ];
    let want: Vec<(String, Vec<String>)> = images
        .iter()
        .map(|(n, _)| (n.to_string(), vec!["GK101".into(), "GK201".into()]))
        .collect();
    assert_eq!(codes_by_container(&images, &Config::default()), want);
    // The programs themselves, under their own repositories and mirrors, keep their facts.
    let own = [
        ("nginx", "public.ecr.aws/docker/library/nginx:1.27"),
        ("istiod", "docker.io/istio/pilot:1.29.0"),
        ("cm", "quay.io/jetstack/cert-manager-webhook:v1.19.0"),
    ];
    let got = codes_by_container(&own, &Config::default());
    assert_eq!(got[0].1, Vec::<String>::new(), "nginx is not Go: {got:?}");
    assert_eq!(got[1].1, Vec::<String>::new(), "istiod sizes both: {got:?}");
    assert_eq!(
        got[2].1,
        vec!["GK101".to_string()],
        "Go 1.25 follows the CPU limit: {got:?}"
    );
}

/// The runtime each container was judged to run (Go version, self-sizing), from its findings:
/// every container here sets one variable twice, so each has at least GK303's.
fn runtimes(images: &[&str]) -> Vec<(String, Option<String>, bool, bool)> {
    let mut text = String::from(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: x\nspec:\n  template:\n    spec:\n      containers:\n",
    );
    for (i, image) in images.iter().enumerate() {
        text.push_str(&format!(
            "        - name: c{i}\n          image: {image}\n          env: [{{name: A, value: a}}, {{name: A, value: a}}]\n          resources:\n            limits: {{cpu: 2, memory: 1Gi}}\n"
        ));
    }
    let r = lint_text("t.yaml", &text, &Config::default());
    images
        .iter()
        .enumerate()
        .map(|(i, image)| {
            let name = format!("c{i}");
            let info = r
                .findings
                .iter()
                .filter(|f| f.diagnostic.container.as_deref() == Some(name.as_str()))
                .find_map(|f| f.diagnostic.runtime.clone())
                .unwrap_or_else(|| panic!("no finding for {image}"));
            (
                image.to_string(),
                info.go_version.clone(),
                info.sizes_gomaxprocs.is_some(),
                info.sizes_gomemlimit.is_some(),
            )
        })
        .collect()
}

#[test]
fn catalog_facts_hold_for_their_release_ranges() {
    let go = |v: Option<&str>| v.map(str::to_string);
    // Maintenance branches that moved to Go 1.25 below the newer minor's threshold.
    for (before, at) in [
        ("quay.io/coreos/etcd:v3.5.27", "quay.io/coreos/etcd:v3.5.28"),
        ("grafana/loki:3.5.9", "grafana/loki:3.5.10"),
        (
            "quay.io/argoproj/workflow-controller:v3.7.11",
            "quay.io/argoproj/workflow-controller:v3.7.12",
        ),
        (
            "registry.k8s.io/ingress-nginx/controller:v1.12.6",
            "registry.k8s.io/ingress-nginx/controller:v1.12.7",
        ),
        (
            "quay.io/prometheus/prometheus:v3.5.3",
            "quay.io/prometheus/prometheus:v3.5.4",
        ),
        ("nats:2.11.13", "nats:2.11.14"),
        ("traefik:v2.11.35", "traefik:v2.11.36"),
        (
            "crossplane/crossplane:v1.20.4",
            "crossplane/crossplane:v1.20.5",
        ),
        (
            "victoriametrics/vmagent:v1.110.15",
            "victoriametrics/vmagent:v1.110.16",
        ),
        (
            "public.ecr.aws/karpenter/controller:1.0.12",
            "public.ecr.aws/karpenter/controller:1.0.13",
        ),
        (
            "gcr.io/tekton-releases/github.com/tektoncd/pipeline/cmd/controller:v1.9.3",
            "gcr.io/tekton-releases/github.com/tektoncd/pipeline/cmd/controller:v1.9.4",
        ),
    ] {
        let got = runtimes(&[before, at]);
        assert_eq!(
            (got[0].1.clone(), got[1].1.clone()),
            (None, go(Some("1.25"))),
            "{got:?}"
        );
    }
    // The next minor release before its own move stays below.
    let got = runtimes(&["quay.io/coreos/etcd:v3.6.8", "quay.io/coreos/etcd:v3.6.9"]);
    assert_eq!(
        (got[0].1.clone(), got[1].1.clone()),
        (None, go(Some("1.25"))),
        "{got:?}"
    );
    // Releases that removed automaxprocs no longer size GOMAXPROCS themselves.
    for (last, removed) in [
        (
            "quay.io/thanos/thanos:v0.41.0",
            "quay.io/thanos/thanos:v0.42.0",
        ),
        (
            "ghcr.io/kedacore/keda:2.19.0",
            "ghcr.io/kedacore/keda:2.20.0",
        ),
        ("nats:2.12.4", "nats:2.12.5"),
        (
            "quay.io/prometheus-operator/prometheus-operator:v0.90.0",
            "quay.io/prometheus-operator/prometheus-operator:v0.91.0",
        ),
    ] {
        let got = runtimes(&[last, removed]);
        assert_eq!((got[0].2, got[1].2), (true, false), "{got:?}");
    }
}

/// The runtime the first finding of `text`'s one container was judged with: (Go version, where
/// it came from, whether the program sizes GOMAXPROCS itself).
fn judged(text: &str, cfg: &Config) -> (Option<String>, String, bool) {
    let r = lint_text("t.yaml", text, cfg);
    let info = r
        .findings
        .iter()
        .find_map(|f| f.diagnostic.runtime.clone())
        .expect("a finding with the runtime");
    (
        info.go_version.clone(),
        info.go_version_evidence.clone().unwrap_or_default(),
        info.sizes_gomaxprocs.is_some(),
    )
}

/// One precedence for the Go version (docs/go-runtime.md, "Which Go version"): a version the
/// config declares goes no lower than the main module's go line of the release the catalog
/// places; the blanket `go-version` (and `--go-version`) yields to the catalog's record of the
/// release; and that a Go 1.25 program follows the CPU limit is derived from the version and
/// GODEBUG the view settles, never kept from a catalog line written for Go 1.25.
#[test]
fn one_precedence_for_the_go_version() {
    use golint_k8s::config::{Globs, GoVersion};
    // Argo CD's main module says go 1.25 from 3.2.0; the container repeats a variable, so that
    // every variant has a finding to read the runtime from.
    let argo = |env: &str| {
        sized(
            "quay.io/argoproj/argocd:v3.2.0",
            "1500m",
            &format!("          env:\n            - {{name: A, value: a}}\n            - {{name: A, value: a}}\n{env}"),
        )
    };
    let every_image_124 = Config {
        go_versions: vec![(Globs::new(vec!["*".into()]).unwrap(), GoVersion::new(1, 24))],
        ..Config::default()
    };
    let (version, why, sizes) = judged(&argo(""), &every_image_124);
    assert_eq!(version.as_deref(), Some("1.25"), "{why}");
    assert!(
        why.contains("config go-versions \"*\" 1.24 says 1.24, but no Go 1.24 can build a main module whose go line says 1.25"),
        "{why}"
    );
    assert!(
        !sizes,
        "the Go runtime sizes GOMAXPROCS, not Argo CD: {why}"
    );
    // The blanket version is for containers nothing else places.
    let blanket_124 = Config {
        go_version: Some(GoVersion::new(1, 24)),
        ..Config::default()
    };
    let (version, why, _) = judged(&argo(""), &blanket_124);
    assert_eq!(version.as_deref(), Some("1.25"), "{why}");
    assert!(why.starts_with("catalog: Argo CD"), "{why}");
    // With the runtime's own sizing switched off, nothing sizes GOMAXPROCS: GK201.
    let off = argo("            - {name: GODEBUG, value: containermaxprocs=0}\n");
    assert_eq!(messages(&off, "GK201", None).len(), 1);
    assert_eq!(messages(&argo(""), "GK201", None), Vec::<String>::new());
    // A release before the go line moved is placed below Go 1.25, whatever the tree says.
    let (version, why, _) = judged(
        &sized(
            "quay.io/argoproj/argocd:v3.1.0",
            "1500m",
            "          env:\n            - {name: A, value: a}\n            - {name: A, value: a}\n",
        ),
        &Config::default(),
    );
    assert_eq!(version, None, "{why}");
    assert!(why.contains("not in this release"), "{why}");
}
