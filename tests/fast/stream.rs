//! One large stream reads as its parts do. Above a few thousand findings, objects or suppressions
//! a file takes other paths (objects and positions on several threads, suppressions looked up by
//! document, diagnostics sorted by permutation): a `helm template` of a whole platform must still
//! get exactly the findings its documents get one file at a time, in order, each with its own
//! document's Helm template.

use crate::common;

use std::collections::BTreeMap;

use golint_k8s::config::Config;
use golint_k8s::lint::FileReport;

/// What a finding says, without where: positions and document numbers change when files are
/// joined, and so do messages that quote a line number.
fn said(report: &FileReport) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for f in &report.findings {
        let d = &f.diagnostic;
        if d.message.contains("line ") {
            continue;
        }
        let fix = d.fix.as_ref().map(|x| x.title.as_str()).unwrap_or("-");
        let key = format!(
            "{} {} | {} | {}",
            d.code,
            d.message,
            d.notes.join(" / "),
            fix
        );
        *out.entry(key).or_default() += 1;
    }
    out
}

#[test]
fn a_stream_of_every_fixture_says_what_each_fixture_says() {
    let mut parts = Vec::new();
    for dir in std::fs::read_dir(common::root().join("fixtures")).unwrap() {
        let dir = dir.unwrap().path();
        if !dir.file_name().unwrap().to_string_lossy().starts_with("GK") {
            continue;
        }
        for f in std::fs::read_dir(&dir).unwrap() {
            let path = f.unwrap().path();
            if path.extension().is_none_or(|e| e != "yaml")
                || path.to_string_lossy().contains(".config.")
            {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            // Options and configs of their own, broken YAML, and text that is not one or more
            // plain documents do not survive being joined, and LimitRanges and ConfigMaps apply
            // to every object of their namespace in the file; everything else joins unchanged.
            let config = path.with_file_name(format!(
                "{}.config.yaml",
                path.file_stem().unwrap().to_string_lossy()
            ));
            if text.starts_with("# fixture-args")
                || config.exists()
                || text.contains("\n...")
                || text.starts_with('%')
                || text.contains("\t")
                || text.contains("kind: LimitRange")
                || text.contains("kind: ConfigMap")
            {
                continue;
            }
            let alone = common::lint_text("alone.yaml", &text, &Config::default());
            if alone
                .findings
                .iter()
                .any(|f| f.diagnostic.code.as_str() == "GK000")
            {
                continue;
            }
            parts.push((text, said(&alone)));
        }
    }
    assert!(parts.len() > 150, "only {} fixtures joined", parts.len());

    // Six rounds, so the stream has over a thousand findings and hundreds of suppressions. Each
    // part is marked as `helm template` marks its documents, and where it starts is kept.
    let mut stream = String::new();
    let mut starts = Vec::new();
    let mut want: BTreeMap<String, usize> = BTreeMap::new();
    for _ in 0..6 {
        for (text, s) in &parts {
            starts.push(stream.len());
            stream.push_str("---\n");
            stream.push_str(&format!(
                "# Source: chart/templates/part-{}.yaml\n",
                starts.len() - 1
            ));
            stream.push_str(text);
            if !text.ends_with('\n') {
                stream.push('\n');
            }
            for (k, n) in s {
                *want.entry(k.clone()).or_default() += n;
            }
        }
    }
    let joined = common::lint_text("stream.yaml", &stream, &Config::default());
    assert!(
        joined.findings.len() >= 1024,
        "only {} findings: the large-file paths were not taken",
        joined.findings.len()
    );
    let got = said(&joined);
    let missing: Vec<_> = want
        .iter()
        .filter(|(k, n)| got.get(*k) != Some(n))
        .collect();
    let extra: Vec<_> = got.iter().filter(|(k, _)| !want.contains_key(*k)).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "differ:\nwanted {missing:#?}\ngot extra {extra:#?}"
    );

    // In order of position, then code, as one pass over a small file sorts them.
    let keys: Vec<_> = joined
        .findings
        .iter()
        .map(|f| (f.diagnostic.range.start, f.diagnostic.code))
        .collect();
    assert!(keys.is_sorted(), "the stream's findings are out of order");

    // A finding names its own document's template, never a neighbour's. A part's comment marks
    // the document it opens: every finding there names it (those of the YAML itself, such as
    // duplicate keys, as well as the objects'), except the reports of unused suppressions, which
    // belong to no finding's document. Findings in a part's later documents have none.
    let mut named = 0;
    for f in &joined.findings {
        let d = &f.diagnostic;
        let part = starts.partition_point(|&s| s <= d.range.start) - 1;
        let in_first_document = !stream[starts[part] + 4..d.range.start].contains("\n---");
        let Some(t) = &d.source_template else {
            assert!(
                !in_first_document || ["GK901", "GK902"].contains(&d.code.as_str()),
                "{} at byte {} names no template",
                d.code,
                d.range.start
            );
            continue;
        };
        assert_eq!(
            &**t,
            format!("chart/templates/part-{part}.yaml"),
            "{} at byte {}",
            d.code,
            d.range.start
        );
        named += 1;
    }
    assert!(
        named * 2 > joined.findings.len(),
        "only {named} of {} findings name a template",
        joined.findings.len()
    );
}

