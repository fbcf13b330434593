//! GK203 cpu-limit-throttling: a CPU limit that CFS will throttle at the parallelism the container
//! actually uses: P threads spend a quota of L × 100 ms in L × 100 / P ms of wall time
//! (docs/semantics.md, CFS quota).

use super::Code;
use super::ContainerCtx;
use crate::config::{CpuLimits, CpuManagerPolicy};
use crate::diagnostic::{Applicability, Diagnostic, Fix, Severity};
use crate::edit::emit::{add_entry, add_nested_entry, remove_entry, remove_item, rename_key, Skip};
use crate::k8s::container::{EffectiveValue, EnvValue, Resource};
use crate::runtime::throttle::{burn, describe_cpus, limit_millis, ms, quota_ms};
use crate::runtime::Threads;

pub fn check(cx: &ContainerCtx, out: &mut Vec<Diagnostic>) {
    if cx.cfg.cpu_limits == CpuLimits::Allow {
        return;
    }
    let Some(limit) = &cx.eff.limit_cpu else {
        return;
    };
    // Exclusive CPUs, and with them no quota to throttle, come only with the static policy;
    // under the kubelet's default a whole-core Guaranteed pod is throttled like any other.
    if cx.cfg.cpu_manager_policy == CpuManagerPolicy::Static && cx.guaranteed_whole_cores() {
        return;
    }
    let l = limit_millis(&limit.quantity);
    let threads = cx.go.gomaxprocs(cx.c, cx.cpu_view());
    let quota = quota_ms(l);
    let message = match threads {
        Some(Threads { running: p, why, .. }) if p * 1000 > l => {
            let (spent, wait) = burn(l, p);
            [
                "CPU limit ",
                limit.text,
                " (",
                &ms(quota),
                " of CPU per 100 ms period) with ",
                itoa::Buffer::new().format(p),
                if p == 1 { " busy thread (" } else { " busy threads (" },
                &why,
                "): the quota is spent in ",
                &ms(spent),
                " and the container is throttled for the remaining ",
                &ms(wait),
                " of every period",
            ]
            .concat()
        }
        _ if l < 1000 => [
            "CPU limit ",
            limit.text,
            " is below one core (",
            &ms(quota),
            " per 100 ms period): any burst needing more CPU time is throttled and stretched across periods, adding up to ",
            &ms(100.0 - quota),
            " of latency per period",
        ]
        .concat(),
        _ => return,
    };
    let sev = if cx.cfg.cpu_limits == CpuLimits::Forbid {
        Severity::Error
    } else {
        Severity::Warning
    };
    let own_request = cx
        .eff
        .request_cpu
        .as_ref()
        .filter(|r| r.origin != crate::k8s::container::ValueOrigin::FromLimit);
    let request = match own_request {
        Some(r) => std::borrow::Cow::Borrowed(r.text),
        None => std::borrow::Cow::Owned(describe_cpus(l)),
    };
    let mut d = cx
        .diag(Code::GK203, cx.value_anchor(limit), message)
        .severity(sev)
        .note(
            [
                "remove the CPU limit and keep a CPU request of ",
                &request,
                " for scheduling",
                // Only a Go runtime reads GOMAXPROCS.
                if cx.go.is_go {
                    ", or set GOMAXPROCS and the limit to the same whole number of CPUs"
                } else {
                    ""
                },
            ]
            .concat(),
        );
    d = d.origin(cx.y, limit, "CPU limit");
    if limit.is_declared() {
        d = d.fix_or_note(remove_limit(cx, limit));
    }
    out.push(d);
}

