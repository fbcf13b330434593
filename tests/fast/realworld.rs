//! The runtime decision against ground truth. `fixtures/realworld/` holds manifests from public
//! repositories (each directory's SOURCES.md names the repository, commit and license) and a
//! `labels.tsv` per repository: what every container with a limit really runs, and whether its Go
//! program sizes GOMAXPROCS / GOMEMLIMIT itself, established by reading the projects' source (the
//! evidence column says where), not from this tool's output.
//!
//! GK101 and GK201 should fire exactly on the Go containers that do not size the setting
//! themselves, have the limit, and do not set the variable. Precision and recall of both rules
//! must stay at or above 0.95. Containers whose runtime or self-sizing could not be established
//! are left out of the measure.

use assert_cmd::Command;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use crate::common;

#[derive(Debug)]
struct Label {
    file: String,
    kind: String,
    name: String,
    container: String,
    runtime: String,
    gomaxprocs_self: String,
    gomemlimit_self: String,
    cpu_limit: bool,
    memory_limit: bool,
    sets_gomaxprocs: bool,
    sets_gomemlimit: bool,
}

impl Label {
    fn key(&self) -> (String, String, String, String) {
        (
            self.file.clone(),
            self.kind.clone(),
            self.name.clone(),
            self.container.clone(),
        )
    }

    /// Whether `code` should fire, or None when the labels cannot say.
    fn expected(&self, code: &str) -> Option<bool> {
        let (own, limit, sets) = match code {
            "GK101" => (
                &self.gomemlimit_self,
                self.memory_limit,
                self.sets_gomemlimit,
            ),
            _ => (&self.gomaxprocs_self, self.cpu_limit, self.sets_gomaxprocs),
        };
        match self.runtime.as_str() {
            "other" => Some(false),
            "go" => match own.as_str() {
                "yes" => Some(false),
                "no" => Some(limit && !sets),
                _ => None,
            },
            _ => None,
        }
    }
}

fn realworld() -> PathBuf {
    common::root().join("fixtures").join("realworld")
}

fn labels() -> Vec<Label> {
    let mut out = Vec::new();
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(realworld())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("labels.tsv").is_file())
        .collect();
    dirs.sort();
    for dir in dirs {
        let text = std::fs::read_to_string(dir.join("labels.tsv")).unwrap();
        let mut lines = text.lines();
        let header: Vec<&str> = lines.next().unwrap().split('\t').collect();
        let col = |name: &str| {
            header
                .iter()
                .position(|h| h.trim() == name)
                .unwrap_or_else(|| panic!("{}: no column {name}", dir.display()))
        };
        let cols = [
            "file",
            "kind",
            "name",
            "container",
            "runtime",
            "gomaxprocs_self",
            "gomemlimit_self",
            "cpu_limit",
            "memory_limit",
            "sets_gomaxprocs",
            "sets_gomemlimit",
        ]
        .map(col);
        for line in lines.filter(|l| !l.trim().is_empty()) {
            let f: Vec<&str> = line.split('\t').map(str::trim).collect();
            let get = |i: usize| f.get(cols[i]).copied().unwrap_or("").to_string();
            let yes = |i: usize| get(i) == "yes";
            out.push(Label {
                file: get(0),
                kind: get(1),
                name: get(2),
                container: get(3),
                runtime: get(4),
                gomaxprocs_self: get(5),
                gomemlimit_self: get(6),
                cpu_limit: yes(7),
                memory_limit: yes(8),
                sets_gomaxprocs: yes(9),
                sets_gomemlimit: yes(10),
            });
        }
    }
    out
}

