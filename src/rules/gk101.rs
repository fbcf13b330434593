//! GK101 memory-limit-without-gomemlimit: a memory limit with no GOMEMLIMIT leaves the Go GC
//! pacing by GOGC alone, blind to the cgroup limit, so the heap can outgrow it before a collection.
//! A GOMEMLIMIT of `""` or `off` is no limit to the runtime (`readGOMEMLIMIT`), so it counts as
//! none; and a Go release before 1.19 ignores the variable, so there the advice is another.

use super::Code;
use super::ContainerCtx;
use crate::config::{GoVersion, MemLimitStrategy};
use crate::diagnostic::{Applicability, Diagnostic, Fix};
use crate::edit::emit::{add_env, NewValue, Skip};
use crate::edit::replace_scalar;
use crate::k8s::container::{EffectiveValue, EnvValue, EnvVar, ValueOrigin};
use crate::runtime::{
    describe_bytes, gomemlimit_for, parse_gogc, parse_gomemlimit, whole, GoGc, GoMemLimit, GO_1_19,
};

pub fn check(cx: &ContainerCtx, out: &mut Vec<Diagnostic>) {
    // A program that sizes GOMEMLIMIT itself (automemlimit, its own code) needs no variable.
    if cx.go.sizes_gomemlimit.is_some() {
        return;
    }
    let Some(limit) = &cx.eff.limit_memory else {
        return;
    };
    if let Some(var) = cx.c.env_var("GOMEMLIMIT") {
        return written_as_no_limit(cx, limit, var, out);
    }
    if cx.c.env_var("AUTOMEMLIMIT").is_some() {
        return;
    }
    if cx.env_from_value("GOMEMLIMIT").is_some() || cx.env_from_value("AUTOMEMLIMIT").is_some() {
        return;
    }
    // The image's ENV sets it.
    if cx.go.image_env("GOMEMLIMIT").is_some() || cx.go.image_env("AUTOMEMLIMIT").is_some() {
        return;
    }
    let bytes = limit.quantity.value_ceil();
    let message = match old_go(cx) {
        Some(v) => [
            "memory limit ",
            limit.text,
            " (",
            &describe_bytes(bytes),
            ") with Go ",
            &v.to_string(),
            ", which has no GOMEMLIMIT: the Go GC paces by GOGC alone and lets the heap grow past the limit before it collects, so the kernel OOM-kills the container",
        ]
        .concat(),
        None => [
            "memory limit ",
            limit.text,
            " (",
            &describe_bytes(bytes),
            ") but no GOMEMLIMIT: the Go GC paces by GOGC alone and lets the heap grow past the limit before it collects, so the kernel OOM-kills the container",
        ]
        .concat(),
    };
    let mut d = cx
        .go_diag(Code::GK101, cx.value_anchor(limit), message)
        .note(advice(cx, bytes));
    d = d.origin(cx.y, limit, "memory limit");
    if let Some(n) = cx.unresolved_env_from_note() {
        d = d.note(n);
    }
    out.push(d.fix_or_note(add_gomemlimit(cx, limit)));
}

/// A GOMEMLIMIT written in the env that the runtime reads as no limit: `""`, `off` (or the
/// largest int64). The container then is as unguarded as one without the variable.
fn written_as_no_limit(
    cx: &ContainerCtx,
    limit: &EffectiveValue,
    var: &EnvVar,
    out: &mut Vec<Diagnostic>,
) {
    let Some(text) = var.literal() else { return };
    if parse_gomemlimit(text, cx.go.grammar()) != GoMemLimit::Off {
        return;
    }
    // With GOGC=off too the GC never runs at all: GK107 reports that pair, with the same fix.
    let gogc_off =
        cx.c.env_var("GOGC")
            .and_then(|g| g.literal())
            .is_some_and(|t| parse_gogc(t, cx.go.grammar()) == GoGc::Off);
    if gogc_off && cx.c.env_var("AUTOMEMLIMIT").is_none() {
        return;
    }
    let bytes = limit.quantity.value_ceil();
    let written = if text.is_empty() {
        "an empty GOMEMLIMIT".to_string()
    } else {
        format!("GOMEMLIMIT {text:?}")
    };
    let mut d = cx
        .go_diag(
            Code::GK101,
            var.value_node(),
            [
                "memory limit ",
                limit.text,
                " (",
                &describe_bytes(bytes),
                ") but ",
                &written,
                ", which the Go runtime reads as no limit: the Go GC paces by GOGC alone and lets the heap grow past the limit before it collects, so the kernel OOM-kills the container",
            ]
            .concat(),
        )
        .note(advice(cx, bytes));
    d = d.origin(cx.y, limit, "memory limit");
    out.push(d.fix_or_note(set_gomemlimit(cx, var, bytes)));
}

/// The Go version when it is known to be older than 1.19, which ignores GOMEMLIMIT.
fn old_go(cx: &ContainerCtx) -> Option<GoVersion> {
    cx.go.version.filter(|v| *v < GO_1_19)
}

