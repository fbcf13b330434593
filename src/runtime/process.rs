//! What a Go process starts with: its GOMAXPROCS, GC percent and memory limit, or the variable
//! that stops it at start-up, from its Go release, its environment and the CPUs it may use.
//!
//! This is the runtime's own reading (`schedinit`, `readGOGC`, `readGOMEMLIMIT`, Go 1.25's
//! `defaultGOMAXPROCS`) in one function, so that it can be held against real Go toolchains:
//! `tests/heavy/go_oracle.rs` builds a probe with each pinned release and compares every value of a
//! generated table with what this function says.

use super::{
    parse_gogc, parse_gomaxprocs, parse_gomemlimit, throttle, GoGc, GoMaxProcs, GoMemLimit,
    Grammar, GO_1_25,
};
use crate::config::GoVersion;
use crate::go::catalog::{EnvStops, Formula, Rounding};
use crate::go::godebug_value;

/// The variables of the process's environment that size it (unset: `None`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Env<'a> {
    pub gomaxprocs: Option<&'a str>,
    pub gogc: Option<&'a str>,
    pub gomemlimit: Option<&'a str>,
    /// GODEBUG from the environment; the build's defaults come from its go.mod `go` line, which
    /// is taken to be the release's own.
    pub godebug: Option<&'a str>,
}

/// The CPUs the process may run on, and the CFS quota over them, in thousandths of a CPU.
#[derive(Debug, Clone, Copy)]
pub struct Cpus {
    pub online: u32,
    pub limit_millis: Option<i128>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Start {
    Runs {
        gomaxprocs: i64,
        /// -1 when the collector is off.
        gc_percent: i64,
        /// `i64::MAX` when there is none.
        memory_limit: i64,
    },
    /// The runtime throws at start-up on this variable.
    Exits { variable: &'static str },
}

/// Whether the runtime sizes GOMAXPROCS from the CPU limit: Go 1.25 and later, unless the
/// GODEBUG setting `containermaxprocs` is 0.
pub fn container_aware(version: GoVersion, containermaxprocs: Option<&str>) -> bool {
    version >= GO_1_25 && containermaxprocs != Some("0")
}

/// GOMAXPROCS when the environment does not set it: one per CPU, or where the runtime is
/// [`container_aware`], `min(CPUs, max(2, ceil(limit)))` under a CPU limit. `containermaxprocs` is
/// the GODEBUG setting in force; an unknown version counts as one before 1.25. None when the CPU
/// count it needs is not known.
pub fn default_gomaxprocs(
    version: Option<GoVersion>,
    containermaxprocs: Option<&str>,
    limit_millis: Option<i128>,
    online: Option<u32>,
) -> Option<i128> {
    match limit_millis {
        Some(limit) if version.is_some_and(|v| container_aware(v, containermaxprocs)) => {
            Some(throttle::go125_gomaxprocs(limit, online))
        }
        _ => online.map(i128::from),
    }
}

/// What GOMAXPROCS follows from: the Go release, its GODEBUG settings, the GOMAXPROCS variable
/// and what the program itself does with `runtime.GOMAXPROCS`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Facts<'a> {
    /// None when not known: treated as older than 1.25.
    pub version: Option<GoVersion>,
    /// The GODEBUG settings in force (the env's, else the build's).
    pub containermaxprocs: Option<&'a str>,
    pub updatemaxprocs: Option<&'a str>,
    /// The GOMAXPROCS variable as the process gets it; None when it is not set.
    pub env: Option<&'a str>,
    /// How the program sizes GOMAXPROCS itself, if it does.
    pub program: Option<&'a Formula>,
    /// The value given to the program's GOMAXPROCS flag ([`Formula::Flag`]) in its arguments.
    pub flag: Option<&'a str>,
    /// The node's cgroups are v1. Nodes are taken to be v2 (the default of current
    /// distributions and of the kubelet), where a program that reads only v1's files finds no
    /// quota.
    pub cgroup_v1: bool,
}

/// What set GOMAXPROCS.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum By {
    /// The GOMAXPROCS variable, read by the runtime.
    Env,
    /// The program's own `runtime.GOMAXPROCS(n)`.
    Program(ProgramCall),
    /// Go 1.25's default under a CPU limit: min(CPUs, max(2, ceil(limit))).
    RuntimeLimit,
    /// The runtime's default without a limit it reads: one per CPU.
    RuntimeCpus,
}

