//! Differential test: golint-k8s's YAML parser against the decoding kubectl really does.
//!
//! Why: GK000 says "this is not YAML", and a document with GK000 gets no other finding. When it
//! fires on a manifest that `kubectl apply` takes, the user gets a false error and loses every
//! real finding; when a manifest kubectl refuses passes silently, the user learns it only at
//! deploy time. Both parsers are YAML parsers, but kubectl cuts the stream at `---` lines itself
//! and decodes each piece with `sigs.k8s.io/yaml` (go-yaml v2, libyaml's rules), while golint-k8s
//! uses its own fast path and granit-parser, so they can disagree on edge cases (one was a
//! quoted scalar whose closing line sits at its key's indentation).
//!
//! How: tests/kubectl-probe is a Go program that decodes a stream exactly as kubectl's file
//! reader does (apimachinery's YAML-or-JSON decoder, `sigs.k8s.io/yaml`, empty documents
//! skipped) and prints one JSON line per document. The test builds it once with the `go` on
//! PATH, through the Go module proxy, and caches the binary under the user cache directory
//! (`golint-k8s/kubectl-probe`, named by a hash of the probe's files). It runs the probe over
//! every fixture, the shared corpus when it is beside this checkout, hand-written edge cases and
//! mutations of the fixtures (fixed seed), and compares per stream:
//! - kubectl decodes it: golint-k8s must find no syntax error (no GK000), and each document's
//!   value, computed from golint-k8s's tree the way `sigs.k8s.io/yaml` would compute it, must
//!   equal kubectl's JSON;
//! - kubectl refuses it: golint-k8s must report GK000 somewhere in that stream (after an error
//!   the two may cut documents differently, so rejected streams are compared as a whole).
//!
//! Deliberate differences are listed in `ALLOWED`, each with its reason; an entry that no
//! longer matches anything fails the test too. Without a `go` command, or when the module proxy
//! cannot be reached, the test prints one line saying it did not run.

use crate::common;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use golint_k8s::source::{Origin, Source};
use golint_k8s::yaml::{self, NodeId, NodeKind, Style, Yaml, Yaml11};
use serde_json::{Map, Number, Value};

const PROBE_MAIN: &str = include_str!("../kubectl-probe/main.go");
const PROBE_MOD: &str = include_str!("../kubectl-probe/go.mod");
const PROBE_SUM: &str = include_str!("../kubectl-probe/go.sum");

/// The seed of the mutations; fixed so that CI sees the same inputs every run.
const SEED: u64 = 0x6b75_6265_6374_6c31;
/// Mutants made of each fixture.
const MUTANTS_PER_FIXTURE: usize = 4;

// ---------------------------------------------------------------------------------------------
// Known, deliberate differences.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// kubectl decodes the stream; golint-k8s reports GK000.
    GolintRejects,
    /// kubectl refuses the stream; golint-k8s reports no GK000.
    KubectlRejects,
    /// Both decode the stream, into a different number of documents.
    DocumentCount,
    /// Both decode the stream; a document's value differs.
    Value,
    /// kubectl refuses a document it parsed, while decoding it into JSON (a merge of something
    /// that is not a mapping, a key that is a collection or null, an infinity), golint-k8s's tree
    /// fails the same way here, and golint-k8s reports no GK000: the text is valid YAML.
    Conversion,
    /// Both decode the stream to the same value, but a value read through the lookups rules and
    /// fixes use (`Yaml::entries`, `get_entry`, `get_entries`) differs from kubectl's: a rule
    /// would judge, and a fix edit, another value than the one the API server gets.
    Lookup,
}

/// (input, kind, why): the input is a path under the crate, `corpus/` and a path under the
/// corpus, or a generated case's name. Mutants are not listed: they are made only of fixtures
/// both sides decode, and the mutations avoid the differences listed here.
const ALLOWED: &[(&str, Kind, &str)] = &[
    // kubectl cuts the stream at lines starting with `---` before any YAML is parsed, so a
    // `%YAML` directive ends up alone in the first piece, which go-yaml refuses ("did not find
    // expected <document start>"). For YAML the directive is valid, and this fixture exists to
    // assert that golint-k8s does not call it invalid YAML.
    (
        "fixtures/GK000/silent-block-scalars-and-markers.yaml",
        Kind::KubectlRejects,
        "a %YAML directive is valid YAML; only kubectl's own document splitting breaks it",
    ),
    // `.inf` is valid YAML; JSON has no infinity, so kubectl fails converting the document.
    // golint-k8s reports it as GK302 (an env value that is not a string), not as invalid YAML.
    (
        "fixtures/GK302/fire-infinity.yaml",
        Kind::Conversion,
        "valid YAML that JSON cannot hold: GK302 reports it, GK000 is for text that is not YAML",
    ),
    // `<<: *common-env` merges an alias of a sequence of mappings. PyYAML accepts it; go-yaml v2
    // refuses any merge value that is not a mapping or a sequence written in place.
    (
        "corpus/raw/kube-linter/pkg/templates/sortedkeys/testdata/container-with-merge.yaml",
        Kind::Conversion,
        "valid YAML that go-yaml v2 cannot decode: GK000 is for text that is not YAML",
    ),
    // go-yaml's Unmarshal reads the first YAML document of each piece and never parses what
    // follows: kubectl applies ` a: 1` and silently drops `b: 2`. golint-k8s calls the text
    // invalid YAML, which it is, and which the user needs to hear.
    (
        "gen/edge/first-key-indented",
        Kind::GolintRejects,
        "kubectl silently ignores everything after the first YAML document of a piece",
    ),
    // kubectl's cut removes the `---` line, which leaves the end marker `...` at the start of a
    // piece, where go-yaml wants a node first. For YAML it ends an empty document.
    (
        "gen/edge/document-end-marker-after-empty-document",
        Kind::KubectlRejects,
        "`---` then `...` is an empty YAML document; only kubectl's own document splitting breaks it",
    ),
    // libyaml (so go-yaml) refuses an implicit key that spans lines, in flow context too, as
    // YAML says; granit-parser takes it.
    (
        "gen/edge/quoted-key-multi-line-in-flow",
        Kind::KubectlRejects,
        "not yet fixed: granit-parser accepts a multi-line implicit key in a flow mapping; \
         the check belongs in the parser, and no manifest seen has such a key",
    ),
    // go-yaml skips a byte-order mark only at the very start of a piece; anywhere else it is
    // text, so kubectl sends the key "\u{feff}b", which no API object has, and the field is
    // lost or refused. golint-k8s's GK000 names the stray mark instead.
    (
        "gen/edge/bom-after-blank-line",
        Kind::GolintRejects,
        "kubectl turns a byte-order mark inside a document into an invisible part of a key",
    ),
    // go-yaml decodes only the first document of each piece kubectl cuts at `---` lines, so a
    // document after `...` without its own `---` is silently dropped (and libyaml would refuse
    // it: YAML 1.1 wants `---` there). golint-k8s reports it instead of linting it.
    (
        "gen/parity/document-after-end-marker",
        Kind::GolintRejects,
        "kubectl silently drops a document that follows `...` without `---`; the user needs to hear",
    ),
    // In UTF-16, kubectl's cut at `---` lines finds none, and go-yaml decodes the first document
    // of the one piece: the others are silently dropped. golint-k8s says so for each of them.
    (
        "gen/parity/utf16le-two-documents",
        Kind::GolintRejects,
        "kubectl silently drops every document of a UTF-16 file but the first; the user needs to hear",
    ),
    (
        "gen/parity/utf16be-two-documents",
        Kind::GolintRejects,
        "kubectl silently drops every document of a UTF-16 file but the first; the user needs to hear",
    ),
];

fn allowed(input: &str, kind: Kind) -> Option<usize> {
    ALLOWED
        .iter()
        .position(|&(name, k, _)| k == kind && name == input)
}

// ---------------------------------------------------------------------------------------------
// The probe.

