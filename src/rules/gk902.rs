//! GK902 unknown-rule-in-suppression: a suppression naming something that is no rule (a typo, or
//! a code from another tool) silences nothing, and nobody would otherwise notice.

use super::Code;
use super::SuppressionCtx;
use crate::diagnostic::Diagnostic;

pub fn check(cx: &SuppressionCtx, out: &mut Vec<Diagnostic>) {
    for s in cx.suppressions {
        for c in s.codes.iter().filter(|c| c.code.is_none()) {
            let mut d = cx.diag(
                Code::GK902,
                s,
                format!(
                    "suppression names {:?}, which is not a golint-k8s rule{} (see `golint-k8s rules`)",
                    c.written,
                    crate::diagnostic::registry::did_you_mean(&c.written)
                ),
            );
            d.document = s.doc;
            out.push(d);
        }
    }
}
