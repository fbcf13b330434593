//! The Go toolchain is the oracle for `golint_k8s::image::buildinfo`: small programs
//! (`tests/buildinfo-progs/`) are built with Go 1.26.8, with other go lines, modules, flags and
//! one release before Go 1.18's inline format, and what `go version -m` prints of each binary
//! (toolchain, path, mod, every dep and replacement, every build setting) is compared with what
//! `read` returns. Non-Go ELF files and scripts, and a real binary cut short or corrupted, must
//! not be read as Go.
//!
//! Modules and toolchains come through the Go module proxy; the binaries are cached under the
//! user cache directory (`golint-k8s/buildinfo`). Without a `go` command the tests that need it
//! print one line saying they did not run.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

use golint_k8s::image::buildinfo::{self, Binary, BuildInfo, Module};

/// The toolchain the programs are built with, unless a test names another.
const TOOLCHAIN: &str = "1.26.8";

const PLAIN: &str = include_str!("../buildinfo-progs/plain/main.go");
const AUTOMAXPROCS: &str = include_str!("../buildinfo-progs/automaxprocs/main.go");
const AUTOMEMLIMIT: &str = include_str!("../buildinfo-progs/automemlimit/main.go");
const REPLACED: &[(&str, &str)] = &[
    (
        "main.go",
        include_str!("../buildinfo-progs/replaced/main.go"),
    ),
    (
        "greeting/go.mod",
        include_str!("../buildinfo-progs/replaced/greeting/go.mod"),
    ),
    (
        "greeting/greeting.go",
        include_str!("../buildinfo-progs/replaced/greeting/greeting.go"),
    ),
];

/// A program to build: its files, its go.mod's go line, requirements and replacements, and
/// build flags.
struct Program {
    name: &'static str,
    files: &'static [(&'static str, &'static str)],
    go_line: &'static str,
    require: &'static [(&'static str, &'static str)],
    replace: &'static [(&'static str, &'static str)],
    flags: &'static [&'static str],
    release: &'static str,
}

impl Program {
    fn plain(name: &'static str, go_line: &'static str) -> Program {
        Program {
            name,
            files: &[("main.go", PLAIN)],
            go_line,
            require: &[],
            replace: &[],
            flags: &[],
            release: TOOLCHAIN,
        }
    }
}

/// Whether `go` is on PATH; if not, says once that the tests that need it did not run.
fn have_go() -> bool {
    static SAID: std::sync::Once = std::sync::Once::new();
    let ok = common::go_available();
    if !ok {
        SAID.call_once(|| common::did_not_run("buildinfo: did not run: no go command on PATH"));
    }
    ok
}

