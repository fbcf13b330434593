//! `--format sarif`, checked three ways on the rule fixtures and on the shared corpus:
//! - by the SARIF Multitool, Microsoft's validator, which also applies the spec's rules that no
//!   schema can express (it is what the SARIF web validator runs);
//! - against the official OASIS schema, with the `jsonschema` crate, independently of the Multitool;
//! - for what consumers such as GitHub code scanning rely on and the schema leaves optional: full
//!   rule metadata, `ruleIndex`, complete regions that repeat the JSON contract's positions,
//!   relative URIs that resolve through `originalUriBaseIds`, and the Helm template a finding came
//!   from.
//!
//! The tools come from `scripts/test-tools.sh` (see `tests/tools`).

use crate::common;
use crate::tools;

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use golint_k8s::diagnostic::Severity;
use golint_k8s::rules::registry::RULES;
use serde_json::{json, Value};

/// A SARIF log written by the real binary, and what is needed to check it against the files.
struct Produced {
    /// The log on disk, for the Multitool.
    file: PathBuf,
    log: Value,
    /// The directory the linter ran in: the JSON report's paths are relative to it.
    cwd: PathBuf,
    /// The same lint in the JSON contract, whose positions the SARIF regions must repeat.
    json: Value,
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("sarif");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn words<'a>(w: &[&'a str]) -> Vec<&'a OsStr> {
    w.iter().map(|s| OsStr::new(*s)).collect()
}

fn golint(cwd: &Path, args: &[&OsStr]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_golint-k8s"))
        .current_dir(cwd)
        .args(args)
        .output()
        .expect("run golint-k8s");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("panicked"),
        "golint-k8s {args:?}: {stderr}"
    );
    assert_ne!(out.status.code(), Some(2), "golint-k8s {args:?}: {stderr}");
    out
}

fn parse(bytes: &[u8], what: &str) -> Value {
    serde_json::from_slice(bytes).unwrap_or_else(|e| panic!("{what} is not JSON: {e}"))
}

/// Lint `target` from `cwd` as SARIF (written with `--output`) and as JSON.
fn produce(name: &str, cwd: &Path, target: &str) -> (Produced, Output) {
    let file = scratch(&format!("{name}.sarif"));
    // A log left by an earlier run must not pass for this run's.
    let _ = std::fs::remove_file(&file);
    // The fixtures' chart would be rendered with whatever `helm` is on PATH (or be an input not
    // linted without one): the log is of the manifests alone.
    let mut args = words(&[
        "lint",
        "--extend-exclude",
        "**/charts/**",
        "--format",
        "sarif",
        "--output",
    ]);
    args.extend([file.as_os_str(), OsStr::new(target)]);
    let out = golint(cwd, &args);
    assert!(
        out.stdout.is_empty(),
        "with --output, stdout must stay empty, got {} bytes",
        out.stdout.len()
    );
    let log = parse(
        &std::fs::read(&file).expect("--output wrote no file"),
        "SARIF",
    );
    let mut args = words(&[
        "lint",
        "--extend-exclude",
        "**/charts/**",
        "--format",
        "json",
    ]);
    args.push(OsStr::new(target));
    let json_out = golint(cwd, &args);
    assert_eq!(
        json_out.status.code(),
        out.status.code(),
        "SARIF and JSON runs disagree on the exit code"
    );
    let json = parse(&json_out.stdout, "the JSON report");
    let produced = Produced {
        file,
        log,
        cwd: cwd.to_path_buf(),
        json,
    };
    (produced, out)
}

fn fixtures() -> &'static Produced {
    static FIXTURES: OnceLock<Produced> = OnceLock::new();
    FIXTURES.get_or_init(|| {
        let root = common::root();
        let (produced, out) = produce("fixtures", &root, "fixtures");
        // The fixtures fire every rule, invalid YAML included, so the lint fails.
        assert_eq!(
            out.status.code(),
            Some(1),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        // Standard output carries the same log as --output.
        let stdout = golint(
            &root,
            &words(&[
                "lint",
                "--extend-exclude",
                "**/charts/**",
                "--format",
                "sarif",
                "fixtures",
            ]),
        );
        assert_eq!(stdout.status.code(), Some(1));
        assert!(
            stdout.stdout == std::fs::read(&produced.file).unwrap(),
            "stdout and --output hold different logs"
        );
        produced
    })
}

