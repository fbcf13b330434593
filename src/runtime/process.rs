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
    let gomaxprocs = match env.gomaxprocs.map(|s| parse_gomaxprocs(s, g)) {
        Some(GoMaxProcs::Set(n)) => n,
        None | Some(GoMaxProcs::Ignored) => {
            let setting = env
                .godebug
                .and_then(|g| godebug_value(g, "containermaxprocs"));
            let online = Some(cpus.online);
            default_gomaxprocs(Some(version), setting, cpus.limit_millis, online)
                .map_or(i64::from(cpus.online), |n| n as i64)
        }
    };
    Start::Runs {
        gomaxprocs,
        gc_percent,
        memory_limit,
    }
}
