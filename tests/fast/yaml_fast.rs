//! The fast YAML path against the reference parser: wherever the fast path accepts a text, its
//! tree (every node, span, comment, document and duplicate key) must equal the reference tree.
//! Run on hand-picked edge cases, every fixture, the shared corpus and generated documents.

use std::path::{Path, PathBuf};

use crate::common::*;
use golint_k8s::yaml;

/// Compare both parsers on `text`; true when the fast path accepted it.
fn same_tree(name: &str, text: &str) -> bool {
    same_tree_with(name, text, yaml::parse_fast)
}

/// The same for a large text parsed in pieces on several threads.
fn same_tree_in_pieces(name: &str, text: &str) -> bool {
    same_tree_with(name, text, yaml::parse_fast_pieces)
}

fn same_tree_with(name: &str, text: &str, fast: fn(&str, usize) -> Option<yaml::Yaml>) -> bool {
    let Some(mut fast) = fast(text, 0) else {
        return false;
    };
    // The fast path also counts indentation steps as it reads (the reference parser leaves that
    // to a walk of the tree): the counts must be the walk's.
    let counted = fast.indent_steps.take();
    assert_eq!(
        counted,
        Some(fast.walk_indent_steps(text, &fast.nodes)),
        "{name}: indentation steps counted while parsing differ from the tree's\n--- text ---\n{text}"
    );
    let reference = yaml::parse_reference(text, 0);
    let (f, r) = (format!("{fast:#?}"), format!("{reference:#?}"));
    if f != r {
        let line = f
            .lines()
            .zip(r.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(0);
        let context = |s: &str| {
            s.lines()
                .skip(line.saturating_sub(12))
                .take(16)
                .collect::<Vec<_>>()
                .join("\n")
        };
        panic!(
            "{name}: the fast path's tree differs from the reference parser's\n--- fast ---\n{}\n--- reference ---\n{}\n--- text ---\n{text}",
            context(&f),
            context(&r)
        );
    }
    true
}

/// The parse a lint uses: the fast path by documents where it declines the whole text (the
/// declined documents read by the reference parser alone). True when it did not hand the whole
/// text to the reference parser.
fn same_tree_mixed(name: &str, text: &str) -> bool {
    let Some(mut mixed) = yaml::parse_mixed(text, 0) else {
        return false;
    };
    // Indentation steps are counted while parsing only where every document took the fast path.
    if let Some(counted) = mixed.indent_steps.take() {
        assert_eq!(
            counted,
            mixed.walk_indent_steps(text, &mixed.nodes),
            "{name}"
        );
    }
    let reference = yaml::parse_reference(text, 0);
    assert_eq!(
        format!("{mixed:#?}"),
        format!("{reference:#?}"),
        "{name}: the tree read by documents differs from the reference parser's"
    );
    true
}

#[test]
fn documents_the_fast_path_declines_are_read_alone_and_the_tree_is_the_reference_tree() {
    let deployment = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web # the name\nspec:\n  replicas: 1\n";
    // Each of these the fast path declines; the reference parser reads it.
    let declined = [
        "{\"kind\": \"ConfigMap\", \"data\": {\"a\": \"b\"}}\n",
        "kind: CustomResourceDefinition\ndescription: \"a quoted scalar\n  over two lines\"\n",
        "kind: ConfigMap\ndata: &d\n  a: b\ncopy: *d\n",
        "kind: Pod\nspec: {containers: [\n  {name: a}]}\n",
    ];
    for (i, odd) in declined.iter().enumerate() {
        for stream in [
            format!("{deployment}---\n{odd}---\n{deployment}"),
            format!("# header\n\n---\n{odd}---\n{deployment}\n# trailing comment\n"),
            format!("---\n{deployment}--- # a comment on the marker\n{odd}...\n---\n{deployment}"),
        ] {
            let name = format!("declined document {i} in {stream:?}");
            assert!(
                yaml::parse_fast(&stream, 0).is_none(),
                "{name}: the fast path read it whole"
            );
            assert!(
                same_tree_mixed(&name, &stream),
                "{name}: handed to the reference parser whole"
            );
        }
    }
    // An error in any document hands the whole text to the reference parser, whose messages and
    // whose reading of what follows an error are those of one pass.
    for broken in [
        "kind: Pod\nspec: [unclosed\n",
        "kind: Pod\n\tspec: {}\n",
        "a: b\n%YAML 1.1\n",
    ] {
        let stream = format!("{deployment}---\n{broken}---\n{deployment}");
        assert!(yaml::parse_mixed(&stream, 0).is_none(), "{stream:?}");
    }
    // A large stream: its pieces are read the same way, each on its own thread.
    let mut big = String::new();
    for n in 0.. {
        if big.len() > 2 * 1024 * 1024 {
            break;
        }
        big.push_str("---\n");
        big.push_str(deployment);
        if n % 50 == 0 {
            big.push_str("---\n");
            big.push_str(declined[1]);
        }
    }
    big.push_str("---\n");
    big.push_str(declined[0]);
    assert!(same_tree_mixed(
        "a large stream with declined documents",
        &big
    ));
}

#[test]
#[cfg_attr(
    not(feature = "heavy-tests"),
    ignore = "heavy tier: --features heavy-tests"
)]
fn a_large_stream_in_pieces_matches_the_reference_parser() {
    // Every fixture the fast path reads, joined into one stream of several megabytes, the way
    // `helm template` joins templates: pieces are cut at `---` lines.
    let mut files = Vec::new();
    yaml_files(&root().join("fixtures"), &mut files);
    let mut stream = String::new();
    while stream.len() < 3 * 1024 * 1024 {
        for f in &files {
            let text = std::fs::read_to_string(f).unwrap();
            let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
            if yaml::parse_fast(text, 0).is_some() && !text.contains("\r\n") {
                stream.push_str("---\n");
                stream.push_str(text);
                if !text.ends_with('\n') {
                    stream.push('\n');
                }
            }
        }
    }
    assert!(same_tree_in_pieces("joined fixtures", &stream));
    // The same with a byte-order mark's offset: spans shift by `base`.
    let mut y = yaml::parse_fast_pieces(&stream, 3).unwrap();
    y.indent_steps = None;
    let r = yaml::parse_reference(&stream, 3);
    assert_eq!(format!("{y:?}"), format!("{r:?}"));
}

