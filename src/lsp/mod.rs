//! `golint-k8s lsp`: the language server. It shares everything with the CLI (the linter, the fix
//! engine, the config file) and adds only what an editor needs: open documents kept in memory,
//! positions in the client's encoding, diagnostics pushed on every change, and code actions.
//!
//! One thread, synchronous, as ruff and rust-analyzer's scaffold do it. Changes are applied as they
//! are read, but a document is linted only when no message is waiting: a burst of keystrokes on a
//! large document is linted once, at its newest version, and a request queued behind the burst
//! (`shutdown`) is answered without waiting for lints nobody will see. Messages are read by [`wire`] rather than by
//! `lsp_server::Connection` so that a malformed message or a wrong length is logged and the
//! server stays in step, instead of ending the connection or falling silent.

mod actions;
mod convert;
mod incremental;
pub mod wire;

use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;

use lsp_server::{ErrorCode, Message, Notification, Request, RequestId, Response};
use lsp_types::{
    notification::{self, Notification as _},
    request::{self, Request as _},
    CodeActionKind, CodeActionOptions, CodeActionProviderCapability, DiagnosticSeverity,
    InitializeParams, InitializeResult, MessageType, PositionEncodingKind, SaveOptions,
    ServerCapabilities, ServerInfo, TextDocumentSyncCapability, TextDocumentSyncKind,
    TextDocumentSyncOptions, TextDocumentSyncSaveOptions,
};
use serde_json::Value;

use crate::config::{Config, GoVersion, Overrides};
use crate::lint::FileReport;
use crate::run::Run;
use crate::source::{Origin, Source, MAX_FILE_BYTES};
pub use convert::Encoding;

pub const FIX_ALL_KIND: &str = "source.fixAll.golint-k8s";

/// An open document.
struct Doc {
    text: String,
    version: i32,
    /// What was published for it last, while an edit can be linted as a change to that (see
    /// [`incremental`]); `None` when the next lint must be of the whole text.
    last: Option<incremental::Published>,
}

struct Server {
    encoding: Encoding,
    overrides: Overrides,
    docs: HashMap<String, Doc>,
    /// Documents changed since their diagnostics were last published, oldest first.
    dirty: Vec<String>,
    /// Documents whose text the client and the server no longer agree on (a change that could
    /// not be applied): quiet until the client sends the whole text again.
    out_of_step: std::collections::HashSet<String>,
    /// The session's run, as the CLI's `lint` has one: where configs come from, and what the
    /// session knows beyond the open documents (the project files around them, read once and
    /// forgotten when the editor reports that one changed, and the cached image facts).
    run: Run,
    shutdown: bool,
    initialized: bool,
    /// Config files found invalid, by URI, with the diagnostic published on each: said once,
    /// and cleared when a watched file changes (the next lint says it again if it still is).
    config_errors: HashMap<String, String>,
}

/// Run the server on standard input and output; returns the process's exit code.
pub fn run() -> i32 {
    let mut input = match stdin_reader() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("golint-k8s: cannot read standard input: {e}");
            return 1;
        }
    };
    let mut more = || input_arrives(MORE_WAIT_MS);
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut server = Server {
        encoding: Encoding::Utf16,
        overrides: Overrides::default(),
        docs: HashMap::new(),
        dirty: Vec::new(),
        out_of_step: Default::default(),
        run: Run::session(Overrides::default()),
        shutdown: false,
        initialized: false,
        config_errors: HashMap::new(),
    };
    loop {
        // Lint only when the client has nothing more to say: the changes still queued would
        // make the lint stale before it is published.
        if !server.dirty.is_empty() && input.buffer().is_empty() && !input_waiting() {
            let flushed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                server.publish_dirty(&mut out)
            }));
            match flushed {
                Ok(Ok(())) => {}
                Ok(Err(_)) => return 1,
                Err(_) => log(
                    &mut out,
                    MessageType::ERROR,
                    "golint-k8s: internal error while linting; please report it".into(),
                ),
            }
        }
        let msg = match wire::read(&mut input, &mut more) {
            Ok(wire::Incoming::Message(msg)) => msg,
            Ok(wire::Incoming::Warned(msg, why)) => {
                log(&mut out, MessageType::WARNING, format!("golint-k8s: {why}"));
                msg
            }
            Ok(wire::Incoming::Skipped(why)) => {
                log(&mut out, MessageType::ERROR, format!("golint-k8s: {why}"));
                continue;
            }
            Ok(wire::Incoming::End) => return i32::from(!server.shutdown),
            Ok(wire::Incoming::Fatal(why)) => {
                // Nothing after this can be read in step: say so where the editor shows it and
                // in its log of the server's standard error, and end so that it restarts us.
                let why = format!("golint-k8s: {why}; the server stops");
                let _ = show_message(&mut out, MessageType::ERROR, &why);
                eprintln!("{why}");
                return 1;
            }
            Err(_) => return 1,
        };
        let handled = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            server.handle(msg, &mut out)
        }));
        match handled {
            Ok(Ok(Some(code))) => return code,
            Ok(Ok(None)) => {}
            // The client is gone: nobody left to serve.
            Ok(Err(_)) => return 1,
            Err(_) => log(
                &mut out,
                MessageType::ERROR,
                "golint-k8s: internal error while handling a message; please report it".into(),
            ),
        }
    }
}