/// The probe binary and whether it was built now, or why it cannot be had (the module proxy
/// is out of reach).
fn probe(cache: &Path) -> Result<(PathBuf, bool), String> {
    let tag: u64 = [PROBE_MAIN, PROBE_MOD, PROBE_SUM]
        .iter()
        .flat_map(|s| s.bytes())
        .fold(0xcbf29ce484222325, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x100000001b3)
        });
    let bin = cache.join(format!("probe-{tag:016x}"));
    if bin.is_file() {
        return Ok((bin, false));
    }
    let src = cache.join(format!("src-{tag:016x}"));
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(src.join("main.go"), PROBE_MAIN).unwrap();
    std::fs::write(src.join("go.mod"), PROBE_MOD).unwrap();
    std::fs::write(src.join("go.sum"), PROBE_SUM).unwrap();
    let go = |args: &[&str]| {
        Command::new("go")
            .args(args)
            .current_dir(&src)
            .env("GOMODCACHE", cache.join("mod"))
            .env("GOFLAGS", "-modcacherw")
            .env("GOWORK", "off")
            .output()
            .expect("run go")
    };
    let download = go(&["mod", "download"]);
    if !download.status.success() {
        let err = String::from_utf8_lossy(&download.stderr);
        // A checksum that does not match go.sum is this repository's error, not the network's.
        assert!(
            !err.contains("checksum mismatch") && !err.contains("SECURITY ERROR"),
            "the probe's modules do not match go.sum: {err}"
        );
        return Err(err.lines().next().unwrap_or("").to_string());
    }
    // Built under another name and renamed, so that a concurrent run never executes half a file.
    let partial = cache.join(format!("probe-{tag:016x}.{}", std::process::id()));
    let build = go(&["build", "-o", partial.to_str().unwrap(), "."]);
    assert!(
        build.status.success(),
        "building the kubectl probe failed: {}",
        String::from_utf8_lossy(&build.stderr)
    );
    std::fs::rename(&partial, &bin).unwrap();
    Ok((bin, true))
}

/// What kubectl made of one stream: the documents it decoded, then the error that ended it.
#[derive(Debug, Default)]
struct Kubectl {
    docs: Vec<Value>,
    error: Option<String>,
}

