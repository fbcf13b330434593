//! GK301 gogc-invalid: the runtime replaces a GOGC it cannot parse with 100, silently
//! (docs/semantics.md, GOGC).

use super::Code;
use super::ContainerCtx;
use crate::diagnostic::Diagnostic;
use crate::k8s::container::EnvValue;
use crate::runtime::{parse_gogc, GoGc};

pub fn check(cx: &ContainerCtx, out: &mut Vec<Diagnostic>) {
    let Some(var) = cx.c.env_var("GOGC") else {
        return;
    };
    // An unquoted non-string (`off` as a boolean) is GK302's finding; judge only real strings here.
    let EnvValue::Literal { text, resolved, .. } = &var.value else {
        return;
    };
    if !resolved.is_string() {
        return;
    }
    if parse_gogc(text, cx.go.grammar()) != GoGc::Invalid {
        return;
    }
    let hint = if text.eq_ignore_ascii_case("off") || *text == "false" {
        " (write off, in lower case)"
    } else {
        ""
    };
    let mut d = cx.go_diag(
        Code::GK301,
        var.value_node(),
        format!("GOGC {text:?} is not off or a whole number: the Go runtime silently uses GOGC=100 instead{hint}"),
    );
    if let Some(note) = cx.go.plus_sign_note(text) {
        d = d.note(note);
    }
    out.push(d);
}
