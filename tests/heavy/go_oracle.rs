//! The Go runtime is the oracle: a probe built with each pinned Go release is run over a
//! generated table of GOMEMLIMIT, GOGC, GOMAXPROCS and GODEBUG values (signs, spaces, units,
//! overflow, empty, off/OFF, repeated GODEBUG keys), and under real CFS quotas where the machine
//! lets a process create a cgroup; every outcome (values, or the exit status and the variable
//! named in the fatal error) is compared with `golint_k8s::runtime::process::start` for that
//! release.
//!
//! A second test changes the CPU quota of a running probe, as an in-place pod resize does, and
//! watches GOMAXPROCS follow it or not (GK207).
//!
//! Toolchains come through the Go module proxy (`GOTOOLCHAIN=go1.N.M`) and are cached with the
//! probes under the user cache directory (`golint-k8s/go-oracle`). Without a `go` command (or,
//! for the resize test, a writable cgroup or ptrace) a test prints one line saying it did not
//! run; in CI that fails it.

use crate::common;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::Ordering;
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use golint_k8s::config::GoVersion;
use golint_k8s::runtime::process::{self, Cpus, Env, Start};

/// The releases compared: the oldest with `debug.SetMemoryLimit`, the first that switches
/// toolchains, the last before container-aware GOMAXPROCS, the first with it, and the newest.
const RELEASES: &[&str] = &["1.19.13", "1.21.13", "1.24.9", "1.25.0", "1.26.8"];

const PROBE: &str = include_str!("../go-probe/main.go");

/// The probe built with `release`, and whether it had to be built now.
fn probe(cache: &Path, release: &str) -> (PathBuf, bool) {
    build(cache, release, "probe", PROBE, &go_line(release))
}

/// The go line of a program written for `release`: `1.25` for 1.25.0. It sets the build's
/// default GODEBUG as such a program would have it.
fn go_line(release: &str) -> String {
    let minor: Vec<&str> = release.split('.').take(2).collect();
    minor.join(".")
}

/// `source`, a main package with `go {line}` in its go.mod, built with `release` and cached as
/// `{name}-{release}-…`; and whether it had to be built now.
fn build(cache: &Path, release: &str, name: &str, source: &str, line: &str) -> (PathBuf, bool) {
    build_with(cache, release, name, source, line, None)
}

/// A module a probe requires: a file of the main package that imports it, and the go.mod
/// `require` and go.sum lines that pin it. The `go` command fetches it through the module
/// proxy, checked against those sums.
struct Requires {
    file: &'static str,
    require: &'static str,
    sum: &'static str,
}

/// [`build`], with a module required.
fn build_with(
    cache: &Path,
    release: &str,
    name: &str,
    source: &str,
    line: &str,
    requires: Option<&Requires>,
) -> (PathBuf, bool) {
    let pinned = requires.map_or(String::new(), |r| [r.file, r.require, r.sum].concat());
    let tag: u64 = [source, &pinned]
        .concat()
        .bytes()
        .fold(0xcbf29ce484222325, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x100000001b3)
        });
    let bin = cache.join(format!("{name}-{release}-{tag:016x}"));
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
    let src = cache.join(format!("src-{name}-{release}"));
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(src.join("main.go"), source).unwrap();
    let mut gomod = format!("module probe\n\ngo {line}\n");
    for stale in ["requires.go", "go.sum"] {
        let _ = std::fs::remove_file(src.join(stale));
    }
    if let Some(r) = requires {
        std::fs::write(src.join("requires.go"), r.file).unwrap();
        std::fs::write(src.join("go.sum"), r.sum).unwrap();
        gomod.push('\n');
        gomod.push_str(r.require);
    }
    std::fs::write(src.join("go.mod"), gomod).unwrap();
    let mut go = Command::new(goroot.join("bin").join("go"));
    go.args(["build", "-o"])
        .arg(&bin)
        .arg(".")
        .current_dir(&src)
        .env("GOROOT", &goroot)
        .env("GOTOOLCHAIN", "local")
        .env("GOWORK", "off")
        .env("GOFLAGS", "");
    match requires {
        // A module cache of their own, outside the toolchains' (where Go 1.19 cannot build).
        Some(_) => go
            .env("GOMODCACHE", cache.join("probe-mod"))
            .env("GOFLAGS", "-modcacherw"),
        // Go 1.19 cannot build from a GOROOT inside its GOMODCACHE; the probe needs no modules.
        None => go.env_remove("GOMODCACHE"),
    };
    let out = go.output().expect("go build");
    assert!(
        out.status.success(),
        "building {name} with Go {release} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (bin, true)
}

