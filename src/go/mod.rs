//! What Go and the programs around it mean, before Kubernetes: the effective GODEBUG, the
//! language an argv runs ([`command`]) and the catalog of well-known images ([`catalog`]). No
//! I/O and nothing of the manifest, so both the images' reader and the runtime view build on it.

pub mod catalog;
pub mod command;

/// The effective value of one GODEBUG key: entries are applied left to right, the last wins.
pub fn godebug_value<'s>(godebug: &'s str, key: &str) -> Option<&'s str> {
    godebug
        .rsplit(',')
        .filter_map(|kv| kv.split_once('='))
        .find(|(k, _)| k.trim() == key)
        .map(|(_, v)| v.trim())
}
