//! What a rule reports: a byte range in the source, a message with the real numbers, notes that
//! say what the judgement rests on (why the container was judged Go, which Go version was assumed,
//! where an inherited limit came from), and an optional fix.
//!
//! Positions stay byte ranges here; outputs convert them to lines and columns at the edge.

pub mod registry;

pub use registry::Code;

use crate::k8s::ObjectRef;

use std::ops::Range;

use serde::Serialize;

/// Above this many findings in one file, work over each of them (positions, fingerprints,
/// JSON) runs in parallel.
pub const PARALLEL_FINDINGS: usize = 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Warning,
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }

    pub fn parse(s: &str) -> Option<Severity> {
        match s {
            "info" => Some(Severity::Info),
            "warning" | "warn" => Some(Severity::Warning),
            "error" => Some(Severity::Error),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Applicability {
    /// Changes only Go runtime settings to match limits that are already there.
    Safe,
    /// Changes requests or limits: scheduling, cost or QoS change.
    Unsafe,
}

impl Applicability {
    pub fn as_str(self) -> &'static str {
        match self {
            Applicability::Safe => "safe",
            Applicability::Unsafe => "unsafe",
        }
    }
}

/// Replace `range` of the original source with `text`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    pub range: Range<usize>,
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fix {
    pub applicability: Applicability,
    pub title: String,
    pub edits: Vec<Edit>,
}

/// Where a finding's document came from when a file is not the whole story. Each output format
/// renders it in one `match`, so a new input source is a new variant the compiler walks every
/// format through.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Provenance {
    /// Rendered Helm output, mapped back to its chart's template line and values key.
    Chart(ChartOrigin),
    /// An object listed from a live cluster (`golint-k8s cluster`).
    Cluster(ClusterRef),
    /// An object of a Kustomize build, traced to the file that wrote the value.
    Kustomize(KustomizeOrigin),
}

/// Where in the files of a Kustomize build a finding of its output comes from (see the
/// `kustomize_build` module).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KustomizeOrigin {
    /// The kustomization built, as the run names it.
    pub build: String,
    /// The file that writes the value: a resource, a patch, or the kustomization whose
    /// transformer sets it.
    pub file: Option<String>,
    /// 1-based line and column of the value in `file`, and where it ends.
    pub line: Option<usize>,
    pub column: Option<usize>,
    pub end_line: Option<usize>,
    pub end_column: Option<usize>,
    /// Why no line could be named.
    pub unmapped: Option<String>,
}

impl KustomizeOrigin {
    /// "base/deployment.yaml:13:22", or the file and why no line is named.
    pub fn describe(&self) -> String {
        match (&self.file, self.line, self.column, &self.unmapped) {
            (Some(f), Some(l), Some(c), _) => format!("written at {f}:{l}:{c}"),
            (Some(f), Some(l), None, _) => format!("written at {f}:{l}"),
            (Some(f), None, _, Some(why)) => format!("from {f} ({why})"),
            (Some(f), None, _, None) => format!("from {f}"),
            (None, _, _, Some(why)) => format!("not traced to a file: {why}"),
            (None, _, _, None) => "not traced to a file".to_string(),
        }
    }
}

/// Where in a chart a finding of its rendered output comes from (see the `helm` module).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ChartOrigin {
    /// The template file, under the chart directory as the user named it.
    pub file: String,
    /// The 1-based template line that writes the key (None: could not map).
    pub line: Option<usize>,
    /// The values key that fills it, when one does.
    pub values_key: Option<String>,
    /// Why no template line could be named.
    pub unmapped: Option<String>,
}

impl ChartOrigin {
    /// "chart/templates/x.yaml:31, values key resources.limits.cpu", or why it is not mapped.
    pub fn describe(&self) -> String {
        match (self.line, &self.values_key, &self.unmapped) {
            (Some(l), Some(k), _) => format!("{}:{l}, values key {k}", self.file),
            (Some(l), None, _) => format!(
                "{}:{l} (written in the template, not from values)",
                self.file
            ),
            (None, _, Some(why)) => format!("{} (could not map to a line: {why})", self.file),
            (None, _, None) => format!("{} (could not map to a line)", self.file),
        }
    }
}

/// `Deployment/payments/api`, or `Node/worker-1` for a cluster-scoped object.
pub fn object_path(kind: &str, namespace: Option<&str>, name: &str) -> String {
    match namespace {
        Some(ns) => format!("{kind}/{ns}/{name}"),
        None => format!("{kind}/{name}"),
    }
}

/// Where a finding of `golint-k8s cluster` lives: the object, the container and the field path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ClusterRef {
    pub kind: String,
    pub namespace: Option<String>,
    pub name: String,
    pub container: Option<String>,
    /// `spec.template.spec.containers[0].resources.limits.cpu`.
    pub path: String,
}

