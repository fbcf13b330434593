//! GK206 godebug-disables-container-maxprocs: `containermaxprocs=0` makes Go ≥ 1.25 ignore the CPU
//! limit, `updatemaxprocs=0` stops it following changes; the last occurrence wins
//! (docs/semantics.md, GOMAXPROCS).

use super::Code;
use super::ContainerCtx;
use crate::diagnostic::Diagnostic;
use crate::go::godebug_value;

pub fn check(cx: &ContainerCtx, out: &mut Vec<Diagnostic>) {
    // The binary as built: the env GODEBUG this rule reads would otherwise hide itself.
    if !cx.go.build_adaptive_gomaxprocs() || cx.eff.limit_cpu.is_none() {
        return;
    }
    let Some(var) = cx.c.env_var("GODEBUG") else {
        return;
    };
    let Some(text) = var.literal() else { return };
    for (key, effect) in [
        ("containermaxprocs", "the runtime ignores the CPU limit and starts one thread per node CPU, as before Go 1.25"),
        ("updatemaxprocs", "the runtime stops re-reading the CPU limit, so in-place resizes are missed"),
    ] {
        if godebug_value(text, key) == Some("0") {
            let fix = super::gk108::remove_godebug_key(cx, var, text, key);
            out.push(cx.go_diag(Code::GK206, var.value_node(), format!("GODEBUG {key}=0 with a CPU limit: {effect}")).with_fix(fix));
        }
    }
}