/// A large stream is linted a group of documents at a time (`golint_k8s::stream`). What it
/// reports must be what the whole-file path reports, to the byte: lines, columns, document
/// numbers, fingerprints, notes and fix edits, in the same order, with the same counts.
mod grouped {
    use super::*;
    use golint_k8s::lint::{lint_source_with, Selection};
    use golint_k8s::project::Project;
    use golint_k8s::source::{Origin, Source};

    fn source(text: &str) -> Source {
        Source::decode(
            Origin::Stdin("stream.yaml".into()),
            text.as_bytes().to_vec(),
        )
        .unwrap()
    }

    /// Everything a report says, positions and fixes included.
    fn all_of(r: &FileReport) -> String {
        format!("{:#?}\n{:?}\n{:?}", r.findings, r.stats, r.skipped)
    }

    /// Lint `text` whole and in groups of about `group` bytes; both must say the same. Returns
    /// whether the text was read in groups.
    fn same_in_groups(text: &str, group: usize) -> bool {
        let cfg = Config::default();
        let sel = Selection::default();
        let project = Project::default();
        let whole = lint_source_with(source(text), &cfg, &sel, &project, |_, _, _| {});
        let (grouped, in_groups) =
            golint_k8s::stream::lint_in_groups_said(source(text), &cfg, &sel, &project, group);
        let (w, g) = (all_of(&whole), all_of(&grouped));
        if w != g {
            let at = w
                .lines()
                .zip(g.lines())
                .position(|(a, b)| a != b)
                .unwrap_or(0);
            let show = |s: &str| {
                s.lines()
                    .skip(at.saturating_sub(10))
                    .take(25)
                    .collect::<Vec<_>>()
                    .join("\n")
            };
            panic!(
                "grouped ({group} bytes) differs from whole at line {at}:\nwhole:\n{}\ngrouped:\n{}",
                show(&w),
                show(&g)
            );
        }
        in_groups
    }