/// How long the rest of a body counted short may take to arrive after its declared end.
const MORE_WAIT_MS: i32 = 50;

/// Standard input as a file of our own, buffered here only: the wire reader must see every byte
/// that has arrived but is not read yet, which `Stdin`'s hidden buffer would keep from it.
#[cfg(unix)]
fn stdin_reader() -> std::io::Result<std::io::BufReader<std::fs::File>> {
    use std::os::fd::AsFd;
    let fd = std::io::stdin().as_fd().try_clone_to_owned()?;
    Ok(std::io::BufReader::with_capacity(
        64 * 1024,
        std::fs::File::from(fd),
    ))
}

/// Whether input arrives on standard input within `ms` milliseconds (or it is closed).
#[cfg(unix)]
fn input_arrives(ms: i32) -> bool {
    let mut p = libc::pollfd {
        fd: 0,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd, on a descriptor the process keeps open.
    unsafe { libc::poll(&mut p, 1, ms) > 0 }
}

/// Whether a message is waiting to be read, without waiting for one.
#[cfg(unix)]
fn input_waiting() -> bool {
    input_arrives(0)
}

#[cfg(not(unix))]
fn input_waiting() -> bool {
    false
}

#[cfg(not(unix))]
fn stdin_reader() -> std::io::Result<std::io::BufReader<std::io::Stdin>> {
    Ok(std::io::BufReader::new(std::io::stdin()))
}

#[cfg(not(unix))]
fn input_arrives(_: i32) -> bool {
    true
}

fn send(out: &mut impl Write, msg: Message) -> std::io::Result<()> {
    msg.write(out)
}

fn log(out: &mut impl Write, typ: MessageType, message: String) {
    let params = lsp_types::LogMessageParams { typ, message };
    let _ = send(
        out,
        Message::Notification(Notification::new(
            notification::LogMessage::METHOD.to_string(),
            params,
        )),
    );
}

/// A message the editor shows the user (not only logs).
fn show_message(out: &mut impl Write, typ: MessageType, message: &str) -> std::io::Result<()> {
    let params = lsp_types::ShowMessageParams {
        typ,
        message: message.to_string(),
    };
    send(
        out,
        Message::Notification(Notification::new(
            notification::ShowMessage::METHOD.to_string(),
            params,
        )),
    )
}

impl Server {
    /// Handle one message; `Some(code)` ends the process (the `exit` notification).
    fn handle(&mut self, msg: Message, out: &mut impl Write) -> std::io::Result<Option<i32>> {
        match msg {
            Message::Request(req) => {
                let id = req.id.clone();
                let response = self.request(req, out);
                let response = match response {
                    Ok(v) => Response::new_ok(id, v),
                    Err((code, m)) => Response::new_err(id, code as i32, m),
                };
                send(out, Message::Response(response))?;
            }
            Message::Notification(n) => {
                if n.method == notification::Exit::METHOD {
                    return Ok(Some(i32::from(!self.shutdown)));
                }
                // The protocol drops notifications before `initialize` and after `shutdown`.
                if self.initialized && !self.shutdown {
                    self.notification(n, out)?;
                }
            }
            // Answers to our own requests (registering the config watcher) need no action.
            Message::Response(_) => {}
        }
        Ok(None)
    }

    fn request(
        &mut self,
        req: Request,
        out: &mut impl Write,
    ) -> Result<Value, (ErrorCode, String)> {
        let params = req.params;
        match req.method.as_str() {
            _ if self.shutdown => Err((
                ErrorCode::InvalidRequest,
                "the server is shutting down; only exit is accepted".to_string(),
            )),
            request::Initialize::METHOD if self.initialized => Err((
                ErrorCode::InvalidRequest,
                "initialize was already sent".to_string(),
            )),
            request::Initialize::METHOD => {
                let p: InitializeParams = parse(params)?;
                Ok(serde_json::to_value(self.initialize(p, out)).unwrap_or(Value::Null))
            }
            _ if !self.initialized => Err((
                ErrorCode::ServerNotInitialized,
                "initialize first".to_string(),
            )),
            request::Shutdown::METHOD => {
                self.shutdown = true;
                // Nobody will read diagnostics from now on.
                self.dirty.clear();
                Ok(Value::Null)
            }
            request::CodeActionRequest::METHOD => {
                let p: lsp_types::CodeActionParams = parse(params)?;
                let uri = p.text_document.uri.as_str().to_string();
                let Some(doc) = self.docs.get(&uri) else {
                    return Ok(Value::Array(Vec::new()));
                };
                if is_helm_template(&uri) {
                    return Ok(Value::Array(Vec::new()));
                }
                let (cfg, _) = self.config_for(&uri, out);
                let list = actions::code_actions(
                    &p,
                    &doc.text,
                    doc.last.as_ref(),
                    &cfg,
                    self.encoding,
                    &self.run,
                );
                Ok(serde_json::to_value(list).unwrap_or(Value::Null))
            }
            other => Err((
                ErrorCode::MethodNotFound,
                format!("golint-k8s does not implement {other}"),
            )),
        }
    }

    fn initialize(&mut self, p: InitializeParams, out: &mut impl Write) -> InitializeResult {
        let utf8 = p
            .capabilities
            .general
            .as_ref()
            .and_then(|g| g.position_encodings.as_ref())
            .is_some_and(|encs| encs.contains(&PositionEncodingKind::UTF8));
        self.encoding = if utf8 {
            Encoding::Utf8
        } else {
            Encoding::Utf16
        };
        if let Some(opts) = &p.initialization_options {
            self.overrides = overrides(opts, out);
            self.run = Run::session_with(explicit_config(opts, out), self.overrides.clone());
        }
        self.initialized = true;
        let watch = p
            .capabilities
            .workspace
            .as_ref()
            .and_then(|w| w.did_change_watched_files.as_ref())
            .and_then(|d| d.dynamic_registration)
            .unwrap_or(false);
        if watch {
            register_config_watcher(out);
        }
        InitializeResult {
            capabilities: ServerCapabilities {
                position_encoding: Some(if utf8 {
                    PositionEncodingKind::UTF8
                } else {
                    PositionEncodingKind::UTF16
                }),
                text_document_sync: Some(TextDocumentSyncCapability::Options(
                    TextDocumentSyncOptions {
                        open_close: Some(true),
                        change: Some(TextDocumentSyncKind::INCREMENTAL),
                        save: Some(TextDocumentSyncSaveOptions::SaveOptions(SaveOptions {
                            include_text: Some(false),
                        })),
                        ..Default::default()
                    },
                )),
                code_action_provider: Some(CodeActionProviderCapability::Options(
                    CodeActionOptions {
                        code_action_kinds: Some(vec![
                            CodeActionKind::QUICKFIX,
                            CodeActionKind::new(FIX_ALL_KIND),
                        ]),
                        ..Default::default()
                    },
                )),
                ..Default::default()
            },
            server_info: Some(ServerInfo {
                name: "golint-k8s".into(),
                version: Some(env!("CARGO_PKG_VERSION").into()),
            }),
        }
    }

    fn notification(&mut self, n: Notification, out: &mut impl Write) -> std::io::Result<()> {
        let params = n.params;
        match n.method.as_str() {
            notification::DidOpenTextDocument::METHOD => {
                let Ok(p) = parse::<lsp_types::DidOpenTextDocumentParams>(params) else {
                    return Ok(());
                };
                let uri = p.text_document.uri.as_str().to_string();
                self.out_of_step.remove(&uri);
                self.docs.insert(
                    uri.clone(),
                    Doc {
                        text: p.text_document.text,
                        version: p.text_document.version,
                        last: None,
                    },
                );
                self.mark(uri);
                Ok(())
            }
            notification::DidChangeTextDocument::METHOD => {
                let Ok(p) = parse::<lsp_types::DidChangeTextDocumentParams>(params) else {
                    return Ok(());
                };
                self.change(p, out)
            }
            notification::DidSaveTextDocument::METHOD => {
                let Ok(p) = parse::<lsp_types::DidSaveTextDocumentParams>(params) else {
                    return Ok(());
                };
                let uri = p.text_document.uri.as_str().to_string();
                // A build file the editor has open (a kustomization or skaffold file is YAML
                // too): saved, it is on disk, whether or not a file watcher reports it.
                if uri_path(&uri).is_some_and(|p| is_watched(&p)) {
                    self.files_changed();
                }
                // A saved manifest may hold a LimitRange or VPA that others' findings rest on.
                let saved = self.docs.get(&uri).map(|d| d.text.as_bytes());
                if saved.is_some_and(crate::k8s::index::Index::may_hold) {
                    self.run.forget_index();
                    self.relint_all();
                }
                self.mark(uri);
                Ok(())
            }
            notification::DidCloseTextDocument::METHOD => {
                let Ok(p) = parse::<lsp_types::DidCloseTextDocumentParams>(params) else {
                    return Ok(());
                };
                let uri = p.text_document.uri;
                self.docs.remove(uri.as_str());
                self.out_of_step.remove(uri.as_str());
                self.dirty.retain(|d| d != uri.as_str());
                publish_diagnostics(out, uri, Vec::new(), None)
            }
            notification::DidChangeWatchedFiles::METHOD => {
                self.files_changed();
                // A config fixed since is quiet again; one still invalid is reported anew by the
                // lint that follows.
                for uri in std::mem::take(&mut self.config_errors).into_keys() {
                    if let Ok(parsed) = uri.parse::<lsp_types::Uri>() {
                        publish_diagnostics(out, parsed, Vec::new(), None)?;
                    }
                }
                Ok(())
            }
            // initialized, $/cancelRequest (every request is answered at once), $/setTrace, …
            _ => Ok(()),
        }
    }

    /// Apply a didChange to the document's text. The document is linted later, once the queue
    /// is empty. A change that cannot be applied (a range past the last line, a version that
    /// does not follow the last) means the client's text is not ours: it is logged, the
    /// document's diagnostics are withdrawn and nothing is published for it until a change
    /// carries the whole text or the document is opened again (positions in a text we do not
    /// have would put fixes in the wrong place).
    fn change(
        &mut self,
        p: lsp_types::DidChangeTextDocumentParams,
        out: &mut impl Write,
    ) -> std::io::Result<()> {
        let uri = p.text_document.uri.as_str().to_string();
        let version = p.text_document.version;
        let mut changes = p.content_changes;
        if self.out_of_step.contains(&uri) {
            // Only a whole text brings it back; ranged changes before it are moot.
            let Some(full) = changes.iter().rposition(|c| c.range.is_none()) else {
                return Ok(());
            };
            changes.drain(..full);
            self.out_of_step.remove(&uri);
            self.docs.insert(
                uri.clone(),
                Doc {
                    text: String::new(),
                    version,
                    last: None,
                },
            );
        }
        let enc = self.encoding;
        let Some(doc) = self.docs.get_mut(&uri) else {
            return Ok(());
        };
        let mut problem = (version < doc.version)
            .then(|| format!("version {version} arrived after version {}", doc.version));
        for change in changes {
            if problem.is_some() {
                break;
            }
            match change.range {
                Some(r) => {
                    let start = convert::offset_in(&doc.text, r.start, enc);
                    let end = convert::offset_in(&doc.text, r.end, enc);
                    match (start, end) {
                        (Some(s), Some(e)) if s <= e => {
                            if let Some(last) = &mut doc.last {
                                last.changed(s..e, doc.text.len());
                            }
                            doc.text.replace_range(s..e, &change.text)
                        }
                        _ => {
                            problem = Some(format!(
                                "a change of lines {}-{} does not fit the document's {} lines",
                                r.start.line + 1,
                                r.end.line + 1,
                                doc.text.lines().count()
                            ))
                        }
                    }
                }
                None => {
                    doc.text = change.text;
                    doc.last = None;
                }
            }
        }
        doc.version = version;
        let Some(problem) = problem else {
            self.mark(uri);
            return Ok(());
        };
        log(
            out,
            MessageType::WARNING,
            format!(
                "golint-k8s: {uri} is out of step: {problem}; its diagnostics are withdrawn until the editor sends the whole text (reopen the file)"
            ),
        );
        self.docs.remove(&uri);
        self.dirty.retain(|d| *d != uri);
        self.out_of_step.insert(uri.clone());
        match uri.parse::<lsp_types::Uri>() {
            Ok(parsed) => publish_diagnostics(out, parsed, Vec::new(), Some(version)),
            Err(_) => Ok(()),
        }
    }

    /// A config, Dockerfile, go.mod or kustomization changed: forget every one read so far and
    /// lint every open document again.
    fn files_changed(&mut self) {
        self.run.forget_files();
        self.run.forget_index();
        self.relint_all();
    }

    /// Lint every open document again, whole: what the others say may have changed.
    fn relint_all(&mut self) {
        for last in self.docs.values_mut().filter_map(|d| d.last.as_mut()) {
            last.lint_whole_next();
        }
        let uris: Vec<String> = self.docs.keys().cloned().collect();
        for uri in uris {
            self.mark(uri);
        }
    }

    /// Lint `uri` once the queue is empty.
    fn mark(&mut self, uri: String) {
        if !self.dirty.contains(&uri) {
            self.dirty.push(uri);
        }
    }

    /// Publish the diagnostics of every document changed since its last publication.
    fn publish_dirty(&mut self, out: &mut impl Write) -> std::io::Result<()> {
        for uri in std::mem::take(&mut self.dirty) {
            self.publish(&uri, out)?;
        }
        Ok(())
    }

    /// The config that governs `uri`; when it is invalid, the defaults, and the error for
    /// [`Server::report_config_error`].
    fn config_for(
        &self,
        uri: &str,
        out: &mut impl Write,
    ) -> (std::sync::Arc<Config>, Option<crate::config::ConfigError>) {
        let path = uri_path(uri).unwrap_or_else(|| PathBuf::from("-"));
        match self.run.finder.for_file(&path) {
            Ok(c) => (c, None),
            Err(e) => {
                log(
                    out,
                    MessageType::WARNING,
                    format!("golint-k8s: invalid config, using the defaults: {e}"),
                );
                let mut c = Config::default();
                c.apply(&self.overrides);
                (std::sync::Arc::new(c), Some(e))
            }
        }
    }

    /// An invalid config is not only a log line: the user is told once in a message, and the
    /// error is a diagnostic on the config file itself, at its line and column.
    fn report_config_error(
        &mut self,
        e: crate::config::ConfigError,
        out: &mut impl Write,
    ) -> std::io::Result<()> {
        let path = std::fs::canonicalize(&e.file).unwrap_or_else(|_| PathBuf::from(&e.file));
        let uri = format!(
            "file://{}",
            crate::output::sarif::encode_uri_path(&path.to_string_lossy())
        );
        if self.config_errors.get(&uri) == Some(&e.message) {
            return Ok(());
        }
        let Ok(parsed) = uri.parse::<lsp_types::Uri>() else {
            return Ok(());
        };
        show_message(
            out,
            MessageType::WARNING,
            &format!(
                "golint-k8s: {e}; the files it governs are linted with the defaults until it is fixed"
            ),
        )?;
        let at = lsp_types::Position {
            line: e.line.saturating_sub(1) as u32,
            character: e.column.saturating_sub(1) as u32,
        };
        let diagnostic = lsp_types::Diagnostic {
            range: lsp_types::Range { start: at, end: at },
            severity: Some(lsp_types::DiagnosticSeverity::ERROR),
            source: Some("golint-k8s".into()),
            message: e.message.clone(),
            ..Default::default()
        };
        self.config_errors.insert(uri, e.message);
        publish_diagnostics(out, parsed, vec![diagnostic], None)
    }

    /// Lint an open document and push its diagnostics.
    fn publish(&mut self, uri: &str, out: &mut impl Write) -> std::io::Result<()> {
        // The same LimitRanges and VPAs as `lint` from the command line gives the file.
        if let Some(path) = uri_path(uri).filter(|_| self.docs.contains_key(uri)) {
            self.run.index_repository_of(&path);
        }
        let Some(doc) = self.docs.get(uri) else {
            return Ok(());
        };
        let Ok(parsed) = uri.parse::<lsp_types::Uri>() else {
            return Ok(());
        };
        if doc.text.len() as u64 > MAX_FILE_BYTES {
            log(
                out,
                MessageType::WARNING,
                format!("golint-k8s: {uri} is larger than {MAX_FILE_BYTES} bytes; not linted"),
            );
            return publish_diagnostics(out, parsed, Vec::new(), Some(doc.version));
        }
        // The CLI skips a chart's templates (Go templates, not YAML until rendered).
        if is_helm_template(uri) {
            return publish_diagnostics(out, parsed, Vec::new(), Some(doc.version));
        }
        let (cfg, config_error) = self.config_for(uri, out);
        let (text, version) = (&doc.text, doc.version);
        let enc = self.encoding;
        let partial = doc.last.as_ref().and_then(|last| {
            let plan = incremental::plan(last, text)?;
            let report = lint_document(uri, &plan.text, &cfg, &mut self.run);
            let whole = report.skipped.is_none()
                && report.stats.objects > 0
                && !report
                    .findings
                    .iter()
                    .any(|f| f.diagnostic.code == crate::diagnostic::Code::GK000);
            whole.then(|| {
                let fresh = actions::diagnostics(&parsed, &report, &plan.text, enc);
                (plan, fresh)
            })
        });
        // The text and what was sent for it, kept for the next edit to be linted in part.
        let text = text.clone();
        let published = match partial {
            Some((plan, fresh)) => {
                let last = self.docs.get_mut(uri).and_then(|d| d.last.take());
                let items = plan.merge(last.map(|l| l.items).unwrap_or_default(), &fresh);
                incremental::Published::new(text, items, false)
            }
            None => {
                let diags = diagnostics_in(&parsed, &text, &cfg, enc, &mut self.run);
                let invalid = diags.iter().any(|(d, _)| {
                    matches!(&d.code, Some(lsp_types::NumberOrString::String(c)) if c == "GK000")
                });
                let items = diags
                    .iter()
                    .map(|(d, fix)| incremental::Item::new(d, fix.as_ref()))
                    .collect();
                incremental::Published::new(text, items, invalid)
            }
        };
        let body = incremental::notification(&parsed, &published.items, Some(version));
        if let Some(doc) = self.docs.get_mut(uri) {
            doc.last = Some(published);
        }
        write!(out, "Content-Length: {}\r\n\r\n", body.len())?;
        out.write_all(&body)?;
        out.flush()?;
        match config_error {
            Some(e) => self.report_config_error(e, out),
            None => Ok(()),
        }
    }
}

/// The diagnostics the server publishes for a document with this text, in a session that has
/// read nothing yet: what the soak test compares every published set with, after thousands of
/// incremental edits.
pub fn document_diagnostics(
    uri: &lsp_types::Uri,
    text: &str,
    cfg: &Config,
    enc: Encoding,
) -> Vec<lsp_types::Diagnostic> {
    diagnostics_in(uri, text, cfg, enc, &mut Run::session(Overrides::default()))
        .into_iter()
        .map(|(d, _)| d)
        .collect()
}

/// The title and edits of each quick fix of [`document_diagnostics`] (`None` for a diagnostic
/// without one), in their order: what the server's code actions on its published diagnostics
/// must give, after any number of incremental edits.
pub fn document_fixes(
    uri: &lsp_types::Uri,
    text: &str,
    cfg: &Config,
    enc: Encoding,
) -> Vec<Option<(String, Vec<lsp_types::TextEdit>)>> {
    diagnostics_in(uri, text, cfg, enc, &mut Run::session(Overrides::default()))
        .into_iter()
        .map(|(_, fix)| fix.map(|f| (f.title, f.edits)))
        .collect()
}

/// The diagnostics of a document in the session `run`.
fn diagnostics_in(
    uri: &lsp_types::Uri,
    text: &str,
    cfg: &Config,
    enc: Encoding,
    run: &mut Run,
) -> Vec<(lsp_types::Diagnostic, Option<actions::Fix>)> {
    // Other YAML in the editor stays quiet, and so does a template that is not YAML: the lint
    // judges only manifests (see `lint::only_manifests` and `lint::only_yaml`), as the command
    // line does.
    let report = lint_document(uri.as_str(), text, cfg, run);
    actions::diagnostics(uri, &report, text, enc)
}

fn publish_diagnostics(
    out: &mut impl Write,
    uri: lsp_types::Uri,
    diagnostics: Vec<lsp_types::Diagnostic>,
    version: Option<i32>,
) -> std::io::Result<()> {
    /// The notification as it goes on the wire, serialized straight from the typed params:
    /// `Notification::new` goes through a `serde_json::Value` first, which for a few hundred
    /// diagnostics cost as much as linting the document.
    #[derive(serde::Serialize)]
    struct Wire<'a> {
        jsonrpc: &'static str,
        method: &'static str,
        params: &'a lsp_types::PublishDiagnosticsParams,
    }
    let params = lsp_types::PublishDiagnosticsParams {
        uri,
        diagnostics,
        version,
    };
    let body = serde_json::to_vec(&Wire {
        jsonrpc: "2.0",
        method: notification::PublishDiagnostics::METHOD,
        params: &params,
    })?;
    write!(out, "Content-Length: {}\r\n\r\n", body.len())?;
    out.write_all(&body)?;
    out.flush()
}

