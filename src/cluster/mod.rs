//! `golint-k8s cluster`: the same rules over what a cluster actually runs.
//!
//! Manifests in git are half of the truth: LimitRanges, node sizes and hand-edited objects live in
//! the cluster. This module turns listed objects into the linter's input and its findings into
//! cluster references. Each workload is linted as its own JSON document (JSON is YAML, so the
//! whole file pipeline applies unchanged, suppression annotations included), followed by its
//! namespace's LimitRanges (so that their defaults feed the effective values exactly as in a file)
//! and VerticalPodAutoscalers (so that in-place resizes are seen).
//! Node sizes replace `node-cpus`. With `--inspect-images`, the pods' status says which digest
//! each image runs and the nodes' which platform to read. Listing (paged, with timeouts and specific errors) is in
//! [`fetch`], behind the `cluster` feature; this part is plain data and is tested without a server.

#[cfg(feature = "cluster")]
pub mod fetch;

use std::collections::{BTreeMap, HashMap};

use rayon::prelude::*;
use serde_json::Value;

use crate::config::Config;
use crate::diagnostic::Code;
use crate::diagnostic::{ClusterRef, Provenance};
use crate::fix::engine::PathSeg;
use crate::lint::{lint_source_with, FileReport, Selection};
use crate::project::Project;
use crate::source::{Origin, Source};

/// Workload kinds whose objects own others: an object controlled by one of these is reported
/// through its owner (a Deployment's ReplicaSets and Pods, a CronJob's Jobs), never twice.
pub const WORKLOAD_KINDS: [&str; 6] = [
    "Deployment",
    "StatefulSet",
    "DaemonSet",
    "ReplicaSet",
    "Job",
    "CronJob",
];

/// One object as the API server returned it.
#[derive(Debug, Clone)]
pub struct Listed {
    pub kind: String,
    pub namespace: Option<String>,
    pub name: String,
    pub json: Value,
}

impl Listed {
    pub fn new(json: Value) -> Listed {
        let s = |v: &Value| v.as_str().map(str::to_string);
        Listed {
            kind: s(&json["kind"]).unwrap_or_default(),
            namespace: s(&json["metadata"]["namespace"]),
            name: s(&json["metadata"]["name"]).unwrap_or_default(),
            json,
        }
    }

    /// `Deployment/payments/api` (cluster-scoped: `Node/worker-1`).
    pub fn reference(&self) -> String {
        crate::diagnostic::object_path(&self.kind, self.namespace.as_deref(), &self.name)
    }

    /// Whether a workload of a listed kind controls this object (so that it reports it).
    pub fn is_owned(&self) -> bool {
        self.json["metadata"]["ownerReferences"]
            .as_array()
            .is_some_and(|owners| {
                owners.iter().any(|o| {
                    o["controller"].as_bool() == Some(true)
                        && o["kind"]
                            .as_str()
                            .is_some_and(|k| WORKLOAD_KINDS.contains(&k))
                })
            })
    }

    /// Drop what the server keeps for itself (managedFields, status): it is not part of the
    /// manifest, and the linter need not read it.
    fn strip_bookkeeping(&mut self) {
        if let Some(m) = self.json.get_mut("metadata").and_then(Value::as_object_mut) {
            m.remove("managedFields");
        }
        if let Some(o) = self.json.as_object_mut() {
            o.remove("status");
        }
    }

    /// The object as the linter reads it, pretty-printed so that positions in findings are
    /// readable lines.
    fn text(&self) -> String {
        serde_json::to_string_pretty(&self.json).unwrap_or_default()
    }
}

/// The nodes' CPU count as the Go runtime sees it: `status.capacity.cpu` (all the node's CPUs,
/// which is what `runtime.NumCPU` and the default GOMAXPROCS count), else `allocatable`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeCpus {
    /// The largest node's CPU count, rounded up.
    pub cpus: u32,
    /// Which node has it.
    pub node: String,
    /// How many nodes were listed.
    pub nodes: usize,
}

