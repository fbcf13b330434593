//! GK108 godebug-madvdontneed: Go ≥ 1.16 already returns memory with MADV_DONTNEED on Linux, so
//! `madvdontneed=1` is redundant; `madvdontneed=0` brings back MADV_FREE, whose freed pages stay in
//! RSS and the working set the kubelet evicts by (docs/semantics.md, GODEBUG).

use super::Code;
use super::ContainerCtx;
use crate::diagnostic::{Applicability, Diagnostic, Fix, Severity};
use crate::edit::replace_scalar;
use crate::go::godebug_value;
use crate::runtime::GO_1_16;

pub fn check(cx: &ContainerCtx, out: &mut Vec<Diagnostic>) {
    let Some(var) = cx.c.env_var("GODEBUG") else {
        return;
    };
    let Some(text) = var.literal() else { return };
    let Some(value) = godebug_value(text, "madvdontneed") else {
        return;
    };
    let (sev, msg) = match value {
        "1" => {
            if cx.go.version_below(GO_1_16) {
                return;
            }
            (Severity::Info, "GODEBUG madvdontneed=1 is redundant: since Go 1.16 the runtime releases memory with MADV_DONTNEED on Linux by default".to_string())
        }
        "0" => (Severity::Warning, "GODEBUG madvdontneed=0 switches to MADV_FREE: freed pages stay charged to RSS and the working set until the kernel reclaims them, which misleads the kubelet's memory eviction and dashboards".to_string()),
        _ => return,
    };
    let d = cx.go_diag(Code::GK108, var.value_node(), msg).severity(sev);
    out.push(d.with_fix(remove_godebug_key(cx, var, text, "madvdontneed")));
}

/// A fix that drops every `key=…` entry from a GODEBUG value (None when nothing else would be
/// left: removing the whole env entry is a structural edit).
pub fn remove_godebug_key(
    cx: &ContainerCtx,
    var: &crate::k8s::EnvVar,
    text: &str,
    key: &str,
) -> Option<Fix> {
    let kept: Vec<&str> = text
        .split(',')
        .filter(|kv| kv.split_once('=').is_none_or(|(k, _)| k.trim() != key))
        .collect();
    if kept.iter().all(|k| k.trim().is_empty()) {
        // Nothing else in GODEBUG: drop the whole env entry.
        let edit =
            cx.c.env_node
                .and_then(|env| crate::edit::emit::remove_item(cx.fx, env, var.entry))?;
        return Some(Fix {
            applicability: Applicability::Safe,
            title: "remove the GODEBUG env entry".into(),
            edits: vec![edit],
        });
    }
    let edit = replace_scalar(cx.y, var.value_node(), &kept.join(","))?;
    Some(Fix {
        applicability: Applicability::Safe,
        title: format!("remove {key} from GODEBUG"),
        edits: vec![edit],
    })
}
