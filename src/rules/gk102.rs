//! GK102 memory-request-not-equal-limit: with a memory request below the limit the pod is
//! Burstable; under node pressure it is evicted by its usage above the request and OOM-scored high.

use super::Code;
use super::ContainerCtx;
use crate::diagnostic::{Applicability, Diagnostic, Fix, Severity};
use crate::edit::replace_scalar;
use crate::k8s::container::ValueOrigin;
use crate::runtime::describe_bytes;
use crate::yaml::Style;

pub fn check(cx: &ContainerCtx, out: &mut Vec<Diagnostic>) {
    let (Some(limit), Some(request)) = (&cx.eff.limit_memory, &cx.eff.request_memory) else {
        return;
    };
    if request.origin == ValueOrigin::FromLimit || request.quantity == limit.quantity {
        return;
    }
    let above = request.quantity > limit.quantity;
    let message = if above {
        // In bytes too: `64Mi` above `64M` is not plain from the texts.
        [
            "memory request ",
            request.text,
            " (",
            &describe_bytes(request.quantity.value_ceil()),
            ") is above the limit ",
            limit.text,
            " (",
            &describe_bytes(limit.quantity.value_ceil()),
            "): the API server rejects the pod (a request must not exceed its limit)",
        ]
        .concat()
    } else {
        // Pieces joined once: `format!` cost more than the rest of the rule (four thousand
        // findings of this rule in a large repository are common).
        [
            "memory request ",
            request.text,
            " (",
            &describe_bytes(request.quantity.value_ceil()),
            ") is below the limit ",
            limit.text,
            " (",
            &describe_bytes(limit.quantity.value_ceil()),
            "): under node memory pressure the pod is evicted by its usage above the request, and the OOM killer prefers it",
        ]
        .concat()
    };
    let mut d = cx.diag(Code::GK102, cx.value_anchor(request), message);
    if above {
        // A pod the API server refuses is an error, not a warning.
        d = d.severity(Severity::Error);
    }
    d = d
        .origin(cx.y, request, "memory request")
        .origin(cx.y, limit, "memory limit");
    if request.is_declared() {
        if let Some(edit) = request.node.and_then(|n| copy_quantity(cx, n, limit)) {
            d = d.with_fix(Some(Fix {
                applicability: Applicability::Unsafe,
                title: ["set the memory request to the limit ", limit.text].concat(),
                edits: vec![edit],
            }));
        }
    }
    out.push(d);
}

/// Write the limit into the request. Both plain: copy the limit's text as written, so the request
/// reads exactly as the limit does (`512Mi`, not `"512Mi"`); otherwise quote as `replace_scalar` does.
fn copy_quantity(
    cx: &ContainerCtx,
    request: crate::yaml::NodeId,
    limit: &crate::k8s::container::EffectiveValue,
) -> Option<crate::diagnostic::Edit> {
    let plain = |n| matches!(cx.y.scalar(n), Some((_, Style::Plain, None)));
    match limit.node {
        Some(l)
            if limit.is_declared()
                && plain(l)
                && plain(request)
                && !cx.y.is_alias(l)
                && !cx.y.is_alias(request) =>
        {
            Some(crate::diagnostic::Edit {
                range: cx.y.span(request),
                text: cx.src.text[cx.y.span(l)].to_string(),
            })
        }
        _ => replace_scalar(cx.y, request, limit.text),
    }
}
