//! `golint-k8s lsp` end to end: the real binary driven over stdio by a small client written here
//! (Content-Length framing, a reader thread, a timeout on every wait), so a broken server fails a
//! test instead of hanging it. Fixes offered as code actions are applied by the client and compared
//! with what `golint-k8s fix -` prints for the same text.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tempfile::TempDir;

const BIN: &str = env!("CARGO_BIN_EXE_golint-k8s");
/// Generous for a debug build on a busy machine; linting one small document takes milliseconds.
const TIMEOUT: Duration = Duration::from_secs(20);
const FIX_ALL: &str = "source.fixAll.golint-k8s";

// ---------------------------------------------------------------------------------------------
// Framing

/// One frame from the server: `Ok(None)` at the end of its output.
fn read_frame(r: &mut impl BufRead) -> Result<Option<Value>, String> {
    let mut length = None;
    let mut line = String::new();
    loop {
        line.clear();
        let n = r.read_line(&mut line).map_err(|e| e.to_string())?;
        if n == 0 {
            return if length.is_none() {
                Ok(None)
            } else {
                Err("end of output inside a header".into())
            };
        }
        let header = line.trim_end_matches(['\r', '\n']);
        if header.is_empty() {
            break;
        }
        let (name, value) = header
            .split_once(':')
            .ok_or_else(|| format!("bad header line {header:?}"))?;
        if name.eq_ignore_ascii_case("content-length") {
            length = Some(value.trim().parse::<usize>().map_err(|e| e.to_string())?);
        }
    }
    let length = length.ok_or("a frame without Content-Length")?;
    let mut body = vec![0; length];
    r.read_exact(&mut body).map_err(|e| e.to_string())?;
    serde_json::from_slice(&body)
        .map(Some)
        .map_err(|e| format!("{e}: {}", String::from_utf8_lossy(&body)))
}

fn frame(body: &[u8]) -> Vec<u8> {
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body);
    out
}

// ---------------------------------------------------------------------------------------------
// The client

struct Lsp {
    child: Child,
    stdin: Option<ChildStdin>,
    rx: Receiver<Result<Value, String>>,
    /// Notifications received while waiting for something else, oldest first.
    queue: VecDeque<Value>,
    /// Requests the server sent us (each answered with a null result).
    server_requests: Vec<Value>,
    next_id: i64,
    enc: Enc,
    capabilities: Value,
}

impl Lsp {
    /// Spawn the server in `dir`, without initializing it.
    fn spawn(dir: &Path) -> Lsp {
        let mut child = Command::new(BIN)
            .arg("lsp")
            .current_dir(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn golint-k8s lsp");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            loop {
                match read_frame(&mut r) {
                    Ok(Some(v)) => {
                        if tx.send(Ok(v)).is_err() {
                            return;
                        }
                    }
                    Ok(None) => return,
                    Err(e) => {
                        let _ = tx.send(Err(e));
                        return;
                    }
                }
            }
        });
        Lsp {
            stdin: child.stdin.take(),
            child,
            rx,
            queue: VecDeque::new(),
            server_requests: Vec::new(),
            next_id: 0,
            enc: Enc::Utf16,
            capabilities: Value::Null,
        }
    }

    /// Spawn and initialize, offering `encodings` (none: the field is left out).
    fn start(dir: &Path, encodings: Option<&[&str]>, options: Option<Value>) -> Lsp {
        let mut lsp = Lsp::spawn(dir);
        let mut caps = json!({
            "textDocument": {
                "publishDiagnostics": {
                    "relatedInformation": true, "versionSupport": true,
                    "codeDescriptionSupport": true, "dataSupport": true
                },
                "codeAction": {
                    "codeActionLiteralSupport": {
                        "codeActionKind": {"valueSet": ["quickfix", "source", "source.fixAll"]}
                    },
                    "isPreferredSupport": true, "dataSupport": true
                },
                "synchronization": {"didSave": true}
            },
            "workspace": {"didChangeWatchedFiles": {"dynamicRegistration": true}}
        });
        if let Some(e) = encodings {
            caps["general"] = json!({ "positionEncodings": e });
        }
        let mut params = json!({
            "processId": std::process::id(),
            "rootUri": file_uri(dir),
            "capabilities": caps,
        });
        if let Some(o) = options {
            params["initializationOptions"] = o;
        }
        let result = lsp.request("initialize", params);
        lsp.capabilities = result["capabilities"].clone();
        lsp.enc = match result["capabilities"]["positionEncoding"].as_str() {
            Some("utf-8") => Enc::Utf8,
            _ => Enc::Utf16,
        };
        lsp.notify("initialized", json!({}));
        lsp
    }

    fn write(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin already closed");
        stdin.write_all(bytes).expect("write to the server");
        stdin.flush().expect("flush to the server");
    }

    fn send(&mut self, msg: &Value) {
        self.write(&frame(msg.to_string().as_bytes()));
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// The next message from the server before `deadline`. Requests from the server are answered
    /// here (null result) and recorded.
    fn next(&mut self, deadline: Instant, waiting_for: &str) -> Value {
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let msg = match self.rx.recv_timeout(left) {
                Ok(Ok(v)) => v,
                Ok(Err(e)) => panic!(
                    "the server sent a malformed frame ({e}) while we waited for {waiting_for}"
                ),
                Err(RecvTimeoutError::Timeout) => {
                    panic!(
                        "timed out after {TIMEOUT:?} waiting for {waiting_for}; queued: {:?}",
                        self.queue
                    )
                }
                Err(RecvTimeoutError::Disconnected) => panic!(
                    "the server closed its output while we waited for {waiting_for} (status {:?})",
                    self.child.try_wait()
                ),
            };
            if msg.get("method").is_some() && msg.get("id").is_some() {
                let id = msg["id"].clone();
                self.server_requests.push(msg);
                self.send(&json!({"jsonrpc": "2.0", "id": id, "result": null}));
                continue;
            }
            return msg;
        }
    }

    /// Send a request and return the whole response; notifications that arrive first are queued.
    fn request_response(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.response(json!(id), method)
    }

    fn response(&mut self, id: Value, what: &str) -> Value {
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let msg = self.next(deadline, &format!("the response to {what}"));
            if msg.get("method").is_some() {
                self.queue.push_back(msg);
            } else if msg["id"] == id {
                return msg;
            } else {
                panic!("a response to an id we did not send ({msg}) while waiting for {what}");
            }
        }
    }

    /// Send a request and return its result; an error response fails the test.
    fn request(&mut self, method: &str, params: Value) -> Value {
        let resp = self.request_response(method, params);
        assert!(
            resp.get("error").is_none(),
            "{method} failed: {}",
            resp["error"]
        );
        resp.get("result").cloned().unwrap_or(Value::Null)
    }

    /// The first notification (queued or new) that `matches`, removed from the queue.
    fn wait_notification(
        &mut self,
        timeout: Duration,
        what: &str,
        matches: impl Fn(&Value) -> bool,
    ) -> Value {
        if let Some(i) = self.queue.iter().position(&matches) {
            return self.queue.remove(i).unwrap();
        }
        let deadline = Instant::now() + timeout;
        loop {
            let msg = self.next(deadline, what);
            if msg.get("method").is_none() {
                panic!("an unexpected response {msg} while waiting for {what}");
            }
            if matches(&msg) {
                return msg;
            }
            self.queue.push_back(msg);
        }
    }

    /// The oldest `publishDiagnostics` for `uri` not yet consumed: its params.
    fn wait_diagnostics(&mut self, uri: &str, timeout: Duration) -> Value {
        let what = format!("diagnostics for {uri}");
        self.wait_notification(timeout, &what, |m| {
            m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri
        })["params"]
            .clone()
    }

    /// The next diagnostics for `uri`, which must be for `version`.
    fn diagnostics(&mut self, uri: &str, version: i64) -> Vec<Value> {
        let p = self.wait_diagnostics(uri, TIMEOUT);
        assert_eq!(
            p["version"], version,
            "diagnostics for the wrong version: {p}"
        );
        p["diagnostics"]
            .as_array()
            .expect("a diagnostics array")
            .clone()
    }

    fn open(&mut self, uri: &str, language: &str, text: &str) -> Vec<Value> {
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": language, "version": 1, "text": text}}),
        );
        self.diagnostics(uri, 1)
    }

    /// Send incremental changes (each applied to the result of the one before) and return the new
    /// diagnostics; `text` is our copy of the document, updated the same way.
    fn change(
        &mut self,
        uri: &str,
        version: i64,
        text: &mut String,
        changes: &[(Value, &str)],
    ) -> Vec<Value> {
        for (range, new) in changes {
            let r = byte_range(text, range, self.enc);
            text.replace_range(r, new);
        }
        let changes: Vec<Value> = changes
            .iter()
            .map(|(range, new)| json!({"range": range, "text": new}))
            .collect();
        self.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": changes}),
        );
        self.diagnostics(uri, version)
    }

    /// Apply `edits` (one `TextEdit` list) the way an editor does, as one didChange.
    fn apply(&mut self, uri: &str, version: i64, text: &mut String, edits: &[Value]) -> Vec<Value> {
        // Back to front, so each range still means what it meant in the original text; inserts at
        // one position go in reverse so they end up in their array order.
        let mut order: Vec<usize> = (0..edits.len()).collect();
        order.sort_by_key(|&i| (byte_range(text, &edits[i]["range"], self.enc).start, i));
        order.reverse();
        let changes: Vec<(Value, &str)> = order
            .iter()
            .map(|&i| {
                (
                    edits[i]["range"].clone(),
                    edits[i]["newText"].as_str().unwrap(),
                )
            })
            .collect();
        self.change(uri, version, text, &changes)
    }

    fn code_actions(&mut self, uri: &str, diags: &[Value], only: Option<&[&str]>) -> Vec<Value> {
        let range = diags
            .first()
            .map_or(json!({"start": pos(0, 0), "end": pos(0, 0)}), |d| {
                d["range"].clone()
            });
        let mut context = json!({ "diagnostics": diags });
        if let Some(only) = only {
            context["only"] = json!(only);
        }
        let result = self.request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": uri}, "range": range, "context": context}),
        );
        result.as_array().cloned().unwrap_or_default()
    }

    fn wait_exit(&mut self, timeout: Duration) -> ExitStatus {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = self.child.try_wait().expect("wait for the server") {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "the server did not exit within {timeout:?}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn shutdown_and_exit(mut self) -> ExitStatus {
        assert_eq!(self.request("shutdown", Value::Null), Value::Null);
        self.notify("exit", Value::Null);
        self.wait_exit(TIMEOUT)
    }
}