    /// Every fixture of every rule that parses, LimitRanges and ConfigMaps included (they act on
    /// the other documents of the stream, across groups), each opened as `helm template` does.
    fn fixture_stream() -> String {
        let mut stream = String::new();
        let mut dirs: Vec<_> = std::fs::read_dir(common::root().join("fixtures"))
            .unwrap()
            .map(|d| d.unwrap().path())
            .filter(|d| d.file_name().unwrap().to_string_lossy().starts_with("GK"))
            .collect();
        dirs.sort();
        for dir in dirs {
            let mut files: Vec<_> = std::fs::read_dir(&dir)
                .unwrap()
                .map(|f| f.unwrap().path())
                .filter(|p| {
                    p.extension().is_some_and(|e| e == "yaml")
                        && !p.to_string_lossy().contains(".config.")
                })
                .collect();
            files.sort();
            for path in files {
                let text = std::fs::read_to_string(&path).unwrap();
                // A byte-order mark starts a file, not a document after others.
                let text = text.trim_start_matches('\u{feff}');
                let alone = common::lint_text("alone.yaml", text, &Config::default());
                let broken = alone
                    .findings
                    .iter()
                    .any(|f| f.diagnostic.code.as_str() == "GK000");
                if broken || text.starts_with('%') || text.contains("\n...") {
                    continue;
                }
                let name = path.strip_prefix(common::root()).unwrap_or(&path);
                stream.push_str(&format!("---\n# Source: {}\n", name.display()));
                stream.push_str(text.trim_start_matches("---\n"));
                if !text.ends_with('\n') {
                    stream.push('\n');
                }
            }
        }
        stream
    }

    #[test]
    fn grouped_fixture_stream_says_what_the_whole_file_says() {
        let stream = fixture_stream();
        assert!(stream.contains("kind: LimitRange") && stream.contains("configMapRef"));
        for group in [1, 700, 5_000, 40_000] {
            assert!(
                same_in_groups(&stream, group),
                "not read in groups of {group}"
            );
        }
    }

    #[test]
    fn grouped_benchmark_corpus_says_what_the_whole_file_says() {
        let dir = tempfile::tempdir().unwrap();
        let out = std::process::Command::new("python3")
            .arg(common::root().join("bench/gen.py"))
            .args(["--docs", "1500", "--out"])
            .arg(dir.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = std::fs::read_to_string(dir.path().join("big.yaml")).unwrap();
        for group in [3_000, 64 * 1024] {
            assert!(
                same_in_groups(&text, group),
                "not read in groups of {group}"
            );
        }
    }

    const DEPLOY: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: NAME\n  namespace: shop\nspec:\n  template:\n    spec:\n      containers:\n      - name: app\n        image: ko://example.com/app\n        envFrom:\n        - configMapRef:\n            name: settings\n        resources:\n          requests:\n            memory: 100Mi\n";

    /// A Go container with no env and no resources: its fixes insert whole blocks, indented as
    /// the file indents.
    const BARE: &str = "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: bare\nspec:\n  template:\n    spec:\n      containers:\n      - name: app\n        image: ko://example.com/app\n        resources: {limits: {cpu: '2', memory: 1Gi}}\n";

    fn deployments(n: usize) -> String {
        (0..n)
            .map(|i| format!("---\n{}", DEPLOY.replace("NAME", &format!("app-{i}"))))
            .collect()
    }

    #[test]
    fn grouped_objects_that_act_across_documents_reach_other_groups() {
        let lr = "---\napiVersion: v1\nkind: LimitRange\nmetadata: {name: mem, namespace: shop}\nspec:\n  limits:\n  - type: Container\n    default: {memory: 1Gi, cpu: '2'}\n";
        let cm = "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: shop}\ndata:\n  GOMEMLIMIT: 900MiB\n  GOMAXPROCS: '2'\n";
        let vpa = "---\napiVersion: autoscaling.k8s.io/v1\nkind: VerticalPodAutoscaler\nmetadata: {name: v, namespace: shop}\nspec:\n  targetRef: {apiVersion: apps/v1, kind: Deployment, name: app-3}\n  updatePolicy: {updateMode: Auto}\n";
        // Before, after and between the workloads they act on.
        for text in [
            format!("{lr}{cm}{vpa}{}", deployments(30)),
            format!("{}{lr}{cm}{vpa}", deployments(30)),
            format!(
                "{}{cm}{}{lr}{vpa}{}",
                deployments(10),
                deployments(10),
                deployments(10)
            ),
        ] {
            for group in [1, 900, 4_000] {
                assert!(
                    same_in_groups(&text, group),
                    "not read in groups of {group}"
                );
            }
        }
    }

    #[test]
    fn grouped_tricky_streams_say_what_the_whole_file_says() {
        let two = deployments(2);
        let shapes = [
            // Comments between documents and before the first, `# golint-k8s:` suppressions.
            format!("# leading comment\n\n{two}# between\n# golint-k8s: ignore-document=GK101\n{two}---\n# only a comment\n{two}"),
            // `---` lines inside block scalars (indented, and where a document marker ends it).
            format!("{two}---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: s}}\ndata:\n  a: |\n    ---\n    text\n  b: >-\n    x\n---\n{two}"),
            // `...` ends a document; the next starts with `---`.
            format!("{two}...\n{two}...\n---\n{two}"),
            // A byte-order mark.
            format!("\u{feff}{two}{two}"),
            // CRLF line breaks.
            format!("{two}{two}{two}").replace('\n', "\r\n"),
            // Anchors and aliases (the reference parser's documents) among the fast path's.
            format!("{two}---\napiVersion: v1\nkind: Pod\nmetadata: {{name: p}}\nspec:\n  containers:\n  - &c {{name: a, image: golang}}\n  - *c\n{two}"),
            // A JSON document in a YAML stream: fixes then write JSON keys in every group.
            format!("{two}---\n{{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {{\"name\": \"j\"}}, \"spec\": {{\"containers\": [{{\"name\": \"a\", \"image\": \"ko://x\"}}]}}}}\n{two}"),
            // Indented by four in most documents, by two in the first: fixes indent by four.
            format!("{two}{}", deployments(6).replace("\n  ", "\n    ")),
            // Sequences at their key's column in the first document, indented in the others.
            format!(
                "{BARE}{}",
                BARE.replace("      - name: app\n", "        - name: app\n")
                    .replace("\n        image", "\n          image")
                    .replace("\n        resources", "\n          resources")
                    .repeat(6)
            ),
            // A JSON stream, and a stream kubectl cuts differently: read whole, the same.
            r#"{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a"}, "spec": {"containers": [{"name": "a", "image": "ko://x"}]}}
{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "b"}, "spec": {"containers": [{"name": "b", "image": "ko://x"}]}}
"#.to_string(),
            format!("{two}---# note\n{two}"),
        ];
        let whole_only = shapes.len() - 2;
        for (i, text) in shapes.iter().enumerate() {
            for group in [1, 300, 700] {
                let in_groups = same_in_groups(text, group);
                assert_eq!(in_groups, i < whole_only, "shape {i}, groups of {group}");
            }
        }
    }