fn yaml_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = rd.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            yaml_files(&p, out);
        } else if matches!(p.extension().and_then(|e| e.to_str()), Some("yaml" | "yml")) {
            out.push(p);
        }
    }
}

/// Every file under `dir`: (files compared, files the fast path accepted).
fn compare_dir(dir: &Path) -> (usize, usize) {
    let mut files = Vec::new();
    yaml_files(dir, &mut files);
    let mut accepted = 0;
    for f in &files {
        let Ok(text) = std::fs::read_to_string(f) else {
            continue;
        };
        let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
        if same_tree(&f.display().to_string(), text) {
            accepted += 1;
        } else {
            same_tree_mixed(&f.display().to_string(), text);
        }
    }
    (files.len(), accepted)
}

#[test]
fn edge_cases_match_or_are_declined() {
    let accepted = [
        "a: 1\n",
        "a: 1",
        "a:\nb: 1\nc:   \n# x\n\n",
        "- a\n-\n- - b\n  - c\n- d: \n  e: \"x\\ty\"\n",
        "---\na: 1\n---\n# only comment\n---\nb: 2",
        "# head\n---\n# c1\na: 1 # t\n# c2\n---\n",
        "# head\n\n# more\na: 1\r\nb: [x, y]\r\n",
        "a: 1\nb:\n  - x   # c   \n  - \"y\"\nc:\n- k: v\n  m: [1, {p: q}]\n# end\n---\nz: 1\n",
        "a : 1\n'b c': 'it''s'\n\"d\": \"\\u00e9\\x41\\n\"\n",
        "a: http://x:80/y\nb: c:d\nc: a#b\nd: x # y: z\n",
        "env: [{name: GOMAXPROCS, value: \"2\"}, {name: A, value: b}]\nx: []\ny: {}\nz: [a, ]\n",
        "spec:\n  containers:\n  - name: app\n    resources:\n      limits: {cpu: 1}\n\n  - name: b\n",
        "a:\n  b:\n    c: 1\n  d: 2\ne: 3\n",
        "a: 1\na: 2\n",
        "-\n-\n",
        "---\n",
        "--- # c\na: 1\n",
        "a: -1\nb: -x\nc: 'x' # y\n",
        "- a\n- b\n---\n- c\n",
        "  a: 1\n  b: 2\n",
        "a: é ü 漢\n# ∑\n",
        "key: \"\"\nk2: ''\n",
        "x:\n  a: |\n    p\n    q\n  b: 1\n  c: >\n    r\n\n    s\n\n  # co\n  d: |-\n    t\n",
        "a: | # c\n  x\n\n\n",
        "- |\n  x\n- y\n",
        "a: |\n  x\n  # not\n # c\nb: 1\n",
        "a: >-\n  p\n  q\n\n\n  r\nb: |\r\n  x\r\n\r\n   y\r\nc: 1\r\n",
        // Plain scalars over several lines, as generated CRDs' long descriptions come.
        "a: b\n  c\n",
        "- a\n b\n",
        "a:\n  b: one two\n    three (x) [y] {z}, w\n       four\n  c: 1\n",
        "a: one\n\n  two\n   \n\n  three   \n  four\nb: 2\n",
        "d:\n  description: Operation contains information\n    about a run\n  items:\n  - x\n    y\n  - z\n",
        "a: one\n  two\n\n# after\nb: 1\n",
        "- k: v\n  w: one\n    two\n- u\n",
        "a: x-y\n  z.w:v\n",
        "a: b\n  c\n d\n",
        "a: b\n  - c\n",
        "a: to perform a `kubectl apply\n  --dry-run` without it\n",
        "a: 'it''s\n  over   \n\n   two: lines # not a comment'\nb: 'x\n\n\n  - y'\n",
        "- 'a\n  b'\n- c\n",
        "- a\n  - b\n",
    ];
    for t in accepted {
        assert!(same_tree(t, t), "the fast path declined {t:?}");
    }
    // Outside the subset, or not valid YAML: the reference parser must decide.
    let declined = [
        "a: &x 1\nb: *x\n",
        "a: !!str 1\n",
        "%YAML 1.2\n---\na: 1\n",
        "a: 1\n...\n",
        "a: \"b\n  c\"\n",
        "a: 'b\nc'\n",
        "'a\n  b': c\n",
        "a: 'b\n  c': d\n",
        // Lines that would be read otherwise than as more of the scalar.
        "a: b # c\n  d\n",
        "a: one\n  two # c\nb: 1\n",
        "a: b\n  c: d\n",
        "a: b\n  # c\n  d\n",
        "a: b\n  c #d\n  e\n",
        "a: b\r\n  c\r\n",
        "a: [1,\n  2]\n",
        "? a\n: b\n",
        "a:\tb\n",
        "a: b: c\n",
        "a: - b\n",
        "a: 1\n b: 2\n",
        "a: \"x\" y\n",
        "a: \"\\q\"\n",
        "a: [b: c]\n",
        "a: {b}\n",
        "a: [,]\n",
        "a: 1\r",
        "a: \u{85}\n",
        "x\ny\n",
        "---\nfoo\n",
        "{a: 1}\n",
        "[1, 2]\n",
        "a: |+\n  x\n",
        "a: |2\n  x\n",
        "a: |\n\n  x\n",
        "a: |\n  x",
        "a: >\n  x\n    y\n",
        "a: |\n  x\n      \n",
        "a: |\nb: 1\n",
        "a: 1\n\u{feff}b: 2\n",
        "a: @x\n",
        "a: `x\n",
        "a: %x\n",
        "a: ,x\n",
        "a: [a, -]\n",
        "a: \"x\":1\n",
        // Found by fuzzing: a flow collection cut off by the end of the text.
        "-:\n8Y:    [[",
        "a: [",
        "a: {b: ",
    ];
    for t in declined {
        assert!(
            yaml::parse_fast(t, 0).is_none(),
            "the fast path accepted {t:?}"
        );
    }
}

