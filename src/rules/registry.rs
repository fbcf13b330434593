//! The one table of rules: code, name, default severity, fix kind, doc and check function.
//! A completeness test keeps it in step with `rules/*.md` and `fixtures/`.

use super::*;
use crate::diagnostic::Severity;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FixKind {
    Safe,
    Unsafe,
    None,
}

impl FixKind {
    pub fn as_str(self) -> &'static str {
        match self {
            FixKind::Safe => "safe",
            FixKind::Unsafe => "unsafe",
            FixKind::None => "none",
        }
    }
}

pub type ContainerCheck = fn(&ContainerCtx, &mut Vec<Diagnostic>);
pub type ObjectCheck = fn(&ObjectCtx, &mut Vec<Diagnostic>);
pub type FileCheck = fn(&FileCtx, &mut Vec<Diagnostic>);
pub type SuppressionCheck = fn(&SuppressionCtx, &mut Vec<Diagnostic>);

/// What a check judges, and so when the engine runs it.
#[derive(Clone, Copy)]
pub enum Check {
    /// Once per parsed file: its syntax errors and duplicate keys.
    File(FileCheck),
    /// Once per Kubernetes object.
    Object(ObjectCheck),
    /// Once per container of every pod spec.
    Container(ContainerCheck),
    /// Once per file, over its suppressions, after every other check.
    Suppressions(SuppressionCheck),
}

pub struct Rule {
    pub code: &'static str,
    pub name: &'static str,
    pub severity: Severity,
    pub fix: FixKind,
    pub applies_to: &'static str,
    pub summary: &'static str,
    pub doc: &'static str,
    /// Most rules have one check; GK109 judges containers and LimitRanges alike.
    pub checks: &'static [Check],
}

macro_rules! rule {
    ($code:literal, $name:literal, $sev:ident, $fix:ident, $applies:literal, $summary:literal, $check:expr) => {
        Rule {
            code: $code,
            name: $name,
            severity: Severity::$sev,
            fix: FixKind::$fix,
            applies_to: $applies,
            summary: $summary,
            doc: include_str!(concat!("../../rules/", $code, "-", $name, ".md")),
            checks: $check,
        }
    };
}

pub static RULES: &[Rule] = &[
    rule!("GK000", "invalid-yaml", Error, None, "every document",
        "the document is not valid YAML (or not text)", &[Check::File(gk000::check)]),
    rule!("GK001", "duplicate-key", Error, None, "every mapping",
        "a mapping repeats a key; kubectl rejects it and other tools keep either value",
        &[Check::File(gk001::check)]),
    rule!("GK101", "memory-limit-without-gomemlimit", Warning, Safe, "Go containers",
        "memory limit without GOMEMLIMIT: the GC paces by GOGC alone and the container is OOM-killed",
        &[Check::Container(gk101::check)]),
    rule!("GK102", "memory-request-not-equal-limit", Warning, Unsafe, "all containers",
        "memory request below the limit: the pod is evicted and OOM-scored by usage above the request",
        &[Check::Container(gk102::check)]),
    rule!("GK103", "gomemlimit-exceeds-memory-limit", Error, Safe, "Go containers",
        "GOMEMLIMIT at or above the memory limit (no headroom), or far below it (stale)",
        &[Check::Container(gk103::check)]),
    rule!("GK104", "gomemlimit-malformed", Error, Safe, "Go containers",
        "GOMEMLIMIT the Go runtime rejects: the process dies at start-up",
        &[Check::Container(gk104::check)]),
    rule!("GK105", "go-env-divisor-mismatch", Error, Safe, "Go containers",
        "resourceFieldRef divisor that changes the unit Go reads (GOMEMLIMIT in MiB read as bytes)",
        &[Check::Container(gk105::check)]),
    rule!("GK106", "go-env-from-unset-resource", Warning, None, "Go containers",
        "GOMEMLIMIT/GOMAXPROCS from a resource the container does not set (node allocatable or 0)",
        &[Check::Container(gk106::check)]),
    rule!("GK107", "gogc-off-without-gomemlimit", Error, Safe, "Go containers",
        "GOGC=off with no GOMEMLIMIT: the heap grows until the OOM kill",
        &[Check::Container(gk107::check)]),
    rule!("GK108", "godebug-madvdontneed", Warning, Safe, "Go containers",
        "GODEBUG madvdontneed: redundant (=1) or inflating RSS and misleading eviction (=0)",
        &[Check::Container(gk108::check)]),
    rule!("GK109", "suspicious-memory-quantity", Warning, None, "all containers",
        "memory quantity with a milli suffix (100m = 0.1 byte) or read as octal (0100 = 64)",
        &[Check::Container(gk109::check), Check::Object(gk109::check_limit_range)]),
    rule!("GK201", "cpu-limit-without-gomaxprocs", Warning, Safe, "Go containers, Go < 1.25 or unknown",
        "CPU limit without GOMAXPROCS: Go runs a thread per node CPU and burns the CFS quota early",
        &[Check::Container(gk201::check)]),
    rule!("GK202", "gomaxprocs-exceeds-cpu-limit", Warning, Safe, "Go containers",
        "GOMAXPROCS above the CPU limit: more threads than the quota can feed",
        &[Check::Container(gk202::check)]),
    rule!("GK203", "cpu-limit-throttling", Warning, Unsafe, "all containers",
        "CPU limit that CFS will throttle at the parallelism the container uses",
        &[Check::Container(gk203::check)]),
    rule!("GK204", "gomaxprocs-pinned-on-adaptive-go", Info, Unsafe, "Go containers, Go >= 1.25",
        "static GOMAXPROCS on Go >= 1.25 turns off the runtime's own limit tracking",
        &[Check::Container(gk204::check)]),
    rule!("GK205", "gomaxprocs-invalid", Warning, None, "Go containers",
        "GOMAXPROCS the runtime ignores (0, negative, not an integer) or absurdly large",
        &[Check::Container(gk205::check)]),
    rule!("GK206", "godebug-disables-container-maxprocs", Warning, Safe, "Go containers, Go >= 1.25",
        "GODEBUG containermaxprocs=0 or updatemaxprocs=0 turns off container-aware GOMAXPROCS",
        &[Check::Container(gk206::check)]),
    rule!("GK301", "gogc-invalid", Warning, None, "Go containers",
        "GOGC the runtime silently replaces with 100",
        &[Check::Container(gk301::check)]),
    rule!("GK302", "env-value-not-string", Error, Safe, "all containers",
        "unquoted env value that YAML 1.1 types as a number, boolean or null",
        &[Check::Container(gk302::check)]),
    rule!("GK303", "duplicate-env", Warning, None, "all containers",
        "the same env var twice (the last wins), or disagreeing with envFrom",
        &[Check::Container(gk303::check)]),
    rule!("GK401", "missing-requests", Warning, None, "all containers",
        "no effective CPU or memory request: no scheduling guarantee",
        &[Check::Container(gk401::check)]),
    rule!("GK901", "unused-suppression", Info, Safe, "suppressions",
        "a suppression that matched no finding", &[Check::Suppressions(gk901::check)]),
    rule!("GK902", "unknown-rule-in-suppression", Warning, None, "suppressions",
        "a suppression that names no known rule", &[Check::Suppressions(gk902::check)]),
];

