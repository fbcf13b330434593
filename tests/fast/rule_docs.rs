//! Rule docs: the table in `rules/` agrees with the registry, every rule has a doc and fixtures,
//! and each doc's Example fires its rule while its "Use instead" does not. What a doc says the
//! tool reports on its Example is what the tool reports, number for number.

use crate::common::*;
use golint_k8s::config::Config;
use golint_k8s::output::Run;
use golint_k8s::rules::registry::RULES;

fn doc_field<'a>(doc: &'a str, key: &str) -> Option<&'a str> {
    doc.lines().find_map(|l| {
        let cells: Vec<&str> = l.split('|').map(str::trim).collect();
        (cells.len() >= 3 && cells[1] == key).then(|| cells[2])
    })
}

/// The first ```yaml block after a `## heading` line.
fn yaml_block<'a>(doc: &'a str, heading: &str) -> Option<&'a str> {
    let start = doc.find(&format!("\n## {heading}\n"))?;
    let rest = &doc[start..];
    let next_heading = rest[4..].find("\n## ").map_or(rest.len(), |i| i + 4);
    let section = &rest[..next_heading];
    let open = section.find("```yaml\n")? + "```yaml\n".len();
    let close = section[open..].find("\n```")? + open;
    Some(&section[open..close + 1])
}

#[test]
fn every_rule_has_a_matching_doc_and_fixtures() {
    for r in RULES {
        assert!(
            r.doc.starts_with(&format!("# {} {}\n", r.code, r.name)),
            "{}: doc title",
            r.code
        );
        assert_eq!(
            doc_field(r.doc, "Code"),
            Some(r.code.as_str()),
            "{}: Code",
            r.code
        );
        assert_eq!(doc_field(r.doc, "Name"), Some(r.name), "{}: Name", r.code);
        assert_eq!(
            doc_field(r.doc, "Severity"),
            Some(r.severity.as_str()),
            "{}: Severity",
            r.code
        );
        assert_eq!(
            doc_field(r.doc, "Fix"),
            Some(r.fix.as_str()),
            "{}: Fix",
            r.code
        );
        for section in [
            "What it does",
            "Why is this bad?",
            "Example",
            "Use instead",
            "Fix and fix safety",
            "Options",
            "When to ignore",
            "References",
        ] {
            assert!(
                r.doc.contains(&format!("\n## {section}\n")),
                "{}: missing section {section}",
                r.code
            );
        }
        let dir = root().join("fixtures").join(r.code.as_str());
        let names: Vec<String> = std::fs::read_dir(&dir)
            .unwrap_or_else(|_| panic!("{}: no fixtures directory", r.code))
            .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
            .collect();
        assert!(
            names.iter().any(|n| n.starts_with("fire-")),
            "{}: no fire fixture",
            r.code
        );
        assert!(
            names.iter().any(|n| n.starts_with("silent-")),
            "{}: no silent fixture",
            r.code
        );
    }
    let docs = std::fs::read_dir(root().join("rules")).unwrap().count();
    assert_eq!(docs, RULES.len(), "one doc per rule, no strays");
}

#[test]
fn doc_examples_behave_as_documented() {
    let cfg = Config::default();
    let mut failures = Vec::new();
    for r in RULES {
        let example = yaml_block(r.doc, "Example")
            .unwrap_or_else(|| panic!("{}: no Example yaml block", r.code));
        let fired = lint_text("example.yaml", example, &cfg)
            .findings
            .iter()
            .any(|f| f.diagnostic.code == r.code);
        if !fired {
            failures.push(format!("{}: the Example does not fire the rule", r.code));
        }
        let fixed = yaml_block(r.doc, "Use instead")
            .unwrap_or_else(|| panic!("{}: no Use instead yaml block", r.code));
        let report = lint_text("use-instead.yaml", fixed, &cfg);
        if let Some(f) = report.findings.iter().find(|f| f.diagnostic.code == r.code) {
            failures.push(format!(
                "{}: Use instead still fires: {}",
                r.code, f.diagnostic.message
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The findings a doc shows for its Example: the `text` block after "`golint-k8s lint` reports
/// on it:", one concise line per finding of the rule.
fn documented_output(doc: &str) -> Option<&str> {
    let example = doc.find("\n## Example\n")?;
    let rest = &doc[example..];
    let end = rest[4..].find("\n## ").map_or(rest.len(), |i| i + 4);
    let section = &rest[..end];
    let block = section.find("`golint-k8s lint` reports on it:\n```text\n")?;
    let body = &section[block..];
    let body = &body[body.find("```text\n")? + 8..];
    Some(&body[..body.find("```")?])
}

#[test]
fn doc_examples_print_what_the_doc_shows() {
    let cfg = Config::default();
    let mut failures = Vec::new();
    for r in RULES {
        let example = yaml_block(r.doc, "Example").unwrap();
        // Printed by the concise format itself, the rule's findings only.
        let mut report = lint_text("example.yaml", example, &cfg);
        report.findings.retain(|f| f.diagnostic.code == r.code);
        let run = Run {
            reports: std::slice::from_ref(&report),
            stats: report.stats,
            fixed: None,
            errors: &[],
        };
        let mut out = Vec::new();
        golint_k8s::output::concise::write(&run, &mut out).unwrap();
        let printed = String::from_utf8(out).unwrap();
        match documented_output(r.doc) {
            None => failures.push(format!("{}: the Example shows no output", r.code)),
            Some(shown) if shown != printed => failures.push(format!(
                "{}: the doc shows\n{shown}but the tool prints\n{printed}",
                r.code
            )),
            Some(_) => {}
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
