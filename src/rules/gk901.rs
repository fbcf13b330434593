//! GK901 unused-suppression: a suppression of a rule that ran and matched no finding. Left in
//! place, it would hide the next real finding there.

use super::Code;
use super::SuppressionCtx;
use crate::diagnostic::{Applicability, Diagnostic, Edit, Fix};
use crate::source::Source;
use crate::suppress::Scope;

pub fn check(cx: &SuppressionCtx, out: &mut Vec<Diagnostic>) {
    for s in cx.suppressions {
        let all_unused = s.codes.iter().all(|c| !c.used);
        for c in &s.codes {
            // A suppression for a rule that did not run this time is not "unused".
            let Some(code) = c.code else { continue };
            if c.used || code == Code::GK901 || !(cx.ran)(code) {
                continue;
            }
            let mut d = cx.diag(
                Code::GK901,
                s,
                format!("suppression of {code} matched no finding"),
            );
            d.document = s.doc;
            if all_unused && matches!(s.scope, Scope::Line(_) | Scope::Document(_)) {
                d = d.with_fix(remove_comment(cx.src, s.span.clone()).map(|e| Fix {
                    applicability: Applicability::Safe,
                    title: "remove the unused suppression".into(),
                    edits: vec![e],
                }));
            }
            out.push(d);
        }
    }
}

/// Remove a comment: the whole line when it stands alone, else the comment and the blanks before it.
fn remove_comment(src: &Source, span: std::ops::Range<usize>) -> Option<Edit> {
    let line = src.line_index(span.start);
    let lr = src.line_range(line);
    let before = &src.text[lr.start..span.start];
    if before.trim().is_empty() {
        let next = src.line_range(line + 1).start.max(lr.end);
        let end = if line + 1 < src.line_count() {
            next
        } else {
            lr.end
        };
        return Some(Edit {
            range: lr.start..end,
            text: String::new(),
        });
    }
    let trimmed = before.trim_end_matches([' ', '\t']).len();
    Some(Edit {
        range: lr.start + trimmed..span.end,
        text: String::new(),
    })
}
