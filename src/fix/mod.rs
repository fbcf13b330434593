//! Applying fixes: [`engine`] applies the findings' edits (see [`crate::edit`]) and re-lints
//! until stable; [`write`](mod@write) puts the result on disk atomically, never over a change it
//! did not see.

pub mod engine;
pub mod write;
