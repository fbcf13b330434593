//! The Go runtime is the oracle: a probe built with each pinned Go release is run over a
//! generated table of GOMEMLIMIT, GOGC, GOMAXPROCS and GODEBUG values (signs, spaces, units,
//! overflow, empty, off/OFF, repeated GODEBUG keys), and under real CFS quotas where the machine
//! lets a process create a cgroup; every outcome (values, or the exit status and the variable
//! named in the fatal error) is compared with `golint_k8s::runtime::process::start` for that
//! release.
//!
//! Toolchains come through the Go module proxy (`GOTOOLCHAIN=go1.N.M`) and are cached with the
//! probes under the user cache directory (`golint-k8s/go-oracle`). Without a `go` command the
//! test prints one line saying it did not run.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use golint_k8s::config::GoVersion;
use golint_k8s::runtime::process::{self, Cpus, Env, Start};

/// The releases compared: the oldest with `debug.SetMemoryLimit`, the first that switches
/// toolchains, the last before container-aware GOMAXPROCS, the first with it, and the newest.
const RELEASES: &[&str] = &["1.19.13", "1.21.13", "1.24.9", "1.25.0", "1.26.8"];

const PROBE: &str = include_str!("go-probe/main.go");

/// The probe built with `release`, and whether it had to be built now.
fn probe(cache: &Path, release: &str) -> (PathBuf, bool) {
    let tag: u64 = PROBE.bytes().fold(0xcbf29ce484222325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100000001b3)
    });
    let bin = cache.join(format!("probe-{release}-{tag:016x}"));
    if bin.is_file() {
        return (bin, false);
    }
    let modcache = cache.join("mod");
    // The `go` command on PATH fetches the release; its own `go` then builds, so that releases
    // older than toolchain switching build as they always did.
    let goroot = Command::new("go")
        .args(["env", "GOROOT"])
        .env("GOTOOLCHAIN", format!("go{release}"))
        .env("GOMODCACHE", &modcache)
        .env("GOFLAGS", "-modcacherw")
        .output()
        .expect("go env GOROOT");
    assert!(
        goroot.status.success(),
        "fetching Go {release} through the module proxy failed: {}",
        String::from_utf8_lossy(&goroot.stderr)
    );
    let goroot = PathBuf::from(String::from_utf8_lossy(&goroot.stdout).trim());
    let src = cache.join(format!("src-{release}"));
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(src.join("main.go"), PROBE).unwrap();
    // The go line is the release's own: it sets the build's default GODEBUG as a program
    // written for that release would have it.
    let minor: Vec<&str> = release.split('.').take(2).collect();
    std::fs::write(
        src.join("go.mod"),
        format!("module probe\n\ngo {}\n", minor.join(".")),
    )
    .unwrap();
    let out = Command::new(goroot.join("bin").join("go"))
        .args(["build", "-o"])
        .arg(&bin)
        .arg(".")
        .current_dir(&src)
        .env("GOROOT", &goroot)
        .env("GOTOOLCHAIN", "local")
        .env("GOWORK", "off")
        .env("GOFLAGS", "")
        // Go 1.19 cannot build from a GOROOT inside its GOMODCACHE; the probe needs no modules.
        .env_remove("GOMODCACHE")
        .output()
        .expect("go build");
    assert!(
        out.status.success(),
        "building the probe with Go {release} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (bin, true)
}

