//! GK107 gogc-off-without-gomemlimit: GOGC=off with no memory limit for the runtime means the GC
//! never runs; the heap grows until the cgroup OOM-kills the container (§4).

use super::ContainerCtx;
use crate::diagnostic::Diagnostic;
use crate::runtime::{
    describe_bytes, gomemlimit_for, parse_gogc, parse_gomemlimit, GoGc, GoMemLimit,
};

pub fn check(cx: &ContainerCtx, out: &mut Vec<Diagnostic>) {
    if !cx.go.is_go {
        return;
    }
    let Some(gogc) = cx.c.env_var("GOGC") else {
        return;
    };
    let Some(text) = gogc.literal() else { return };
    if parse_gogc(text) != GoGc::Off {
        return;
    }
    let memlimit_set = match cx.c.env_var("GOMEMLIMIT") {
        None => cx
            .env_from_value("GOMEMLIMIT")
            .is_some_and(|v| parse_gomemlimit(&v) != GoMemLimit::Off),
        Some(v) => match v.literal() {
            Some(t) => parse_gomemlimit(t) != GoMemLimit::Off,
            None => true,
        },
    };
    if memlimit_set || cx.c.env_var("AUTOMEMLIMIT").is_some() {
        return;
    }
    let mut d = cx.go_diag(
        "GK107",
        gogc.value_node(),
        format!("GOGC={text} with no GOMEMLIMIT: the garbage collector never runs, so the heap grows until the container is OOM-killed"),
    );
    d = match &cx.eff.limit_memory {
        Some(l) => d.note(format!(
            "with the memory limit {} ({}), set GOMEMLIMIT to \"{}\" so the GC runs only near the limit",
            l.text,
            describe_bytes(l.quantity.value_ceil()),
            gomemlimit_for(l.quantity.value_ceil(), cx.cfg.gomemlimit_ratio)
        )),
        None => d.note("the container has no memory limit either: set one and a GOMEMLIMIT below it, or drop GOGC=off"),
    };
    out.push(d);
}
