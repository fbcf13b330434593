//! Keeps the layers of docs/design.md ("Layers"): each top-level module may name, through
//! `crate::`, only the modules below it, so the pipeline reads bottom to top and a later split
//! into crates follows these lines. Comments, doc comments and string literals are not read; test
//! modules are, as they link into the same library.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The top-level modules, lowest first: each may import only the modules listed before it.
const LAYERS: &[&str] = &[
    // Syntax: bytes and text, the YAML span tree, checked sources.
    "text",
    "yaml",
    "source",
    // What Go and the programs around it mean, without a manifest or I/O.
    "go",
    // The files around a manifest, and the Kubernetes model.
    "walk",
    "k8s",
    // Findings and the rules' identities, and what names them without running them.
    "diagnostic",
    "suppress",
    "fingerprint",
    // Settings.
    "config",
    // What the rules build on: the edits they attach, images, the Go view.
    "edit",
    "image",
    "runtime",
    // One run's knowledge of the project around its files, passed to the linter.
    "project",
    // The linter.
    "rules",
    "lint",
    "stream",
    "fix",
    "helm",
    "kustomize_build",
    // Reports and front ends.
    "baseline",
    "error",
    "output",
    // The pipeline every command runs (find, read around, index, lint, only-new).
    "run",
    "cluster",
    "lsp",
    "cli",
];

/// Imports that run up the layers on purpose: (importer, imported, why). At most two.
const UPWARD: &[(&str, &str, &str)] = &[];

/// One `crate::` reference: the file, its line, the module it names and the text.
#[derive(Debug)]
struct Import {
    file: String,
    line: usize,
    from: String,
    to: String,
    text: String,
}

/// The source with comments and string and char literals blanked (line breaks kept).
fn code_only(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    let blank = |out: &mut Vec<u8>, c: u8| out.push(if c == b'\n' { b'\n' } else { b' ' });
    while i < b.len() {
        let rest = &b[i..];
        if rest.starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                out.push(b' ');
                i += 1;
            }
        } else if rest.starts_with(b"/*") {
            let mut depth = 0;
            while i < b.len() {
                if b[i..].starts_with(b"/*") {
                    depth += 1;
                    out.extend_from_slice(b"  ");
                    i += 2;
                } else if b[i..].starts_with(b"*/") {
                    depth -= 1;
                    out.extend_from_slice(b"  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    blank(&mut out, b[i]);
                    i += 1;
                }
            }
        } else if (rest.starts_with(b"r#") || rest.starts_with(b"r\""))
            && !(i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_'))
        {
            let hashes = rest[1..].iter().take_while(|&&c| c == b'#').count();
            if rest.get(1 + hashes) != Some(&b'"') {
                out.push(b[i]);
                i += 1;
                continue;
            }
            let mut close = vec![b'"'];
            close.extend(std::iter::repeat_n(b'#', hashes));
            let body = i + 2 + hashes;
            let end = b[body..]
                .windows(close.len())
                .position(|w| w == close.as_slice())
                .map_or(b.len(), |p| body + p + close.len());
            for &c in &b[i..end] {
                blank(&mut out, c);
            }
            i = end;
        } else if b[i] == b'"' {
            out.push(b' ');
            i += 1;
            while i < b.len() && b[i] != b'"' {
                let n = if b[i] == b'\\' { 2 } else { 1 };
                for &c in &b[i..(i + n).min(b.len())] {
                    blank(&mut out, c);
                }
                i += n;
            }
            out.push(b' ');
            i += 1;
        } else if b[i] == b'\'' {
            // A char literal ('x', '\n', '"'), not a lifetime ('a).
            let len = if rest.get(1) == Some(&b'\\') {
                rest[2..].iter().position(|&c| c == b'\'').map(|p| p + 3)
            } else {
                let ch = String::from_utf8_lossy(&rest[1..rest.len().min(5)])
                    .chars()
                    .next();
                ch.map(char::len_utf8)
                    .filter(|&n| rest.get(1 + n) == Some(&b'\''))
                    .map(|n| n + 2)
            };
            let n = len.unwrap_or(1);
            out.extend(std::iter::repeat_n(b' ', n));
            i += n;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The top-level modules a piece of code names through `crate::`, each with its line and the
/// text that names it. A group (`crate::{a, b::c}`) may span lines: each item counts on its own.
fn crate_refs(code: &str) -> Vec<(usize, String, String)> {
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let line_of = |at: usize| code[..at].matches('\n').count() + 1;
    let mut refs = Vec::new();
    let mut from = 0;
    while let Some(p) = code[from..].find("crate::") {
        let at = from + p;
        from = at + "crate::".len();
        let before = code[..at].chars().next_back();
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
            continue;
        }
        let rest = &code[from..];
        if let Some(group) = rest.strip_prefix('{') {
            // The first name of each item at depth one.
            let mut depth = 0;
            let mut item_start = true;
            for (k, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => item_start = true,
                    c if item_start && !c.is_whitespace() => {
                        item_start = false;
                        let m = ident(&group[k..]);
                        let line = line_of(from + 1 + k);
                        refs.push((line, m.clone(), format!("crate::{{{m}…}}")));
                    }
                    _ => {}
                }
            }
        } else {
            let m = ident(rest);
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
                .unwrap_or(rest.len());
            let group = if rest[end..].starts_with('{') {
                "{…}"
            } else {
                ""
            };
            refs.push((line_of(at), m, format!("crate::{}{group}", &rest[..end])));
        }
    }
    refs
}

fn collect(dir: &Path, root: &Path, out: &mut Vec<Import>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            collect(&path, root, out);
            continue;
        }
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let rel = path.strip_prefix(root).unwrap();
        let first = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy();
        let from = first.strip_suffix(".rs").unwrap_or(&first).to_string();
        if ["lib", "main", "layers"].contains(&from.as_str()) {
            continue;
        }
        let code = code_only(&std::fs::read_to_string(&path).unwrap());
        for (line, to, text) in crate_refs(&code) {
            if to != from {
                out.push(Import {
                    file: format!("src/{}", rel.display()),
                    line,
                    from: from.clone(),
                    to,
                    text,
                });
            }
        }
    }
}

