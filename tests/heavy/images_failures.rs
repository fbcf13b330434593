//! `lint --inspect-images` when reading an image fails: each failure is a `note:` on stderr and
//! the container's evidence, the manifest-based findings stay, the exit code is 0 or 1 (never 2),
//! and nothing hangs.
//!
//! A real `crane registry serve` on loopback holds the images; a small proxy written here (threads
//! over std's TcpListener) stands in front of it, counts the requests and answers chosen paths
//! itself: 401 with a Basic challenge, 403 with a DENIED error, a layer cut short, a layer of
//! garbage, a layer that stops arriving half-way. crane's own 404s serve a missing tag and a
//! missing repository; a text file as the entrypoint and an entrypoint in no layer are images
//! like any other.
//!
//! Credentials: a CNCF distribution registry with htpasswd authentication (its bcrypt line made
//! here by a tiny Go program), the image pushed with crane through a Docker config holding the
//! user's credentials; read without a Docker config it is a 401 note, with wrong ones a 401 note
//! that says they were sent, with the right ones (`auth`, `username`/`password`, or a `credsStore`
//! helper on PATH) it is judged; a helper that never answers costs one timeout. Bearer tokens:
//! the same registry with token authentication, and a token service built here from
//! `tests/token-server` (Go's standard library only), as Docker Hub and GHCR work.
//!
//! Without `go` or the test tools outside CI, the tests print one line saying they did not run.
#![cfg(feature = "images")]

use crate::common;
use crate::tools;

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::images_common::{
    allow_loopback, crane_registry, deployment, distribution_registry, findings, go, go_binary,
    go_program, image, layer, run, runtimes, serve, Lint,
};
use serde_json::Value;

fn tools_and_go() -> Option<tools::Tools> {
    if !common::go_available() {
        if std::env::var_os("CI").is_some_and(|v| !v.is_empty()) {
            panic!("CI must run tests/images_failures.rs, but there is no go command");
        }
        println!("images_failures: did not run: no go command on PATH");
        return None;
    }
    tools::ensure()
}

/// An htpasswd line (bcrypt, as distribution requires) made with golang.org/x/crypto/bcrypt.
fn htpasswd(user: &str, password: &str) -> String {
    let src = tempfile::tempdir().unwrap();
    std::fs::write(
        src.path().join("main.go"),
        "package main\n\nimport (\n\t\"fmt\"\n\t\"os\"\n\n\t\"golang.org/x/crypto/bcrypt\"\n)\n\n\
         func main() {\n\th, err := bcrypt.GenerateFromPassword([]byte(os.Args[2]), bcrypt.MinCost)\n\
         \tif err != nil {\n\t\tpanic(err)\n\t}\n\tfmt.Printf(\"%s:%s\\n\", os.Args[1], h)\n}\n",
    )
    .unwrap();
    std::fs::write(
        src.path().join("go.mod"),
        "module example.com/htpasswd\n\ngo 1.24\n\nrequire golang.org/x/crypto v0.57.0\n",
    )
    .unwrap();
    run(
        &mut go(src.path(), &["mod", "tidy"]),
        "go mod tidy (htpasswd)",
    );
    run(
        &mut go(src.path(), &["run", ".", user, password]),
        "htpasswd",
    )
}

/// The digest and bytes of an image's top layer, as the registry serves them.
fn top_layer(crane: &Path, tag: &str) -> (String, Vec<u8>) {
    let manifest: Value = serde_json::from_str(&run(
        Command::new(crane).args(["manifest", tag]),
        "crane manifest",
    ))
    .unwrap();
    let digest = manifest["layers"].as_array().unwrap().last().unwrap()["digest"]
        .as_str()
        .unwrap()
        .to_string();
    let repo = tag.rsplit_once(':').unwrap().0;
    let out = Command::new(crane)
        .args(["blob", &format!("{repo}@{digest}")])
        .output()
        .unwrap();
    assert!(out.status.success(), "crane blob");
    (digest, out.stdout)
}

/// What the proxy answers for a path instead of the registry.
#[derive(Clone)]
enum Fault {
    /// 401 with `WWW-Authenticate: Basic realm=…`.
    Unauthorized,
    /// 403 with a DENIED error.
    Forbidden,
    /// The blob's headers (its full length) and its first half, then the connection closes.
    Cut(Arc<Vec<u8>>),
    /// Gzip's magic number, then bytes that are no deflate stream, as long as the blob.
    Garbage(usize),
    /// The blob's headers and its first half, then nothing more: the connection stays open.
    Stall(Arc<Vec<u8>>),
    /// These bytes instead of the blob, whole.
    Serve(Arc<Vec<u8>>),
}

/// A counting, faulting HTTP proxy on loopback in front of `upstream`.
struct Proxy {
    addr: String,
    /// Request lines ("GET /v2/…") as they arrived.
    seen: Arc<Mutex<Vec<String>>>,
}

impl Proxy {
    fn start(upstream: String, faults: Vec<(String, Fault)>) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = seen.clone();
        let faults = Arc::new(faults);
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(conn) = conn else { continue };
                let (upstream, faults, log) = (upstream.clone(), faults.clone(), log.clone());
                std::thread::spawn(move || {
                    let _ = handle(conn, &upstream, &faults, &log);
                });
            }
        });
        Proxy { addr, seen }
    }

    fn count(&self, part: &str) -> usize {
        self.seen
            .lock()
            .unwrap()
            .iter()
            .filter(|l| l.contains(part))
            .count()
    }
}

