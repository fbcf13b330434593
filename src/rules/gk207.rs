//! GK207 gomaxprocs-stale-after-resize: a GOMAXPROCS env var is read once, when the container
//! starts, but the CPU limit it was sized against can change while the container runs (an
//! in-place resize by a VerticalPodAutoscaler, or by hand where the `resizePolicy` allows it).
//! Go 1.25+ follows such changes by itself, but only when GOMAXPROCS is not set.

use super::gk110::{restart_on_resize, Reads, Value};
use super::Code;
use super::ContainerCtx;
use crate::diagnostic::Diagnostic;
use crate::k8s::container::{Container, EnvVar, Resource};
use crate::k8s::resize::InPlace;
use crate::runtime::{parse_gomaxprocs, GoMaxProcs};

pub fn check(cx: &ContainerCtx, out: &mut Vec<Diagnostic>) {
    let Some((var, read, target, resize)) = stale(cx) else {
        return;
    };
    let what = match read.value {
        Value::Literal(t) => format!("GOMAXPROCS={t}"),
        Value::FieldRef(f) => format!("GOMAXPROCS from resourceFieldRef {f}"),
    };
    let limit = super::gk110::today(cx, target, Resource::Cpu);
    let who = resize.who(Resource::Cpu);
    let head = if resize.while_running() {
        format!(
            "{what} is set when the container starts, but {who} changes its CPU{limit} in place"
        )
    } else {
        format!("{what} is written as a number, but {who} sets the CPU limit{limit} of every new pod from its recommendation")
    };
    if cx.go.adaptive_gomaxprocs() {
        let d = cx
            .go_diag(
                Code::GK207,
                var.value_node(),
                if resize.while_running() {
                    format!("{head}: on this Go the runtime would follow the new limit by itself, about once a second, but a set GOMAXPROCS turns that off")
                } else {
                    format!("{head}: on this Go the runtime would size itself to each pod's limit, but a set GOMAXPROCS turns that off")
                },
            )
            .note("remove GOMAXPROCS and let the runtime size itself to the limit (GK204 explains the rest)");
        out.push(d.with_fix(cx.remove_env_fix(var)));
        return;
    }
    let d = cx.go_diag(
        Code::GK207,
        var.value_node(),
        format!("{head}: where the limit goes up the new CPU goes unused; where it goes down more threads than the quota allows run Go code, and the container is throttled"),
    )
    .note(if resize.while_running() && cx.go.program_sets_gomaxprocs() {
        // Its own runtime.GOMAXPROCS call turns the Go 1.25 runtime's updates off.
        "without GOMAXPROCS the program sizes itself once, at start-up, on every Go release: restart the container on CPU resizes so it reads the new limit"
    } else if resize.while_running() {
        "Go 1.25 and later (toolchain and the go.mod go line) follow the CPU limit by themselves when GOMAXPROCS is not set; before that, restart the container on CPU resizes so it reads the new limit"
    } else {
        "take GOMAXPROCS from resourceFieldRef limits.cpu, which the kubelet computes from each pod's own limit, or upgrade to Go 1.25 (toolchain and the go.mod go line) and remove it"
    });
    let d = match read.value {
        Value::Literal(_) if !resize.while_running() => d,
        Value::Literal(_) => d.note("a literal value stays as written even when the container restarts: take GOMAXPROCS from resourceFieldRef limits.cpu and restart the container on CPU resizes, or keep the CPU limit fixed (a VPA with controlledValues: RequestsOnly changes only the request)"),
        Value::FieldRef(_) => d.fix_or_note(restart_on_resize(cx, target, Resource::Cpu)),
    };
    out.push(d);
}

/// The GOMAXPROCS entry that goes stale when its CPU limit changes (in place, or, for a literal,
/// when a VPA sizes each new pod), and why. GK204 leaves these to this rule.
pub(super) fn stale<'a>(
    cx: &ContainerCtx<'a, '_>,
) -> Option<(&'a EnvVar<'a>, Reads<'a>, &'a Container<'a>, InPlace<'a>)> {
    let var = cx.c.env_var("GOMAXPROCS")?;
    let read = Reads::of(&var.value, Resource::Cpu)?;
    if let Value::Literal(text) = read.value {
        // A value the runtime ignores pins nothing.
        if let GoMaxProcs::Ignored = parse_gomaxprocs(text, cx.go.grammar()) {
            return None;
        }
    }
    let (target, resize) = read.resized(cx, Resource::Cpu)?;
    Some((var, read, target, resize))
}