/// The probe with `args`, and only `env` in its environment, started inside `cgroup` if given.
fn command(bin: &Path, args: &[&str], env: &[(&str, &str)], cgroup: Option<&Path>) -> Command {
    let mut cmd = match cgroup {
        // The shell joins the cgroup, then becomes the probe: the runtime reads the quota of
        // the cgroup it starts in.
        Some(g) => {
            let mut c = Command::new("sh");
            c.arg("-c")
                .arg("echo $$ > \"$1/cgroup.procs\" && shift && exec \"$@\"")
                .arg("sh")
                .arg(g)
                .arg(bin)
                .args(args);
            c
        }
        None => {
            let mut c = Command::new(bin);
            c.args(args);
            c
        }
    };
    cmd.env_clear();
    if cgroup.is_some() {
        cmd.env("PATH", "/usr/bin:/bin");
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}

/// What the probe did: the values it printed, or the variable its fatal error names.
fn run(bin: &Path, env: &[(&str, &str)], cgroup: Option<&Path>) -> Start {
    let mut cmd = command(bin, &[], env, cgroup);
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
        Quota::create_as("")
    }

    /// A cgroup of its own for each `tag`.
    fn create_as(tag: &str) -> Option<Quota> {
        let name = format!("golint-k8s-oracle-{}{tag}", std::process::id());
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
        common::did_not_run(
            "go_oracle: did not run: no go command on PATH to fetch Go toolchains with",
        );
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

/// What `GOMAXPROCS=2147483647` does to a release at start-up (GK205's doc states this table).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum HugeProcs {
    /// `fatal error: slice bounds out of range`: `procresize`'s mask length (n + 31) / 32
    /// overflows int32.
    Crashes,
    /// No crash: it goes on allocating, past [`HUGE_RSS_KIB`] of resident memory.
    Grows,
}

/// The releases checked, with what each does: both ends of every pattern seen over
/// 1.19–1.26 (1.24.0 to 1.24.5 do not crash, 1.24.6 does again).
const HUGE_GOMAXPROCS: &[(&str, HugeProcs)] = &[
    ("1.19.13", HugeProcs::Crashes),
    ("1.21.13", HugeProcs::Crashes),
    ("1.24.0", HugeProcs::Grows),
    ("1.24.5", HugeProcs::Grows),
    ("1.24.6", HugeProcs::Crashes),
    ("1.24.9", HugeProcs::Crashes),
    ("1.25.0", HugeProcs::Crashes),
    ("1.26.8", HugeProcs::Crashes),
];

/// Resident memory past which a probe counts as growing without bound and is killed. Go 1.19
/// reaches about 1 GiB before it crashes.
const HUGE_RSS_KIB: u64 = 2 << 20;

fn resident_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.split_whitespace().next()?.parse().ok())
        })
        .unwrap_or(0)
}