/// One request per connection: the answers say `Connection: close`.
fn handle(
    mut conn: TcpStream,
    upstream: &str,
    faults: &[(String, Fault)],
    seen: &Mutex<Vec<String>>,
) -> std::io::Result<()> {
    conn.set_read_timeout(Some(Duration::from_secs(10)))?;
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if conn.read(&mut byte)? == 0 {
            return Ok(());
        }
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head).into_owned();
    let line = head.lines().next().unwrap_or("").to_string();
    seen.lock().unwrap().push(line.clone());
    let path = line.split(' ').nth(1).unwrap_or("");
    let is_head = line.starts_with("HEAD ");
    let fault = faults
        .iter()
        .find(|(p, _)| path.contains(p.as_str()))
        .map(|(_, f)| f.clone());
    let answer = |conn: &mut TcpStream, status: &str, extra: &str, body: &[u8]| {
        let head = format!(
            "HTTP/1.1 {status}\r\n{extra}Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        );
        conn.write_all(head.as_bytes())?;
        if !is_head {
            conn.write_all(body)?;
        }
        conn.flush()
    };
    let blob_head = |len: usize| {
        format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: {len}\r\nConnection: close\r\n\r\n"
        )
    };
    match fault {
        Some(Fault::Unauthorized) => answer(
            &mut conn,
            "401 Unauthorized",
            "WWW-Authenticate: Basic realm=\"golint-k8s test\"\r\n",
            br#"{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}"#,
        ),
        Some(Fault::Forbidden) => answer(
            &mut conn,
            "403 Forbidden",
            "",
            br#"{"errors":[{"code":"DENIED","message":"requested access to the resource is denied"}]}"#,
        ),
        Some(Fault::Garbage(len)) => {
            let mut body = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3];
            let mut x: u32 = 0x2545f491;
            while body.len() < len {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                body.push(x as u8);
            }
            conn.write_all(blob_head(len).as_bytes())?;
            conn.write_all(&body)
        }
        Some(Fault::Cut(blob)) => {
            conn.write_all(blob_head(blob.len()).as_bytes())?;
            conn.write_all(&blob[..blob.len() / 2])?;
            conn.flush()?;
            conn.shutdown(Shutdown::Both)
        }
        Some(Fault::Serve(blob)) => {
            conn.write_all(blob_head(blob.len()).as_bytes())?;
            conn.write_all(&blob)?;
            conn.flush()
        }
        Some(Fault::Stall(blob)) => {
            conn.write_all(blob_head(blob.len()).as_bytes())?;
            conn.write_all(&blob[..blob.len() / 2])?;
            conn.flush()?;
            // Longer than the lint may take; the test process's end closes it.
            std::thread::sleep(Duration::from_secs(120));
            Ok(())
        }
        None => {
            let mut up = TcpStream::connect(upstream)?;
            let mut request = String::new();
            for l in head.split("\r\n").filter(|l| !l.is_empty()) {
                if !l.to_ascii_lowercase().starts_with("connection:") {
                    request.push_str(l);
                    request.push_str("\r\n");
                }
            }
            request.push_str("Connection: close\r\n\r\n");
            up.write_all(request.as_bytes())?;
            std::io::copy(&mut up, &mut conn)?;
            conn.flush()
        }
    }
}

fn golint(cache: &Path, docker_config: &Path, args: &[&str], manifest: &Path) -> Lint {
    golint_in(
        Command::new(env!("CARGO_BIN_EXE_golint-k8s")),
        cache,
        docker_config,
        args,
        manifest,
    )
}

fn golint_in(
    mut cmd: Command,
    cache: &Path,
    docker_config: &Path,
    args: &[&str],
    manifest: &Path,
) -> Lint {
    allow_loopback(manifest.parent().unwrap());
    let started = Instant::now();
    let out = cmd
        .arg("lint")
        .args(args)
        .arg(manifest)
        .env("GOLINT_K8S_CACHE", cache)
        .env("DOCKER_CONFIG", docker_config)
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

/// The stderr line that notes `image`.
fn note<'a>(l: &'a Lint, image: &str) -> &'a str {
    let want = format!("note: image {image} was not inspected: ");
    l.stderr
        .lines()
        .find(|line| line.starts_with(&want))
        .unwrap_or_else(|| panic!("no note for {image}:\n{}", l.stderr))
}