impl NodeCpus {
    pub fn largest(nodes: &[Listed]) -> Option<NodeCpus> {
        let mut best: Option<NodeCpus> = None;
        for n in nodes {
            let status = &n.json["status"];
            let cpu = status["capacity"]["cpu"]
                .as_str()
                .or_else(|| status["allocatable"]["cpu"].as_str());
            let Some(q) = cpu.and_then(|c| crate::k8s::quantity::Quantity::parse(c).ok()) else {
                continue;
            };
            let cpus = q.value_ceil().clamp(1, i128::from(u32::MAX)) as u32;
            if best.as_ref().is_none_or(|b| cpus > b.cpus) {
                best = Some(NodeCpus {
                    cpus,
                    node: n.name.clone(),
                    nodes: nodes.len(),
                });
            }
        }
        best
    }

    pub fn note(&self) -> String {
        format!(
            "node CPUs {} from the cluster: the largest CPU capacity of its {} node{} ({})",
            self.cpus,
            self.nodes,
            if self.nodes == 1 { "" } else { "s" },
            self.node
        )
    }
}

/// Everything the audit reads.
#[derive(Debug, Default)]
pub struct Inventory {
    /// Workloads and bare Pods (owned objects already dropped).
    pub objects: Vec<Listed>,
    pub limit_ranges: Vec<Listed>,
    /// VerticalPodAutoscalers: each workload is linted with those of its namespace.
    pub vpas: Vec<Listed>,
    /// The node size that replaces `node-cpus` (None: unknown, or an explicit `--node-cpus`).
    pub nodes: Option<NodeCpus>,
    /// What the listed pods run, by image reference as their spec writes it: digest → pods.
    pub running: BTreeMap<String, BTreeMap<String, usize>>,
}

impl Inventory {
    /// Sort listed objects into the audit's parts; owned objects are dropped here.
    pub fn from_listed(listed: Vec<Listed>, nodes: &[Listed]) -> Inventory {
        let mut inv = Inventory {
            nodes: NodeCpus::largest(nodes),
            ..Inventory::default()
        };
        for mut o in listed {
            if o.kind == "Pod" {
                for (image, digest) in running_digests(&o.json) {
                    *inv.running
                        .entry(image)
                        .or_default()
                        .entry(digest)
                        .or_default() += 1;
                }
            }
            o.strip_bookkeeping();
            match o.kind.as_str() {
                "LimitRange" => inv.limit_ranges.push(o),
                "VerticalPodAutoscaler" => inv.vpas.push(o),
                _ if o.is_owned() => {}
                _ => inv.objects.push(o),
            }
        }
        inv.objects.sort_by(|a, b| {
            (&a.namespace, &a.kind, &a.name).cmp(&(&b.namespace, &b.kind, &b.name))
        });
        inv
    }
}

/// The platform (`os/arch`) of the nodes, from `status.nodeInfo`: the one most of them have
/// (on a tie, the first in order), and how many nodes have another. None: no node says.
pub fn node_platform(nodes: &[Listed]) -> Option<(String, usize)> {
    let mut count: BTreeMap<String, usize> = BTreeMap::new();
    for n in nodes {
        let info = &n.json["status"]["nodeInfo"];
        if let (Some(os), Some(arch)) = (
            info["operatingSystem"].as_str().filter(|s| !s.is_empty()),
            info["architecture"].as_str().filter(|s| !s.is_empty()),
        ) {
            *count.entry(format!("{os}/{arch}")).or_default() += 1;
        }
    }
    let total: usize = count.values().sum();
    let (platform, n) = count
        .into_iter()
        .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)))?;
    Some((platform, total - n))
}

/// An image the listed workloads name, for `--inspect-images`, with what their pods run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageInUse {
    /// As the workloads' specs write it.
    pub image: String,
    /// The digest most of the listed pods run for it, when any reports one.
    pub running: Option<RunningDigest>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunningDigest {
    pub digest: String,
    /// Pods that run it, of the pods that report a digest for the image.
    pub pods: usize,
    pub of: usize,
    /// How many different digests those pods run (a tag pushed again during a rollout).
    pub digests: usize,
}

/// Every image the audited objects name, each with the digest its pods run (the most common one;
/// on a tie, the first in order).
pub fn images_in_use(inv: &Inventory, cfg: &Config) -> Vec<ImageInUse> {
    let mut images: Vec<String> = inv
        .objects
        .iter()
        .flat_map(|o| {
            let src = Source::from_text(Origin::Stdin(o.reference()), o.text());
            crate::lint::images(&src, cfg)
        })
        .collect();
    images.sort();
    images.dedup();
    images
        .into_iter()
        .map(|image| {
            let running = inv.running.get(&image).and_then(|digests| {
                let (digest, pods) = digests
                    .iter()
                    .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)))?;
                Some(RunningDigest {
                    digest: digest.clone(),
                    pods: *pods,
                    of: digests.values().sum(),
                    digests: digests.len(),
                })
            });
            ImageInUse { image, running }
        })
        .collect()
}

