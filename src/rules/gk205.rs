//! GK205 gomaxprocs-invalid: the runtime silently ignores a GOMAXPROCS that is not a positive
//! base-10 int32 (docs/semantics.md, GOMAXPROCS), and tens of thousands of Ps hang or crash it at
//! start-up.

use super::Code;
use super::ContainerCtx;
use crate::diagnostic::Diagnostic;
use crate::runtime::{parse_gomaxprocs, GoMaxProcs};

pub fn check(cx: &ContainerCtx, out: &mut Vec<Diagnostic>) {
    let Some(var) = cx.c.env_var("GOMAXPROCS") else {
        return;
    };
    let Some(text) = var.literal() else { return };
    let msg = match parse_gomaxprocs(text, cx.go.grammar()) {
        GoMaxProcs::Ignored => format!(
            "GOMAXPROCS {text:?} is ignored by the Go runtime (it must be a positive whole number, no spaces): the default applies instead, silently"
        ),
        GoMaxProcs::Set(n) if n > 1024 => format!(
            "GOMAXPROCS {n} is absurdly large: each P costs memory and scheduler work, and values in the tens of thousands hang or crash the runtime at start-up"
        ),
        GoMaxProcs::Set(_) => return,
    };
    let mut d = cx.go_diag(Code::GK205, var.value_node(), msg);
    if let Some(note) = cx.go.plus_sign_note(text) {
        d = d.note(note);
    }
    out.push(d);
}