#[test]
fn registry_failures_are_notes() {
    let Some(tools) = tools_and_go() else { return };
    let crane = tools.crane.as_path();
    let work = tempfile::tempdir().unwrap();
    let dir = work.path();
    let (_registry, upstream) = crane_registry(crane, dir);

    let bin = go_binary();
    let ep = ["--entrypoint", "/app/server"];
    // A layer per image: the faults are chosen by blob digest.
    let lgo = |name: &str| layer(dir, &format!("{name}.tgz"), &[("app/server", &bin)]);
    let ok = image(crane, None, &upstream, "ok", &[&lgo("ok")], &ep);
    for name in ["auth401", "forbidden"] {
        image(crane, None, &upstream, name, &[&lgo(name)], &ep);
    }
    let mut broken = HashMap::new();
    for name in ["corrupt", "truncated", "stalled"] {
        // The name in the layer makes its digest differ from the others'.
        let l = layer(
            dir,
            &format!("{name}.tgz"),
            &[("app/name", name.as_bytes()), ("app/server", &bin)],
        );
        let tag = image(crane, None, &upstream, name, &[&l], &ep);
        broken.insert(name, top_layer(crane, &tag));
    }
    let text = layer(
        dir,
        "text.tgz",
        &[("app/server", b"this is a text file, not a program\n")],
    );
    image(crane, None, &upstream, "nonelf", &[&text], &ep);
    image(
        crane,
        None,
        &upstream,
        "noentry",
        &[&lgo("noentry")],
        &["--entrypoint", "/app/absent"],
    );
    assert!(ok.ends_with("/ok:v1"));

    let blob = |name: &str| format!("/v2/{name}/blobs/{}", broken[name].0);
    let proxy = Proxy::start(
        upstream.clone(),
        vec![
            ("/v2/auth401/".into(), Fault::Unauthorized),
            ("/v2/forbidden/".into(), Fault::Forbidden),
            (blob("corrupt"), Fault::Garbage(broken["corrupt"].1.len())),
            (
                blob("truncated"),
                Fault::Cut(Arc::new(broken["truncated"].1.clone())),
            ),
            (
                blob("stalled"),
                Fault::Stall(Arc::new(broken["stalled"].1.clone())),
            ),
        ],
    );
    let p = &proxy.addr;
    let refs: Vec<(&str, String)> = [
        ("ok", "ok:v1"),
        ("auth401", "auth401:v1"),
        ("forbidden", "forbidden:v1"),
        ("notag", "ok:no-such-tag"),
        ("norepo", "no-such-repo:v1"),
        ("corrupt", "corrupt:v1"),
        ("truncated", "truncated:v1"),
        ("stalled", "stalled:v1"),
        ("nonelf", "nonelf:v1"),
        ("noentry", "noentry:v1"),
    ]
    .into_iter()
    .map(|(c, r)| (c, format!("{p}/{r}")))
    .collect();
    let containers: Vec<(&str, &str)> = refs.iter().map(|(c, r)| (*c, r.as_str())).collect();
    let image_of: HashMap<&str, &str> = containers.iter().copied().collect();
    let manifest = dir.join("deploy.yaml");
    std::fs::write(&manifest, deployment(&containers)).unwrap();
    let cache = dir.join("cache");
    // No Docker config: anonymous.
    let no_config = dir.join("no-docker-config");

    let show = golint(
        &cache,
        &no_config,
        &[
            "--inspect-images",
            "--registry-timeout",
            "3",
            "--show-containers",
            "--format",
            "json",
        ],
        &manifest,
    );
    println!("--show-containers run: exit {}, {:?}", show.code, show.took);
    println!("stderr:\n{}", show.stderr);
    assert!(show.code == 0 || show.code == 1, "{}", show.stderr);
    // The stalled layer costs one read timeout (3 s), not the run.
    assert!(show.took < Duration::from_secs(25), "took {:?}", show.took);
    let rt = runtimes(&show);
    for (c, _) in &refs {
        println!("{c}: {}", rt[*c]);
    }
    assert_eq!(rt["ok"]["language"], "go", "{}", rt["ok"]);
    let evidence = |c: &str| rt[c]["evidence"].as_str().unwrap_or("").to_string();

    // Each failure: its note, and the same words in the container's evidence.
    let expect = [
        (
            "auth401",
            "refused access (HTTP 401 Unauthorized for /v2/auth401/manifests/v1): no credentials for",
        ),
        (
            "forbidden",
            "refused access (DENIED: requested access to the resource is denied",
        ),
        ("notag", "not found"),
        ("norepo", "not found"),
        ("corrupt", "corrupt"),
        ("truncated", "broke off after"),
        ("stalled", "broke off after"),
    ];
    for (c, words) in expect {
        let line = note(&show, image_of[c]);
        println!("{c}: {line}");
        assert!(line.contains(words), "{c}: {line}");
        assert!(
            evidence(c).contains("the image was not read: ") && evidence(c).contains(words),
            "{c}: {}",
            rt[c]
        );
        assert!(rt[c]["language"].is_null() || rt[c]["language"] == "go");
    }
    assert!(note(&show, image_of["stalled"]).contains("timed out"));
    // Read, but without a runtime: a note and the evidence say why; nothing was a failure.
    for (c, why) in [
        ("nonelf", "neither an ELF executable nor a script"),
        ("noentry", "is not in the image"),
    ] {
        let said = format!("note: image {} did not show its runtime: ", image_of[c]);
        assert!(
            show.stderr
                .lines()
                .any(|l| l.starts_with(&said) && l.contains(why)),
            "{c}: {}",
            show.stderr
        );
    }
    assert!(
        evidence("nonelf")
            .contains("its entrypoint /app/server is neither an ELF executable nor a script"),
        "{}",
        rt["nonelf"]
    );
    assert!(
        evidence("noentry").contains("the entrypoint /app/absent is not in the image"),
        "{}",
        rt["noentry"]
    );
    for c in ["nonelf", "noentry", "ok"] {
        assert!(
            !show.stderr.contains(&format!("image {} was", image_of[c])),
            "{c}: {}",
            show.stderr
        );
    }
    // The proxy saw the faulted requests.
    assert!(proxy.count("/v2/auth401/") >= 1);
    assert!(proxy.count("/v2/forbidden/") >= 1);
    assert_eq!(proxy.count(&blob("stalled")), 1);

    // A normal lint: the manifest-based findings for every container the image did not decide.
    let lint = golint(
        &cache,
        &no_config,
        &[
            "--inspect-images",
            "--registry-timeout",
            "3",
            "--format",
            "json",
        ],
        &manifest,
    );
    assert_eq!(lint.code, 1, "{}", lint.stderr);
    let f = findings(&lint);
    println!("findings: {f:?}");
    for (c, _) in &refs {
        assert!(
            f.get(*c).is_some_and(|v| v.iter().any(|x| x == "GK101")),
            "{c}: {f:?}"
        );
    }
    for (c, _) in expect {
        assert!(
            f[c].iter().any(|x| x == "GK201"),
            "{c}: the manifest's finding is gone: {f:?}"
        );
    }
}

/// A Docker config directory holding `auths.<registry>` as written.
fn docker_config(dir: &Path, registry: &str, entry: Value) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let config = serde_json::json!({ "auths": { registry: entry } });
    std::fs::write(dir.join("config.json"), config.to_string()).unwrap();
    dir.to_path_buf()
}

fn base64(bytes: &[u8]) -> String {
    const ABC: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut s = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                s.push(ABC[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                s.push('=');
            }
        }
    }
    s
}

