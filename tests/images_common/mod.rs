//! What the image tests share: a lint run's output, its runtimes and findings by container, a
//! Deployment of given images, a gzip layer of given files, a registry on loopback, a small Go
//! program built once, and images made of layers with crane.
#![allow(dead_code)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// A Go program with no dependencies.
pub const PLAIN_GO: &str = include_str!("../buildinfo-progs/plain/main.go");

pub struct Lint {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
    pub took: Duration,
}

/// Container name → its `runtime` object, from `--show-containers --format json`.
pub fn runtimes(l: &Lint) -> HashMap<String, Value> {
    let doc: Value = serde_json::from_str(&l.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", l.stdout, l.stderr));
    doc["containers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["container"].as_str().unwrap().to_string(),
                c["runtime"].clone(),
            )
        })
        .collect()
}

/// Container name → the codes of its findings, from `--format json`.
pub fn findings(l: &Lint) -> HashMap<String, Vec<String>> {
    let doc: Value = serde_json::from_str(&l.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", l.stdout, l.stderr));
    let mut out: HashMap<String, Vec<String>> = HashMap::new();
    for f in doc["findings"].as_array().unwrap() {
        let c = f["container"].as_str().unwrap_or("").to_string();
        out.entry(c)
            .or_default()
            .push(f["code"].as_str().unwrap().to_string());
    }
    out
}

pub fn deployment(containers: &[(&str, &str)]) -> String {
    let mut s = String::from(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      containers:\n",
    );
    for (name, image) in containers {
        s.push_str(&format!(
            "      - name: {name}\n        image: {image}\n        resources:\n          limits: {{cpu: \"2\", memory: 512Mi}}\n"
        ));
    }
    s
}

/// A gzip-compressed layer of `(path, bytes)` entries, written to `dir/name`.
pub fn layer(dir: &Path, name: &str, entries: &[(&str, &[u8])]) -> PathBuf {
    let path = dir.join(name);
    let gz = flate2::write::GzEncoder::new(
        std::fs::File::create(&path).unwrap(),
        flate2::Compression::fast(),
    );
    let mut b = tar::Builder::new(gz);
    for (p, data) in entries {
        let mut h = tar::Header::new_gnu();
        h.set_size(data.len() as u64);
        h.set_mode(0o755);
        h.set_cksum();
        b.append_data(&mut h, p, *data).unwrap();
    }
    b.into_inner().unwrap().finish().unwrap();
    path
}

/// Lets a lint of the files in `dir` read registries (and token services) on loopback, which it
/// refuses unless the config lists them (docs/images.md). A config already there is left as it is.
pub fn allow_loopback(dir: &Path) {
    let cfg = dir.join(".golint-k8s.yaml");
    if !cfg.exists() {
        std::fs::write(cfg, "image-registries: [\"127.0.0.1\", localhost]\n").unwrap();
    }
}

/// A child process stopped when the test ends, however it ends.
pub struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Start `cmd` with its stderr in `log`, and wait for `find` to see the address in the log.
pub fn serve(
    mut cmd: Command,
    log: &Path,
    find: impl Fn(&str) -> Option<String>,
) -> (Server, String) {
    let file = std::fs::File::create(log).unwrap();
    let child = cmd
        .stdout(Stdio::null())
        .stderr(file)
        .spawn()
        .expect("start a registry");
    let server = Server(child);
    let started = Instant::now();
    loop {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        if let Some(addr) = text.lines().find_map(&find) {
            return (server, addr);
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the registry did not start: {text}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

pub fn crane_registry(crane: &Path, dir: &Path) -> (Server, String) {
    let mut cmd = Command::new(crane);
    cmd.args(["registry", "serve", "--address", "127.0.0.1:0"]);
    serve(cmd, &dir.join("crane.log"), |l| {
        let port = l.split("serving on port ").nth(1)?;
        Some(format!("127.0.0.1:{}", port.trim()))
    })
}

pub fn run(cmd: &mut Command, what: &str) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(
        out.status.success(),
        "{what} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `go` in `dir` with the local toolchain, CGO off, modules in the tests' cache.
pub fn go(dir: &Path, args: &[&str]) -> Command {
    let mut c = Command::new("go");
    c.args(args)
        .current_dir(dir)
        .env("GOTOOLCHAIN", "local")
        .env("CGO_ENABLED", "0")
        .env(
            "GOMODCACHE",
            crate::common::user_cache("buildinfo").join("mod"),
        )
        .env("GOFLAGS", "-mod=mod -modcacherw")
        .env("GOWORK", "off");
    c
}

/// Where to build `name` before renaming it into the cache: a name of its own per build, as the
/// tests of one binary (images, their failures, the cluster) may build the same program at once.
pub fn part_path(cache: &Path, name: &str) -> PathBuf {
    static BUILDS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = BUILDS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    cache.join(format!(".{name}-{}-{n}.part", std::process::id()))
}

/// A Go program of one `main.go` and the standard library, its go.mod at `go_line`, built once
/// and cached between runs (by its source).
pub fn go_program(name: &str, main_go: &str, go_line: &str) -> PathBuf {
    let cache = crate::common::user_cache("image-progs");
    std::fs::create_dir_all(&cache).unwrap();
    let tag: u64 = format!("{main_go}\n{go_line}")
        .bytes()
        .fold(0xcbf29ce484222325, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x100000001b3)
        });
    let bin = cache.join(format!("{name}-{tag:016x}"));
    if bin.exists() {
        return bin;
    }
    let src = tempfile::tempdir().unwrap();
    std::fs::write(src.path().join("main.go"), main_go).unwrap();
    std::fs::write(
        src.path().join("go.mod"),
        format!("module example.com/{name}\n\ngo {go_line}\n"),
    )
    .unwrap();
    let part = part_path(&cache, name);
    run(
        &mut go(src.path(), &["build", "-o", part.to_str().unwrap(), "."]),
        &format!("go build ({name})"),
    );
    std::fs::rename(&part, &bin).unwrap();
    bin
}

/// [`PLAIN_GO`] built with go.mod at `go 1.26`: its bytes.
pub fn go_binary() -> Vec<u8> {
    std::fs::read(go_program("plain", PLAIN_GO, "1.26")).unwrap()
}

/// A CNCF distribution registry on loopback with `auth` (the YAML under `auth:`, indented by
/// four spaces), storing below `dir`.
pub fn distribution_registry(registry: &Path, dir: &Path, auth: &str) -> (Server, String) {
    let config = dir.join("registry.yml");
    std::fs::write(
        &config,
        format!(
            "version: 0.1\nlog:\n  level: info\nstorage:\n  filesystem:\n    rootdirectory: {}\n\
             http:\n  addr: 127.0.0.1:0\n  secret: golint-k8s-test\nauth:\n{auth}",
            dir.join("data").display(),
        ),
    )
    .unwrap();
    let mut cmd = Command::new(registry);
    cmd.arg("serve").arg(&config);
    serve(cmd, &dir.join("distribution.log"), |l| {
        let rest = l.split("listening on ").nth(1)?;
        Some(rest.split(['"', ' ']).next()?.to_string())
    })
}

/// `crane append` then `crane mutate`: an image of `layers` at `reg/name:v1`. `config` is the
/// Docker config directory crane reads credentials from, if any.
pub fn image(
    crane: &Path,
    config: Option<&Path>,
    reg: &str,
    name: &str,
    layers: &[&Path],
    mutate: &[&str],
) -> String {
    let cmd = |args: &[&str]| {
        let mut c = Command::new(crane);
        c.args(args);
        if let Some(dir) = config {
            c.env("DOCKER_CONFIG", dir);
        }
        c
    };
    let base = format!("{reg}/{name}:base");
    let mut c = cmd(&["append", "-t", &base]);
    for l in layers {
        c.arg("-f").arg(l);
    }
    run(&mut c, &format!("crane append {name}"));
    let tag = format!("{reg}/{name}:v1");
    let mut args = vec!["mutate", base.as_str(), "-t", tag.as_str()];
    args.extend_from_slice(mutate);
    run(&mut cmd(&args), &format!("crane mutate {name}"));
    tag
}