/// Starts `bin` with `GOMAXPROCS=2147483647` and watches it: its crash, or its resident memory
/// passing [`HUGE_RSS_KIB`]. An error says what else it did.
fn huge_gomaxprocs(bin: &Path, log: &Path) -> Result<HugeProcs, String> {
    let err = std::fs::File::create(log).unwrap();
    // The runtime maps a 16 GiB array of Ps before either outcome; the address-space cap leaves a
    // little more than that, so the machine's memory is never what ends the run.
    let mut child = Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 18500000 && exec \"$0\"")
        .arg(bin)
        .env_clear()
        .env("GOMAXPROCS", "2147483647")
        .stdout(Stdio::null())
        .stderr(err)
        .spawn()
        .expect("start the probe");
    let started = Instant::now();
    let outcome = loop {
        if let Some(status) = child.try_wait().unwrap() {
            let text = std::fs::read_to_string(log).unwrap_or_default();
            if text.contains("fatal error: slice bounds out of range") {
                break Ok(HugeProcs::Crashes);
            }
            let first = text.lines().find(|l| l.contains("error")).unwrap_or("");
            break Err(format!("exited ({status}): {first}"));
        }
        if resident_kib(child.id()) > HUGE_RSS_KIB {
            break Ok(HugeProcs::Grows);
        }
        if started.elapsed() > Duration::from_secs(90) {
            break Err("neither crashed nor grew past 2 GiB within 90 s".into());
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let _ = child.kill();
    let _ = child.wait();
    outcome
}

#[test]
fn huge_gomaxprocs_crashes_every_release_but_go_1_24_0_to_1_24_5() {
    if !common::go_available() {
        common::did_not_run(
            "go_oracle: did not run: no go command on PATH to fetch Go toolchains with",
        );
        return;
    }
    let cache = common::user_cache("go-oracle");
    std::fs::create_dir_all(&cache).unwrap();
    let mut wrong = Vec::new();
    for &(release, want) in HUGE_GOMAXPROCS {
        let (bin, _) = probe(&cache, release);
        let log = cache.join(format!("huge-gomaxprocs-{release}.log"));
        let started = Instant::now();
        match huge_gomaxprocs(&bin, &log) {
            Ok(got) => {
                println!(
                    "go_oracle: Go {release} GOMAXPROCS=2147483647: {got:?} after {:.1} s",
                    started.elapsed().as_secs_f64()
                );
                if got != want {
                    wrong.push(format!("Go {release}: {got:?}, GK205's doc says {want:?}"));
                }
            }
            // The 16 GiB array does not fit this machine's memory: nothing to learn here.
            Err(e) if e.contains("out of memory") => {
                common::did_not_run(&format!(
                    "go_oracle: GOMAXPROCS=2147483647 did not run: Go {release} {e}"
                ));
                return;
            }
            Err(e) => wrong.push(format!("Go {release}: {e}")),
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    // The doc states the same table.
    let doc = std::fs::read_to_string(common::root().join("rules/GK205-gomaxprocs-invalid.md"))
        .unwrap()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    for claim in [
        "from Go 1.19 to 1.23.12 and from 1.24.6 to 1.26.8",
        "Go 1.24.0 to 1.24.5 do not crash",
    ] {
        assert!(doc.contains(claim), "GK205's doc no longer says {claim:?}");
    }
}

const RESIZE_PROBE: &str = include_str!("../go-probe-resize/main.go");

/// A CPU limit in thousandths of a CPU, or none.
type Limit = Option<i128>;

/// One program whose CPU limit is changed while it runs, as an in-place pod resize does.
struct Resize {
    release: &'static str,
    /// The go line of its go.mod.
    line: &'static str,
    env: &'static [(&'static str, &'static str)],
    /// The CPU count its `sched_getaffinity` calls are answered with (the test traces it), or
    /// none for the machine's own.
    cpus: Option<u32>,
    /// Blocks on stdin with no timer pending, instead of printing every 20 ms.
    idle: bool,
    /// The limit it starts under and GOMAXPROCS then, followed by each new limit and the value
    /// GOMAXPROCS has after it.
    steps: Vec<(Limit, i64)>,
}

impl Resize {
    fn label(&self) -> String {
        let mut s = format!("Go {} (go {})", self.release, self.line);
        for (k, v) in self.env {
            s.push_str(&format!(" {k}={v:?}"));
        }
        match self.cpus {
            Some(n) => s.push_str(&format!(", {n} CPUs answered")),
            None => {
                let n = std::thread::available_parallelism().map_or(1, |n| n.get());
                s.push_str(&format!(", the machine's {n} CPUs"));
            }
        }
        if self.idle {
            s.push_str(", idle");
        }
        s
    }
}

fn show(limit: Limit) -> String {
    limit.map_or("no limit".to_string(), |m| format!("{m}m"))
}

/// How long a program that does not follow the limit is watched after a change, and how long
/// one that does is waited for: the runtime looks at most once a second.
const UNCHANGED_FOR: Duration = Duration::from_millis(2500);
const CHANGES_WITHIN: Duration = Duration::from_secs(5);
/// How long a probe must not have read its cpu files before its limit is first changed.
const SETTLE: Duration = Duration::from_millis(300);

fn unix_nanos() -> i128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos() as i128
}

/// The probe's lines, "<unix-nanoseconds> <GOMAXPROCS>", as they come.
fn lines(stdout: ChildStdout) -> mpsc::Receiver<(i128, i64)> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { return };
            let mut w = line.split_whitespace().map(|w| w.parse::<i128>().unwrap());
            let (Some(at), Some(procs)) = (w.next(), w.next()) else {
                panic!("a probe line: {line:?}")
            };
            if tx.send((at, procs as i64)).is_err() {
                return;
            }
        }
    });
    rx
}

/// What a resize case saw: a sentence per step, and the steps that went otherwise than it
/// said.
struct Seen {
    summary: String,
    wrong: Vec<String>,
}

