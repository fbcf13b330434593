//! GK107 gogc-off-without-gomemlimit: GOGC=off with no memory limit for the runtime means the GC
//! never runs; the heap grows until the cgroup OOM-kills the container (docs/semantics.md, GOGC).

use super::Code;
use super::ContainerCtx;
use crate::diagnostic::{Applicability, Diagnostic, Fix};
use crate::edit::replace_scalar;
use crate::k8s::container::{EnvValue, EnvVar};
use crate::runtime::{
    describe_bytes, gomemlimit_for, parse_gogc, parse_gomemlimit, GoGc, GoMemLimit,
};

pub fn check(cx: &ContainerCtx, out: &mut Vec<Diagnostic>) {
    // A program that sets its own memory limit (automemlimit) collects before the cgroup limit.
    if cx.go.sizes_gomemlimit.is_some() {
        return;
    }
    let Some(gogc) = cx.c.env_var("GOGC") else {
        return;
    };
    let Some(text) = gogc.literal() else { return };
    if parse_gogc(text, cx.go.grammar()) != GoGc::Off {
        return;
    }
    let memlimit_set = match cx.c.env_var("GOMEMLIMIT") {
        None => cx
            .env_from_value("GOMEMLIMIT")
            .is_some_and(|v| parse_gomemlimit(&v, cx.go.grammar()) != GoMemLimit::Off),
        Some(v) => match v.literal() {
            Some(t) => parse_gomemlimit(t, cx.go.grammar()) != GoMemLimit::Off,
            None => true,
        },
    };
    if memlimit_set || cx.c.env_var("AUTOMEMLIMIT").is_some() {
        return;
    }
    let mut d = cx.go_diag(
        Code::GK107,
        gogc.value_node(),
        format!("GOGC={text} with no GOMEMLIMIT: the garbage collector never runs, so the heap grows until the container is OOM-killed"),
    );
    d = match &cx.eff.limit_memory {
        Some(l) => {
            let target = gomemlimit_for(l.quantity.value_ceil(), cx.cfg.gomemlimit_ratio);
            let d = d.note(format!(
                "with the memory limit {} ({}), set GOMEMLIMIT to \"{target}\" so the GC runs only near the limit",
                l.text,
                describe_bytes(l.quantity.value_ceil()),
            ));
            // GOMEMLIMIT=off written in the env: correct it in place; absent: add it.
            match cx.c.env_var("GOMEMLIMIT") {
                // An entry without a value has only its name to point at, which must stay.
                Some(EnvVar {
                    value: EnvValue::Literal { node, .. },
                    ..
                }) => d.with_fix(replace_scalar(cx.y, *node, &target).map(|e| Fix {
                    applicability: Applicability::Safe,
                    title: format!("set GOMEMLIMIT to \"{target}\""),
                    edits: vec![e],
                })),
                Some(_) => d.note(format!(
                    "not fixed automatically: the GOMEMLIMIT entry has no value; give it value: \"{target}\""
                )),
                None if cx.env_from_value("GOMEMLIMIT").is_some() => d.note(
                    "not fixed automatically: GOMEMLIMIT=off comes from an envFrom ConfigMap; change it there",
                ),
                None => d.fix_or_note(super::gk101::add_gomemlimit(cx, l)),
            }
        }
        None => d.note("the container has no memory limit either: set one and a GOMEMLIMIT below it, or drop GOGC=off"),
    };
    out.push(d);
}
