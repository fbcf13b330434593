//! Rules: one file per rule, each a function over what it judges, with everything it needs already
//! worked out. Most judge one container in its pod (effective values, the Go view, the config);
//! a few judge a whole file's parse (GK000, GK001), an object (GK109's LimitRanges) or the file's
//! suppressions once every other rule has run (GK901, GK902). The table that names them is
//! [`crate::diagnostic::registry`]; which kind each check is, is in [`checks`].

pub mod checks;

/// The table of rules' identities, where the integration tests have always read it. (A path
/// down the layers, so it adds no import up them.)
pub use crate::diagnostic::registry;

pub mod gk000;
mod gk001;
mod gk101;
mod gk102;
mod gk103;
mod gk104;
mod gk105;
mod gk106;
mod gk107;
mod gk108;
mod gk109;
mod gk110;
mod gk201;
mod gk202;
mod gk203;
mod gk204;
mod gk205;
mod gk206;
mod gk207;
mod gk301;
mod gk302;
mod gk303;
mod gk401;
mod gk901;
mod gk902;

use crate::config::Config;
use crate::diagnostic::{Code, Diagnostic};
use crate::k8s::container::{Container, Effective, Pod};
use crate::k8s::limitrange::LimitRange;
use crate::k8s::{ConfigMap, Object};
use crate::runtime::GoView;
use crate::source::Source;
use crate::text::push_debug;
use crate::yaml::{NodeId, Yaml};

/// Everything a file rule may look at: the text and its parse.
pub struct FileCtx<'a, 'y> {
    pub src: &'a Source,
    pub y: &'a Yaml<'y>,
}

impl FileCtx<'_, '_> {
    /// A finding at a byte range, with the rule's default severity.
    pub fn diag(&self, code: Code, range: std::ops::Range<usize>, message: String) -> Diagnostic {
        Diagnostic::of_rule(code, range, message)
    }
}

/// Everything an object rule may look at.
pub struct ObjectCtx<'a, 'y> {
    pub y: &'a Yaml<'y>,
    pub object: &'a Object<'a>,
}

impl ObjectCtx<'_, '_> {
    /// A finding at a node, with the rule's default severity.
    pub fn diag(&self, code: Code, node: NodeId, message: String) -> Diagnostic {
        Diagnostic::of_rule(code, self.y.span(node), message)
    }
}

/// A file's suppressions once every other rule has run over it, each code marked when it
/// silenced a finding.
pub struct SuppressionCtx<'a> {
    pub src: &'a Source,
    pub suppressions: &'a [crate::suppress::Suppression],
    /// Whether a rule ran on this file (selected, and not turned off by its config).
    pub ran: &'a dyn Fn(Code) -> bool,
}

impl SuppressionCtx<'_> {
    /// A finding on a suppression, with the rule's default severity.
    pub fn diag(
        &self,
        code: Code,
        s: &crate::suppress::Suppression,
        message: String,
    ) -> Diagnostic {
        Diagnostic::of_rule(code, s.span.clone(), message)
    }
}

/// Everything a container rule may look at.
pub struct ContainerCtx<'a, 'y> {
    pub y: &'a Yaml<'y>,
    pub src: &'a Source,
    pub cfg: &'a Config,
    pub object: &'a Object<'a>,
    pub pod: &'a Pod<'a>,
    pub c: &'a Container<'a>,
    pub eff: Effective<'a>,
    pub go: GoView<'a>,
    /// [`GoView::note`], written once for all of the container's Go findings.
    pub go_note: std::cell::OnceCell<String>,
    /// [`Pod::is_guaranteed_whole_cores`], worked out once for all of the pod's containers.
    pub whole_cores: &'a std::cell::OnceCell<bool>,
    pub limit_ranges: &'a [&'a LimitRange<'a>],
    /// The VerticalPodAutoscalers, from any linted file, that target this workload.
    pub vpas: &'a [&'a crate::k8s::vpa::Vpa],
    pub config_maps: &'a [ConfigMap],
    /// Writes fixes in the file's style (its layout is worked out once per file).
    pub fx: &'a crate::edit::emit::Emitter<'a, 'y>,
}

impl ContainerCtx<'_, '_> {
    /// A finding at a node, with the rule's default severity.
    pub fn diag(&self, code: Code, node: NodeId, message: String) -> Diagnostic {
        Diagnostic::of_rule(code, self.y.span(node), message)
    }