/// The corpus lint, run from inside the corpus as a user runs it inside their repository, so that
/// every file lies under the root its URIs are relative to.
fn corpus() -> Option<&'static Produced> {
    static CORPUS: OnceLock<Option<Produced>> = OnceLock::new();
    CORPUS
        .get_or_init(|| {
            let Some(dir) = common::corpus() else {
                println!("corpus part not run: ../shared/corpus is not beside this checkout");
                return None;
            };
            let dir = dir.canonicalize().unwrap();
            let (produced, out) = produce("corpus", &dir, ".");
            assert!(
                matches!(out.status.code(), Some(0 | 1)),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            Some(produced)
        })
        .as_ref()
}

// ---------------------------------------------------------------------------------------------
// (a) The SARIF Multitool

/// What `Sarif.Multitool validate` found, read from the SARIF log it writes.
struct Verdict {
    errors: Vec<String>,
    warnings: Vec<String>,
    notes: usize,
}

/// A validator message: its rule's template for `message.id`, with the arguments put in.
fn validator_message(result: &Value, rule: Option<&Value>) -> String {
    let id = result["message"]["id"].as_str().unwrap_or_default();
    let template = rule
        .and_then(|r| r["messageStrings"][id]["text"].as_str())
        .or_else(|| result["message"]["text"].as_str())
        .unwrap_or(id);
    let mut text = template.to_string();
    if let Some(args) = result["message"]["arguments"].as_array() {
        for (i, a) in args.iter().enumerate() {
            text = text.replace(&format!("{{{i}}}"), a.as_str().unwrap_or_default());
        }
    }
    text
}

fn multitool(tool: &Path, sarif: &Path) -> Verdict {
    let report = sarif.with_extension("validation.sarif");
    let _ = std::fs::remove_file(&report);
    let out = Command::new(tool)
        .arg("validate")
        .arg(sarif)
        .arg("--output")
        .arg(&report)
        // Its console text is for people; the log it writes is the machine-readable verdict.
        .args(["--log", "ForceOverwrite", "--level", "Error;Warning;Note"])
        .output()
        .expect("run Sarif.Multitool");
    assert!(
        out.status.success(),
        "Sarif.Multitool validate failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let log = parse(
        &std::fs::read(&report).expect("Sarif.Multitool wrote no log"),
        "Sarif.Multitool's log",
    );
    let run = &log["runs"][0];
    let rules = run["tool"]["driver"]["rules"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let mut verdict = Verdict {
        errors: Vec::new(),
        warnings: Vec::new(),
        notes: 0,
    };
    let invocations = run["invocations"].as_array().cloned().unwrap_or_default();
    assert!(
        !invocations.is_empty(),
        "Sarif.Multitool's log records no invocation"
    );
    for inv in &invocations {
        if inv["executionSuccessful"] != json!(true) {
            verdict
                .errors
                .push(format!("the validation run did not succeed: {inv}"));
        }
        for n in inv["toolExecutionNotifications"]
            .as_array()
            .into_iter()
            .flatten()
        {
            if n["level"] == "error" {
                verdict
                    .errors
                    .push(format!("validator notification: {}", n["message"]));
            }
        }
    }
    for r in run["results"].as_array().into_iter().flatten() {
        let rule = r["ruleIndex"].as_u64().and_then(|i| rules.get(i as usize));
        // SARIF's own defaulting: the result's level, else its rule's, else "warning".
        let level = r["level"]
            .as_str()
            .or_else(|| rule.and_then(|r| r["defaultConfiguration"]["level"].as_str()))
            .unwrap_or("warning");
        let line = format!(
            "{} {level}: {}",
            r["ruleId"].as_str().unwrap_or("?"),
            validator_message(r, rule)
        );
        match level {
            "error" => verdict.errors.push(line),
            "warning" => verdict.warnings.push(line),
            _ => verdict.notes += 1,
        }
    }
    verdict
}

fn first(lines: &[String], n: usize) -> String {
    let mut s: String = lines.iter().take(n).map(|l| format!("\n  {l}")).collect();
    if lines.len() > n {
        s.push_str(&format!("\n  ... and {} more", lines.len() - n));
    }
    s
}

fn assert_multitool_accepts(name: &str, produced: &Produced, tools: &tools::Tools) {
    let v = multitool(&tools.sarif_multitool, &produced.file);
    let mut by_rule: BTreeMap<&str, usize> = BTreeMap::new();
    for w in &v.warnings {
        *by_rule
            .entry(w.split(' ').next().unwrap_or("?"))
            .or_default() += 1;
    }
    println!(
        "Sarif.Multitool on {name}: {} errors, {} warnings {by_rule:?}, {} notes{}",
        v.errors.len(),
        v.warnings.len(),
        v.notes,
        first(&v.warnings, 5)
    );
    assert!(
        v.errors.is_empty(),
        "Sarif.Multitool found {} errors in the {name} SARIF:{}",
        v.errors.len(),
        first(&v.errors, 20)
    );
}

#[test]
#[cfg_attr(
    not(feature = "heavy-tests"),
    ignore = "heavy tier: --features heavy-tests"
)]
fn multitool_accepts_the_fixtures_log() {
    let Some(tools) = tools::ensure() else { return };
    assert_multitool_accepts("fixtures", fixtures(), &tools);
}

