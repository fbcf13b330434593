//! The syntax layer of golint-k8s, the lowest of its layers (docs/design.md, "Layers"): bytes
//! become checked text with a line index ([`source`], [`text`]), and text becomes a lossless YAML
//! span tree ([`yaml`]) that keeps every node's byte range and source form, for diagnostics that
//! point at what the user wrote and fixes that edit it in place.
//!
//! It is a crate of its own so that the boundary is the compiler's: nothing here can reach the
//! Kubernetes model, the rules or the front ends, and a change above it does not rebuild it.

pub mod source;
pub mod text;
pub mod yaml;