/// The digests a pod's containers run, as the kubelet reports them (`status.containerStatuses[]`
/// and `initContainerStatuses[].imageID`), each with the image its spec names for that container.
/// A tag can be pushed again after the pod started; the digest is what the node pulled.
///
/// containerd and CRI-O report `repository@sha256:…`, Docker's `docker-pullable://…@sha256:…`;
/// a bare image ID (`sha256:…`, `docker://sha256:…`) is the config's digest, which no registry
/// serves as a manifest, so it is left out.
pub fn running_digests(pod: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (specs, statuses) in [
        ("containers", "containerStatuses"),
        ("initContainers", "initContainerStatuses"),
    ] {
        let Some(statuses) = pod["status"][statuses].as_array() else {
            continue;
        };
        let specs = pod["spec"][specs]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        for st in statuses {
            let spec = specs.iter().find(|c| c["name"] == st["name"]);
            let image = spec.and_then(|c| c["image"].as_str());
            let digest = st["imageID"]
                .as_str()
                .and_then(|id| id.rsplit_once('@'))
                .map(|(_, d)| d)
                .filter(|d| is_digest(d));
            if let (Some(image), Some(digest)) = (image, digest) {
                out.push((image.to_string(), digest.to_string()));
            }
        }
    }
    out
}

/// `sha256:` and 64 hex digits (or another algorithm's name and its hex digest).
fn is_digest(d: &str) -> bool {
    d.split_once(':').is_some_and(|(alg, hex)| {
        !alg.is_empty()
            && alg.bytes().all(|b| b.is_ascii_alphanumeric())
            && hex.len() >= 32
            && hex.bytes().all(|b| b.is_ascii_hexdigit())
    })
}

/// Lint every object (in parallel) with its namespace's LimitRanges and VPAs; one report per object,
/// named by its reference. LimitRanges are reports of their own too (GK109 reads them). The
/// cluster's node size, when known, replaces `node-cpus`.
pub fn audit(inv: &Inventory, cfg: &Config, sel: &Selection, project: &Project) -> Vec<FileReport> {
    let mut cfg = cfg.clone();
    let node_note = inv.nodes.as_ref().map(|n| {
        cfg.node_cpus = Some(n.cpus);
        n.note()
    });
    // Each namespace's LimitRanges and VPAs as documents to append (serialised once), and how
    // many. A VPA applies only to the workload it targets, which the lint works out.
    let mut limit_ranges: HashMap<Option<&str>, (String, usize)> = HashMap::new();
    for lr in inv.limit_ranges.iter().chain(&inv.vpas) {
        let (docs, n) = limit_ranges.entry(lr.namespace.as_deref()).or_default();
        docs.push_str("---\n");
        docs.push_str(&lr.text());
        docs.push('\n');
        *n += 1;
    }
    inv.objects
        .par_iter()
        .map(|o| (o, limit_ranges.get(&o.namespace.as_deref())))
        .chain(inv.limit_ranges.par_iter().map(|lr| (lr, None)))
        .map(|(o, context)| {
            let mut text = o.text();
            text.push('\n');
            if let Some((docs, _)) = context {
                text.push_str(docs);
            }
            let src = Source::from_text(Origin::Stdin(o.reference()), text);
            let mut report = lint_source_with(src, &cfg, sel, project, |_, y, diags| {
                // Only the object's own document: the others are context here.
                diags.retain(|d| d.document == 0);
                for d in diags {
                    let (path, _) = crate::helm::path_to(y, 0, d.range.start);
                    d.provenance = Some(Box::new(Provenance::Cluster(ClusterRef {
                        kind: o.kind.clone(),
                        namespace: o.namespace.clone(),
                        name: o.name.clone(),
                        container: d.container.as_deref().map(str::to_string),
                        path: field_path(&path),
                    })));
                    if let (Some(n), true) = (&node_note, uses_node_cpus(d.code)) {
                        d.notes.push(n.clone());
                    }
                }
            });
            // The appended LimitRanges and VPAs are context, not objects of this report.
            let appended = context.map_or(0, |(_, n)| *n);
            report.stats.documents -= appended;
            report.stats.objects -= appended;
            report
        })
        .collect()
}

