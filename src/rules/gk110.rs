//! GK110 gomemlimit-stale-after-resize: GOMEMLIMIT is read once, when the container starts, but
//! the memory limit it was sized against can change while the container runs (an in-place resize
//! by a VerticalPodAutoscaler, or by hand where the `resizePolicy` allows it). The variable then
//! describes a limit the container no longer has.

use super::Code;
use super::ContainerCtx;
use crate::diagnostic::{Applicability, Diagnostic, Fix};
use crate::edit::emit::{add_entry, add_list_item, Skip};
use crate::k8s::container::{Container, EnvValue, Resource};
use crate::k8s::resize::{InPlace, Policy, Why};
use crate::runtime::{parse_gomemlimit, GoMemLimit};

pub fn check(cx: &ContainerCtx, out: &mut Vec<Diagnostic>) {
    let Some(var) = cx.c.env_var("GOMEMLIMIT") else {
        return;
    };
    let Some(read) = Reads::of(&var.value, Resource::Memory) else {
        return;
    };
    if let EnvValue::Literal { text, .. } = &var.value {
        // `off` sets no limit to go stale; a malformed value never starts (GK104).
        if !matches!(
            parse_gomemlimit(text, cx.go.grammar()),
            GoMemLimit::Bytes(_)
        ) {
            return;
        }
    }
    let Some((target, resize)) = read.resized(cx, Resource::Memory) else {
        return;
    };
    let limit = today(cx, target, Resource::Memory);
    let what = match read.value {
        Value::Literal(t) => format!("GOMEMLIMIT={t}"),
        Value::FieldRef(f) => format!("GOMEMLIMIT from resourceFieldRef {f}"),
    };
    let who = resize.who(Resource::Memory);
    let message = if resize.while_running() {
        format!(
            "{what} is set when the container starts, but {who} changes its memory{limit} in place: after a resize down the GC still aims at the old, higher figure and the container is OOM-killed before it collects; after a resize up it keeps collecting as if the old limit held"
        )
    } else {
        format!(
            "{what} is written as a number, but {who} sets the memory limit{limit} of every new pod from its recommendation: where it lowers the limit below that number the GC aims above the limit and the container is OOM-killed; where it raises it the GC keeps collecting as if the old limit held"
        )
    };
    let mut d = cx.go_diag(Code::GK110, var.value_node(), message);
    if target.name != cx.c.name {
        d = d.note(format!(
            "the resourceFieldRef reads container {}'s resources",
            target.display_name()
        ));
    }
    let d = match read.value {
        Value::Literal(_) if !resize.while_running() => d.note("take GOMEMLIMIT from resourceFieldRef limits.memory, which the kubelet computes from each pod's own limit, or let the VPA change only the request (controlledValues: RequestsOnly)"),
        // A restart would read the same literal again: no edit here makes it right.
        Value::Literal(_) => d.note("a literal value stays as written even when the container restarts: keep the limit fixed (a VPA with controlledValues: RequestsOnly changes only the request), or take GOMEMLIMIT from resourceFieldRef limits.memory and restart the container on memory resizes"),
        Value::FieldRef(_) => d.fix_or_note(restart_on_resize(cx, target, Resource::Memory)),
    };
    out.push(d);
}

/// ` (today 1Gi)`: the limit a resize would change, when it is this container's own (a
/// `resourceFieldRef` may read another container's).
pub(super) fn today(cx: &ContainerCtx, target: &Container, r: Resource) -> String {
    match cx.eff.limit(r) {
        Some(l) if target.node == cx.c.node => format!(" (today {})", l.text),
        _ => String::new(),
    }
}

/// What a Go variable reads from its container's resources.
pub(super) struct Reads<'a> {
    pub value: Value<'a>,
    /// It depends on the limit (a literal is sized against it), not on the request.
    pub on_limit: bool,
    /// The container whose resources it reads (a `resourceFieldRef` may name another one).
    container: Option<&'a str>,
}

pub(super) enum Value<'a> {
    Literal(&'a str),
    FieldRef(&'a str),
}

impl<'a> Reads<'a> {
    /// What `value` reads of resource `r`; None for a value that reads nothing of it.
    pub fn of(value: &EnvValue<'a>, r: Resource) -> Option<Reads<'a>> {
        match value {
            EnvValue::Literal { text, .. } => Some(Reads {
                value: Value::Literal(text),
                on_limit: true,
                container: None,
            }),
            EnvValue::ResourceFieldRef(f) => {
                let (resource, _) = f.resource?;
                let on_limit = match resource.split_once('.') {
                    Some(("limits", res)) if res == r.key() => true,
                    Some(("requests", res)) if res == r.key() => false,
                    _ => return None,
                };
                Some(Reads {
                    value: Value::FieldRef(resource),
                    on_limit,
                    container: f.container_name.map(|(n, _)| n),
                })
            }
            _ => None,
        }
    }

    /// The container whose `r` this reads, and how that changes in place, when what this
    /// reads moves with it.
    pub fn resized(
        &self,
        cx: &ContainerCtx<'a, '_>,
        r: Resource,
    ) -> Option<(&'a Container<'a>, InPlace<'a>)> {
        let target = match self.container {
            Some(name) => cx.pod.container_named(name)?,
            None => cx.c,
        };
        let resize = crate::k8s::resize::in_place(cx.y, target, cx.vpas, r).or_else(|| {
            // A literal is wrong for every pod a VPA sizes, not only after a resize.
            matches!(self.value, Value::Literal(_))
                .then(|| crate::k8s::resize::set_at_admission(target, cx.vpas, r))
                .flatten()
        })?;
        // A VPA scales a limit only where one is set, and never with `RequestsOnly`.
        let vpa = matches!(resize.why, Why::Vpa(_) | Why::Admission(_));
        // The effective limit is known for the container itself only (however it names itself).
        let no_limit = target.node == cx.c.node && cx.eff.limit(r).is_none();
        if self.on_limit && (!resize.limits || (vpa && no_limit)) {
            return None;
        }
        Some((target, resize))
    }
}

/// The fix GK110 and GK207 share: `restartPolicy: RestartContainer` for the resource in the
/// container's `resizePolicy`, so that a resize restarts it and its env is computed again.
pub(super) fn restart_on_resize(
    cx: &ContainerCtx,
    c: &Container,
    r: Resource,
) -> Result<Fix, Skip> {
    let edit = match Policy::read(cx.y, c, r) {
        Some(Policy {
            restart: Some((node, _)),
            ..
        }) => crate::edit::replace_scalar(cx.y, node, "RestartContainer")
            .ok_or("not fixed automatically: the restartPolicy value cannot be replaced")?,
        Some(Policy { item, .. }) => add_entry(cx.fx, item, "restartPolicy", "RestartContainer")?,
        None => add_list_item(
            cx.fx,
            c.node,
            "resizePolicy",
            &[
                ("resourceName", r.key()),
                ("restartPolicy", "RestartContainer"),
            ],
        )?,
    };
    Ok(Fix {
        applicability: Applicability::Unsafe,
        title: format!("restart the container when its {} is resized", r.key()),
        edits: vec![edit],
    })
}
