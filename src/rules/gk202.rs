//! GK202 gomaxprocs-exceeds-cpu-limit: more Go threads than the CPU limit can feed; the quota is
//! spent early in each period and then all of them wait.

use super::Code;
use super::ContainerCtx;
use crate::diagnostic::{Applicability, Diagnostic, Fix};
use crate::runtime::throttle::{at_once, burn, ceil_cpus, limit_millis, ms, quota_ms};
use crate::runtime::{parse_gomaxprocs, GoMaxProcs};

pub fn check(cx: &ContainerCtx, out: &mut Vec<Diagnostic>) {
    let (Some(limit), Some(var)) = (&cx.eff.limit_cpu, cx.c.env_var("GOMAXPROCS")) else {
        return;
    };
    let Some(text) = var.literal() else { return };
    let GoMaxProcs::Set(n) = parse_gomaxprocs(text, cx.go.grammar()) else {
        return;
    };
    let l = limit_millis(&limit.quantity);
    let ceil = ceil_cpus(l);
    if (n as i128) <= ceil {
        return;
    }
    // No more run at once than the node has CPUs.
    let running = at_once(n as i128, cx.cfg.node_cpus);
    let (spent, wait) = burn(l, running);
    let mut d = cx.go_diag(
        Code::GK202,
        var.value_node(),
        format!(
            "GOMAXPROCS {n} is above the CPU limit {} (at most {ceil} useful): {running} threads spend the {} quota in {} and then wait {} of every 100 ms period",
            limit.text, ms(quota_ms(l)), ms(spent), ms(wait)
        ),
    );
    // Go < 1.25 (or unknown): the downward API gives ceil(limit), which tracks the limit.
    if !cx.go.adaptive_gomaxprocs() {
        d = d.note("take GOMAXPROCS from resourceFieldRef limits.cpu so it follows the limit");
        if let Some(edit) = crate::edit::value_to_cpu_field_ref(cx.fx, var) {
            d = d.with_fix(Some(Fix {
                applicability: Applicability::Safe,
                title: "take GOMAXPROCS from resourceFieldRef limits.cpu".into(),
                edits: vec![edit],
            }));
        }
    } else {
        d = d.note("on Go 1.25 or later, remove GOMAXPROCS: the runtime sizes itself to the limit and follows in-place resizes");
        d = d.with_fix(cx.remove_env_fix(var));
    }
    d = d.origin(cx.y, limit, "CPU limit");
    out.push(d);
}
