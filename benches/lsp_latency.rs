//! Latency of `golint-k8s lsp` on a large manifest: from writing a `didChange` to receiving the
//! `publishDiagnostics` for that version, which is what a user waits for after each keystroke.
//!
//! `cargo bench --bench lsp_latency` (release build). Without `--bench` (as `cargo test
//! --all-targets` runs it) it does a short smoke run instead.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

const TIMEOUT: Duration = Duration::from_secs(60);

/// One frame from the server and the length of its body, or `None` at the end of its output.
fn read_frame(r: &mut impl BufRead) -> Option<(Value, usize)> {
    let mut length = None;
    let mut line = String::new();
    loop {
        line.clear();
        if r.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let header = line.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            if name.eq_ignore_ascii_case("content-length") {
                length = value.trim().parse::<usize>().ok();
            }
        }
    }
    let mut body = vec![0; length?];
    r.read_exact(&mut body).ok()?;
    serde_json::from_slice(&body).ok().map(|v| (v, body.len()))
}

struct Server {
    child: Child,
    stdin: ChildStdin,
    /// Messages with the instant the reader thread parsed them.
    rx: Receiver<(Instant, Value)>,
    /// The body length of each message, in the order of `rx`.
    sizes: Receiver<usize>,
    /// The body length of the last message `wait` returned.
    last_size: usize,
    next_id: i64,
}

impl Server {
    fn start(bin: &str, dir: &std::path::Path) -> Server {
        let mut child = Command::new(bin)
            .arg("lsp")
            .current_dir(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run {bin} lsp: {e}"));
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        let (size_tx, sizes) = mpsc::channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            while let Some((v, size)) = read_frame(&mut r) {
                let _ = size_tx.send(size);
                if tx.send((Instant::now(), v)).is_err() {
                    return;
                }
            }
        });
        let stdin = child.stdin.take().unwrap();
        Server {
            child,
            stdin,
            rx,
            sizes,
            last_size: 0,
            next_id: 0,
        }
    }

    fn send(&mut self, msg: Value) {
        let body = msg.to_string();
        write!(self.stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
        self.stdin.flush().unwrap();
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// The first message `matches` accepts (others are dropped; requests from the server are
    /// answered), with the instant it arrived.
    fn wait(&mut self, what: &str, matches: impl Fn(&Value) -> bool) -> (Instant, Value) {
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let (at, msg) = self
                .rx
                .recv_timeout(left)
                .unwrap_or_else(|e| panic!("no {what} from the server: {e}"));
            self.last_size = self.sizes.recv().unwrap_or(0);
            if msg.get("method").is_some() && msg.get("id").is_some() {
                let id = msg["id"].clone();
                self.send(json!({"jsonrpc": "2.0", "id": id, "result": null}));
            } else if matches(&msg) {
                return (at, msg);
            }
        }
    }

    fn request(&mut self, method: &str, params: Value) -> (Instant, Value) {
        self.next_id += 1;
        let id = self.next_id;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let (at, msg) = self.wait(method, |m| m["id"] == id && m.get("method").is_none());
        assert!(msg.get("error").is_none(), "{method} failed: {msg}");
        (at, msg["result"].clone())
    }

    fn diagnostics(&mut self, uri: &str, version: i64) -> (Instant, Vec<Value>) {
        let (at, msg) = self.wait("diagnostics", |m| {
            m["method"] == "textDocument/publishDiagnostics"
                && m["params"]["uri"] == uri
                && m["params"]["version"] == version
        });
        (at, msg["params"]["diagnostics"].as_array().unwrap().clone())
    }
}