impl Drop for Lsp {
    fn drop(&mut self) {
        // A failed test must not leave its server behind.
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Positions, computed here independently of the server

#[derive(Debug, Clone, Copy, PartialEq)]
enum Enc {
    Utf8,
    Utf16,
}

fn pos(line: usize, character: usize) -> Value {
    json!({"line": line, "character": character})
}

fn range(start: Value, end: Value) -> Value {
    json!({"start": start, "end": end})
}

/// The position of a byte offset.
fn position(text: &str, offset: usize, enc: Enc) -> Value {
    let before = &text[..offset];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let line = before.matches('\n').count();
    let col = &text[line_start..offset];
    let character = match enc {
        Enc::Utf8 => col.len(),
        Enc::Utf16 => col.encode_utf16().count(),
    };
    pos(line, character)
}

/// The byte offset of a position the server sent; it must be exact (on a character boundary,
/// within its line).
fn offset(text: &str, p: &Value, enc: Enc) -> usize {
    let line = p["line"].as_u64().expect("line") as usize;
    let want = p["character"].as_u64().expect("character") as usize;
    let mut start = 0;
    for _ in 0..line {
        start += text[start..]
            .find('\n')
            .unwrap_or_else(|| panic!("line {line} is past the end of the text"))
            + 1;
    }
    let mut units = 0;
    for (i, ch) in text[start..].char_indices() {
        if units == want {
            return start + i;
        }
        assert!(ch != '\n', "{p} is past the end of its line");
        units += match enc {
            Enc::Utf8 => ch.len_utf8(),
            Enc::Utf16 => ch.len_utf16(),
        };
        assert!(units <= want, "{p} splits the character {ch:?}");
    }
    assert_eq!(units, want, "{p} is past the end of the text");
    text.len()
}

fn byte_range(text: &str, r: &Value, enc: Enc) -> std::ops::Range<usize> {
    let start = offset(text, &r["start"], enc);
    let end = offset(text, &r["end"], enc);
    assert!(start <= end, "a range that ends before it starts: {r}");
    start..end
}

/// The range of the `nth` occurrence (0-based; negative counts from the end) of `needle`.
fn range_of(text: &str, needle: &str, nth: isize, enc: Enc) -> Value {
    let all: Vec<usize> = text.match_indices(needle).map(|(i, _)| i).collect();
    let i = if nth < 0 {
        all[all.len() - nth.unsigned_abs()]
    } else {
        all[nth as usize]
    };
    range(
        position(text, i, enc),
        position(text, i + needle.len(), enc),
    )
}

/// Apply a `TextEdit` list to `text` as a client does: all ranges refer to the original text.
fn apply_edits(text: &str, edits: &[Value], enc: Enc) -> String {
    let mut ranged: Vec<(std::ops::Range<usize>, usize)> = edits
        .iter()
        .enumerate()
        .map(|(i, e)| (byte_range(text, &e["range"], enc), i))
        .collect();
    ranged.sort_by_key(|(r, i)| (r.start, *i));
    let mut out = String::new();
    let mut at = 0;
    for (r, i) in ranged {
        assert!(r.start >= at, "overlapping edits: {edits:?}");
        out.push_str(&text[at..r.start]);
        out.push_str(edits[i]["newText"].as_str().expect("newText"));
        at = r.end;
    }
    out.push_str(&text[at..]);
    out
}

// ---------------------------------------------------------------------------------------------
// Helpers

fn file_uri(path: &Path) -> String {
    let s = path.to_str().expect("a UTF-8 temp path");
    assert!(
        s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-".contains(c)),
        "temp path {s} would need percent-encoding"
    );
    format!("file://{s}")
}

/// A workspace directory and the URI of `name` in it.
fn workspace(name: &str) -> (TempDir, PathBuf, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    let uri = file_uri(&path);
    (dir, path, uri)
}

/// Declare, in `dir`'s config, that every image there runs Go (`assume-go: true`): the Go rules'
/// fixes are then safe as the rules give them, in the editor and the CLI alike.
fn all_go(dir: &Path) {
    std::fs::write(dir.join(".golint-k8s.yaml"), "assume-go: true\n").unwrap();
}

/// What `golint-k8s fix - <args>` prints for `text`, named `path` (so it finds the same config).
fn cli_fix(path: &Path, text: &str, args: &[&str]) -> String {
    let mut child = Command::new(BIN)
        .arg("fix")
        .args(args)
        .arg("--stdin-filename")
        .arg(path)
        .arg("-")
        .current_dir(path.parent().unwrap())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "golint-k8s fix failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn codes(diags: &[Value]) -> Vec<&str> {
    diags.iter().map(|d| d["code"].as_str().unwrap()).collect()
}

fn only<'d>(diags: &'d [Value], code: &str) -> &'d Value {
    let found: Vec<&Value> = diags.iter().filter(|d| d["code"] == code).collect();
    assert_eq!(found.len(), 1, "expected one {code} in {diags:#?}");
    found[0]
}

fn action<'a>(actions: &'a [Value], title: &str) -> &'a Value {
    actions
        .iter()
        .find(|a| a["title"] == title)
        .unwrap_or_else(|| panic!("no action titled {title:?} in {actions:#?}"))
}

/// The one quick fix among `actions` that is not a suppression.
fn quick_fix(actions: &[Value]) -> &Value {
    let fixes: Vec<&Value> = actions
        .iter()
        .filter(|a| {
            a["kind"] == "quickfix" && !a["title"].as_str().unwrap_or("").starts_with("Suppress ")
        })
        .collect();
    assert_eq!(fixes.len(), 1, "one quick fix in {actions:#?}");
    fixes[0]
}

fn edits_for<'a>(action: &'a Value, uri: &str) -> &'a [Value] {
    let changes = &action["edit"]["changes"];
    assert_eq!(
        changes.as_object().map(|o| o.len()),
        Some(1),
        "one document's edits: {action}"
    );
    changes[uri].as_array().expect("TextEdits for the document")
}

/// A Go Deployment with a memory limit and no GOMEMLIMIT: exactly one finding, GK101.
const BASE: &str = r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
spec:
  template:
    spec:
      containers:
        - name: api
          image: ghcr.io/acme/api:1.0
          env:
            - name: GOGC
              value: "100"
          resources:
            requests:
              cpu: "1"
              memory: 1Gi
            limits:
              memory: 1Gi
"#;

/// Helm output: GK102 (unsafe), GK201 and GK101 (safe, both inserting `env:` at one place, so
/// fixing all of them needs the fixer's re-lint loop) and GK203 (unsafe).
const HELM: &str = r#"---
# Source: api/templates/deployment.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
spec:
  template:
    spec:
      containers:
        - name: api
          image: ghcr.io/acme/api:1.0
          resources:
            requests:
              cpu: 250m
              memory: 512Mi
            limits:
              cpu: 500m
              memory: 1Gi
"#;

/// Non-ASCII before the flagged value on the same line: "ü" is 2 bytes and 1 UTF-16 unit, "😀"
/// 4 bytes and 2 units.
const NON_ASCII: &str = r#"apiVersion: v1
kind: Pod
metadata:
  name: grüße
spec:
  containers:
    - {name: "grün-😀", image: ghcr.io/acme/api:1.0, env: [{name: GOGC, value: "100"}], resources: {requests: {cpu: "1", memory: 1Gi}, limits: {memory: 1Gi}}}
"#;

// ---------------------------------------------------------------------------------------------
// Tests

#[test]
fn initialize_announces_the_contract() {
    let (dir, _, _) = workspace("x.yaml");
    let lsp = Lsp::start(dir.path(), None, None);
    let caps = lsp.capabilities.clone();
    assert_eq!(caps["positionEncoding"], "utf-16");
    assert_eq!(
        caps["textDocumentSync"],
        json!({"openClose": true, "change": 2, "save": {"includeText": false}})
    );
    assert_eq!(
        caps["codeActionProvider"]["codeActionKinds"],
        json!(["quickfix", FIX_ALL])
    );
    assert!(lsp.shutdown_and_exit().success());

    // serverInfo, and the encoding negotiation both ways.
    for (offered, expected) in [
        (&["utf-16"][..], "utf-16"),
        (&["utf-32", "utf-16"][..], "utf-16"),
        (&["utf-8"][..], "utf-8"),
        (&["utf-16", "utf-8"][..], "utf-8"),
    ] {
        let mut lsp = Lsp::spawn(dir.path());
        let result = lsp.request(
            "initialize",
            json!({"processId": null, "capabilities": {"general": {"positionEncodings": offered}}}),
        );
        assert_eq!(result["serverInfo"]["name"], "golint-k8s");
        assert_eq!(
            result["capabilities"]["positionEncoding"], expected,
            "offered {offered:?}"
        );
        lsp.notify("initialized", json!({}));
        assert!(lsp.shutdown_and_exit().success());
    }
}

#[test]
fn diagnostics_on_open() {
    let (dir, _, uri) = workspace("deploy.yaml");
    let mut lsp = Lsp::start(dir.path(), None, None);
    let diags = lsp.open(&uri, "yaml", BASE);
    assert_eq!(codes(&diags), ["GK101"], "{diags:#?}");
    let d = &diags[0];
    // `memory: 1Gi` under limits: line 19, columns 23..26 in the CLI's 1-based terms.
    assert_eq!(d["range"], range(pos(18, 22), pos(18, 25)));
    assert_eq!(d["range"], range_of(BASE, "1Gi", -1, Enc::Utf16));
    assert_eq!(d["severity"], 2);
    assert_eq!(d["source"], "golint-k8s");
    assert_eq!(
        d["codeDescription"]["href"],
        "https://github.com/golint-k8s/golint-k8s/blob/main/rules/GK101-memory-limit-without-gomemlimit.md"
    );
    assert!(Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("rules/GK101-memory-limit-without-gomemlimit.md")
        .is_file());
    let message = d["message"].as_str().unwrap();
    assert!(
        message.contains("memory limit 1Gi") && message.contains("GOMEMLIMIT"),
        "{message}"
    );

    // The notes, located at the finding itself.
    let related = d["relatedInformation"]
        .as_array()
        .expect("relatedInformation");
    assert!(
        related.iter().any(|r| r["message"]
            .as_str()
            .unwrap()
            .starts_with("judged Go because")),
        "{related:#?}"
    );
    for r in related {
        assert_eq!(r["location"]["uri"], uri.as_str());
        assert_eq!(r["location"]["range"], d["range"]);
    }

    assert!(lsp.shutdown_and_exit().success());
}

/// Every diagnostic of a file goes out again with each keystroke, so its fix is not in it (in
/// `data` the fixes were a third of each notification): the server keeps it and finds it again
/// by the diagnostic a code action request sends back, as the client received it.
#[test]
fn published_diagnostics_carry_no_fix_and_the_code_action_finds_it() {
    let (dir, path, uri) = workspace("deploy.yaml");
    let mut lsp = Lsp::start(dir.path(), None, None);
    let diags = lsp.open(&uri, "yaml", BASE);
    let d = only(&diags, "GK101").clone();
    assert_eq!(d.get("data"), None, "{d:#}");

    let actions = lsp.code_actions(&uri, std::slice::from_ref(&d), Some(&["quickfix"]));
    let fix = quick_fix(&actions);
    assert!(
        fix["title"].as_str().unwrap().starts_with("add GOMEMLIMIT"),
        "{fix}"
    );
    assert_eq!(fix["isPreferred"], true);
    assert_eq!(fix["diagnostics"], json!([d]));
    assert_eq!(
        apply_edits(BASE, edits_for(fix, &uri), Enc::Utf16),
        cli_fix(&path, BASE, &["--select", "GK101"])
    );

    // A diagnostic the server did not publish (another message at the same place) has no fix.
    let mut other = d.clone();
    other["message"] = json!("something else");
    let actions = lsp.code_actions(&uri, &[other], Some(&["quickfix"]));
    let titles: Vec<&str> = actions.iter().filter_map(|a| a["title"].as_str()).collect();
    assert_eq!(titles, ["Suppress GK101 on this line"]);
    assert!(lsp.shutdown_and_exit().success());
}

/// The fixes of the documents an edit did not touch are kept from the last lint: lines added
/// above them must move their edits as they move the diagnostics.
#[test]
fn quick_fix_below_an_edit_that_adds_lines_applies_where_the_cli_fix_does() {
    let (dir, path, uri) = workspace("stream.yaml");
    let mut lsp = Lsp::start(dir.path(), None, None);
    let doc = |i: usize| BASE.replacen("name: api", &format!("name: api-{i}"), 1);
    let mut text = (0..6)
        .map(|i| format!("---\n{}", doc(i)))
        .collect::<String>();
    let diags = lsp.open(&uri, "yaml", &text);
    assert_eq!(codes(&diags), ["GK101"; 6]);

    // Two lines more in the first document.
    let at = range_of(&text, "name: api-0", 0, Enc::Utf16);
    let diags = lsp.change(
        &uri,
        2,
        &mut text,
        &[(
            range(at["end"].clone(), at["end"].clone()),
            "\n  labels:\n    team: shop",
        )],
    );
    let last = diags.last().unwrap().clone();
    assert_eq!(last["range"], range_of(&text, "1Gi", -1, Enc::Utf16));
    let actions = lsp.code_actions(&uri, std::slice::from_ref(&last), Some(&["quickfix"]));
    let fixed = apply_edits(&text, edits_for(quick_fix(&actions), &uri), Enc::Utf16);
    let start = text.rfind("---\n").unwrap();
    assert_eq!(fixed[..start], text[..start]);
    assert_eq!(
        fixed[start..],
        cli_fix(&path, &text[start..], &["--select", "GK101"])
    );
    assert!(lsp.shutdown_and_exit().success());
}

#[test]
fn incremental_changes_update_the_diagnostics() {
    let (dir, _, uri) = workspace("deploy.yaml");
    let mut lsp = Lsp::start(dir.path(), None, None);
    let mut text = BASE.to_string();
    assert_eq!(codes(&lsp.open(&uri, "yaml", &text)), ["GK101"]);

    // Insert a GOMEMLIMIT entry after `value: "100"`: GK101 goes away.
    let entry = "            - name: GOMEMLIMIT\n              value: \"900MiB\"\n";
    let diags = lsp.change(
        &uri,
        2,
        &mut text,
        &[(range(pos(13, 0), pos(13, 0)), entry)],
    );
    assert_eq!(diags, Vec::<Value>::new());

    // Change a value: `900MiB` → `900Mi` is malformed for Go (GK104, an error) on line 15.
    let r = range_of(&text, "900MiB", 0, Enc::Utf16);
    let diags = lsp.change(&uri, 3, &mut text, &[(r, "900Mi")]);
    let d = only(&diags, "GK104");
    assert_eq!(d["range"]["start"]["line"], 14);
    assert_eq!(d["severity"], 1);

    // Two changes in one notification, the second against the result of the first: restore the
    // value, then delete both inserted lines. The document is BASE again.
    let r = range_of(&text, "900Mi", 0, Enc::Utf16);
    let diags = lsp.change(
        &uri,
        4,
        &mut text,
        &[(r, "900MiB"), (range(pos(13, 0), pos(15, 0)), "")],
    );
    assert_eq!(text, BASE);
    assert_eq!(codes(&diags), ["GK101"]);
    assert_eq!(diags[0]["range"], range(pos(18, 22), pos(18, 25)));

    // Closing the document clears its diagnostics.
    lsp.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": uri}}),
    );
    let p = lsp.wait_diagnostics(&uri, TIMEOUT);
    assert_eq!(p["diagnostics"], json!([]));
    assert!(lsp.shutdown_and_exit().success());
}

