//! LimitRange defaults (docs/semantics.md, LimitRange): the admission plugin fills a container's
//! absent limits from `default` and absent requests from `defaultRequest`, after the LimitRange
//! object itself was defaulted (`default` from `max`; `defaultRequest` from `default`, else `min`).
//! Templates never show these values, so without them "no limit" findings would be false.
//!
//! A LimitRange applies to its whole namespace, wherever it is written: one read from another
//! linted file ([`crate::k8s::index`]) is kept as [`Stored`] and lent out as a [`LimitRange`]
//! without nodes, since its nodes belong to that file's tree.

use super::container::{EffectiveValue, QuantityValue, Resource, ValueOrigin};
use super::quantity::Quantity;
use super::Object;
use crate::yaml::{NodeId, Yaml};

#[derive(Debug, Clone)]
pub struct LimitRange<'y> {
    pub name: &'y str,
    pub namespace: &'y str,
    /// The file it was read from, when that is another file than the one being linted.
    pub file: Option<&'y str>,
    default: [Option<Bound<'y>>; 2],
    default_request: [Option<Bound<'y>>; 2],
}

/// One default a LimitRange gives a container.
#[derive(Debug, Clone)]
struct Bound<'y> {
    quantity: Quantity,
    text: &'y str,
    /// The value's node, in the linted file's tree (None for another file's LimitRange).
    node: Option<NodeId>,
    /// The field it comes from: `default`, `defaultRequest`, `max` or `min`.
    field: &'static str,
}

fn idx(r: Resource) -> usize {
    match r {
        Resource::Cpu => 0,
        Resource::Memory => 1,
    }
}

impl<'y> LimitRange<'y> {
    pub fn read(y: &'y Yaml, obj: &Object<'y>) -> Option<LimitRange<'y>> {
        if obj.kind != "LimitRange" {
            return None;
        }
        let limits = y.path(obj.root, &["spec", "limits"])?;
        let mut lr = LimitRange {
            name: obj.name.unwrap_or("<unnamed>"),
            namespace: obj.effective_namespace(),
            file: None,
            default: [None, None],
            default_request: [None, None],
        };
        for &item in y.items(limits) {
            if y.get_str(item, "type") != Some("Container") {
                continue;
            }
            for r in [Resource::Cpu, Resource::Memory] {
                let q = |field: &'static str| -> Option<Bound<'y>> {
                    let map = y.get(item, field)?;
                    let (k, v) = y.get_entry(map, r.key())?;
                    let q = QuantityValue::read(y, k, v)?;
                    Some(Bound {
                        quantity: q.quantity?,
                        text: q.text,
                        node: Some(q.node),
                        field,
                    })
                };
                let default = q("default").or_else(|| q("max"));
                let request = q("defaultRequest")
                    .or_else(|| default.clone())
                    .or_else(|| q("min"));
                if lr.default[idx(r)].is_none() {
                    lr.default[idx(r)] = default;
                }
                if lr.default_request[idx(r)].is_none() {
                    lr.default_request[idx(r)] = request;
                }
            }
        }
        Some(lr)
    }

    fn value(&self, v: &Option<Bound<'y>>) -> Option<EffectiveValue<'y>> {
        let b = v.as_ref()?;
        Some(EffectiveValue {
            quantity: b.quantity,
            text: b.text,
            node: b.node,
            origin: ValueOrigin::LimitRange {
                name: self.name,
                field: b.field,
                file: self.file,
            },
        })
    }

    pub fn default_limit(&self, r: Resource) -> Option<EffectiveValue<'y>> {
        self.value(&self.default[idx(r)])
    }

    pub fn default_request(&self, r: Resource) -> Option<EffectiveValue<'y>> {
        self.value(&self.default_request[idx(r)])
    }

    /// A copy that outlives the file's tree, for the other files of the run.
    pub fn store(&self, file: &str) -> Stored {
        let keep = |b: &Option<Bound>| {
            b.as_ref().map(|b| StoredBound {
                quantity: b.quantity,
                text: b.text.to_string(),
                field: b.field,
            })
        };
        Stored {
            file: file.to_string(),
            name: self.name.to_string(),
            namespace: self.namespace.to_string(),
            default: [keep(&self.default[0]), keep(&self.default[1])],
            default_request: [
                keep(&self.default_request[0]),
                keep(&self.default_request[1]),
            ],
        }
    }

    /// Value nodes of this LimitRange's memory quantities (for the quantity-typo rule).
    pub fn memory_nodes(y: &Yaml, obj: &Object) -> Vec<(NodeId, NodeId)> {
        let mut out = Vec::new();
        let Some(limits) = y.path(obj.root, &["spec", "limits"]) else {
            return out;
        };
        for &item in y.items(limits) {
            for field in ["default", "defaultRequest", "max", "min"] {
                if let Some(e) = y.get(item, field).and_then(|m| y.get_entry(m, "memory")) {
                    out.push(e);
                }
            }
        }
        out
    }
}

/// A LimitRange of another file: what it gives, without its tree.
#[derive(Debug, Clone)]
pub struct Stored {
    pub file: String,
    pub name: String,
    pub namespace: String,
    default: [Option<StoredBound>; 2],
    default_request: [Option<StoredBound>; 2],
}

#[derive(Debug, Clone)]
struct StoredBound {
    quantity: Quantity,
    text: String,
    field: &'static str,
}

impl Stored {
    /// The LimitRange as the rules read it, naming its file.
    pub fn lend(&self) -> LimitRange<'_> {
        fn lend(b: &Option<StoredBound>) -> Option<Bound<'_>> {
            b.as_ref().map(|b| Bound {
                quantity: b.quantity,
                text: &b.text,
                node: None,
                field: b.field,
            })
        }
        LimitRange {
            name: &self.name,
            namespace: &self.namespace,
            file: Some(&self.file),
            default: [lend(&self.default[0]), lend(&self.default[1])],
            default_request: [
                lend(&self.default_request[0]),
                lend(&self.default_request[1]),
            ],
        }
    }
}