fn cache() -> PathBuf {
    let dir = common::user_cache("buildinfo");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A `go` command for `release`, fetched through the module proxy unless it is the local one.
fn go(cache: &Path, release: &str) -> Command {
    let mut cmd = Command::new("go");
    cmd.env("GOTOOLCHAIN", format!("go{release}"))
        .env("GOMODCACHE", cache.join("mod"))
        .env("GOFLAGS", "-mod=mod -modcacherw")
        .env("GOWORK", "off");
    cmd
}

fn run(mut cmd: Command, what: &str) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(
        out.status.success(),
        "{what} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// `program` built, from the cache if it was built before.
fn build(cache: &Path, p: &Program) -> PathBuf {
    let recipe = format!(
        "{:?}\ngo {}\n{:?}\n{:?}\n{:?}\n{}",
        p.files, p.go_line, p.require, p.replace, p.flags, p.release
    );
    let tag: u64 = recipe.bytes().fold(0xcbf29ce484222325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100000001b3)
    });
    let bin = cache.join(format!("{}-{}-{tag:016x}", p.name, p.release));
    if bin.is_file() {
        return bin;
    }
    let src = tempfile::tempdir().unwrap();
    for (name, text) in p.files {
        let file = src.path().join(name);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, text).unwrap();
    }
    let mut gomod = format!("module example.com/{}\n\ngo {}\n", p.name, p.go_line);
    for (path, version) in p.require {
        gomod.push_str(&format!("\nrequire {path} {version}\n"));
    }
    for (path, target) in p.replace {
        gomod.push_str(&format!("\nreplace {path} => {target}\n"));
    }
    std::fs::write(src.path().join("go.mod"), gomod).unwrap();
    // Built under a name of its own and renamed, so that a test building or reading the same
    // program at the same time never sees half a binary.
    static BUILDS: AtomicUsize = AtomicUsize::new(0);
    let n = BUILDS.fetch_add(1, Ordering::Relaxed);
    let part = cache.join(format!(".{}-{}-{n}.part", p.name, std::process::id()));
    if p.release == TOOLCHAIN {
        let mut tidy = go(cache, p.release);
        tidy.args(["mod", "tidy"]).current_dir(src.path());
        run(tidy, &format!("go mod tidy for {}", p.name));
        let mut cmd = go(cache, p.release);
        cmd.args(["build", "-o"])
            .arg(&part)
            .args(p.flags)
            .arg(".")
            .current_dir(src.path());
        run(cmd, &format!("go build {}", p.name));
    } else {
        // An old release builds with its own `go`, as it always did: one that predates
        // toolchain switching, with GOFLAGS it knows (GOFLAGS from the user's go env file, such
        // as -buildvcs, may be newer), and no GOMODCACHE holding its GOROOT.
        assert!(
            p.require.is_empty(),
            "old releases build programs without modules"
        );
        let mut env = go(cache, p.release);
        env.args(["env", "GOROOT"]);
        let goroot = PathBuf::from(run(env, &format!("fetching Go {}", p.release)).trim());
        let mut cmd = Command::new(goroot.join("bin").join("go"));
        cmd.args(["build", "-o"])
            .arg(&part)
            .args(p.flags)
            .arg(".")
            .current_dir(src.path())
            .env("GOROOT", &goroot)
            .env("GOTOOLCHAIN", "local")
            .env("GOWORK", "off")
            .env("GOFLAGS", "-mod=mod")
            .env_remove("GOMODCACHE");
        run(cmd, &format!("go build {} with Go {}", p.name, p.release));
    }
    std::fs::rename(&part, &bin).unwrap();
    bin
}

/// What `go version -m` says of a file, or `read` of its bytes.
#[derive(Debug, PartialEq)]
enum Verdict {
    /// The toolchain, and the lines of the build info.
    Go(String, Vec<String>),
    NotGo,
    NotElf,
}

/// What `go version -m` says of `file` (which must be executable for Go to say why it is not Go).
fn oracle(cache: &Path, file: &Path) -> Verdict {
    let mut cmd = go(cache, TOOLCHAIN);
    cmd.args(["version", "-m"]).arg(file).current_dir(cache);
    let out = cmd.output().expect("go version -m");
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        if stderr.contains("not a Go executable") {
            return Verdict::NotGo;
        }
        if stderr.contains("unrecognized file format") {
            return Verdict::NotElf;
        }
        panic!("go version -m {}: {stderr}", file.display());
    }
    let out = String::from_utf8(out.stdout).unwrap();
    let mut lines = out.lines();
    let first = lines.next().expect("go version -m printed nothing");
    let version = first
        .strip_prefix(&format!("{}: ", file.display()))
        .unwrap_or_else(|| panic!("unexpected first line {first:?}"));
    let rest = lines
        .map(|l| l.strip_prefix('\t').expect("an indented line").to_string())
        .collect();
    Verdict::Go(version.to_string(), rest)
}

fn verdict(read: &Binary) -> Verdict {
    match read {
        Binary::Go(info) => Verdict::Go(info.go_version.clone(), lines(info)),
        Binary::NotGo => Verdict::NotGo,
        Binary::NotElf => Verdict::NotElf,
        other => panic!("read as {other:?}"),
    }
}

