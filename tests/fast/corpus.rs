//! The shared corpus of ~3,000 real manifests: linting it must not panic, must not call valid YAML
//! invalid, and every finding must point at the key or value it talks about.

use std::collections::BTreeMap;
use std::path::Path;

use crate::common::*;
use assert_cmd::Command;
use serde_json::Value;

/// The text at a 1-based line and column (columns in characters), to the end of the line.
fn text_at(file: &str, line: usize, column: usize) -> String {
    let l = file.lines().nth(line - 1).unwrap_or("");
    l.chars().skip(column - 1).collect()
}

fn line_of(file: &str, line: usize) -> String {
    file.lines().nth(line - 1).unwrap_or("").to_string()
}

#[test]
fn corpus_lints_cleanly_and_positions_are_exact() {
    let Some(corpus) = corpus() else {
        println!("corpus test not run: ../shared/corpus is not beside this checkout");
        return;
    };
    let out = Command::cargo_bin("golint-k8s")
        .unwrap()
        .args(["lint", "--format", "json", "--fail-on", "error"])
        // Every file: `--exclude` replaces the default skip of testdata/ (the corpus's Linkerd
        // test data are real manifests).
        .args(["--exclude", "**/.git/**"])
        .arg(&corpus)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "panic: {stderr}");
    assert_ne!(out.status.code(), Some(2), "usage/IO error: {stderr}");
    let json: Value = serde_json::from_slice(&out.stdout).expect("valid JSON");
    let findings = json["findings"].as_array().unwrap();
    let summary = &json["summary"];
    assert!(summary["files"].as_u64().unwrap() > 800, "{summary}");
    assert!(summary["documents"].as_u64().unwrap() > 2000, "{summary}");

    let mut per_rule: BTreeMap<String, usize> = BTreeMap::new();
    let mut problems = Vec::new();
    let mut cache: BTreeMap<String, String> = BTreeMap::new();
    for f in findings {
        let code = f["code"].as_str().unwrap().to_string();
        *per_rule.entry(code.clone()).or_default() += 1;
        let file = f["file"].as_str().unwrap();
        if code == "GK000" {
            problems.push(format!(
                "{file}: GK000 on a corpus file (all are valid YAML): {}",
                f["message"]
            ));
            continue;
        }
        let text = cache
            .entry(file.to_string())
            .or_insert_with(|| std::fs::read_to_string(Path::new(file)).unwrap());
        let (line, col) = (
            f["line"].as_u64().unwrap() as usize,
            f["column"].as_u64().unwrap() as usize,
        );
        let at = text_at(text, line, col);
        let whole = line_of(text, line);
        // JSON manifests quote their keys: compare without quotes.
        let before: String = whole
            .chars()
            .take(col - 1)
            .filter(|c| *c != '"' && *c != '\'')
            .collect();
        let key_before = |keys: &[&str]| {
            keys.iter().any(|k| {
                before
                    .trim_end()
                    .trim_start_matches("- ")
                    .trim_start()
                    .ends_with(&format!("{k}:"))
                    || before.contains(&format!("{k}:"))
            })
        };
        let ok = match code.as_str() {
            // Resource findings: at a cpu/memory value, or at the container's name when inherited.
            "GK101" | "GK102" | "GK109" | "GK201" | "GK203" => {
                key_before(&["cpu", "memory", "name"])
            }
            "GK401" => at.trim_start_matches('"').starts_with("resources") || key_before(&["name"]),
            "GK103" | "GK104" | "GK107" | "GK108" | "GK202" | "GK204" | "GK205" | "GK206"
            | "GK301" | "GK302" => key_before(&["value", "name"]),
            "GK105" => key_before(&["divisor"]),
            "GK106" => key_before(&["resource", "containerName"]),
            "GK303" => key_before(&["name"]),
            "GK001" => {
                at.starts_with(
                    f["message"]
                        .as_str()
                        .unwrap()
                        .split('"')
                        .nth(1)
                        .unwrap_or("\u{0}"),
                ) || at.starts_with('"')
                    || at.starts_with('\'')
            }
            "GK901" | "GK902" => at.starts_with('#') || key_before(&["golint-k8s.io/ignore"]),
            _ => true,
        };
        if !ok {
            problems.push(format!(
                "{file}:{line}:{col}: {code} points at {at:?} (line {whole:?})"
            ));
        }
    }
    println!("corpus: {summary}");
    for (code, n) in &per_rule {
        println!("{code}: {n}");
    }
    assert!(
        problems.is_empty(),
        "{} problems:\n{}",
        problems.len(),
        problems
            .iter()
            .take(40)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
    // The corpus has Go services with limits: the core rules must find something.
    for code in ["GK101", "GK201", "GK203", "GK401"] {
        assert!(
            per_rule.get(code).copied().unwrap_or(0) > 0,
            "{code} found nothing on the corpus"
        );
    }
}