#[test]
#[cfg_attr(
    not(feature = "heavy-tests"),
    ignore = "heavy tier: --features heavy-tests"
)]
fn multitool_accepts_the_corpus_log() {
    let Some(tools) = tools::ensure() else { return };
    let Some(corpus) = corpus() else { return };
    assert_multitool_accepts("corpus", corpus, &tools);
}

// ---------------------------------------------------------------------------------------------
// (b) The official schema

fn schema_validator(tools: &tools::Tools) -> (Value, jsonschema::Validator) {
    let text = std::fs::read_to_string(&tools.sarif_schema).unwrap();
    let schema = parse(text.as_bytes(), "the SARIF schema");
    // The OASIS file is a draft-04 schema; its formats (uri, date-time) are checked too.
    let validator = jsonschema::draft4::options()
        .should_validate_formats(true)
        .build(&schema)
        .expect("the official SARIF schema compiles");
    (schema, validator)
}

fn schema_errors(validator: &jsonschema::Validator, log: &Value) -> Vec<String> {
    validator
        .iter_errors(log)
        .map(|e| {
            let mut text = format!("at {}: {e}", e.instance_path());
            if text.len() > 400 {
                let cut = (0..=400).rev().find(|i| text.is_char_boundary(*i)).unwrap();
                text.truncate(cut);
                text.push_str(" ...");
            }
            text
        })
        .collect()
}

fn assert_schema_accepts(name: &str, produced: &Produced, tools: &tools::Tools) {
    let (schema, validator) = schema_validator(tools);
    assert_eq!(
        produced.log["$schema"], schema["id"],
        "the {name} log must name the schema it is validated against"
    );
    let errors = schema_errors(&validator, &produced.log);
    assert!(
        errors.is_empty(),
        "the {name} SARIF breaks the official schema in {} places:{}",
        errors.len(),
        first(&errors, 10)
    );
}

#[test]
#[cfg_attr(
    not(feature = "heavy-tests"),
    ignore = "heavy tier: --features heavy-tests"
)]
fn the_fixtures_log_matches_the_official_schema() {
    let Some(tools) = tools::ensure() else { return };
    assert_schema_accepts("fixtures", fixtures(), &tools);
}

#[test]
#[cfg_attr(
    not(feature = "heavy-tests"),
    ignore = "heavy tier: --features heavy-tests"
)]
fn the_corpus_log_matches_the_official_schema() {
    let Some(tools) = tools::ensure() else { return };
    let Some(corpus) = corpus() else { return };
    assert_schema_accepts("corpus", corpus, &tools);
}