impl ClusterRef {
    /// `Deployment/payments/api` plus the container, for logical locations.
    pub fn qualified_name(&self) -> String {
        let mut s = object_path(&self.kind, self.namespace.as_deref(), &self.name);
        if let Some(c) = &self.container {
            s.push_str(&format!("/containers/{c}"));
        }
        s
    }
}

/// What a finding's container was judged to run: the JSON `runtime` object and a line of
/// `--show-containers`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RuntimeInfo {
    /// `go`, another language (`python`, `java`, `other` from a declaration), or None: unknown.
    pub language: Option<String>,
    /// What decided it.
    pub evidence: String,
    /// Judged Go only because `assume-go` is on and nothing said otherwise.
    pub assumed: bool,
    /// Nothing showed the runtime and `assume-go` is unset: judged Go, with its Go findings
    /// kept below the gate. (Only written when true.)
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub unknown: bool,
    pub go_version: Option<String>,
    pub go_version_evidence: Option<String>,
    /// Why the program sizes GOMAXPROCS / GOMEMLIMIT itself, when it does.
    pub sizes_gomaxprocs: Option<String>,
    pub sizes_gomemlimit: Option<String>,
}

#[derive(Debug, Clone)]
pub struct Diagnostic {
    pub code: Code,
    pub severity: Severity,
    pub range: Range<usize>,
    pub message: String,
    pub notes: Vec<String>,
    pub document: usize,
    /// Shared by every finding of the object: one copy of its names, not one per finding.
    pub object: Option<std::sync::Arc<ObjectRef>>,
    /// Shared by the container's findings, as `object` is.
    pub container: Option<std::sync::Arc<str>>,
    pub source_template: Option<std::sync::Arc<str>>,
    /// The runtime the container was judged to run, and why; shared by its findings.
    pub runtime: Option<std::sync::Arc<RuntimeInfo>>,
    /// Where its document came from beyond the file. (Boxed: most findings have none, and a
    /// diagnostic is moved many times on its way to the output.)
    pub provenance: Option<Box<Provenance>>,
    pub fix: Option<Fix>,
    /// Other places in the same file the finding rests on (the LimitRange or pod-level value an
    /// inherited limit came from), each with what it says; editors show them as related.
    pub related: Vec<(Range<usize>, String)>,
    /// The finding's identity across edits (the `fingerprint` module), set once it is located in
    /// its file's tree.
    pub fingerprint: u64,
    /// A Go-only finding on a container that nothing shows to run Go (`assume-go` unset): it
    /// stays info whatever severity the rule or the config gives, so it never fails the default
    /// gate on a guess.
    pub below_gate: bool,
}

impl Diagnostic {
    /// The message and its notes, one per line: what reports without a place for notes print.
    pub fn message_with_notes(&self) -> String {
        let mut text = self.message.clone();
        for n in &self.notes {
            text.push('\n');
            text.push_str(n);
        }
        text
    }

    pub fn new(code: Code, severity: Severity, range: Range<usize>, message: String) -> Self {
        Diagnostic {
            code,
            severity,
            range,
            message,
            notes: Vec::new(),
            document: 0,
            object: None,
            container: None,
            source_template: None,
            runtime: None,
            provenance: None,
            fix: None,
            related: Vec::new(),
            fingerprint: 0,
            below_gate: false,
        }
    }

    /// A finding of `code` with its rule's default severity (the config may override it later).
    pub fn of_rule(code: Code, range: Range<usize>, message: String) -> Self {
        Diagnostic::new(code, code.rule().severity, range, message)
    }

    /// The chart behind a finding in rendered Helm output.
    pub fn chart(&self) -> Option<&ChartOrigin> {
        match self.provenance.as_deref() {
            Some(Provenance::Chart(c)) => Some(c),
            _ => None,
        }
    }

    /// The live object behind a finding of `golint-k8s cluster`.
    pub fn cluster(&self) -> Option<&ClusterRef> {
        match self.provenance.as_deref() {
            Some(Provenance::Cluster(c)) => Some(c),
            _ => None,
        }
    }

    pub fn note(mut self, n: impl Into<String>) -> Self {
        self.notes.push(n.into());
        self
    }

    pub fn with_fix(mut self, fix: Option<Fix>) -> Self {
        self.fix = fix;
        self
    }

    /// Attach a fix, or say in a note why there is none (an anchor shared with other places, a
    /// layout the emitters cannot follow).
    pub fn fix_or_note(self, fix: Result<Fix, String>) -> Self {
        match fix {
            Ok(f) => self.with_fix(Some(f)),
            Err(why) => self.note(why),
        }
    }

    pub fn severity(mut self, s: Severity) -> Self {
        self.severity = s;
        self
    }
}