/// How the program's call computed its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProgramCall {
    Quota(Rounding),
    NodeCpus,
    /// The flag as given in the arguments, from the variable, or its default.
    Flag {
        from: FlagFrom,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlagFrom {
    Args,
    Env,
    Default,
}

/// GOMAXPROCS at start and after the CPU limit changes while the process runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Procs {
    /// None when the CPU count it needs is not known (or the flag's value is not a number).
    pub start: Option<i128>,
    pub by: By,
    /// The runtime keeps re-reading the CPU limit (about once a second) and follows it: Go 1.25
    /// or later with its container default in force, `updatemaxprocs` not 0, and nobody having
    /// set GOMAXPROCS (the variable, or a `runtime.GOMAXPROCS(n)` call, which sets
    /// `sched.customGOMAXPROCS` for good: `runtime/debug.go`, `runtime/proc.go`
    /// sysmonUpdateGOMAXPROCS).
    pub follows: bool,
    /// After the limit changes to the `resized_to` asked for: the new default where it
    /// follows, else the start value.
    pub after_resize: Option<i128>,
}

/// GOMAXPROCS from the facts, on a node of `online` CPUs under `limit_millis`, at start and,
/// when `resized_to` is given, after the limit changes to it in place. The one reading of
/// GOMAXPROCS that the rules quote.
pub fn gomaxprocs(
    f: &Facts,
    online: Option<u32>,
    limit_millis: Option<i128>,
    resized_to: Option<Option<i128>>,
) -> Procs {
    let g = Grammar::of(f.version);
    let from_env = match f.env.map(|s| parse_gomaxprocs(s, g)) {
        Some(GoMaxProcs::Set(n)) => Some(i128::from(n)),
        _ => None,
    };
    let aware = f
        .version
        .is_some_and(|v| container_aware(v, f.containermaxprocs));
    let default = |limit| default_gomaxprocs(f.version, f.containermaxprocs, limit, online);
    // The program's own call comes after the runtime has settled on its start-up value.
    let call = f
        .program
        .and_then(|p| program_call(p, f, online, limit_millis));
    let (start, by, custom) = match (call, from_env) {
        (Some((n, how)), _) => (n, By::Program(how), true),
        (None, Some(n)) => (Some(n), By::Env, true),
        (None, None) => {
            let by = if aware && limit_millis.is_some() {
                By::RuntimeLimit
            } else {
                By::RuntimeCpus
            };
            (default(limit_millis), by, false)
        }
    };
    let follows = !custom && aware && f.updatemaxprocs != Some("0");
    let after_resize = match resized_to {
        Some(limit) if follows => default(limit),
        _ => start,
    };
    Procs {
        start,
        by,
        follows,
        after_resize,
    }
}

/// Whether the program calls `runtime.GOMAXPROCS(n)` with n > 0 at start-up under a CPU limit,
/// with the environment of `f` (its own GOMAXPROCS or flag may stop it).
pub fn program_calls(f: &Facts) -> bool {
    f.program
        .is_some_and(|p| program_call(p, f, None, Some(1000)).is_some())
}

/// The value a program's `runtime.GOMAXPROCS(n)` call sets, when it makes one with n > 0 (its
/// value None when it needs the CPU count and that is not known).
fn program_call(
    p: &Formula,
    f: &Facts,
    online: Option<u32>,
    limit_millis: Option<i128>,
) -> Option<(Option<i128>, ProgramCall)> {
    let stopped = |stops: &EnvStops| match stops {
        EnvStops::Set => f.env.is_some(),
        EnvStops::NotEmpty => f.env.is_some_and(|v| !v.is_empty()),
    };
    match p {
        Formula::GoRuntime => None,
        Formula::Quota {
            round,
            min,
            at_most_cpus,
            cgroup_v1_only,
            env,
        } => {
            if stopped(env) || (*cgroup_v1_only && !f.cgroup_v1) {
                return None;
            }
            // No quota, no call.
            let l = limit_millis?;
            let n = match round {
                Rounding::Floor => l / 1000,
                Rounding::Nearest => (l + 500) / 1000,
            };
            let mut n = n.max(i128::from(*min));
            if *at_most_cpus {
                if let Some(c) = online {
                    n = n.min(i128::from(c));
                }
            }
            Some((Some(n), ProgramCall::Quota(*round)))
        }
        Formula::NodeCpus { env } => {
            if stopped(env) {
                return None;
            }
            Some((online.map(i128::from), ProgramCall::NodeCpus))
        }
        Formula::Flag { default, env, .. } => {
            let from_env = env
                .as_ref()
                .and(f.env)
                .filter(|v| !v.is_empty())
                .map(|v| (v, FlagFrom::Env));
            let (value, from) = match f.flag.map(|v| (v, FlagFrom::Args)).or(from_env) {
                Some((text, from)) => (flag_int(text), from),
                None => (Some(i128::from(*default)), FlagFrom::Default),
            };
            // runtime.GOMAXPROCS(n) with n < 1 only reads the value.
            match value {
                Some(n) if n < 1 => None,
                _ => Some((value, ProgramCall::Flag { from })),
            }
        }
    }
}

