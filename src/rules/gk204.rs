//! GK204 gomaxprocs-pinned-on-adaptive-go: on Go ≥ 1.25 the runtime sizes GOMAXPROCS from the CPU
//! limit and re-reads it every second; a static value turns that off (in-place resizes are then
//! missed) and floors at 1 where the runtime would use 2.

use super::Code;
use super::ContainerCtx;
use crate::diagnostic::Diagnostic;
use crate::k8s::container::EnvValue;
use crate::runtime::{parse_gomaxprocs, GoMaxProcs};

pub fn check(cx: &ContainerCtx, out: &mut Vec<Diagnostic>) {
    if !cx.go.adaptive_gomaxprocs() {
        return;
    }
    let Some(var) = cx.c.env_var("GOMAXPROCS") else {
        return;
    };
    // Where the CPU is resized in place, GK207 says the same with the reason.
    if super::gk207::stale(cx).is_some() {
        return;
    }
    let how = match &var.value {
        EnvValue::Literal { text, .. } => match parse_gomaxprocs(text, cx.go.grammar()) {
            GoMaxProcs::Set(n) => format!("GOMAXPROCS={n}"),
            GoMaxProcs::Ignored => return,
        },
        EnvValue::ResourceFieldRef(_) => "GOMAXPROCS from resourceFieldRef".to_string(),
        _ => return,
    };
    out.push(cx.go_diag(
        Code::GK204,
        var.value_node(),
        format!("{how} pins the value on Go 1.25+: the runtime stops tracking the CPU limit (in-place resizes are missed) and a limit below 2 CPUs gives 1 thread where Go would use 2"),
    ).note("remove GOMAXPROCS and let the runtime size itself to the limit")
    .with_fix(cx.remove_env_fix(var)));
}