/// What the server asks the client to watch: config files, and the build files beside manifests
/// that decide a container's runtime (Dockerfiles, go.mod, skaffold, Cloud Build and compose
/// files, Makefiles, CI workflows) or make a file a Kustomize patch.
const WATCHED: [&str; 8] = [
    "**/.golint-k8s.{yaml,yml}",
    "**/{Dockerfile,Dockerfile.*,*.Dockerfile,Containerfile}",
    "**/go.mod",
    "**/{kustomization.yaml,kustomization.yml,Kustomization}",
    "**/{skaffold.yaml,cloudbuild.yaml}",
    "**/{docker-compose*.yaml,docker-compose*.yml,compose.yaml,compose.yml,compose.*.yaml,compose.*.yml}",
    "**/{Makefile,makefile,GNUmakefile,*.mk}",
    "**/.github/workflows/*.{yml,yaml}",
];

/// Whether `path` is one of the files [`WATCHED`] names.
fn is_watched(path: &std::path::Path) -> bool {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    matches!(
        name,
        ".golint-k8s.yaml"
            | ".golint-k8s.yml"
            | "Dockerfile"
            | "Containerfile"
            | "go.mod"
            | "kustomization.yaml"
            | "kustomization.yml"
            | "Kustomization"
            | "skaffold.yaml"
            | "cloudbuild.yaml"
    ) || name.starts_with("Dockerfile.")
        || name.ends_with(".Dockerfile")
        || crate::runtime::build::links_images(path)
}