/// `bytes` written to an executable file in `dir`, for `go version -m`.
fn executable(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// `info` as `go version -m` prints it (`runtime/debug.BuildInfo.String`), without the version.
fn lines(info: &BuildInfo) -> Vec<String> {
    fn module(word: &str, m: &Module, out: &mut Vec<String>) {
        match &m.replace {
            None => out.push(format!("{word}\t{}\t{}\t{}", m.path, m.version, m.sum)),
            Some(r) => {
                out.push(format!("{word}\t{}\t{}", m.path, m.version));
                module("=>", r, out);
                // `formatMod` ends the replaced module's line too: an empty line follows.
                out.push(String::new());
            }
        }
    }
    let mut out = Vec::new();
    if let Some(path) = &info.path {
        out.push(format!("path\t{path}"));
    }
    if let Some(main) = &info.main {
        module("mod", main, &mut out);
    }
    for dep in &info.deps {
        module("dep", dep, &mut out);
    }
    for (key, value) in &info.settings {
        // As `quoteKey` and `quoteValue` decide.
        let key = quote_if(key, "= \t\r\n\"`", true);
        let value = quote_if(value, " \t\r\n\"`", false);
        out.push(format!("build\t{key}={value}"));
    }
    out
}

/// `s` Go-quoted (`strconv.Quote`) if it holds one of `special`, or if it is empty and `empty`
/// says so; ASCII only, which is enough for these programs.
fn quote_if(s: &str, special: &str, empty: bool) -> String {
    let quote = (s.is_empty() && empty) || s.chars().any(|c| special.contains(c));
    if !quote {
        return s.to_string();
    }
    let mut q = String::from('"');
    for c in s.chars() {
        match c {
            '"' => q.push_str("\\\""),
            '\\' => q.push_str("\\\\"),
            '\t' => q.push_str("\\t"),
            '\n' => q.push_str("\\n"),
            '\r' => q.push_str("\\r"),
            ' '..='~' => q.push(c),
            _ => panic!("quoting {c:?} is not done here"),
        }
    }
    q.push('"');
    q
}

/// Reads the Go binary `bin` and checks it against `go version -m`.
fn check(cache: &Path, bin: &Path) -> BuildInfo {
    let bytes = std::fs::read(bin).unwrap();
    let read = buildinfo::read(&bytes);
    assert_eq!(verdict(&read), oracle(cache, bin), "{}", bin.display());
    match read {
        Binary::Go(info) => info,
        other => panic!("{}: read as {other:?}", bin.display()),
    }
}

/// The offset of the build info blob in a file: the first 16-byte-aligned magic.
fn blob(bytes: &[u8]) -> usize {
    (0..bytes.len().saturating_sub(14))
        .step_by(16)
        .find(|&i| bytes[i..].starts_with(b"\xff Go buildinf:"))
        .expect("the build info magic")
}

#[test]
fn go_1_26_module() {
    if !have_go() {
        return;
    }
    let cache = cache();
    let info = check(&cache, &build(&cache, &Program::plain("plain", "1.26")));
    assert_eq!(info.go_version, format!("go{TOOLCHAIN}"));
    assert_eq!(info.path.as_deref(), Some("example.com/plain"));
    let main = info.main.as_ref().unwrap();
    assert_eq!(main.path, "example.com/plain");
    assert!(info.deps.is_empty());
    assert_eq!(info.setting("GOOS"), Some(std::env::consts::OS));
    assert!(info.setting("CGO_ENABLED").is_some());
    // The go line matches the toolchain: nothing of GOMAXPROCS is turned back.
    assert_eq!(info.default_godebug("containermaxprocs"), None);
    assert_eq!(info.default_godebug("updatemaxprocs"), None);
}

#[test]
fn go_1_24_line_keeps_the_old_gomaxprocs() {
    if !have_go() {
        return;
    }
    let cache = cache();
    let info = check(&cache, &build(&cache, &Program::plain("plain", "1.24")));
    assert_eq!(info.go_version, format!("go{TOOLCHAIN}"));
    assert_eq!(info.default_godebug("containermaxprocs"), Some("0"));
    assert_eq!(info.default_godebug("updatemaxprocs"), Some("0"));
    assert!(info
        .setting("DefaultGODEBUG")
        .unwrap()
        .contains("containermaxprocs=0"));
}

#[test]
fn automaxprocs_dependency() {
    if !have_go() {
        return;
    }
    let cache = cache();
    let program = Program {
        name: "automaxprocs",
        files: &[("main.go", AUTOMAXPROCS)],
        go_line: "1.26",
        require: &[("go.uber.org/automaxprocs", "v1.6.0")],
        replace: &[],
        flags: &[],
        release: TOOLCHAIN,
    };
    let info = check(&cache, &build(&cache, &program));
    let dep = info
        .dep("go.uber.org/automaxprocs")
        .expect("the dependency");
    assert_eq!(dep.version, "v1.6.0");
    assert!(dep.sum.starts_with("h1:"), "{dep:?}");
    assert!(dep.replace.is_none());
}

#[test]
fn automemlimit_dependency() {
    if !have_go() {
        return;
    }
    let cache = cache();
    let program = Program {
        name: "automemlimit",
        files: &[("main.go", AUTOMEMLIMIT)],
        go_line: "1.26",
        require: &[("github.com/KimMachineGun/automemlimit", "v0.7.1")],
        replace: &[],
        flags: &[],
        release: TOOLCHAIN,
    };
    let info = check(&cache, &build(&cache, &program));
    let dep = info
        .dep("github.com/KimMachineGun/automemlimit")
        .expect("the dependency");
    assert_eq!(dep.version, "v0.7.1");
    // Its own dependencies are listed too.
    assert!(info.deps.len() > 1, "{:?}", info.deps);
}

#[test]
fn replaced_dependency() {
    if !have_go() {
        return;
    }
    let cache = cache();
    let program = Program {
        name: "replaced",
        files: REPLACED,
        go_line: "1.26",
        require: &[("example.com/greeting", "v1.2.3")],
        replace: &[("example.com/greeting", "./greeting")],
        flags: &[],
        release: TOOLCHAIN,
    };
    let info = check(&cache, &build(&cache, &program));
    let dep = info.dep("example.com/greeting").expect("the dependency");
    assert_eq!(dep.version, "v1.2.3");
    let replace = dep.replace.as_deref().expect("its replacement");
    assert_eq!(replace.path, "./greeting");
}

#[test]
fn stripped_binary_keeps_its_build_info() {
    if !have_go() {
        return;
    }
    let cache = cache();
    let program = Program {
        flags: &["-ldflags=-s -w"],
        ..Program::plain("stripped", "1.26")
    };
    let info = check(&cache, &build(&cache, &program));
    // A quoted value in the module text.
    assert_eq!(info.setting("-ldflags"), Some("-s -w"));
}

#[test]
fn position_independent_binary() {
    if !have_go() {
        return;
    }
    let cache = cache();
    let program = Program {
        flags: &["-buildmode=pie"],
        ..Program::plain("pie", "1.26")
    };
    let info = check(&cache, &build(&cache, &program));
    assert_eq!(info.setting("-buildmode"), Some("pie"));
}

#[test]
fn without_section_headers_the_data_segment_is_searched() {
    if !have_go() {
        return;
    }
    let cache = cache();
    let bin = build(&cache, &Program::plain("plain", "1.26"));
    let mut bytes = std::fs::read(&bin).unwrap();
    // ELF64: e_shoff, then e_shnum and e_shstrndx, zeroed, as `sstrip` leaves a file.
    assert_eq!(&bytes[..5], b"\x7fELF\x02");
    bytes[40..48].fill(0);
    bytes[60..64].fill(0);
    let dir = tempfile::tempdir().unwrap();
    let file = executable(dir.path(), "plain-no-sections", &bytes);
    let info = check(&cache, &file);
    assert_eq!(info.path.as_deref(), Some("example.com/plain"));
}

#[test]
fn go_1_17_pointer_format() {
    if !have_go() {
        return;
    }
    let cache = cache();
    let program = Program {
        release: "1.17.13",
        ..Program::plain("plain", "1.17")
    };
    let bin = build(&cache, &program);
    let bytes = std::fs::read(&bin).unwrap();
    let at = blob(&bytes);
    assert_eq!(
        bytes[at + 15] & 0x2,
        0,
        "Go 1.17 wrote pointers, not inline strings"
    );
    let info = check(&cache, &bin);
    assert_eq!(info.go_version, "go1.17.13");
    assert_eq!(info.path.as_deref(), Some("example.com/plain"));
}

#[test]
fn real_binary_cut_short_or_corrupted() {
    if !have_go() {
        return;
    }
    let cache = cache();
    let bin = build(&cache, &Program::plain("plain", "1.26"));
    let bytes = std::fs::read(&bin).unwrap();
    let Binary::Go(full) = buildinfo::read(&bytes) else {
        panic!("not read as Go");
    };
    // Cut anywhere, the file is not ELF to Go, or not Go, or (cut after everything Go reads)
    // the same Go binary.
    let at = blob(&bytes);
    let step = bytes.len() / 199;
    let lengths = (0..bytes.len())
        .step_by(step)
        .chain(0..512)
        .chain(at..at + 1024)
        .chain(bytes.len() - 512..bytes.len());
    for len in lengths {
        match buildinfo::read(&bytes[..len]) {
            Binary::Go(info) => assert_eq!(info, full, "cut at {len}"),
            Binary::NotGo | Binary::NotElf => {}
            other => panic!("cut at {len}: {other:?}"),
        }
    }
    // Some of those cuts as `go version -m` sees them.
    let dir = tempfile::tempdir().unwrap();
    for len in [
        0,
        63,
        1000,
        at + 16,
        at + 40,
        at + 200,
        bytes.len() / 2,
        bytes.len() - 1,
    ] {
        let cut = executable(dir.path(), &format!("cut-{len}"), &bytes[..len]);
        let read = buildinfo::read(&bytes[..len]);
        assert_eq!(verdict(&read), oracle(&cache, &cut), "cut at {len}");
    }
    // Any byte of the blob's header, lengths and text changed: an answer, never a panic.
    let mut copy = bytes.clone();
    for i in at..at + 32 + 512 {
        for b in [0x00, 0x01, 0x7f, 0x80, 0xff] {
            let old = copy[i];
            copy[i] = b;
            let _ = buildinfo::read(&copy);
            copy[i] = old;
        }
    }
}

#[test]
fn other_files_are_not_go() {
    let go = common::go_available().then(cache);
    // A C program from PATH.
    let path = std::env::var_os("PATH").unwrap_or_default();
    let native = ["true", "ls", "sh"]
        .iter()
        .flat_map(|name| std::env::split_paths(&path).map(move |dir| dir.join(name)))
        .find(|p| std::fs::read(p).is_ok_and(|b| b.starts_with(b"\x7fELF")));
    match native {
        Some(file) => {
            assert_eq!(
                buildinfo::read(&std::fs::read(&file).unwrap()),
                Binary::NotGo
            );
            if let Some(cache) = &go {
                assert_eq!(oracle(cache, &file), Verdict::NotGo);
            }
        }
        None => println!("buildinfo other_files_are_not_go: no ELF `true`, `ls` or `sh` on PATH"),
    }
    // A shell script, and an empty file.
    let dir = tempfile::tempdir().unwrap();
    for (name, bytes) in [
        (
            "entrypoint.sh",
            &b"#!/bin/sh\nexec /app/server \"$@\"\n"[..],
        ),
        ("empty", b""),
    ] {
        assert_eq!(buildinfo::read(bytes), Binary::NotElf);
        if let Some(cache) = &go {
            let file = executable(dir.path(), name, bytes);
            assert_eq!(oracle(cache, &file), Verdict::NotElf);
        }
    }
}