/// Both validators must be able to say no, or their silence above proves nothing.
#[test]
#[cfg_attr(
    not(feature = "heavy-tests"),
    ignore = "heavy tier: --features heavy-tests"
)]
fn both_validators_reject_a_broken_log() {
    let Some(tools) = tools::ensure() else { return };
    let mut broken = fixtures().log.clone();
    let result = &mut broken["runs"][0]["results"][0];
    assert!(
        result.is_object(),
        "the fixtures log has no result to break"
    );
    // Line 0 does not exist (lines count from 1), and results have no such property.
    result["locations"][0]["physicalLocation"]["region"]["startLine"] = json!(0);
    result["notASarifProperty"] = json!(true);

    let (_, validator) = schema_validator(&tools);
    let errors = schema_errors(&validator, &broken);
    assert!(
        errors.len() >= 2,
        "the schema let a broken log through: {errors:?}"
    );

    let file = scratch("broken.sarif");
    std::fs::write(&file, serde_json::to_vec_pretty(&broken).unwrap()).unwrap();
    let verdict = multitool(&tools.sarif_multitool, &file);
    assert!(
        verdict.errors.len() >= 2,
        "Sarif.Multitool let a broken log through: {:?}",
        verdict.errors
    );

    let base = fixtures().cwd.clone();
    assert!(
        !structure_problems(&broken, &base).is_empty(),
        "the structural checks let a broken region through"
    );
}

// ---------------------------------------------------------------------------------------------
// (c) What the schema cannot check

fn sarif_level(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "note",
    }
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        if b[i] == b'%' && i + 2 < b.len() {
            if let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Whether a URI reference is absolute (`scheme:...`) or rooted (`/...`), which a URI relative to
/// `%SRCROOT%` must not be.
fn is_absolute_uri(u: &str) -> bool {
    let scheme = u.split_once(':').map(|(s, _)| s).filter(|s| {
        s.starts_with(|c: char| c.is_ascii_alphabetic())
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || "+.-".contains(c))
    });
    scheme.is_some() || u.starts_with('/')
}

