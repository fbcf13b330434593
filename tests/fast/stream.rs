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
