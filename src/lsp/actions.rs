//! Findings as LSP diagnostics, and the code actions on them. A diagnostic's fix stays in the
//! server, beside what it published (see [`super::incremental`]), and a quick fix is looked up
//! there by the diagnostic the client sends back: exactly the edit the linter computed, without
//! linting again, and without sending every fix of the file with every keystroke (in `data`, as
//! ruff's server does it, the fixes were a third of each notification). "Fix all" runs the same
//! engine as `golint-k8s fix`.

use std::collections::HashMap;

use super::convert::{Encoding, LineIndex};
use super::incremental::Published;
use super::{severity, FIX_ALL_KIND};
use crate::config::Config;
use crate::diagnostic::Applicability;
use crate::lint::FileReport;
use crate::run::Run;
use lsp_types::{
    CodeAction, CodeActionKind, CodeActionOrCommand, CodeActionParams, CodeDescription,
    DiagnosticRelatedInformation, Location, NumberOrString, Position, Range, TextEdit, Uri,
    WorkspaceEdit,
};

/// The fix of a published diagnostic, in the client's positions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fix {
    pub title: String,
    pub applicability: Applicability,
    pub edits: Vec<TextEdit>,
}

/// The report's findings as diagnostics, each with its fix.
pub fn diagnostics(
    uri: &Uri,
    report: &FileReport,
    text: &str,
    enc: Encoding,
) -> Vec<(lsp_types::Diagnostic, Option<Fix>)> {
    let idx = LineIndex::new(text, enc);
    report
        .findings
        .iter()
        .map(|f| {
            let d = &f.diagnostic;
            let range = idx.range(&d.range);
            let at = |message: String| DiagnosticRelatedInformation {
                location: Location {
                    uri: uri.clone(),
                    range,
                },
                message,
            };
            // A note whose subject lives elsewhere in the file (a LimitRange default) points there.
            let mut related: Vec<DiagnosticRelatedInformation> = d
                .notes
                .iter()
                .map(|n| match d.related.iter().find(|(_, m)| m == n) {
                    Some((r, m)) => DiagnosticRelatedInformation {
                        location: Location {
                            uri: uri.clone(),
                            range: idx.range(r),
                        },
                        message: m.clone(),
                    },
                    None => at(n.clone()),
                })
                .collect();
            if let Some(t) = &d.source_template {
                related.push(at(format!("rendered from {t}")));
            }
            let fix = d.fix.as_ref().map(|x| Fix {
                title: x.title.clone(),
                applicability: x.applicability,
                edits: x
                    .edits
                    .iter()
                    .map(|e| TextEdit {
                        range: idx.range(&e.range),
                        new_text: e.text.clone(),
                    })
                    .collect(),
            });
            let diagnostic = lsp_types::Diagnostic {
                range,
                severity: Some(severity(d.severity)),
                code: Some(NumberOrString::String(d.code.to_string())),
                code_description: crate::output::doc_url(d.code)
                    .parse()
                    .ok()
                    .map(|href| CodeDescription { href }),
                source: Some("golint-k8s".into()),
                message: d.message.clone(),
                related_information: (!related.is_empty()).then_some(related),
                tags: None,
                data: None,
            };
            (diagnostic, fix)
        })
        .collect()
}

fn wanted(only: &Option<Vec<CodeActionKind>>, kind: &str) -> bool {
    only.as_ref().is_none_or(|kinds| {
        kinds
            .iter()
            .any(|k| kind == k.as_str() || kind.starts_with(&format!("{}.", k.as_str())))
    })
}

fn edit(uri: &Uri, edits: Vec<TextEdit>) -> WorkspaceEdit {
    WorkspaceEdit {
        changes: Some(HashMap::from([(uri.clone(), edits)])),
        ..Default::default()
    }
}