#[test]
fn quick_fix_applied_by_the_client_matches_the_cli() {
    let (dir, path, uri) = workspace("deploy.yaml");
    let mut lsp = Lsp::start(dir.path(), None, None);
    let mut text = BASE.to_string();
    let diags = lsp.open(&uri, "yaml", &text);
    let d = only(&diags, "GK101").clone();

    let actions = lsp.code_actions(&uri, std::slice::from_ref(&d), None);
    let fix = quick_fix(&actions);
    assert_eq!(fix["kind"], "quickfix");
    assert_eq!(fix["isPreferred"], true);
    assert_eq!(fix["diagnostics"][0]["code"], "GK101", "{fix}");
    let edits = edits_for(fix, &uri).to_vec();

    let expected = cli_fix(&path, &text, &["--select", "GK101"]);
    assert_ne!(expected, text);
    assert_eq!(apply_edits(&text, &edits, Enc::Utf16), expected);

    // Applied as an editor does it (a didChange), the finding is gone.
    let diags = lsp.apply(&uri, 2, &mut text, &edits);
    assert_eq!(text, expected);
    assert_eq!(diags, Vec::<Value>::new());
    assert!(lsp.shutdown_and_exit().success());
}

#[test]
fn unsafe_quick_fix_is_marked_and_not_preferred() {
    let (dir, path, uri) = workspace("deploy.yaml");
    let mut lsp = Lsp::start(dir.path(), None, None);
    let diags = lsp.open(&uri, "yaml", HELM);
    let d = only(&diags, "GK102").clone();

    let actions = lsp.code_actions(&uri, std::slice::from_ref(&d), None);
    let fix = quick_fix(&actions);
    assert!(
        fix["title"].as_str().unwrap().ends_with(" (unsafe)"),
        "{fix}"
    );
    assert_eq!(fix["kind"], "quickfix");
    assert_ne!(fix["isPreferred"], true, "{fix}");
    let edits = edits_for(fix, &uri);
    assert_eq!(
        apply_edits(HELM, edits, Enc::Utf16),
        cli_fix(&path, HELM, &["--unsafe-fixes", "--select", "GK102"])
    );
    assert!(lsp.shutdown_and_exit().success());
}

#[test]
fn fix_all_matches_the_cli() {
    let example = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/deployment.yaml"),
    )
    .unwrap();
    let (dir, path, uri) = workspace("deploy.yaml");
    all_go(dir.path());
    let mut lsp = Lsp::start(dir.path(), None, None);
    for (version, text) in [HELM, BASE, NON_ASCII, example.as_str()].iter().enumerate() {
        let version = version as i64 + 1;
        let diags = if version == 1 {
            lsp.open(&uri, "yaml", text)
        } else {
            lsp.notify(
                "textDocument/didChange",
                json!({"textDocument": {"uri": uri, "version": version},
                       "contentChanges": [{"text": text}]}),
            );
            lsp.diagnostics(&uri, version)
        };
        let expected = cli_fix(&path, text, &[]);
        assert_ne!(&expected, text);

        // With every diagnostic in the context, as a lightbulb asks.
        let actions = lsp.code_actions(&uri, &diags, None);
        let all: Vec<&Value> = actions.iter().filter(|a| a["kind"] == FIX_ALL).collect();
        assert_eq!(all.len(), 1, "one fix-all action: {actions:#?}");
        assert_eq!(all[0]["title"], "Fix all safe golint-k8s problems");
        let fixed = apply_edits(text, edits_for(all[0], &uri), Enc::Utf16);
        assert_eq!(fixed, expected, "fix-all of document {version}");

        // On save an editor asks for just this kind, often with no diagnostics in the context.
        let actions = lsp.code_actions(&uri, &[], Some(&[FIX_ALL]));
        assert_eq!(actions.len(), 1, "{actions:#?}");
        assert_eq!(actions[0]["kind"], FIX_ALL);
        assert_eq!(
            apply_edits(text, edits_for(&actions[0], &uri), Enc::Utf16),
            expected
        );

        // A parent kind asks for it too (VS Code's `source.fixAll` on save).
        for parent in ["source.fixAll", "source"] {
            let actions = lsp.code_actions(&uri, &[], Some(&[parent]));
            assert_eq!(actions.len(), 1, "only {parent}: {actions:#?}");
            assert_eq!(actions[0]["kind"], FIX_ALL);
        }

        // `only: quickfix` leaves it out.
        let actions = lsp.code_actions(&uri, &diags, Some(&["quickfix"]));
        assert!(!actions.is_empty());
        assert!(
            actions.iter().all(|a| a["kind"] == "quickfix"),
            "{actions:#?}"
        );
    }
    assert!(lsp.shutdown_and_exit().success());
}

/// Issue 39: fix-all runs the CLI's fix engine, so after a block scalar it put the new env
/// entries under the key that followed it, as `fix` did.
#[test]
fn fix_all_after_a_block_scalar_appends_to_env() {
    let text = r#"apiVersion: v1
kind: Pod
metadata:
  name: api
spec:
  containers:
  - name: api
    image: ghcr.io/acme/api:1.0
    resources:
      limits: {cpu: "2", memory: 512Mi}
    env:
    - name: CONFIG
      value: |+
        a: 1

    ports:
    - containerPort: 8080
"#;
    let expected = text.replace(
        "        a: 1\n\n",
        "        a: 1\n\n    - name: GOMAXPROCS\n      valueFrom:\n        resourceFieldRef:\n          resource: limits.cpu\n    - name: GOMEMLIMIT\n      value: \"460MiB\"\n",
    );
    let (dir, path, uri) = workspace("pod.yaml");
    all_go(dir.path());
    let mut lsp = Lsp::start(dir.path(), None, None);
    lsp.open(&uri, "yaml", text);
    let actions = lsp.code_actions(&uri, &[], Some(&[FIX_ALL]));
    assert_eq!(actions.len(), 1, "{actions:#?}");
    let fixed = apply_edits(text, edits_for(&actions[0], &uri), Enc::Utf16);
    assert_eq!(fixed, expected);
    assert_eq!(cli_fix(&path, text, &[]), expected);
    assert!(lsp.shutdown_and_exit().success());
}

#[test]
fn no_fix_all_without_safe_fixes() {
    // Only GK102, whose fix is unsafe.
    let text = r#"apiVersion: v1
kind: Pod
metadata:
  name: api
spec:
  containers:
    - name: api
      image: ghcr.io/acme/api:1.0
      env:
        - name: GOMEMLIMIT
          value: "400MiB"
      resources:
        requests:
          cpu: "1"
          memory: 256Mi
        limits:
          memory: 512Mi
"#;
    let (dir, _, uri) = workspace("pod.yaml");
    let mut lsp = Lsp::start(dir.path(), None, None);
    let diags = lsp.open(&uri, "yaml", text);
    assert_eq!(codes(&diags), ["GK102"]);
    let actions = lsp.code_actions(&uri, &diags, None);
    assert!(actions.iter().all(|a| a["kind"] != FIX_ALL), "{actions:#?}");
    assert!(lsp.code_actions(&uri, &[], Some(&[FIX_ALL])).is_empty());
    assert!(lsp.shutdown_and_exit().success());
}

#[test]
fn utf16_positions_on_a_non_ascii_line() {
    let (dir, path, uri) = workspace("pod.yaml");
    let mut lsp = Lsp::start(dir.path(), Some(&["utf-16"]), None);
    assert_eq!(lsp.enc, Enc::Utf16);
    let mut text = NON_ASCII.to_string();
    let diags = lsp.open(&uri, "yaml", &text);
    let d = only(&diags, "GK101").clone();
    let expected = range_of(&text, "1Gi", -1, Enc::Utf16);
    // The line's last `1Gi` is its 152nd character (the CLI's column 152): 0-based character
    // 151, which is UTF-16 unit 152 (😀 takes two) and byte 155 (ü takes two, 😀 four).
    assert_eq!(expected, range(pos(6, 152), pos(6, 155)));
    assert_eq!(d["range"], expected);

    // The fix's insertion point on the same line is in UTF-16 units too.
    let actions = lsp.code_actions(&uri, std::slice::from_ref(&d), None);
    let fix = quick_fix(&actions);
    let fixed = apply_edits(&text, edits_for(fix, &uri), Enc::Utf16);
    assert_eq!(fixed, cli_fix(&path, &text, &["--select", "GK101"]));

    // A change sent in UTF-16 units lands where it should: the limit becomes 2Gi.
    let r = range_of(&text, "1Gi", -1, Enc::Utf16);
    let diags = lsp.change(&uri, 2, &mut text, &[(r, "2Gi")]);
    assert!(text.ends_with("limits: {memory: 2Gi}}}\n"));
    let d = only(&diags, "GK101");
    assert_eq!(d["range"], range_of(&text, "2Gi", 0, Enc::Utf16));
    assert!(d["message"].as_str().unwrap().contains("2Gi"), "{d}");
    // And the request (1Gi) is now below the limit.
    assert_eq!(
        only(&diags, "GK102")["range"],
        range_of(&text, "1Gi", 0, Enc::Utf16)
    );
    assert!(lsp.shutdown_and_exit().success());
}

#[test]
fn utf8_positions_when_offered() {
    let (dir, path, uri) = workspace("pod.yaml");
    let mut lsp = Lsp::start(dir.path(), Some(&["utf-8", "utf-16"]), None);
    assert_eq!(lsp.capabilities["positionEncoding"], "utf-8");
    assert_eq!(lsp.enc, Enc::Utf8);
    let mut text = NON_ASCII.to_string();
    let diags = lsp.open(&uri, "yaml", &text);
    let d = only(&diags, "GK101").clone();
    assert_eq!(d["range"], range(pos(6, 155), pos(6, 158)));
    assert_eq!(d["range"], range_of(&text, "1Gi", -1, Enc::Utf8));

    let actions = lsp.code_actions(&uri, std::slice::from_ref(&d), None);
    let fix = quick_fix(&actions);
    let fixed = apply_edits(&text, edits_for(fix, &uri), Enc::Utf8);
    assert_eq!(fixed, cli_fix(&path, &text, &["--select", "GK101"]));

    let r = range_of(&text, "1Gi", -1, Enc::Utf8);
    let diags = lsp.change(&uri, 2, &mut text, &[(r, "2Gi")]);
    let d = only(&diags, "GK101");
    assert_eq!(d["range"], range_of(&text, "2Gi", 0, Enc::Utf8));
    assert!(d["message"].as_str().unwrap().contains("2Gi"), "{d}");
    assert!(lsp.shutdown_and_exit().success());
}

#[test]
fn non_kubernetes_yaml_stays_quiet_and_json_objects_are_linted() {
    let (dir, _, _) = workspace("x");
    let mut lsp = Lsp::start(dir.path(), None, None);
    let workflow = "name: ci\non: [push]\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - run: make\n";
    let uri = file_uri(&dir.path().join("ci.yaml"));
    assert_eq!(lsp.open(&uri, "yaml", workflow), Vec::<Value>::new());
    let uri = file_uri(&dir.path().join("package.json"));
    assert_eq!(
        lsp.open(&uri, "json", "{\"name\": \"x\", \"version\": \"1.0.0\"}\n"),
        Vec::<Value>::new()
    );
    // Memory numbers in a values file are not a container.
    let uri = file_uri(&dir.path().join("values.yaml"));
    let values = "resources:\n  limits:\n    memory: 1Gi\nenv:\n  GOGC: 200\n";
    assert_eq!(lsp.open(&uri, "yaml", values), Vec::<Value>::new());

    // A Kubernetes object in JSON is linted like YAML.
    let pod = r#"{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "api"}, "spec": {"containers": [{"name": "api", "image": "ghcr.io/acme/api:1.0", "env": [{"name": "GOGC", "value": "100"}], "resources": {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"memory": "1Gi"}}}]}}
"#;
    let uri = file_uri(&dir.path().join("pod.json"));
    let diags = lsp.open(&uri, "json", pod);
    assert_eq!(codes(&diags), ["GK101"]);
    assert_eq!(diags[0]["range"], range_of(pod, "\"1Gi\"", -1, Enc::Utf16));
    assert!(lsp.shutdown_and_exit().success());
}