/// Ask the client to tell us when a config or build file changes.
fn register_config_watcher(out: &mut impl Write) {
    let options = lsp_types::DidChangeWatchedFilesRegistrationOptions {
        watchers: WATCHED
            .iter()
            .map(|glob| lsp_types::FileSystemWatcher {
                glob_pattern: lsp_types::GlobPattern::String((*glob).into()),
                kind: None,
            })
            .collect(),
    };
    let params = lsp_types::RegistrationParams {
        registrations: vec![lsp_types::Registration {
            id: "golint-k8s-config".into(),
            method: notification::DidChangeWatchedFiles::METHOD.into(),
            register_options: serde_json::to_value(options).ok(),
        }],
    };
    let _ = send(
        out,
        Message::Request(Request::new(
            RequestId::from("golint-k8s-register".to_string()),
            request::RegisterCapability::METHOD.to_string(),
            params,
        )),
    );
}

/// The one name of a document, as `--stdin-filename` gives it: the decoded path of a `file://`
/// URI (so its config, Dockerfile, go.mod, kustomization and per-file-ignores are found as the
/// CLI finds them for the same file), else the URI itself.
pub(crate) fn document_name(uri: &str) -> String {
    uri_path(uri).map_or_else(|| uri.to_string(), |p| p.display().to_string())
}

