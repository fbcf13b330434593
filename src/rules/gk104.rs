//! GK104 gomemlimit-malformed: the Go runtime throws at start-up on a GOMEMLIMIT it cannot parse
//! (`fatal error: malformed GOMEMLIMIT`, exit status 2), and Kubernetes quantity notation such as
//! `512Mi` is exactly such a value.

use super::Code;
use super::ContainerCtx;
use crate::diagnostic::{Applicability, Diagnostic, Fix};
use crate::edit::replace_scalar;
use crate::k8s::Quantity;
use crate::runtime::{parse_gomemlimit, GoMemLimit};

pub fn check(cx: &ContainerCtx, out: &mut Vec<Diagnostic>) {
    let Some(var) = cx.c.env_var("GOMEMLIMIT") else {
        return;
    };
    let Some(text) = var.literal() else { return };
    if parse_gomemlimit(text, cx.go.grammar()) != GoMemLimit::Malformed {
        return;
    }
    let plus = cx.go.plus_sign_note(text);
    // `+512MiB`: the value Go 1.26 reads, without the sign older releases stop on.
    let fixed = match &plus {
        Some(_) => Some(text[1..].to_string()),
        None => repair(text),
    };
    let mut d = cx.go_diag(
        Code::GK104,
        var.value_node(),
        format!(
            "GOMEMLIMIT {text:?} is not a value the Go runtime accepts: the process exits at start-up with \"fatal error: malformed GOMEMLIMIT\""
        ),
    )
    .note("Go accepts a whole number of bytes with an optional B, KiB, MiB, GiB or TiB suffix (case-sensitive), or off; Kubernetes quantities such as 512Mi are not valid");
    if let Some(note) = plus {
        d = d.note(note);
    }
    if let Some(v) = &fixed {
        if let Some(edit) = replace_scalar(cx.y, var.value_node(), v) {
            d = d.with_fix(Some(Fix {
                applicability: Applicability::Safe,
                title: format!("write GOMEMLIMIT as \"{v}\""),
                edits: vec![edit],
            }));
        }
    }
    out.push(d);
}

/// The value the user meant, when that is unambiguous: a quantity (`512Mi`, `1.5Gi`, `1G`), or the
/// same with a stray `B` (`1.5GiB`), converted to what Go reads (whole MiB, rounded down; bytes when
/// below 1 MiB).
pub fn repair(text: &str) -> Option<String> {
    let t = text.trim();
    let q = Quantity::parse(t).ok().or_else(|| {
        let base = t.strip_suffix('B')?;
        if ["Ki", "Mi", "Gi", "Ti"].iter().any(|s| base.ends_with(s)) {
            Quantity::parse(base).ok()
        } else {
            None
        }
    })?;
    if q.is_negative() || q.nanos() % 1_000_000_000 != 0 && t.ends_with('m') {
        return None;
    }
    let bytes = q.nanos() / 1_000_000_000;
    if bytes <= 0 || bytes > i64::MAX as i128 {
        return None;
    }
    // A binary suffix converts exactly; anything else rounds down to whole MiB.
    if bytes % (1 << 30) == 0 && bytes >= 1 << 30 && t.contains("Gi") {
        return Some(format!("{}GiB", bytes >> 30));
    }
    if bytes >= 1 << 20 {
        Some(format!("{}MiB", bytes >> 20))
    } else {
        Some(format!("{bytes}"))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn repairs() {
        use super::repair;
        assert_eq!(repair("512Mi").as_deref(), Some("512MiB"));
        assert_eq!(repair("2Gi").as_deref(), Some("2GiB"));
        assert_eq!(repair("1.5GiB").as_deref(), Some("1536MiB"));
        assert_eq!(repair("1G").as_deref(), Some("953MiB"));
        assert_eq!(repair("OFF"), None);
        assert_eq!(repair("1GB"), None);
        assert_eq!(repair("-1"), None);
    }
}