#[test]
fn credentials_come_from_the_docker_config() {
    let Some(tools) = tools_and_go() else { return };
    let work = tempfile::tempdir().unwrap();
    let dir = work.path();
    let (user, password) = ("alice", "golint-test-password");
    let htpasswd_file = dir.join("htpasswd");
    std::fs::write(&htpasswd_file, htpasswd(user, password)).unwrap();
    let (_registry, reg) = distribution_registry(
        &tools.distribution_registry,
        dir,
        &format!(
            "  htpasswd:\n    realm: golint-k8s-test\n    path: {}\n",
            htpasswd_file.display()
        ),
    );

    // The `auth` form for crane's push; the lint is tried with both forms.
    let auth = base64(format!("{user}:{password}").as_bytes());
    let with_auth = docker_config(&dir.join("auth"), &reg, serde_json::json!({ "auth": auth }));
    let with_fields = docker_config(
        &dir.join("fields"),
        &reg,
        serde_json::json!({ "username": user, "password": password }),
    );
    let wrong = docker_config(
        &dir.join("wrong"),
        &reg,
        serde_json::json!({ "username": user, "password": "not-the-password" }),
    );
    let no_config = dir.join("none");

    let bin = go_binary();
    let l = layer(dir, "go.tgz", &[("app/server", &bin)]);
    let tag = image(
        &tools.crane,
        Some(&with_auth),
        &reg,
        "private",
        &[&l],
        &["--entrypoint", "/app/server"],
    );
    let manifest = dir.join("deploy.yaml");
    std::fs::write(&manifest, deployment(&[("app", &tag)])).unwrap();
    let args = ["--inspect-images", "--show-containers", "--format", "json"];

    // Without credentials: a 401 note, and the manifest's view.
    let anon = golint(&dir.join("cache-anon"), &no_config, &args, &manifest);
    println!("anonymous: exit {}, stderr:\n{}", anon.code, anon.stderr);
    assert!(anon.code == 0 || anon.code == 1, "{}", anon.stderr);
    let line = note(&anon, &tag);
    assert!(
        line.contains("refused access (HTTP 401 Unauthorized for /v2/private/manifests/v1): no credentials for"),
        "{line}"
    );
    assert!(runtimes(&anon)["app"]["evidence"]
        .as_str()
        .unwrap()
        .contains("the image was not read: "));

    // Wrong credentials: a 401 note that says they were sent.
    let bad = golint(&dir.join("cache-wrong"), &wrong, &args, &manifest);
    println!("wrong password: exit {}, stderr:\n{}", bad.code, bad.stderr);
    let line = note(&bad, &tag);
    assert!(
        line.contains(&format!(
            "the Docker config's credentials for {reg} (user alice) were sent"
        )),
        "{line}"
    );

    // Right credentials, either form: the image is read and judged.
    for (form, config) in [("auth", &with_auth), ("username/password", &with_fields)] {
        let good = golint(
            &dir.join(format!("cache-{}", form.len())),
            config,
            &args,
            &manifest,
        );
        assert_eq!(good.code, 0, "{form}: {}", good.stderr);
        assert!(
            !good.stderr.contains("not inspected"),
            "{form}: {}",
            good.stderr
        );
        let rt = runtimes(&good);
        assert_eq!(rt["app"]["language"], "go", "{form}: {}", rt["app"]);
        assert!(
            rt["app"]["evidence"]
                .as_str()
                .unwrap()
                .contains("from image sha256:"),
            "{form}: {}",
            rt["app"]
        );
        println!("{form}: {}", rt["app"]);
    }
    // A credential helper (`credsStore`), a program on PATH; and one that never answers.
    let helpers = dir.join("helpers");
    std::fs::create_dir_all(&helpers).unwrap();
    let script = |name: &str, body: &str| {
        let path = helpers.join(format!("docker-credential-{name}"));
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        let mut perms = std::fs::metadata(&path).unwrap().permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
        std::fs::set_permissions(&path, perms).unwrap();
    };
    script(
        "golinttest",
        &format!(
            "read server\n[ \"$server\" = \"{reg}\" ] || exit 1\n\
             echo '{{\"ServerURL\":\"{reg}\",\"Username\":\"{user}\",\"Secret\":\"{password}\"}}'"
        ),
    );
    script("golinthang", "sleep 10");
    let path = std::env::join_paths(
        std::iter::once(helpers.clone()).chain(std::env::split_paths(
            &std::env::var_os("PATH").unwrap_or_default(),
        )),
    )
    .unwrap();
    let store = |name: &str| {
        let d = dir.join(format!("store-{name}"));
        std::fs::create_dir_all(&d).unwrap();
        let config = serde_json::json!({ "credsStore": name });
        std::fs::write(d.join("config.json"), config.to_string()).unwrap();
        d
    };
    let with_path = || {
        let mut c = Command::new(env!("CARGO_BIN_EXE_golint-k8s"));
        c.env("PATH", &path);
        c
    };
    let helped = golint_in(
        with_path(),
        &dir.join("cache-helper"),
        &store("golinttest"),
        &args,
        &manifest,
    );
    assert_eq!(helped.code, 0, "{}", helped.stderr);
    assert_eq!(
        runtimes(&helped)["app"]["language"],
        "go",
        "{}",
        helped.stdout
    );
    let hung = golint_in(
        with_path(),
        &dir.join("cache-hang"),
        &store("golinthang"),
        &[
            "--inspect-images",
            "--registry-timeout",
            "2",
            "--format",
            "json",
        ],
        &manifest,
    );
    println!(
        "hung helper: exit {}, {:?}, stderr:\n{}",
        hung.code, hung.took, hung.stderr
    );
    // Read anonymously, the private image shows nothing: the container's runtime is unknown, so
    // its Go findings stay below the gate.
    assert_eq!(hung.code, 0, "{}", hung.stderr);
    assert!(hung.took < Duration::from_secs(9), "took {:?}", hung.took);
    assert!(
        note(&hung, &tag).contains(&format!(
            "the credential helper for {reg} did not answer within 2s; the image was read anonymously"
        )),
        "{}",
        hung.stderr
    );

    // From the cache, no credential is looked up: the helper that never answers costs nothing.
    let warm = golint_in(
        with_path(),
        &dir.join("cache-helper"),
        &store("golinthang"),
        &[
            "--inspect-images",
            "--registry-timeout",
            "2",
            "--show-containers",
            "--format",
            "json",
        ],
        &manifest,
    );
    assert_eq!(warm.code, 0, "{}", warm.stderr);
    assert!(warm.took < Duration::from_secs(2), "took {:?}", warm.took);
    assert_eq!(runtimes(&warm)["app"]["language"], "go", "{}", warm.stdout);

    let lint = golint(
        &dir.join("cache-auth-lint"),
        &with_auth,
        &["--inspect-images", "--format", "json"],
        &manifest,
    );
    assert_eq!(lint.code, 1, "{}", lint.stderr);
    let f = findings(&lint);
    assert!(f["app"].iter().any(|c| c == "GK101"), "{f:?}");
    assert!(
        !f["app"].iter().any(|c| c == "GK201"),
        "Go 1.26 sizes GOMAXPROCS: {f:?}"
    );
}