/// Runs `case` under the cgroup of `quota`: GOMAXPROCS at start, then after each change of
/// the limit, with how long after the change the new value showed. An error says why the case
/// cannot run here (the probe cannot be traced).
fn resize(case: &Resize, bin: &Path, quota: &Quota) -> Result<Seen, String> {
    let (start, _) = case.steps[0];
    assert!(quota.set(start), "setting the CPU quota");
    let args: &[&str] = if case.idle { &["idle"] } else { &[] };
    let mut cmd = command(bin, args, case.env, Some(&quota.dir));
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    let (mut stdin, stdout, done, reads) = match case.cpus {
        Some(n) => {
            let t = fake_cpus::spawn(cmd, n)?;
            (t.stdin, t.stdout, t.done, Some(t.reads))
        }
        None => {
            let mut child = cmd.spawn().expect("start the resize probe");
            let stdin = child.stdin.take().unwrap();
            let stdout = child.stdout.take().unwrap();
            let done = std::thread::spawn(move || {
                child.wait().expect("wait for the resize probe");
                Ok(0)
            });
            (stdin, stdout, done, None)
        }
    };
    // How often the runtime has read the cgroup's cpu files, when the probe is traced: its only
    // pread64 calls are those (two a look under cgroup v1, quota and period; one under v2).
    let read_so_far = || reads.as_ref().map(|r| r.load(Ordering::SeqCst));
    let rx = lines(stdout);
    let mut wrong = Vec::new();
    let mut summary = Vec::new();
    // The ticking probe prints by itself; the idle one answers each line it reads.
    let next = |stdin: &mut ChildStdin| {
        if case.idle {
            let _ = stdin.write_all(b"?\n");
        }
        rx.recv_timeout(CHANGES_WITHIN).ok()
    };
    let Some((_, mut procs)) = next(&mut stdin) else {
        // A tracer that cannot read the probe's system calls stops it at once.
        drop(stdin);
        done.join().expect("the probe's tracer")?;
        panic!("{}: the probe printed nothing", case.label());
    };
    let reads_at_start = read_so_far();
    if procs != case.steps[0].1 {
        wrong.push(format!(
            "at start: GOMAXPROCS {procs}, not {}",
            case.steps[0].1
        ));
    }
    summary.push(format!("{}: {procs}", show(start)));
    // Traced, the runtime's monitor thread may take its first look at the limit only after the
    // first line: the first change comes once the probe has not read the cpu files for a while.
    let mut settled = read_so_far();
    loop {
        std::thread::sleep(SETTLE);
        let now = read_so_far();
        if now == settled {
            break;
        }
        settled = now;
    }
    for &(limit, want) in &case.steps[1..] {
        let before = procs;
        let changed_at = unix_nanos();
        assert!(quota.set(limit), "setting the CPU quota");
        let mut step = format!("{}: ", show(limit));
        if case.idle {
            // Nothing runs for a while; then each query wakes the program up.
            let reads_before = read_so_far();
            std::thread::sleep(UNCHANGED_FOR);
            let idle_reads = read_so_far().zip(reads_before).map(|(a, b)| a - b);
            let (woke, first) = next(&mut stdin).expect("the probe stopped");
            step.push_str(&format!(
                "{} reads of the cpu files in {} ms idle; woken, {first}",
                idle_reads.map_or("?".into(), |n| n.to_string()),
                UNCHANGED_FOR.as_millis()
            ));
            if idle_reads.is_some_and(|n| n > 0) {
                wrong.push(format!(
                    "to {}: an idle program read the limit before it woke",
                    show(limit)
                ));
            }
            // The first answer races with the look the runtime takes as it wakes.
            procs = first;
            let deadline = Instant::now() + CHANGES_WITHIN;
            while procs == before && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(5));
                let (at, p) = next(&mut stdin).expect("the probe stopped");
                if p != before {
                    step.push_str(&format!(
                        ", then {p} {} ms after waking",
                        (at - woke) / 1_000_000
                    ));
                    procs = p;
                }
            }
        } else {
            let deadline = Instant::now()
                + if want == before {
                    UNCHANGED_FOR
                } else {
                    CHANGES_WITHIN
                };
            let mut after = None;
            while let Ok((at, p)) = rx.recv_timeout(Duration::from_secs(1)) {
                if p != before {
                    after = Some((at, p));
                    break;
                }
                if Instant::now() >= deadline {
                    break;
                }
            }
            match after {
                // The probe's own clock says when it first printed the new value.
                Some((at, p)) => {
                    step.push_str(&format!("{p} after {} ms", (at - changed_at) / 1_000_000));
                    procs = p;
                }
                None => step.push_str(&format!("still {before}")),
            }
        }
        if procs != want {
            wrong.push(format!(
                "to {}: GOMAXPROCS {procs}, not {want}",
                show(limit)
            ));
        }
        summary.push(step);
    }
    let reads_while_running = read_so_far().zip(reads_at_start).map(|(a, b)| a - b);
    drop(stdin);
    let faked = done.join().expect("the probe's tracer")?;
    if case.cpus.is_some() {
        assert!(
            faked > 0,
            "{}: the runtime never asked for its CPUs",
            case.label()
        );
    }
    if let Some(n) = reads_while_running {
        summary.push(format!("{n} reads of the cpu files after start"));
        // A runtime that does not follow the limit (GOMAXPROCS the same throughout, in these
        // cases) does not look at it either.
        let follows = case.steps.windows(2).any(|w| w[0].1 != w[1].1);
        if !follows && n > 0 && !case.idle {
            wrong.push(format!("read the limit {n} times while running"));
        }
    }
    Ok(Seen {
        summary: summary.join("; "),
        wrong,
    })
}

/// Answers the `sched_getaffinity` calls of a process with a CPU count of the test's choosing:
/// it runs under `ptrace`, and each answer the kernel writes is replaced as the call returns.
/// The CPU limit, its file and the runtime's arithmetic stay real; only the node is bigger.
#[cfg(target_os = "linux")]
mod fake_cpus {
    use std::io;
    use std::os::unix::process::CommandExt;
    use std::process::{ChildStdin, ChildStdout, Command};
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{mpsc, Arc};
    use std::thread::JoinHandle;