/// `count` Deployments in the style of real ones: comments, labels, probes, env, resources, and a
/// mix of findings (missing GOMEMLIMIT or GOMAXPROCS, unquoted values, requests below limits).
fn manifest(count: usize) -> String {
    let mut s = String::new();
    for i in 0..count {
        let gogc = if i % 3 == 0 { "200" } else { "\"100\"" };
        let memlimit = if i % 4 == 0 {
            String::new()
        } else {
            "            - name: GOMEMLIMIT\n              value: \"900MiB\"\n".to_string()
        };
        s.push_str(&format!(
            r#"---
# Service {i}: the API of team {team}.
# Owned by the platform group; paged on SLO burn.
apiVersion: apps/v1
kind: Deployment
metadata:
  name: svc-{i}
  namespace: team-{team}
  labels:
    app.kubernetes.io/name: svc-{i}
    app.kubernetes.io/part-of: shop
  annotations:
    golint-k8s.io/go-version: "1.2{minor}"
spec:
  replicas: {replicas}
  selector:
    matchLabels: {{app: svc-{i}}}
  template:
    metadata:
      labels: {{app: svc-{i}}}
    spec:
      containers:
        - name: app
          image: ghcr.io/acme/svc-{i}:1.{i}.0
          args: ["--listen=:8080", "--log-format=json"]
          ports:
            - {{name: http, containerPort: 8080}}
          env:
            - name: GOGC
              value: {gogc}
{memlimit}            - name: LOG_LEVEL
              value: info  # raise to debug when on call
          readinessProbe:
            httpGet: {{path: /healthz, port: http}}
            periodSeconds: 5
          resources:
            requests:
              cpu: {req_cpu}
              memory: 512Mi
            limits:
              cpu: "2"
              memory: 1Gi
        - name: proxy
          image: docker.io/envoyproxy/envoy:v1.31.0
          resources:
            limits: {{cpu: 500m, memory: 256Mi}}
"#,
            team = i % 7,
            minor = 3 + i % 4,
            replicas = 2 + i % 3,
            req_cpu = if i % 2 == 0 { "500m" } else { "\"1\"" },
        ));
    }
    s
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn summary(label: &str, mut ms: Vec<f64>) {
    ms.sort_by(f64::total_cmp);
    println!(
        "{label:<34} n={:<3} min {:>7.2} ms  median {:>7.2} ms  p90 {:>7.2} ms  max {:>7.2} ms",
        ms.len(),
        ms[0],
        percentile(&ms, 50.0),
        percentile(&ms, 90.0),
        ms[ms.len() - 1],
    );
}

fn position(text: &str, offset: usize) -> Value {
    let before = &text[..offset];
    let line = before.matches('\n').count();
    let start = before.rfind('\n').map_or(0, |i| i + 1);
    json!({"line": line, "character": text[start..offset].encode_utf16().count()})
}

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let bin = env!("CARGO_BIN_EXE_golint-k8s");
    if !std::path::Path::new(bin).exists() {
        eprintln!("{bin} does not exist: build it with `cargo build --release` or run `cargo bench --bench lsp_latency`");
        std::process::exit(2);
    }
    let edits = if full { 50 } else { 4 };

    // About 20,000 lines: the size the latency budget is set for.
    let count = 421;
    let text = manifest(count);
    let lines = text.lines().count();
    let dir = tempfile::tempdir().unwrap();
    let uri = format!("file://{}", dir.path().join("fleet.yaml").display());
    let mut server = Server::start(bin, dir.path());
    server.request(
        "initialize",
        json!({"processId": std::process::id(), "capabilities": {}}),
    );
    server.notify("initialized", json!({}));

    let sent = Instant::now();
    server.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "yaml", "version": 1, "text": text}}),
    );
    let (at, diags) = server.diagnostics(&uri, 1);
    let open_ms = (at - sent).as_secs_f64() * 1000.0;
    println!(
        "lsp_latency: {lines} lines, {} bytes, {} diagnostics; open {open_ms:.2} ms",
        text.len(),
        diags.len()
    );

    // Alternate the memory limit of the middle Deployment's first container: 1Gi ↔ 2Gi.
    let middle = text
        .find(&format!("name: svc-{}\n", count / 2))
        .expect("the middle Deployment");
    let at_limit = middle + text[middle..].find("memory: 1Gi").unwrap() + "memory: ".len();
    let start = position(&text, at_limit);
    let end = position(&text, at_limit + 3);
    let mut latencies = Vec::new();
    for n in 0..edits {
        let version = n as i64 + 2;
        let value = if n % 2 == 0 { "2Gi" } else { "1Gi" };
        let sent = Instant::now();
        server.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version},
                   "contentChanges": [{"range": {"start": start, "end": end}, "text": value}]}),
        );
        let (at, diags) = server.diagnostics(&uri, version);
        latencies.push((at - sent).as_secs_f64() * 1000.0);
        assert!(!diags.is_empty());
    }
    summary("didChange → publishDiagnostics", latencies);
    println!(
        "publishDiagnostics after an edit: {} bytes",
        server.last_size
    );

    // The action an editor asks for on save.
    let mut fix_all = Vec::new();
    for _ in 0..(if full { 10 } else { 1 }) {
        let sent = Instant::now();
        let (at, actions) = server.request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": uri},
                   "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
                   "context": {"diagnostics": [], "only": ["source.fixAll.golint-k8s"]}}),
        );
        fix_all.push((at - sent).as_secs_f64() * 1000.0);
        assert_eq!(actions.as_array().map(Vec::len), Some(1), "{actions}");
    }
    summary("codeAction source.fixAll", fix_all);

    server.request("shutdown", Value::Null);
    server.notify("exit", Value::Null);
    let deadline = Instant::now() + TIMEOUT;
    loop {
        if let Some(status) = server.child.try_wait().unwrap() {
            assert!(status.success(), "the server exited with {status}");
            break;
        }
        assert!(Instant::now() < deadline, "the server did not exit");
        std::thread::sleep(Duration::from_millis(10));
    }
}