/// What keeps the container from the OOM kill: GOMEMLIMIT at the configured ratio, or, where
/// the Go release predates it, a newer Go or a lower GOGC.
fn advice(cx: &ContainerCtx, bytes: i128) -> String {
    let target = gomemlimit_for(bytes, cx.cfg.gomemlimit_ratio);
    let share = whole(cx.cfg.gomemlimit_ratio * 100.0);
    match old_go(cx) {
        Some(v) => [
            "Go ",
            &v.to_string(),
            " ignores GOMEMLIMIT (it exists since Go 1.19): upgrade Go to 1.19 or later and set GOMEMLIMIT to \"",
            &target,
            "\" (",
            &share,
            " % of the limit), or until then lower GOGC (GOGC=50 lets the heap grow to 1.5 times the live heap instead of 2) or raise the limit",
        ]
        .concat(),
        None => [
            "set GOMEMLIMIT to \"",
            &target,
            "\" (",
            &share,
            " % of the limit), leaving headroom for memory the Go runtime does not manage",
        ]
        .concat(),
    }
}

/// Replace a GOMEMLIMIT of `""` or `off` with the configured share of the limit. Unsafe: the
/// value was written, perhaps on purpose, and the fix overrides it.
fn set_gomemlimit(cx: &ContainerCtx, var: &EnvVar, bytes: i128) -> Result<Fix, Skip> {
    refuse_old_go(cx)?;
    if cx.cfg.gomemlimit_strategy == MemLimitStrategy::FieldRef {
        return Err("not fixed automatically: with gomemlimit.strategy field-ref, replace the value with a resourceFieldRef to limits.memory".into());
    }
    let EnvValue::Literal { node, .. } = var.value else {
        return Err("not fixed automatically: the GOMEMLIMIT entry has no value to replace".into());
    };
    let target = gomemlimit_for(bytes, cx.cfg.gomemlimit_ratio);
    let edit = replace_scalar(cx.y, node, &target)
        .ok_or("not fixed automatically: the value is an alias or a block scalar")?;
    Ok(Fix {
        applicability: Applicability::Unsafe,
        title: [
            "set GOMEMLIMIT to \"",
            &target,
            "\" (",
            &whole(cx.cfg.gomemlimit_ratio * 100.0),
            " % of the memory limit) instead of ",
            &format!("{:?}", var.literal().unwrap_or_default()),
        ]
        .concat(),
        edits: vec![edit],
    })
}

/// A release before 1.19 never reads GOMEMLIMIT: writing it would change nothing, and a fix
/// that claims to guard against the OOM kill must not be offered.
fn refuse_old_go(cx: &ContainerCtx) -> Result<(), Skip> {
    match old_go(cx) {
        Some(v) => Err(format!(
            "not fixed automatically: Go {v} ignores GOMEMLIMIT, so setting it would not prevent the OOM kill"
        )),
        None => Ok(()),
    }
}

/// The fix GK101 and GK107 share: add GOMEMLIMIT at the configured ratio of the memory limit (or,
/// with `gomemlimit.strategy: field-ref`, from the downward API), in the container's env style.
pub(super) fn add_gomemlimit(cx: &ContainerCtx, limit: &EffectiveValue) -> Result<Fix, Skip> {
    refuse_old_go(cx)?;
    let target = gomemlimit_for(limit.quantity.value_ceil(), cx.cfg.gomemlimit_ratio);
    // The downward API sees a limit the container has after admission (its own, a LimitRange
    // default, a pod-level limit); it never sees anything else.
    let field_ref = cx.cfg.gomemlimit_strategy == MemLimitStrategy::FieldRef
        && matches!(
            limit.origin,
            ValueOrigin::Declared | ValueOrigin::LimitRange { .. } | ValueOrigin::PodLevel
        );
    let (value, title) = if field_ref {
        (
            NewValue::ResourceFieldRef("limits.memory"),
            "add GOMEMLIMIT from resourceFieldRef limits.memory".to_string(),
        )
    } else {
        (
            NewValue::Literal(&target),
            [
                "add GOMEMLIMIT=\"",
                &target,
                "\" (",
                &whole(cx.cfg.gomemlimit_ratio * 100.0),
                " % of the memory limit ",
                limit.text,
                ")",
            ]
            .concat(),
        )
    };
    let edit = add_env(cx.fx, cx.c, "GOMEMLIMIT", value)?;
    // An envFrom source we cannot see may already set GOMEMLIMIT; an env entry would override it.
    let (applicability, title) = if cx.unresolved_env_from_note().is_some() {
        (
            Applicability::Unsafe,
            format!("{title}; it overrides any GOMEMLIMIT from envFrom"),
        )
    } else {
        (Applicability::Safe, title)
    };
    Ok(Fix {
        applicability,
        title,
        edits: vec![edit],
    })
}