    /// A stream's findings handed on group by group, as `lint --format json` writes a large
    /// stream: the JSON written is byte for byte the whole report's, and the counts are the same.
    fn same_in_parts(text: &str, group: usize) -> usize {
        use golint_k8s::output::{json::Json, Format};
        let cfg = Config::default();
        let sel = Selection::default();
        let project = Project::default();
        let whole = lint_source_with(source(text), &cfg, &sel, &project, |_, _, _| {});
        let mut want = Vec::new();
        let mut any = Json.begin(&mut want).unwrap();
        Json.push(&mut any, Json.render(&whole), &mut want).unwrap();
        let mut got = Vec::new();
        let mut any = Json.begin(&mut got).unwrap();
        let mut parts = 0;
        let tail = golint_k8s::stream::lint_parts_in_groups(
            source(text),
            &cfg,
            &sel,
            &project,
            group,
            &mut |part| {
                parts += 1;
                Json.push(&mut any, Json.render(&part), &mut got).unwrap();
            },
        );
        Json.push(&mut any, Json.render(&tail), &mut got).unwrap();
        assert!(
            want == got,
            "the parts wrote other JSON than the whole report ({parts} parts)"
        );
        assert_eq!(format!("{:?}", whole.stats), format!("{:?}", tail.stats));
        parts
    }