/// `tests/token-server`, built once and cached between runs.
fn token_server() -> PathBuf {
    go_program(
        "token-server",
        include_str!("../token-server/main.go"),
        "1.24",
    )
}

/// The token service's log lines for requests (see tests/token-server/main.go).
fn token_requests(log: &Path) -> Vec<String> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split_once("token request: ").map(|(_, r)| r.to_string()))
        .collect()
}

/// The Docker token flow, as Docker Hub and GHCR use it: a distribution registry with token
/// authentication sends clients to a token service (tests/token-server) that signs JWTs the
/// registry verifies against the service's certificate. Anonymous clients get pull tokens for
/// `public/` only; the Docker config's credentials are exchanged for a token that reads
/// `private/`; wrong ones are refused by the token service, and the note says what it said.
#[test]
fn bearer_tokens_from_a_token_service() {
    let Some(tools) = tools_and_go() else { return };
    let work = tempfile::tempdir().unwrap();
    let dir = work.path();
    let (user, password) = ("alice", "golint-test-password");
    let cert = dir.join("token.pem");
    let issuer = "golint-k8s-test-issuer";
    let mut cmd = Command::new(token_server());
    cmd.arg(&cert).arg(issuer).arg(user).arg(password);
    let token_log = dir.join("token.log");
    let (_tokens, token_addr) = serve(cmd, &token_log, |l| {
        Some(l.split("listening on ").nth(1)?.trim().to_string())
    });
    // The realm by name: crane refuses token services at private IP literals.
    let port = token_addr.rsplit(':').next().unwrap();
    let (_registry, reg) = distribution_registry(
        &tools.distribution_registry,
        dir,
        &format!(
            "  token:\n    realm: http://localhost:{port}/token\n    service: golint-k8s-test\n    \
             issuer: {issuer}\n    rootcertbundle: {}\n",
            cert.display()
        ),
    );
    let auth = base64(format!("{user}:{password}").as_bytes());
    let right = docker_config(
        &dir.join("right"),
        &reg,
        serde_json::json!({ "auth": auth }),
    );
    let wrong = docker_config(
        &dir.join("wrong"),
        &reg,
        serde_json::json!({ "username": user, "password": "not-the-password" }),
    );
    let bin = go_binary();
    let l = layer(dir, "go.tgz", &[("app/server", &bin)]);
    let ep = ["--entrypoint", "/app/server"];
    let public = image(&tools.crane, Some(&right), &reg, "public/app", &[&l], &ep);
    let private = image(&tools.crane, Some(&right), &reg, "private/app", &[&l], &ep);
    let manifest = dir.join("deploy.yaml");
    std::fs::write(
        &manifest,
        deployment(&[("public", &public), ("private", &private)]),
    )
    .unwrap();
    let args = ["--inspect-images", "--show-containers", "--format", "json"];
    let pushed = token_requests(&token_log).len();

    // Anonymous: a pull token for public/, none for private/.
    let anon = golint(&dir.join("cache-anon"), &dir.join("none"), &args, &manifest);
    println!("anonymous: exit {}, stderr:\n{}", anon.code, anon.stderr);
    let rt = runtimes(&anon);
    assert_eq!(rt["public"]["language"], "go", "{}", rt["public"]);
    assert!(
        note(&anon, &private).contains(
            "refused access (HTTP 401 Unauthorized for /v2/private/app/manifests/v1): no credentials for"
        ),
        "{}",
        anon.stderr
    );
    let asked = token_requests(&token_log);
    assert!(
        asked[pushed..].iter().any(|r| r.starts_with(
            "user= scope=[\"repository:public/app:pull\"] granted=[{repository public/app [pull]}]"
        )),
        "{asked:#?}"
    );

    // Wrong credentials: the token service's own words.
    let bad = golint(&dir.join("cache-wrong"), &wrong, &args, &manifest);
    println!("wrong password: exit {}, stderr:\n{}", bad.code, bad.stderr);
    for image in [&public, &private] {
        let line = note(&bad, image);
        assert!(
            line.contains(&format!(
                "refused access (its token service said: incorrect username or password): \
                 the Docker config's credentials for {reg} (user alice) were sent"
            )),
            "{line}"
        );
    }
    assert!(bad.code == 0 || bad.code == 1, "{}", bad.stderr);

    // The right ones: exchanged for a token that reads private/.
    let before = token_requests(&token_log).len();
    let cache = dir.join("cache-right");
    let good = golint(&cache, &right, &args, &manifest);
    assert_eq!(good.code, 0, "{}", good.stderr);
    assert!(!good.stderr.contains("not inspected"), "{}", good.stderr);
    let rt = runtimes(&good);
    for c in ["public", "private"] {
        assert_eq!(rt[c]["language"], "go", "{c}: {}", rt[c]);
        assert!(
            rt[c]["evidence"]
                .as_str()
                .unwrap()
                .contains("from image sha256:"),
            "{c}: {}",
            rt[c]
        );
    }
    let asked = token_requests(&token_log);
    assert!(
        asked[before..].iter().any(|r| r.starts_with(
            "user=alice scope=[\"repository:private/app:pull\"] granted=[{repository private/app [pull]}]"
        )),
        "{asked:#?}"
    );
    // A second run reads the cache: no token is asked for.
    let before = asked.len();
    let again = golint(&cache, &right, &args, &manifest);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert_eq!(runtimes(&again), rt);
    assert_eq!(token_requests(&token_log).len(), before);
}