/// Delete the CPU limit; without a CPU request of its own the container would lose its CPU
/// guarantee, so the old limit becomes the request.
fn remove_limit(cx: &ContainerCtx, limit: &EffectiveValue) -> Result<Fix, Skip> {
    let (y, src) = (cx.y, cx.src);
    let res =
        cx.c.resources
            .node
            .ok_or("not fixed automatically: no resources mapping")?;
    let (limits_key, limits) = y
        .get_entry(res, "limits")
        .ok_or("not fixed automatically: no limits mapping")?;
    let q =
        cx.c.resources
            .limits
            .cpu
            .as_ref()
            .ok_or("not fixed automatically: no CPU limit")?;
    cx.fx.guard_shared(limits, "the limits mapping")?;
    if cx
        .limit_ranges
        .iter()
        .any(|lr| lr.default_limit(Resource::Cpu).is_some())
    {
        return Err("not fixed automatically: a LimitRange in this namespace would put a default CPU limit back".into());
    }
    if y.is_alias(q.node) {
        return Err("not fixed automatically: the CPU limit is an alias".into());
    }
    // Without the limit the downward API hands out the node's allocatable CPUs instead
    // (docs/semantics.md, env values from the downward API).
    let reader = cx.c.env.iter().find(|v| match &v.value {
        EnvValue::ResourceFieldRef(f) => {
            f.resource.is_some_and(|(r, _)| r == "limits.cpu")
                && f.container_name
                    .as_ref()
                    .is_none_or(|(n, _)| Some(n) == cx.c.name.as_ref())
        }
        _ => false,
    });
    // GOMAXPROCS that only mirrored the limit goes with it; any other reader needs a decision.
    let mut extra = Vec::new();
    if let Some(v) = reader {
        let removed = (v.name == "GOMAXPROCS")
            .then(|| {
                cx.c.env_node
                    .and_then(|env| remove_item(cx.fx, env, v.entry))
            })
            .flatten();
        match removed {
            Some(e) => extra.push(e),
            None => {
                return Err(format!(
                    "not fixed automatically: {} reads limits.cpu through the downward API, and without the limit it would get the node's CPU count; decide its value first",
                    v.name
                ))
            }
        }
    }
    let and_env = if extra.is_empty() {
        ""
    } else {
        " and the GOMAXPROCS entry that read it"
    };
    let only_cpu = y.entries(limits).len() == 1;
    // Remove the cpu entry, or the whole `limits:` when cpu was all it held.
    let remove = || {
        if only_cpu {
            remove_entry(cx.fx, res, limits_key, limits)
        } else {
            remove_entry(cx.fx, limits, q.key, q.node)
        }
    };
    let has_request = cx.eff.request_cpu.as_ref().is_some_and(|r| r.is_declared());
    if has_request {
        let mut edits = vec![remove()?];
        edits.extend(extra);
        return Ok(Fix {
            applicability: Applicability::Unsafe,
            title: format!(
                "remove the CPU limit {}{and_env} (the CPU request stays)",
                limit.text
            ),
            edits,
        });
    }
    let limit_text = &src.text[y.span(q.node)];
    // A `cpu` request that is present but not a quantity (empty, null, `abc`) is no request, yet
    // adding one beside it would duplicate the key.
    let unusable_request = y
        .get(res, "requests")
        .and_then(|r| y.get(r, "cpu"))
        .map(|n| src.text[y.span(n)].trim().to_string());
    if let Some(text) = unusable_request {
        return Err(format!(
            "not fixed automatically: the CPU request {text:?} is not a valid quantity; correct it first"
        ));
    }
    let mut edits = match y.get_entry(res, "requests") {
        Some((_, requests)) if y.is_mapping(requests) && !y.entries(requests).is_empty() => {
            vec![remove()?, add_entry(cx.fx, requests, "cpu", limit_text)?]
        }
        Some(_) => {
            return Err("not fixed automatically: the requests entry is not a mapping".into())
        }
        // `limits: {cpu: X}` alone becomes `requests: {cpu: X}` by renaming one key.
        None if only_cpu => vec![rename_key(y, limits_key, "requests")?],
        None => vec![
            remove()?,
            add_nested_entry(cx.fx, res, "requests", "cpu", limit_text)?,
        ],
    };
    edits.extend(extra);
    Ok(Fix {
        applicability: Applicability::Unsafe,
        title: format!(
            "move the CPU limit {} to the CPU request{and_env}",
            limit.text
        ),
        edits,
    })
}