#[test]
fn invalid_yaml_gives_gk000_and_the_server_keeps_working() {
    let (dir, _, uri) = workspace("deploy.yaml");
    let mut lsp = Lsp::start(dir.path(), None, None);
    let mut text = "apiVersion: v1\nkind: Pod\nmetadata: {name: [x\n".to_string();
    let diags = lsp.open(&uri, "yaml", &text);
    let d = only(&diags, "GK000");
    assert_eq!(d["severity"], 1);
    assert!(d["range"]["start"]["line"].as_u64().unwrap() <= 2, "{d}");
    // Code actions on it do not fail.
    lsp.code_actions(&uri, &diags, None);

    // Half-typed text of every kind: tabs, an unclosed quote, a stray indentation.
    for (version, bad) in [
        "apiVersion: v1\nkind: Pod\nspec:\n\tcontainers: []\n",
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: \"api\n",
        "apiVersion: v1\nkind: Pod\n  metadata: x\n    - y\n",
        "apiVersion: v1\nkind: Pod\n---\n- [\n",
    ]
    .iter()
    .enumerate()
    {
        let version = version as i64 + 2;
        let full = range(pos(0, 0), position(&text, text.len(), Enc::Utf16));
        let diags = lsp.change(&uri, version, &mut text, &[(full, bad)]);
        assert!(codes(&diags).contains(&"GK000"), "{bad:?}: {diags:#?}");
    }

    // Made valid again, it is linted normally.
    let full = range(pos(0, 0), position(&text, text.len(), Enc::Utf16));
    let diags = lsp.change(&uri, 10, &mut text, &[(full, BASE)]);
    assert_eq!(codes(&diags), ["GK101"]);
    assert!(lsp.shutdown_and_exit().success());
}

#[test]
fn survives_malformed_frames_and_garbage_requests() {
    let (dir, _, uri) = workspace("deploy.yaml");
    let mut lsp = Lsp::start(dir.path(), None, None);

    // A frame whose body is not JSON: logged, and the server keeps serving.
    lsp.write(&frame(b"{\"jsonrpc\": \"2.0\", \"id\": 99, \"method\": "));
    let log = lsp.wait_notification(TIMEOUT, "a window/logMessage", |m| {
        m["method"] == "window/logMessage"
    });
    assert!(log["params"]["message"].is_string(), "{log}");
    // JSON that is no message at all.
    lsp.write(&frame(b"[1, 2, 3]"));

    // An unknown request: MethodNotFound.
    let resp = lsp.request_response("golint-k8s/bogus", json!({"x": 1}));
    assert_eq!(resp["error"]["code"], -32601, "{resp}");
    // Params of the wrong shape: an error response, not a crash.
    let resp = lsp.request_response("textDocument/codeAction", json!("nonsense"));
    assert!(resp["error"]["code"].is_i64(), "{resp}");
    // Cancelling a request that was already answered, an unknown notification, a save and a
    // change for documents that are not open: all tolerated.
    lsp.notify("$/cancelRequest", json!({"id": 1}));
    lsp.notify("golint-k8s/whatever", json!(null));
    let other = file_uri(&dir.path().join("never-opened.yaml"));
    lsp.notify(
        "textDocument/didSave",
        json!({"textDocument": {"uri": other}}),
    );
    lsp.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": other, "version": 2},
               "contentChanges": [{"range": range(pos(0, 0), pos(0, 0)), "text": "x"}]}),
    );
    // A change whose range is past the end of the document: out of step, so its diagnostics
    // are withdrawn until the whole text comes again.
    let mut text = BASE.to_string();
    lsp.open(&uri, "yaml", &text);
    lsp.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 2},
               "contentChanges": [{"range": range(pos(500, 3), pos(900, 0)), "text": "# end\n"}]}),
    );
    assert!(lsp.diagnostics(&uri, 2).is_empty());
    text.push_str("# end\n");
    lsp.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 3}, "contentChanges": [{"text": text}]}),
    );
    lsp.diagnostics(&uri, 3);
    // Code actions for a document that is not open.
    assert!(lsp.code_actions(&other, &[], None).is_empty());

    // Still answering requests and publishing diagnostics.
    let r = range_of(&text, "api:1.0", 0, Enc::Utf16);
    let diags = lsp.change(&uri, 4, &mut text, &[(r, "api:1.1")]);
    assert_eq!(codes(&diags), ["GK101"]);
    assert!(!lsp.code_actions(&uri, &diags, None).is_empty());
    assert!(lsp.shutdown_and_exit().success());
}

#[test]
fn suppress_action_inserts_a_comment_and_the_finding_goes_away() {
    let (dir, _, uri) = workspace("deploy.yaml");
    let mut lsp = Lsp::start(dir.path(), None, None);
    let mut text = BASE.to_string();
    let diags = lsp.open(&uri, "yaml", &text);
    let d = only(&diags, "GK101").clone();
    let actions = lsp.code_actions(&uri, std::slice::from_ref(&d), None);
    let suppress = action(&actions, "Suppress GK101 on this line");
    assert_eq!(suppress["kind"], "quickfix");
    assert_ne!(suppress["isPreferred"], true);
    let edits = edits_for(suppress, &uri).to_vec();

    let diags = lsp.apply(&uri, 2, &mut text, &edits);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[18], "              # golint-k8s: ignore=GK101");
    assert_eq!(lines[19], "              memory: 1Gi");
    assert_eq!(text.lines().count(), BASE.lines().count() + 1);
    // No GK101, and the suppression counts as used (no GK901).
    assert_eq!(diags, Vec::<Value>::new());
    assert!(lsp.shutdown_and_exit().success());
}

#[test]
fn suppress_action_on_a_flow_line_and_without_a_fix() {
    // Every golint-k8s diagnostic gets one, fixable or not.
    let (dir, _, uri) = workspace("pod.yaml");
    let mut lsp = Lsp::start(dir.path(), None, None);
    let mut text = NON_ASCII.to_string();
    let diags = lsp.open(&uri, "yaml", &text);
    let d = only(&diags, "GK101").clone();
    let actions = lsp.code_actions(&uri, std::slice::from_ref(&d), None);
    let edits = edits_for(action(&actions, "Suppress GK101 on this line"), &uri).to_vec();
    let diags = lsp.apply(&uri, 2, &mut text, &edits);
    assert_eq!(
        text.lines().nth(6),
        Some("    # golint-k8s: ignore=GK101"),
        "{text}"
    );
    assert_eq!(diags, Vec::<Value>::new());

    // GK109 has no fix, but can still be suppressed.
    let (_, _, uri2) = workspace("q.yaml");
    let mut text = BASE.replacen("memory: 1Gi", "memory: 1m", 1);
    let diags = lsp.open(&uri2, "yaml", &text);
    let d = diags
        .iter()
        .find(|d| {
            let actions = lsp.code_actions(&uri2, std::slice::from_ref(d), Some(&["quickfix"]));
            actions.len() == 1
        })
        .unwrap_or_else(|| panic!("a finding without a fix in {diags:#?}"))
        .clone();
    let code = d["code"].as_str().unwrap().to_string();
    let actions = lsp.code_actions(&uri2, std::slice::from_ref(&d), None);
    let edits = edits_for(
        action(&actions, &format!("Suppress {code} on this line")),
        &uri2,
    )
    .to_vec();
    let diags = lsp.apply(&uri2, 2, &mut text, &edits);
    assert!(!codes(&diags).contains(&code.as_str()), "{diags:#?}");
    assert!(!codes(&diags).contains(&"GK901"), "{diags:#?}");
    assert!(lsp.shutdown_and_exit().success());
}

#[test]
fn watched_config_change_relints_open_documents() {
    let (dir, path, uri) = workspace("deploy.yaml");
    std::fs::write(&path, BASE).unwrap();
    let mut lsp = Lsp::start(dir.path(), None, None);
    assert_eq!(codes(&lsp.open(&uri, "yaml", BASE)), ["GK101"]);
    // A second document in a subfolder: the config is found by walking up.
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    let uri2 = file_uri(&dir.path().join("sub/other.yaml"));
    assert_eq!(codes(&lsp.open(&uri2, "yaml", BASE)), ["GK101"]);

    let config = dir.path().join(".golint-k8s.yaml");
    std::fs::write(&config, "rules: {GK101: off}\n").unwrap();
    lsp.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": file_uri(&config), "type": 1}]}),
    );
    assert_eq!(
        lsp.wait_diagnostics(&uri, TIMEOUT)["diagnostics"],
        json!([])
    );
    assert_eq!(
        lsp.wait_diagnostics(&uri2, TIMEOUT)["diagnostics"],
        json!([])
    );

    // Code actions follow the config too: nothing left to fix.
    assert!(lsp.code_actions(&uri, &[], Some(&[FIX_ALL])).is_empty());

    std::fs::write(&config, "rules: {GK101: error}\n").unwrap();
    lsp.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": file_uri(&config), "type": 2}]}),
    );
    let p = lsp.wait_diagnostics(&uri, TIMEOUT);
    assert_eq!(p["diagnostics"][0]["code"], "GK101");
    assert_eq!(p["diagnostics"][0]["severity"], 1);
    lsp.wait_diagnostics(&uri2, TIMEOUT);

    std::fs::remove_file(&config).unwrap();
    lsp.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": file_uri(&config), "type": 3}]}),
    );
    let p = lsp.wait_diagnostics(&uri, TIMEOUT);
    assert_eq!(p["diagnostics"][0]["code"], "GK101");
    assert_eq!(p["diagnostics"][0]["severity"], 2);
    assert!(lsp.shutdown_and_exit().success());
}

/// An invalid config is said in a message, once, and is a diagnostic on the config file at the
/// line and column of the mistake; the documents are linted with the defaults meanwhile, and the
/// diagnostic goes once the file is fixed.
#[test]
fn an_invalid_config_is_a_message_and_a_diagnostic_on_the_key() {
    let (dir, path, uri) = workspace("deploy.yaml");
    let config = dir.path().join(".golint-k8s.yaml");
    std::fs::write(&config, "node-cpus: 8\ncpu-limit: forbid\n").unwrap();
    std::fs::write(&path, BASE).unwrap();
    let mut lsp = Lsp::start(dir.path(), None, None);
    assert_eq!(codes(&lsp.open(&uri, "yaml", BASE)), ["GK101"]);
    let message = lsp.wait_notification(TIMEOUT, "a message", |m| {
        m["method"] == "window/showMessage"
    });
    let text = message["params"]["message"].as_str().unwrap();
    assert!(text.contains("unknown key \"cpu-limit\""), "{text}");
    assert_eq!(message["params"]["type"], 2);
    let config_uri = file_uri(&std::fs::canonicalize(&config).unwrap());
    let on_config = lsp.wait_diagnostics(&config_uri, TIMEOUT)["diagnostics"].clone();
    assert_eq!(on_config.as_array().map(Vec::len), Some(1), "{on_config:#}");
    assert_eq!(
        on_config[0]["range"]["start"],
        json!({"line": 1, "character": 0})
    );
    assert_eq!(on_config[0]["severity"], 1);
    // Linted again, the same mistake is not said twice.
    lsp.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": BASE}]}),
    );
    lsp.diagnostics(&uri, 2);
    // Fixed: the diagnostic goes.
    std::fs::write(&config, "node-cpus: 8\ncpu-limits: forbid\n").unwrap();
    lsp.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": file_uri(&config), "type": 2}]}),
    );
    assert_eq!(
        lsp.wait_diagnostics(&config_uri, TIMEOUT)["diagnostics"],
        json!([])
    );
    // Everything sent before that was read by now.
    assert!(
        !lsp.queue
            .iter()
            .any(|m| m["method"] == "window/showMessage"),
        "the message was sent twice: {:?}",
        lsp.queue
    );
    assert!(lsp.shutdown_and_exit().success());
}

/// A nested config that extends the root's governs an open document as it governs `lint`: the
/// root's rules with the nested file's keys on top, read again when the root changes.
#[test]
fn a_nested_config_that_extends_the_root_governs_the_document() {
    let (dir, _, _) = workspace("deploy.yaml");
    let root = dir.path().join(".golint-k8s.yaml");
    std::fs::write(&root, "rules: {GK101: off}\n").unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    std::fs::write(
        dir.path().join("sub/.golint-k8s.yaml"),
        "extend: ../.golint-k8s.yaml\nnode-cpus: 8\n",
    )
    .unwrap();
    let uri = file_uri(&dir.path().join("sub/other.yaml"));
    let mut lsp = Lsp::start(dir.path(), None, None);
    assert_eq!(codes(&lsp.open(&uri, "yaml", BASE)), Vec::<&str>::new());

    std::fs::write(&root, "rules: {GK101: error}\n").unwrap();
    lsp.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": file_uri(&root), "type": 2}]}),
    );
    let p = lsp.wait_diagnostics(&uri, TIMEOUT);
    assert_eq!(p["diagnostics"][0]["code"], "GK101", "{p:#}");
    assert_eq!(p["diagnostics"][0]["severity"], 1);
    assert!(lsp.shutdown_and_exit().success());
}