/// Run the probe over `paths` (several processes, each given a batch of files).
fn run_probe(bin: &Path, paths: &[PathBuf]) -> Vec<Kubectl> {
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let batch = paths.len().div_ceil(threads * 2).clamp(2, 400);
    let chunks: Vec<&[PathBuf]> = paths.chunks(batch).collect();
    let results: Vec<Vec<Kubectl>> = std::thread::scope(|s| {
        let mut pending = Vec::new();
        for group in chunks.chunks(chunks.len().div_ceil(threads).max(1)) {
            pending.push(s.spawn(move || {
                group
                    .iter()
                    .flat_map(|files| run_batch(bin, files))
                    .collect::<Vec<_>>()
            }));
        }
        pending.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let all: Vec<Kubectl> = results.into_iter().flatten().collect();
    assert_eq!(all.len(), paths.len());
    all
}

fn run_batch(bin: &Path, files: &[PathBuf]) -> Vec<Kubectl> {
    // With one file the probe prints no file header; give it two so that the output has one.
    let mut args: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
    let single = args.len() == 1;
    if single {
        args.push(args[0]);
    }
    let out = Command::new(bin)
        .args(&args)
        .output()
        .expect("run the probe");
    assert!(
        out.status.success(),
        "the probe failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut streams: Vec<Kubectl> = Vec::new();
    for line in String::from_utf8(out.stdout).unwrap().lines() {
        let v: Value = serde_json::from_str(line).expect("the probe prints JSON lines");
        let mut obj = match v {
            Value::Object(o) => o,
            other => panic!("unexpected probe line {other}"),
        };
        if obj.contains_key("file") {
            streams.push(Kubectl::default());
        } else if let Some(doc) = obj.remove("ok") {
            streams.last_mut().unwrap().docs.push(doc);
        } else if let Some(Value::String(e)) = obj.remove("error") {
            streams.last_mut().unwrap().error = Some(e);
        } else {
            panic!("unexpected probe line {line}");
        }
    }
    if single {
        streams.pop();
    }
    assert_eq!(streams.len(), files.len(), "{files:?}");
    streams
}

// ---------------------------------------------------------------------------------------------
// golint-k8s's side, as sigs.k8s.io/yaml would turn it into JSON.

/// What golint-k8s made of one stream: the first syntax error, and the value of every document
/// that is not empty or null (kubectl skips those), or why sigs.k8s.io/yaml would fail to
/// convert it. GK000 is exactly this error: the rule reports each document the parser marks
/// with an error, and a text that does not decode (src/rules/gk000.rs, src/lint.rs).
struct Golint {
    gk000: Option<String>,
    docs: Vec<Result<Value, String>>,
    /// Each document of `docs` read through the lookups (see [`via_lookups`]).
    lookups: Vec<Result<Value, String>>,
}

fn golint(name: &str, bytes: &[u8]) -> Golint {
    let src = match Source::decode(Origin::Stdin(name.to_string()), bytes.to_vec()) {
        Ok(s) => s,
        Err(f) => {
            return Golint {
                gk000: Some(f.error.message()),
                docs: Vec::new(),
                lookups: Vec::new(),
            }
        }
    };
    let y = src.parse();
    let mut gk000 = y.stream_error.as_ref().map(|e| e.message.clone());
    let mut docs = Vec::new();
    let mut lookups = Vec::new();
    for doc in &y.docs {
        if let Some(e) = &doc.error {
            gk000.get_or_insert_with(|| e.message.clone());
            continue;
        }
        let Some(root) = doc.root else { continue };
        match to_json(&y, root, &mut Vec::new()) {
            Ok(Value::Null) => {}
            v => {
                lookups.push(match &v {
                    Ok(_) => via_lookups(&y, root, &mut Vec::new()),
                    Err(e) => Err(e.clone()),
                });
                docs.push(v);
            }
        }
    }
    Golint {
        gk000,
        docs,
        lookups,
    }
}

/// A node's JSON as rules and fixes read it: a mapping through `Yaml::entries` (one entry per
/// key, the one that takes effect), each entry checked against what `get_entry` and
/// `get_entries` find for its key; a sequence through `Yaml::items`. [`to_json`] models
/// go-yaml's decoding on the tree; this checks that the lookups give the same answer, so that
/// a rule reads, and a fix edits, the value the API server gets.
fn via_lookups(y: &Yaml, id: NodeId, open: &mut Vec<NodeId>) -> Result<Value, String> {
    let r = y.resolve(id).ok_or("unknown anchor")?;
    if open.contains(&r) {
        return Err("anchor value contains itself".to_string());
    }
    match &y.node(r).kind {
        NodeKind::Mapping { .. } => {
            open.push(r);
            let mut out = Map::new();
            for (k, v) in y.entries(r) {
                if let Some(text) = y.str(k) {
                    let found = y.get_entry(r, text);
                    let [one_pass] = y.get_entries(r, [text]);
                    if found != Some((k, v)) || one_pass != found {
                        return Err(format!(
                            "for key {text:?} entries() has node {v}, get_entry {:?}, \
                             get_entries {:?}",
                            found.map(|e| e.1),
                            one_pass.map(|e| e.1)
                        ));
                    }
                }
                out.insert(key_string(y, k, open)?, via_lookups(y, v, open)?);
            }
            open.pop();
            Ok(Value::Object(out))
        }
        NodeKind::Sequence { .. } => {
            open.push(r);
            let items = y
                .items(r)
                .iter()
                .map(|&i| via_lookups(y, i, open))
                .collect::<Result<Vec<_>, _>>();
            open.pop();
            Ok(Value::Array(items?))
        }
        _ => to_json(y, r, open),
    }
}

/// A scalar as go-yaml v2 decodes it into an `interface{}`.
enum Scalar {
    Null,
    Bool(bool),
    Int(i128),
    Float(f64),
    Str(String),
}

/// go-yaml v2's resolution: untagged plain scalars by YAML 1.1 (the crate's own resolver, which
/// the linter uses too), quoted and block scalars as strings, explicit standard tags by
/// resolving the text and checking it has the tag's type, any other tag as a string.
fn scalar(value: &str, style: Style, tag: Option<&str>) -> Result<Scalar, String> {
    let from = |r: Yaml11| match r {
        Yaml11::Null => Scalar::Null,
        Yaml11::Bool(b) => Scalar::Bool(b),
        Yaml11::Int(i) => Scalar::Int(i),
        Yaml11::Float(f) => Scalar::Float(f),
        Yaml11::Str => Scalar::Str(value.to_string()),
    };
    let Some(tag) = tag else {
        return Ok(match style {
            Style::Plain => from(yaml::resolve_plain(value)),
            _ => Scalar::Str(value.to_string()),
        });
    };
    let short = tag
        .strip_prefix("tag:yaml.org,2002:")
        .or_else(|| tag.strip_prefix("!!"));
    let resolved = yaml::resolve_plain(value);
    Ok(match (short, resolved) {
        (Some("int"), r @ Yaml11::Int(_))
        | (Some("float"), r @ Yaml11::Float(_))
        | (Some("bool"), r @ Yaml11::Bool(_))
        | (Some("null"), r @ Yaml11::Null) => from(r),
        // go-yaml turns an int into a float for `!!float`, but not a uint64.
        (Some("float"), Yaml11::Int(i)) if i64::try_from(i).is_ok() => Scalar::Float(i as f64),
        (Some(t @ ("int" | "float" | "bool" | "null")), _) => {
            return Err(format!("cannot decode `{value}` as a !!{t}"))
        }
        _ => Scalar::Str(value.to_string()),
    })
}

/// A node's JSON. `open` holds the collections being converted, to refuse an alias of one of
/// them as go-yaml does ("anchor value contains itself").
fn to_json(y: &Yaml, id: NodeId, open: &mut Vec<NodeId>) -> Result<Value, String> {
    match &y.node(id).kind {
        NodeKind::Alias { target: None } => Err("unknown anchor".to_string()),
        NodeKind::Alias { target: Some(t) } => {
            if open.contains(t) {
                return Err("anchor value contains itself".to_string());
            }
            to_json(y, *t, open)
        }
        NodeKind::Scalar { value, style, tag } => {
            Ok(match scalar(value, *style, tag.as_deref())? {
                Scalar::Null => Value::Null,
                Scalar::Bool(b) => Value::Bool(b),
                Scalar::Int(i) => match i64::try_from(i) {
                    Ok(i) => Value::from(i),
                    Err(_) => Value::from(u64::try_from(i).expect("go-yaml's ints fit u64")),
                },
                // encoding/json refuses NaN and infinities, so the whole document fails.
                Scalar::Float(f) => Value::Number(
                    Number::from_f64(f).ok_or_else(|| format!("json: unsupported value: {f}"))?,
                ),
                Scalar::Str(s) => Value::String(s),
            })
        }
        NodeKind::Sequence { items, .. } => {
            open.push(id);
            let v = items
                .iter()
                .map(|&i| to_json(y, i, open))
                .collect::<Result<Vec<_>, _>>();
            open.pop();
            Ok(Value::Array(v?))
        }
        NodeKind::Mapping { .. } => {
            let mut out = Map::new();
            fill(y, id, &mut out, open)?;
            Ok(Value::Object(out))
        }
    }
}

/// go-yaml v2's mapping decoding: entries in the order written, a repeated key replacing the
/// earlier value, and a merge key (`<<`) writing the merged mappings' entries at its place, so
/// that it overrides keys written before it (go-yaml v2 does not give explicit keys priority).
fn fill(
    y: &Yaml,
    map: NodeId,
    out: &mut Map<String, Value>,
    open: &mut Vec<NodeId>,
) -> Result<(), String> {
    let NodeKind::Mapping { entries, .. } = &y.node(map).kind else {
        unreachable!("fill is called with mappings")
    };
    open.push(map);
    for &(k, v) in entries {
        if is_merge(y, k) {
            merge(y, v, out, open)?;
            continue;
        }
        let key = key_string(y, k, open)?;
        let value = to_json(y, v, open)?;
        out.insert(key, value);
    }
    open.pop();
    Ok(())
}

fn is_merge(y: &Yaml, k: NodeId) -> bool {
    matches!(&y.node(k).kind,
        NodeKind::Scalar { value, style: Style::Plain, tag } if value == "<<"
            && tag.as_deref().is_none_or(|t| t.ends_with(":merge")))
}

/// A merge value: a mapping, an alias of one, or a sequence of those (earlier ones win, so they
/// are applied last).
fn merge(
    y: &Yaml,
    v: NodeId,
    out: &mut Map<String, Value>,
    open: &mut Vec<NodeId>,
) -> Result<(), String> {
    let want_map = || "map merge requires map or sequence of maps as the value".to_string();
    let mapping = |id: NodeId, open: &[NodeId]| -> Result<NodeId, String> {
        let target = match &y.node(id).kind {
            NodeKind::Alias { target: Some(t) } if open.contains(t) => {
                return Err("anchor value contains itself".to_string())
            }
            NodeKind::Alias { target: Some(t) } => *t,
            NodeKind::Alias { target: None } => return Err("unknown anchor".to_string()),
            _ => id,
        };
        match y.node(target).kind {
            NodeKind::Mapping { .. } => Ok(target),
            _ => Err(want_map()),
        }
    };
    match &y.node(v).kind {
        NodeKind::Sequence { items, .. } => {
            for &i in items.iter().rev() {
                let m = mapping(i, open)?;
                fill(y, m, out, open)?;
            }
            Ok(())
        }
        _ => {
            let m = mapping(v, open)?;
            fill(y, m, out, open)
        }
    }
}

/// A mapping key as sigs.k8s.io/yaml turns it into a JSON key: strings as they are, ints in
/// decimal, floats as Go's `FormatFloat(f, 'g', -1, 32)`, booleans as `true`/`false`; null,
/// uint64 and collection keys fail the conversion.
fn key_string(y: &Yaml, k: NodeId, open: &[NodeId]) -> Result<String, String> {
    let mut id = k;
    while let NodeKind::Alias { target } = &y.node(id).kind {
        id = target.ok_or("unknown anchor")?;
        if open.contains(&id) {
            return Err("anchor value contains itself".to_string());
        }
    }
    let NodeKind::Scalar { value, style, tag } = &y.node(id).kind else {
        return Err("invalid map key: a collection".to_string());
    };
    Ok(match scalar(value, *style, tag.as_deref())? {
        Scalar::Str(s) => s,
        Scalar::Bool(b) => b.to_string(),
        Scalar::Int(i) if i64::try_from(i).is_ok() => i.to_string(),
        Scalar::Int(_) => return Err("unsupported map key of type: uint64".to_string()),
        Scalar::Float(f) => go_float32_g(f),
        Scalar::Null => return Err("unsupported map key of type: <nil>".to_string()),
    })
}

/// Go's `strconv.FormatFloat(f, 'g', -1, 32)`, with YAML's names for the non-finite values as
/// sigs.k8s.io/yaml writes them: the shortest digits of the float32, in exponent form when the
/// exponent is below -4 or at least 6 (the precision Go assumes for shortest output).
fn go_float32_g(f: f64) -> String {
    let x = f as f32;
    if x.is_nan() {
        return ".nan".to_string();
    }
    if x.is_infinite() {
        return if x > 0.0 { ".inf" } else { "-.inf" }.to_string();
    }
    // Rust's `{:e}` prints the shortest round-trip digits: `-1.2345e10`, `1e-7`, `0e0`.
    let e = format!("{x:e}");
    let (mantissa, exp) = e.split_once('e').unwrap();
    let exp: i32 = exp.parse().unwrap();
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => ("-", m),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(|&c| c != '.').collect();
    if !(-4..6).contains(&exp) {
        let (first, rest) = digits.split_at(1);
        let dot = if rest.is_empty() { "" } else { "." };
        let esign = if exp < 0 { '-' } else { '+' };
        return format!("{sign}{first}{dot}{rest}e{esign}{:02}", exp.abs());
    }
    let point = exp + 1;
    if point <= 0 {
        return format!("{sign}0.{}{digits}", "0".repeat((-point) as usize));
    }
    let point = point as usize;
    if digits.len() <= point {
        format!("{sign}{digits}{}", "0".repeat(point - digits.len()))
    } else {
        format!("{sign}{}.{}", &digits[..point], &digits[point..])
    }
}

// ---------------------------------------------------------------------------------------------
// Comparing values.

/// Numbers are equal when both are integers of the same value, or when their f64 values are
/// equal. Go's encoding/json prints a float64 with an integral value without a fraction (`1.0`
/// comes back as `1`, `1e3` as `1000`), and sigs.k8s.io/yaml hands ints over as ints, so an int
/// on one side and a float on the other is the same JSON number when the values agree.
fn same_number(a: &Number, b: &Number) -> bool {
    let int = |n: &Number| {
        n.as_i64()
            .map(i128::from)
            .or_else(|| n.as_u64().map(i128::from))
    };
    match (int(a), int(b)) {
        (Some(x), Some(y)) => x == y,
        _ => a.as_f64() == b.as_f64(),
    }
}

/// The first place where `ours` and `theirs` differ, as a path and both values.
fn difference(ours: &Value, theirs: &Value, path: &mut String) -> Option<String> {
    let here = |p: &str| {
        format!(
            "at {}: golint-k8s {}, kubectl {}",
            if p.is_empty() { "/" } else { p },
            short(ours),
            short(theirs)
        )
    };
    match (ours, theirs) {
        (Value::Number(a), Value::Number(b)) => (!same_number(a, b)).then(|| here(path)),
        (Value::Array(a), Value::Array(b)) => {
            if a.len() != b.len() {
                return Some(here(path));
            }
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                let len = path.len();
                write!(path, "/{i}").unwrap();
                if let Some(d) = difference(x, y, path) {
                    return Some(d);
                }
                path.truncate(len);
            }
            None
        }
        (Value::Object(a), Value::Object(b)) => {
            if a.len() != b.len() || a.keys().any(|k| !b.contains_key(k)) {
                return Some(here(path));
            }
            for (k, x) in a {
                let len = path.len();
                write!(path, "/{k}").unwrap();
                if let Some(d) = difference(x, &b[k], path) {
                    return Some(d);
                }
                path.truncate(len);
            }
            None
        }
        (a, b) => (a != b).then(|| here(path)),
    }
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 160 {
        format!("{}…", s.chars().take(160).collect::<String>())
    } else {
        s
    }
}

/// Compare one stream; returns the mismatch, if any.
fn compare(ours: &Golint, theirs: &Kubectl) -> Option<(Kind, String)> {
    match (&theirs.error, &ours.gk000) {
        (None, Some(e)) => Some((
            Kind::GolintRejects,
            format!(
                "kubectl decodes {} document(s); golint-k8s reports GK000: {e}",
                theirs.docs.len()
            ),
        )),
        (Some(e), None) => Some(match ours.docs.iter().find_map(|d| d.as_ref().err()) {
            Some(ours) => (
                Kind::Conversion,
                format!(
                    "kubectl refuses the stream ({e}); golint-k8s's tree does not convert to \
                     JSON either ({ours}), and golint-k8s reports no GK000"
                ),
            ),
            None => (
                Kind::KubectlRejects,
                format!("kubectl refuses the stream ({e}); golint-k8s reports no GK000"),
            ),
        }),
        (Some(_), Some(_)) => None,
        (None, None) => {
            if ours.docs.len() != theirs.docs.len() {
                return Some((
                    Kind::DocumentCount,
                    format!(
                        "kubectl decodes {} document(s), golint-k8s {}",
                        theirs.docs.len(),
                        ours.docs.len()
                    ),
                ));
            }
            for (i, (o, t)) in ours.docs.iter().zip(&theirs.docs).enumerate() {
                let d = match o {
                    Err(e) => Some(format!(
                        "golint-k8s's tree would not convert to JSON ({e}); kubectl {}",
                        short(t)
                    )),
                    Ok(o) => difference(o, t, &mut String::new()),
                };
                if let Some(d) = d {
                    return Some((Kind::Value, format!("document {i}: {d}")));
                }
            }
            for (i, (o, t)) in ours.lookups.iter().zip(&theirs.docs).enumerate() {
                let d = match o {
                    Err(e) => Some(format!("the lookups disagree: {e}")),
                    Ok(o) => difference(o, t, &mut String::new()),
                };
                if let Some(d) = d {
                    return Some((
                        Kind::Lookup,
                        format!("document {i}, read as rules read it: {d}"),
                    ));
                }
            }
            None
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Inputs.

/// A small deterministic generator (splitmix64): the mutations need a few choices, not quality.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e3779b97f4a7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d049bb133111eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// A random item; None for an empty slice.
    fn pick<'a, T>(&mut self, items: &'a [T]) -> Option<&'a T> {
        (!items.is_empty()).then(|| &items[self.below(items.len())])
    }
}

/// Hand-written edge cases: (name, stream).
fn edge_cases() -> Vec<(String, String)> {
    let cases: Vec<(&str, String)> = vec![
        // The case that started this test (issue 24): the closing line of a multi-line quoted
        // scalar at its key's indentation, as JSON written into an annotation often is.
        (
            "quoted-closing-line-at-key-indent",
            "metadata:\n  annotations:\n    a: '[\n      \"x\"\n    ]'\n".into(),
        ),
        (
            "double-quoted-closing-line-at-key-indent",
            "metadata:\n  annotations:\n    a: \"[\n      'x'\n    ]\"\n".into(),
        ),
        (
            "quoted-continuation-at-key-indent",
            "metadata:\n  annotations:\n    a: 'one\n    two'\n    b: c\n".into(),
        ),
        (
            "quoted-continuation-left-of-key",
            "metadata:\n  annotations:\n    a: 'one\n  two'\n".into(),
        ),
        (
            "quoted-continuation-at-column-0",
            "metadata:\n  annotations:\n    a: \"one\ntwo\"\n".into(),
        ),
        (
            "quoted-continuation-top-level-column-0",
            "a: \"one\ntwo\"\nb: 'three\nfour'\n".into(),
        ),
        (
            "quoted-continuation-in-sequence",
            "args:\n- 'one\n  two'\n- \"three\n four\"\n- 'five\n-six'\n".into(),
        ),
        (
            "quoted-closing-quote-alone-at-column-0",
            "a:\n  b: 'one\n'\n".into(),
        ),
        (
            "quoted-blank-lines-and-tabs",
            "a:\n  b: \"one\n\n\ttwo\n  \t three\"\n".into(),
        ),
        (
            "quoted-escaped-line-break",
            "a:\n  b: \"one \\\n  two\\\n three\"\n".into(),
        ),
        (
            "quoted-continuation-crlf",
            "a:\r\n  b: 'one\r\n  two'\r\n".into(),
        ),
        (
            "quoted-key-multi-line-in-flow",
            "a: {\"k\n  ey\": 1}\n".into(),
        ),
        (
            "quoted-document-marker-inside",
            "a: 'one\n--- two'\n".into(),
        ),
        (
            "plain-multi-line",
            "a: one\n  two\n  three\nb:\n  c: four\n   five\n".into(),
        ),
        (
            "plain-continuation-too-far-left",
            "a:\n  b: one\n two\n".into(),
        ),
        (
            "flow-closing-at-column-0",
            "a:\n  b: [\n    1,\n    2\n]\n  c: {\nx: 1\n  }\n".into(),
        ),
        (
            "flow-multi-line-trailing-commas",
            "a: [1, 2, ]\nb: {x: 1, y: 2, }\nc: [\n  {k: v},\n  [n],\n]\n".into(),
        ),
        (
            "flow-implicit-pairs",
            "a: [x: 1, y: 2]\nb: {? k : v}\n".into(),
        ),
        (
            "yaml11-scalars",
            "a: yes\nb: No\nc: on\nd: OFF\ne: y\nf: N\ng: 0755\nh: 0o17\ni: 0x1F\nj: ~\nk: null\n\
             l: 1_000\nm: 1e3\nn: .5\no: +1\np: -0\nq: 2024-01-01\nr: 0b101\ns: 12:30\nt: 1.0\n\
             u: 08\nv: 9223372036854775808\nw: 18446744073709551616\nx: 1.5e-7\ny: -.5\nz: 0.\n"
                .into(),
        ),
        (
            "yaml11-keys",
            "yes: a\n1: b\n1.5: c\n0x10: d\nTrue: e\n-3: f\n1e7: g\n0.0001: h\n0.00001: i\n".into(),
        ),
        (
            "quoted-yaml11-scalars",
            "a: 'yes'\nb: \"0755\"\nc: '~'\nd: \"\"\ne: ''\n".into(),
        ),
        (
            "tags",
            "a: !!str 0755\nb: !!int \"12\"\nc: !!float 1\nd: !custom 5\ne: !!bool yes\nf: !!null ''\n\
             g: !!map {x: 1}\nh: !!seq [1]\n"
                .into(),
        ),
        (
            "anchors-and-aliases",
            "a: &x {p: 1, q: [1, 2]}\nb: *x\nc: &s text\nd: *s\ne: [*s, *x]\n*s : as-key\n".into(),
        ),
        (
            "merge-keys",
            "base: &b {cpu: 1, mem: 2}\nmore: &m {mem: 3, gpu: 4}\n\
             one:\n  <<: *b\n  cpu: 5\n\
             two:\n  <<: [*m, *b]\n\
             three:\n  cpu: 9\n  <<: *b\n\
             four:\n  <<: {inline: 1}\n  <<: *m\n"
                .into(),
        ),
        (
            "merge-key-quoted-is-a-key",
            "a: &a {x: 1}\nb:\n  '<<': *a\n".into(),
        ),
        (
            "duplicate-keys",
            "a: 1\nb: 2\na: 3\nc:\n  d: 1\n  d: [2]\n".into(),
        ),
        (
            "block-scalars",
            "a: |\n  one\n   two\n\n  three\nb: >\n  folded\n  text\n\n   more\n  end\nc: |-\n  strip\n\n\
             d: |+\n  keep\n\ne: >2\n   indented\nf: |\n  #not a comment\n"
                .into(),
        ),
        (
            "block-scalar-at-end-without-newline",
            "a: |\n  text".into(),
        ),
        (
            "block-scalar-comment-at-column-0",
            "a:\n  b: |\n    one\n# comment\n    two\n".into(),
        ),
        (
            "document-markers",
            "---\na: 1\n---\n---\nb: 2\n...\n---\n# only a comment\n---\n~\n---\nc: 3\n".into(),
        ),
        ("document-marker-comment", "--- # first\na: 1\n---   # second\nb: 2\n".into()),
        // kubectl cuts at any line starting with `---` and a comment, blank or not; YAML needs
        // a blank after the marker. A cut line right after another (or first in the stream)
        // stays in the next piece, and go-yaml then reads it as text.
        ("document-marker-comment-no-space", "a: 1\n---# second\nb: 2\n".into()),
        ("document-marker-comment-no-space-first", "---# first\na: 1\n".into()),
        ("document-marker-comment-no-space-after-marker", "a: 1\n---\n---#x\nb: 2\n".into()),
        (
            "document-marker-comment-no-space-and-more",
            "a: |\n  text\n---#c\n# own line\nb: [1,\n  2]\n--- # d\n---#e\nc: 'x\n  y'\n".into(),
        ),
        ("document-marker-comment-no-space-directive", "%YAML 1.1\n---\na: 1\n---#c\nb: 2\n".into()),
        ("document-marker-trailing-space-and-tab", "---  \na: 1\n---\t\nb: 2\n".into()),
        ("document-end-marker", "a: 1\n...\n".into()),
        ("document-end-marker-after-empty-document", "a: 1\n---\n...\n".into()),
        ("document-marker-last", "a: 1\n---\n".into()),
        ("document-scalar", "--- \nhello\n---\n- 1\n- 2\n".into()),
        ("only-comments", "# one\n# two\n".into()),
        ("empty", String::new()),
        ("bom", "\u{feff}a: 1\n".into()),
        ("bom-then-marker", "\u{feff}---\na: 1\n".into()),
        ("bom-then-comment", "\u{feff}# c\na: 1\n".into()),
        ("bom-in-second-document", "a: 1\n---\n\u{feff}b: 2\n".into()),
        ("bom-after-marker-comment", "a: 1\n--- # c\n\u{feff}b:\n  c: 2\n---\n\u{feff}d: 3\n".into()),
        ("bom-after-blank-line", "a: 1\n---\n\n\u{feff}b: 2\n".into()),
        (
            "crlf",
            "a: 1\r\nb:\r\n  c: \"x\r\n  y\"\r\n  d: |\r\n    one\r\n    two\r\n---\r\ne: 2\r\n".into(),
        ),
        ("trailing-spaces", "a: 1   \nb: |  \n  x  \nc:    \n  - d  \n".into()),
        (
            "comments",
            "a: 1 # c\nb: \"x\" # c\nc: x#y\nd: [1, # c\n  2]\n# c\ne:\n  # c\n  f: 1\n".into(),
        ),
        ("tab-after-colon", "a:\tb\nc: d\t\ne:\t\t1\n".into()),
        ("tab-indentation", "a:\n\tb: 1\n".into()),
        ("tab-in-flow", "a: {x:\t1,\ty: 2}\nb: [\t1,\n\t2]\n".into()),
        ("indentless-sequence", "a:\n- 1\n- b: 2\n  c: 3\n-   - nested\n".into()),
        ("explicit-keys", "? a\n: b\n? x y\n: z\n? |\n  block\n: w\n".into()),
        // go-yaml reads the first document of a piece and stops: kubectl takes `a` and drops
        // the rest without a word. golint-k8s's GK000 is the better answer (see ALLOWED).
        ("first-key-indented", " a: 1\nb: 2\n".into()),
        ("empty-values", "a:\nb: \"\"\nc: []\nd: {}\ne:\n-\n- ~\n".into()),
        (
            "escapes",
            "a: \"\\u00e9\\x41\\t\\\\\\\"\"\nb: 'it''s'\nc: \"\\U0001F600\"\nd: \"\\N\\_\\L\"\n".into(),
        ),
        ("unicode", "a: é\nb: 翻訳\nc: 🌍\n\"ключ\": значение\n".into()),
        ("colon-in-values", "a: http://x:80/p\nb: x:y\nc: 'k: v'\nd: -x\ne: ?x\n".into()),
        ("long-key", format!("{}: 1\n", "k".repeat(1100))),
        ("json", "{\"a\": 1.0, \"b\": [true, null, \"x\"], \"c\": {\"d\": -2}}\n".into()),
        ("json-stream", "{\"a\": 1}\n{\"b\": 2}\n".into()),
        ("nested-sequences", "- - - a\n    - b\n  - c\n- {x: [1, {y: 2}]}\n".into()),
    ];
    cases
        .into_iter()
        .chain(duplicate_and_merge_cases())
        .map(|(n, t)| (format!("gen/edge/{n}"), t))
        .collect()
}

/// Streams where golint-k8s once read something other than kubectl (issue 39): tags as go-yaml
/// v2 resolves them, directives, content after `...`, JSON streams and UTF-16. Bytes, because
/// some are not UTF-8.
fn parity_cases() -> Vec<(String, Vec<u8>)> {
    let cases: Vec<(&str, Vec<u8>)> =
        vec![
        (
        "tags-resolve-as-go-yaml-v2",
        "a: !!int \"100\"\nb: !!binary b2Zm\nc: !!float \"1\"\nd: !!bool \"yes\"\ne: !!str 4\n\
         f: !!binary |\n  b2Zm\n  ZmY=\ng: !!null ''\n"
            .into(),
    ),
        ("yaml-1-2-directive", "%YAML 1.2\n---\na: 1\n".into()),
        ("document-after-end-marker", "a: 1\n...\nb: 2\n---\nc: 3\n".into()),
        ("end-marker-then-start", "a: 1\n...\n---\nc: 3\n".into()),
        ("json-stream-concatenated", "{\"a\": {\"s\": \"}{\\\"\"}}{\"b\": [2]}\n".into()),
        ("json-stream-one-a-line", "  {\"a\": 1}\n\n{\"b\": 2}\r\n{\"c\": 3}".into()),
        ("json-stream-then-garbage", "{\"a\": 1}\n{\"b\": 2}\nc: 3\n".into()),
        ("utf16le-one-document", utf16("a: 1\nb: é😀\nc: [x, {d: y}]\n", false)),
        ("utf16be-one-document", utf16("a: 1\nb: é😀\nc: [x, {d: y}]\n", true)),
        ("utf16le-two-documents", utf16("a: 1\n---\nb: 2\n", false)),
        ("utf16be-no-final-line-break", utf16("a: 1\nb: 2", true)),
        ("utf16be-two-documents", utf16("a: 1\n---\nb: 2\n", true)),
    ];
    cases
        .into_iter()
        .map(|(n, t)| (format!("gen/parity/{n}"), t))
        .collect()
}

/// Repeated keys and merge keys, whose order decides which value the API server gets: go-yaml
/// v2 keeps a repeated key's last value, and a merge key writes the merged entries where it
/// stands (over the keys before it, under the keys after it; of a list of mappings, the earlier
/// ones win). Rules and fixes must read the value that takes effect (issue 39).
fn duplicate_and_merge_cases() -> Vec<(&'static str, String)> {
    let deployment = |container: &str| {
        format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: api\nspec:\n  template:\n    \
             spec:\n      containers:\n        - name: api\n          image: ghcr.io/acme/api:1\n{container}"
        )
    };
    // A mapping wide enough for the lookups' set-based path, with both kinds of repeats.
    let mut wide = String::from("base: &base {k3: merged, k17: merged, extra: merged}\nm:\n");
    for i in 0..20 {
        wide.push_str(&format!("  k{i}: first\n"));
    }
    wide.push_str("  <<: *base\n  k5: last\n  k17: after-merge\n");
    vec![
        ("duplicate-key-last-wins", "a: 1\nb: x\na: 2\n".into()),
        (
            "duplicate-mapping-key-replaces-the-whole-mapping",
            "m:\n  x: 1\n  z: 1\nm:\n  x: 2\n".into(),
        ),
        (
            "duplicate-flow-key",
            "m: {a: 1, b: 2, a: 3}\nl: [{name: x, value: a, value: b}]\n".into(),
        ),
        (
            "merge-overrides-the-key-before-it",
            deployment(
                "          resources:\n            limits:\n              memory: 2Gi\n              \
                 <<: {memory: 256Mi}\n",
            ),
        ),
        (
            "key-after-merge-overrides-it",
            "m:\n  <<: {memory: 256Mi, cpu: 1}\n  memory: 2Gi\n".into(),
        ),
        (
            "merge-list-earlier-mapping-wins",
            "a: &a {x: a, p: a}\nb: &b {x: b, q: b}\nm:\n  x: 0\n  p: 0\n  q: 0\n  r: 0\n  \
             <<: [*a, *b]\n  r: 9\n"
                .into(),
        ),
        (
            "merge-list-of-written-mappings",
            "m:\n  x: 0\n  <<: [{x: 1}, {x: 2, y: 2}]\n  y: 9\n  x: 3\n  x: 4\n".into(),
        ),
        (
            "nested-merge-inside-the-merged-mapping",
            "a: &a {x: a, <<: {x: inner, w: inner}}\nb: &b {<<: {x: inner, w: inner}, x: b}\n\
             m:\n  w: 0\n  <<: *a\nl:\n  w: 0\n  <<: *b\n"
                .into(),
        ),
        (
            "repeated-merge-keys",
            "b: &b {a: 1, b: 1}\nm:\n  a: 0\n  <<: *b\n  <<: {b: 2}\n  a: 3\n  a: 4\n".into(),
        ),
        (
            "merge-tags",
            "m:\n  a: 0\n  !!merge <<: {a: 1}\nl:\n  a: 0\n  !!str <<: {a: 1}\n  \"<<\": {a: 2}\n"
                .into(),
        ),
        (
            "duplicate-env-keys",
            deployment(
                "          env:\n            - name: OLD\n              value: x\n          \
                 resources:\n            limits: {cpu: \"2\", memory: 512Mi}\n          env:\n            \
                 - name: LOG_LEVEL\n              value: info\n",
            ),
        ),
        (
            "duplicate-resources-in-a-merged-anchor",
            "defaults: &defaults\n  resources: {limits: {memory: 1Gi}}\n  resources: {limits: {memory: 3Gi}}\n\
             c:\n  name: api\n  <<: *defaults\n"
                .into(),
        ),
        ("wide-mapping-with-repeats-and-a-merge", wide),
    ]
}

/// `text` in UTF-16 with its byte order mark.
fn utf16(text: &str, big: bool) -> Vec<u8> {
    let mut bytes = if big {
        vec![0xfe, 0xff]
    } else {
        vec![0xff, 0xfe]
    };
    for u in text.encode_utf16() {
        bytes.extend(if big {
            u.to_be_bytes()
        } else {
            u.to_le_bytes()
        });
    }
    bytes
}

/// The value part of a `key: value` line (or `- key: value`), when it is a plain scalar.
fn plain_value(line: &str) -> Option<(usize, &str)> {
    let body = line.trim_start();
    let body_at = line.len() - body.len();
    let body_after_dash = body.strip_prefix("- ").unwrap_or(body);
    let colon = body_after_dash.find(": ")?;
    let key = &body_after_dash[..colon];
    if key.is_empty() || key.contains(['#', '"', '\'', '{', '[', '&', '*', '!', '?']) {
        return None;
    }
    let value_at = body_at + (body.len() - body_after_dash.len()) + colon + 2;
    let value = line[value_at..].trim();
    let first = value.chars().next()?;
    if "\"'{[|>&*!#%@`".contains(first) || value.contains(" #") {
        return None;
    }
    Some((
        value_at + (line[value_at..].len() - line[value_at..].trim_start().len()),
        value,
    ))
}

/// One mutation of `text`, named by what it did, or None when the text offers no place for it.
fn mutate(text: &str, kind: usize, rng: &mut Rng) -> Option<(&'static str, String)> {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let content: Vec<usize> = (0..lines.len())
        .filter(|&i| {
            let t = lines[i].trim();
            !t.is_empty() && !t.starts_with('#') && !t.starts_with("---")
        })
        .collect();
    let valued: Vec<(usize, usize, &str)> = content
        .iter()
        .filter_map(|&i| {
            plain_value(lines[i].trim_end_matches(['\n', '\r'])).map(|(at, v)| (i, at, v))
        })
        .collect();
    let rebuild = |i: usize, new: String| {
        let mut out = String::with_capacity(text.len() + 16);
        for (j, l) in lines.iter().enumerate() {
            if j == i {
                out.push_str(&new);
            } else {
                out.push_str(l);
            }
        }
        out
    };
    let eol = |l: &str| -> &'static str {
        if l.ends_with("\r\n") {
            "\r\n"
        } else if l.ends_with('\n') {
            "\n"
        } else {
            ""
        }
    };
    match kind {
        0 => {
            // Re-indent a line by one or two columns either way. Not a document's first line:
            // go-yaml reads one YAML document per piece and never looks past it, so kubectl
            // drops what follows an indented first key without a word (the edge case
            // `first-key-indented` shows it) and every such mutant would say only that.
            let firsts: Vec<usize> = content
                .iter()
                .copied()
                .filter(|&i| {
                    lines[..i]
                        .iter()
                        .rev()
                        .map(|l| l.trim())
                        .find(|t| !t.is_empty() && !t.starts_with('#'))
                        .is_none_or(|t| t.starts_with("---"))
                })
                .collect();
            let inner: Vec<usize> = content
                .iter()
                .copied()
                .filter(|i| !firsts.contains(i))
                .collect();
            let &i = rng.pick(&inner)?;
            let l = lines[i];
            let indent = l.len() - l.trim_start_matches(' ').len();
            let delta = [-2i32, -1, 1, 2][rng.below(4)];
            let new = (indent as i32 + delta).max(0) as usize;
            Some((
                "reindent",
                rebuild(i, format!("{}{}", " ".repeat(new), &l[indent..])),
            ))
        }
        1 => {
            // Quote a plain value, single or double.
            let &(i, at, v) = rng.pick(&valued)?;
            let l = lines[i];
            let quoted = if rng.below(2) == 0 {
                format!("'{}'", v.replace('\'', "''"))
            } else {
                format!("\"{}\"", v.replace('\\', "\\\\").replace('"', "\\\""))
            };
            Some((
                "quote",
                rebuild(i, format!("{}{quoted}{}", &l[..at], eol(l))),
            ))
        }
        2 => {
            // A tab: after a colon, at the end of a line, or as indentation.
            let &i = rng.pick(&content)?;
            let l = lines[i];
            let body = l.trim_end_matches(['\n', '\r']);
            match rng.below(3) {
                0 => {
                    let at = body.find(": ")?;
                    Some((
                        "tab-after-colon",
                        rebuild(i, format!("{}:\t{}", &l[..at], &l[at + 2..])),
                    ))
                }
                1 => Some(("trailing-tab", rebuild(i, format!("{body}\t{}", eol(l))))),
                _ => {
                    let indent = l.len() - l.trim_start_matches(' ').len();
                    (indent > 0).then(|| ("tab-indent", rebuild(i, format!("\t{}", &l[indent..]))))
                }
            }
        }
        3 => {
            // Block to flow: a key whose children are all `k: scalar` lines one level deeper.
            let starts: Vec<usize> = content
                .iter()
                .copied()
                .filter(|&i| {
                    let b = lines[i].trim_end();
                    b.ends_with(':') && !b.trim_start().starts_with("- ")
                })
                .collect();
            let &i = rng.pick(&starts)?;
            let l = lines[i];
            let indent = l.len() - l.trim_start().len();
            let mut pairs = Vec::new();
            let mut j = i + 1;
            let mut child_indent = None;
            while j < lines.len() {
                let c = lines[j];
                let ci = c.len() - c.trim_start().len();
                if c.trim().is_empty() || ci <= indent {
                    break;
                }
                if *child_indent.get_or_insert(ci) != ci {
                    return None;
                }
                let (_, v) = plain_value(c.trim_end_matches(['\n', '\r']))?;
                let k = c.trim_start().split_once(": ")?.0;
                if k.starts_with("- ") || v.contains([',', '{', '}', '[', ']']) {
                    return None;
                }
                pairs.push(format!("{k}: {v}"));
                j += 1;
            }
            if pairs.is_empty() {
                return None;
            }
            let head = l.trim_end_matches(['\n', '\r']);
            let flow = if rng.below(2) == 0 {
                format!("{head} {{{}}}{}", pairs.join(", "), eol(l))
            } else {
                // Over several lines, closing at the key's column.
                let pad = " ".repeat(indent + 2);
                format!(
                    "{head} {{\n{pad}{}\n{}}}{}",
                    pairs.join(&format!(",\n{pad}")),
                    " ".repeat(indent),
                    eol(l)
                )
            };
            let mut out: String = lines[..i].concat();
            out.push_str(&flow);
            out.push_str(&lines[j..].concat());
            Some(("block-to-flow", out))
        }
        4 => {
            // A value becomes a multi-line quoted scalar whose continuation and closing lines sit
            // at various columns, down to the key's and below.
            let &(i, at, v) = rng.pick(&valued)?;
            let l = lines[i];
            let key_col = l.len() - l.trim_start().len();
            let q = if rng.below(2) == 0 { '\'' } else { '"' };
            let col = |rng: &mut Rng| {
                let choices = [
                    key_col + 2,
                    key_col + 1,
                    key_col,
                    key_col.saturating_sub(2),
                    0,
                ];
                " ".repeat(choices[rng.below(choices.len())])
            };
            let (a, b) = v.split_at(v.len() / 2);
            let (a, b) = (a.replace(q, ""), b.replace(q, ""));
            let (c1, c2) = (col(rng), col(rng));
            let body = if rng.below(2) == 0 {
                format!("{q}{a}\n{c1}{b}{q}")
            } else {
                format!("{q}[\n{c1}{a}{b}\n{c2}]{q}")
            };
            Some((
                "multi-line-quoted",
                rebuild(i, format!("{}{body}{}", &l[..at], eol(l))),
            ))
        }
        5 => {
            // A YAML 1.1 scalar in place of a value.
            let &(i, at, _) = rng.pick(&valued)?;
            let l = lines[i];
            let v = rng.pick(&[
                "yes",
                "no",
                "on",
                "off",
                "Y",
                "n",
                "0755",
                "0x1F",
                "~",
                "null",
                "1_000",
                "1e3",
                "2024-01-01",
                "0b11",
                "+1",
                ".5",
                "12:30",
                "True",
                "08",
            ])?;
            Some((
                "yaml11-value",
                rebuild(i, format!("{}{v}{}", &l[..at], eol(l))),
            ))
        }
        6 => {
            // An anchor on a mapping value, aliased and merged at the end of the document.
            let first_doc_end = lines
                .iter()
                .position(|l| l.starts_with("---") && !l.starts_with("----"))
                .filter(|&p| p > 0)
                .unwrap_or(lines.len());
            let heads: Vec<usize> = content
                .iter()
                .copied()
                .filter(|&i| i < first_doc_end && lines[i].trim_end().ends_with(':'))
                // Only mappings: go-yaml refuses to merge anything else.
                .filter(|&i| {
                    lines[i + 1..first_doc_end]
                        .iter()
                        .map(|l| l.trim())
                        .find(|t| !t.is_empty() && !t.starts_with('#'))
                        .is_some_and(|t| !t.starts_with('-'))
                })
                .collect();
            if !lines[..first_doc_end]
                .iter()
                .any(|l| l.starts_with(|c: char| c.is_ascii_alphabetic()))
            {
                return None;
            }
            let &i = rng.pick(&heads)?;
            let l = lines[i];
            let head = l.trim_end_matches(['\n', '\r']);
            let e = eol(l);
            let nl = if e.is_empty() { "\n" } else { e };
            let mut out: String = lines[..i].concat();
            out.push_str(&format!("{head} &mutant{e}"));
            out.push_str(&lines[i + 1..first_doc_end].concat());
            if !out.ends_with('\n') {
                out.push_str(nl);
            }
            out.push_str(&format!(
                "zzAlias: *mutant{nl}zzMerge:{nl}  <<: *mutant{nl}  zzExtra: 1{nl}"
            ));
            out.push_str(&lines[first_doc_end..].concat());
            Some(("anchor-alias-merge", out))
        }
        7 => {
            // Document markers: a leading marker, with a comment, a trailing one or an end marker.
            Some(match rng.below(4) {
                0 => ("leading-marker", format!("---\n{text}")),
                1 => ("marker-with-comment", format!("--- # generated\n{text}")),
                // Not after an empty last document: kubectl's cut leaves `...` alone in a piece
                // then (the edge case `document-end-marker-after-empty-document`).
                2 if !ends_with_empty_document(text) => {
                    ("end-marker", format!("{}...\n", with_newline(text)))
                }
                2 => return None,
                _ => ("trailing-marker", format!("{}---\n", with_newline(text))),
            })
        }
        8 => (!text.starts_with('\u{feff}')).then(|| ("bom", format!("\u{feff}{text}"))),
        9 => Some(("crlf", text.replace("\r\n", "\n").replace('\n', "\r\n"))),
        10 => {
            // Trailing spaces on a few lines.
            let mut out = String::new();
            for l in &lines {
                let body = l.trim_end_matches(['\n', '\r']);
                out.push_str(body);
                if rng.below(3) == 0 {
                    out.push_str(&" ".repeat(1 + rng.below(3)));
                }
                out.push_str(&l[body.len()..]);
            }
            Some(("trailing-spaces", out))
        }
        _ => {
            // A comment at the end of a line, or on a line of its own at some indentation.
            let &i = rng.pick(&content)?;
            let l = lines[i];
            let body = l.trim_end_matches(['\n', '\r']);
            let e = if eol(l).is_empty() { "\n" } else { eol(l) };
            if rng.below(2) == 0 {
                Some((
                    "end-comment",
                    rebuild(i, format!("{body} # note{}", eol(l))),
                ))
            } else {
                let indent = " ".repeat(rng.below(6));
                Some((
                    "own-line-comment",
                    rebuild(i, format!("{indent}# note{e}{l}")),
                ))
            }
        }
    }
    .filter(|(_, t)| t != text)
}

