//! Containers of a pod spec and what the kubelet will actually give them: effective requests and
//! limits (request defaulted from the limit, LimitRange defaults, pod-level limits), and env vars
//! with their literal text, YAML 1.1 type and downward-API references.

use super::limitrange::LimitRange;
use super::quantity::Quantity;
use super::{annotation_in, annotation_where, PodSpecRef};
use crate::yaml::scalar::json_float_is_text;
use crate::yaml::{NodeId, Style, Yaml, Yaml11};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContainerKind {
    App,
    Init,
    /// An init container with `restartPolicy: Always` (native sidecar).
    Sidecar,
    Ephemeral,
}

impl ContainerKind {
    pub fn describe(self) -> &'static str {
        match self {
            ContainerKind::App => "container",
            ContainerKind::Init => "init container",
            ContainerKind::Sidecar => "sidecar container",
            ContainerKind::Ephemeral => "ephemeral container",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resource {
    Cpu,
    Memory,
}

impl Resource {
    pub fn key(self) -> &'static str {
        match self {
            Resource::Cpu => "cpu",
            Resource::Memory => "memory",
        }
    }
}

/// A quantity as written: its text, parsed value (None when unparseable) and nodes.
///
/// This and the other types of a pod borrow their texts from the tree (`'y`): a file's pods live
/// no longer than its tree, and copying every name, value and quantity of every container into
/// strings of its own was most of the allocations of a lint run.
#[derive(Debug, Clone)]
pub struct QuantityValue<'y> {
    pub text: &'y str,
    pub quantity: Option<Quantity>,
    pub key: NodeId,
    pub node: NodeId,
}

impl<'y> QuantityValue<'y> {
    pub fn read(y: &'y Yaml, key: NodeId, node: NodeId) -> Option<QuantityValue<'y>> {
        let text = y.str(node)?;
        let resolved = y.resolved(node);
        if text.is_empty() || matches!(resolved, Some(Yaml11::Null)) {
            return None;
        }
        // YAML numbers reach the API server as JSON numbers (`0100` is 64, `1e3` is 1000), and
        // Quantity's UnmarshalJSON parses that JSON text.
        let quantity = match resolved {
            // The integer's JSON text is its decimal digits, written without a String.
            Some(Yaml11::Int(i)) => Quantity::parse(itoa::Buffer::new().format(i)).ok(),
            // A float written as Go would print it needs no formatting (see json_float_is_text).
            Some(Yaml11::Float(_)) if json_float_is_text(text) => Quantity::parse(text).ok(),
            Some(r @ Yaml11::Float(_)) => r.json_text().and_then(|j| Quantity::parse(&j).ok()),
            _ => Quantity::parse_api(text).ok(),
        };
        Some(QuantityValue {
            text,
            quantity,
            key,
            node,
        })
    }
}

/// Declared `limits` / `requests` of cpu and memory.
#[derive(Debug, Clone, Default)]
pub struct ResourceList<'y> {
    pub node: Option<NodeId>,
    pub cpu: Option<QuantityValue<'y>>,
    pub memory: Option<QuantityValue<'y>>,
}