/// An open document gets the LimitRanges of its repository, the answer `lint` gives the same
/// file named alone (as pre-commit names it); outside a repository it stands alone in both.
#[test]
fn a_document_sees_the_limit_ranges_of_its_repository() {
    let (dir, path, uri) = workspace("deploy.yaml");
    let deployment = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: api, namespace: shop}\nspec:\n  template:\n    metadata:\n      annotations: {golint-k8s.io/runtime: go}\n    spec:\n      containers:\n        - name: api\n          image: ghcr.io/acme/api:1.0\n          resources: {requests: {cpu: 100m, memory: 1Gi}}\n";
    std::fs::write(&path, deployment).unwrap();
    std::fs::create_dir(dir.path().join("platform")).unwrap();
    std::fs::write(
        dir.path().join("platform/limits.yaml"),
        "apiVersion: v1\nkind: LimitRange\nmetadata: {name: defaults, namespace: shop}\nspec:\n  limits:\n    - type: Container\n      default: {memory: 1Gi}\n",
    )
    .unwrap();
    let editor = |lsp: &mut Lsp| {
        let diags = lsp.open(&uri, "yaml", deployment);
        codes(&diags)
            .iter()
            .map(|c| c.to_string())
            .collect::<Vec<_>>()
    };
    let mut lsp = Lsp::start(dir.path(), None, None);
    assert!(!editor(&mut lsp).contains(&"GK101".to_string()));
    assert_eq!(editor(&mut lsp), cli_codes(&path, None));
    assert!(lsp.shutdown_and_exit().success());
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    let mut lsp = Lsp::start(dir.path(), None, None);
    let in_repository = editor(&mut lsp);
    assert!(
        in_repository.contains(&"GK101".to_string()),
        "{in_repository:?}"
    );
    assert_eq!(in_repository, cli_codes(&path, None));
    assert!(lsp.shutdown_and_exit().success());
}

#[test]
fn initialization_options_override_the_config() {
    let (dir, path, uri) = workspace("deploy.yaml");
    // Without options: Go version unknown, so GK201; the 16-CPU default in its numbers.
    let mut lsp = Lsp::start(dir.path(), None, None);
    let diags = lsp.open(&uri, "yaml", HELM);
    let gk201 = only(&diags, "GK201")["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(gk201.contains("16-CPU node"), "{gk201}");
    assert!(lsp.shutdown_and_exit().success());

    let mut lsp = Lsp::start(dir.path(), None, Some(json!({"node-cpus": 8})));
    let diags = lsp.open(&uri, "yaml", HELM);
    let gk201 = only(&diags, "GK201")["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(gk201.contains("GOMAXPROCS = 8 (node CPUs)"), "{gk201}");
    assert!(lsp.shutdown_and_exit().success());

    // The options win over the config file next to the document.
    std::fs::write(
        dir.path().join(".golint-k8s.yaml"),
        "go-version: \"1.24\"\nassume-go: true\n",
    )
    .unwrap();
    let mut lsp = Lsp::start(dir.path(), None, Some(json!({"go-version": "1.25"})));
    let diags = lsp.open(&uri, "yaml", HELM);
    assert!(!codes(&diags).contains(&"GK201"), "{diags:#?}");
    // Fix-all uses them too.
    let actions = lsp.code_actions(&uri, &[], Some(&[FIX_ALL]));
    assert_eq!(
        apply_edits(HELM, edits_for(&actions[0], &uri), Enc::Utf16),
        cli_fix(&path, HELM, &["--go-version", "1.25"])
    );
    assert!(lsp.shutdown_and_exit().success());
}

/// The `config` option is one config for every document, as `--config` gives it: a config kept
/// elsewhere applies to a document with none beside it. One that cannot be read is said in a
/// message, and the document is still linted.
#[test]
fn the_config_option_is_the_config_of_every_document() {
    let (dir, path, uri) = workspace("deploy.yaml");
    let elsewhere = tempfile::tempdir().unwrap();
    let config = elsewhere.path().join("team.yaml");
    std::fs::write(&config, "go-version: \"1.25\"\nassume-go: true\n").unwrap();
    let mut lsp = Lsp::start(dir.path(), None, None);
    assert!(codes(&lsp.open(&uri, "yaml", HELM)).contains(&"GK201"));
    assert!(lsp.shutdown_and_exit().success());

    let option = json!({"config": config.display().to_string()});
    let mut lsp = Lsp::start(dir.path(), None, Some(option));
    let diags = lsp.open(&uri, "yaml", HELM);
    assert!(!codes(&diags).contains(&"GK201"), "{diags:#?}");
    let actions = lsp.code_actions(&uri, &[], Some(&[FIX_ALL]));
    let config_arg = config.display().to_string();
    assert_eq!(
        apply_edits(HELM, edits_for(&actions[0], &uri), Enc::Utf16),
        cli_fix(&path, HELM, &["--config", &config_arg])
    );
    assert!(lsp.shutdown_and_exit().success());

    let missing = elsewhere.path().join("missing.yaml").display().to_string();
    let mut lsp = Lsp::start(dir.path(), None, Some(json!({"config": missing})));
    let shown = lsp.wait_notification(Duration::from_secs(30), "the config error", |m| {
        m["method"] == "window/showMessage"
    });
    let text = shown["params"]["message"].as_str().unwrap();
    assert!(
        text.contains("cannot be used") && text.contains("missing.yaml"),
        "{text}"
    );
    assert!(codes(&lsp.open(&uri, "yaml", HELM)).contains(&"GK201"));
    assert!(lsp.shutdown_and_exit().success());
}

#[test]
fn helm_source_template_is_related_information() {
    let (dir, _, uri) = workspace("rendered.yaml");
    let mut lsp = Lsp::start(dir.path(), None, None);
    let diags = lsp.open(&uri, "yaml", HELM);
    for d in &diags {
        let related = d["relatedInformation"]
            .as_array()
            .expect("relatedInformation");
        assert!(
            related.iter().any(|r| r["message"]
                .as_str()
                .unwrap()
                .contains("api/templates/deployment.yaml")),
            "no template in {d:#}"
        );
    }
    assert!(lsp.shutdown_and_exit().success());
}

/// A limit inherited from a LimitRange in the same file: the related information points at the
/// LimitRange's default, where the value can be changed.
#[test]
fn limitrange_origin_points_at_the_limitrange() {
    let text = "apiVersion: v1
kind: LimitRange
metadata: {name: defaults, namespace: shop}
spec:
  limits:
    - type: Container
      default:
        memory: 768Mi
---
apiVersion: v1
kind: Pod
metadata: {name: api, namespace: shop}
spec:
  containers:
    - name: api
      image: ghcr.io/acme/api:1.0
      resources:
        requests: {cpu: 100m, memory: 768Mi}
";
    let (dir, _, uri) = workspace("inherited.yaml");
    let mut lsp = Lsp::start(dir.path(), None, None);
    let diags = lsp.open(&uri, "yaml", text);
    let d = only(&diags, "GK101");
    let related = d["relatedInformation"]
        .as_array()
        .expect("relatedInformation");
    let from_lr = related
        .iter()
        .find(|r| {
            r["message"]
                .as_str()
                .unwrap()
                .contains("LimitRange defaults")
        })
        .unwrap_or_else(|| panic!("no LimitRange note in {d:#}"));
    assert_eq!(
        from_lr["location"]["range"],
        range_of(text, "768Mi", 0, Enc::Utf16),
        "the note does not point at the LimitRange's default"
    );
    assert!(lsp.shutdown_and_exit().success());
}

#[test]
fn shutdown_then_exit_ends_with_status_0() {
    let (dir, _, uri) = workspace("deploy.yaml");
    let mut lsp = Lsp::start(dir.path(), None, None);
    lsp.open(&uri, "yaml", BASE);
    let status = lsp.shutdown_and_exit();
    assert_eq!(status.code(), Some(0));
}

#[test]
fn exit_without_shutdown_is_an_error_and_a_closed_input_ends_the_server() {
    let (dir, _, _) = workspace("x");
    // LSP: exit without shutdown ends with status 1.
    let mut lsp = Lsp::start(dir.path(), None, None);
    lsp.notify("exit", Value::Null);
    assert_eq!(lsp.wait_exit(TIMEOUT).code(), Some(1));

    // The editor went away: the server does not linger.
    let mut lsp = Lsp::start(dir.path(), None, None);
    drop(lsp.stdin.take());
    assert!(lsp.wait_exit(TIMEOUT).code().is_some());
}

#[test]
fn stacked_suppressions_on_one_line() {
    // GK201 and GK203 both point at `cpu: 500m`: suppress one, then the other.
    let (dir, _, uri) = workspace("deploy.yaml");
    let mut lsp = Lsp::start(dir.path(), None, None);
    let mut text = HELM.to_string();
    let mut diags = lsp.open(&uri, "yaml", &text);
    for (version, code) in [(2, "GK201"), (3, "GK203")] {
        let d = only(&diags, code).clone();
        let actions = lsp.code_actions(&uri, std::slice::from_ref(&d), None);
        let edits = edits_for(
            action(&actions, &format!("Suppress {code} on this line")),
            &uri,
        )
        .to_vec();
        diags = lsp.apply(&uri, version, &mut text, &edits);
        assert!(!codes(&diags).contains(&code), "{diags:#?}");
    }
    assert!(
        text.contains(
            "              # golint-k8s: ignore=GK201\n              # golint-k8s: ignore=GK203\n              cpu: 500m\n"
        ),
        "{text}"
    );
    assert_eq!(codes(&diags), ["GK102", "GK101"]);
    assert!(lsp.shutdown_and_exit().success());
}

#[test]
fn crlf_documents() {
    let crlf = BASE.replace('\n', "\r\n");
    let (dir, path, uri) = workspace("deploy.yaml");
    let mut lsp = Lsp::start(dir.path(), None, None);
    let mut text = crlf.clone();
    let diags = lsp.open(&uri, "yaml", &text);
    let d = only(&diags, "GK101").clone();
    assert_eq!(d["range"], range(pos(18, 22), pos(18, 25)));

    let actions = lsp.code_actions(&uri, std::slice::from_ref(&d), None);
    let fix = quick_fix(&actions);
    let fixed = apply_edits(&text, edits_for(fix, &uri), Enc::Utf16);
    assert_eq!(fixed, cli_fix(&path, &text, &["--select", "GK101"]));
    assert!(
        !fixed.replace("\r\n", "").contains('\n'),
        "a bare LF: {fixed:?}"
    );
    let all = lsp.code_actions(&uri, &[], Some(&[FIX_ALL]));
    assert_eq!(
        apply_edits(&text, edits_for(&all[0], &uri), Enc::Utf16),
        cli_fix(&path, &text, &[])
    );

    let edits = edits_for(action(&actions, "Suppress GK101 on this line"), &uri).to_vec();
    let diags = lsp.apply(&uri, 2, &mut text, &edits);
    assert!(
        text.contains(
            "\r\n              # golint-k8s: ignore=GK101\r\n              memory: 1Gi\r\n"
        ),
        "{text:?}"
    );
    assert_eq!(diags, Vec::<Value>::new());
    assert!(lsp.shutdown_and_exit().success());
}

#[test]
fn other_sources_diagnostics_get_no_actions() {
    let (dir, _, uri) = workspace("deploy.yaml");
    let mut lsp = Lsp::start(dir.path(), None, None);
    lsp.open(&uri, "yaml", BASE);
    // What yaml-language-server might have published for the same document.
    let foreign = json!({
        "range": range(pos(3, 8), pos(3, 11)),
        "severity": 1,
        "code": "GK101",
        "source": "yaml-schema: kubernetes",
        "message": "Incorrect type."
    });
    let actions = lsp.code_actions(&uri, &[foreign], Some(&["quickfix"]));
    assert_eq!(actions, Vec::<Value>::new());
    assert!(lsp.shutdown_and_exit().success());
}

#[test]
fn config_is_found_for_percent_encoded_uris() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("my app").join("grüße");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join(".golint-k8s.yaml"), "rules: {GK101: off}\n").unwrap();
    let mut lsp = Lsp::start(dir.path(), None, None);
    let uri = format!(
        "{}/my%20app/gr%C3%BC%C3%9Fe/deploy.yaml",
        file_uri(dir.path())
    );
    assert_eq!(lsp.open(&uri, "yaml", BASE), Vec::<Value>::new());
    // Beside it, without the config, the finding is there.
    let uri = format!("{}/my%20app/deploy.yaml", file_uri(dir.path()));
    assert_eq!(codes(&lsp.open(&uri, "yaml", BASE)), ["GK101"]);
    assert!(lsp.shutdown_and_exit().success());
}

// ---------------------------------------------------------------------------------------------
// Framing and lifecycle a client can get wrong