/// What the probe did: the values it printed, or the variable its fatal error names.
fn run(bin: &Path, env: &[(&str, &str)], cgroup: Option<&Path>) -> Start {
    let mut cmd = match cgroup {
        // The shell joins the cgroup, then becomes the probe: the runtime reads the quota of
        // the cgroup it starts in.
        Some(g) => {
            let mut c = Command::new("sh");
            c.arg("-c")
                .arg("echo $$ > \"$1/cgroup.procs\" && exec \"$2\"")
                .arg("sh")
                .arg(g)
                .arg(bin);
            c
        }
        None => Command::new(bin),
    };
    cmd.env_clear();
    if cgroup.is_some() {
        cmd.env("PATH", "/usr/bin:/bin");
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("run the probe");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if out.status.success() {
        let v: Vec<i64> = stdout
            .split_whitespace()
            .map(|w| w.parse().expect("a number"))
            .collect();
        return Start::Runs {
            gomaxprocs: v[0],
            gc_percent: v[1],
            memory_limit: v[2],
        };
    }
    assert_eq!(out.status.code(), Some(2), "{env:?}: {stderr}");
    let variable = ["GOMEMLIMIT", "GOGC", "GOMAXPROCS", "GODEBUG"]
        .into_iter()
        .find(|v| stderr.contains(v))
        .unwrap_or_else(|| panic!("{env:?}: an unexplained failure: {stderr}"));
    Start::Exits { variable }
}

/// The generated inputs: one variable each, or GODEBUG.
fn table() -> Vec<(&'static str, String)> {
    let mut rows = Vec::new();
    let numbers = [
        "0",
        "1",
        "512",
        "050",
        "8388607",
        "8388608",
        "2147483647",
        "2147483648",
        "9223372036854775807",
        "9223372036854775808",
    ];
    for n in numbers {
        for sign in ["", "+", "-", "+-"] {
            for unit in [
                "", "B", "KiB", "MiB", "GiB", "TiB", "Mi", "M", "kib", "mib", " MiB",
            ] {
                rows.push(("GOMEMLIMIT", format!("{sign}{n}{unit}")));
            }
        }
    }
    for v in [
        "", "off", "OFF", "Off", " 512MiB", "512MiB ", "1_000", "0x10", "1.5GiB", "1e9", "B",
        "MiB", "max",
    ] {
        rows.push(("GOMEMLIMIT", v.to_string()));
    }
    for n in ["0", "50", "100", "050", "2147483647", "2147483648"] {
        for sign in ["", "+", "-"] {
            rows.push(("GOGC", format!("{sign}{n}")));
        }
    }
    for v in [
        "", "off", "OFF", "Off", " 50", "50 ", "1_0", "abc", "0x10", "50%", "false",
    ] {
        rows.push(("GOGC", v.to_string()));
    }
    // Values beyond a few thousand make the runtime allocate that many Ps, or crash: GK205
    // reports those; they are not run here.
    for n in ["0", "1", "3", "04", "1024", "2147483648"] {
        for sign in ["", "+", "-"] {
            rows.push(("GOMAXPROCS", format!("{sign}{n}")));
        }
    }
    for v in ["", " 4", "4 ", "abc", "1.5", "0x4"] {
        rows.push(("GOMAXPROCS", v.to_string()));
    }
    for v in [
        "containermaxprocs=0",
        "containermaxprocs=1",
        "updatemaxprocs=0",
        "containermaxprocs=1,containermaxprocs=0",
        "containermaxprocs=0,containermaxprocs=1",
    ] {
        rows.push(("GODEBUG", v.to_string()));
    }
    rows
}

fn model(version: GoVersion, var: &str, value: &str, cpus: Cpus) -> Start {
    let mut env = Env::default();
    match var {
        "GOMEMLIMIT" => env.gomemlimit = Some(value),
        "GOGC" => env.gogc = Some(value),
        "GOMAXPROCS" => env.gomaxprocs = Some(value),
        _ => env.godebug = Some(value),
    }
    process::start(version, &env, cpus)
}

/// A cgroup of the v1 `cpu` controller (or v2 with `cpu` enabled) this process may create.
struct Quota {
    dir: PathBuf,
    v2: bool,
}

impl Quota {
    fn create() -> Option<Quota> {
        let name = format!("golint-k8s-oracle-{}", std::process::id());
        let v1 = Path::new("/sys/fs/cgroup/cpu");
        if v1.join("cpu.cfs_quota_us").is_file() {
            let dir = v1.join(&name);
            if std::fs::create_dir(&dir).is_ok() {
                return Some(Quota { dir, v2: false });
            }
        }
        let v2 = Path::new("/sys/fs/cgroup");
        let enabled = std::fs::read_to_string(v2.join("cgroup.subtree_control")).ok()?;
        if !enabled.split_whitespace().any(|c| c == "cpu") {
            return None;
        }
        let dir = v2.join(&name);
        std::fs::create_dir(&dir).ok()?;
        Some(Quota { dir, v2: true })
    }

    /// Sets the limit (thousandths of a CPU over a 100 ms period), or none.
    fn set(&self, millis: Option<i128>) -> bool {
        let quota = millis.map(|m| (m * 100).to_string());
        if self.v2 {
            let v = format!("{} 100000", quota.as_deref().unwrap_or("max"));
            std::fs::write(self.dir.join("cpu.max"), v).is_ok()
        } else {
            std::fs::write(self.dir.join("cpu.cfs_period_us"), "100000").is_ok()
                && std::fs::write(
                    self.dir.join("cpu.cfs_quota_us"),
                    quota.as_deref().unwrap_or("-1"),
                )
                .is_ok()
        }
    }
}

impl Drop for Quota {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.dir);
    }
}

#[test]
fn the_model_matches_real_go_runtimes() {
    if !common::go_available() {
        println!("go_oracle: did not run: no go command on PATH to fetch Go toolchains with");
        return;
    }
    let started = Instant::now();
    let cache = common::user_cache("go-oracle");
    std::fs::create_dir_all(&cache).unwrap();
    let online = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
    let unlimited = Cpus {
        online,
        limit_millis: None,
    };
    let rows = table();
    let mut built = 0;
    let mut runs = 0;
    let mut mismatches = Vec::new();
    let quota = Quota::create();
    for release in RELEASES {
        let (bin, fresh) = probe(&cache, release);
        built += usize::from(fresh);
        let version = GoVersion::parse(release).unwrap();
        for (var, value) in &rows {
            let got = run(&bin, &[(var, value)], None);
            let want = model(version, var, value, unlimited);
            runs += 1;
            if got != want {
                mismatches.push(format!(
                    "Go {release} {var}={value:?}: the runtime {got:?}, the model {want:?}"
                ));
            }
        }
        if let Some(q) = &quota {
            for limit in [
                Some(500),
                Some(1000),
                Some(1500),
                Some(2500),
                Some(7000),
                None,
            ] {
                assert!(q.set(limit), "setting the CPU quota");
                for godebug in ["", "containermaxprocs=0"] {
                    let env = [("GODEBUG", godebug)];
                    let got = run(&bin, &env, Some(&q.dir));
                    let cpus = Cpus {
                        online,
                        limit_millis: limit,
                    };
                    let want = model(version, "GODEBUG", godebug, cpus);
                    runs += 1;
                    if got != want {
                        mismatches.push(format!(
                            "Go {release} under a quota of {limit:?} millicores on {online} CPUs, GODEBUG={godebug:?}: the runtime {got:?}, the model {want:?}"
                        ));
                    }
                }
            }
        }
    }
    if quota.is_none() {
        println!(
            "go_oracle: the CPU-quota runs were skipped: no cgroup with a writable cpu controller"
        );
    }
    println!(
        "go_oracle: {runs} runs of {} Go releases, {} probes built now ({}), {:.1} s",
        RELEASES.len(),
        built,
        if built == 0 { "cached" } else { "cold" },
        started.elapsed().as_secs_f64()
    );
    assert!(
        mismatches.is_empty(),
        "{} mismatches:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
}