impl<'y> ResourceList<'y> {
    fn read(y: &'y Yaml, node: Option<NodeId>) -> ResourceList<'y> {
        let Some(node) = node.filter(|n| y.is_mapping(*n)) else {
            return ResourceList::default();
        };
        let [cpu, memory] = y
            .get_entries(node, ["cpu", "memory"])
            .map(|e| e.and_then(|(key, v)| QuantityValue::read(y, key, v)));
        ResourceList {
            node: Some(node),
            cpu,
            memory,
        }
    }

    pub fn get(&self, r: Resource) -> Option<&QuantityValue<'y>> {
        match r {
            Resource::Cpu => self.cpu.as_ref(),
            Resource::Memory => self.memory.as_ref(),
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct Resources<'y> {
    /// The `resources` key and its value, when present.
    pub key: Option<NodeId>,
    pub node: Option<NodeId>,
    pub limits: ResourceList<'y>,
    pub requests: ResourceList<'y>,
}

impl<'y> Resources<'y> {
    fn read(y: &'y Yaml, map: NodeId) -> Resources<'y> {
        Resources::from_entry(y, y.get_entry(map, "resources"))
    }

    fn from_entry(y: &'y Yaml, entry: Option<(NodeId, NodeId)>) -> Resources<'y> {
        let Some((key, node)) = entry else {
            return Resources::default();
        };
        if !y.is_mapping(node) {
            return Resources {
                key: Some(key),
                node: Some(node),
                ..Resources::default()
            };
        }
        let [limits, requests] = y.get_entries(node, ["limits", "requests"]);
        Resources {
            key: Some(key),
            node: Some(node),
            limits: ResourceList::read(y, limits.map(|(_, v)| v)),
            requests: ResourceList::read(y, requests.map(|(_, v)| v)),
        }
    }
}

/// Where an effective value comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum ValueOrigin<'y> {
    Declared,
    /// A request defaulted from the container's limit (Pod defaulting).
    FromLimit,
    LimitRange {
        name: &'y str,
        field: &'static str,
        /// Another linted file that holds the LimitRange (None: this one).
        file: Option<&'y str>,
    },
    PodLevel,
}

#[derive(Debug, Clone)]
pub struct EffectiveValue<'y> {
    pub quantity: Quantity,
    pub text: &'y str,
    /// The value node the user wrote, or the LimitRange / pod-level value node.
    pub node: Option<NodeId>,
    pub origin: ValueOrigin<'y>,
}

impl EffectiveValue<'_> {
    pub fn is_declared(&self) -> bool {
        self.origin == ValueOrigin::Declared
    }

    /// A note saying where an inherited value came from; None for declared values.
    pub fn origin_note(&self, what: &str) -> Option<String> {
        match &self.origin {
            ValueOrigin::Declared => None,
            ValueOrigin::FromLimit => Some(format!(
                "{what} {} is the limit: Kubernetes defaults a missing request to the limit",
                self.text
            )),
            ValueOrigin::LimitRange { name, field, file } => Some(format!(
                "{what} {} comes from LimitRange {name} ({field}{}), applied when the pod is created",
                self.text,
                file.map(|f| format!(", in {f}")).unwrap_or_default()
            )),
            ValueOrigin::PodLevel => Some(format!(
                "{what} {} comes from the pod-level spec.resources, which the kubelet applies to containers without their own limit",
                self.text
            )),
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct Effective<'y> {
    pub limit_cpu: Option<EffectiveValue<'y>>,
    pub limit_memory: Option<EffectiveValue<'y>>,
    pub request_cpu: Option<EffectiveValue<'y>>,
    pub request_memory: Option<EffectiveValue<'y>>,
}

impl<'y> Effective<'y> {
    pub fn limit(&self, r: Resource) -> Option<&EffectiveValue<'y>> {
        match r {
            Resource::Cpu => self.limit_cpu.as_ref(),
            Resource::Memory => self.limit_memory.as_ref(),
        }
    }

    pub fn request(&self, r: Resource) -> Option<&EffectiveValue<'y>> {
        match r {
            Resource::Cpu => self.request_cpu.as_ref(),
            Resource::Memory => self.request_memory.as_ref(),
        }
    }
}

/// A divisor as the kubelet uses it: one whose value is zero is unset and divides by 1
/// (kubernetes/kubernetes v1.31.0, pkg/api/v1/resource/helpers.go, `ExtractContainerResourceValue`,
/// which validation's `validateContainerResourceDivisor` accepts as unset too). The API server
/// writes an unset divisor back as `divisor: "0"`, so `kubectl get -o yaml` output has one wherever
/// a `resourceFieldRef` is.
fn unset_divisor_is_one(q: Quantity) -> Quantity {
    if q.is_zero() {
        Quantity::from_units(1, q.format())
    } else {
        q
    }
}

/// A downward-API `resourceFieldRef`.
#[derive(Debug, Clone)]
pub struct FieldRef<'y> {
    pub node: NodeId,
    pub resource: Option<(&'y str, NodeId)>,
    /// The divisor text, its node and parsed value (1 for a zero divisor, as the kubelet reads it).
    pub divisor: Option<(&'y str, NodeId, Option<Quantity>)>,
    pub container_name: Option<(&'y str, NodeId)>,
}

#[derive(Debug, Clone)]
pub enum EnvValue<'y> {
    /// `value:` with a scalar.
    Literal {
        node: NodeId,
        text: &'y str,
        style: Style,
        resolved: Yaml11,
    },
    /// No `value` and no `valueFrom`: the variable is set to the empty string.
    Empty,
    ResourceFieldRef(FieldRef<'y>),
    /// Another `valueFrom` (configMapKeyRef, secretKeyRef, fieldRef): value unknown here.
    Other {
        node: NodeId,
    },
}

#[derive(Debug, Clone)]
pub struct EnvVar<'y> {
    pub name: &'y str,
    pub name_node: NodeId,
    pub entry: NodeId,
    pub value: EnvValue<'y>,
}

impl<'y> EnvVar<'y> {
    /// The text the process will see, when it is known from the manifest.
    pub fn literal(&self) -> Option<&'y str> {
        match &self.value {
            EnvValue::Literal { text, .. } => Some(text),
            EnvValue::Empty => Some(""),
            _ => None,
        }
    }

    /// The node a finding about this variable's value points at.
    pub fn value_node(&self) -> NodeId {
        match &self.value {
            EnvValue::Literal { node, .. } => *node,
            _ => self.name_node,
        }
    }
}

/// An `envFrom` source.
#[derive(Debug, Clone)]
pub struct EnvFrom<'y> {
    pub node: NodeId,
    pub config_map: Option<&'y str>,
    pub prefix: &'y str,
}