/// A scripted HTTP server on loopback: `answer` writes the whole answer to each request, given
/// its request line and how many requests came before it; the request lines are kept.
struct Scripted {
    addr: String,
    seen: Arc<Mutex<Vec<String>>>,
}

type Answer = dyn Fn(&str, usize, &mut TcpStream) -> std::io::Result<()> + Send + Sync;

fn scripted(answer: Box<Answer>) -> Scripted {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let answer: Arc<Answer> = Arc::from(answer);
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { continue };
            let (log, answer) = (log.clone(), answer.clone());
            std::thread::spawn(move || {
                let _ = conn.set_read_timeout(Some(Duration::from_secs(10)));
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") {
                    match conn.read(&mut byte) {
                        Ok(1) => head.push(byte[0]),
                        _ => return,
                    }
                }
                let line = String::from_utf8_lossy(&head)
                    .lines()
                    .next()
                    .unwrap_or("")
                    .to_string();
                let n = {
                    let mut seen = log.lock().unwrap();
                    seen.push(line.clone());
                    seen.len() - 1
                };
                let _ = answer(&line, n, &mut conn);
                let _ = conn.flush();
            });
        }
    });
    Scripted { addr, seen }
}

/// A complete answer: status, extra header lines (each ending in CRLF), body.
fn reply(conn: &mut TcpStream, status: &str, extra: &str, body: &[u8]) -> std::io::Result<()> {
    conn.write_all(
        format!(
            "HTTP/1.1 {status}\r\n{extra}Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        )
        .as_bytes(),
    )?;
    conn.write_all(body)
}

/// `mib` MiB of spaces with no Content-Length: only the bytes that arrive say how large it is.
fn flood(conn: &mut TcpStream, mib: usize) -> std::io::Result<()> {
    conn.write_all(
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n",
    )?;
    let chunk = vec![b' '; 1 << 20];
    for _ in 0..mib {
        conn.write_all(&chunk)?;
    }
    Ok(())
}

fn sha256_of(bytes: &[u8]) -> String {
    let out = Command::new("sha256sum")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            c.stdin.take().unwrap().write_all(bytes)?;
            c.wait_with_output()
        })
        .unwrap();
    let hex = String::from_utf8(out.stdout).unwrap();
    format!("sha256:{}", &hex[..64])
}

/// `golint-k8s lint` under `/usr/bin/time -v`, killed after `limit`: the run, and its peak
/// resident memory in KiB.
fn golint_measured(
    cache: &Path,
    args: &[&str],
    manifest: &Path,
    env: &[(&str, &Path)],
    limit: Duration,
) -> (Lint, u64) {
    let started = Instant::now();
    let mut cmd = Command::new("/usr/bin/time");
    cmd.arg("-v")
        .arg(env!("CARGO_BIN_EXE_golint-k8s"))
        .arg("lint")
        .args(args)
        .arg(manifest)
        .env("GOLINT_K8S_CACHE", cache)
        .env("DOCKER_CONFIG", cache.join("no-docker-config"))
        .env("NO_COLOR", "1")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().unwrap();
    let (mut out, mut err) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the lint was still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let stdout = reader.join().unwrap();
    let stderr = err_reader.join().unwrap();
    let peak = stderr
        .lines()
        .find_map(|l| {
            l.trim()
                .strip_prefix("Maximum resident set size (kbytes): ")
        })
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no peak memory in: {stderr}"));
    let lint = Lint {
        code: status.code().unwrap_or(-1),
        stdout,
        stderr: stderr
            .lines()
            .take_while(|l| !l.starts_with("\tCommand being timed"))
            .map(|l| format!("{l}\n"))
            .collect(),
        took: started.elapsed(),
    };
    (lint, peak)
}

