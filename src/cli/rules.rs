//! `golint-k8s rules` and `golint-k8s explain`.

use std::io::Write;

use crate::rules::registry::{self, RULES};

pub fn list() -> i32 {
    let mut out = String::new();
    out.push_str(&format!(
        "{:<6} {:<38} {:<8} {:<7} {}\n",
        "CODE", "NAME", "SEVERITY", "FIX", "APPLIES TO"
    ));
    for r in RULES {
        out.push_str(&format!(
            "{:<6} {:<38} {:<8} {:<7} {}\n",
            r.code,
            r.name,
            r.severity.as_str(),
            r.fix.as_str(),
            r.applies_to
        ));
    }
    emit(&out)
}

pub fn explain(rule: &str) -> i32 {
    match registry::find(rule) {
        Some(r) => emit(r.doc),
        None => {
            say!("error: unknown rule {rule:?}; `golint-k8s rules` lists them");
            2
        }
    }
}

fn emit(s: &str) -> i32 {
    let mut out = std::io::stdout().lock();
    match out.write_all(s.as_bytes()).and_then(|_| out.flush()) {
        Ok(()) => 0,
        // A closed pipe (`| head`) is the reader's choice, not an error.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => 0,
        Err(e) => {
            say!("error: {e}");
            2
        }
    }
}
