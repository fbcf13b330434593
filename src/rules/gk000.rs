//! GK000 invalid-yaml: a document the YAML parser rejects, or a file that is not text. Nothing
//! else in such a document can be checked, so this is reported first and on its own.

use super::Code;
use super::FileCtx;
use crate::diagnostic::Diagnostic;

pub fn check(cx: &FileCtx, out: &mut Vec<Diagnostic>) {
    for (i, doc) in cx.y.docs.iter().enumerate() {
        let Some(e) = &doc.error else { continue };
        let mut d = cx.diag(
            Code::GK000,
            e.offset..e.offset,
            format!("invalid YAML: {}", e.message),
        );
        d.document = i;
        if cx.src.text.contains("{{") {
            d = d.note("this looks like a Helm template: render it first, e.g. `helm template RELEASE CHART | golint-k8s lint -`");
        }
        out.push(d);
    }
}

/// The finding for a file that could not be decoded as text (it is never parsed).
pub fn undecodable(message: String) -> Diagnostic {
    Diagnostic::of_rule(Code::GK000, 0..0, message)
}