#[test]
fn fixtures_match_the_reference_parser() {
    let (files, accepted) = compare_dir(&root().join("fixtures"));
    println!("fixtures: {accepted} of {files} files took the fast path");
    assert!(files > 50 && accepted * 2 > files, "{accepted} of {files}");
}

#[test]
#[cfg_attr(
    not(feature = "heavy-tests"),
    ignore = "heavy tier: --features heavy-tests"
)]
fn shared_corpus_matches_the_reference_parser() {
    let Some(corpus) = corpus() else {
        println!("shared corpus comparison not run: ../shared/corpus is not beside this checkout");
        return;
    };
    let (files, accepted) = compare_dir(&corpus);
    println!("shared corpus: {accepted} of {files} files took the fast path");
    assert!(files > 800 && accepted * 2 > files, "{accepted} of {files}");
}

#[test]
#[cfg_attr(
    not(feature = "heavy-tests"),
    ignore = "heavy tier: --features heavy-tests"
)]
fn benchmark_corpus_matches_the_reference_parser() {
    // bench/gen.py is the generator of the benchmark corpus: compare a small deterministic sample.
    let dir = std::env::temp_dir().join(format!("golint-k8s-yaml-fast-{}", std::process::id()));
    let status = std::process::Command::new("python3")
        .arg(root().join("bench/gen.py"))
        .args(["--docs", "2500", "--out"])
        .arg(&dir)
        .stdout(std::process::Stdio::null())
        .status();
    let Ok(status) = status else {
        println!("benchmark corpus comparison not run: python3 is not installed");
        return;
    };
    assert!(status.success());
    let (files, accepted) = compare_dir(&dir);
    let big = std::fs::read_to_string(dir.join("big.yaml")).unwrap();
    let big_fast = same_tree("big.yaml", &big);
    assert!(
        big.len() > 2 * 512 * 1024,
        "big.yaml must be cut into pieces"
    );
    assert!(same_tree_in_pieces("big.yaml", &big));
    std::fs::remove_dir_all(&dir).ok();
    println!("benchmark corpus: {accepted} of {files} files took the fast path");
    assert!(
        files > 100 && accepted == files && big_fast,
        "{accepted} of {files}"
    );
}

