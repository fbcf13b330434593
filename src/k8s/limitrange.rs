//! LimitRange defaults (docs/semantics.md, LimitRange): the admission plugin fills a container's
//! absent limits from `default` and absent requests from `defaultRequest`, after the LimitRange
//! object itself was defaulted (`default` from `max`; `defaultRequest` from `default`, else `min`).
//! Templates never show these values, so without them "no limit" findings would be false.

use super::container::{EffectiveValue, QuantityValue, Resource, ValueOrigin};
use super::Object;
use crate::yaml::{NodeId, Yaml};

#[derive(Debug, Clone)]
pub struct LimitRange<'y> {
    pub name: &'y str,
    pub namespace: &'y str,
    default: [Option<(QuantityValue<'y>, &'static str)>; 2],
    default_request: [Option<(QuantityValue<'y>, &'static str)>; 2],
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
            default: [None, None],
            default_request: [None, None],
        };
        for &item in y.items(limits) {
            if y.get_str(item, "type") != Some("Container") {
                continue;
            }
            for r in [Resource::Cpu, Resource::Memory] {
                let q = |field: &str| -> Option<QuantityValue<'y>> {
                    let map = y.get(item, field)?;
                    let (k, v) = y.get_entry(map, r.key())?;
                    QuantityValue::read(y, k, v).filter(|q| q.quantity.is_some())
                };
                let default = q("default")
                    .map(|v| (v, "default"))
                    .or_else(|| q("max").map(|v| (v, "max")));
                let request = q("defaultRequest")
                    .map(|v| (v, "defaultRequest"))
                    .or_else(|| default.clone())
                    .or_else(|| q("min").map(|v| (v, "min")));
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

    fn value(&self, v: &Option<(QuantityValue<'y>, &'static str)>) -> Option<EffectiveValue<'y>> {
        let (q, field) = v.as_ref()?;
        Some(EffectiveValue {
            quantity: q.quantity?,
            text: q.text,
            node: Some(q.node),
            origin: ValueOrigin::LimitRange {
                name: self.name,
                field,
            },
        })
    }

    pub fn default_limit(&self, r: Resource) -> Option<EffectiveValue<'y>> {
        self.value(&self.default[idx(r)])
    }

    pub fn default_request(&self, r: Resource) -> Option<EffectiveValue<'y>> {
        self.value(&self.default_request[idx(r)])
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