fn ends_with_empty_document(text: &str) -> bool {
    text.lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty() && !l.starts_with('#'))
        .is_none_or(|l| l.starts_with("---"))
}

fn with_newline(text: &str) -> String {
    if text.is_empty() || text.ends_with('\n') {
        text.to_string()
    } else {
        format!("{text}\n")
    }
}

const MUTATIONS: usize = 12;

/// Mutants of the fixtures both sides decode: (name, stream). A mutant of a stream that is
/// already refused would mostly be refused for the same reason, and teach nothing.
fn mutants(fixtures: &[(String, String)]) -> Vec<(String, String)> {
    let mut rng = Rng(SEED);
    let mut out = Vec::new();
    for (name, text) in fixtures {
        if text.trim().is_empty() {
            continue;
        }
        for n in 0..MUTANTS_PER_FIXTURE {
            // Up to a few tries: not every text has a place for every mutation.
            for _ in 0..4 {
                let kind = rng.below(MUTATIONS);
                if let Some((what, t)) = mutate(text, kind, &mut rng) {
                    out.push((format!("gen/mut/{name}#{n}-{what}"), t));
                    break;
                }
            }
        }
    }
    out
}

fn yaml_files(dir: &Path, exts: &[&str], out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            yaml_files(&p, exts, out);
        } else if p
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| exts.contains(&e))
        {
            out.push(p);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The test.

/// One compared stream.
struct Input {
    /// `fixtures`, `corpus` or `generated`.
    part: &'static str,
    name: String,
    path: PathBuf,
}

#[test]
fn golint_k8s_parses_what_kubectl_decodes() {
    if !common::go_available() {
        println!(
            "kubectl_yaml: did not run: no go command on PATH to build the kubectl probe with"
        );
        return;
    }
    let started = Instant::now();
    let cache = common::user_cache("kubectl-probe");
    std::fs::create_dir_all(&cache).unwrap();
    let (bin, built) = match probe(&cache) {
        Ok(p) => p,
        Err(why) => {
            println!("kubectl_yaml: did not run: the Go module proxy could not be reached ({why})");
            return;
        }
    };
    let probe_ready = started.elapsed();

    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut inputs: Vec<Input> = Vec::new();
    let mut paths = Vec::new();
    yaml_files(&root.join("fixtures"), &["yaml", "yml"], &mut paths);
    for path in paths {
        let name = path
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        inputs.push(Input {
            part: "fixtures",
            name,
            path,
        });
    }
    let corpus = root.join("../shared/corpus");
    if corpus.is_dir() {
        let mut paths = Vec::new();
        yaml_files(&corpus, &["yaml", "yml", "json"], &mut paths);
        for path in paths {
            let rel = path
                .strip_prefix(&corpus)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            inputs.push(Input {
                part: "corpus",
                name: format!("corpus/{rel}"),
                path,
            });
        }
    } else {
        println!("kubectl_yaml: the corpus part did not run: ../shared/corpus is not beside this checkout");
    }
    let paths: Vec<PathBuf> = inputs.iter().map(|i| i.path.clone()).collect();
    let mut kubectl = run_probe(&bin, &paths);
    let mut results: Vec<(Golint, Vec<u8>)> = inputs
        .iter()
        .map(|i| {
            let bytes = std::fs::read(&i.path).unwrap();
            (golint(&i.name, &bytes), bytes)
        })
        .collect();

    // Generated streams go to files, so that one probe process reads many of them.
    let decoded: Vec<(String, String)> = inputs
        .iter()
        .zip(&kubectl)
        .zip(&results)
        .filter(|((i, k), (g, _))| i.part == "fixtures" && k.error.is_none() && g.gk000.is_none())
        .filter_map(|((i, _), (_, bytes))| {
            Some((i.name.clone(), String::from_utf8(bytes.clone()).ok()?))
        })
        .collect();
    let scratch = tempfile::tempdir().unwrap();
    let first_generated = inputs.len();
    for (n, (name, text)) in edge_cases()
        .into_iter()
        .chain(mutants(&decoded))
        .map(|(n, t)| (n, t.into_bytes()))
        .chain(parity_cases())
        .enumerate()
    {
        let path = scratch.path().join(format!("{n:05}.yaml"));
        std::fs::write(&path, &text).unwrap();
        results.push((golint(&name, &text), text));
        inputs.push(Input {
            part: "generated",
            name,
            path,
        });
    }
    let paths: Vec<PathBuf> = inputs[first_generated..]
        .iter()
        .map(|i| i.path.clone())
        .collect();
    kubectl.extend(run_probe(&bin, &paths));

    // Per part: streams, documents kubectl decoded, streams kubectl refused.
    let mut counts: BTreeMap<&str, (usize, usize, usize)> = BTreeMap::new();
    let mut used = vec![false; ALLOWED.len()];
    let mut mismatches: Vec<String> = Vec::new();
    let mut allowed_seen: Vec<String> = Vec::new();
    for ((input, theirs), (ours, bytes)) in inputs.iter().zip(&kubectl).zip(&results) {
        let c = counts.entry(input.part).or_default();
        c.0 += 1;
        c.1 += theirs.docs.len();
        c.2 += usize::from(theirs.error.is_some());
        let Some((kind, what)) = compare(ours, theirs) else {
            continue;
        };
        let line = format!("{} [{kind:?}]: {what}", input.name);
        match allowed(&input.name, kind) {
            Some(i) => {
                used[i] = true;
                allowed_seen.push(line);
            }
            None if input.part == "generated" => {
                let shown: String = String::from_utf8_lossy(bytes).chars().take(600).collect();
                mismatches.push(format!("{line}\n    input: {shown:?}"));
            }
            None => mismatches.push(line),
        }
    }
    for (i, &(name, kind, _)) in ALLOWED.iter().enumerate() {
        let part = if name.starts_with("corpus/") {
            "corpus"
        } else if name.starts_with("gen/") {
            "generated"
        } else {
            "fixtures"
        };
        if !used[i] && counts.contains_key(part) {
            mismatches.push(format!(
                "{name} [{kind:?}]: listed in ALLOWED but no longer differs; remove the entry"
            ));
        }
    }
    for (part, (streams, docs, refused)) in &counts {
        println!(
            "kubectl_yaml: {part}: {streams} streams, {docs} documents kubectl decodes, {refused} streams it refuses"
        );
    }
    let edge = inputs
        .iter()
        .filter(|i| i.name.starts_with("gen/edge/"))
        .count();
    println!(
        "kubectl_yaml: generated: {edge} edge cases, {} mutants of {} fixtures",
        inputs.len() - first_generated - edge,
        decoded.len()
    );
    for a in &allowed_seen {
        println!("kubectl_yaml: allowed: {a}");
    }
    println!(
        "kubectl_yaml: probe {} in {:.1} s, whole test {:.1} s",
        if built { "built" } else { "cached" },
        probe_ready.as_secs_f64(),
        started.elapsed().as_secs_f64()
    );
    assert!(
        mismatches.is_empty(),
        "{} mismatches between kubectl and golint-k8s:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
}

#[test]
fn float_keys_print_as_go_prints_float32() {
    // Go: strconv.FormatFloat(f, 'g', -1, 32).
    for (f, want) in [
        (1.5, "1.5"),
        (1e7, "1e+07"),
        (123456.0, "123456"),
        (1234567.0, "1.234567e+06"),
        (0.0001, "0.0001"),
        (0.00001, "1e-05"),
        (0.1, "0.1"),
        (-2.5, "-2.5"),
        (0.0, "0"),
        (1e300, ".inf"),
        (std::f64::consts::PI, "3.1415927"),
        (16777217.0, "1.6777216e+07"),
        (1.1, "1.1"),
    ] {
        assert_eq!(go_float32_g(f), want, "{f}");
    }
}

#[test]
fn the_comparison_sees_each_kind_of_difference() {
    let kubectl = |docs: &[&str], error: Option<&str>| Kubectl {
        docs: docs
            .iter()
            .map(|d| serde_json::from_str(d).unwrap())
            .collect(),
        error: error.map(str::to_string),
    };
    let kind = |text: &str, theirs: Kubectl| {
        compare(&golint("t", text.as_bytes()), &theirs).map(|(k, _)| k)
    };
    // go-yaml v2's reading: YAML 1.1 scalars, 1.0 printed as 1, a merge key overriding the
    // explicit key before it, a repeated key keeping the last value, `y` a boolean key, empty
    // documents skipped.
    let text = "a: 0755\nb: on\nc: 1.0\nd: &d {x: 1}\nm:\n  x: 2\n  <<: *d\n  z: 3\n  z: 4\n  y: 5\n---\n---\n~\n";
    let theirs = r#"{"a":493,"b":true,"c":1,"d":{"x":1},"m":{"x":1,"z":4,"true":5}}"#;
    assert_eq!(kind(text, kubectl(&[theirs], None)), None);
    assert_eq!(
        kind("a: 0755\n", kubectl(&[r#"{"a":"0755"}"#], None)),
        Some(Kind::Value)
    );
    assert_eq!(
        kind("a: [1, 2]\n", kubectl(&[r#"{"a":[1]}"#], None)),
        Some(Kind::Value)
    );
    assert_eq!(
        kind("a: 1\n---\nb: 2\n", kubectl(&[r#"{"a":1}"#], None)),
        Some(Kind::DocumentCount)
    );
    assert_eq!(
        kind("a: [\n", kubectl(&[], None)),
        Some(Kind::GolintRejects)
    );
    assert_eq!(
        kind("a: 1\n", kubectl(&[], Some("refused"))),
        Some(Kind::KubectlRejects)
    );
    assert_eq!(
        kind("a: .inf\n", kubectl(&[], Some("refused"))),
        Some(Kind::Conversion)
    );
    assert_eq!(kind("a: [\n", kubectl(&[], Some("refused"))), None);
    // A tree that converts as kubectl decodes it, but that the lookups read otherwise.
    let ours = Golint {
        gk000: None,
        docs: vec![Ok(serde_json::json!({"a": 2}))],
        lookups: vec![Ok(serde_json::json!({"a": 1}))],
    };
    assert_eq!(
        compare(&ours, &kubectl(&[r#"{"a":2}"#], None)).map(|(k, _)| k),
        Some(Kind::Lookup)
    );
}

/// What rules read through the lookups, against what kubectl decoded (the JSON below is the
/// kubectl probe's output for each text): a repeated key keeps its last value, a merge key
/// overrides the keys before it and not those after it, a list of merged mappings lets the
/// earlier ones win, and merges inside merged mappings apply where they stand.
#[test]
fn lookups_read_the_value_kubectl_decodes_from_repeats_and_merges() {
    let cases = [
        ("a: 1\nb: x\na: 2\n", r#"{"a":2,"b":"x"}"#),
        (
            "m:\n  memory: 2Gi\n  <<: {memory: 256Mi}\n",
            r#"{"m":{"memory":"256Mi"}}"#,
        ),
        (
            "m:\n  <<: {memory: 256Mi}\n  memory: 2Gi\n",
            r#"{"m":{"memory":"2Gi"}}"#,
        ),
        (
            "a: &a {x: a, p: a}\nb: &b {x: b, q: b}\nm:\n  x: 0\n  p: 0\n  q: 0\n  r: 0\n  <<: [*a, *b]\n  r: 9\n",
            r#"{"a":{"x":"a","p":"a"},"b":{"x":"b","q":"b"},"m":{"x":"a","p":"a","q":"b","r":9}}"#,
        ),
        (
            "a: &a {x: a, <<: {x: inner, w: inner}}\nm:\n  w: 0\n  <<: *a\n",
            r#"{"a":{"x":"inner","w":"inner"},"m":{"x":"inner","w":"inner"}}"#,
        ),
        (
            "b: &b {a: 1, b: 1}\nm:\n  a: 0\n  <<: *b\n  <<: {b: 2}\n  a: 3\n  a: 4\n",
            r#"{"b":{"a":1,"b":1},"m":{"a":4,"b":2}}"#,
        ),
        (
            "m:\n  a: 0\n  !!merge <<: {a: 1}\nl:\n  a: 0\n  !!str <<: {a: 1}\n",
            r#"{"m":{"a":1},"l":{"<<":{"a":1},"a":0}}"#,
        ),
    ];
    for (text, theirs) in cases {
        let ours = golint("t", text.as_bytes());
        assert!(ours.gk000.is_none(), "{text}");
        let theirs: Value = serde_json::from_str(theirs).unwrap();
        assert_eq!(ours.docs.len(), 1, "{text}");
        let read = ours.lookups[0]
            .as_ref()
            .unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(
            difference(read, &theirs, &mut String::new()),
            None,
            "{text}"
        );
    }
}
