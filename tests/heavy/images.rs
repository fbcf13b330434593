//! `lint --inspect-images` against a real registry: `crane registry serve` on loopback, holding
//! images that `crane` builds in the test from real Go binaries (compiled here with the local Go,
//! CGO off, go.mod at `go 1.24` and `go 1.26`, one linking go.uber.org/automaxprocs v1.6.0, one
//! github.com/KimMachineGun/automemlimit v0.7.1), a Python entrypoint and a Python script, an
//! image whose ENV sets GOMEMLIMIT, a multi-platform index, whiteouts, and a binary above a large
//! layer that must not be read. What the lint says
//! of each container (runtime, evidence, findings), the cache (a second run asks for no blob:
//! counted in the registry's request log), `--offline` with an empty cache and an unreachable
//! registry (notes, never exit 2) are checked.
//!
//! Without `go` or the test tools (crane) outside CI, the tests print one line saying they did
//! not run.
#![cfg(feature = "images")]

use crate::common;
use crate::tools;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::images_common::{allow_loopback, deployment, findings, layer, run, runtimes, Lint};
use serde_json::Value;

const PLAIN: &str = include_str!("../buildinfo-progs/plain/main.go");
const AUTOMAXPROCS: &str = include_str!("../buildinfo-progs/automaxprocs/main.go");
const AUTOMEMLIMIT: &str = include_str!("../buildinfo-progs/automemlimit/main.go");

fn tools_and_go() -> Option<tools::Tools> {
    if !common::go_available() {
        if std::env::var_os("CI").is_some_and(|v| !v.is_empty()) {
            panic!("CI must run tests/images.rs, but there is no go command");
        }
        println!("images: did not run: no go command on PATH");
        return None;
    }
    tools::ensure()
}

/// A `crane registry serve` on a free loopback port; its log counts the requests.
struct Registry {
    child: Child,
    addr: String,
    log: PathBuf,
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Registry {
    fn start(crane: &Path, dir: &Path) -> Registry {
        let log = dir.join("registry.log");
        let file = std::fs::File::create(&log).unwrap();
        let child = Command::new(crane)
            .args(["registry", "serve", "--address", "127.0.0.1:0"])
            .stdout(Stdio::null())
            .stderr(file)
            .spawn()
            .expect("crane registry serve");
        // Owned at once, so that it is stopped however the wait below ends.
        let mut reg = Registry {
            child,
            addr: String::new(),
            log,
        };
        let started = Instant::now();
        loop {
            let text = std::fs::read_to_string(&reg.log).unwrap_or_default();
            if let Some(port) = text
                .lines()
                .find_map(|l| l.split("serving on port ").nth(1))
            {
                reg.addr = format!("127.0.0.1:{}", port.trim());
                return reg;
            }
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "crane registry did not start: {text}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Blob downloads the registry has served so far.
    fn blob_gets(&self) -> usize {
        let f = std::fs::File::open(&self.log).unwrap();
        BufReader::new(f)
            .lines()
            .map_while(Result::ok)
            .filter(|l| l.contains("GET /v2/") && l.contains("/blobs/"))
            .count()
    }

    /// Lines of the request log: one per request.
    fn lines(&self) -> usize {
        std::fs::read_to_string(&self.log).unwrap().lines().count()
    }
}

/// A Go program built with the local toolchain (CGO off), cached between runs.
fn go_build(name: &str, main_go: &str, go_line: &str, require: Option<(&str, &str)>) -> Vec<u8> {
    let cache = common::user_cache("image-progs");
    std::fs::create_dir_all(&cache).unwrap();
    let recipe = format!("{main_go}\n{go_line}\n{require:?}");
    let tag: u64 = recipe.bytes().fold(0xcbf29ce484222325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100000001b3)
    });
    let bin = cache.join(format!("{name}-{tag:016x}"));
    if let Ok(bytes) = std::fs::read(&bin) {
        return bytes;
    }
    let src = tempfile::tempdir().unwrap();
    std::fs::write(src.path().join("main.go"), main_go).unwrap();
    let mut gomod = format!("module example.com/{name}\n\ngo {go_line}\n");
    if let Some((path, version)) = require {
        gomod.push_str(&format!("\nrequire {path} {version}\n"));
    }
    std::fs::write(src.path().join("go.mod"), gomod).unwrap();
    let go = |args: &[&str]| {
        let mut c = Command::new("go");
        c.args(args)
            .current_dir(src.path())
            .env("GOTOOLCHAIN", "local")
            .env("CGO_ENABLED", "0")
            .env("GOMODCACHE", common::user_cache("buildinfo").join("mod"))
            .env("GOFLAGS", "-mod=mod -modcacherw")
            .env("GOWORK", "off");
        c
    };
    run(&mut go(&["mod", "tidy"]), "go mod tidy");
    let part = crate::images_common::part_path(&cache, name);
    run(
        &mut go(&["build", "-o", part.to_str().unwrap(), "."]),
        &format!("go build {name}"),
    );
    std::fs::rename(&part, &bin).unwrap();
    std::fs::read(&bin).unwrap()
}

struct Crane<'a> {
    bin: &'a Path,
    reg: &'a str,
}

