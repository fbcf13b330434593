//! Every rule's fixtures: `fire-*` files must report the rule exactly on the lines marked
//! `# expect: GKnnn`, `silent-*` files must not report it at all. The human rendering of every
//! `fire-*` file is snapshotted.

mod common;

use common::*;

fn fixture_files() -> Vec<(String, std::path::PathBuf)> {
    let dir = root().join("fixtures");
    let mut out = Vec::new();
    for rule_dir in std::fs::read_dir(&dir).unwrap() {
        let rule_dir = rule_dir.unwrap().path();
        let Some(code) = rule_dir
            .file_name()
            .and_then(|n| n.to_str())
            .map(str::to_string)
        else {
            continue;
        };
        if !rule_dir.is_dir() || !code.starts_with("GK") {
            continue;
        }
        for f in std::fs::read_dir(&rule_dir).unwrap() {
            let f = f.unwrap().path();
            let name = f.file_name().unwrap().to_string_lossy().to_string();
            let is_input = (name.starts_with("fire-") || name.starts_with("silent-"))
                && (name.ends_with(".yaml") || name.ends_with(".yml") || name.ends_with(".json"))
                && !name.ends_with(".config.yaml")
                && !name.contains(".fixed.");
            if is_input {
                out.push((code.clone(), f));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn fixtures_fire_and_stay_silent() {
    let files = fixture_files();
    assert!(
        files.len() >= 23 * 2,
        "expected fixtures for every rule, found {}",
        files.len()
    );
    let mut failures = Vec::new();
    for (code, path) in &files {
        let text = std::fs::read_to_string(path).unwrap();
        let report = lint_fixture(path);
        let mut got: Vec<usize> = report
            .findings
            .iter()
            .filter(|f| f.diagnostic.code.as_str() == code)
            .map(|f| f.start.0)
            .collect();
        got.sort();
        got.dedup();
        let name = path.file_name().unwrap().to_string_lossy();
        if name.starts_with("silent-") {
            if !got.is_empty() {
                failures.push(format!(
                    "{}: {code} fired on lines {got:?} but must stay silent",
                    path.display()
                ));
            }
        } else {
            let want = expected_lines(&text, code);
            if want.is_empty() {
                if got.is_empty() {
                    failures.push(format!("{}: {code} did not fire", path.display()));
                }
            } else if got != want {
                failures.push(format!(
                    "{}: {code} fired on lines {got:?}, expected {want:?}",
                    path.display()
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} fixture failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn fixture_snapshots() {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(root().join("tests").join("snapshots").join("fixtures"));
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| {
        for (code, path) in fixture_files() {
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            if !name.starts_with("fire-") {
                continue;
            }
            let stem = name
                .rsplit_once('.')
                .map_or(name.as_str(), |(s, _)| s)
                .to_string();
            let rendered = render_human(lint_fixture(&path));
            insta::assert_snapshot!(format!("{code}-{stem}"), rendered);
        }
    });
}

/// Apply edits (non-overlapping byte ranges) back to front.
fn apply(text: &str, edits: &[golint_k8s::diagnostic::Edit]) -> String {
    let mut edits: Vec<_> = edits.to_vec();
    edits.sort_by_key(|e| std::cmp::Reverse(e.range.start));
    let mut out = text.to_string();
    for e in edits {
        out.replace_range(e.range.clone(), &e.text);
    }
    out
}

/// Every fix a rule attaches, applied on its own, yields valid YAML in which that finding is gone
/// and nothing outside the edited bytes changed.
#[test]
fn every_attached_fix_removes_its_finding() {
    let mut checked = 0;
    let mut failures = Vec::new();
    for (code, path) in fixture_files() {
        let text = std::fs::read_to_string(&path).unwrap();
        let report = lint_fixture(&path);
        for f in report
            .findings
            .iter()
            .filter(|f| f.diagnostic.code.as_str() == code)
        {
            let Some(fix) = &f.diagnostic.fix else {
                continue;
            };
            checked += 1;
            let fixed = apply(&text, &fix.edits);
            let tmp = std::env::temp_dir().join(format!(
                "golint-k8s-fix-{}-{}",
                std::process::id(),
                path.file_name().unwrap().to_string_lossy()
            ));
            std::fs::write(&tmp, &fixed).unwrap();
            // A fixture's config travels with it.
            let cfg = path.with_file_name(format!(
                "{}.config.yaml",
                path.file_stem().unwrap().to_string_lossy()
            ));
            if cfg.exists() {
                let stem = tmp.file_stem().unwrap().to_string_lossy().to_string();
                std::fs::copy(&cfg, tmp.with_file_name(format!("{stem}.config.yaml"))).unwrap();
            }
            let again = lint_fixture(&tmp);
            let _ = std::fs::remove_file(&tmp);
            let stem = tmp.file_stem().unwrap().to_string_lossy().to_string();
            let _ = std::fs::remove_file(tmp.with_file_name(format!("{stem}.config.yaml")));
            if again
                .findings
                .iter()
                .any(|g| g.diagnostic.code.as_str() == "GK000")
            {
                failures.push(format!(
                    "{}: fix {:?} produced invalid YAML",
                    path.display(),
                    fix.title
                ));
                continue;
            }
            let before = report
                .findings
                .iter()
                .filter(|g| g.diagnostic.code.as_str() == code)
                .count();
            let after = again
                .findings
                .iter()
                .filter(|g| g.diagnostic.code.as_str() == code)
                .count();
            if after >= before {
                failures.push(format!(
                    "{}: fix {:?} did not remove its {code} finding",
                    path.display(),
                    fix.title
                ));
            }
            // Outside the edits, the bytes are the same.
            let mut edits = fix.edits.clone();
            edits.sort_by_key(|e| e.range.start);
            let (first, last) = (edits[0].range.start, edits.last().unwrap().range.end);
            let grown = fixed.len() as isize - text.len() as isize;
            if text[..first] != fixed[..first]
                || text[last..] != fixed[(last as isize + grown) as usize..]
            {
                failures.push(format!(
                    "{}: fix {:?} changed bytes outside its edits",
                    path.display(),
                    fix.title
                ));
            }
        }
    }
    assert!(checked >= 20, "only {checked} fixes were exercised");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The fixed text as a snapshot shows it: carriage returns made visible (so a fix that loses CRLF
/// fails), and a missing final newline said out loud.
fn visible(text: &str) -> String {
    let mut s = text.replace('\r', "␍");
    if !text.ends_with('\n') {
        s.push_str("\n[no final newline]\n");
    }
    s
}

/// Whether every changed line of `new` against `old` lies on (or, for insertions, next to) a line
/// some applied fix names in the original.
fn lines_outside(old: &str, new: &str, allowed: &[(usize, usize)]) -> Vec<usize> {
    let near = |line: usize| allowed.iter().any(|&(a, b)| line + 1 >= a && line <= b + 1);
    let mut bad = Vec::new();
    for op in similar::TextDiff::from_lines(old, new).ops() {
        let r = op.old_range();
        match op.tag() {
            similar::DiffTag::Equal => {}
            similar::DiffTag::Insert => {
                if !near(r.start + 1) {
                    bad.push(r.start + 1);
                }
            }
            _ => bad.extend(r.map(|i| i + 1).filter(|&l| !near(l))),
        }
    }
    bad
}

/// Every `fire-*` fixture of a rule that has a fix, fixed with only that rule selected (unsafe
/// fixes included). The fixed file is snapshotted next to its input (`<stem>.fixed.snap`), and it
/// must parse, leave no fixable finding of the rule behind, not fire again where a fix was
/// applied, come out the same from a second run, and differ from the input only on the lines the
/// applied fixes name.
#[test]
fn fixed_snapshots() {
    use golint_k8s::fix::engine::fix_source;
    use golint_k8s::lint::Selection;
    use golint_k8s::rules::registry::{self, FixKind};
    use golint_k8s::source::Source;

    let mut changed = 0;
    let mut failures = Vec::new();
    for (code, path) in fixture_files() {
        let rule = registry::find(&code).unwrap();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if rule.fix == FixKind::None || !name.starts_with("fire-") {
            continue;
        }
        let (src, cfg) = fixture_source(&path);
        let (original, origin) = (src.text.clone(), src.origin.clone());
        let sel = Selection {
            select: Some([rule.code].into_iter().collect()),
            ignore: Default::default(),
        };
        let out = fix_source(src, &cfg, &sel, &Default::default(), true);
        let at = path.display();
        if let Some(e) = &out.error {
            failures.push(format!("{at}: {e:?}"));
            continue;
        }
        changed += usize::from(out.changed());
        let left = &out.remaining.findings;
        if left.iter().any(|f| f.diagnostic.code.as_str() == "GK000") {
            failures.push(format!("{at}: the fixed text does not parse"));
        }
        if left
            .iter()
            .any(|f| f.diagnostic.code.as_str() == code && f.diagnostic.fix.is_some())
        {
            failures.push(format!("{at}: a fixable {code} finding was left behind"));
        }
        for a in &out.applied {
            let back = left.iter().any(|f| {
                f.diagnostic.code == a.code
                    && f.diagnostic.document == a.document
                    && f.diagnostic.container.as_deref() == a.container.as_deref()
            });
            if back {
                failures.push(format!("{at}: {} still fires after {:?}", a.code, a.title));
            }
        }
        let again = fix_source(
            Source::from_text(origin, out.text.clone()),
            &cfg,
            &sel,
            &Default::default(),
            true,
        );
        if again.changed() {
            failures.push(format!("{at}: a second fix changed the file again"));
        }
        let lines = Source::from_text(out.remaining.origin.clone(), original.clone());
        let allowed: Vec<(usize, usize)> = out
            .applied
            .iter()
            .map(|a| {
                (
                    lines.line_col(a.original_range.start).0,
                    lines.line_col(a.original_range.end).0,
                )
            })
            .collect();
        let bad = lines_outside(&original, &out.text, &allowed);
        if !bad.is_empty() {
            failures.push(format!(
                "{at}: lines {bad:?} changed outside the applied fixes"
            ));
        }
        let stem = name.rsplit_once('.').map_or(name.as_str(), |(s, _)| s);
        let mut settings = insta::Settings::clone_current();
        settings.set_snapshot_path(path.parent().unwrap());
        settings.set_prepend_module_to_snapshot(false);
        settings.bind(|| insta::assert_snapshot!(format!("{stem}.fixed"), visible(&out.text)));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(
        changed >= 50,
        "only {changed} fixtures were changed by their fix"
    );
}