/// Whether the document is a template of a Helm chart, which the CLI skips.
fn is_helm_template(uri: &str) -> bool {
    uri_path(uri).is_some_and(|p| crate::walk::chart_of(&p, 1).is_some())
}

/// Lint an open document as the CLI lints the same text given as `--stdin-filename PATH -`.
pub(crate) fn lint_document(uri: &str, text: &str, cfg: &Config, run: &mut Run) -> FileReport {
    let src = Source::from_text(Origin::Stdin(document_name(uri)), text.to_string());
    if cfg.inspect_images {
        cached_images(&src, cfg, &mut run.project.images);
    }
    run.lint_source(src, cfg)
}

/// `inspect-images: true` in the editor: what earlier `lint --inspect-images` runs cached for the
/// document's images, and never the network (a keystroke must not wait for a registry). An image
/// not in the cache is judged from the manifest.
fn cached_images(src: &Source, cfg: &Config, known: &mut crate::image::Inspected) {
    #[cfg(feature = "images")]
    {
        let mut refs: Vec<String> = crate::lint::images(src, cfg)
            .into_iter()
            .filter(|r| !known.is_known(r))
            .collect();
        refs.sort();
        refs.dedup();
        if !refs.is_empty() {
            let offline = crate::image::registry::Options {
                offline: true,
                ..Default::default()
            };
            // Misses are not kept: a later `lint --inspect-images` fills the cache, and the
            // next edit then finds the facts (a lookup per keystroke is a file stat).
            let mut found = crate::image::registry::inspect_all(&refs, &offline);
            found.retain(|_, f| f.is_ok());
            known.remember(found);
        }
    }
    #[cfg(not(feature = "images"))]
    let _ = (src, cfg, known);
}