/// (file, kind, name, container) → the codes reported on it.
fn findings() -> BTreeMap<(String, String, String, String), BTreeSet<String>> {
    let out = Command::cargo_bin("golint-k8s")
        .unwrap()
        .current_dir(realworld())
        .args(["lint", "--format", "json", "--select", "GK101,GK201", "."])
        .output()
        .unwrap();
    assert_ne!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut map: BTreeMap<_, BTreeSet<String>> = BTreeMap::new();
    for f in json["findings"].as_array().unwrap() {
        let s = |v: &Value| v.as_str().unwrap_or("").to_string();
        let key = (
            s(&f["file"]),
            s(&f["object"]["kind"]),
            s(&f["object"]["name"]),
            s(&f["container"]),
        );
        map.entry(key).or_default().insert(s(&f["code"]));
    }
    map
}

#[test]
fn gk101_and_gk201_match_the_labels() {
    let labels = labels();
    let repos: BTreeSet<&str> = labels
        .iter()
        .map(|l| l.file.split('/').next().unwrap())
        .collect();
    assert!(
        labels.len() >= 150 && repos.len() >= 8,
        "the labeled set has {} containers from {} repositories",
        labels.len(),
        repos.len()
    );
    let found = findings();
    let keys: BTreeSet<_> = labels.iter().map(Label::key).collect();
    // Every finding of these rules is on a labeled container (the set covers every container
    // with a limit in its files), so none escapes the measure.
    let unlabeled: Vec<_> = found.keys().filter(|k| !keys.contains(*k)).collect();
    assert!(
        unlabeled.is_empty(),
        "findings on containers without a label: {unlabeled:#?}"
    );
    let mut report = String::new();
    let mut failed = false;
    for code in ["GK101", "GK201"] {
        let (mut tp, mut fp, mut fn_, mut unjudged) = (0, 0, 0, 0);
        let mut wrong = Vec::new();
        for l in &labels {
            let got = found.get(&l.key()).is_some_and(|c| c.contains(code));
            match (l.expected(code), got) {
                (None, _) => unjudged += 1,
                (Some(true), true) => tp += 1,
                (Some(false), true) => {
                    fp += 1;
                    wrong.push(format!("  false positive: {:?} ({})", l.key(), l.runtime));
                }
                (Some(true), false) => {
                    fn_ += 1;
                    wrong.push(format!("  missed: {:?}", l.key()));
                }
                (Some(false), false) => {}
            }
        }
        let precision = tp as f64 / (tp + fp).max(1) as f64;
        let recall = tp as f64 / (tp + fn_).max(1) as f64;
        report.push_str(&format!(
            "{code}: precision {precision:.3} ({tp} of {}), recall {recall:.3} ({tp} of {}), {unjudged} containers not judged\n{}\n",
            tp + fp,
            tp + fn_,
            wrong.join("\n")
        ));
        failed |= precision < 0.95 || recall < 0.95 || tp == 0;
    }
    println!(
        "{} labeled containers from {} repositories\n{report}",
        labels.len(),
        repos.len()
    );
    assert!(!failed, "{report}");
}

#[test]
fn kustomize_patches_report_nothing_missing() {
    // The overlay's patch sets limits only; whether the base sets GOMEMLIMIT or GOMAXPROCS is not
    // in it, so only what it sets is judged (GK102 compares its own request and limit).
    let out = Command::cargo_bin("golint-k8s")
        .unwrap()
        .current_dir(common::root())
        .args([
            "lint",
            "--format",
            "json",
            "fixtures/kustomize/overlays/prod/limits.yaml",
        ])
        .output()
        .unwrap();
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    let codes: BTreeSet<&str> = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["code"].as_str().unwrap())
        .collect();
    assert_eq!(codes, BTreeSet::from(["GK102"]));
    // The same text outside a kustomization is a whole object: what it lacks is reported.
    let text = std::fs::read_to_string(
        common::root().join("fixtures/kustomize/overlays/prod/limits.yaml"),
    )
    .unwrap();
    let out = Command::cargo_bin("golint-k8s")
        .unwrap()
        .args(["lint", "--format", "json", "-"])
        .write_stdin(text)
        .output()
        .unwrap();
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    let codes: BTreeSet<&str> = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["code"].as_str().unwrap())
        .collect();
    assert!(
        codes.contains("GK101") && codes.contains("GK201"),
        "{codes:?}"
    );
}