impl Crane<'_> {
    /// An image of `layers` (bottom first) with `mutate` flags (entrypoint, env, platform).
    fn image(&self, name: &str, layers: &[&Path], mutate: &[&str]) -> String {
        let base = format!("{}/{name}:base", self.reg);
        let mut c = Command::new(self.bin);
        c.args(["append", "-t", &base]);
        for l in layers {
            c.arg("-f").arg(l);
        }
        run(&mut c, &format!("crane append {name}"));
        let tag = format!("{}/{name}:v1", self.reg);
        run(
            Command::new(self.bin)
                .args(["mutate", &base, "-t", &tag])
                .args(mutate),
            &format!("crane mutate {name}"),
        );
        tag
    }
}

fn golint(cache: &Path, args: &[&str], manifest: &Path) -> Lint {
    allow_loopback(manifest.parent().unwrap());
    let started = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_golint-k8s"))
        .arg("lint")
        .args(args)
        .arg(manifest)
        .env("GOLINT_K8S_CACHE", cache)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    Lint {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        took: started.elapsed(),
    }
}

/// The facts the cache holds, by image digest prefix: (bytes_read, image_size).
fn cached_sizes(cache: &Path) -> Vec<(String, u64, u64, String)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(cache.join("images").join("facts")).unwrap() {
        let v: Value = serde_json::from_slice(&std::fs::read(e.unwrap().path()).unwrap()).unwrap();
        out.push((
            v["digest"].as_str().unwrap()[..19].to_string(),
            v["bytes_read"].as_u64().unwrap(),
            v["image_size"].as_u64().unwrap(),
            v["entrypoint"].to_string(),
        ));
    }
    out.sort();
    out
}

