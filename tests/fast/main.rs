//! The fast tier: every integration test that needs nothing beyond this checkout, the tools of
//! `scripts/test-tools.sh` and, where present, the shared corpus. Plain `cargo test` runs it; one
//! binary, so the library is linked once rather than once per file.
//!
//! One rule's fixtures: `cargo test gk101`. The heavy tier is `tests/heavy/main.rs`, together with
//! the tests here marked `#[cfg_attr(not(feature = "heavy-tests"), ignore = ...)]`: those that took
//! more than about 8 seconds on two cores (soaks, huge inputs, the whole corpus, property runs of
//! many cases) or need the pinned tools of `scripts/test-tools.sh`. `--all-features` runs them.

#[path = "../common/mod.rs"]
mod common;
#[path = "../tools/mod.rs"]
mod tools;

mod adopt;
mod cli;
mod config_schema;
mod container;
mod corpus;
mod cross_file;
mod fix_cli;
mod fix_corpus;
mod fixtures;
mod formats;
mod gate;
mod hostile;
mod kustomize;
mod lsp;
mod model;
mod properties;
mod readme;
mod realworld;
mod rule_docs;
mod sarif;
mod stream;
mod yaml_fast;