#[derive(Debug, Clone)]
pub struct Container<'y> {
    pub node: NodeId,
    pub kind: ContainerKind,
    pub name: Option<&'y str>,
    pub name_node: Option<NodeId>,
    pub image: Option<&'y str>,
    pub resources: Resources<'y>,
    pub env_key: Option<NodeId>,
    pub env_node: Option<NodeId>,
    pub env: Vec<EnvVar<'y>>,
    pub env_from: Vec<EnvFrom<'y>>,
    /// `command` and `args`: what the container runs, when the manifest says so.
    pub command: Option<NodeId>,
    pub args: Option<NodeId>,
}

impl<'y> Container<'y> {
    fn read(y: &'y Yaml, node: NodeId, kind: ContainerKind) -> Container<'y> {
        let [name_entry, restart, env_entry, env_from, image, resources, command, args] = y
            .get_entries(
                node,
                [
                    "name",
                    "restartPolicy",
                    "env",
                    "envFrom",
                    "image",
                    "resources",
                    "command",
                    "args",
                ],
            );
        let value_str = |e: Option<(NodeId, NodeId)>| e.and_then(|(_, v)| y.str(v));
        let kind = if kind == ContainerKind::Init && value_str(restart) == Some("Always") {
            ContainerKind::Sidecar
        } else {
            kind
        };
        let (env_key, env_node) = match env_entry {
            Some((k, v)) => (Some(k), Some(v)),
            None => (None, None),
        };
        let env = env_node.map(|e| read_env(y, e)).unwrap_or_default();
        let env_from = env_from
            .map(|(_, ef)| {
                y.items(ef)
                    .iter()
                    .map(|&item| EnvFrom {
                        node: item,
                        config_map: y
                            .get(item, "configMapRef")
                            .and_then(|r| y.get_str(r, "name")),
                        prefix: y.get_str(item, "prefix").unwrap_or(""),
                    })
                    .collect()
            })
            .unwrap_or_default();
        Container {
            node,
            kind,
            name: value_str(name_entry),
            name_node: name_entry.map(|(_, v)| v),
            image: value_str(image),
            resources: Resources::from_entry(y, resources),
            env_key,
            env_node,
            env,
            env_from,
            command: command.map(|(_, v)| v),
            args: args.map(|(_, v)| v),
        }
    }

    pub fn display_name(&self) -> &'y str {
        self.name.unwrap_or("<unnamed>")
    }

    /// The last env entry with this name (the one the process sees).
    pub fn env_var(&self, name: &str) -> Option<&EnvVar<'y>> {
        self.env.iter().rev().find(|e| e.name == name)
    }

    /// Node a container-level finding points at: its name, else the container mapping.
    pub fn anchor_node(&self) -> NodeId {
        self.name_node.unwrap_or(self.node)
    }
}

fn read_env<'y>(y: &'y Yaml, env: NodeId) -> Vec<EnvVar<'y>> {
    let items = y.items(env);
    let mut out = Vec::with_capacity(items.len());
    for &entry in items {
        let [name, value, value_from] = y.get_entries(entry, ["name", "value", "valueFrom"]);
        let Some((_, name_node)) = name else {
            continue;
        };
        let Some(name) = y.str(name_node) else {
            continue;
        };
        let value = if let Some((_, v)) = value {
            match y.scalar(v) {
                Some((text, style, _)) => EnvValue::Literal {
                    node: v,
                    text,
                    style,
                    resolved: y.resolved(v).unwrap_or(Yaml11::Str),
                },
                None => EnvValue::Other { node: v },
            }
        } else if let Some((_, vf)) = value_from {
            if let Some(rf) = y.get(vf, "resourceFieldRef") {
                let s = |k: &str| y.get(rf, k).and_then(|n| y.str(n).map(|t| (t, n)));
                EnvValue::ResourceFieldRef(FieldRef {
                    node: rf,
                    resource: s("resource"),
                    divisor: s("divisor").map(|(t, n)| {
                        let q = QuantityValue::read(y, n, n).and_then(|q| q.quantity);
                        (t, n, q.map(unset_divisor_is_one))
                    }),
                    container_name: s("containerName"),
                })
            } else {
                EnvValue::Other { node: vf }
            }
        } else {
            EnvValue::Empty
        };
        out.push(EnvVar {
            name,
            name_node,
            entry,
            value,
        });
    }
    out
}

/// A pod spec with its containers and the context that decides their effective values.
#[derive(Debug, Clone)]
pub struct Pod<'y> {
    pub spec: PodSpecRef,
    pub containers: Vec<Container<'y>>,
    /// Pod-level `spec.resources`.
    pub resources: Resources<'y>,
}

