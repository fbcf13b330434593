//! What can go wrong outside a finding, by kind. Each ends a command with exit 2 (usage and
//! input/output failures, as the README's exit codes say); a file that is not YAML is a finding
//! (GK000), never one of these. The text of each is what follows `error: ` on standard error.

use crate::config::ConfigError;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The command line asks for something that cannot be done.
    #[error("{0}")]
    Usage(String),
    /// A config file that cannot be read, or is not valid.
    #[error("invalid config: {0}")]
    Config(#[from] ConfigError),
    /// An input that cannot be read.
    #[error("{name}: {message}")]
    Input { name: String, message: String },
    /// The chart cannot be read, or `helm template` did not render it.
    #[error("{0}")]
    Helm(String),
    /// The cluster's API server could not be reached, or refused to list.
    #[error("{0}")]
    Cluster(String),
}

impl Error {
    /// The exit code the command ends with.
    pub fn exit_code(&self) -> i32 {
        2
    }
}
