//! VerticalPodAutoscaler (`autoscaling.k8s.io/v1`): which workload it resizes, which of its
//! containers' resources, and whether it does so in place. A VPA in `InPlaceOrRecreate` or
//! `InPlace` mode changes a running container's requests (and limits) without restarting it, so
//! whatever the container read from its resources at start-up goes stale (GK110, GK207).
//! docs/semantics.md, "In-place resize", gives the sources for each mode and version.
//!
//! VPAs are few, so they are copied out of the tree: one written in another linted file applies
//! as well as one in the same file ([`crate::k8s::index`]).

use super::container::Resource;
use super::Object;
use crate::yaml::Yaml;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Vpa {
    /// The file it was read from, when that is another file than the one being linted.
    pub file: Option<String>,
    pub name: String,
    pub namespace: String,
    /// `metadata.namespace` is written (else the namespace is wherever it is applied).
    pub namespaced: bool,
    target_kind: String,
    target_name: String,
    /// `spec.updatePolicy.updateMode` as written (absent: `Recreate`, or `Auto` before VPA 1.5,
    /// which evicts and never resizes in place).
    pub mode: Option<String>,
    policies: Vec<Policy>,
}

/// One entry of `spec.resourcePolicy.containerPolicies`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Policy {
    /// A container's name, or `*` for those without a policy of their own.
    container: String,
    /// `mode: Off`: the VPA leaves the container alone.
    off: bool,
    /// `controlledResources` (absent: cpu and memory).
    resources: Option<Vec<String>>,
    /// `controlledValues: RequestsOnly`: limits are never changed.
    requests_only: bool,
}

/// What a VPA changes of one resource of one container.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Controls {
    /// Limits move with the requests (`controlledValues: RequestsAndLimits`, the default).
    pub limits: bool,
}

impl Vpa {
    /// The VPA an object is, if it is one.
    pub fn read(y: &Yaml, obj: &Object) -> Option<Vpa> {
        if obj.kind != "VerticalPodAutoscaler"
            || !obj
                .api_version
                .is_some_and(|a| a.starts_with("autoscaling.k8s.io/"))
        {
            return None;
        }
        let spec = y.get(obj.root, "spec")?;
        let target = y.get(spec, "targetRef")?;
        let policies = y
            .path(spec, &["resourcePolicy", "containerPolicies"])
            .map(|list| {
                y.items(list)
                    .iter()
                    .filter_map(|&p| {
                        Some(Policy {
                            container: y.get_str(p, "containerName")?.to_string(),
                            off: y.get_str(p, "mode") == Some("Off"),
                            resources: y.get(p, "controlledResources").map(|r| {
                                y.items(r)
                                    .iter()
                                    .filter_map(|&n| y.str(n).map(str::to_string))
                                    .collect()
                            }),
                            requests_only: y.get_str(p, "controlledValues") == Some("RequestsOnly"),
                        })
                    })
                    .collect()
            })
            .unwrap_or_default();
        Some(Vpa {
            file: None,
            name: obj.name.unwrap_or("<unnamed>").to_string(),
            namespace: obj.effective_namespace().to_string(),
            namespaced: obj.namespace.is_some(),
            target_kind: y.get_str(target, "kind")?.to_string(),
            target_name: y.get_str(target, "name")?.to_string(),
            mode: y
                .path(spec, &["updatePolicy", "updateMode"])
                .and_then(|m| y.str(m))
                .map(str::to_string),
            policies,
        })
    }

    /// Whether this VPA's target is `obj`: the same namespace, kind and name. One from another
    /// file reaches only workloads whose namespace is written as its is (see
    /// [`crate::k8s::index`]).
    pub fn targets(&self, obj: &Object) -> bool {
        (self.file.is_none() || self.namespaced == obj.namespace.is_some())
            && obj.effective_namespace() == self.namespace
            && obj.kind == self.target_kind
            && obj.name == Some(self.target_name.as_str())
    }

