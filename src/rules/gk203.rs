//! GK203 cpu-limit-throttling: a CPU limit that CFS will throttle at the parallelism the container
//! actually uses (§10): P threads spend a quota of L × 100 ms in L × 100 / P ms of wall time.

use super::ContainerCtx;
use crate::config::CpuLimits;
use crate::diagnostic::{Diagnostic, Severity};
use crate::k8s::container::EnvValue;
use crate::runtime::throttle::{
    burn, ceil_cpus, describe_cpus, go125_gomaxprocs, limit_millis, ms, quota_ms,
};
use crate::runtime::{parse_gomaxprocs, GoMaxProcs};

pub fn check(cx: &ContainerCtx, out: &mut Vec<Diagnostic>) {
    if cx.cfg.cpu_limits == CpuLimits::Allow {
        return;
    }
    let Some(limit) = &cx.eff.limit_cpu else {
        return;
    };
    if cx.pod.is_guaranteed_whole_cores(cx.limit_ranges) {
        return;
    }
    let l = limit_millis(&limit.quantity);
    let (p, why) = parallelism(cx, l);
    let quota = quota_ms(l);
    let message = match p {
        Some(p) if p * 1000 > l => {
            let (spent, wait) = burn(l, p);
            format!(
                "CPU limit {} ({} of CPU per 100 ms period) with {p} busy thread{} ({why}): the quota is spent in {} and the container is throttled for the remaining {} of every period",
                limit.text, ms(quota), if p == 1 { "" } else { "s" }, ms(spent), ms(wait)
            )
        }
        _ if l < 1000 => format!(
            "CPU limit {} is below one core ({} per 100 ms period): any burst needing more CPU time is throttled and stretched across periods, adding up to {} of latency per period",
            limit.text, ms(quota), ms(100.0 - quota)
        ),
        _ => return,
    };
    let sev = if cx.cfg.cpu_limits == CpuLimits::Forbid {
        Severity::Error
    } else {
        Severity::Warning
    };
    let mut d = cx.diag("GK203", cx.value_anchor(limit), message).severity(sev).note(format!(
        "remove the CPU limit and keep a CPU request of {} for scheduling, or set GOMAXPROCS and the limit to the same whole number of CPUs",
        cx.eff.request_cpu.as_ref().filter(|r| r.origin != crate::k8s::container::ValueOrigin::FromLimit).map_or_else(|| describe_cpus(l), |r| r.text.clone())
    ));
    if let Some(n) = limit.origin_note("CPU limit") {
        d = d.note(n);
    }
    // Deleting the limit line is exact when the container keeps a CPU request of its own; moving
    // the limit into a missing request is an insertion, left to the fix engine.
    let has_request = cx.eff.request_cpu.as_ref().is_some_and(|r| r.is_declared());
    if limit.is_declared() && has_request {
        let entry = cx.c.resources.limits.cpu.as_ref().map(|q| (q.key, q.node));
        let edit = entry.and_then(|(k, v)| crate::fix::delete_line_entry(cx.src, cx.y, k, v));
        d = d.with_fix(edit.map(|e| crate::diagnostic::Fix {
            applicability: crate::diagnostic::Applicability::Unsafe,
            title: format!(
                "remove the CPU limit {} (the CPU request stays)",
                limit.text
            ),
            edits: vec![e],
        }));
    }
    out.push(d);
}

/// The number of threads the container will run busy, and why.
fn parallelism(cx: &ContainerCtx, l: i128) -> (Option<i128>, String) {
    let node = cx.cfg.node_cpus.map(|n| n as i128);
    if cx.go.is_go {
        if let Some(var) = cx.c.env_var("GOMAXPROCS") {
            match &var.value {
                EnvValue::Literal { text, .. } => {
                    if let GoMaxProcs::Set(n) = parse_gomaxprocs(text) {
                        return (Some(n as i128), format!("GOMAXPROCS = {n}"));
                    }
                }
                EnvValue::ResourceFieldRef(f)
                    if f.resource.as_ref().is_some_and(|(r, _)| r == "limits.cpu") =>
                {
                    let c = ceil_cpus(l);
                    return (
                        Some(c),
                        format!("GOMAXPROCS = {c} from resourceFieldRef limits.cpu"),
                    );
                }
                _ => {}
            }
        }
        if cx.go.adaptive_gomaxprocs() {
            let p = go125_gomaxprocs(l, cx.cfg.node_cpus);
            return (
                Some(p),
                format!("GOMAXPROCS = {p}, Go 1.25's default of max(2, ceil(limit))"),
            );
        }
    }
    match node {
        Some(n) => (Some(n), format!("one per node CPU, {n} from node-cpus")),
        None => (None, String::new()),
    }
}
