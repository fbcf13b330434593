//! GK103 gomemlimit-exceeds-memory-limit: a GOMEMLIMIT at or above the container's memory limit
//! gives the GC no room to react before the kernel kills; far below it, it is probably stale.

use super::Code;
use super::ContainerCtx;
use crate::diagnostic::{Applicability, Diagnostic, Fix, Severity};
use crate::edit::replace_scalar;
use crate::k8s::container::EnvValue;
use crate::runtime::{
    describe_bytes, gomemlimit_for, parse_gogc, parse_gomemlimit, whole, GoGc, GoMemLimit,
};

pub fn check(cx: &ContainerCtx, out: &mut Vec<Diagnostic>) {
    let (Some(limit), Some(var)) = (&cx.eff.limit_memory, cx.c.env_var("GOMEMLIMIT")) else {
        return;
    };
    let limit_bytes = limit.quantity.value_ceil();
    let target = gomemlimit_for(limit_bytes, cx.cfg.gomemlimit_ratio);
    let gogc_off =
        cx.c.env_var("GOGC")
            .and_then(|g| g.literal())
            .is_some_and(|v| parse_gogc(v, cx.go.grammar()) == GoGc::Off);
    let recompute = |node| {
        replace_scalar(cx.y, node, &target).map(|e| Fix {
            applicability: Applicability::Safe,
            title: format!("set GOMEMLIMIT to \"{target}\""),
            edits: vec![e],
        })
    };
    let d = match &var.value {
        EnvValue::Literal { node, text, .. } => {
            let GoMemLimit::Bytes(b) = parse_gomemlimit(text, cx.go.grammar()) else {
                return;
            };
            let b = b as i128;
            let pct = b as f64 * 100.0 / limit_bytes.max(1) as f64;
            let (sev, msg) = if b > limit_bytes {
                (Severity::Error, format!(
                    "GOMEMLIMIT {text:?} ({}) is above the memory limit {} ({}): the kernel OOM-kills the container before the GC starts working to stay under it",
                    describe_bytes(b), limit.text, describe_bytes(limit_bytes)))
            } else if b == limit_bytes {
                (if gogc_off { Severity::Error } else { Severity::Warning }, format!(
                    "GOMEMLIMIT {text:?} equals the memory limit {}: no headroom for stacks, cgo, mmap and page cache the GC does not count, so the container is OOM-killed at the limit",
                    limit.text))
            } else if b * 2 < limit_bytes {
                (Severity::Info, format!(
                    "GOMEMLIMIT {text:?} ({}) is only {} % of the memory limit {}: probably stale, the GC works hard to stay far below memory the container may use",
                    describe_bytes(b), whole(pct), limit.text))
            } else {
                return;
            };
            cx.go_diag(Code::GK103, *node, msg)
                .severity(sev)
                .with_fix(recompute(*node))
        }
        EnvValue::ResourceFieldRef(f) => {
            let resource = f.resource.map(|(r, _)| r);
            let divisor_is_one = f
                .divisor
                .as_ref()
                .is_none_or(|(_, _, q)| q.is_some_and(|q| q.nanos() == 1_000_000_000));
            let other_container = f
                .container_name
                .as_ref()
                .is_some_and(|(n, _)| Some(n) != cx.c.name.as_ref());
            if resource != Some("limits.memory") || !divisor_is_one || other_container {
                return;
            }
            let sev = if gogc_off {
                Severity::Error
            } else {
                Severity::Warning
            };
            let mut d = cx.go_diag(Code::GK103, var.name_node, format!(
                "GOMEMLIMIT from resourceFieldRef limits.memory is 100 % of the memory limit {}: no headroom for memory the GC does not count, so the container is OOM-killed at the limit",
                limit.text)).severity(sev);
            if gogc_off {
                d = d.note("with GOGC=off the heap grows right up to GOMEMLIMIT, so the missing headroom is certain to be hit");
            }
            d.note(format!(
                "a literal GOMEMLIMIT of \"{target}\" leaves {} % headroom",
                whole((1.0 - cx.cfg.gomemlimit_ratio) * 100.0)
            ))
        }
        _ => return,
    };
    let d = d.origin(cx.y, limit, "memory limit");
    out.push(d);
}
