//! The one table of rules' identities: code, name, default severity, fix kind, doc. It sits
//! with the findings, below everything that names a rule (the config, suppressions,
//! fingerprints, outputs), so none of them needs the rules themselves; the rules' checks are
//! looked up by code in `rules::checks`. A completeness test keeps the table in step
//! with `rules/*.md` and `fixtures/`.

use super::Severity;

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

pub struct Rule {
    pub code: Code,
    pub name: &'static str,
    pub severity: Severity,
    pub fix: FixKind,
    pub applies_to: &'static str,
    pub summary: &'static str,
    pub doc: &'static str,
}

/// The table: each row gives a rule's code, name, default severity, fix kind, what it applies to
/// and a one-line summary. It makes both [`Code`] and [`RULES`], so the two cannot
/// disagree; rows are in code order, so a code's discriminant is its rule's index.
macro_rules! rules {
    ($($code:ident => $name:literal, $sev:ident, $fix:ident, $applies:literal, $summary:literal;)*) => {
        /// A rule's identity. Codes written by users (config, suppressions, `--select`) are
        /// parsed into it once ([`find`], [`matching`]); rules and outputs never spell one.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Code {
            $($code,)*
        }

        impl Code {
            pub fn as_str(self) -> &'static str {
                match self {
                    $(Code::$code => stringify!($code),)*
                }
            }
        }

        pub static RULES: &[Rule] = &[
            $(Rule {
                code: Code::$code,
                name: $name,
                severity: Severity::$sev,
                fix: FixKind::$fix,
                applies_to: $applies,
                summary: $summary,
                doc: include_str!(concat!("../../rules/", stringify!($code), "-", $name, ".md")),
            },)*
        ];
    };
}

impl std::fmt::Display for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // `pad`, not `write_str`: tables align codes with a width.
        f.pad(self.as_str())
    }
}

impl serde::Serialize for Code {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

rules! {
    GK000 => "invalid-yaml", Error, None, "every document",
        "the document is not valid YAML (or not text)";
    GK001 => "duplicate-key", Error, None, "every mapping",
        "a mapping repeats a key; kubectl rejects it and other tools keep either value";
    GK101 => "memory-limit-without-gomemlimit", Warning, Safe, "Go containers",
        "memory limit without GOMEMLIMIT: the GC paces by GOGC alone and the container is OOM-killed";
    GK102 => "memory-request-not-equal-limit", Warning, Unsafe, "all containers",
        "memory request below the limit: the pod is evicted and OOM-scored by usage above the request";
    GK103 => "gomemlimit-exceeds-memory-limit", Error, Safe, "Go containers",
        "GOMEMLIMIT at or above the memory limit (no headroom), or far below it (stale)";
    GK104 => "gomemlimit-malformed", Error, Safe, "Go containers",
        "GOMEMLIMIT the Go runtime rejects: the process dies at start-up";
    GK105 => "go-env-divisor-mismatch", Error, Safe, "Go containers",
        "resourceFieldRef divisor that changes the unit Go reads (GOMEMLIMIT in MiB read as bytes)";
    GK106 => "go-env-from-unset-resource", Warning, None, "Go containers",
        "GOMEMLIMIT/GOMAXPROCS from a resource the container does not set (node allocatable or 0)";
    GK107 => "gogc-off-without-gomemlimit", Error, Safe, "Go containers",
        "GOGC=off with no GOMEMLIMIT: the heap grows until the OOM kill";
    GK108 => "godebug-madvdontneed", Warning, Safe, "Go containers",
        "GODEBUG madvdontneed: redundant (=1) or inflating RSS and misleading eviction (=0)";
    GK109 => "suspicious-memory-quantity", Warning, None, "all containers",
        "memory quantity with a milli suffix (100m = 0.1 byte) or read as octal (0100 = 64)";
    GK110 => "gomemlimit-stale-after-resize", Warning, Unsafe, "Go containers",
        "GOMEMLIMIT set at start-up, while the memory limit is resized in place (resizePolicy, VPA)";
    GK201 => "cpu-limit-without-gomaxprocs", Warning, Safe, "Go containers, Go < 1.25 or unknown",
        "CPU limit without GOMAXPROCS: Go runs a thread per node CPU and burns the CFS quota early";
    GK202 => "gomaxprocs-exceeds-cpu-limit", Warning, Safe, "Go containers",
        "GOMAXPROCS above the CPU limit: more threads than the quota can feed";
    GK203 => "cpu-limit-throttling", Warning, Unsafe, "all containers",
        "CPU limit that CFS will throttle at the parallelism the container uses";
    GK204 => "gomaxprocs-pinned-on-adaptive-go", Info, Unsafe, "Go containers, Go >= 1.25",
        "static GOMAXPROCS on Go >= 1.25 turns off the runtime's own limit tracking";
    GK205 => "gomaxprocs-invalid", Warning, None, "Go containers",
        "GOMAXPROCS the runtime ignores (0, negative, not an integer) or absurdly large";
    GK206 => "godebug-disables-container-maxprocs", Warning, Safe, "Go containers, Go >= 1.25",
        "GODEBUG containermaxprocs=0 or updatemaxprocs=0 turns off container-aware GOMAXPROCS";
    GK207 => "gomaxprocs-stale-after-resize", Warning, Unsafe, "Go containers",
        "GOMAXPROCS set at start-up, while the CPU limit is resized in place (resizePolicy, VPA)";
    GK301 => "gogc-invalid", Warning, None, "Go containers",
        "GOGC the runtime silently replaces with 100";
    GK302 => "env-value-not-string", Error, Safe, "all containers",
        "unquoted env value that YAML 1.1 types as a number, boolean or null";
    GK303 => "duplicate-env", Warning, None, "all containers",
        "the same env var twice (the last wins), or disagreeing with envFrom";
    GK401 => "missing-requests", Warning, None, "all containers",
        "no effective CPU or memory request: no scheduling guarantee";
    GK901 => "unused-suppression", Info, Safe, "suppressions",
        "a suppression that matched no finding";
    GK902 => "unknown-rule-in-suppression", Warning, None, "suppressions",
        "a suppression that names no known rule";
}

/// A rule by code (`GK101`, any case) or name (`memory-limit-without-gomemlimit`).
pub fn find(code_or_name: &str) -> Option<&'static Rule> {
    let s = code_or_name.trim();
    RULES
        .iter()
        .find(|r| r.code.as_str().eq_ignore_ascii_case(s) || r.name == s)
}