    /// Whether its update mode changes running pods' resources in place (VPA 1.4+
    /// `InPlaceOrRecreate`, VPA 1.7+ `InPlace`). `Auto` is still eviction (`Recreate`).
    pub fn resizes_in_place(&self) -> bool {
        matches!(self.mode.as_deref(), Some("InPlaceOrRecreate" | "InPlace"))
    }

    /// Whether it sets the resources of new pods: every mode but `Off` (its admission webhook
    /// applies the recommendation when a pod is created).
    pub fn sets_resources(&self) -> bool {
        self.mode.as_deref() != Some("Off")
    }

    /// What it changes of `container`'s `resource`: None when the container's policy is `Off`
    /// or leaves the resource out of `controlledResources`.
    pub fn controls(&self, container: &str, resource: Resource) -> Option<Controls> {
        let policy = self
            .policies
            .iter()
            .find(|p| p.container == container)
            .or_else(|| self.policies.iter().find(|p| p.container == "*"));
        let Some(p) = policy else {
            return Some(Controls { limits: true });
        };
        let controlled = p
            .resources
            .as_ref()
            .is_none_or(|r| r.iter().any(|n| n == resource.key()));
        (!p.off && controlled).then_some(Controls {
            limits: !p.requests_only,
        })
    }

    /// `VerticalPodAutoscaler api-vpa (updateMode InPlaceOrRecreate, in vpa.yaml)`.
    pub fn describe(&self) -> String {
        let mut s = format!(
            "VerticalPodAutoscaler {} (updateMode {}",
            self.name,
            self.mode.as_deref().unwrap_or("Recreate")
        );
        if let Some(f) = &self.file {
            s.push_str(", in ");
            s.push_str(f);
        }
        s.push(')');
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vpa(text: &str) -> Vpa {
        let y = crate::yaml::parse(text, 0);
        let root = y.docs[0].root.unwrap();
        let obj = &crate::k8s::objects(&y, root)[0];
        Vpa::read(&y, obj).expect("a VPA")
    }

    const HEAD: &str = "apiVersion: autoscaling.k8s.io/v1\nkind: VerticalPodAutoscaler\nmetadata: {name: v, namespace: shop}\n";

    #[test]
    fn container_policies_pick_the_named_one_then_the_wildcard() {
        let v = vpa(&format!(
            "{HEAD}spec:\n  targetRef: {{apiVersion: apps/v1, kind: Deployment, name: api}}\n  updatePolicy: {{updateMode: InPlaceOrRecreate}}\n  resourcePolicy:\n    containerPolicies:\n      - {{containerName: '*', controlledResources: [cpu]}}\n      - {{containerName: sidecar, mode: 'Off'}}\n      - {{containerName: app, controlledValues: RequestsOnly}}\n"
        ));
        assert!(v.resizes_in_place());
        assert_eq!(v.controls("sidecar", Resource::Memory), None);
        assert_eq!(v.controls("other", Resource::Memory), None);
        assert_eq!(
            v.controls("other", Resource::Cpu),
            Some(Controls { limits: true })
        );
        assert_eq!(
            v.controls("app", Resource::Memory),
            Some(Controls { limits: false })
        );
    }

    #[test]
    fn only_in_place_modes_resize_running_pods() {
        for (mode, in_place) in [
            ("", false),
            ("  updatePolicy: {updateMode: 'Off'}\n", false),
            ("  updatePolicy: {updateMode: Initial}\n", false),
            ("  updatePolicy: {updateMode: Recreate}\n", false),
            ("  updatePolicy: {updateMode: Auto}\n", false),
            ("  updatePolicy: {updateMode: InPlaceOrRecreate}\n", true),
            ("  updatePolicy: {updateMode: InPlace}\n", true),
        ] {
            let v = vpa(&format!(
                "{HEAD}spec:\n  targetRef: {{kind: Deployment, name: api}}\n{mode}"
            ));
            assert_eq!(v.resizes_in_place(), in_place, "{mode}");
        }
    }
}
