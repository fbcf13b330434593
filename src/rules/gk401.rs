//! GK401 missing-requests: without a CPU and a memory request (after defaulting) the scheduler
//! guarantees nothing, and under contention the container gets the minimum CPU share.

use super::Code;
use super::ContainerCtx;
use crate::diagnostic::Diagnostic;
use crate::k8s::container::ContainerKind;

pub fn check(cx: &ContainerCtx, out: &mut Vec<Diagnostic>) {
    if cx.c.kind == ContainerKind::Ephemeral {
        return;
    }
    // Pod-level requests (`spec.resources.requests`) reserve for the whole pod, so a container
    // covered by them is scheduled with a guarantee even without its own request.
    let pod = &cx.pod.resources.requests;
    let missing: Vec<&str> = [
        ("CPU", cx.eff.request_cpu.is_none() && pod.cpu.is_none()),
        (
            "memory",
            cx.eff.request_memory.is_none() && pod.memory.is_none(),
        ),
    ]
    .into_iter()
    .filter_map(|(n, m)| m.then_some(n))
    .collect();
    if missing.is_empty() {
        return;
    }
    let node = cx.c.resources.key.unwrap_or_else(|| cx.c.anchor_node());
    let what = missing.join(" or ");
    let consequence = if missing.contains(&"CPU") {
        "the scheduler reserves nothing for it and under contention it gets the minimum CPU share (2 of 1024 shares per CPU)"
    } else {
        "the scheduler reserves no memory for it, so it lands on nodes that cannot hold it and is evicted first"
    };
    out.push(cx.diag(
        Code::GK401,
        node,
        [&cx.who(), " has no ", &what, " request: ", consequence].concat(),
    ));
}