/// A rule by code (`GK101`, any case) or name (`memory-limit-without-gomemlimit`).
pub fn find(code_or_name: &str) -> Option<&'static Rule> {
    let s = code_or_name.trim();
    RULES
        .iter()
        .find(|r| r.code.eq_ignore_ascii_case(s) || r.name == s)
}

pub fn by_code(code: &str) -> &'static Rule {
    &RULES[index_of(code)]
}

/// Where the rule with this code stands in [`RULES`]. Every finding's output looks its rule up:
/// by the code's number, not by comparing the code with each rule's in turn.
pub fn index_of(code: &str) -> usize {
    static BY_NUMBER: std::sync::OnceLock<[u8; 1000]> = std::sync::OnceLock::new();
    let index = BY_NUMBER.get_or_init(|| {
        let mut index = [u8::MAX; 1000];
        for (i, r) in RULES.iter().enumerate() {
            let n = code_number(r.code).expect("rule codes are GK and three digits");
            index[n] = u8::try_from(i).expect("fewer than 255 rules");
        }
        index
    });
    // A number's only code is `GK` and its digits, so the slot found is this code's rule.
    code_number(code)
        .map(|n| usize::from(index[n]))
        .filter(|&i| i < RULES.len())
        .unwrap_or_else(|| panic!("rule {code} is not registered"))
}

/// 101 for `GK101`; None for anything not shaped like a rule code.
fn code_number(code: &str) -> Option<usize> {
    match code.as_bytes() {
        [b'G', b'K', d @ ..] if d.len() == 3 && d.iter().all(u8::is_ascii_digit) => {
            Some(d.iter().fold(0, |n, &b| n * 10 + usize::from(b - b'0')))
        }
        _ => None,
    }
}

/// Rules matched by a selector: a code, a name, or a code prefix such as `GK2` or `GK`.
pub fn matching(selector: &str) -> Vec<&'static Rule> {
    let s = selector.trim();
    if let Some(r) = find(s) {
        return vec![r];
    }
    let upper = s.to_ascii_uppercase();
    if upper.starts_with("GK") && upper[2..].bytes().all(|b| b.is_ascii_digit()) {
        return RULES
            .iter()
            .filter(|r| r.code.starts_with(&upper))
            .collect();
    }
    Vec::new()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_is_found_by_its_code() {
        for (i, r) in RULES.iter().enumerate() {
            assert_eq!(index_of(r.code), i);
            assert!(std::ptr::eq(by_code(r.code), r));
        }
    }

    #[test]
    fn only_rule_shaped_codes_have_numbers() {
        assert_eq!(code_number("GK000"), Some(0));
        assert_eq!(code_number("GK303"), Some(303));
        for bad in [
            "", "GK", "GK30", "GK3030", "gk303", "GX303", "GK3a3", "GK-12", "GK٣٠٣",
        ] {
            assert_eq!(code_number(bad), None, "{bad}");
        }
    }

    #[test]
    #[should_panic(expected = "rule GK999 is not registered")]
    fn an_unregistered_code_is_a_bug() {
        by_code("GK999");
    }
}
