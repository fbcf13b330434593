//! Suppressions, in the style of hadolint and ShellCheck inline ignores:
//! `# golint-k8s: ignore=GK101,cpu-limit-throttling -- reason` at the end of the line a finding
//! points at, or alone on the line(s) before it; `# golint-k8s: ignore-document=GK203` for a whole
//! document; and the annotations `golint-k8s.io/ignore` / `golint-k8s.io/ignore.<container>`, which
//! survive Helm and Kustomize (they drop comments).
//!
//! Every code a suppression names is tracked, so that one that silences nothing is reported
//! (GK901) and one that names no rule is reported (GK902).

use std::ops::Range;

use crate::diagnostic::registry;
use crate::source::Source;
use crate::yaml::Yaml;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// Findings whose first line is this 0-based line.
    Line(usize),
    /// Every finding in this document.
    Document(usize),
    /// Findings in one object (by document and object root), optionally one container.
    Object {
        doc: usize,
        object: u32,
        container: Option<String>,
    },
}

#[derive(Debug, Clone)]
pub struct Code {
    /// The rule code, or None when the name is unknown (GK902).
    pub code: Option<crate::diagnostic::Code>,
    pub written: String,
    pub used: bool,
}

#[derive(Debug, Clone)]
pub struct Suppression {
    pub scope: Scope,
    pub codes: Vec<Code>,
    /// Where it is written (the comment, or the annotation value).
    pub span: Range<usize>,
    pub doc: usize,
}

impl Suppression {
    /// The document it applies in: no suppression reaches beyond one.
    pub fn document(&self) -> usize {
        match &self.scope {
            Scope::Line(_) => self.doc,
            Scope::Document(d) | Scope::Object { doc: d, .. } => *d,
        }
    }

    /// Whether it silences `code` at `line` in `doc`; marks the code used.
    pub fn matches(
        &mut self,
        code: crate::diagnostic::Code,
        doc: usize,
        line: usize,
        object: Option<(u32, Option<&str>)>,
    ) -> bool {
        let applies = match &self.scope {
            Scope::Line(l) => *l == line && self.doc == doc,
            Scope::Document(d) => *d == doc,
            Scope::Object {
                doc: d,
                object: o,
                container,
            } => {
                *d == doc
                    && object.is_some_and(|(obj, c)| {
                        obj == *o && container.as_deref().is_none_or(|want| Some(want) == c)
                    })
            }
        };
        if !applies {
            return false;
        }
        let mut hit = false;
        for c in &mut self.codes {
            if c.code == Some(code) {
                c.used = true;
                hit = true;
            }
        }
        hit
    }
}

pub fn parse_codes(list: &str) -> Vec<Code> {
    list.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| Code {
            code: registry::find(s).map(|r| r.code),
            written: s.to_string(),
            used: false,
        })
        .collect()
}

/// Suppressions written as comments.
pub fn from_comments(src: &Source, y: &Yaml) -> Vec<Suppression> {
    let mut out = Vec::new();
    let mut memo = None;
    for c in &y.comments {
        let text = &src.text[c.span.clone()];
        let Some(body) = text
            .trim_start_matches('#')
            .trim()
            .strip_prefix("golint-k8s:")
        else {
            continue;
        };
        let body = body.trim();
        // The reason after ` -- ` is for humans.
        let body = body.split(" --").next().unwrap_or(body).trim();
        let (document, list) = if let Some(l) = body.strip_prefix("ignore-document=") {
            (true, l)
        } else if let Some(l) = body.strip_prefix("ignore=") {
            (false, l)
        } else {
            continue;
        };
        let list = list.split_whitespace().next().unwrap_or("");
        let line = src.line_index(c.span.start);
        let scope = if document {
            Scope::Document(c.doc)
        } else if c.own_line {
            Scope::Line(next_content_line(src, line, &mut memo))
        } else {
            Scope::Line(line)
        };
        out.push(Suppression {
            scope,
            codes: parse_codes(list),
            span: c.span.clone(),
            doc: c.doc,
        });
    }
    out
}

/// The last scan of [`next_content_line`]: every line from `from` up to `found` (or to the end of
/// the text when `None`) is blank or only a comment.
type LastScan = Option<(usize, Option<usize>)>;

/// The first line after `line` that is neither blank nor only a comment. A run of comment lines
/// shares one scan through `memo`, so 50,000 suppression comments in a row stay linear.
fn next_content_line(src: &Source, line: usize, memo: &mut LastScan) -> usize {
    let start = line + 1;
    if let Some((from, found)) = *memo {
        if from <= start && start <= found.unwrap_or(src.line_count()) {
            return found.unwrap_or(start);
        }
    }
    let found = (start..src.line_count()).find(|&l| {
        let t = src.text[src.line_range(l)].trim();
        !t.is_empty() && !t.starts_with('#')
    });
    *memo = Some((start, found));
    found.unwrap_or(start)
}
