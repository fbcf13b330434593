//! What the image tests share: a lint run's output, its runtimes and findings by container, a
//! Deployment of given images, and a gzip layer of given files.
#![allow(dead_code)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

pub struct Lint {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
    pub took: Duration,
}

/// Container name → its `runtime` object, from `--show-containers --format json`.
pub fn runtimes(l: &Lint) -> HashMap<String, Value> {
    let doc: Value = serde_json::from_str(&l.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", l.stdout, l.stderr));
    doc["containers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["container"].as_str().unwrap().to_string(),
                c["runtime"].clone(),
            )
        })
        .collect()
}

/// Container name → the codes of its findings, from `--format json`.
pub fn findings(l: &Lint) -> HashMap<String, Vec<String>> {
    let doc: Value = serde_json::from_str(&l.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", l.stdout, l.stderr));
    let mut out: HashMap<String, Vec<String>> = HashMap::new();
    for f in doc["findings"].as_array().unwrap() {
        let c = f["container"].as_str().unwrap_or("").to_string();
        out.entry(c)
            .or_default()
            .push(f["code"].as_str().unwrap().to_string());
    }
    out
}

pub fn deployment(containers: &[(&str, &str)]) -> String {
    let mut s = String::from(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      containers:\n",
    );
    for (name, image) in containers {
        s.push_str(&format!(
            "      - name: {name}\n        image: {image}\n        resources:\n          limits: {{cpu: \"2\", memory: 512Mi}}\n"
        ));
    }
    s
}

/// A gzip-compressed layer of `(path, bytes)` entries, written to `dir/name`.
pub fn layer(dir: &Path, name: &str, entries: &[(&str, &[u8])]) -> PathBuf {
    let path = dir.join(name);
    let gz = flate2::write::GzEncoder::new(
        std::fs::File::create(&path).unwrap(),
        flate2::Compression::fast(),
    );
    let mut b = tar::Builder::new(gz);
    for (p, data) in entries {
        let mut h = tar::Header::new_gnu();
        h.set_size(data.len() as u64);
        h.set_mode(0o755);
        h.set_cksum();
        b.append_data(&mut h, p, *data).unwrap();
    }
    b.into_inner().unwrap().finish().unwrap();
    path
}