#[test]
fn oversize_bodies_are_notes_in_bounded_memory() {
    // A manifest of 200 MiB, and a config its manifest declares as 100 bytes but that is served
    // as 200 MiB, neither with a Content-Length; and a config blob that redirects to the cloud
    // metadata address.
    let fake = |c: char| format!("sha256:{}", c.to_string().repeat(64));
    let manifest_of = |config: &str| {
        format!(
            r#"{{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"{config}","size":100}},"layers":[{{"mediaType":"application/vnd.oci.image.layer.v1.tar+gzip","digest":"{}","size":100}}]}}"#,
            fake('c')
        )
    };
    let small = manifest_of(&fake('b'));
    let small_digest = sha256_of(small.as_bytes());
    let redirecting = manifest_of(&fake('e'));
    let redirecting_digest = sha256_of(redirecting.as_bytes());
    let big_digest = fake('a');
    let (s1, d1, s2, d2, d3) = (
        small.clone(),
        small_digest.clone(),
        redirecting.clone(),
        redirecting_digest.clone(),
        big_digest.clone(),
    );
    let server = scripted(Box::new(move |line, _, conn| {
        let path = line.split(' ').nth(1).unwrap_or("");
        let digest_header = |d: &str| format!("Docker-Content-Digest: {d}\r\n");
        match path {
            "/v2/" => reply(conn, "200 OK", "", b"{}"),
            "/v2/bigmanifest/manifests/v1" => reply(conn, "200 OK", &digest_header(&d3), b""),
            p if p == format!("/v2/bigmanifest/manifests/{d3}") => flood(conn, 200),
            "/v2/bigconfig/manifests/v1" => reply(conn, "200 OK", &digest_header(&d1), b""),
            p if p == format!("/v2/bigconfig/manifests/{d1}") => {
                reply(conn, "200 OK", &digest_header(&d1), s1.as_bytes())
            }
            p if p.starts_with("/v2/bigconfig/blobs/") => flood(conn, 200),
            "/v2/redirect/manifests/v1" => reply(conn, "200 OK", &digest_header(&d2), b""),
            p if p == format!("/v2/redirect/manifests/{d2}") => {
                reply(conn, "200 OK", &digest_header(&d2), s2.as_bytes())
            }
            p if p.starts_with("/v2/redirect/blobs/") => reply(
                conn,
                "302 Found",
                "Location: http://169.254.169.254/latest/meta-data/\r\n",
                b"",
            ),
            _ => reply(conn, "404 Not Found", "", b"{}"),
        }
    }));
    let work = tempfile::tempdir().unwrap();
    let dir = work.path();
    let a = &server.addr;
    let (bigmanifest, bigconfig, redirect) = (
        format!("{a}/bigmanifest:v1"),
        format!("{a}/bigconfig:v1"),
        format!("{a}/redirect:v1"),
    );
    let manifest = dir.join("deploy.yaml");
    std::fs::write(
        &manifest,
        deployment(&[
            ("bigmanifest", &bigmanifest),
            ("bigconfig", &bigconfig),
            ("redirect", &redirect),
        ]),
    )
    .unwrap();
    allow_loopback(dir);
    let (l, peak) = golint_measured(
        &dir.join("cache"),
        &[
            "--inspect-images",
            "--registry-timeout",
            "5",
            "--format",
            "json",
        ],
        &manifest,
        &[],
        Duration::from_secs(120),
    );
    println!(
        "exit {}, {:?}, peak {peak} KiB\n{}",
        l.code, l.took, l.stderr
    );
    assert!(l.code == 0 || l.code == 1, "{}", l.stderr);
    let said = |image: &str| {
        let want = format!("note: image {image} was not inspected: ");
        l.stderr
            .lines()
            .find(|line| line.starts_with(&want))
            .unwrap_or_else(|| panic!("no note for {image}:\n{}", l.stderr))
            .to_string()
    };
    assert!(said(&bigmanifest).contains("the manifest is larger than 4194304 bytes"));
    assert!(said(&bigconfig).contains("the image config is larger than 4194304 bytes"));
    assert!(
        said(&redirect).contains("169.254.169.254")
            && said(&redirect).contains("not a public address"),
        "{}",
        said(&redirect)
    );
    // The lint's own findings are all there.
    let f = findings(&l);
    for c in ["bigmanifest", "bigconfig", "redirect"] {
        assert!(f[c].iter().any(|code| code == "GK201"), "{c}: {f:?}");
    }
    // 400 MiB were offered; a few MiB are kept.
    assert!(peak < 150 * 1024, "peak resident memory {peak} KiB");
}