/// Every audited object's containers with the runtime the rules see (`--show-containers`).
pub fn containers(
    inv: &Inventory,
    cfg: &Config,
    project: &Project,
) -> Vec<crate::lint::ContainerRow> {
    inv.objects
        .par_iter()
        .flat_map_iter(|o| {
            let src = Source::from_text(Origin::Stdin(o.reference()), o.text());
            crate::lint::containers(&src, cfg, project)
        })
        .collect()
}

/// The rules whose numbers depend on the node's CPU count.
fn uses_node_cpus(code: Code) -> bool {
    matches!(code, Code::GK201 | Code::GK202 | Code::GK203 | Code::GK204)
}

/// `spec.template.spec.containers[0].resources.limits.cpu`, as kubectl's JSONPath-like paths.
pub fn field_path(path: &[PathSeg]) -> String {
    crate::fix::engine::join_key("", path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn deployment(name: &str, limits: Value, annotations: Value) -> Value {
        json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": "shop", "annotations": annotations,
                         "managedFields": [{"manager": "kubectl"}]},
            "spec": {"template": {"spec": {"containers": [{
                "name": "app", "image": "registry.example.com/shop/app:1.0",
                "resources": {"limits": limits}}]}}},
            "status": {"replicas": 1}
        })
    }

    #[test]
    fn running_digests_come_from_container_statuses() {
        let d1 = format!("sha256:{}", "a".repeat(64));
        let d2 = format!("sha256:{}", "b".repeat(64));
        let pod = |id1: &str, id2: &str| {
            Listed::new(
                json!({"kind": "Pod", "metadata": {"name": "p", "namespace": "x",
                "ownerReferences": [{"kind": "ReplicaSet", "name": "a-1", "controller": true}]},
                "spec": {"initContainers": [{"name": "init", "image": "r/init:1"}],
                         "containers": [{"name": "app", "image": "r/app:1"},
                                        {"name": "side", "image": "r/side:1"}]},
                "status": {
                    "initContainerStatuses": [{"name": "init", "imageID": id2}],
                    "containerStatuses": [
                        {"name": "app", "imageID": id1},
                        {"name": "side", "imageID": "docker://sha256:".to_string() + &"c".repeat(64)},
                        {"name": "gone", "imageID": id1}]}}),
            )
        };
        assert_eq!(
            running_digests(
                &pod(
                    &format!("docker.io/r/app@{d1}"),
                    &format!("docker-pullable://r/init@{d2}")
                )
                .json
            ),
            [
                ("r/app:1".to_string(), d1.clone()),
                ("r/init:1".to_string(), d2.clone())
            ]
        );
        let inv = Inventory::from_listed(
            vec![
                pod(&format!("r/app@{d1}"), ""),
                pod(&format!("r/app@{d1}"), ""),
                pod(&format!("r/app@{d2}"), ""),
            ],
            &[],
        );
        assert!(inv.objects.is_empty());
        let app = &inv.running["r/app:1"];
        assert_eq!((app[&d1], app[&d2]), (2, 1));
        assert_eq!(inv.running.len(), 1, "{:?}", inv.running);
    }

    #[test]
    fn the_nodes_platform_is_the_one_most_nodes_have() {
        let node = |name: &str, os: &str, arch: &str| {
            Listed::new(json!({"kind": "Node", "metadata": {"name": name},
                "status": {"nodeInfo": {"operatingSystem": os, "architecture": arch}}}))
        };
        let bare = Listed::new(json!({"kind": "Node", "metadata": {"name": "x"}}));
        assert_eq!(node_platform(std::slice::from_ref(&bare)), None);
        assert_eq!(
            node_platform(&[node("a", "linux", "arm64"), bare.clone()]),
            Some(("linux/arm64".to_string(), 0))
        );
        assert_eq!(
            node_platform(&[
                node("a", "linux", "arm64"),
                node("b", "linux", "amd64"),
                node("c", "linux", "arm64"),
            ]),
            Some(("linux/arm64".to_string(), 1))
        );
        assert_eq!(
            node_platform(&[node("a", "linux", "arm64"), node("b", "linux", "amd64")]),
            Some(("linux/amd64".to_string(), 1))
        );
    }

    #[test]
    fn images_in_use_pick_the_digest_most_pods_run() {
        let d = |c: char| format!("sha256:{}", c.to_string().repeat(64));
        let mut inv = Inventory::from_listed(
            vec![
                Listed::new(deployment("a", json!({}), json!({}))),
                Listed::new(json!({"apiVersion": "v1", "kind": "Pod",
                    "metadata": {"name": "q", "namespace": "x"},
                    "spec": {"containers": [{"name": "c", "image": "r/other:2"}]}})),
            ],
            &[],
        );
        inv.running.insert(
            "registry.example.com/shop/app:1.0".into(),
            [(d('b'), 1), (d('a'), 2), (d('c'), 2)]
                .into_iter()
                .collect(),
        );
        let images = images_in_use(&inv, &Config::default());
        assert_eq!(
            images,
            [
                ImageInUse {
                    image: "r/other:2".into(),
                    running: None
                },
                ImageInUse {
                    image: "registry.example.com/shop/app:1.0".into(),
                    running: Some(RunningDigest {
                        digest: d('a'),
                        pods: 2,
                        of: 5,
                        digests: 3
                    })
                },
            ]
        );
    }

    #[test]
    fn owned_objects_are_reported_through_their_owner() {
        let rs = json!({"kind": "ReplicaSet", "metadata": {"name": "a-1", "namespace": "x",
            "ownerReferences": [{"kind": "Deployment", "name": "a", "controller": true}]}});
        let other = json!({"kind": "Pod", "metadata": {"name": "p", "namespace": "x",
            "ownerReferences": [{"kind": "Workflow", "name": "w", "controller": true}]}});
        let bare = json!({"kind": "Pod", "metadata": {"name": "q", "namespace": "x"}});
        let inv = Inventory::from_listed(
            vec![Listed::new(rs), Listed::new(other), Listed::new(bare)],
            &[],
        );
        let names: Vec<&str> = inv.objects.iter().map(|o| o.name.as_str()).collect();
        assert_eq!(names, ["p", "q"]);
    }

    #[test]
    fn findings_name_the_object_and_field_and_use_limit_ranges() {
        let lr = json!({"apiVersion": "v1", "kind": "LimitRange",
            "metadata": {"name": "defaults", "namespace": "shop"},
            "spec": {"limits": [{"type": "Container", "default": {"memory": "1Gi"}}]}});
        let inv = Inventory::from_listed(
            vec![
                Listed::new(deployment("a", json!({"cpu": "2"}), json!({}))),
                Listed::new(deployment(
                    "b",
                    json!({"cpu": "2"}),
                    json!({"golint-k8s.io/ignore": "GK201,GK101"}),
                )),
                Listed::new(lr),
            ],
            &[Listed::new(
                json!({"kind": "Node", "metadata": {"name": "n1"},
                "status": {"capacity": {"cpu": "8"}, "allocatable": {"cpu": "7910m"}}}),
            )],
        );
        assert_eq!(inv.nodes.as_ref().unwrap().cpus, 8);
        // The cluster's node size replaces the config's.
        let cfg = Config {
            node_cpus: Some(2),
            ..Config::default()
        };
        let reports = audit(&inv, &cfg, &Selection::default(), &Project::default());
        let a = &reports[0];
        assert_eq!(a.name, "Deployment/shop/a");
        let gk201 = a
            .findings
            .iter()
            .find(|f| f.diagnostic.code == Code::GK201)
            .expect("GK201");
        let r = gk201.diagnostic.cluster().unwrap();
        assert_eq!(
            r.path,
            "spec.template.spec.containers[0].resources.limits.cpu"
        );
        assert_eq!(r.container.as_deref(), Some("app"));
        assert!(
            gk201
                .diagnostic
                .message
                .contains("GOMAXPROCS = 8 (node CPUs)"),
            "{}",
            gk201.diagnostic.message
        );
        assert!(gk201.diagnostic.notes.iter().any(|n| n.contains("(n1)")));
        // The LimitRange's default memory limit is the container's: GK101 fires.
        assert!(a.findings.iter().any(|f| f.diagnostic.code == Code::GK101));
        // The annotation silences b exactly as in a file.
        assert!(reports[1]
            .findings
            .iter()
            .all(|f| ![Code::GK201, Code::GK101].contains(&f.diagnostic.code)));
        // Server bookkeeping is not linted text.
        let text = &a.source.as_ref().unwrap().text;
        assert!(!text.contains("managedFields") && !text.contains("\"status\""));
    }
}