fn parse<T: serde::de::DeserializeOwned>(v: Value) -> Result<T, (ErrorCode, String)> {
    serde_json::from_value(v).map_err(|e| (ErrorCode::InvalidParams, e.to_string()))
}

/// `initializationOptions`' `config`: one config file for every document, as `--config` gives it
/// (a relative path is taken from the server's working directory, as the command line takes it).
/// One that cannot be read is said once, and the configs beside the documents apply.
fn explicit_config(opts: &Value, out: &mut impl Write) -> Option<Config> {
    let path = match opts.get("config") {
        Some(Value::String(p)) if !p.trim().is_empty() => p.trim(),
        Some(Value::String(_) | Value::Null) | None => return None,
        Some(_) => {
            log(
                out,
                MessageType::WARNING,
                "golint-k8s: config must be the path of a config file".into(),
            );
            return None;
        }
    };
    match Config::load(std::path::Path::new(path)) {
        Ok(c) => Some(c),
        Err(e) => {
            let message = format!(
                "golint-k8s: the config option names a config that cannot be used, so the configs beside the documents apply: {e}"
            );
            let _ = show_message(out, MessageType::ERROR, &message);
            log(out, MessageType::ERROR, message);
            None
        }
    }
}

/// `initializationOptions`: `{"go-version": "1.25", "node-cpus": 16, "inspect-images": true}`.
fn overrides(opts: &Value, out: &mut impl Write) -> Overrides {
    let mut o = Overrides::default();
    match opts.get("inspect-images") {
        Some(Value::Bool(on)) => o.inspect_images = Some(*on),
        Some(other) if !other.is_null() => log(
            out,
            MessageType::WARNING,
            "golint-k8s: inspect-images must be true or false".into(),
        ),
        _ => {}
    }
    match opts.get("go-version") {
        Some(Value::String(v)) => match GoVersion::parse(v) {
            Some(g) => o.go_version = Some(g),
            None => log(
                out,
                MessageType::WARNING,
                format!("golint-k8s: go-version must look like 1.25, not {v:?}"),
            ),
        },
        Some(other) if !other.is_null() => log(
            out,
            MessageType::WARNING,
            "golint-k8s: go-version must be a string such as \"1.25\"".into(),
        ),
        _ => {}
    }
    match opts.get("node-cpus").and_then(Value::as_u64) {
        Some(n) if n >= 1 && n <= u64::from(u32::MAX) => o.node_cpus = Some(n as u32),
        Some(_) => log(
            out,
            MessageType::WARNING,
            "golint-k8s: node-cpus must be 1 or more".into(),
        ),
        None => {}
    }
    o
}