#[test]
fn images_are_read_from_a_real_registry() {
    let Some(tools) = tools_and_go() else { return };
    let work = tempfile::tempdir().unwrap();
    let dir = work.path();
    let reg = Registry::start(&tools.crane, dir);
    let crane = Crane {
        bin: &tools.crane,
        reg: &reg.addr,
    };

    let go124 = go_build("plain124", PLAIN, "1.24", None);
    let go126 = go_build("plain126", PLAIN, "1.26", None);
    let maxprocs = go_build(
        "automaxprocs",
        AUTOMAXPROCS,
        "1.24",
        Some(("go.uber.org/automaxprocs", "v1.6.0")),
    );
    let memlimit = go_build(
        "automemlimit",
        AUTOMEMLIMIT,
        "1.24",
        Some(("github.com/KimMachineGun/automemlimit", "v0.7.1")),
    );
    let l124 = layer(dir, "l124.tgz", &[("app/server", &go124)]);
    let lmem = layer(dir, "lmem.tgz", &[("app/server", &memlimit)]);
    let l126 = layer(dir, "l126.tgz", &[("app/server", &go126)]);
    let lmax = layer(dir, "lmax.tgz", &[("app/server", &maxprocs)]);
    let lpy = layer(dir, "lpy.tgz", &[("app/main.py", b"print('hi')\n")]);
    let lscript = layer(
        dir,
        "lscript.tgz",
        &[("app/run", b"#!/usr/bin/env python3\nprint('hi')\n")],
    );
    let lwhiteout = layer(dir, "lwh.tgz", &[("app/.wh.server", b"")]);
    let lopaque = layer(
        dir,
        "lopq.tgz",
        &[
            ("app/.wh..wh..opq", b""),
            ("app/server", b"#!/usr/bin/env python3\n"),
        ],
    );
    // 4 MiB that gzip cannot shrink, below the binary: never read.
    let mut junk = vec![0u8; 4 << 20];
    let mut x: u64 = 0x9e3779b97f4a7c15;
    for b in junk.iter_mut() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        *b = x as u8;
    }
    let ljunk = layer(dir, "ljunk.tgz", &[("data/junk", &junk)]);

    let ep = ["--entrypoint", "/app/server"];
    let images = [
        ("go124", crane.image("go124", &[&l124], &ep)),
        ("go126", crane.image("go126", &[&l126], &ep)),
        ("maxprocs", crane.image("maxprocs", &[&lmax], &ep)),
        ("memlimit", crane.image("memlimit", &[&lmem], &ep)),
        (
            "memenv",
            crane.image(
                "memenv",
                &[&l124],
                &["--entrypoint", "/app/server", "--env", "GOMEMLIMIT=400MiB"],
            ),
        ),
        (
            "python",
            crane.image("python", &[&lpy], &["--entrypoint", "python3,/app/main.py"]),
        ),
        (
            "script",
            crane.image("script", &[&lscript], &["--entrypoint", "/app/run"]),
        ),
        ("big", crane.image("big", &[&ljunk, &l126], &ep)),
        (
            "whiteout",
            crane.image("whiteout", &[&l124, &lwhiteout], &ep),
        ),
        ("opaque", crane.image("opaque", &[&l124, &lopaque], &ep)),
    ];
    // A multi-platform index: linux/amd64 runs Go, linux/arm64 Python.
    let amd = crane.image(
        "idx-amd64",
        &[&l126],
        &[
            "--entrypoint",
            "/app/server",
            "--set-platform",
            "linux/amd64",
        ],
    );
    let arm = crane.image(
        "idx-arm64",
        &[&lpy],
        &[
            "--entrypoint",
            "python3,/app/main.py",
            "--set-platform",
            "linux/arm64",
        ],
    );
    let index = format!("{}/multi:v1", reg.addr);
    run(
        Command::new(&tools.crane).args(["index", "append", "-m", &amd, "-m", &arm, "-t", &index]),
        "crane index append",
    );

    let mut containers: Vec<(&str, &str)> = images.iter().map(|(n, i)| (*n, i.as_str())).collect();
    containers.push(("multi", &index));
    let manifest = dir.join("deploy.yaml");
    std::fs::write(&manifest, deployment(&containers)).unwrap();
    let cache = dir.join("cache");

    // Cold: everything from the registry.
    let before = reg.blob_gets();
    let cold = golint(
        &cache,
        &["--inspect-images", "--show-containers", "--format", "json"],
        &manifest,
    );
    assert_eq!(cold.code, 0, "{}", cold.stderr);
    let cold_blobs = reg.blob_gets() - before;
    assert!(cold_blobs > 0);
    let rt = runtimes(&cold);
    let lang = |c: &str| rt[c]["language"].as_str().map(str::to_string);
    let evidence = |c: &str| rt[c]["evidence"].as_str().unwrap().to_string();
    for c in [
        "go124", "go126", "maxprocs", "memlimit", "memenv", "big", "multi",
    ] {
        assert_eq!(lang(c).as_deref(), Some("go"), "{c}: {}", rt[c]);
        assert!(evidence(c).contains("from image sha256:"), "{c}: {}", rt[c]);
        assert_eq!(rt[c]["go_version"], "1.26", "{c}: {}", rt[c]);
    }
    assert!(
        evidence("go124").contains("containermaxprocs=0"),
        "{}",
        rt["go124"]
    );
    assert!(
        !evidence("go126").contains("containermaxprocs"),
        "{}",
        rt["go126"]
    );
    assert!(
        evidence("maxprocs").contains("links go.uber.org/automaxprocs v1.6.0"),
        "{}",
        rt["maxprocs"]
    );
    assert!(
        rt["maxprocs"]["sizes_gomaxprocs"]
            .as_str()
            .is_some_and(|s| s.contains("go.uber.org/automaxprocs v1.6.0")),
        "{}",
        rt["maxprocs"]
    );
    assert!(
        evidence("memlimit").contains("links github.com/KimMachineGun/automemlimit v0.7.1"),
        "{}",
        rt["memlimit"]
    );
    assert!(
        rt["memlimit"]["sizes_gomemlimit"]
            .as_str()
            .is_some_and(|s| s.contains("github.com/KimMachineGun/automemlimit v0.7.1")),
        "{}",
        rt["memlimit"]
    );
    assert!(evidence("memenv").contains("ENV GOMEMLIMIT=400MiB"));
    assert_eq!(
        lang("python").as_deref(),
        Some("python"),
        "{}",
        rt["python"]
    );
    assert_eq!(
        lang("script").as_deref(),
        Some("python"),
        "{}",
        rt["script"]
    );
    assert!(
        evidence("script").contains("a script for /usr/bin/env python3"),
        "{}",
        rt["script"]
    );
    // The lower layer's binary is hidden by the whiteout: nothing found, the manifest decides.
    assert_eq!(lang("whiteout"), None, "{}", rt["whiteout"]);
    assert!(
        evidence("whiteout").contains("/app/server is not in the image"),
        "{}",
        rt["whiteout"]
    );
    // The opaque directory hides the lower binary but keeps its own layer's script.
    assert_eq!(
        lang("opaque").as_deref(),
        Some("python"),
        "{}",
        rt["opaque"]
    );

    // The findings follow the facts.
    let lint = golint(&cache, &["--inspect-images", "--format", "json"], &manifest);
    assert_eq!(lint.code, 1, "{}", lint.stderr);
    let f = findings(&lint);
    let has = |c: &str, code: &str| f.get(c).is_some_and(|v| v.iter().any(|x| x == code));
    assert!(has("go124", "GK201") && has("go124", "GK101"), "{f:?}");
    assert!(!has("go126", "GK201") && has("go126", "GK101"), "{f:?}");
    assert!(!has("maxprocs", "GK201"), "{f:?}");
    // automemlimit sets GOMEMLIMIT from the cgroup's limit; its go 1.24 line keeps GK201.
    assert!(
        !has("memlimit", "GK101") && has("memlimit", "GK201"),
        "{f:?}"
    );
    assert!(!has("memenv", "GK101") && has("memenv", "GK201"), "{f:?}");
    for c in ["python", "script", "opaque"] {
        assert!(!has(c, "GK201") && !has(c, "GK101"), "{c}: {f:?}");
    }

    // Cached: no blob requested, and no manifest either (the tags' digests are fresh).
    let (blobs, lines) = (reg.blob_gets(), reg.lines());
    let warm = golint(
        &cache,
        &["--inspect-images", "--show-containers", "--format", "json"],
        &manifest,
    );
    assert_eq!(warm.code, 0, "{}", warm.stderr);
    assert_eq!(reg.blob_gets(), blobs, "the second run read blobs");
    assert_eq!(reg.lines(), lines, "the second run asked the registry");
    assert_eq!(runtimes(&warm), rt);

    // The language server, with `inspect-images: true` in the config: the cache's facts, and no
    // request to the registry. Go 1.26 sizes GOMAXPROCS itself, so no GK201 for its image; an
    // image the cache does not hold is judged from the manifest (GK201).
    let editor = dir.join("editor");
    std::fs::create_dir(&editor).unwrap();
    std::fs::write(editor.join(".golint-k8s.yaml"), "inspect-images: true\n").unwrap();
    let go126_image = &images.iter().find(|(n, _)| *n == "go126").unwrap().1;
    let uncached = format!("{}/never-pushed:v1", reg.addr);
    let doc = editor.join("deploy.yaml");
    let text = deployment(&[("go126", go126_image), ("other", &uncached)]);
    let codes = lsp_codes(&cache, &doc, &text);
    assert!(
        codes
            .iter()
            .any(|(line, c)| c == "GK201"
                && text.lines().nth(*line).is_some_and(|l| l.contains("cpu"))),
        "{codes:?}"
    );
    assert_eq!(
        codes.iter().filter(|(_, c)| c == "GK201").count(),
        1,
        "only the uncached image's container: {codes:?}"
    );
    assert_eq!(reg.lines(), lines, "the language server asked the registry");

    // Another platform of the index.
    let only_multi = dir.join("multi.yaml");
    std::fs::write(&only_multi, deployment(&[("multi", &index)])).unwrap();
    let arm_run = golint(
        &cache,
        &[
            "--inspect-images",
            "--platform",
            "linux/arm64",
            "--show-containers",
            "--format",
            "json",
        ],
        &only_multi,
    );
    assert_eq!(
        runtimes(&arm_run)["multi"]["language"],
        "python",
        "{}",
        arm_run.stdout
    );

    // `fix` follows the facts: the Go 1.24 image gets GOMAXPROCS and GOMEMLIMIT; a Python image
    // under a name that says nothing gets no Go setting. From the manifest alone both are of
    // unknown runtime, and neither gets one.
    let svc = crane.image("svc", &[&lpy], &["--entrypoint", "python3,/app/main.py"]);
    let go124_image = &images.iter().find(|(n, _)| *n == "go124").unwrap().1;
    let fix_text = deployment(&[("gosvc", go124_image), ("pysvc", &svc)]);
    let fix = |inspect: bool| {
        let path = dir.join(format!("fix-{inspect}.yaml"));
        std::fs::write(&path, &fix_text).unwrap();
        allow_loopback(dir);
        let mut c = Command::new(env!("CARGO_BIN_EXE_golint-k8s"));
        c.arg("fix")
            .arg(&path)
            .env("GOLINT_K8S_CACHE", dir.join("cache-fix"));
        if inspect {
            c.arg("--inspect-images");
        }
        let out = c.output().unwrap();
        assert!(
            out.status.code() != Some(2),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        std::fs::read_to_string(&path).unwrap()
    };
    let py_part = |text: &str| text[text.find("- name: pysvc").unwrap()..].to_string();
    let fixed = fix(true);
    let go_part = &fixed[..fixed.find("- name: pysvc").unwrap()];
    assert!(
        go_part.contains("GOMAXPROCS") && go_part.contains("GOMEMLIMIT"),
        "{fixed}"
    );
    assert_eq!(py_part(&fixed), py_part(&fix_text), "{fixed}");
    // The manifest alone settles neither container: no Go setting is added to either.
    let unread = fix(false);
    assert!(!unread.contains("GOMEMLIMIT"), "{unread}");

    // Only the layers down to the entrypoint were read.
    let sizes = cached_sizes(&cache);
    for (digest, read, size, entrypoint) in &sizes {
        println!("image {digest}: read {read} of {size} layer bytes, entrypoint {entrypoint}");
    }
    let big = sizes
        .iter()
        .find(|(_, _, size, _)| *size > 4 << 20)
        .expect("the big image's facts are cached");
    assert!(big.1 * 2 < big.2, "read {} of {} bytes", big.1, big.2);
    println!(
        "cold run {:?} ({cold_blobs} blob requests), cached run {:?} (0 blob requests)",
        cold.took, warm.took
    );
}