#[test]
fn a_trickling_token_service_cannot_outlast_the_deadline() {
    // The registry refuses every request; its token service answers the first token request at
    // once and every later one a byte a second.
    let slot: Arc<Mutex<String>> = Arc::new(Mutex::new(String::new()));
    let realm = slot.clone();
    let tokens = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let server = scripted(Box::new(move |line, _, conn| {
        let path = line.split(' ').nth(1).unwrap_or("");
        let challenge = format!(
            "WWW-Authenticate: Bearer realm=\"http://{}/token\",service=\"trickle\"\r\n",
            realm.lock().unwrap()
        );
        if path.starts_with("/token") {
            if tokens.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0 {
                return reply(conn, "200 OK", "", br#"{"token":"t1"}"#);
            }
            conn.write_all(b"HTTP/1.1 401 Unauthorized\r\nContent-Length: 1000\r\n\r\n")?;
            for _ in 0..1000 {
                conn.write_all(b"x")?;
                conn.flush()?;
                std::thread::sleep(Duration::from_secs(1));
            }
            return Ok(());
        }
        reply(
            conn,
            "401 Unauthorized",
            &challenge,
            br#"{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}"#,
        )
    }));
    *slot.lock().unwrap() = server.addr.clone();
    let work = tempfile::tempdir().unwrap();
    let dir = work.path();
    let images: Vec<String> = ["one", "two"]
        .iter()
        .map(|n| format!("{}/{n}:v1", server.addr))
        .collect();
    let manifest = dir.join("deploy.yaml");
    std::fs::write(
        &manifest,
        deployment(&[("one", &images[0]), ("two", &images[1])]),
    )
    .unwrap();
    allow_loopback(dir);
    let (l, _) = golint_measured(
        &dir.join("cache"),
        &[
            "--inspect-images",
            "--registry-timeout",
            "2",
            "--format",
            "json",
        ],
        &manifest,
        &[],
        Duration::from_secs(60),
    );
    println!("exit {}, {:?}\n{}", l.code, l.took, l.stderr);
    assert!(l.code == 0 || l.code == 1, "{}", l.stderr);
    // Eight timeouts of 2 s for an image, and a margin.
    assert!(l.took < Duration::from_secs(30), "took {:?}", l.took);
    for image in &images {
        assert!(
            l.stderr
                .contains(&format!("note: image {image} was not inspected: ")),
            "{image}: {}",
            l.stderr
        );
    }
}

#[test]
fn an_unlisted_loopback_registry_is_not_contacted() {
    let server = scripted(Box::new(|_, _, conn| reply(conn, "200 OK", "", b"{}")));
    let work = tempfile::tempdir().unwrap();
    let dir = work.path();
    let image = format!("{}/app:v1", server.addr);
    let manifest = dir.join("deploy.yaml");
    std::fs::write(&manifest, deployment(&[("app", &image)])).unwrap();
    // No config: the registry is not listed.
    let (l, _) = golint_measured(
        &dir.join("cache"),
        &["--inspect-images", "--format", "json"],
        &manifest,
        &[],
        Duration::from_secs(60),
    );
    assert!(l.code == 0 || l.code == 1, "{}", l.stderr);
    let line = note(&l, &image);
    assert!(
        line.contains(&format!("image-registries: [\"{}\"]", server.addr)),
        "{line}"
    );
    assert!(
        server.seen.lock().unwrap().is_empty(),
        "requests: {:?}",
        server.seen.lock().unwrap()
    );
    assert!(findings(&l)["app"].iter().any(|c| c == "GK201"));
}

#[test]
fn no_trust_store_is_a_note_not_a_panic() {
    let work = tempfile::tempdir().unwrap();
    let dir = work.path();
    let empty_file = dir.join("no-certs.pem");
    std::fs::write(&empty_file, "").unwrap();
    let empty_dir = dir.join("no-certs");
    std::fs::create_dir(&empty_dir).unwrap();
    let image = "ghcr.io/golint-k8s/never-pushed:v1";
    let manifest = dir.join("deploy.yaml");
    std::fs::write(&manifest, deployment(&[("app", image)])).unwrap();
    let (l, _) = golint_measured(
        &dir.join("cache"),
        &["--inspect-images", "--format", "json"],
        &manifest,
        &[("SSL_CERT_FILE", &empty_file), ("SSL_CERT_DIR", &empty_dir)],
        Duration::from_secs(60),
    );
    println!("exit {}\n{}", l.code, l.stderr);
    assert!(l.code == 0 || l.code == 1, "exit {}: {}", l.code, l.stderr);
    assert!(!l.stderr.contains("panicked"), "{}", l.stderr);
    assert!(
        note(&l, image).contains("no HTTPS client could be made"),
        "{}",
        l.stderr
    );
    assert!(findings(&l)["app"].iter().any(|c| c == "GK201"));
}

#[test]
fn a_layer_that_is_not_its_digest_gives_no_facts() {
    let Some(tools) = tools_and_go() else { return };
    let crane = tools.crane.as_path();
    let work = tempfile::tempdir().unwrap();
    let dir = work.path();
    let (_registry, upstream) = crane_registry(crane, dir);
    // The Go program first, then padding: the scanner has its answer long before the end.
    let bin = go_binary();
    let padding: Vec<u8> = (0..200_000u32).map(|i| (i * 7919 % 251) as u8).collect();
    let l = layer(
        dir,
        "tampered.tgz",
        &[("app/server", &bin), ("app/padding", &padding)],
    );
    let tag = image(
        crane,
        None,
        &upstream,
        "tampered",
        &[&l],
        &["--entrypoint", "/app/server"],
    );
    let (digest, mut bytes) = top_layer(crane, &tag);
    // The gzip trailer's last byte: the same length, other content, a Go program as before.
    *bytes.last_mut().unwrap() ^= 0x55;
    let proxy = Proxy::start(
        upstream.clone(),
        vec![(
            format!("/v2/tampered/blobs/{digest}"),
            Fault::Serve(Arc::new(bytes)),
        )],
    );
    let image = format!("{}/tampered:v1", proxy.addr);
    let manifest = dir.join("deploy.yaml");
    std::fs::write(&manifest, deployment(&[("app", &image)])).unwrap();
    let args = ["--inspect-images", "--show-containers", "--format", "json"];
    let l = golint(
        &dir.join("cache"),
        &dir.join("no-docker-config"),
        &args,
        &manifest,
    );
    println!("{}", l.stderr);
    assert!(l.code == 0 || l.code == 1, "{}", l.stderr);
    assert_eq!(proxy.count(&format!("/blobs/{digest}")), 1);
    let line = note(&l, &image);
    assert!(line.contains("does not match its digest"), "{line}");
    let rt = runtimes(&l);
    let evidence = rt["app"]["evidence"].as_str().unwrap_or("");
    assert!(!evidence.contains("from image sha256:"), "{}", rt["app"]);
    assert!(!evidence.contains("Go 1."), "{}", rt["app"]);
}

#[test]
fn facts_are_cached_per_registry_and_repository() {
    let Some(tools) = tools_and_go() else { return };
    let crane = tools.crane.as_path();
    let work = tempfile::tempdir().unwrap();
    let dir = work.path();
    let (_a, reg_a) = crane_registry(crane, &{
        let d = dir.join("a");
        std::fs::create_dir(&d).unwrap();
        d
    });
    let (_b, reg_b) = crane_registry(crane, &{
        let d = dir.join("b");
        std::fs::create_dir(&d).unwrap();
        d
    });
    let bin = go_binary();
    let l = layer(dir, "go.tgz", &[("app/server", &bin)]);
    let tag = image(
        crane,
        None,
        &reg_a,
        "app",
        &[&l],
        &["--entrypoint", "/app/server"],
    );
    let digest = run(Command::new(crane).args(["digest", &tag]), "crane digest")
        .trim()
        .to_string();
    // Registry B has another image under the same name, and claims A's digest for nothing.
    let py = layer(dir, "py.tgz", &[("app/main.py", b"print('hi')\n")]);
    image(
        crane,
        None,
        &reg_b,
        "app",
        &[&py],
        &["--entrypoint", "python3,/app/main.py"],
    );
    let cache = dir.join("cache");
    let no_config = dir.join("no-docker-config");
    let args = ["--inspect-images", "--show-containers", "--format", "json"];
    let run_on = |image: &str, name: &str| {
        let manifest = dir.join(format!("{name}.yaml"));
        std::fs::write(&manifest, deployment(&[("app", image)])).unwrap();
        golint(&cache, &no_config, &args, &manifest)
    };
    let from_a = format!("{reg_a}/app@{digest}");
    let a = run_on(&from_a, "a");
    let rt = runtimes(&a);
    assert!(
        rt["app"]["evidence"]
            .as_str()
            .unwrap_or("")
            .contains("from image sha256:"),
        "{}\n{}",
        rt["app"],
        a.stderr
    );
    let from_b = format!("{reg_b}/app@{digest}");
    let b = run_on(&from_b, "b");
    println!("{}", b.stderr);
    let rt = runtimes(&b);
    let evidence = rt["app"]["evidence"].as_str().unwrap_or("");
    assert!(!evidence.contains("from image sha256:"), "{}", rt["app"]);
    assert!(note(&b, &from_b).contains("not found"), "{}", b.stderr);
}