    #[test]
    fn grouped_findings_written_in_parts_are_the_whole_reports() {
        let lr = "---\napiVersion: v1\nkind: LimitRange\nmetadata: {name: mem, namespace: shop}\nspec:\n  limits:\n  - type: Container\n    default: {memory: 1Gi, cpu: '2'}\n";
        let indented = BARE
            .replace("      - name: app\n", "        - name: app\n")
            .replace("\n        image", "\n          image")
            .replace("\n        resources", "\n          resources");
        for text in [
            fixture_stream(),
            format!("{}{lr}", deployments(20)),
            format!("{BARE}{}", indented.repeat(6)),
        ] {
            for group in [1, 900] {
                assert!(same_in_parts(&text, group) > 1, "not written in parts");
            }
        }
        // Not a manifest until its last document: nothing is handed on before it is known.
        let text = format!("{}{}", "---\nname: x\nname: y\n".repeat(20), deployments(1));
        same_in_parts(&text, 1);
        let text = "---\nname: x\nname: y\n".repeat(20);
        assert_eq!(same_in_parts(&text, 1), 0);
    }

    /// [`BARE`] indented by four, sequences too.
    const BARE4: &str = "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n    name: bare\nspec:\n    template:\n        spec:\n            containers:\n                - name: app\n                  image: ko://example.com/app\n                  resources: {limits: {cpu: '2', memory: 1Gi}}\n";

    /// What the fixes of a report's last document insert.
    fn last_inserts(report: &FileReport) -> String {
        let last = report.findings.iter().map(|f| f.diagnostic.document).max();
        report
            .findings
            .iter()
            .filter(|f| Some(f.diagnostic.document) == last)
            .flat_map(|f| &f.diagnostic.fix)
            .flat_map(|f| &f.edits)
            .map(|e| e.text.as_str())
            .collect()
    }

    /// Past the first MiB, other indentation does not change the fixes: the layout is read from
    /// the documents of the first MiB, whole or in groups, so a stream's first fixes can be
    /// written before its end is read.
    #[test]
    fn grouped_layout_is_read_from_the_first_mib() {
        let first = BARE.repeat((1 << 20) / BARE.len() + 1);
        // Three times as many documents indented by four after it.
        let text = format!("{first}{}", BARE4.repeat(3 * (1 << 20) / BARE4.len()));
        assert!(same_in_groups(&text, 256 * 1024), "not read in groups");
        assert!(same_in_parts(&text, 256 * 1024) > 1, "not written in parts");
        let cfg = Config::default();
        let stream = last_inserts(&common::lint_text("stream.yaml", &text, &cfg));
        let bare = last_inserts(&common::lint_text("alone.yaml", BARE, &cfg));
        let bare4 = last_inserts(&common::lint_text("alone.yaml", BARE4, &cfg));
        assert_ne!(bare, bare4, "the fixes do not follow the indentation");
        // The document alone is indented by four; in the stream, its fixes indent as the first
        // MiB does.
        assert!(!stream.is_empty());
        assert_ne!(stream, bare4);
    }

    /// A syntax error past the first group: the groups before it are handed on, and what follows
    /// is the whole-file path's, so the JSON written is still the whole report's.
    #[test]
    fn grouped_stream_with_a_syntax_error_late_is_read_whole_from_there() {
        let many = deployments((1 << 20) / DEPLOY.len() + 200);
        let text = format!("{many}---\nkind: Pod\nspec: [\n{}", deployments(3));
        assert!(same_in_parts(&text, 64 * 1024) > 1, "not written in parts");
        assert!(
            !same_in_groups(&text, 64 * 1024),
            "read in groups to the end"
        );
    }

    #[test]
    fn grouped_stream_with_a_syntax_error_is_read_whole() {
        let two = deployments(2);
        let text = format!("{two}---\nkind: Pod\nspec: [\n{two}{two}");
        assert!(!same_in_groups(&text, 1));
        let text = format!("{two}---\na: \"open\n---\nb: 1\n{two}");
        assert!(!same_in_groups(&text, 1));
    }
}