    /// `PTRACE_GET_SYSCALL_INFO` (Linux 5.3).
    const GET_SYSCALL_INFO: u32 = 0x420e;
    const ENTRY: u8 = 1;
    const EXIT: u8 = 2;

    /// `struct ptrace_syscall_info`: `data` is the entry's number and six arguments, or the
    /// exit's return value.
    #[repr(C)]
    struct SyscallInfo {
        op: u8,
        _reserved: u8,
        _flags: u16,
        _arch: u32,
        _ip: u64,
        _sp: u64,
        data: [u64; 7],
    }

    /// A ptrace address or data argument: glibc reads both as pointers.
    fn arg(v: u64) -> *mut libc::c_void {
        v as usize as *mut libc::c_void
    }

    /// A traced process.
    pub struct Traced {
        pub stdin: ChildStdin,
        pub stdout: ChildStdout,
        /// The number of answers replaced, once every thread of the process has exited.
        pub done: JoinHandle<Result<usize, String>>,
        /// How many pread64 calls the process has made so far.
        pub reads: Arc<AtomicUsize>,
    }

    /// Starts `cmd` traced by a thread of its own.
    pub fn spawn(mut cmd: Command, cpus: u32) -> Result<Traced, String> {
        assert!((1..64).contains(&cpus));
        // SAFETY: ptrace(2) is async-signal-safe.
        unsafe {
            cmd.pre_exec(|| {
                if libc::ptrace(libc::PTRACE_TRACEME, 0, arg(0), arg(0)) == -1 {
                    return Err(io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let (tx, rx) = mpsc::channel();
        let reads = Arc::new(AtomicUsize::new(0));
        let counter = reads.clone();
        let done = std::thread::spawn(move || {
            let mut child = match cmd.spawn() {
                Ok(c) => c,
                Err(e) => {
                    let _ = tx.send(Err(format!("ptrace: {e}")));
                    return Ok(0);
                }
            };
            let pid = child.id() as libc::pid_t;
            let pipes = (child.stdin.take().unwrap(), child.stdout.take().unwrap());
            let _ = tx.send(Ok(pipes));
            // SAFETY: `pid` is this thread's traced child; the tracer writes only the mask
            // buffer the kernel has just filled.
            unsafe { trace(pid, cpus, &counter) }
        });
        let (stdin, stdout) = rx.recv().unwrap()?;
        Ok(Traced {
            stdin,
            stdout,
            done,
            reads,
        })
    }

    unsafe fn trace(pid: libc::pid_t, cpus: u32, reads: &AtomicUsize) -> Result<usize, String> {
        let mut status = 0;
        // The stop at the first exec.
        if libc::waitpid(pid, &mut status, libc::__WALL) != pid || !libc::WIFSTOPPED(status) {
            return Err("the traced probe did not stop at exec".into());
        }
        let options = libc::PTRACE_O_TRACESYSGOOD
            | libc::PTRACE_O_TRACECLONE
            | libc::PTRACE_O_TRACEEXEC
            | libc::PTRACE_O_EXITKILL;
        libc::ptrace(libc::PTRACE_SETOPTIONS, pid, arg(0), arg(options as u64));
        libc::ptrace(libc::PTRACE_SYSCALL, pid, arg(0), arg(0));
        let word = std::mem::size_of::<libc::c_long>() as u64;
        // The mask buffer and its length of each thread inside sched_getaffinity.
        let mut inside = std::collections::HashMap::new();
        let mut answered = 0;
        let mut error = None;
        loop {
            // Only this thread's tracees: other tests' children are not ours to reap.
            let tid = libc::waitpid(-1, &mut status, libc::__WALL | libc::__WNOTHREAD);
            if tid == -1 {
                if io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                    continue;
                }
                break;
            }
            if !libc::WIFSTOPPED(status) {
                inside.remove(&tid);
                continue;
            }
            let sig = libc::WSTOPSIG(status);
            let mut deliver = 0;
            if sig == libc::SIGTRAP | 0x80 {
                let mut info: SyscallInfo = std::mem::zeroed();
                let size = std::mem::size_of::<SyscallInfo>();
                let n = libc::ptrace(
                    GET_SYSCALL_INFO as _,
                    tid,
                    arg(size as u64),
                    &mut info as *mut SyscallInfo as *mut libc::c_void,
                );
                if n <= 0 {
                    // ESRCH: the thread is being killed as the process exits.
                    let e = io::Error::last_os_error();
                    if e.raw_os_error() != Some(libc::ESRCH) {
                        error = Some(format!("PTRACE_GET_SYSCALL_INFO: {e}"));
                        libc::kill(pid, libc::SIGKILL);
                    }
                } else if info.op == ENTRY {
                    if info.data[0] == libc::SYS_sched_getaffinity as u64 {
                        inside.insert(tid, (info.data[3], info.data[2]));
                    } else {
                        inside.remove(&tid);
                    }
                    if info.data[0] == libc::SYS_pread64 as u64 {
                        reads.fetch_add(1, Ordering::SeqCst);
                    }
                } else if info.op == EXIT {
                    if let Some((mask, len)) = inside.remove(&tid) {
                        // The kernel returns how many bytes of the mask it wrote.
                        let written = (info.data[0] as i64).min(len as i64);
                        let mut at = 0;
                        while written > 0 && at + word <= written as u64 {
                            let bits = if at == 0 { (1u64 << cpus) - 1 } else { 0 };
                            libc::ptrace(libc::PTRACE_POKEDATA, tid, arg(mask + at), arg(bits));
                            at += word;
                        }
                        answered += usize::from(written > 0);
                    }
                }
            } else if status >> 16 != 0 {
                // A new thread or an exec: nothing to deliver.
            } else if sig != libc::SIGSTOP && sig != libc::SIGTRAP {
                // The runtime's own signals (SIGURG preempts goroutines) go through.
                deliver = sig;
            }
            libc::ptrace(libc::PTRACE_SYSCALL, tid, arg(0), arg(deliver as u64));
        }
        match error {
            Some(e) => Err(e),
            None => Ok(answered),
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod fake_cpus {
    use std::process::{ChildStdin, ChildStdout, Command};
    use std::sync::atomic::AtomicUsize;
    use std::sync::Arc;
    use std::thread::JoinHandle;

    pub struct Traced {
        pub stdin: ChildStdin,
        pub stdout: ChildStdout,
        pub done: JoinHandle<Result<usize, String>>,
        pub reads: Arc<AtomicUsize>,
    }

    pub fn spawn(_: Command, _: u32) -> Result<Traced, String> {
        Err("CPU counts are answered on Linux only".into())
    }
}

/// GOMAXPROCS = min(CPUs, max(2, ceil(limit))): the runtime's container default.
fn container_procs(cpus: u32, limit: Limit) -> i64 {
    let cpus = i64::from(cpus);
    match limit {
        Some(m) => cpus.min(((m + 999) / 1000).max(2) as i64),
        None => cpus,
    }
}

/// An in-place resize changes the CPU quota of a running container's cgroup. A Go 1.25+
/// program (go line 1.25+) whose GOMAXPROCS is not set follows it within about a second while
/// it runs; one with GOMAXPROCS set, one built for an older go line or with
/// GODEBUG=updatemaxprocs=0, and Go 1.24 keep their start-up value. The quota is changed for
/// real; as GOMAXPROCS is never below 2 under a limit, a limit only shows on more CPUs than this
/// machine may have, so the runtime is told of 8 (see `fake_cpus`).
#[test]
fn gomaxprocs_follows_a_quota_change_only_without_the_env() {
    if !common::go_available() {
        common::did_not_run(
            "go_oracle resize: did not run: no go command on PATH to fetch Go toolchains with",
        );
        return;
    }
    let started = Instant::now();
    let online = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
    // The runtime is told of 8 CPUs. A program that follows the limit goes from 4 CPUs to 2.5
    // (ceil: 3), to 1 (never below 2) and to none (all 8); one that does not keeps its value.
    let follows = vec![(Some(4000), 4), (Some(2500), 3), (Some(1000), 2), (None, 8)];
    let stays = |procs| vec![(Some(4000), procs), (Some(2500), procs)];
    let follows_to_3 = || vec![(Some(4000), 4), (Some(2500), 3)];
    let eight = |release, line, env, steps| Resize {
        release,
        line,
        env,
        cpus: Some(8),
        idle: false,
        steps,
    };
    let cases = vec![
        // (c) Go 1.24 knows no CPU limit.
        eight("1.24.9", "1.24", &[], stays(8)),
        // (a) Go 1.25+ with a go line of its own follows the limit.
        eight("1.25.0", "1.25", &[], follows.clone()),
        eight("1.26.8", "1.26", &[], follows),
        // (d) A go line below 1.25 has containermaxprocs=0 and updatemaxprocs=0; with the
        // first turned on, the start-up value is the limit's and still does not follow it; with
        // both, it does.
        eight("1.26.8", "1.24", &[], stays(8)),
        eight(
            "1.26.8",
            "1.24",
            &[("GODEBUG", "containermaxprocs=1")],
            stays(4),
        ),
        eight(
            "1.26.8",
            "1.24",
            &[("GODEBUG", "containermaxprocs=1,updatemaxprocs=1")],
            follows_to_3(),
        ),
        // (b) GOMAXPROCS in the environment is kept; set to what is not a positive number, it
        // counts as not set.
        eight("1.26.8", "1.26", &[("GOMAXPROCS", "2")], stays(2)),
        eight("1.26.8", "1.26", &[("GOMAXPROCS", "0")], follows_to_3()),
        eight("1.26.8", "1.26", &[("GOMAXPROCS", "")], follows_to_3()),
        // (d) updatemaxprocs=0 keeps the start-up value, which follows the limit.
        eight(
            "1.26.8",
            "1.26",
            &[("GODEBUG", "updatemaxprocs=0")],
            stays(4),
        ),
        // (e) A program with nothing to run and no timer does not look until it wakes.
        Resize {
            idle: true,
            ..eight("1.26.8", "1.26", &[], follows_to_3())
        },
        // The machine's own CPUs: from a limit of 2 CPUs to 1, GOMAXPROCS is min(CPUs, 2)
        // throughout, 2 on a node of 2 CPUs or more.
        Resize {
            cpus: None,
            ..eight(
                "1.26.8",
                "1.26",
                &[],
                vec![
                    (Some(2000), container_procs(online, Some(2000))),
                    (Some(1000), container_procs(online, Some(1000))),
                ],
            )
        },
    ];
    let quotas: Vec<Option<Quota>> = (0..cases.len())
        .map(|i| Quota::create_as(&format!("-resize-{i}")))
        .collect();
    if quotas.iter().any(Option::is_none) {
        common::did_not_run(
            "go_oracle resize: did not run: no cgroup with a writable cpu controller",
        );
        return;
    }
    let cache = common::user_cache("go-oracle");
    std::fs::create_dir_all(&cache).unwrap();
    let mut built = 0;
    let bins: Vec<PathBuf> = cases
        .iter()
        .map(|c| {
            let name = format!("resize-go{}", c.line);
            let (bin, fresh) = build(&cache, c.release, &name, RESIZE_PROBE, c.line);
            built += usize::from(fresh);
            bin
        })
        .collect();
    // Each case waits on the runtime's once-a-second look, so they run side by side.
    let seen: Vec<Result<Seen, String>> = std::thread::scope(|s| {
        let runs: Vec<_> = cases
            .iter()
            .zip(&bins)
            .zip(&quotas)
            .map(|((c, bin), q)| s.spawn(move || resize(c, bin, q.as_ref().unwrap())))
            .collect();
        runs.into_iter().map(|r| r.join().unwrap()).collect()
    });
    let mut wrong = Vec::new();
    for (c, seen) in cases.iter().zip(seen) {
        match seen {
            Ok(seen) => {
                println!("go_oracle resize: {}: {}", c.label(), seen.summary);
                wrong.extend(seen.wrong.iter().map(|w| format!("{}: {w}", c.label())));
            }
            Err(e) => common::did_not_run(&format!(
                "go_oracle resize: {}: did not run: {e}",
                c.label()
            )),
        }
    }
    println!(
        "go_oracle resize: {} cases, {} probes built now, {:.1} s",
        cases.len(),
        built,
        started.elapsed().as_secs_f64()
    );
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// go.uber.org/automaxprocs v1.6.0, the release the catalog's formula was read from, pinned by
/// its go.sum lines. Its blank import calls `maxprocs.Set` at start-up.
const AUTOMAXPROCS: Requires = Requires {
    file: "package main\n\nimport _ \"go.uber.org/automaxprocs\"\n",
    require: "require go.uber.org/automaxprocs v1.6.0\n",
    sum: "go.uber.org/automaxprocs v1.6.0 h1:O3y2/QNTOdbF+e/dpXNNW7Rx2hZ4sTIPyybbxyNqTUs=\ngo.uber.org/automaxprocs v1.6.0/go.mod h1:ifeIMSnPZuznNm6jmdzmU3/bfk01Fe2fotchwEFJ8r8=\n",
};

/// A program that calls `runtime.GOMAXPROCS(n)` itself (automaxprocs here) switches off the
/// Go 1.25 runtime's own sizing for good: under a real CPU quota it starts at floor(limit), at
/// least 1, where the runtime would take max(2, ceil(limit)), and stays there when the quota
/// changes. Each case is what `process::gomaxprocs` predicts from the catalog's formula for
/// automaxprocs, held against the running program; the predictions are also pinned here, so a
/// model that drifted with the program would not pass.
#[test]
fn automaxprocs_keeps_its_floor_when_the_quota_changes() {
    if !common::go_available() {
        common::did_not_run(
            "go_oracle automaxprocs: did not run: no go command on PATH to fetch Go toolchains with",
        );
        return;
    }
    let started = Instant::now();
    let formula = golint_k8s::go::catalog::CATALOG
        .frameworks
        .iter()
        .find(|f| f.import == "go.uber.org/automaxprocs")
        .and_then(|f| f.gomaxprocs.as_ref()?.formula_for(None))
        .expect("the catalog's formula for automaxprocs");
    let online = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
    // (release, go line, env, CPUs answered, limits in turn, what the runtime alone would do
    // at start, the prediction pinned)
    type Case = (
        &'static str,
        &'static str,
        &'static [(&'static str, &'static str)],
        Option<u32>,
        Vec<Limit>,
        Vec<i64>,
    );
    let cases: Vec<Case> = vec![
        // Go 1.25 alone would start at 2 and follow to 3 and 4; automaxprocs pins floor(1.5).
        (
            "1.25.0",
            "1.25",
            &[],
            Some(8),
            vec![Some(1500), Some(2500), Some(4000), None],
            vec![1, 1, 1, 1],
        ),
        (
            "1.26.8",
            "1.26",
            &[],
            Some(8),
            vec![Some(2500), Some(4000), Some(1000)],
            vec![2, 2, 2],
        ),
        // An empty GOMAXPROCS is "set" for automaxprocs (os.LookupEnv), which then does
        // nothing, and "unset" for the runtime, which keeps following the limit.
        (
            "1.25.0",
            "1.25",
            &[("GOMAXPROCS", "")],
            Some(8),
            vec![Some(1500), Some(2500), Some(4000)],
            vec![2, 3, 4],
        ),
        // Before 1.25 the runtime never follows; automaxprocs's floor is all there is.
        (
            "1.24.9",
            "1.24",
            &[],
            Some(8),
            vec![Some(4000), Some(2500)],
            vec![4, 4],
        ),
        // The machine's own CPUs, nothing traced: 1 thread where Go 1.25 alone runs
        // min(CPUs, 2).
        (
            "1.25.0",
            "1.25",
            &[],
            None,
            vec![Some(1500), Some(500)],
            vec![1, 1],
        ),
    ];
    let mut resizes = Vec::new();
    for (release, line, env, cpus, limits, pinned) in &cases {
        let facts = process::Facts {
            version: GoVersion::parse(line),
            env: env
                .iter()
                .find(|(k, _)| *k == "GOMAXPROCS")
                .map(|(_, v)| *v),
            program: Some(formula),
            ..process::Facts::default()
        };
        let node = cpus.unwrap_or(online);
        let steps: Vec<(Limit, i64)> = limits
            .iter()
            .map(|&limit| {
                let p = process::gomaxprocs(&facts, Some(node), limits[0], Some(limit));
                (limit, p.after_resize.expect("a CPU count is given") as i64)
            })
            .collect();
        if cpus.is_some() {
            let predicted: Vec<i64> = steps.iter().map(|s| s.1).collect();
            assert_eq!(
                &predicted, pinned,
                "Go {release}: the model's prediction moved"
            );
        } else {
            assert_eq!(steps[0].1, 1, "floor(1.5) on this machine");
        }
        resizes.push(Resize {
            release,
            line,
            env,
            cpus: *cpus,
            idle: false,
            steps,
        });
    }
    let quotas: Vec<Option<Quota>> = (0..resizes.len())
        .map(|i| Quota::create_as(&format!("-automaxprocs-{i}")))
        .collect();
    if quotas.iter().any(Option::is_none) {
        common::did_not_run(
            "go_oracle automaxprocs: did not run: no cgroup with a writable cpu controller",
        );
        return;
    }
    let cache = common::user_cache("go-oracle");
    std::fs::create_dir_all(&cache).unwrap();
    let bins: Vec<PathBuf> = resizes
        .iter()
        .map(|c| {
            let name = format!("automaxprocs-go{}", c.line);
            build_with(
                &cache,
                c.release,
                &name,
                RESIZE_PROBE,
                c.line,
                Some(&AUTOMAXPROCS),
            )
            .0
        })
        .collect();
    let seen: Vec<Result<Seen, String>> = std::thread::scope(|s| {
        let runs: Vec<_> = resizes
            .iter()
            .zip(&bins)
            .zip(&quotas)
            .map(|((c, bin), q)| s.spawn(move || resize(c, bin, q.as_ref().unwrap())))
            .collect();
        runs.into_iter().map(|r| r.join().unwrap()).collect()
    });
    let mut wrong = Vec::new();
    let mut ran = 0;
    for (c, seen) in resizes.iter().zip(seen) {
        match seen {
            Ok(seen) => {
                ran += 1;
                println!(
                    "go_oracle automaxprocs: {}: measured {}; predicted {:?}",
                    c.label(),
                    seen.summary,
                    c.steps
                );
                wrong.extend(seen.wrong.iter().map(|w| format!("{}: {w}", c.label())));
            }
            Err(e) => common::did_not_run(&format!(
                "go_oracle automaxprocs: {}: did not run: {e}",
                c.label()
            )),
        }
    }
    println!(
        "go_oracle automaxprocs: {ran} of {} cases ran, {:.1} s",
        resizes.len(),
        started.elapsed().as_secs_f64()
    );
    assert!(ran > 0, "no case ran");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