/// The actions for a request; `published` is what was published for the document last, where
/// the fixes of the diagnostics the client sends back are found.
pub fn code_actions(
    p: &CodeActionParams,
    text: &str,
    published: Option<&Published>,
    cfg: &Config,
    enc: Encoding,
    run: &Run,
) -> Vec<CodeActionOrCommand> {
    let uri = &p.text_document.uri;
    let only = &p.context.only;
    let mut out = Vec::new();
    let ours = p
        .context
        .diagnostics
        .iter()
        .filter(|d| d.source.as_deref() == Some("golint-k8s"));
    if wanted(only, CodeActionKind::QUICKFIX.as_str()) {
        let lines = LineIndex::new(text, enc);
        let nl = if text.contains("\r\n") { "\r\n" } else { "\n" };
        for d in ours {
            if let Some(fix) = published.and_then(|p| p.fix_for(d)).cloned() {
                let safe = fix.applicability == Applicability::Safe;
                out.push(CodeActionOrCommand::CodeAction(CodeAction {
                    title: if safe {
                        fix.title
                    } else {
                        format!("{} (unsafe)", fix.title)
                    },
                    kind: Some(CodeActionKind::QUICKFIX),
                    diagnostics: Some(vec![d.clone()]),
                    edit: Some(edit(uri, fix.edits)),
                    is_preferred: Some(safe),
                    ..Default::default()
                }));
            }
            if let Some(NumberOrString::String(code)) = &d.code {
                out.push(CodeActionOrCommand::CodeAction(CodeAction {
                    title: format!("Suppress {code} on this line"),
                    kind: Some(CodeActionKind::QUICKFIX),
                    diagnostics: Some(vec![d.clone()]),
                    edit: Some(edit(
                        uri,
                        vec![suppression(&lines, nl, d.range.start.line, code)],
                    )),
                    ..Default::default()
                }));
            }
        }
    }
    if wanted(only, FIX_ALL_KIND) {
        if let Some(e) = fix_all(uri, text, cfg, enc, run) {
            out.push(CodeActionOrCommand::CodeAction(CodeAction {
                title: "Fix all safe golint-k8s problems".into(),
                kind: Some(CodeActionKind::new(FIX_ALL_KIND)),
                edit: Some(edit(uri, vec![e])),
                ..Default::default()
            }));
        }
    }
    out
}

/// `# golint-k8s: ignore=GKnnn` on its own line above the finding, indented like that line.
fn suppression(lines: &LineIndex, nl: &str, line: u32, code: &str) -> TextEdit {
    let l = lines.line_text(line as usize);
    let indent: String = l.chars().take_while(|c| *c == ' ').collect();
    TextEdit {
        range: Range::new(Position::new(line, 0), Position::new(line, 0)),
        new_text: format!("{indent}# golint-k8s: ignore={code}{nl}"),
    }
}

/// One edit turning the document into what `golint-k8s fix` (safe fixes) makes of it: the
/// changed middle between the common prefix and suffix.
fn fix_all(uri: &Uri, text: &str, cfg: &Config, enc: Encoding, run: &Run) -> Option<TextEdit> {
    // Named as the diagnostics name it, so the fixer sees the same Dockerfile, go.mod and
    // kustomization beside the file, and the same per-file-ignores.
    let name = super::document_name(uri.as_str());
    let out = run.fix_text(&name, text.to_string(), cfg);
    if !out.changed() || out.error.is_some() {
        return None;
    }
    let new = out.text;
    let mut prefix = text
        .bytes()
        .zip(new.bytes())
        .take_while(|(a, b)| a == b)
        .count();
    while !text.is_char_boundary(prefix) || !new.is_char_boundary(prefix) {
        prefix -= 1;
    }
    let max_suffix = text.len().min(new.len()) - prefix;
    let mut suffix = text
        .bytes()
        .rev()
        .zip(new.bytes().rev())
        .take(max_suffix)
        .take_while(|(a, b)| a == b)
        .count();
    while !text.is_char_boundary(text.len() - suffix) || !new.is_char_boundary(new.len() - suffix) {
        suffix -= 1;
    }
    let idx = LineIndex::new(text, enc);
    Some(TextEdit {
        range: idx.range(&(prefix..text.len() - suffix)),
        new_text: new[prefix..new.len() - suffix].to_string(),
    })
}