/// An integer flag's value: decimal with an optional sign (the flag parsers also take `0x`
/// and `0` prefixes, which manifests hardly use; those count as not known).
fn flag_int(text: &str) -> Option<i128> {
    let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if digits.len() > 1 && digits.starts_with('0') {
        return None;
    }
    text.parse().ok()
}

pub fn start(version: GoVersion, env: &Env, cpus: Cpus) -> Start {
    let g = Grammar::of(Some(version));
    let memory_limit = match env.gomemlimit.map(|s| parse_gomemlimit(s, g)) {
        None | Some(GoMemLimit::Off) => i64::MAX,
        Some(GoMemLimit::Bytes(b)) => b,
        Some(GoMemLimit::Malformed) => {
            return Start::Exits {
                variable: "GOMEMLIMIT",
            }
        }
    };
    let gc_percent = match env.gogc.map(|s| parse_gogc(s, g)) {
        Some(GoGc::Off) => -1,
        Some(GoGc::Percent(p)) => p,
        None | Some(GoGc::Invalid) => 100,
    };
    let facts = Facts {
        version: Some(version),
        containermaxprocs: env
            .godebug
            .and_then(|g| godebug_value(g, "containermaxprocs")),
        updatemaxprocs: env.godebug.and_then(|g| godebug_value(g, "updatemaxprocs")),
        env: env.gomaxprocs,
        ..Facts::default()
    };
    let gomaxprocs = gomaxprocs(&facts, Some(cpus.online), cpus.limit_millis, None)
        .start
        .map_or(i64::from(cpus.online), |n| n as i64);
    Start::Runs {
        gomaxprocs,
        gc_percent,
        memory_limit,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::go::catalog::CATALOG;

    fn formula(name: &str) -> &'static Formula {
        &CATALOG.formulas[name].last().unwrap().does
    }

    fn go(minor: u32) -> Option<GoVersion> {
        Some(GoVersion::new(1, minor))
    }

    /// (start, by, follows, after a resize to 4 CPUs) on a node of 8 CPUs under 1.5 CPUs.
    fn at(f: Facts) -> (Option<i128>, By, bool, Option<i128>) {
        let p = gomaxprocs(&f, Some(8), Some(1500), Some(Some(4000)));
        (p.start, p.by, p.follows, p.after_resize)
    }

    #[test]
    fn a_program_that_sets_gomaxprocs_turns_the_go_1_25_default_off() {
        let amp = formula("automaxprocs");
        let floor = By::Program(ProgramCall::Quota(Rounding::Floor));
        let with = |version, env| Facts {
            version,
            env,
            program: Some(amp),
            ..Facts::default()
        };
        assert_eq!(at(with(go(25), None)), (Some(1), floor, false, Some(1)));
        assert_eq!(at(with(go(24), None)), (Some(1), floor, false, Some(1)));
        assert_eq!(at(with(None, None)), (Some(1), floor, false, Some(1)));
        // automaxprocs leaves a GOMAXPROCS that is set, even empty, to the runtime.
        assert_eq!(
            at(with(go(25), Some("3"))),
            (Some(3), By::Env, false, Some(3))
        );
        assert_eq!(
            at(with(go(25), Some(""))),
            (Some(2), By::RuntimeLimit, true, Some(4))
        );
        assert_eq!(
            at(with(go(24), Some(""))),
            (Some(8), By::RuntimeCpus, false, Some(8))
        );
        // No quota, no call.
        let p = gomaxprocs(&with(go(25), None), Some(8), None, None);
        assert_eq!((p.start, p.by, p.follows), (Some(8), By::RuntimeCpus, true));
        // Below one CPU: at least 1.
        let p = gomaxprocs(&with(go(25), None), Some(8), Some(300), None);
        assert_eq!(p.start, Some(1));
    }

    #[test]
    fn the_runtime_alone_follows_the_limit_from_go_1_25() {
        let alone = |version, godebug: Option<&'static str>| Facts {
            version,
            containermaxprocs: godebug.and_then(|g| godebug_value(g, "containermaxprocs")),
            updatemaxprocs: godebug.and_then(|g| godebug_value(g, "updatemaxprocs")),
            ..Facts::default()
        };
        assert_eq!(
            at(alone(go(25), None)),
            (Some(2), By::RuntimeLimit, true, Some(4))
        );
        assert_eq!(
            at(alone(go(25), Some("updatemaxprocs=0"))),
            (Some(2), By::RuntimeLimit, false, Some(2))
        );
        assert_eq!(
            at(alone(go(25), Some("containermaxprocs=0"))),
            (Some(8), By::RuntimeCpus, false, Some(8))
        );
        assert_eq!(
            at(alone(go(24), None)),
            (Some(8), By::RuntimeCpus, false, Some(8))
        );
        let p = gomaxprocs(&alone(go(24), None), None, Some(1500), None);
        assert_eq!(p.start, None);
    }

    #[test]
    fn each_program_by_its_own_formula() {
        let vm = &CATALOG.formulas["victoriametrics"];
        let nearest = vm
            .iter()
            .find(|r| r.from.as_deref() == Some("1.103.0"))
            .unwrap();
        let program = |p, env, flag| Facts {
            version: go(25),
            env,
            flag,
            program: Some(p),
            ..Facts::default()
        };
        let round = By::Program(ProgramCall::Quota(Rounding::Nearest));
        assert_eq!(
            at(program(&nearest.does, None, None)),
            (Some(2), round, false, Some(2))
        );
        // VictoriaMetrics reads an empty GOMAXPROCS as unset.
        assert_eq!(
            at(program(&nearest.does, Some(""), None)),
            (Some(2), round, false, Some(2))
        );
        // ... and never sets more than the node's CPUs; automaxprocs does.
        let p = gomaxprocs(
            &program(&nearest.does, None, None),
            Some(8),
            Some(16000),
            None,
        );
        assert_eq!(p.start, Some(8));
        let amp = program(formula("automaxprocs"), None, None);
        assert_eq!(gomaxprocs(&amp, Some(8), Some(16000), None).start, Some(16));
        // Before 1.60 it reads cgroup v1 only: on a v2 node it makes no call.
        let v1 = &vm[1].does;
        assert_eq!(at(program(v1, None, None)).1, By::RuntimeLimit);
        let on_v1 = Facts {
            cgroup_v1: true,
            ..program(v1, None, None)
        };
        assert_eq!(at(on_v1).0, Some(2));

        let ne = formula("node-exporter");
        let flag = |from| By::Program(ProgramCall::Flag { from });
        assert_eq!(
            at(program(ne, None, None)),
            (Some(1), flag(FlagFrom::Default), false, Some(1))
        );
        assert_eq!(
            at(program(ne, Some("4"), None)),
            (Some(4), flag(FlagFrom::Env), false, Some(4))
        );
        assert_eq!(
            at(program(ne, Some("4"), Some("6"))),
            (Some(6), flag(FlagFrom::Args), false, Some(6))
        );
        // A flag of 0 reads GOMAXPROCS without setting it.
        assert_eq!(at(program(ne, None, Some("0"))).1, By::RuntimeLimit);
        assert_eq!(at(program(ne, None, Some("abc"))).0, None);

        let calico = formula("calico-apiserver");
        assert_eq!(
            at(program(calico, None, None)),
            (Some(8), By::Program(ProgramCall::NodeCpus), false, Some(8))
        );
        assert_eq!(at(program(calico, Some("2"), None)).1, By::Env);
        assert!(program_calls(&program(calico, None, None)));
        assert!(!program_calls(&program(calico, Some("2"), None)));
        assert!(program_calls(&program(ne, None, None)));
        assert!(!program_calls(&program(v1, None, None)));
        assert!(!program_calls(&program(formula("go-runtime"), None, None)));
        assert_eq!(
            at(program(formula("go-runtime"), None, None)).1,
            By::RuntimeLimit
        );
    }
}