/// A frame with the length a client that counts characters would send, one whose length is too
/// long, and one whose headers end with `\n` alone: each is read, warned about, and the server
/// stays in step for the next message.
#[test]
fn wrong_content_lengths_are_warned_about_and_the_server_stays_in_step() {
    let (dir, _, uri) = workspace("deploy.yaml");
    let mut lsp = Lsp::start(dir.path(), None, None);
    let text = BASE.replace("name: api\n", "name: größe\n");
    let open = json!({"jsonrpc": "2.0", "method": "textDocument/didOpen",
        "params": {"textDocument": {"uri": uri, "languageId": "yaml", "version": 1, "text": text}}})
    .to_string();
    let chars = open.chars().count();
    assert!(chars < open.len());
    lsp.write(format!("Content-Length: {chars}\r\n\r\n{open}").as_bytes());
    let warning = lsp.wait_notification(TIMEOUT, "a warning about the length", |m| {
        m["method"] == "window/logMessage"
    });
    let said = warning["params"]["message"].as_str().unwrap();
    assert!(
        said.contains(&format!("Content-Length said {chars} bytes")),
        "{said}"
    );
    assert_eq!(codes(&lsp.diagnostics(&uri, 1)), ["GK101"]);

    // Too long, then a request right behind it: both are served.
    let close = json!({"jsonrpc": "2.0", "method": "textDocument/didClose",
        "params": {"textDocument": {"uri": uri}}})
    .to_string();
    lsp.write(format!("Content-Length: {}\r\n\r\n{close}", close.len() + 50).as_bytes());
    let closed = lsp.wait_diagnostics(&uri, TIMEOUT);
    assert_eq!(closed["diagnostics"], json!([]), "{closed}");
    let bogus = json!({"jsonrpc": "2.0", "id": 7, "method": "golint-k8s/bogus"}).to_string();
    lsp.write(format!("Content-Length: {}\n\n{bogus}", bogus.len()).as_bytes());
    let resp = lsp.response(json!(7), "a request framed with bare line feeds");
    assert_eq!(resp["error"]["code"], -32601, "{resp}");
    assert!(lsp.shutdown_and_exit().success());
}

/// A length no message can have ends the server with a message, before anything is allocated
/// for it; the editor then restarts the server.
#[test]
fn an_impossible_length_ends_the_server_with_a_message() {
    let (dir, _, _) = workspace("deploy.yaml");
    let mut lsp = Lsp::start(dir.path(), None, None);
    lsp.write(b"Content-Length: 9223372036854775808\r\n\r\n{}");
    let shown = lsp.wait_notification(TIMEOUT, "the reason the server stops", |m| {
        m["method"] == "window/showMessage"
    });
    let said = shown["params"]["message"].as_str().unwrap();
    assert!(said.contains("9223372036854775808 bytes"), "{said}");
    let status = lsp.wait_exit(TIMEOUT);
    assert_eq!(status.code(), Some(1), "{status:?}");
}

/// Before `initialize` notifications are dropped (a document opened then is not linted), and
/// after `shutdown` every request but `exit` is refused.
#[test]
fn the_lifecycle_is_kept() {
    let (dir, _, uri) = workspace("deploy.yaml");
    let mut lsp = Lsp::spawn(dir.path());
    lsp.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "yaml", "version": 1, "text": BASE}}),
    );
    let early = lsp.request_response("textDocument/codeAction", json!({}));
    assert_eq!(early["error"]["code"], -32002, "{early}");
    let _ = lsp.request(
        "initialize",
        json!({"processId": null, "rootUri": null, "capabilities": {}}),
    );
    let again = lsp.request_response(
        "initialize",
        json!({"processId": null, "rootUri": null, "capabilities": {}}),
    );
    assert_eq!(again["error"]["code"], -32600, "{again}");
    lsp.notify("initialized", json!({}));
    // The document opened too early is unknown: no diagnostics were or are published for it.
    lsp.notify(
        "textDocument/didSave",
        json!({"textDocument": {"uri": uri}}),
    );
    let _ = lsp.request_response("golint-k8s/bogus", json!(null));
    assert!(
        !lsp.queue
            .iter()
            .any(|m| m["method"] == "textDocument/publishDiagnostics"),
        "{:?}",
        lsp.queue
    );
    let _ = lsp.request("shutdown", Value::Null);
    let late = lsp.request_response(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri}, "range": range(pos(0, 0), pos(0, 0)),
               "context": {"diagnostics": []}}),
    );
    assert_eq!(late["error"]["code"], -32600, "{late}");
    lsp.notify("exit", Value::Null);
    assert!(lsp.wait_exit(TIMEOUT).success());
}

/// One-line JSON with thousands of findings: converting each finding's position used to count
/// from the start of its line, which made opening a 1.6 MB line take 30 s of CPU.
#[test]
#[cfg_attr(
    not(feature = "heavy-tests"),
    ignore = "heavy tier: --features heavy-tests"
)]
fn a_long_one_line_document_is_answered_in_time() {
    let (dir, _, uri) = workspace("list.json");
    let items: Vec<Value> = (0..4500)
        .map(|i| {
            json!({"apiVersion": "apps/v1", "kind": "Deployment",
              "metadata": {"name": format!("app-{i}-größe")},
              "spec": {"template": {"spec": {"containers": [{"name": "app", "image": "golang:1.22",
                "resources": {"limits": {"memory": "512Mi", "cpu": "2"}}}]}}}})
        })
        .collect();
    let text = json!({"apiVersion": "v1", "kind": "List", "items": items}).to_string();
    assert!(
        !text.contains('\n') && text.len() > 900_000,
        "{}",
        text.len()
    );
    let mut lsp = Lsp::start(dir.path(), None, None);
    let diags = lsp.open(&uri, "json", &text);
    assert_eq!(diags.len(), 9000);
    // Every position is exact: the test's own conversion of the server's range finds the
    // memory limit for GK101.
    let gk101 = diags.iter().find(|d| d["code"] == "GK101").unwrap();
    let r = byte_range(&text, &gk101["range"], Enc::Utf16);
    assert!(text[r].contains("512Mi"));
    assert!(lsp.shutdown_and_exit().success());
}

/// A large document (a stream of `n` Deployments) and its URI, opened; how long its first lint
/// took.
fn open_large(lsp: &mut Lsp, uri: &str, n: usize) -> (String, Duration) {
    let text = (0..n)
        .map(|i| BASE.replace("name: api\n", &format!("name: api-{i}\n")))
        .collect::<Vec<_>>()
        .join("---\n");
    let started = Instant::now();
    lsp.open(uri, "yaml", &text);
    (text, started.elapsed())
}

/// Sixty one-character changes to `text` (each typed after the one before), written to the
/// server in one go, as an editor's queue reaches a busy server; `text` is updated to match.
fn burst(lsp: &mut Lsp, uri: &str, text: &mut String) -> Vec<u8> {
    let mut bytes = Vec::new();
    for k in 0..60 {
        let at = text.find("image: ghcr.io/acme/api:1.0").unwrap() + "image: ".len();
        let ch = if k % 2 == 0 { "x" } else { "" };
        let (start, end) = if ch.is_empty() {
            (at, at + 1)
        } else {
            (at, at)
        };
        let change = json!({"range": range(position(text, start, lsp.enc), position(text, end, lsp.enc)), "text": ch});
        text.replace_range(start..end, ch);
        let msg = json!({"jsonrpc": "2.0", "method": "textDocument/didChange",
            "params": {"textDocument": {"uri": uri, "version": 2 + k}, "contentChanges": [change]}});
        bytes.extend(frame(msg.to_string().as_bytes()));
    }
    // The last keystroke leaves the first image renamed.
    let at = text.find("image: ghcr.io/acme/api:1.0").unwrap() + "image: ".len();
    let change = json!({"range": range(position(text, at, lsp.enc), position(text, at, lsp.enc)), "text": "y"});
    text.replace_range(at..at, "y");
    let msg = json!({"jsonrpc": "2.0", "method": "textDocument/didChange",
        "params": {"textDocument": {"uri": uri, "version": 62}, "contentChanges": [change]}});
    bytes.extend(frame(msg.to_string().as_bytes()));
    bytes
}

/// Sixty queued keystrokes on a large document are one lint, or a few, of the newest text, not
/// sixty lints in a row that each fall further behind the editor.
#[test]
fn a_burst_of_changes_is_linted_once_at_its_newest_version() {
    use golint_k8s::config::Config;
    use golint_k8s::lsp::{document_diagnostics, Encoding};

    let (dir, _, uri) = workspace("stream.yaml");
    let mut lsp = Lsp::start(dir.path(), None, None);
    let (mut text, _) = open_large(&mut lsp, &uri, 400);
    let bytes = burst(&mut lsp, &uri, &mut text);
    lsp.write(&bytes);
    let mut published = 0;
    let last = loop {
        let p = lsp.wait_diagnostics(&uri, Duration::from_secs(120));
        published += 1;
        if p["version"] == 62 {
            break p;
        }
    };
    assert!(published <= 3, "{published} lints for one burst");
    let want = document_diagnostics(
        &uri.parse().unwrap(),
        &text,
        &Config::default(),
        Encoding::Utf16,
    );
    assert_eq!(last["diagnostics"], serde_json::to_value(want).unwrap());
    assert!(lsp.shutdown_and_exit().success());
}

/// `shutdown` behind a burst of changes is answered without linting them first.
#[test]
fn shutdown_after_a_burst_is_answered_at_once() {
    let (dir, _, uri) = workspace("stream.yaml");
    let mut lsp = Lsp::start(dir.path(), None, None);
    let (mut text, one_lint) = open_large(&mut lsp, &uri, 400);
    let mut bytes = burst(&mut lsp, &uri, &mut text);
    lsp.next_id += 1;
    let id = lsp.next_id;
    bytes.extend(frame(
        json!({"jsonrpc": "2.0", "id": id, "method": "shutdown", "params": null})
            .to_string()
            .as_bytes(),
    ));
    let started = Instant::now();
    lsp.write(&bytes);
    let resp = lsp.response(json!(id), "shutdown");
    let took = started.elapsed();
    assert_eq!(resp["result"], Value::Null, "{resp}");
    assert!(
        took < Duration::from_secs(2).max(one_lint * 3),
        "shutdown took {took:?}; one lint takes {one_lint:?}"
    );
    lsp.notify("exit", Value::Null);
    assert!(lsp.wait_exit(TIMEOUT).success());
}

/// A change that does not fit the text (past its last line, or an older version) is logged and
/// withdraws the document's diagnostics, never applied somewhere else; the whole text brings it
/// back.
#[test]
fn a_change_that_does_not_fit_is_logged_and_the_document_resynced() {
    let (dir, _, uri) = workspace("deploy.yaml");
    let mut lsp = Lsp::start(dir.path(), None, None);
    assert_eq!(codes(&lsp.open(&uri, "yaml", BASE)), ["GK101"]);
    for (version, change) in [
        (
            2,
            json!({"range": range(pos(500, 3), pos(900, 0)), "text": "# end\n"}),
        ),
        (
            1,
            json!({"range": range(pos(0, 0), pos(0, 0)), "text": "# old\n"}),
        ),
    ] {
        if version == 1 {
            // Back in step first, then a version older than the last.
            lsp.notify(
                "textDocument/didChange",
                json!({"textDocument": {"uri": uri, "version": 3}, "contentChanges": [{"text": BASE}]}),
            );
            assert_eq!(codes(&lsp.diagnostics(&uri, 3)), ["GK101"]);
        }
        lsp.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [change]}),
        );
        let logged = lsp.wait_notification(TIMEOUT, "a log message", |m| {
            m["method"] == "window/logMessage"
        });
        let message = logged["params"]["message"].as_str().unwrap();
        assert!(
            message.contains("out of step") && message.contains(&uri),
            "{message}"
        );
        assert!(lsp.diagnostics(&uri, version).is_empty());
    }
    // Ranged changes to a text we do not share publish nothing; the whole text does.
    lsp.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 4},
               "contentChanges": [{"range": range(pos(0, 0), pos(0, 0)), "text": "# x\n"}]}),
    );
    lsp.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 5},
               "contentChanges": [{"range": range(pos(0, 0), pos(0, 0)), "text": "# y\n"}, {"text": BASE}]}),
    );
    assert_eq!(codes(&lsp.diagnostics(&uri, 5)), ["GK101"]);
    assert!(lsp.shutdown_and_exit().success());
}

// ---------------------------------------------------------------------------------------------
// The editor and the CLI agree

/// A Go-looking Deployment with nothing in the manifest that names its runtime: assumed Go,
/// GK201 and GK101, unless something beside it says otherwise.
const UNDECLARED: &str = r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
spec:
  template:
    spec:
      containers:
        - name: api
          image: ghcr.io/acme/api:1.0
          resources:
            requests: {cpu: "1", memory: 512Mi}
            limits: {cpu: "2", memory: 512Mi}
"#;

