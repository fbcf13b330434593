//! GK201 cpu-limit-without-gomaxprocs: before Go 1.25 the runtime ignores the cgroup CPU quota and
//! starts one thread per node CPU; together they spend the quota in a fraction of each 100 ms CFS
//! period and then every goroutine waits for the next one.

use super::Code;
use super::ContainerCtx;
use crate::diagnostic::{Applicability, Diagnostic, Fix};
use crate::edit::emit::{add_env, NewValue};
use crate::runtime::throttle::{
    burn, ceil_cpus, describe_cpus, go125_gomaxprocs, limit_millis, ms, quota_ms,
};

pub fn check(cx: &ContainerCtx, out: &mut Vec<Diagnostic>) {
    // Go 1.25+ and programs that size GOMAXPROCS themselves (automaxprocs) follow the limit;
    // a program that sets it to the node's CPU count does not, on any Go.
    let node_cpus_by_program = matches!(
        cx.go.gomaxprocs_formula.filter(|_| cx.go.is_go),
        Some(crate::go::catalog::Formula::NodeCpus { .. })
    );
    if cx.go.adaptive_gomaxprocs() || cx.go.sizes_gomaxprocs.is_some() && !node_cpus_by_program {
        return;
    }
    let Some(limit) = &cx.eff.limit_cpu else {
        return;
    };
    if cx.c.env_var("GOMAXPROCS").is_some() || cx.env_from_value("GOMAXPROCS").is_some() {
        return;
    }
    // The image's ENV sets it.
    if cx.go.image_env("GOMAXPROCS").is_some() {
        return;
    }
    let l = limit_millis(&limit.quantity);
    let quota = quota_ms(l);
    // An assumed node of 16 CPUs when node-cpus is not set, and said to be one.
    const ASSUMED_NODE: i128 = 16;
    let message = match cx.go.gomaxprocs(cx.c, cx.cpu_view()) {
        // No more threads than the quota feeds: nothing is throttled.
        Some(t) if t.n * 1000 <= l => return,
        Some(t) => {
            let (spent, wait) = burn(l, t.n);
            [
                "CPU limit ",
                limit.text,
                " gives a quota of ",
                &ms(quota),
                " per 100 ms period; with GOMAXPROCS = ",
                itoa::Buffer::new().format(t.n),
                " (node CPUs) it can be spent in ",
                &ms(spent),
                " and every goroutine then waits ",
                &ms(wait),
            ]
            .concat()
        }
        None if ASSUMED_NODE * 1000 <= l => [
            "CPU limit ",
            limit.text,
            " gives a quota of ",
            &ms(quota),
            " per 100 ms period, but without GOMAXPROCS Go runs one thread per node CPU: on a node with more than ",
            &describe_cpus(l),
            " the quota runs out before each period ends and every goroutine then waits",
        ]
        .concat(),
        None => {
            let (spent, wait) = burn(l, ASSUMED_NODE);
            [
                "CPU limit ",
                limit.text,
                " gives a quota of ",
                &ms(quota),
                " per 100 ms period, but without GOMAXPROCS Go runs one thread per node CPU: assuming a 16-CPU node (node-cpus is not set), the quota is spent in ",
                &ms(spent),
                " and every goroutine then waits ",
                &ms(wait),
            ]
            .concat()
        }
    };
    let mut d = cx
        .go_diag(Code::GK201, cx.value_anchor(limit), message)
        .note(
            [
                "set GOMAXPROCS from resourceFieldRef limits.cpu (ceil of the limit: ",
                itoa::Buffer::new().format(ceil_cpus(l)),
                " for ",
                &describe_cpus(l),
                ")",
            ]
            .concat(),
        );
    let go125 = go125_gomaxprocs(l, cx.cfg.node_cpus);
    d = match cx.go.containermaxprocs_off() {
        _ if node_cpus_by_program => d.note(
            "the program sets GOMAXPROCS to the node's CPU count itself unless GOMAXPROCS is set, which also turns Go 1.25's limit-aware default off",
        ),
        Some(from) => d.note(format!(
            "containermaxprocs=0 in {from} turns Go 1.25's container-aware GOMAXPROCS off; without it the runtime would read the limit itself"
        )),
        // Go 1.25 never goes below 2 threads: under a limit below 2 CPUs they still outrun it.
        None if go125 * 1000 > l => {
            let (spent, _) = burn(l, go125);
            d.note(
                [
                    "on Go 1.25 or later the runtime reads the limit itself, but keeps at least 2 threads: GOMAXPROCS = ",
                    itoa::Buffer::new().format(go125),
                    " here still spends the quota in ",
                    &ms(spent),
                    " (GK203)",
                ]
                .concat(),
            )
        }
        None => d.note(
            [
                "on Go 1.25 or later the runtime reads the limit itself (GOMAXPROCS = ",
                itoa::Buffer::new().format(go125),
                " here) and this finding goes away once the version is declared",
            ]
            .concat(),
        ),
    };
    if cx.cfg.node_cpus.is_none() {
        d = d.note(
            "set node-cpus in .golint-k8s.yaml (or --node-cpus) for the numbers of your nodes",
        );
    }
    d = d.origin(cx.y, limit, "CPU limit");
    let unseen_env_from = cx.unresolved_env_from_note();
    if let Some(n) = &unseen_env_from {
        d = d.note(n.clone());
    }
    let fix = add_env(
        cx.fx,
        cx.c,
        "GOMAXPROCS",
        NewValue::ResourceFieldRef("limits.cpu"),
    )
    .map(|e| {
        // An envFrom source we cannot see may already set GOMAXPROCS; an env entry overrides it.
        let (applicability, also) = match unseen_env_from {
            Some(_) => (
                Applicability::Unsafe,
                "; it overrides any GOMAXPROCS from envFrom",
            ),
            None => (Applicability::Safe, ""),
        };
        Fix {
            applicability,
            title: ["add GOMAXPROCS from resourceFieldRef limits.cpu", also].concat(),
            edits: vec![e],
        }
    });
    out.push(d.fix_or_note(fix));
}
