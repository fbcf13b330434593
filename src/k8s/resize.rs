//! In-place resize: whether a running container's CPU or memory can change without a restart.
//!
//! Kubernetes resizes a running container in place (`InPlacePodVerticalScaling`: beta and on by
//! default in 1.33, GA in 1.35) unless its `resizePolicy` for that resource is
//! `RestartContainer`. Env vars, `resourceFieldRef` ones included, are computed once, when the
//! container starts, so a value a Go program read from them keeps describing the old resources.
//!
//! Any container can be resized by hand, so this reports only where the manifests say resizes
//! will happen: a `resizePolicy` that says `NotRequired` for the resource, or a
//! VerticalPodAutoscaler that targets the workload, controls the resource and updates in place.
//! A literal value is also stale under a VPA in any mode but `Off`: its admission webhook sizes
//! each new pod, and the literal does not follow ([`set_at_admission`]).
//!
//! What the kubelet does with env at start and on a resize is read from its source, not tested
//! here against a running kubelet; what the Go runtime does on a quota change is
//! (tests/heavy/go_oracle.rs).

use super::container::{Container, Resource};
use super::vpa::Vpa;
use crate::yaml::{NodeId, Yaml};

/// The container's `resizePolicy` entry for one resource, as written.
#[derive(Debug, Clone, Copy)]
pub struct Policy<'y> {
    pub item: NodeId,
    /// The `restartPolicy` value node and its text (absent: `NotRequired`).
    pub restart: Option<(NodeId, &'y str)>,
}

impl<'y> Policy<'y> {
    pub fn read(y: &'y Yaml, c: &Container, r: Resource) -> Option<Policy<'y>> {
        let list = y.get(c.node, "resizePolicy")?;
        let item = *y
            .items(list)
            .iter()
            .find(|&&i| y.get_str(i, "resourceName") == Some(r.key()))?;
        let restart = y
            .get(item, "restartPolicy")
            .and_then(|n| y.str(n).map(|s| (n, s)));
        Some(Policy { item, restart })
    }

    pub fn restarts(&self) -> bool {
        self.restart.is_some_and(|(_, s)| s == "RestartContainer")
    }
}

/// Why a resource of a container changes from what the manifest says.
#[derive(Debug, Clone, Copy)]
pub enum Why<'a> {
    /// `resizePolicy` says `NotRequired` for it: it can be resized while the container runs.
    Policy,
    /// A VPA resizes it while the container runs.
    Vpa(&'a Vpa),
    /// A VPA sets it when each pod is created (its admission webhook), in every mode but `Off`:
    /// a value the container reads at start then matches, unless it is a literal.
    Admission(&'a Vpa),
}

#[derive(Debug, Clone, Copy)]
pub struct InPlace<'a> {
    pub why: Why<'a>,
    /// The limit moves too, not only the request (a VPA with `controlledValues: RequestsOnly`
    /// leaves limits alone; a resize by hand can change both).
    pub limits: bool,
}

impl InPlace<'_> {
    /// Who resizes it, for messages: "its resizePolicy (memory: NotRequired)" or the VPA.
    pub fn who(&self, r: Resource) -> String {
        match self.why {
            Why::Policy => format!("its resizePolicy ({}: NotRequired)", r.key()),
            Why::Vpa(v) | Why::Admission(v) => v.describe(),
        }
    }

    /// Whether the change happens while the container runs (else only when a pod is created).
    pub fn while_running(&self) -> bool {
        !matches!(self.why, Why::Admission(_))
    }
}

/// Whether `c`'s `r` can change in place, and by whom. `vpas` are those that target the
/// container's workload. A `RestartContainer` policy answers no whatever a VPA does: the kubelet
/// then restarts the container, and its env is computed again.
pub fn in_place<'a>(y: &Yaml, c: &Container, vpas: &[&'a Vpa], r: Resource) -> Option<InPlace<'a>> {
    let policy = Policy::read(y, c, r);
    if policy.is_some_and(|p| p.restarts()) {
        return None;
    }
    if policy.is_some_and(|p| p.restart.is_some()) {
        return Some(InPlace {
            why: Why::Policy,
            limits: true,
        });
    }
    let name = c.name?;
    vpas.iter().filter(|v| v.resizes_in_place()).find_map(|v| {
        v.controls(name, r).map(|ctl| InPlace {
            why: Why::Vpa(v),
            limits: ctl.limits,
        })
    })
}

/// Whether a VPA that targets the workload sets `c`'s `r` when each pod is created (every mode
/// but `Off`, the in-place ones too). Env computed at start follows such a change; a literal does
/// not, and a restart on resize reads the same literal again.
pub fn set_at_admission<'a>(c: &Container, vpas: &[&'a Vpa], r: Resource) -> Option<InPlace<'a>> {
    let name = c.name?;
    vpas.iter().filter(|v| v.sets_resources()).find_map(|v| {
        v.controls(name, r).map(|ctl| InPlace {
            why: Why::Admission(v),
            limits: ctl.limits,
        })
    })
}
