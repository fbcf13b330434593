//! Finding files in an image's layers: each layer a tar archive (gzip-compressed or not) whose
//! entries add or replace files of the layers below it, and whose whiteouts hide them: an entry
//! `DIR/.wh.NAME` hides `DIR/NAME` (and all below it), an entry `DIR/.wh..wh..opq` hides
//! everything the lower layers have in `DIR`. A whiteout hides only lower layers' files, never
//! the ones its own layer holds (OCI image spec, "Representing Changes").
//!
//! Layers are read top first, and a layer only as far as needed: the reading stops at the entry
//! that answers every path looked for.

use std::collections::HashMap;
use std::io::Read;

/// What one layer says of a path looked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// A regular file: its bytes.
    File(Vec<u8>),
    /// A regular file larger than the cap (its size): not kept.
    TooLarge(u64),
    /// A symbolic link (its target as written) or a hard link (the archive path it names, with a
    /// leading `/`).
    Link(String),
    /// A whiteout of the path or of a directory above it: lower layers no longer have it.
    Hidden,
    /// Something that is not a file (a directory, a device).
    NotFile,
}

impl Found {
    /// Whether this answers the search for a path: a file, or a link to follow.
    pub fn is_answer(&self) -> bool {
        matches!(self, Found::File(_) | Found::TooLarge(_) | Found::Link(_))
    }
}

/// A path as archives name it: no leading `/` or `./`, no trailing `/`.
pub fn normalize(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for p in path.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    parts.join("/")
}

/// Whether `path` is `dir` or lies below it (`dir` empty: the root, above everything).
fn at_or_below(path: &str, dir: &str) -> bool {
    dir.is_empty()
        || path == dir
        || path
            .strip_prefix(dir)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// Read one layer's archive (`gzip` or plain tar, told by its first bytes) and say what it holds
/// of each of `wanted` (normalized paths). Stops reading as soon as every wanted path is a file
/// or link of this layer. A file larger than `file_cap` bytes is not kept.
pub fn scan(
    layer: impl Read,
    wanted: &[String],
    file_cap: u64,
) -> Result<HashMap<String, Found>, String> {
    let mut layer = std::io::BufReader::new(layer);
    let head = std::io::BufRead::fill_buf(&mut layer).map_err(|e| format!("read: {e}"))?;
    if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
        return Err("the layer is zstd-compressed, which is not supported".into());
    }
    if head.starts_with(&[0x1f, 0x8b]) {
        scan_tar(flate2::read::GzDecoder::new(layer), wanted, file_cap)
    } else {
        scan_tar(layer, wanted, file_cap)
    }
}

fn scan_tar(
    r: impl Read,
    wanted: &[String],
    file_cap: u64,
) -> Result<HashMap<String, Found>, String> {
    let mut out: HashMap<String, Found> = HashMap::new();
    let mut archive = tar::Archive::new(r);
    let entries = archive
        .entries()
        .map_err(|e| format!("not a tar archive: {e}"))?;
    for entry in entries {
        let mut entry = entry.map_err(|e| format!("corrupt layer: {e}"))?;
        let raw = entry.path_bytes();
        let path = normalize(&String::from_utf8_lossy(&raw));
        let (dir, name) = match path.rsplit_once('/') {
            Some((d, n)) => (d.to_string(), n.to_string()),
            None => (String::new(), path.clone()),
        };
        if let Some(hidden) = name.strip_prefix(".wh.") {
            for w in wanted {
                let hides = if hidden == ".wh..opq" {
                    // Opaque: the directory's lower contents, not the directory itself.
                    w != &dir && at_or_below(w, &dir)
                } else {
                    let target = if dir.is_empty() {
                        hidden.to_string()
                    } else {
                        format!("{dir}/{hidden}")
                    };
                    at_or_below(w, &target)
                };
                if hides {
                    // A file of this very layer stays: the whiteout is for the lower ones.
                    out.entry(w.clone()).or_insert(Found::Hidden);
                }
            }
            continue;
        }
        if !wanted.contains(&path) {
            continue;
        }
        let kind = entry.header().entry_type();
        let found = if kind.is_symlink() || kind.is_hard_link() {
            let target = entry
                .link_name_bytes()
                .map(|b| String::from_utf8_lossy(&b).into_owned())
                .unwrap_or_default();
            Found::Link(if kind.is_hard_link() {
                format!("/{}", normalize(&target))
            } else {
                target
            })
        } else if kind.is_file() && entry.size() > file_cap {
            Found::TooLarge(entry.size())
        } else if kind.is_file() {
            let mut bytes = Vec::new();
            (&mut entry)
                .take(file_cap)
                .read_to_end(&mut bytes)
                .map_err(|e| format!("corrupt layer, reading {path}: {e}"))?;
            Found::File(bytes)
        } else {
            Found::NotFile
        };
        out.insert(path, found);
        let done = wanted
            .iter()
            .all(|w| out.get(w).is_some_and(Found::is_answer));
        if done {
            break;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tar_of(entries: &[(&str, &[u8])]) -> Vec<u8> {
        let mut b = tar::Builder::new(Vec::new());
        for (path, data) in entries {
            let mut h = tar::Header::new_gnu();
            h.set_size(data.len() as u64);
            h.set_mode(0o755);
            h.set_cksum();
            b.append_data(&mut h, path, *data).unwrap();
        }
        b.into_inner().unwrap()
    }

    #[test]
    fn whiteouts_hide_lower_files_only() {
        let wanted = vec!["app/server".to_string()];
        let t = tar_of(&[("app/.wh.server", b"")]);
        assert_eq!(
            scan(&t[..], &wanted, 1 << 20).unwrap().get("app/server"),
            Some(&Found::Hidden)
        );
        let t = tar_of(&[("app/.wh..wh..opq", b""), ("app/server", b"x")]);
        assert_eq!(
            scan(&t[..], &wanted, 1 << 20).unwrap().get("app/server"),
            Some(&Found::File(b"x".to_vec()))
        );
        let t = tar_of(&[(".wh.app", b"")]);
        assert_eq!(
            scan(&t[..], &wanted, 1 << 20).unwrap().get("app/server"),
            Some(&Found::Hidden)
        );
        let t = tar_of(&[("./app/server", b"\x7fELF")]);
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut gz, &t).unwrap();
        let gz = gz.finish().unwrap();
        assert_eq!(
            scan(&gz[..], &wanted, 2).unwrap().get("app/server"),
            Some(&Found::TooLarge(4))
        );
        assert_eq!(
            scan(&gz[..], &wanted, 4).unwrap().get("app/server"),
            Some(&Found::File(b"\x7fELF".to_vec()))
        );
        // A corrupt layer is an error, not an answer.
        let wanted = vec!["missing".to_string()];
        assert!(scan(&gz[..gz.len() / 2], &wanted, 2).is_err());
        assert!(scan(&[0x1f, 0x8b, 8, 0, 1, 2, 3][..], &wanted, 2).is_err());
    }

    #[test]
    fn paths_are_normalized() {
        assert_eq!(normalize("/usr/local/../bin/./x/"), "usr/bin/x");
        assert_eq!(normalize("./"), "");
    }
}