/// The file path of a `file://` URI (percent-decoded), for finding its config.
fn uri_path(uri: &str) -> Option<PathBuf> {
    let rest = uri.strip_prefix("file://")?;
    let path = rest.strip_prefix("localhost").unwrap_or(rest);
    let bytes = path.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("");
            if let Ok(b) = u8::from_str_radix(hex, 16) {
                decoded.push(b);
                i += 3;
                continue;
            }
        }
        decoded.push(bytes[i]);
        i += 1;
    }
    String::from_utf8(decoded).ok().map(PathBuf::from)
}

fn severity(s: crate::diagnostic::Severity) -> DiagnosticSeverity {
    match s {
        crate::diagnostic::Severity::Error => DiagnosticSeverity::ERROR,
        crate::diagnostic::Severity::Warning => DiagnosticSeverity::WARNING,
        crate::diagnostic::Severity::Info => DiagnosticSeverity::INFORMATION,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_uris_become_paths() {
        assert_eq!(
            uri_path("file:///srv/my%20app/deploy.yaml"),
            Some(PathBuf::from("/srv/my app/deploy.yaml"))
        );
        assert_eq!(uri_path("untitled:Untitled-1"), None);
    }

    #[test]
    fn saved_build_files_are_the_watched_ones() {
        for name in [
            ".golint-k8s.yaml",
            "Dockerfile",
            "Dockerfile.prod",
            "api.Dockerfile",
            "Containerfile",
            "go.mod",
            "kustomization.yml",
            "Kustomization",
            "skaffold.yaml",
            "cloudbuild.yaml",
            "docker-compose.yaml",
            "compose.build.yaml",
            "Makefile",
            "images.mk",
            ".github/workflows/release.yml",
        ] {
            assert!(is_watched(&PathBuf::from("/srv/app").join(name)), "{name}");
        }
        for name in [
            "deploy.yaml",
            "go.sum",
            "Dockerfile-notes.md",
            "kustomization.json",
            "composer.json",
            "ci/release.yml",
        ] {
            assert!(!is_watched(&PathBuf::from("/srv/app").join(name)), "{name}");
        }
    }
}
