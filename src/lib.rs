//! golint-k8s: a linter and fixer for Kubernetes manifests that run Go programs.
//!
//! The pipeline, one module per stage:
//! bytes → [`source`] (checked text, line index) → [`yaml`] (span tree, YAML 1.1 scalars) →
//! [`k8s`] (objects, pod specs, containers, effective resources) → [`runtime`] (the Go view:
//! is it Go, which version, what the runtime does with each env value) → [`rules`] →
//! [`suppress`] → [`output`]. [`lint`] strings the stages together for one file; [`cli`] runs it
//! over many files in parallel; [`fix`] rewrites files from the findings' edits ([`edit`]); [`lsp`] serves
//! the same findings and fixes to editors; [`helm`] maps findings in rendered charts back to the
//! template line and values key behind them, and [`kustomize_build`] findings in Kustomize builds
//! to the file that wrote each value; [`cluster`] runs the rules over a live cluster's
//! objects. [`project`] is what a run knows beyond each file (the project files around it, image
//! facts, cross-file objects), owned by the run. [`fingerprint`] names a finding without line
//! numbers, for [`baseline`] (`--new-from-rev`) and for the SARIF and GitLab reports.

pub mod baseline;
pub mod cli;
pub mod cluster;
pub mod config;
pub mod diagnostic;
pub mod edit;
pub mod error;
pub mod fingerprint;
pub mod fix;
pub mod go;
pub mod helm;
pub mod image;
pub mod k8s;
pub mod kustomize_build;
#[cfg(test)]
mod layers;
pub mod lint;
pub mod lsp;
pub mod output;
pub mod project;
pub mod rules;
pub mod run;
pub mod runtime;
pub mod stream;
pub mod suppress;
pub mod walk;

// The syntax layer is its own crate (crates/syntax); its modules keep their paths here.
pub use golint_k8s_syntax::{source, text, yaml};
