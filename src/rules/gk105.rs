//! GK105 go-env-divisor-mismatch: the downward API divides the resource by `divisor` and writes a
//! bare integer; Go reads GOMEMLIMIT's bare integer as bytes and GOMAXPROCS's as threads, so any
//! divisor that changes the unit changes the meaning (`divisor: 1Mi` on 512Mi gives 512 bytes).

use super::Code;
use super::ContainerCtx;
use crate::diagnostic::{Applicability, Diagnostic, Fix};
use crate::edit::delete_line_entry;
use crate::k8s::container::EnvValue;

pub fn check(cx: &ContainerCtx, out: &mut Vec<Diagnostic>) {
    for var in &cx.c.env {
        let EnvValue::ResourceFieldRef(f) = &var.value else {
            continue;
        };
        let Some((dtext, dnode, Some(divisor))) = &f.divisor else {
            continue;
        };
        let resource = f.resource.map_or("", |(r, _)| r);
        let message = match var.name {
            "GOMEMLIMIT" if divisor.nanos() != 1_000_000_000 => {
                let example = cx.eff.limit_memory.as_ref().filter(|_| resource == "limits.memory").map(|l| {
                    let v = (l.quantity.nanos() + divisor.nanos() - 1) / divisor.nanos().max(1);
                    format!(" (the {} limit becomes GOMEMLIMIT={v}, i.e. {v} bytes, and the GC runs almost continuously)", l.text)
                });
                format!(
                    "GOMEMLIMIT from resourceFieldRef {resource} with divisor {dtext}: Go reads the bare number as bytes{}",
                    example.unwrap_or_default()
                )
            }
            "GOMAXPROCS" if divisor.nanos() == 1_000_000 => {
                let example = cx
                    .eff
                    .limit_cpu
                    .as_ref()
                    .filter(|_| resource == "limits.cpu")
                    .map(|l| {
                        format!(
                            " (the {} limit becomes GOMAXPROCS={})",
                            l.text,
                            l.quantity.milli_value_ceil()
                        )
                    });
                format!(
                    "GOMAXPROCS from resourceFieldRef {resource} with divisor 1m gives millicores, which Go reads as a thread count{}",
                    example.unwrap_or_default()
                )
            }
            _ => continue,
        };
        let fix =
            cx.y.get_entry(f.node, "divisor")
                .and_then(|(k, v)| delete_line_entry(cx.src, cx.y, k, v))
                .map(|e| Fix {
                    applicability: Applicability::Safe,
                    title: "remove the divisor (the default, 1, gives bytes and whole CPUs)".into(),
                    edits: vec![e],
                });
        out.push(cx.go_diag(Code::GK105, *dnode, message).with_fix(fix));
    }
}