/// A small deterministic generator (xorshift): the same documents on every run.
struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn pick<'s>(&mut self, from: &[&'s str]) -> &'s str {
        from[(self.next() % from.len() as u64) as usize]
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }

    fn scalar(&mut self) -> String {
        let usual = [
            "x",
            "512Mi",
            "1",
            "0.5",
            "off",
            "true",
            "~",
            "null",
            "a b",
            "http://h:80/p",
            "a#b",
            "-1",
            "é",
            "''",
            "\"\"",
            "'it''s'",
            "\"a\\tb\\u00e9\"",
            "\"x: y\"",
            "'# no'",
            "[]",
            "{}",
            "[a, b]",
            "{a: 1, b: [x]}",
            "[{name: A, value: \"1\"}]",
            "x # c",
            "{\"a\":1}",
        ];
        let odd = [
            "-",
            "a: b",
            "- a",
            "&a x",
            "*a",
            "!!str 1",
            "\"unterminated",
            "[a,",
            "|",
            ">-",
            "@x",
            "[a: b]",
            "\"\\q\"",
            "{a}",
            "[-]",
        ];
        if self.chance(10) {
            self.pick(&odd).to_string()
        } else {
            self.pick(&usual).to_string()
        }
    }

    /// A block node at `indent` written after `key:` (so on its own lines, or inline).
    fn value(&mut self, indent: usize, depth: usize, out: &mut String) {
        let nl = if self.chance(10) { "\r\n" } else { "\n" };
        let step = if self.chance(50) { 2 } else { 4 };
        match if depth > 3 { 0 } else { self.next() % 7 } {
            0 | 1 => {
                out.push(' ');
                out.push_str(&self.scalar());
                if self.chance(15) {
                    out.push_str(self.pick(&["  # note", "   ", " #x"]));
                }
                out.push_str(nl);
            }
            2 => {
                out.push_str(nl);
                self.mapping(indent + step, depth + 1, out);
            }
            3 => {
                out.push_str(nl);
                // Indented or indentless.
                let i = if self.chance(50) {
                    indent
                } else {
                    indent + step
                };
                self.sequence(i, depth + 1, out);
            }
            4 => {
                out.push_str(self.pick(&[" |", " |-", " >", " >-", " | # c"]));
                out.push_str(nl);
                let pad = " ".repeat(indent + step);
                for _ in 0..1 + self.next() % 3 {
                    if self.chance(20) {
                        out.push_str(nl);
                    }
                    out.push_str(&pad);
                    out.push_str(self.pick(&["line", "# not a comment", "a: b", "  more", "x  "]));
                    out.push_str(nl);
                }
            }
            5 => {
                // A scalar continued on later lines, as CRDs' long descriptions come: plain
                // or single-quoted, the later lines indented more than the key or not. (Line
                // feeds only: with a carriage return the fast path leaves it to the reference.)
                let nl = "\n";
                let quoted = self.chance(40);
                out.push_str(if quoted {
                    " 'first words"
                } else {
                    " first words"
                });
                for _ in 0..1 + self.next() % 3 {
                    if self.chance(15) {
                        out.push_str(self.pick(&["  ", ""]));
                        out.push_str(nl);
                    }
                    out.push_str(nl);
                    let deeper = 1 + self.next() as usize % 4;
                    let pad = if self.chance(3) {
                        indent
                    } else {
                        indent + deeper
                    };
                    out.push_str(&" ".repeat(pad));
                    // Mostly words; sometimes a line the reference parser must decide.
                    out.push_str(if self.chance(8) {
                        self.pick(&["a: b", "x # c", "# c", ": x"])
                    } else {
                        self.pick(&[
                            "more words",
                            "--dry-run` flag",
                            "- item",
                            "(default: false)",
                            "it''s",
                            "trailing  ",
                            "[a] {b}, c",
                        ])
                    });
                }
                if quoted {
                    out.push('\'');
                }
                out.push_str(nl);
            }
            _ => out.push_str(nl),
        }
    }

    fn mapping(&mut self, indent: usize, depth: usize, out: &mut String) {
        for _ in 0..1 + self.next() % 4 {
            if self.chance(10) {
                out.push_str(&" ".repeat(self.next() as usize % 6));
                out.push_str("# comment\n");
            }
            out.push_str(&" ".repeat(indent));
            out.push_str(self.pick(&["name", "cpu", "\"quoted\"", "'single'", "a b", "k", "env"]));
            out.push(':');
            self.value(indent, depth, out);
        }
    }

    fn sequence(&mut self, indent: usize, depth: usize, out: &mut String) {
        for _ in 0..1 + self.next() % 3 {
            out.push_str(&" ".repeat(indent));
            out.push('-');
            match self.next() % 3 {
                0 => {
                    // A compact mapping: keys continue at the column after "- ".
                    out.push(' ');
                    let mut item = String::new();
                    self.mapping(indent + 2, depth + 1, &mut item);
                    out.push_str(item.trim_start_matches(' '));
                }
                1 => self.value(indent, depth, out),
                _ => out.push('\n'),
            }
        }
    }
}

#[test]
#[cfg_attr(
    not(feature = "heavy-tests"),
    ignore = "heavy tier: --features heavy-tests"
)]
fn generated_documents_match_the_reference_parser() {
    let mut g = Gen(0x9e37_79b9_7f4a_7c15);
    let (mut total, mut accepted) = (0, 0);
    for _ in 0..20_000 {
        let mut text = String::new();
        for d in 0..1 + g.next() % 3 {
            if d > 0 || g.chance(30) {
                text.push_str(g.pick(&["---\n", "--- # doc\n", "---\r\n"]));
            }
            g.mapping(0, 0, &mut text);
        }
        // Damage some: a stray character anywhere must never be read differently.
        if g.chance(20) && !text.is_empty() {
            let mut at = g.next() as usize % text.len();
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            text.insert_str(
                at,
                g.pick(&[
                    " ", "\n", ":", "-", "#", "\"", "'", "[", "]", "  ", "\t", "|",
                ]),
            );
        }
        total += 1;
        if same_tree("generated", &text) {
            accepted += 1;
        }
    }
    println!("generated: {accepted} of {total} documents took the fast path");
    assert!(accepted * 4 > total, "{accepted} of {total}");
}
