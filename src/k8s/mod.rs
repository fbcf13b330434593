//! Kubernetes objects read from the span tree: which documents are objects, where each kind keeps
//! its pod spec, and the namespace-scoped objects that change other objects' effective values
//! (LimitRanges, ConfigMaps).
//!
//! We read the tree directly instead of deserialising into typed API structs: every value we look
//! at keeps its span, a field's presence is what the user wrote (not a filled-in default), and a
//! wrongly typed field elsewhere in the object does not hide the fields we need.

pub mod container;
pub mod index;
pub mod kustomize;
pub mod limitrange;
pub mod quantity;
pub mod resize;
pub mod vpa;

use crate::yaml::{NodeId, Yaml};

/// An object's names, owned: what a finding says it belongs to.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ObjectRef {
    pub api_version: Option<String>,
    pub kind: Option<String>,
    pub namespace: Option<String>,
    pub name: Option<String>,
}

pub use container::{Container, ContainerKind, EnvValue, EnvVar, Pod};
pub use quantity::Quantity;

/// A Kubernetes object: a mapping with `apiVersion` and `kind`. Its names are borrowed from the
/// tree: a file's objects live no longer than its tree, and copying four strings of every object
/// was a measurable share of a lint run.
#[derive(Debug, Clone)]
pub struct Object<'y> {
    pub root: NodeId,
    pub api_version: Option<&'y str>,
    pub kind: &'y str,
    pub name: Option<&'y str>,
    pub namespace: Option<&'y str>,
    pub metadata: Option<NodeId>,
}

impl<'y> Object<'y> {
    pub fn reference(&self) -> ObjectRef {
        let owned = |s: Option<&str>| s.map(str::to_string);
        ObjectRef {
            api_version: owned(self.api_version),
            kind: Some(self.kind.to_string()),
            namespace: owned(self.namespace),
            name: owned(self.name),
        }
    }

    /// The namespace the object lands in when applied without `-n` (for matching LimitRanges).
    pub fn effective_namespace(&self) -> &'y str {
        self.namespace.unwrap_or("default")
    }

    fn group(&self) -> &'y str {
        self.api_version
            .and_then(|a| a.split_once('/').map(|(g, _)| g))
            .unwrap_or("")
    }
}

/// Objects of one document, with `List` / `*List` items flattened. An item that is an alias of
/// one already seen is the same object and is linted once: otherwise Lists of aliases of Lists
/// turn 900 bytes into 810,000 objects.
pub fn objects<'y>(y: &'y Yaml, root: NodeId) -> Vec<Object<'y>> {
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    collect_objects(y, root, &mut out, &mut seen, 0);
    out
}

fn collect_objects<'y>(
    y: &'y Yaml,
    node: NodeId,
    out: &mut Vec<Object<'y>>,
    seen: &mut std::collections::HashSet<NodeId>,
    depth: usize,
) {
    if !y.is_mapping(node) || depth > 4 {
        return;
    }
    let Some(node) = y.resolve(node) else { return };
    // Only aliases can bring a node back (a tree without them has no cycles to guard against).
    if y.has_aliases && !seen.insert(node) {
        return;
    }
    let [kind, api_version, items, metadata] =
        y.get_entries(node, ["kind", "apiVersion", "items", "metadata"]);
    let value_str = |e: Option<(NodeId, NodeId)>| e.and_then(|(_, v)| y.str(v));
    let (kind, api_version) = (value_str(kind), value_str(api_version));
    if let (Some(kind), Some((_, items))) = (kind, items) {
        if kind.ends_with("List") {
            for &item in y.items(items) {
                collect_objects(y, item, out, seen, depth + 1);
            }
            return;
        }
    }
    let Some(kind) = kind else { return };
    if api_version.is_none() && depth == 0 {
        return;
    }
    let metadata = metadata.map(|(_, m)| m).filter(|m| y.is_mapping(*m));
    let [name, generate_name, namespace] = match metadata {
        Some(m) => y.get_entries(m, ["name", "generateName", "namespace"]),
        None => [None; 3],
    };
    out.push(Object {
        root: node,
        api_version,
        kind,
        name: value_str(name).or_else(|| value_str(generate_name)),
        namespace: value_str(namespace),
        metadata,
    });
}

/// Where a pod spec lives: the spec mapping and the metadata of its template (for annotations).
#[derive(Debug, Clone, Copy)]
pub struct PodSpecRef {
    pub spec: NodeId,
    pub template_metadata: Option<NodeId>,
}

