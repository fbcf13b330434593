//! The config's JSON Schema (`schema/golint-k8s.schema.json`, for yaml-language-server) against
//! the config parser: the same keys, the documented example valid for both, bad values refused by
//! both, and `golint-k8s init`'s starter config valid and found.

use crate::common;

use std::collections::BTreeSet;
use std::process::Command;

use golint_k8s::config::{Config, KEYS};
use golint_k8s::source::{Origin, Source};
use golint_k8s::yaml::{NodeId, Yaml, Yaml11};
use serde_json::{json, Value};

fn schema() -> (Value, jsonschema::Validator) {
    let text =
        std::fs::read_to_string(common::root().join("schema/golint-k8s.schema.json")).unwrap();
    let schema: Value = serde_json::from_str(&text).expect("the schema is JSON");
    let validator = jsonschema::draft7::new(&schema).expect("the schema compiles");
    (schema, validator)
}

/// A YAML config as yaml-language-server hands it to the schema: typed scalars.
fn typed(text: &str) -> Value {
    fn conv(y: &Yaml, n: NodeId) -> Value {
        if y.is_mapping(n) {
            return Value::Object(
                y.entries(n)
                    .into_iter()
                    .map(|(k, v)| (y.str(k).unwrap_or_default().to_string(), conv(y, v)))
                    .collect(),
            );
        }
        let Some(s) = y.str(n) else {
            return Value::Array(y.items(n).iter().map(|&i| conv(y, i)).collect());
        };
        match y.resolved(n) {
            Some(Yaml11::Bool(b)) => json!(b),
            Some(Yaml11::Int(i)) => json!(i as i64),
            Some(Yaml11::Float(f)) => json!(f),
            Some(Yaml11::Null) => Value::Null,
            _ => json!(s),
        }
    }
    let y = golint_k8s::yaml::parse(text, 0);
    conv(&y, y.docs[0].root.expect("a config"))
}

fn parses(text: &str) -> Result<Config, String> {
    Config::parse(&Source::from_text(
        Origin::Stdin(".golint-k8s.yaml".into()),
        text.to_string(),
    ))
    .map_err(|e| e.to_string())
}

#[test]
fn schema_and_parser_know_the_same_keys() {
    let (schema, _) = schema();
    let in_schema: BTreeSet<&str> = schema["properties"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    let in_parser: BTreeSet<&str> = KEYS.iter().copied().collect();
    assert_eq!(in_schema, in_parser);
    assert_eq!(schema["additionalProperties"], json!(false));
    // Every key the parser lists is one it reads: a config of that key alone with a wrong-typed
    // value is refused by name, never as an unknown key.
    for key in KEYS {
        let e = parses(&format!("{key}: {{not: [valid]}}\n")).unwrap_err();
        assert!(!e.contains(&format!("unknown key {key:?}")), "{key}: {e}");
    }
}

/// The documented example config (the block under the Configuration heading of
/// docs/configuration.md) is valid for both.
#[test]
fn the_documented_example_is_valid_for_both() {
    let doc = std::fs::read_to_string(common::root().join("docs/configuration.md")).unwrap();
    let section = &doc[doc.find("## Configuration").unwrap()..];
    let start = section.find("```yaml\n").unwrap() + "```yaml\n".len();
    let example = &section[start..start + section[start..].find("```").unwrap()];
    parses(example).unwrap();
    let (_, v) = schema();
    let errors: Vec<String> = v
        .iter_errors(&typed(example))
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
    let keys: BTreeSet<String> = typed(example)
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    assert_eq!(
        keys.len(),
        KEYS.len(),
        "the example shows every key: {keys:?}"
    );
}

#[test]
fn bad_values_are_refused_by_both() {
    let (_, v) = schema();
    for bad in [
        "cpu-limits: maybe\n",
        "cpu-manager-policy: dynamic\n",
        "cpu-manager-policy: Static\n",
        "node-cpus: 0\n",
        "assume-go: perhaps\n",
        "gomemlimit: {strategy: guess}\n",
        "gomemlimit: {ratios: 0.9}\n",
        "go-images: ghcr.io/acme/*\n",
        "pod-spec-paths: [{kind: Worker}]\n",
        "pod-spec-paths: [{kind: Worker, path: spec, extra: 1}]\n",
        "rules: {GK101: loud}\n",
        "go-verison: \"1.25\"\n",
    ] {
        assert!(parses(bad).is_err(), "the parser took {bad:?}");
        assert!(!v.is_valid(&typed(bad)), "the schema took {bad:?}");
    }
}

#[test]
fn init_writes_a_config_that_is_found_and_valid() {
    let dir = tempfile::tempdir().unwrap();
    let bin = env!("CARGO_BIN_EXE_golint-k8s");
    let out = Command::new(bin)
        .arg("init")
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(dir.path().join(".golint-k8s.yaml")).unwrap();
    assert!(text.starts_with(&format!(
        "# yaml-language-server: $schema={}\n",
        golint_k8s::config::SCHEMA_URL
    )));
    parses(&text).unwrap();
    // Every commented setting, uncommented, is valid for both.
    let settings: String = text
        .lines()
        .filter_map(|l| l.strip_prefix("# "))
        .filter(|l| KEYS.iter().any(|k| l.starts_with(&format!("{k}:"))))
        .map(|l| format!("{l}\n"))
        .collect();
    assert!(settings.lines().count() >= 6, "{settings}");
    parses(&settings).unwrap();
    assert!(schema().1.is_valid(&typed(&settings)));
    // A second init keeps the first; a .yml config is found like a .yaml one.
    let again = Command::new(bin)
        .arg("init")
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(2));
    std::fs::rename(
        dir.path().join(".golint-k8s.yaml"),
        dir.path().join(".golint-k8s.yml"),
    )
    .unwrap();
    std::fs::write(dir.path().join(".golint-k8s.yml"), "rules: {GK401: off}\n").unwrap();
    std::fs::write(
        dir.path().join("pod.yaml"),
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: app\n    image: nginx:1\n",
    )
    .unwrap();
    let lint = |dir: &std::path::Path| {
        Command::new(bin)
            .args(["lint", "--format", "concise", "pod.yaml"])
            .current_dir(dir)
            .output()
            .unwrap()
    };
    let out = lint(dir.path());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    // Both names at once: which one counts would be a guess, so neither does.
    std::fs::write(dir.path().join(".golint-k8s.yaml"), "rules: {}\n").unwrap();
    let out = lint(dir.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("keep one of the two"));
}