const GO_DOCKERFILE: &str = "FROM golang:1.22 AS build\nRUN go build -o /app .\nFROM gcr.io/distroless/static\nCOPY --from=build /app /app\nENTRYPOINT [\"/app\"]\n";

/// What `golint-k8s lint` finds in `path` (JSON), by code.
fn cli_codes(path: &Path, stdin: Option<&str>) -> Vec<String> {
    let mut cmd = Command::new(BIN);
    cmd.current_dir(path.parent().unwrap())
        .args(["lint", "--format", "json"]);
    match stdin {
        Some(_) => cmd.arg("--stdin-filename").arg(path).arg("-"),
        None => cmd.arg(path),
    };
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.unwrap_or("").as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["code"].as_str().unwrap().to_string())
        .collect()
}

/// A Deployment beside a Dockerfile `FROM python`, in a directory whose name needs
/// percent-encoding: no Go findings in the editor, and fix-all adds no GOMEMLIMIT, as the CLI.
#[test]
fn the_editor_sees_the_dockerfile_beside_the_file_as_the_cli_does() {
    let dir = tempfile::tempdir().unwrap();
    let app = dir.path().join("my app");
    std::fs::create_dir(&app).unwrap();
    std::fs::write(
        app.join("Dockerfile"),
        "FROM python:3.12-slim\nCMD [\"python\", \"app.py\"]\n",
    )
    .unwrap();
    let path = app.join("deploy.yaml");
    std::fs::write(&path, UNDECLARED).unwrap();
    let uri = format!("{}/my%20app/deploy.yaml", file_uri(dir.path()));
    assert!(cli_codes(&path, None).is_empty());
    assert_eq!(cli_fix(&path, UNDECLARED, &[]), UNDECLARED);
    let mut lsp = Lsp::start(dir.path(), None, None);
    assert_eq!(
        codes(&lsp.open(&uri, "yaml", UNDECLARED)),
        Vec::<&str>::new()
    );
    let actions = lsp.code_actions(&uri, &[], Some(&[FIX_ALL]));
    assert!(
        actions
            .iter()
            .all(|a| !a.to_string().contains("GOMEMLIMIT")),
        "{actions:#?}"
    );
    assert!(lsp.shutdown_and_exit().success());
}

/// `per-file-ignores` apply in the editor and to `--stdin-filename`, as to the file itself.
#[test]
fn per_file_ignores_apply_in_the_editor_and_to_stdin_filename() {
    let (dir, path, uri) = workspace("legacy/deploy.yaml");
    std::fs::create_dir(dir.path().join("legacy")).unwrap();
    std::fs::write(&path, BASE).unwrap();
    std::fs::write(
        dir.path().join(".golint-k8s.yaml"),
        "per-file-ignores:\n  \"legacy/**\": [GK101]\n",
    )
    .unwrap();
    assert!(cli_codes(&path, None).is_empty());
    assert!(cli_codes(&path, Some(BASE)).is_empty(), "--stdin-filename");
    let mut lsp = Lsp::start(dir.path(), None, None);
    assert_eq!(codes(&lsp.open(&uri, "yaml", BASE)), Vec::<&str>::new());
    assert!(lsp.code_actions(&uri, &[], Some(&[FIX_ALL])).is_empty());
    assert!(lsp.shutdown_and_exit().success());
}

/// A template of a Helm chart is not YAML until rendered: the CLI skips it, and the editor
/// publishes nothing for it.
#[test]
fn helm_templates_get_no_diagnostics_in_the_editor() {
    let (dir, path, uri) = workspace("chart/templates/deployment.yaml");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(
        dir.path().join("chart/Chart.yaml"),
        "apiVersion: v2\nname: chart\nversion: 0.1.0\n",
    )
    .unwrap();
    let text = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\n{{- if .Values.x }}\nspec: {{ toYaml .Values.spec | nindent 2 }}\n{{- end }}\n";
    std::fs::write(&path, text).unwrap();
    assert!(cli_codes(&path, None).is_empty());
    let mut lsp = Lsp::start(dir.path(), None, None);
    assert_eq!(lsp.open(&uri, "yaml", text), Vec::<Value>::new());
    assert!(lsp.shutdown_and_exit().success());
}

/// A Go template outside any chart that does not parse is skipped by the CLI, and the editor
/// follows the same test: nothing for the template, GK000 for a broken manifest whose only `{{`
/// is inside a quoted string.
#[test]
fn a_go_template_that_does_not_parse_gets_no_diagnostics_in_the_editor() {
    let (dir, path, uri) = workspace("deployment.yaml");
    let text = "{{$replicas := DefaultParam .Replicas 1}}\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{.Name}}\nspec:\n  replicas: {{$replicas}}\n";
    std::fs::write(&path, text).unwrap();
    assert!(cli_codes(&path, None).is_empty());
    let broken = dir.path().join("alerts.yaml");
    let broken_uri = file_uri(&broken);
    let broken_text = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: alerts\n  annotations:\n    summary: \"{{ $labels.instance }} is down\"\ndata: [1\n";
    std::fs::write(&broken, broken_text).unwrap();
    assert_eq!(cli_codes(&broken, None), ["GK000"]);
    let mut lsp = Lsp::start(dir.path(), None, None);
    assert_eq!(lsp.open(&uri, "yaml", text), Vec::<Value>::new());
    assert_eq!(
        codes(&lsp.open(&broken_uri, "yaml", broken_text)),
        ["GK000"]
    );
    assert!(lsp.shutdown_and_exit().success());
}

/// A Dockerfile changed while the server runs is read again when the editor reports it.
#[test]
fn a_changed_dockerfile_is_read_again() {
    let (dir, path, uri) = workspace("deploy.yaml");
    std::fs::write(&path, UNDECLARED).unwrap();
    let dockerfile = dir.path().join("Dockerfile");
    std::fs::write(
        &dockerfile,
        "FROM python:3.12-slim\nCMD [\"python\", \"app.py\"]\n",
    )
    .unwrap();
    let mut lsp = Lsp::start(dir.path(), None, None);
    assert_eq!(
        codes(&lsp.open(&uri, "yaml", UNDECLARED)),
        Vec::<&str>::new()
    );
    std::fs::write(&dockerfile, GO_DOCKERFILE).unwrap();
    lsp.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": file_uri(&dockerfile), "type": 2}]}),
    );
    let p = lsp.wait_diagnostics(&uri, TIMEOUT);
    let mut got: Vec<&str> = codes(p["diagnostics"].as_array().unwrap());
    got.sort();
    let mut want = cli_codes(&path, None);
    want.sort();
    assert_eq!(got, want);
    assert_eq!(got, ["GK101", "GK201"]);
    assert!(lsp.shutdown_and_exit().success());
}

/// The build files around open documents, each kind created, changed and removed while the
/// server runs: a `go.mod` (its `go` line decides GOMAXPROCS for a `ko://` image), a
/// kustomization (a file it lists is a patch, where absences are not reported) and a Dockerfile
/// new to a directory the server had already looked into. After each notification the server
/// publishes what the CLI finds in the files as they are now.
#[test]
fn watched_go_mod_kustomization_and_new_dockerfile_are_read_again() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("cmd/api")).unwrap();
    std::fs::create_dir_all(root.join("deploy")).unwrap();
    std::fs::write(
        root.join("cmd/api/main.go"),
        "package main\nfunc main() {}\n",
    )
    .unwrap();
    let gomod = root.join("go.mod");
    std::fs::write(&gomod, "module example.com/app\n\ngo 1.24\n").unwrap();
    let ko = UNDECLARED.replace("ghcr.io/acme/api:1.0", "ko://example.com/app/cmd/api");
    // Named unlike any directory: only a Dockerfile beside it can say what it runs.
    let undeclared = UNDECLARED.replace("ghcr.io/acme/api:1.0", "ghcr.io/acme/web:1.0");
    let (app, web) = (root.join("deploy/app.yaml"), root.join("deploy/web.yaml"));
    std::fs::write(&app, &ko).unwrap();
    std::fs::write(&web, &undeclared).unwrap();
    let (app_uri, web_uri) = (file_uri(&app), file_uri(&web));

    let mut lsp = Lsp::start(root, None, None);
    let sorted = |mut v: Vec<&str>| {
        v.sort();
        v.iter().map(|c| c.to_string()).collect::<Vec<String>>()
    };
    let app_codes = sorted(codes(&lsp.open(&app_uri, "yaml", &ko)));
    let web_codes = sorted(codes(&lsp.open(&web_uri, "yaml", &undeclared)));
    assert_eq!(app_codes, ["GK101", "GK201"]);
    assert_eq!(web_codes, ["GK101", "GK201"]);

    // Tell the server about one file, then read what it publishes for both documents (app.yaml,
    // web.yaml), and check it against the CLI.
    let changed = |lsp: &mut Lsp, file: &Path, kind: u8| -> [Vec<String>; 2] {
        lsp.notify(
            "workspace/didChangeWatchedFiles",
            json!({"changes": [{"uri": file_uri(file), "type": kind}]}),
        );
        [(&app_uri, &app), (&web_uri, &web)].map(|(uri, path)| {
            let p = lsp.wait_diagnostics(uri, TIMEOUT);
            let got = sorted(codes(p["diagnostics"].as_array().unwrap()));
            let mut want = cli_codes(path, None);
            want.sort();
            assert_eq!(got, want, "{} after {}", path.display(), file.display());
            got
        })
    };

    // Go 1.25 sizes GOMAXPROCS from the CPU limit itself.
    std::fs::write(&gomod, "module example.com/app\n\ngo 1.25\n").unwrap();
    let [app_codes, _] = changed(&mut lsp, &gomod, 2);
    assert_eq!(app_codes, ["GK101"]);

    // A kustomization that lists app.yaml as a patch: a partial object, nothing missing.
    let kustomization = root.join("deploy/kustomization.yaml");
    std::fs::write(
        &kustomization,
        "resources: [../base]\npatches:\n  - path: app.yaml\n",
    )
    .unwrap();
    let [app_codes, web_codes] = changed(&mut lsp, &kustomization, 1);
    assert_eq!(app_codes, Vec::<String>::new());
    assert_eq!(web_codes, ["GK101", "GK201"]);
    std::fs::write(
        &kustomization,
        "resources: [../base]\npatches:\n  - path: web.yaml\n",
    )
    .unwrap();
    let [app_codes, web_codes] = changed(&mut lsp, &kustomization, 2);
    assert_eq!(app_codes, ["GK101"]);
    assert_eq!(web_codes, Vec::<String>::new());
    std::fs::remove_file(&kustomization).unwrap();
    let [_, web_codes] = changed(&mut lsp, &kustomization, 3);
    assert_eq!(web_codes, ["GK101", "GK201"]);

    // A Dockerfile appears beside web.yaml: it builds a Python image.
    let dockerfile = root.join("deploy/Dockerfile");
    std::fs::write(
        &dockerfile,
        "FROM python:3.12-slim\nCMD [\"python\", \"app.py\"]\n",
    )
    .unwrap();
    let [app_codes, web_codes] = changed(&mut lsp, &dockerfile, 1);
    assert_eq!(web_codes, Vec::<String>::new());
    assert_eq!(
        app_codes,
        ["GK101"],
        "a ko:// image is Go whatever the Dockerfile says"
    );

    // The go.mod goes back to Go 1.24.
    std::fs::write(&gomod, "module example.com/app\n\ngo 1.24\n").unwrap();
    let [app_codes, _] = changed(&mut lsp, &gomod, 2);
    assert_eq!(app_codes, ["GK101", "GK201"]);
    assert!(lsp.shutdown_and_exit().success());
}

/// A kustomization open in the editor and saved there: the server sees the save itself, so the
/// documents it makes patches are linted again even when no file watcher reports it.
#[test]
fn a_saved_kustomization_is_read_again_without_a_watcher() {
    let (dir, path, uri) = workspace("deploy.yaml");
    std::fs::write(&path, UNDECLARED).unwrap();
    let kustomization = dir.path().join("kustomization.yaml");
    let listed = "resources: [../base]\npatches:\n  - path: deploy.yaml\n";
    std::fs::write(&kustomization, "resources: [../base]\n").unwrap();
    let mut lsp = Lsp::start(dir.path(), None, None);
    let opened = lsp.open(&uri, "yaml", UNDECLARED);
    let mut got = codes(&opened);
    got.sort();
    assert_eq!(got, ["GK101", "GK201"]);
    let k_uri = file_uri(&kustomization);
    lsp.open(&k_uri, "yaml", "resources: [../base]\n");
    std::fs::write(&kustomization, listed).unwrap();
    lsp.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": k_uri, "version": 2},
               "contentChanges": [{"text": listed}]}),
    );
    lsp.wait_diagnostics(&k_uri, TIMEOUT);
    lsp.notify(
        "textDocument/didSave",
        json!({"textDocument": {"uri": k_uri}}),
    );
    let p = lsp.wait_diagnostics(&uri, TIMEOUT);
    assert_eq!(
        p["diagnostics"],
        json!([]),
        "a patch reports nothing missing"
    );
    assert!(cli_codes(&path, None).is_empty());
    assert!(lsp.shutdown_and_exit().success());
}