fn imports() -> Vec<Import> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut out = Vec::new();
    collect(&src, &src, &mut out);
    out
}

/// What is wrong with a set of imports against [`LAYERS`] and [`UPWARD`]: one line each.
fn violations(imports: &[Import]) -> Vec<String> {
    let rank = |m: &str| LAYERS.iter().position(|l| *l == m);
    let mut bad = Vec::new();
    let mut graph: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for i in imports {
        let (Some(from), Some(to)) = (rank(&i.from), rank(&i.to)) else {
            let m = if rank(&i.from).is_none() {
                &i.from
            } else {
                &i.to
            };
            bad.push(format!(
                "{}:{}: module `{m}` has no layer: add it to LAYERS in src/layers.rs and to docs/design.md",
                i.file, i.line
            ));
            continue;
        };
        graph.entry(&i.from).or_default().insert(&i.to);
        let allowed = UPWARD.iter().any(|(f, t, _)| *f == i.from && *t == i.to);
        if to > from && !allowed {
            bad.push(format!(
                "{}:{}: `{}` imports `{}`, but `{}` is above `{}` in the layers (docs/design.md, Layers)",
                i.file, i.line, i.from, i.text, i.to, i.from
            ));
        }
    }
    // The listed exceptions must not close a circle either.
    let mut state: BTreeMap<&str, u8> = BTreeMap::new();
    fn visit<'a>(
        m: &'a str,
        graph: &BTreeMap<&'a str, BTreeSet<&'a str>>,
        state: &mut BTreeMap<&'a str, u8>,
        path: &mut Vec<&'a str>,
        bad: &mut Vec<String>,
    ) {
        match state.get(m) {
            Some(2) => return,
            Some(1) => {
                let start = path.iter().position(|p| *p == m).unwrap_or(0);
                let mut circle = path[start..].to_vec();
                circle.push(m);
                bad.push(format!("import circle: {}", circle.join(" -> ")));
                return;
            }
            _ => {}
        }
        state.insert(m, 1);
        path.push(m);
        for next in graph.get(m).into_iter().flatten() {
            visit(next, graph, state, path, bad);
        }
        path.pop();
        state.insert(m, 2);
    }
    for m in graph.keys() {
        visit(m, &graph, &mut state, &mut Vec::new(), &mut bad);
    }
    bad
}

#[test]
fn modules_import_only_the_layers_below_them() {
    assert!(
        UPWARD.len() <= 2,
        "at most two imports may run up the layers"
    );
    let imports = imports();
    // The reader must see the imports it judges: the linter names the rules.
    assert!(imports.iter().any(|i| i.from == "lint" && i.to == "rules"));
    let bad = violations(&imports);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn an_import_up_the_layers_is_named_with_its_file() {
    let code = code_only(
        "use crate::yaml::Yaml; // crate::lint\n/* crate::cli */ let s = \"crate::lsp\";\n\
         let c = '\"'; fn f<'a>() {}\nuse crate::{text, lint::Stats};\n\
         use crate::{\n    yaml,\n    cli::{self, Run},\n};\n",
    );
    let imports: Vec<Import> = crate_refs(&code)
        .into_iter()
        .map(|(line, to, text)| Import {
            file: "src/fingerprint.rs".into(),
            line,
            from: "fingerprint".into(),
            to,
            text,
        })
        .collect();
    let named: Vec<&str> = imports.iter().map(|i| i.to.as_str()).collect();
    assert_eq!(named, ["yaml", "text", "lint", "yaml", "cli"]);
    assert_eq!(
        violations(&imports),
        [
            "src/fingerprint.rs:4: `fingerprint` imports `crate::{lint…}`, but `lint` is above `fingerprint` in the layers (docs/design.md, Layers)",
            "src/fingerprint.rs:7: `fingerprint` imports `crate::{cli…}`, but `cli` is above `fingerprint` in the layers (docs/design.md, Layers)",
        ]
    );
}

#[test]
fn a_circle_is_named() {
    let import = |from: &str, to: &str| Import {
        file: format!("src/{from}.rs"),
        line: 1,
        from: from.into(),
        to: to.into(),
        text: format!("crate::{to}"),
    };
    let bad = violations(&[import("text", "yaml"), import("yaml", "text")]);
    assert!(
        bad.iter()
            .any(|b| b == "import circle: text -> yaml -> text"),
        "{bad:?}"
    );
}