/// The rule code or name nearest to something that names none, for "did you mean".
pub fn suggest(unknown: &str) -> Option<&'static str> {
    crate::text::nearest(
        unknown,
        RULES.iter().flat_map(|r| [r.code.as_str(), r.name]),
    )
}

/// " (did you mean X?)" for a name that names no rule, when one is close; else nothing.
pub fn did_you_mean(unknown: &str) -> String {
    suggest(unknown).map_or_else(String::new, |s| format!(" (did you mean {s}?)"))
}

impl Code {
    /// The rule with this code.
    pub fn rule(self) -> &'static Rule {
        &RULES[self as usize]
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
            .filter(|r| r.code.as_str().starts_with(&upper))
            .collect();
    }
    Vec::new()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_names_its_own_rule() {
        for (i, r) in RULES.iter().enumerate() {
            assert_eq!(r.code as usize, i, "{}", r.code);
            assert!(std::ptr::eq(r.code.rule(), r));
            assert!(std::ptr::eq(find(r.code.as_str()).unwrap(), r));
            assert!(std::ptr::eq(
                find(&r.code.as_str().to_lowercase()).unwrap(),
                r
            ));
            assert!(std::ptr::eq(find(r.name).unwrap(), r));
        }
        // Codes sort as their text does: findings are ordered by code.
        assert!(RULES
            .windows(2)
            .all(|w| w[0].code.as_str() < w[1].code.as_str()));
    }

    #[test]
    fn selectors_match_codes_names_and_blocks() {
        assert_eq!(
            matching("GK2").len(),
            RULES
                .iter()
                .filter(|r| r.code.as_str().starts_with("GK2"))
                .count()
        );
        assert!(matching("GK2").len() > 3);
        assert_eq!(matching("gk101").len(), 1);
        assert!(matching("GK999").is_empty());
        assert!(matching("GX1").is_empty());
    }
}