// ---------------------------------------------------------------------------------------------
/// Several documents that lean on each other the way the lint gathers them file-wide: a
/// LimitRange whose defaults reach the Deployments of its namespace, a VPA, a ConfigMap, Helm
/// `# Source:` comments, and suppression comments on a line and for a document.
const STREAM: &str = r#"# Source: shop/templates/limits.yaml
apiVersion: v1
kind: LimitRange
metadata:
  name: defaults
  namespace: shop
spec:
  limits:
    - type: Container
      default:
        cpu: "2"
        memory: 1Gi
---
# Source: shop/templates/api.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
  namespace: shop
spec:
  template:
    spec:
      containers:
        - name: api
          image: ghcr.io/acme/api:1.0
          env:
            - name: GOGC
              value: 100
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
spec:
  template:
    spec:
      containers:
        # golint-k8s: ignore=GK101
        - name: web
          image: ghcr.io/acme/web:1.0
          resources:
            limits: {cpu: 500m, memory: 256Mi}
---
# golint-k8s: ignore-document=GK102
apiVersion: apps/v1
kind: Deployment
metadata:
  name: worker
spec:
  template:
    spec:
      containers:
        - name: worker
          image: ghcr.io/acme/worker:1.0
          resources:
            requests: {cpu: "1", memory: 512Mi}
            limits: {cpu: "1", memory: 1Gi}
---
apiVersion: autoscaling.k8s.io/v1
kind: VerticalPodAutoscaler
metadata:
  name: worker
spec:
  targetRef: {apiVersion: apps/v1, kind: Deployment, name: worker}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
data:
  GOMEMLIMIT: 900MiB
---
apiVersion: batch/v1
kind: CronJob
metadata:
  name: report
spec:
  schedule: "0 * * * *"
  jobTemplate:
    spec:
      template:
        spec:
          containers:
            - name: report
              image: ghcr.io/acme/report:1.0
              envFrom:
                - configMapRef: {name: settings}
              resources:
                limits: {memory: 2Gi}
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: cache
  namespace: shop
spec:
  template:
    spec:
      containers:
        - name: cache
          image: ghcr.io/acme/cache:1.0
          args: ["--size=1Gi"]
"#;

/// The server lints only the documents an edit touched and keeps the findings of the others:
/// after each of a few hundred random edits (separators added and removed, edits inside the
/// LimitRange, the VPA and the ConfigMap, suppression comments, invalid YAML, several changes in
/// one notification), what it publishes, and the quick fixes it offers for it, must equal a fresh
/// lint of the whole text.
#[test]
fn incremental_diagnostics_equal_a_full_lint_after_random_edits() {
    use golint_k8s::config::Config;
    use golint_k8s::lsp::{document_diagnostics, document_fixes, Encoding};

    let (dir, _, uri) = workspace("stream.yaml");
    let parsed: lsp_types::Uri = uri.parse().unwrap();
    let mut lsp = Lsp::start(dir.path(), None, None);
    // Plain Deployments between them, so that many edits land in documents whose neighbours
    // hold nothing the others lean on, and are linted alone.
    let plain: String = (0..8)
        .map(|i| {
            format!(
                "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: plain-{i}\n  \
                 namespace: shop\nspec:\n  template:\n    spec:\n      containers:\n        \
                 - name: app\n          image: ghcr.io/acme/app:{i}\n          env:\n            \
                 - name: GOGC\n              value: \"100\"\n          resources:\n            \
                 limits: {{memory: 1Gi}}\n"
            )
        })
        .collect();
    let base = format!("{STREAM}{plain}---\n{STREAM}{plain}");
    let mut text = base.clone();
    lsp.open(&uri, "yaml", &text);
    let mut seed = 0x2545_f491_4f6c_dd1d_u64;
    let mut next = move |n: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n.max(1) as u64) as usize
    };
    let line_starts = |text: &str| -> Vec<usize> {
        std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .filter(|&i| i < text.len())
            .collect()
    };
    let separators = |text: &str| -> Vec<usize> {
        line_starts(text)
            .into_iter()
            .filter(|&i| text[i..].starts_with("---\n"))
            .collect()
    };
    let boundary = |text: &str, mut at: usize| {
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        at
    };
    // An edit that breaks the YAML is undone by the next one, so that most edits are to a file
    // the server can lint in part.
    let mut undo: Option<(usize, usize, String)> = None;
    for version in 2..400_i64 {
        let mut changes = Vec::new();
        if version % 97 == 0 {
            text = base.clone();
            undo = None;
            changes.push(json!({"text": text}));
        } else {
            for _ in 0..1 + next(2) {
                let pick = |text: &str, needles: &[&str], k: usize, r: usize| {
                    let needle = needles[k % needles.len()];
                    let hits: Vec<usize> = text.match_indices(needle).map(|(i, _)| i).collect();
                    hits.get(r % hits.len().max(1))
                        .map(|&i| (i, i + needle.len()))
                };
                let (k, r) = (next(1000), next(1000));
                let (a, b, new): (usize, usize, String) = if let Some(u) = undo.take() {
                    u
                } else {
                    match next(9) {
                        // A value, in a Deployment or in the LimitRange, VPA and ConfigMap.
                        0 | 1 => {
                            let values = ["1Gi", "2Gi", "\"100\"", "500m", "900MiB", "shop"];
                            let Some((a, b)) = pick(&text, &values, k, r) else {
                                continue;
                            };
                            (a, b, values[next(values.len())].to_string())
                        }
                        // A comment line: a suppression, or none.
                        2 => {
                            let starts = line_starts(&text);
                            let at = starts[r % starts.len()];
                            let line = [
                                "# golint-k8s: ignore=GK101\n",
                                "# golint-k8s: ignore-document=GK203\n",
                                "# a note\n",
                                "\n",
                            ][k % 4];
                            (at, at, line.to_string())
                        }
                        // A whole document, added or removed.
                        3 => {
                            let seps = separators(&text);
                            let at = seps.get(r % seps.len().max(1)).copied().unwrap_or(0);
                            (at, at, plain.split_inclusive("---\n").take(2).collect())
                        }
                        4 => {
                            let seps = separators(&text);
                            if seps.len() < 3 {
                                continue;
                            }
                            let i = r % (seps.len() - 1);
                            (seps[i], seps[i + 1], String::new())
                        }
                        // A separator removed (two documents become one) or added.
                        5 => {
                            let seps = separators(&text);
                            let Some(&at) = seps.get(r % seps.len().max(1)) else {
                                continue;
                            };
                            (at, at + 4, String::new())
                        }
                        6 => {
                            let Some((a, _)) = pick(&text, &["\napiVersion:", "\nkind:"], k, r)
                            else {
                                continue;
                            };
                            (a + 1, a + 1, "---\n".to_string())
                        }
                        // A kind changed: a Deployment becomes a LimitRange and back.
                        7 => {
                            let kinds = ["kind: Deployment", "kind: LimitRange", "kind: ConfigMap"];
                            let Some((a, b)) = pick(&text, &kinds, k, r) else {
                                continue;
                            };
                            (a, b, kinds[next(kinds.len())].to_string())
                        }
                        // Anything, undone by the next edit.
                        _ => {
                            let a = boundary(&text, r * text.len() / 1000);
                            let b = boundary(&text, (a + next(30)).min(text.len()));
                            let new = ["\"", "x", "ö", "{", "  ", "...\n", "%YAML 1.1\n"][k % 7];
                            undo = Some((a, a + new.len(), text[a..b].to_string()));
                            (a, b, new.to_string())
                        }
                    }
                };
                changes.push(json!({
                    "range": range(position(&text, a, Enc::Utf16), position(&text, b, Enc::Utf16)),
                    "text": new,
                }));
                text.replace_range(a..b, &new);
            }
        }
        lsp.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": changes}),
        );
        let got = lsp.diagnostics(&uri, version);
        let want = serde_json::to_value(document_diagnostics(
            &parsed,
            &text,
            &Config::default(),
            Encoding::Utf16,
        ))
        .unwrap();
        assert_eq!(
            Value::Array(got.clone()),
            want,
            "edit {version}: the server's diagnostics differ from a fresh lint of {text:?}"
        );
        // And the quick fix of each is the one a fresh lint gives, moved as its diagnostic was
        // (every few edits: a fix moved wrongly stays wrong in the sets after it).
        if version % 4 != 0 {
            continue;
        }
        let actions = lsp.code_actions(&uri, &got, Some(&["quickfix"]));
        let fixes: Vec<Option<Value>> = actions
            .split(|a| a["title"].as_str().unwrap().starts_with("Suppress "))
            .take(got.len())
            .map(|group| {
                group.first().map(|a| {
                    let title = a["title"].as_str().unwrap();
                    json!({"title": title.strip_suffix(" (unsafe)").unwrap_or(title),
                           "edits": a["edit"]["changes"][&uri]})
                })
            })
            .collect();
        let want_fixes: Vec<Option<Value>> =
            document_fixes(&parsed, &text, &Config::default(), Encoding::Utf16)
                .into_iter()
                .map(|f| f.map(|(title, edits)| json!({"title": title, "edits": edits})))
                .collect();
        assert_eq!(
            fixes, want_fixes,
            "edit {version}: the server's quick fixes differ from a fresh lint of {text:?}"
        );
    }
    assert!(lsp.shutdown_and_exit().success());
}

// Soak

/// 10,000 random edits (multi-byte characters, line breaks, long lines, several changes in one
/// notification, whole-text replacements), each followed by the published diagnostics: every set
/// must equal what a fresh lint of the same text gives, and the server's memory must stay flat.
#[test]
#[cfg_attr(
    not(feature = "heavy-tests"),
    ignore = "heavy tier: --features heavy-tests"
)]
fn soak_ten_thousand_edits() {
    use golint_k8s::config::Config;
    use golint_k8s::lsp::{document_diagnostics, Encoding};

    const EDITS: usize = 10_000;
    let (dir, _, uri) = workspace("deploy.yaml");
    let parsed: lsp_types::Uri = uri.parse().unwrap();
    let mut lsp = Lsp::start(dir.path(), None, None);
    let mut text = BASE.to_string();
    lsp.open(&uri, "yaml", &text);
    let long_line = format!("# {}\n", "ö😀x".repeat(1000));
    let pieces = [
        "",
        "x",
        "ö",
        "😀",
        "\n",
        "  ",
        "- ",
        ": ",
        "\r\n",
        "512Mi",
        "1Gi",
        "\"",
        "'",
        "{",
        "}",
        "- name: GOMEMLIMIT\n  value: 900MiB\n",
        "cpu: \"2\"",
        "# golint-k8s: ignore=GK101\n",
        &long_line,
    ];
    let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
    let mut next = move |n: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n as u64) as usize
    };
    let boundary = |text: &str, mut at: usize| {
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        at
    };
    let started = Instant::now();
    let mut rss_after_first_thousand = 0;
    for version in 2..EDITS as i64 + 2 {
        let mut changes = Vec::new();
        if text.len() > 24_000 || next(500) == 0 {
            // A whole-text replacement brings the document back to a manifest.
            text = BASE.to_string();
            changes.push(json!({"text": text}));
        } else {
            for _ in 0..1 + next(3) {
                let a = boundary(&text, next(text.len() + 1));
                let b = boundary(&text, (a + next(40)).min(text.len()));
                let new = pieces[next(pieces.len())];
                changes.push(json!({
                    "range": range(position(&text, a, Enc::Utf16), position(&text, b, Enc::Utf16)),
                    "text": new,
                }));
                text.replace_range(a..b, new);
            }
        }
        lsp.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": changes}),
        );
        let got = lsp.diagnostics(&uri, version);
        let want = serde_json::to_value(document_diagnostics(
            &parsed,
            &text,
            &Config::default(),
            Encoding::Utf16,
        ))
        .unwrap();
        assert_eq!(
            Value::Array(got),
            want,
            "edit {version}: the server's diagnostics differ from a fresh lint of {text:?}"
        );
        if version == 1_001 {
            rss_after_first_thousand = rss_kib(lsp.child.id());
        }
    }
    let rss = rss_kib(lsp.child.id());
    println!(
        "soak: {EDITS} edits in {:.1} s, resident memory {} KiB after 1,000 edits and {} KiB after {EDITS}",
        started.elapsed().as_secs_f64(),
        rss_after_first_thousand,
        rss
    );
    assert!(
        rss <= rss_after_first_thousand + 16 * 1024,
        "memory grew from {rss_after_first_thousand} KiB to {rss} KiB"
    );
    assert!(lsp.shutdown_and_exit().success());
}

/// Resident memory of a process, from `/proc` (0 where there is none).
fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}