/// The problems found in a SARIF log, each as one line; `base` is where files are looked up when
/// `originalUriBaseIds` cannot say.
fn structure_problems(log: &Value, base: &Path) -> Vec<String> {
    let mut p = Vec::new();
    if log["version"] != "2.1.0" {
        p.push(format!("version is {}, not 2.1.0", log["version"]));
    }
    let runs = log["runs"].as_array().cloned().unwrap_or_default();
    if runs.len() != 1 {
        p.push(format!("{} runs, expected one", runs.len()));
        return p;
    }
    let run = &runs[0];
    let driver = &run["tool"]["driver"];
    if driver["name"] != "golint-k8s" {
        p.push(format!("tool.driver.name is {}", driver["name"]));
    }

    // Rules: all of them, in registry order, so that ruleIndex means the same on every run.
    let rules = driver["rules"].as_array().cloned().unwrap_or_default();
    if rules.len() != RULES.len() {
        p.push(format!(
            "{} rules in tool.driver.rules, the registry has {}",
            rules.len(),
            RULES.len()
        ));
    }
    for (i, (r, want)) in rules.iter().zip(RULES).enumerate() {
        let at = format!("rules[{i}]");
        if r["id"] != want.code.as_str() {
            p.push(format!("{at}.id is {}, expected {}", r["id"], want.code));
        }
        if r["name"] != want.name {
            p.push(format!(
                "{at}.name is {}, expected {}",
                r["name"], want.name
            ));
        }
        for key in ["shortDescription", "fullDescription"] {
            if r[key]["text"].as_str().is_none_or(|t| t.trim().is_empty()) {
                p.push(format!("{at} ({}) has no {key}.text", want.code));
            }
        }
        match r["helpUri"].as_str() {
            Some(u) if u.starts_with("https://") && u.contains(want.code.as_str()) => {}
            other => p.push(format!("{at} ({}) helpUri is {other:?}", want.code)),
        }
        if r["defaultConfiguration"]["level"] != sarif_level(want.severity) {
            p.push(format!(
                "{at} ({}) defaultConfiguration.level is {}, expected {}",
                want.code,
                r["defaultConfiguration"]["level"],
                sarif_level(want.severity)
            ));
        }
    }

    // Base URIs: each must be an absolute directory URI that relative URIs resolve against.
    let mut bases: BTreeMap<String, PathBuf> = BTreeMap::new();
    match run["originalUriBaseIds"].as_object() {
        None => p.push("run has no originalUriBaseIds".into()),
        Some(ids) => {
            for (id, v) in ids {
                match v["uri"].as_str() {
                    Some(u) if u.starts_with("file:///") && u.ends_with('/') => {
                        bases.insert(
                            id.clone(),
                            PathBuf::from(percent_decode(&u["file://".len()..])),
                        );
                    }
                    other => p.push(format!(
                        "originalUriBaseIds.{id}.uri is {other:?}, not an absolute directory URI"
                    )),
                }
            }
        }
    }
    let mut file_lines: BTreeMap<PathBuf, Option<usize>> = BTreeMap::new();
    // Resolves an artifact location to its file and returns the file's line count.
    let mut artifact = |loc: &Value, at: &str, p: &mut Vec<String>| -> Option<usize> {
        let Some(uri) = loc["uri"].as_str() else {
            p.push(format!("{at}: no uri"));
            return None;
        };
        if is_absolute_uri(uri) {
            p.push(format!("{at}: uri {uri} is not relative"));
            return None;
        }
        let Some(id) = loc["uriBaseId"].as_str() else {
            p.push(format!("{at}: uri {uri} has no uriBaseId"));
            return None;
        };
        let Some(dir) = bases
            .get(id)
            .cloned()
            .or_else(|| bases.is_empty().then(|| base.to_path_buf()))
        else {
            p.push(format!("{at}: uriBaseId {id} is not in originalUriBaseIds"));
            return None;
        };
        let path = dir.join(percent_decode(uri));
        let lines = *file_lines.entry(path.clone()).or_insert_with(|| {
            std::fs::read_to_string(&path)
                .ok()
                .map(|t| t.lines().count())
        });
        if lines.is_none() {
            p.push(format!(
                "{at}: {uri} does not resolve to a readable file ({})",
                path.display()
            ));
        }
        lines
    };
    let region =
        |r: &Value, at: &str, lines: Option<usize>, p: &mut Vec<String>| -> Option<[u64; 4]> {
            let get = |k: &str| r[k].as_u64().filter(|n| *n >= 1);
            let (Some(sl), Some(sc), Some(el), Some(ec)) = (
                get("startLine"),
                get("startColumn"),
                get("endLine"),
                get("endColumn"),
            ) else {
                p.push(format!(
                    "{at}: region {r} lacks one of startLine/startColumn/endLine/endColumn (>= 1)"
                ));
                return None;
            };
            if (el, ec) < (sl, sc) {
                p.push(format!("{at}: region ends before it starts: {r}"));
            }
            // A region may end just past the last line (an insertion at the end of the file).
            if let Some(n) = lines {
                if el as usize > n + 1 {
                    p.push(format!("{at}: region ends on line {el}, the file has {n}"));
                }
            }
            Some([sl, sc, el, ec])
        };

    let results = run["results"].as_array().cloned().unwrap_or_default();
    if results.is_empty() {
        p.push("no results".into());
    }
    for (i, r) in results.iter().enumerate() {
        let at = format!("results[{i}]");
        let Some(id) = r["ruleId"].as_str() else {
            p.push(format!("{at}: no ruleId"));
            continue;
        };
        match r["ruleIndex"].as_u64().map(|n| n as usize) {
            None => p.push(format!("{at} ({id}): no ruleIndex")),
            Some(n) if rules.get(n).map(|rule| &rule["id"]) != Some(&json!(id)) => p.push(format!(
                "{at}: ruleIndex {n} names {}, not {id}",
                rules.get(n).map_or(&Value::Null, |r| &r["id"])
            )),
            Some(_) => {}
        }
        if r["message"]["text"]
            .as_str()
            .is_none_or(|t| t.trim().is_empty())
        {
            p.push(format!("{at} ({id}): no message.text"));
        }
        let locations = r["locations"].as_array().cloned().unwrap_or_default();
        if locations.is_empty() {
            p.push(format!("{at} ({id}): no locations"));
        }
        for (j, l) in locations.iter().enumerate() {
            let at = format!("{at}.locations[{j}]");
            let phys = &l["physicalLocation"];
            let lines = artifact(&phys["artifactLocation"], &at, &mut p);
            region(&phys["region"], &at, lines, &mut p);
        }
        for (j, fix) in r["fixes"].as_array().into_iter().flatten().enumerate() {
            for (k, change) in fix["artifactChanges"]
                .as_array()
                .into_iter()
                .flatten()
                .enumerate()
            {
                let at = format!("{at}.fixes[{j}].artifactChanges[{k}]");
                let lines = artifact(&change["artifactLocation"], &at, &mut p);
                for (m, rep) in change["replacements"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .enumerate()
                {
                    region(
                        &rep["deletedRegion"],
                        &format!("{at}.replacements[{m}]"),
                        lines,
                        &mut p,
                    );
                }
            }
        }
        for (j, rel) in r["relatedLocations"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
        {
            let at = format!("{at}.relatedLocations[{j}]");
            match rel["physicalLocation"]["artifactLocation"]["uri"].as_str() {
                Some(u) if !is_absolute_uri(u) => {}
                other => p.push(format!("{at}: uri {other:?} is missing or not relative")),
            }
            if rel["message"]["text"].as_str().is_none_or(|t| t.is_empty()) {
                p.push(format!("{at}: no message.text"));
            }
        }
    }
    p
}

/// Every finding as (file, code, start line, start column, end line, end column).
type Position = (PathBuf, String, [u64; 4]);

fn canonical(p: &Path) -> PathBuf {
    p.canonicalize().unwrap_or_else(|_| p.to_path_buf())
}

fn json_positions(produced: &Produced) -> Vec<Position> {
    let mut v: Vec<Position> = produced.json["findings"]
        .as_array()
        .expect("the JSON report has findings")
        .iter()
        .map(|f| {
            // A finding in a Kustomize build sits, in SARIF, on the line that writes its value.
            let traced = f["kustomize"]["line"].is_u64();
            let (at, file) = if traced {
                (&f["kustomize"], f["kustomize"]["file"].as_str().unwrap())
            } else {
                (f, f["file"].as_str().unwrap())
            };
            let n = |k: &str| at[k].as_u64().unwrap_or(0);
            (
                canonical(&produced.cwd.join(file)),
                f["code"].as_str().unwrap().to_string(),
                [n("line"), n("column"), n("end_line"), n("end_column")],
            )
        })
        .collect();
    v.sort();
    v
}

fn sarif_positions(produced: &Produced) -> Vec<Position> {
    let run = &produced.log["runs"][0];
    let base = |id: &str| {
        let uri = run["originalUriBaseIds"][id]["uri"]
            .as_str()
            .unwrap_or("file:///");
        PathBuf::from(percent_decode(&uri["file://".len()..]))
    };
    let mut v: Vec<Position> = run["results"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| {
            let phys = &r["locations"][0]["physicalLocation"];
            let loc = &phys["artifactLocation"];
            let file = base(loc["uriBaseId"].as_str().unwrap_or_default())
                .join(percent_decode(loc["uri"].as_str().unwrap_or_default()));
            let n = |k: &str| phys["region"][k].as_u64().unwrap_or(0);
            (
                canonical(&file),
                r["ruleId"].as_str().unwrap_or_default().to_string(),
                [
                    n("startLine"),
                    n("startColumn"),
                    n("endLine"),
                    n("endColumn"),
                ],
            )
        })
        .collect();
    v.sort();
    v
}

fn assert_structure(name: &str, produced: &Produced) {
    let problems = structure_problems(&produced.log, &produced.cwd);
    assert!(
        problems.is_empty(),
        "the {name} SARIF has {} structural problems:{}",
        problems.len(),
        first(&problems, 20)
    );
    // The regions are the JSON contract's positions, finding for finding.
    let (sarif, json) = (sarif_positions(produced), json_positions(produced));
    assert_eq!(
        sarif.len(),
        json.len(),
        "{name}: SARIF and JSON report different numbers of findings"
    );
    if let Some((s, j)) = sarif.iter().zip(&json).find(|(s, j)| s != j) {
        panic!("{name}: SARIF and JSON disagree on a finding:\n  SARIF {s:?}\n  JSON  {j:?}");
    }
    println!("{name}: {} results, structure checked", sarif.len());
}

#[test]
fn the_fixtures_log_is_complete_and_points_at_the_findings() {
    let produced = fixtures();
    assert_structure("fixtures", produced);
    // The root that URIs resolve against is the repository the lint ran in.
    let want = format!("file://{}/", canonical(&common::root()).display());
    let got = &produced.log["runs"][0]["originalUriBaseIds"]["%SRCROOT%"]["uri"];
    assert_eq!(percent_decode(got.as_str().unwrap_or_default()), want);
    // Every rule has a fixture that fires it, so every rule has a result to point at.
    let fired: std::collections::BTreeSet<&str> = produced.log["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["ruleId"].as_str())
        .collect();
    let missing: Vec<&str> = RULES
        .iter()
        .map(|r| r.code.as_str())
        .filter(|c| !fired.contains(c))
        .collect();
    assert!(missing.is_empty(), "no SARIF result for {missing:?}");
}

/// The `# Source:` comment of the Helm document holding a line, if it has one.
fn helm_source(text: &str, line: usize) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    for l in lines[..line.min(lines.len())].iter().rev() {
        if let Some(src) = l.trim().strip_prefix("# Source:") {
            return Some(src.trim().to_string());
        }
        if l.starts_with("---") {
            return None;
        }
    }
    None
}

#[test]
fn the_corpus_log_is_complete_and_keeps_helm_templates() {
    let Some(produced) = corpus() else { return };
    assert_structure("corpus", produced);

    let helm = canonical(&produced.cwd.join("helm"));
    let run = &produced.log["runs"][0];
    let base = percent_decode(
        &run["originalUriBaseIds"]["%SRCROOT%"]["uri"]
            .as_str()
            .unwrap_or("file:///")["file://".len()..],
    );
    let (mut checked, mut problems) = (0, Vec::new());
    let mut texts: BTreeMap<PathBuf, String> = BTreeMap::new();
    for r in run["results"].as_array().into_iter().flatten() {
        let phys = &r["locations"][0]["physicalLocation"];
        let file = canonical(&Path::new(&base).join(percent_decode(
            phys["artifactLocation"]["uri"].as_str().unwrap_or_default(),
        )));
        if !file.starts_with(&helm) {
            continue;
        }
        let text = texts
            .entry(file.clone())
            .or_insert_with(|| std::fs::read_to_string(&file).unwrap());
        let line = phys["region"]["startLine"].as_u64().unwrap_or(0) as usize;
        let Some(source) = helm_source(text, line) else {
            continue;
        };
        checked += 1;
        let related: Vec<String> = r["relatedLocations"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|l| l["physicalLocation"]["artifactLocation"]["uri"].as_str())
            .map(percent_decode)
            .collect();
        if !related.contains(&source) {
            problems.push(format!(
                "{}:{line} {}: rendered from {source}, relatedLocations {related:?}",
                file.display(),
                r["ruleId"]
            ));
        }
    }
    assert!(
        checked > 0,
        "no result in the corpus's Helm renders: nothing was checked"
    );
    assert!(
        problems.is_empty(),
        "{} of {checked} Helm results do not name their template:{}",
        problems.len(),
        first(&problems, 10)
    );
    println!("corpus: {checked} results from Helm renders name their template");
}

/// On Unix a backslash is part of a file name: `back\slash.yaml` is one file in the repository's
/// root, not `slash.yaml` in a directory `back`. SARIF percent-encodes it; GitLab names it as is.
#[cfg(unix)]
#[test]
fn a_backslash_in_a_file_name_stays_in_the_uri() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    let pod = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: c\n    image: golang:1.22\n    env:\n    - name: GOGC\n      value: off\n";
    std::fs::write(dir.path().join("back\\slash.yaml"), pod).unwrap();
    let out = golint(
        dir.path(),
        &words(&["lint", "--format", "sarif", "back\\slash.yaml"]),
    );
    let log = parse(&out.stdout, "the SARIF log");
    let results = log["runs"][0]["results"].as_array().unwrap();
    assert!(!results.is_empty());
    for r in results {
        let uri = &r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"];
        assert_eq!(uri, "back%5Cslash.yaml", "{r}");
    }
    let out = golint(
        dir.path(),
        &words(&["lint", "--format", "gitlab", "back\\slash.yaml"]),
    );
    let issues = parse(&out.stdout, "the GitLab report");
    assert_eq!(
        issues[0]["location"]["path"], "back\\slash.yaml",
        "{issues}"
    );
}