impl<'y> Pod<'y> {
    pub fn read(y: &'y Yaml, spec: PodSpecRef) -> Pod<'y> {
        let mut containers = Vec::new();
        for (key, kind) in [
            ("initContainers", ContainerKind::Init),
            ("containers", ContainerKind::App),
            ("ephemeralContainers", ContainerKind::Ephemeral),
        ] {
            if let Some(list) = y.get(spec.spec, key) {
                for &c in y.items(list) {
                    if y.is_mapping(c) {
                        containers.push(Container::read(y, c, kind));
                    }
                }
            }
        }
        Pod {
            spec,
            containers,
            resources: Resources::read(y, spec.spec),
        }
    }

    pub fn container_named(&self, name: &str) -> Option<&Container<'y>> {
        self.containers.iter().find(|c| c.name == Some(name))
    }

    /// Effective requests and limits of one container, as the kubelet will see them.
    pub fn effective(&self, c: &Container<'y>, limit_ranges: &[&LimitRange<'y>]) -> Effective<'y> {
        if c.kind == ContainerKind::Ephemeral {
            // Ephemeral containers cannot set resources and get none from LimitRanges.
            return Effective::default();
        }
        let declared = |v: Option<&QuantityValue<'y>>| {
            v.and_then(|q| {
                q.quantity.map(|quantity| EffectiveValue {
                    quantity,
                    text: q.text,
                    node: Some(q.node),
                    origin: ValueOrigin::Declared,
                })
            })
        };
        let mut eff = Effective::default();
        for r in [Resource::Cpu, Resource::Memory] {
            let mut limit = declared(c.resources.limits.get(r));
            let mut request = declared(c.resources.requests.get(r));
            // LimitRange admission runs on the Pod after API defaulting; a declared limit makes the
            // request default to it first, so only the missing pieces come from the LimitRange.
            if request.is_none() {
                if let Some(l) = &limit {
                    request = Some(EffectiveValue {
                        origin: ValueOrigin::FromLimit,
                        ..l.clone()
                    });
                }
            }
            for lr in limit_ranges {
                if limit.is_none() {
                    limit = lr.default_limit(r);
                }
                if request.is_none() {
                    request = lr.default_request(r);
                }
            }
            if limit.is_none() {
                if let Some(q) = self.resources.limits.get(r) {
                    limit = q.quantity.map(|quantity| EffectiveValue {
                        quantity,
                        text: q.text,
                        node: Some(q.node),
                        origin: ValueOrigin::PodLevel,
                    });
                }
            }
            match r {
                Resource::Cpu => {
                    eff.limit_cpu = limit;
                    eff.request_cpu = request;
                }
                Resource::Memory => {
                    eff.limit_memory = limit;
                    eff.request_memory = request;
                }
            }
        }
        eff
    }

    /// Guaranteed QoS with whole-core CPU requests in every container: the static CPU manager
    /// policy, where the nodes run it, pins CPUs, which is a legitimate reason for CPU limits
    /// (docs/semantics.md, CFS quota: static CPU manager).
    pub fn is_guaranteed_whole_cores(&self, limit_ranges: &[&LimitRange<'y>]) -> bool {
        let mut any = false;
        for c in &self.containers {
            if c.kind == ContainerKind::Ephemeral {
                continue;
            }
            any = true;
            let e = self.effective(c, limit_ranges);
            let ok = match (
                &e.limit_cpu,
                &e.request_cpu,
                &e.limit_memory,
                &e.request_memory,
            ) {
                (Some(lc), Some(rc), Some(lm), Some(rm)) => {
                    lc.quantity == rc.quantity
                        && lm.quantity == rm.quantity
                        && rc.quantity.nanos() % 1_000_000_000 == 0
                        && lc.origin != ValueOrigin::PodLevel
                }
                _ => false,
            };
            if !ok {
                return false;
            }
        }
        any
    }
}

/// An annotation for one container (`key.<container>`), falling back to the pod-wide `key`, in
/// the pod's `annotations` mappings (see [`super::annotation_maps`]).
pub fn container_annotation<'y>(
    y: &'y Yaml,
    maps: &[Option<NodeId>; 2],
    c: &Container,
    key: &str,
) -> Option<(&'y str, NodeId, bool)> {
    if let Some(name) = &c.name {
        // `key.<name>`, tested in place: building it cost an allocation per container and key.
        let per_container = |k: &str| {
            k.strip_prefix(key)
                .and_then(|rest| rest.strip_prefix('.'))
                .is_some_and(|rest| rest == *name)
        };
        if let Some((v, n)) = annotation_where(y, maps, per_container) {
            return Some((v, n, true));
        }
    }
    annotation_in(y, maps, key).map(|(v, n)| (v, n, false))
}
