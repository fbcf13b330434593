//! The heavy tier: end-to-end tests that build or fetch something large or slow (Go toolchains
//! and the probes they compile, registries and images, a kube-apiserver, release builds for the
//! wheel and the pre-commit hook, a real VS Code with the packaged extension). Built only with
//! the `heavy-tests` feature, which `--all-features` turns on, so `.ci/run` runs it and plain
//! `cargo test` does not.

#[path = "../common/mod.rs"]
mod common;
#[path = "../images_common/mod.rs"]
mod images_common;
#[path = "../tools/mod.rs"]
mod tools;

mod buildinfo;
mod cluster;
mod derive_catalog;
mod go_oracle;
mod helm;
mod images;
mod images_failures;
mod kubectl_yaml;
mod packaging;
mod precommit;
mod sizing_source;
mod vscode;
