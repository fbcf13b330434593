//! GK109 suspicious-memory-quantity: `memory: 100m` is a tenth of a byte (the milli suffix, almost
//! always meant as `100Mi`), and an unquoted `0100` is octal 64 to kubectl's YAML 1.1 reader.

use super::Code;
use super::{ContainerCtx, ObjectCtx};
use crate::diagnostic::Diagnostic;
use crate::k8s::container::QuantityValue;
use crate::k8s::limitrange::LimitRange;
use crate::yaml::{Yaml, Yaml11};

pub fn check(cx: &ContainerCtx, out: &mut Vec<Diagnostic>) {
    let own = [
        cx.c.resources.limits.memory.as_ref(),
        cx.c.resources.requests.memory.as_ref(),
    ];
    // Pod-level resources belong to no container: report them once, with the first container.
    let first = cx
        .pod
        .containers
        .first()
        .is_some_and(|f| f.node == cx.c.node);
    let pod = match first {
        true => [
            cx.pod.resources.limits.memory.as_ref(),
            cx.pod.resources.requests.memory.as_ref(),
        ],
        false => [None, None],
    };
    for q in own.into_iter().chain(pod).flatten() {
        if let Some(msg) = problem(cx.y, q) {
            out.push(cx.diag(Code::GK109, q.node, msg));
        }
    }
}

/// A LimitRange's memory defaults, minimums and maximums: containers get them without writing them.
pub fn check_limit_range(cx: &ObjectCtx, out: &mut Vec<Diagnostic>) {
    if cx.object.kind != "LimitRange" {
        return;
    }
    for (k, v) in LimitRange::memory_nodes(cx.y, cx.object) {
        if let Some(msg) = QuantityValue::read(cx.y, k, v).and_then(|q| problem(cx.y, &q)) {
            out.push(cx.diag(Code::GK109, v, msg));
        }
    }
}

/// What is wrong with a memory quantity, if anything.
fn problem(y: &Yaml, q: &QuantityValue) -> Option<String> {
    let text = q.text.trim();
    if text.ends_with('m') {
        let quantity = q.quantity?;
        let bytes = quantity.nanos() as f64 / 1e9;
        let number = text.trim_end_matches('m');
        return Some(format!(
            "memory {text} is {bytes} bytes: the m suffix means milli; you probably meant {number}Mi ({number} MiB)"
        ));
    }
    if let Some(Yaml11::Int(v)) = y.resolved(q.node) {
        let digits = text.trim_start_matches(['+', '-']);
        if digits.len() > 1 && digits.starts_with('0') && digits.bytes().all(|b| b.is_ascii_digit())
        {
            return Some(format!(
                "memory {text} is read as the octal number {v} by kubectl and Helm (YAML 1.1): quote it, or drop the leading zero"
            ));
        }
    }
    None
}