#[test]
fn offline_and_unreachable_registries_are_notes() {
    let work = tempfile::tempdir().unwrap();
    let manifest = work.path().join("deploy.yaml");
    std::fs::write(
        &manifest,
        deployment(&[("app", "127.0.0.1:1/nothing/here:v1")]),
    )
    .unwrap();
    let cache = work.path().join("empty-cache");

    let offline = golint(
        &cache,
        &[
            "--inspect-images",
            "--offline",
            "--show-containers",
            "--format",
            "json",
        ],
        &manifest,
    );
    assert_eq!(offline.code, 0, "{}", offline.stderr);
    assert!(offline.stderr.contains("--offline"), "{}", offline.stderr);
    let rt = runtimes(&offline);
    assert!(
        rt["app"]["evidence"]
            .as_str()
            .unwrap()
            .contains("the image was not read: --offline"),
        "{}",
        rt["app"]
    );

    let down = golint(&cache, &["--inspect-images", "--format", "json"], &manifest);
    assert_ne!(down.code, 2, "{}", down.stderr);
    assert!(
        down.stderr
            .contains("note: image 127.0.0.1:1/nothing/here:v1 was not inspected"),
        "{}",
        down.stderr
    );
    assert!(down.took < Duration::from_secs(10), "took {:?}", down.took);
    let f = findings(&down);
    assert!(f["app"].iter().any(|c| c == "GK201"), "{f:?}");

    // `inspect-images: true` in the config does what the flag does, for its files.
    std::fs::write(
        work.path().join(".golint-k8s.yaml"),
        "inspect-images: true\n",
    )
    .unwrap();
    let by_config = golint(&cache, &["--format", "json"], &manifest);
    assert!(
        by_config
            .stderr
            .contains("note: image 127.0.0.1:1/nothing/here:v1 was not inspected"),
        "{}",
        by_config.stderr
    );
    std::fs::write(
        work.path().join(".golint-k8s.yaml"),
        "inspect-images: false\n",
    )
    .unwrap();
    let off = golint(&cache, &["--format", "json"], &manifest);
    assert!(!off.stderr.contains("not inspected"), "{}", off.stderr);
}