/// The one place that knows where each kind keeps its pod spec (cf. kube-linter's extract package).
pub fn pod_spec(y: &Yaml, obj: &Object, configured: &[PodSpecPath]) -> Option<PodSpecRef> {
    let group = obj.group();
    let path: &[&str] = match (group, obj.kind) {
        ("", "Pod") => &["spec"],
        ("" | "apps" | "extensions", "ReplicationController" | "ReplicaSet")
        | ("apps" | "extensions", "Deployment" | "StatefulSet" | "DaemonSet")
        | ("batch", "Job")
        | ("argoproj.io", "Rollout")
        | ("serving.knative.dev", "Service" | "Configuration")
        | ("apps.kruise.io", "CloneSet" | "Advanced StatefulSet" | "StatefulSet" | "DaemonSet") => {
            &["spec", "template", "spec"]
        }
        ("batch", "CronJob") => &["spec", "jobTemplate", "spec", "template", "spec"],
        ("", "PodTemplate") => &["template", "spec"],
        _ => {
            return configured_pod_spec(y, obj, configured);
        }
    };
    spec_at(y, obj.root, path)
}

/// Where a custom kind keeps its pod spec (the config's `pod-spec-paths`).
#[derive(Debug, Clone)]
pub struct PodSpecPath {
    pub api_version: String,
    pub kind: String,
    pub path: Vec<String>,
}

fn configured_pod_spec(y: &Yaml, obj: &Object, configured: &[PodSpecPath]) -> Option<PodSpecRef> {
    let api = obj.api_version.unwrap_or("");
    let p = configured
        .iter()
        .find(|p| p.kind == obj.kind && (p.api_version.is_empty() || p.api_version == api))?;
    let path: Vec<&str> = p.path.iter().map(String::as_str).collect();
    spec_at(y, obj.root, &path)
}

fn spec_at(y: &Yaml, root: NodeId, path: &[&str]) -> Option<PodSpecRef> {
    let (last, parent_path) = path.split_last()?;
    let parent = y.path(root, parent_path)?;
    let spec = y.get(parent, last)?;
    if !y.is_mapping(spec) {
        return None;
    }
    // The template's metadata sits beside its `spec` (e.g. spec.template.metadata).
    let template_metadata = match parent_path.is_empty() {
        false => y.get(parent, "metadata").filter(|m| y.is_mapping(*m)),
        true => None,
    };
    Some(PodSpecRef {
        spec,
        template_metadata,
    })
}

/// The `annotations` mappings that speak for a pod: the pod template's first (it is closer to the
/// containers), then the object's.
pub fn annotation_maps(
    y: &Yaml,
    obj: &Object,
    template_metadata: Option<NodeId>,
) -> [Option<NodeId>; 2] {
    [template_metadata, obj.metadata].map(|m| m.and_then(|m| y.get(m, "annotations")))
}

/// A string annotation from the first of `maps` that has `key`: the value and its node.
pub fn annotation_in<'y>(
    y: &'y Yaml,
    maps: &[Option<NodeId>; 2],
    key: &str,
) -> Option<(&'y str, NodeId)> {
    annotation_where(y, maps, |k| k == key)
}

/// A string annotation from the first of `maps` with a key that `is_key` accepts.
pub fn annotation_where<'y>(
    y: &'y Yaml,
    maps: &[Option<NodeId>; 2],
    is_key: impl Fn(&str) -> bool,
) -> Option<(&'y str, NodeId)> {
    maps.iter().flatten().find_map(|&a| {
        y.find_entry(a, &is_key)
            .and_then(|(_, v)| y.str(v).map(|s| (s, v)))
    })
}

/// A ConfigMap in the input, for `envFrom` resolution.
#[derive(Debug, Clone)]
pub struct ConfigMap {
    pub name: String,
    pub namespace: String,
    pub data: Option<NodeId>,
}

pub fn config_map(y: &Yaml, obj: &Object) -> Option<ConfigMap> {
    if obj.kind != "ConfigMap" || obj.group() != "" {
        return None;
    }
    Some(ConfigMap {
        name: obj.name?.to_string(),
        namespace: obj.effective_namespace().to_string(),
        data: y.get(obj.root, "data").filter(|d| y.is_mapping(*d)),
    })
}