    /// A finding for a Go-only rule: it always says why the container was judged Go and which Go
    /// version was assumed.
    pub fn go_diag(&self, code: Code, node: NodeId, message: String) -> Diagnostic {
        let note = self.go_note.get_or_init(|| self.go.note());
        self.diag(code, node, message).note(note.clone())
    }

    /// The node a finding about an effective value points at: the value itself when declared on
    /// this container, else the container's name (the value lives elsewhere).
    pub fn value_anchor(&self, v: &crate::k8s::container::EffectiveValue) -> NodeId {
        match (v.is_declared(), v.node) {
            (true, Some(n)) => n,
            _ => self.c.anchor_node(),
        }
    }

    /// Whether the pod is Guaranteed with whole-core CPU requests (see
    /// [`Pod::is_guaranteed_whole_cores`]).
    pub fn guaranteed_whole_cores(&self) -> bool {
        *self
            .whole_cores
            .get_or_init(|| self.pod.is_guaranteed_whole_cores(self.limit_ranges))
    }

    /// The CPU limit, request and node size that this container's GOMAXPROCS depends on (see
    /// [`crate::runtime::GoView::gomaxprocs`]).
    pub fn cpu_view(&self) -> crate::runtime::CpuView<'_> {
        crate::runtime::CpuView {
            limit: self.eff.limit_cpu.as_ref().map(|v| &v.quantity),
            request: self.eff.request_cpu.as_ref().map(|v| &v.quantity),
            node_cpus: self.cfg.node_cpus,
        }
    }

    pub fn who(&self) -> String {
        let mut s = String::with_capacity(32);
        s.push_str(self.c.kind.describe());
        s.push(' ');
        push_debug(&mut s, self.c.display_name());
        s
    }
}

/// Defined here, not with [`Diagnostic`]: findings sit below the Kubernetes model, and only rules
/// say where an effective value came from.
impl Diagnostic {
    /// Say where an inherited value came from: a note, and the value's own place when it lives
    /// elsewhere in the file (a LimitRange default, pod-level resources).
    pub fn origin(
        mut self,
        y: &Yaml,
        v: &crate::k8s::container::EffectiveValue,
        what: &str,
    ) -> Self {
        if let Some(n) = v.origin_note(what) {
            if let (Some(node), false) = (v.node, v.is_declared()) {
                self.related.push((y.span(node), n.clone()));
            }
            self.notes.push(n);
        }
        self
    }
}

impl<'a> ContainerCtx<'a, '_> {
    /// An unsafe fix that removes `var`'s entry from the container's env.
    pub fn remove_env_fix(&self, var: &crate::k8s::EnvVar) -> Option<crate::diagnostic::Fix> {
        let edit = crate::edit::emit::remove_item(self.fx, self.c.env_node?, var.entry)?;
        Some(crate::diagnostic::Fix {
            applicability: crate::diagnostic::Applicability::Unsafe,
            title: format!("remove the {} env entry", var.name),
            edits: vec![edit],
        })
    }
}

impl ContainerCtx<'_, '_> {
    /// The value of `name` provided by an `envFrom` ConfigMap present in the input (same namespace).
    pub fn env_from_value(&self, name: &str) -> Option<String> {
        let ns = self.object.effective_namespace();
        for ef in self.c.env_from.iter().rev() {
            let Some(cm_name) = &ef.config_map else {
                continue;
            };
            let Some(key) = name.strip_prefix(ef.prefix) else {
                continue;
            };
            let cm = self
                .config_maps
                .iter()
                .find(|m| &m.name == cm_name && m.namespace == ns);
            if let Some(v) = cm.and_then(|m| m.data).and_then(|d| self.y.get_str(d, key)) {
                return Some(v.to_string());
            }
        }
        None
    }

    /// A note for findings about a missing variable when an `envFrom` source is not in the input
    /// (it might set the variable; we cannot see it).
    pub fn unresolved_env_from_note(&self) -> Option<String> {
        let ns = self.object.effective_namespace();
        let names: Vec<String> = self
            .c
            .env_from
            .iter()
            .filter(|ef| {
                !ef.config_map.as_ref().is_some_and(|n| {
                    self.config_maps
                        .iter()
                        .any(|m| &m.name == n && m.namespace == ns)
                })
            })
            .map(|ef| {
                ef.config_map.map_or_else(
                    || "a Secret or other source".to_string(),
                    |n| format!("ConfigMap {n}"),
                )
            })
            .collect();
        (!names.is_empty()).then(|| {
            format!(
                "the container also reads envFrom {}, which is not in the input; if it sets the variable, suppress this finding",
                names.join(", ")
            )
        })
    }
}