/// The (line, code) of each diagnostic `golint-k8s lsp` publishes for `text` opened as `doc`.
fn lsp_codes(cache: &Path, doc: &Path, text: &str) -> Vec<(usize, String)> {
    use std::io::{BufRead, BufReader, Read, Write};
    let mut server = Command::new(env!("CARGO_BIN_EXE_golint-k8s"))
        .arg("lsp")
        .env("GOLINT_K8S_CACHE", cache)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = server.stdin.take().unwrap();
    let stdout = server.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel::<Value>();
    std::thread::spawn(move || {
        let mut r = BufReader::new(stdout);
        loop {
            let mut length = None;
            loop {
                let mut line = String::new();
                if r.read_line(&mut line).unwrap_or(0) == 0 {
                    return;
                }
                let line = line.trim_end();
                if line.is_empty() {
                    break;
                }
                if let Some(n) = line.strip_prefix("Content-Length: ") {
                    length = n.parse::<usize>().ok();
                }
            }
            let mut body = vec![0; length.unwrap()];
            if r.read_exact(&mut body).is_err() {
                return;
            }
            if tx.send(serde_json::from_slice(&body).unwrap()).is_err() {
                return;
            }
        }
    });
    let mut send = |v: Value| {
        let body = v.to_string();
        write!(stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
        stdin.flush().unwrap();
    };
    let uri = format!("file://{}", doc.display());
    send(
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"processId": null, "rootUri": null, "capabilities": {}}}),
    );
    send(serde_json::json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}));
    send(
        serde_json::json!({"jsonrpc": "2.0", "method": "textDocument/didOpen",
        "params": {"textDocument": {"uri": uri, "languageId": "yaml", "version": 1, "text": text}}}),
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    let published = loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let msg = rx
            .recv_timeout(left)
            .expect("no diagnostics from the language server");
        if msg["method"] == "textDocument/publishDiagnostics" && msg["params"]["uri"] == uri {
            break msg;
        }
    };
    send(serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}));
    send(serde_json::json!({"jsonrpc": "2.0", "method": "exit"}));
    drop(stdin);
    let _ = server.wait();
    published["params"]["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["range"]["start"]["line"].as_u64().unwrap() as usize,
                d["code"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}
