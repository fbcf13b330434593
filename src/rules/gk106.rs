//! GK106 go-env-from-unset-resource: a `resourceFieldRef` to a limit the container does not have
//! yields the node's allocatable value (docs/semantics.md, env values from the downward API), to an
//! unset request yields 0, and to a container that is not in the pod stops the container from
//! starting (same section).

use super::Code;
use super::ContainerCtx;
use crate::diagnostic::Diagnostic;
use crate::k8s::container::{EnvValue, Resource};

pub fn check(cx: &ContainerCtx, out: &mut Vec<Diagnostic>) {
    for var in &cx.c.env {
        if var.name != "GOMEMLIMIT" && var.name != "GOMAXPROCS" {
            continue;
        }
        let EnvValue::ResourceFieldRef(f) = &var.value else {
            continue;
        };
        if let Some((cname, cnode)) = &f.container_name {
            if Some(cname) != cx.c.name.as_ref() {
                let msg = if cx.pod.container_named(cname).is_none() {
                    format!("{} reads resources of container {cname:?}, which is not in this pod: the kubelet cannot resolve it and the container fails to start (CreateContainerConfigError)", var.name)
                } else {
                    format!("{} reads the resources of another container, {cname:?}: the Go runtime in {:?} is sized for someone else's limit", var.name, cx.c.display_name())
                };
                out.push(cx.go_diag(Code::GK106, *cnode, msg));
                continue;
            }
        }
        let Some((resource, rnode)) = &f.resource else {
            continue;
        };
        let Some((kind, res)) = resource.split_once('.') else {
            continue;
        };
        let r = match res {
            "cpu" => Resource::Cpu,
            "memory" => Resource::Memory,
            _ => continue,
        };
        let msg = match kind {
            "limits" if cx.eff.limit(r).is_none() => format!(
                "{} from resourceFieldRef {resource}, but the container has no {} limit: the kubelet substitutes the node's allocatable {} (the whole node), so {}",
                var.name, res, res,
                if r == Resource::Memory { "GOMEMLIMIT never constrains the heap before the node runs out" } else { "GOMAXPROCS is the node's CPU count" }
            ),
            "requests" if cx.eff.request(r).is_none() => format!(
                "{} from resourceFieldRef {resource}, but the container has no {} request: the value is 0, {}",
                var.name, res,
                if var.name == "GOMEMLIMIT" { "so GOMEMLIMIT=0 makes the GC run almost continuously" } else { "which Go ignores for GOMAXPROCS (it uses every node CPU)" }
            ),
            _ => continue,
        };
        out.push(cx.go_diag(Code::GK106, *rnode, msg));
    }
}
