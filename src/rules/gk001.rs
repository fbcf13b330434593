//! GK001 duplicate-key: a mapping that repeats a key. Strict decoding (kubectl's) rejects the
//! object; lenient readers keep one of the values, and which one differs between tools.

use super::Code;
use super::FileCtx;
use crate::diagnostic::Diagnostic;

pub fn check(cx: &FileCtx, out: &mut Vec<Diagnostic>) {
    let y = cx.y;
    for dup in &y.duplicates {
        let first_line = cx.src.line_col(y.span(dup.first).start).0;
        let key = y.str(dup.second).unwrap_or("");
        let mut d = cx.diag(
            Code::GK001,
            y.span(dup.second),
            format!("duplicate key {key:?} (first on line {first_line}): strict validation rejects the object, and tools that accept it silently keep only one of the values"),
        );
        d.document = dup.doc;
        out.push(d);
    }
}
