//! Lint one input: source → YAML span tree → objects → pod specs → containers → rules →
//! suppressions → findings with line and column. Each file is independent, so the CLI runs this in
//! parallel and never holds more than one file's tree per thread.

use std::collections::HashSet;
use std::sync::Arc;

use rayon::prelude::*;

use crate::config::Config;
use crate::config::RuleLevel;
use crate::diagnostic::registry::{self, RULES};
use crate::diagnostic::Code;
use crate::diagnostic::Diagnostic;
use crate::k8s::container::Pod;
use crate::k8s::limitrange::LimitRange;
use crate::k8s::vpa::Vpa;
use crate::k8s::{self, ConfigMap, Object};
use crate::project::Project;
use crate::rules::checks::{self, Check};
use crate::rules::ContainerCtx;
use crate::runtime::GoView;
use crate::source::{DecodeFailure, Origin, Source};
use crate::suppress::{self, Scope, Suppression};
use crate::yaml::{self, Yaml};

/// Which rules run: `--select` / `--ignore` (the config's `rules:` is applied per file).
#[derive(Debug, Clone, Default)]
pub struct Selection {
    pub select: Option<HashSet<Code>>,
    pub ignore: HashSet<Code>,
}

impl Selection {
    pub fn enabled(&self, code: Code, cfg: &Config) -> bool {
        if self.ignore.contains(&code) {
            return false;
        }
        if let Some(sel) = &self.select {
            if !sel.contains(&code) {
                return false;
            }
        }
        cfg.rules.get(&code) != Some(&RuleLevel::Off)
    }
}

/// A finding with its positions worked out (1-based lines, columns in characters, end exclusive).
#[derive(Debug, Clone)]
pub struct Finding {
    pub diagnostic: Diagnostic,
    pub start: (usize, usize),
    pub end: (usize, usize),
    /// Positions of each fix edit, in the same order.
    pub edit_positions: Vec<((usize, usize), (usize, usize))>,
}

#[derive(Debug, Clone, Copy, Default)]
pub struct Stats {
    pub files: usize,
    pub documents: usize,
    pub objects: usize,
    pub containers: usize,
    /// Containers judged Go only by `assume-go` (set or not).
    pub assumed_go: usize,
    /// Of those, the ones whose Go findings were kept below the gate (`assume-go` unset).
    pub unknown_runtime: usize,
    /// Go containers whose program sizes GOMAXPROCS or GOMEMLIMIT itself.
    pub self_sizing: usize,
}

impl std::ops::AddAssign for Stats {
    fn add_assign(&mut self, o: Stats) {
        self.files += o.files;
        self.documents += o.documents;
        self.objects += o.objects;
        self.containers += o.containers;
        self.assumed_go += o.assumed_go;
        self.unknown_runtime += o.unknown_runtime;
        self.self_sizing += o.self_sizing;
    }
}

#[derive(Debug)]
pub struct FileReport {
    pub name: String,
    pub origin: Origin,
    pub findings: Vec<Finding>,
    pub stats: Stats,
    /// Kept only when there are findings: the human format shows snippets.
    pub source: Option<Arc<Source>>,
    /// Why the file was not judged: it is not a Kubernetes manifest and not valid YAML either
    /// (see [`only_manifests`]). Front ends list it with the inputs not linted.
    pub skipped: Option<String>,
}

/// Whether a text names both keys every Kubernetes object has, as keys of a document: a file that
/// does not parse is taken for a broken manifest when it does, and for some other file when it does
/// not. In block YAML the keys must start a line: a Go-templated test config or values file names
/// `apiVersion` and `kind` deep inside (the objects it creates or waits for) and is no manifest,
/// while a templated or broken manifest keeps them at the left margin. Where lines say nothing
/// (JSON or flow YAML) naming both words is enough.
pub fn names_manifest_keys(text: &str) -> bool {
    let text = text.trim_start_matches('\u{feff}');
    let body = text.trim_start();
    if (body.starts_with('{') && !body.starts_with("{{")) || body.starts_with('[') {
        return text.contains("apiVersion") && text.contains("kind");
    }
    let (mut api, mut kind) = (false, false);
    for line in text.lines() {
        let line = line
            .strip_prefix("--- ")
            .or_else(|| line.strip_prefix("---\t"))
            .map_or(line, str::trim_start);
        api |= starts_with_key(line, "apiVersion");
        kind |= starts_with_key(line, "kind");
        if api && kind {
            return true;
        }
    }
    false
}

/// Whether a line starts with the mapping key `key`, bare or quoted.
fn starts_with_key(line: &str, key: &str) -> bool {
    let rest = ["\"", "'", ""].iter().find_map(|q| {
        line.strip_prefix(q)
            .and_then(|l| l.strip_prefix(key))
            .and_then(|l| l.strip_prefix(q))
    });
    rest.is_some_and(|r| r.trim_start_matches([' ', '\t']).starts_with(':'))
}

/// Only manifests are judged. A file with no Kubernetes object (a document with `apiVersion` and
/// `kind`) is KEP metadata, an Alertmanager config, Go test data or a dashboard's JSON: what the
/// YAML rules found in it is dropped, and when it does not even parse, the report says that it
/// was skipped and why, so that it never passes unseen. A file that does not parse but names
/// both keys is taken for a broken manifest and keeps its GK000, unless it is a template
/// ([`only_yaml`]). (The language server shows nothing for a skipped file, by the same tests.)
pub fn only_manifests(mut r: FileReport, names_keys: bool) -> FileReport {
    if r.stats.objects > 0 {
        return r;
    }
    let invalid = r
        .findings
        .iter()
        .find(|f| f.diagnostic.code == Code::GK000)
        .map(|f| format!("{}:{}: {}", f.start.0, f.start.1, f.diagnostic.message));
    if invalid.is_some() && names_keys {
        return r;
    }
    r.findings.clear();
    r.source = None;
    r.skipped = invalid.map(|why| {
        format!("not linted: it names no apiVersion and kind, so it is not taken for a Kubernetes manifest, and it is not valid YAML either ({why})")
    });
    r
}

/// A Go or Helm template that does not parse (clusterloader2's object templates, a sidecar
/// injection template shipped as a chart's file) is rendered by its program before anything reads
/// it as YAML: a GK000 on it is nothing its author can act on, and findings on the documents that
/// happen to parse judge text that is not what gets applied. The whole file is skipped and says
/// why, as other files that are not YAML are ([`only_manifests`]).
fn only_yaml(mut r: FileReport) -> FileReport {
    let why = r
        .findings
        .iter()
        .find(|f| f.diagnostic.code == Code::GK000)
        .map(|f| format!("{}:{}: {}", f.start.0, f.start.1, f.diagnostic.message));
    r.findings.clear();
    r.source = None;
    r.stats = Stats {
        files: r.stats.files,
        documents: r.stats.documents,
        ..Stats::default()
    };
    r.skipped = Some(match why {
        Some(why) => format!("a template (`{{{{ … }}}}`), not YAML: not linted ({why})"),
        None => "a template (`{{ … }}`), not YAML: not linted".to_string(),
    });
    r
}

/// Whether a text is a Go or Helm template: an action `{{ … }}` stands where YAML expects a node
/// (on a line of its own or starting one, as a sequence entry, as a mapping value, or as an entry
/// of a flow collection). An action inside a quoted or plain scalar (a Prometheus alert's
/// `summary: "{{ $labels.instance }} is down"`), a block scalar or a comment is text YAML carries,
/// and does not make a broken manifest a template.
fn is_go_template(text: &str) -> bool {
    // The indentation of the line that opened the block scalar being read, if one is.
    let mut block: Option<usize> = None;
    // The quote of the quoted scalar that continues on the next line, if one does.
    let mut quoted: Option<char> = None;
    for line in text.lines() {
        let body = line.trim_start_matches([' ', '\t']);
        let indent = line.len() - body.len();
        if let Some(q) = quoted {
            if quote_end(line, q).is_some() {
                quoted = None;
            }
            continue;
        }
        if let Some(at) = block {
            if body.is_empty() || indent > at {
                continue;
            }
            block = None;
        }
        if body.starts_with('#') {
            continue;
        }
        let node = node_start(body);
        if is_action(node) || in_flow_has_action(node) {
            return true;
        }
        if opens_block_scalar(node) {
            block = Some(indent);
            continue;
        }
        let value = mapping_value(node);
        if let Some(value) = value {
            if is_action(value) || in_flow_has_action(value) {
                return true;
            }
            if opens_block_scalar(value) {
                block = Some(indent);
            }
        }
        let scalar = value.unwrap_or(node);
        quoted = scalar
            .chars()
            .next()
            .filter(|q| matches!(q, '"' | '\'') && quote_end(&scalar[1..], *q).is_none());
    }
    false
}

/// Where the quoted scalar that `text` continues ends: the byte offset of its closing quote
/// (`\"` does not close a double-quoted scalar, nor `''` a single-quoted one).
fn quote_end(text: &str, q: char) -> Option<usize> {
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if q == '"' && c == '\\' {
            chars.next();
        } else if c == q {
            if q == '\'' && chars.peek().is_some_and(|(_, n)| *n == '\'') {
                chars.next();
            } else {
                return Some(i);
            }
        }
    }
    None
}

/// A line without its document marker and sequence indicators: where its first node starts.
fn node_start(body: &str) -> &str {
    let mut s = body.strip_prefix("--- ").unwrap_or(body);
    while let Some(rest) = s.strip_prefix("- ").or_else(|| s.strip_prefix("-\t")) {
        s = rest.trim_start_matches([' ', '\t']);
    }
    s
}

/// Whether a node starts with a template action (closed on its line, or a comment `{{/* … */}}`
/// that may span lines).
fn is_action(node: &str) -> bool {
    let Some(rest) = node.strip_prefix("{{") else {
        return false;
    };
    rest.contains("}}") || rest.trim_start_matches(['-', ' ']).starts_with("/*")
}

/// Whether a flow collection (`[a, {{ .B }}]`) has an action as one of its entries or values.
fn in_flow_has_action(node: &str) -> bool {
    if !(node.starts_with('[') || node.starts_with('{') && !node.starts_with("{{")) {
        return false;
    }
    let mut quote: Option<char> = None;
    let mut prev = ' ';
    for (i, c) in node.char_indices() {
        match quote {
            Some(q) if c == q && !(q == '"' && prev == '\\') => quote = None,
            Some(_) => {}
            None if c == '"' || c == '\'' => quote = Some(c),
            None if c == '#' && prev == ' ' => return false,
            None if matches!(c, '[' | '{' | ',') || (c == ':' && prev != ':') => {
                let rest = node[i + 1..].trim_start_matches([' ', '\t']);
                if c != '{' && is_action(rest) {
                    return true;
                }
            }
            None => {}
        }
        prev = c;
    }
    false
}

/// The value of a block mapping entry `key: value` (the key bare or quoted), if the line is one
/// and the value is on it.
fn mapping_value(node: &str) -> Option<&str> {
    let after_key = match node.chars().next()? {
        q @ ('"' | '\'') => {
            let end = quote_end(&node[1..], q)? + 1;
            &node[end + 1..]
        }
        '[' | '{' | '|' | '>' | '&' | '*' | '!' => return None,
        _ => {
            let colon = node.find(": ").or_else(|| node.find(":\t"))?;
            if node[..colon].contains(" #") {
                return None;
            }
            &node[colon..]
        }
    };
    let value = after_key
        .trim_start_matches([' ', '\t'])
        .strip_prefix(':')?;
    let value = value.trim_start_matches([' ', '\t']);
    (!value.is_empty()).then_some(value)
}

/// Whether a node is a block scalar's header (`|`, `>-`, `|2+`, with an optional comment).
fn opens_block_scalar(node: &str) -> bool {
    let head = node.split(" #").next().unwrap_or(node).trim_end();
    let mut chars = head.chars();
    matches!(chars.next(), Some('|' | '>')) && chars.all(|c| matches!(c, '-' | '+' | '1'..='9'))
}

/// A file that could not be read as text: one GK000 finding at the offending byte.
pub fn decode_failure(failure: DecodeFailure) -> FileReport {
    let DecodeFailure {
        origin,
        error: err,
        bytes: text_for_positions,
    } = failure;
    let name = origin.display_name();
    // Positions come from the valid prefix; lines before the bad byte are still countable.
    let prefix =
        String::from_utf8_lossy(&text_for_positions[..err.offset().min(text_for_positions.len())])
            .into_owned();
    let src = Source::from_text(origin.clone(), prefix);
    let (line, col) = src.line_col(src.text.len());
    let mut d = crate::rules::gk000::undecodable(err.message());
    d.fingerprint = crate::fingerprint::of(&name, &d);
    // A file too large to read may be a manifest: only what was read can say it is not one. Bytes
    // that are not text have no lines to go by (a NUL may stand before the first key): naming
    // both keys is enough.
    let lossy = String::from_utf8_lossy(&text_for_positions);
    let names_keys = matches!(
        err,
        crate::source::DecodeError::TooLarge { .. }
            | crate::source::DecodeError::TooLargeDocument { .. }
    ) || (lossy.contains("apiVersion") && lossy.contains("kind"));
    let report = FileReport {
        name,
        origin,
        findings: vec![Finding {
            diagnostic: d,
            start: (line, col),
            end: (line, col),
            edit_positions: Vec::new(),
        }],
        stats: Stats {
            files: 1,
            ..Stats::default()
        },
        source: None,
        skipped: None,
    };
    only_manifests(report, names_keys)
}

/// Lint a decoded source on its own, as a run of that one file (the project files around it are
/// read afresh).
pub fn lint_source(src: Source, cfg: &Config, sel: &Selection) -> FileReport {
    lint_source_with(src, cfg, sel, &Project::default(), |_, _, _| {})
}

/// Lint a decoded source, then let `enrich` amend the findings while the source's YAML tree is
/// still at hand (Helm and cluster mode add where a finding comes from, without parsing again).
/// `project` is what the run knows beyond the file (the files around it, image facts, the
/// LimitRanges and VPAs of the run's other files).
pub fn lint_source_with(
    src: Source,
    cfg: &Config,
    sel: &Selection,
    project: &Project,
    enrich: impl FnOnce(&Source, &Yaml, &mut Vec<Diagnostic>),
) -> FileReport {
    let (diagnostics, stats) = {
        let y = src.parse();
        let (mut diagnostics, stats) = check_file(&src, &y, cfg, sel, project);
        enrich(&src, &y, &mut diagnostics);
        crate::fingerprint::set_all(&src.name, &y, &mut diagnostics);
        // One large stream (a whole platform's `helm template`) is a tree of a million nodes:
        // freeing it node by node on one thread left the other cores idle.
        if y.nodes.len() >= yaml::PARALLEL_NODES {
            y.nodes.into_par_iter().for_each(drop);
        }
        (diagnostics, stats)
    };
    report(src, diagnostics, stats)
}

/// The report of a source from its checked diagnostics (see [`check_file`]); a file that is not a
/// manifest ([`only_manifests`]) or a template that is not YAML ([`only_yaml`]) is not judged.
pub fn report(src: Source, diagnostics: Vec<Diagnostic>, stats: Stats) -> FileReport {
    let findings = positioned(&src, diagnostics);
    report_found(src, findings, stats)
}

/// [`report`] of findings already positioned (a large stream positions each group's as it goes,
/// so that its diagnostics and their findings are never all in memory twice).
pub fn report_found(src: Source, findings: Vec<Finding>, stats: Stats) -> FileReport {
    let unjudged = stats.objects == 0 && !findings.is_empty();
    if unjudged && !names_manifest_keys(&src.text) {
        return only_manifests(judged(src, findings, stats), false);
    }
    // A manifest by its objects or its keys: unless it is a template.
    if findings.iter().any(|f| f.diagnostic.code == Code::GK000) && is_go_template(&src.text) {
        return only_yaml(judged(src, findings, stats));
    }
    if unjudged {
        return only_manifests(judged(src, findings, stats), true);
    }
    judged(src, findings, stats)
}

/// Sorted diagnostics with their lines and columns in `src`.
pub fn positioned(src: &Source, diagnostics: Vec<Diagnostic>) -> Vec<Finding> {
    if diagnostics.len() >= crate::diagnostic::PARALLEL_FINDINGS {
        diagnostics
            .into_par_iter()
            .map_init(|| 0, |line, d| position(src, line, d))
            .collect()
    } else {
        let mut line = 0;
        diagnostics
            .into_iter()
            .map(|d| position(src, &mut line, d))
            .collect()
    }
}

fn judged(src: Source, findings: Vec<Finding>, stats: Stats) -> FileReport {
    let name = src.name.clone();
    let origin = src.origin.clone();
    FileReport {
        name,
        origin,
        stats,
        source: (!findings.is_empty()).then(|| Arc::new(src)),
        findings,
        skipped: None,
    }
}

/// Line and column of a diagnostic and its edits. The diagnostics come sorted, and edits sit
/// near their finding: `line`, the line of the last lookup, saves most searches of the index.
fn position(src: &Source, line: &mut usize, d: Diagnostic) -> Finding {
    let start = src.line_col_near(line, d.range.start);
    let end = src.line_col_near(line, d.range.end);
    let edit_positions = d
        .fix
        .iter()
        .flat_map(|f| f.edits.iter())
        .map(|e| {
            (
                src.line_col_near(line, e.range.start),
                src.line_col_near(line, e.range.end),
            )
        })
        .collect();
    // Back to the finding's own line: the next finding starts at or after it.
    *line = start.0 - 1;
    Finding {
        diagnostic: d,
        start,
        end,
        edit_positions,
    }
}

/// Diagnostics of one parsed file, filtered, suppressed and sorted. `project` lends what the
/// run knows beyond the file, among it the LimitRanges and VPAs of the run's other files.
pub fn check_file(
    src: &Source,
    y: &Yaml,
    cfg: &Config,
    sel: &Selection,
    project: &Project,
) -> (Vec<Diagnostic>, Stats) {
    check_part(src, y, cfg, sel, project, &Part::whole(y))
}

/// Which documents of a tree [`check_part`] judges, and the layout fixes write in.
pub struct Part {
    /// The documents judged. The tree's other documents are only read for what acts across
    /// documents (LimitRanges, VPAs, ConfigMaps): a group of a large stream, with what the
    /// stream's other groups hold of those (see `crate::stream`).
    pub own: std::ops::Range<usize>,
    /// The whole file's layout (JSON or not, indentation), when the tree is only part of it.
    pub layout: Option<(bool, crate::edit::emit::Indents)>,
}

impl Part {
    pub fn whole(y: &Yaml) -> Part {
        Part {
            own: 0..y.docs.len(),
            layout: None,
        }
    }
}

/// [`check_file`] on the documents `part` names.
pub fn check_part(
    src: &Source,
    y: &Yaml,
    cfg: &Config,
    sel: &Selection,
    project: &Project,
    part: &Part,
) -> (Vec<Diagnostic>, Stats) {
    let mut diags: Vec<Diagnostic> = Vec::new();
    // Object identity per diagnostic, for annotation suppressions: (object root, container).
    let mut owners: Vec<Owner> = Vec::new();
    let mut stats = Stats {
        files: 1,
        documents: part.own.len(),
        ..Stats::default()
    };

    let ignored = match &src.origin {
        Origin::File(path) => cfg.ignored_in(path),
        // `--stdin-filename` (and the language server) name where the text lives.
        Origin::Stdin(name) if name != "-" => cfg.ignored_in(std::path::Path::new(name)),
        Origin::Stdin(_) => Vec::new(),
    };
    let rules = Rules::enabled(sel, cfg, &ignored);
    let file = crate::rules::FileCtx { src, y };
    for check in &rules.file {
        check(&file, &mut diags);
    }
    owners.resize(diags.len(), None);

    // Helm's `# Source:` comment names the template each document was rendered from: one shared
    // copy per document, given to the objects' findings as they are checked (in parallel in a
    // large stream) and here to the file's own.
    let templates = source_templates(&src.text, y);
    for d in &mut diags {
        d.source_template = templates.get(d.document).cloned().flatten();
    }

    let doc_objects = |(i, doc): (usize, &yaml::Document)| {
        doc.root
            .map(|root| k8s::objects(y, root).into_iter().map(move |o| (i, o)))
            .into_iter()
            .flatten()
    };
    let objects: Vec<(usize, Object)> = if y.docs.len() >= PARALLEL_OBJECTS {
        y.docs
            .par_iter()
            .enumerate()
            .flat_map_iter(doc_objects)
            .collect()
    } else {
        y.docs.iter().enumerate().flat_map(doc_objects).collect()
    };
    stats.objects = objects
        .iter()
        .filter(|(doc, _)| part.own.contains(doc))
        .count();
    // The file's own first, then the other files' in the order they were indexed.
    let limit_ranges: Vec<LimitRange> = objects
        .iter()
        .filter_map(|(_, o)| LimitRange::read(y, o))
        .chain(project.index.limit_ranges_besides(&src.name))
        .collect();
    let own_vpas: Vec<Vpa> = objects
        .iter()
        .filter_map(|(_, o)| Vpa::read(y, o))
        .collect();
    let vpas: Vec<&Vpa> = own_vpas
        .iter()
        .chain(project.index.vpas_besides(&src.name))
        .collect();
    let config_maps: Vec<ConfigMap> = objects
        .iter()
        .filter_map(|(_, o)| k8s::config_map(y, o))
        .collect();
    let mut suppressions = suppress::from_comments(src, y);
    let fx = crate::edit::emit::Emitter::new(src, y);
    if let Some((json, indents)) = part.layout {
        fx.preset(json, indents);
    }

    // Objects are independent: a stream of thousands (one `helm template` of a platform) is
    // checked on several threads. Results are joined in object order, as one pass would make them.
    let manifest = match &src.origin {
        Origin::File(p) => Some(p.as_path()),
        // `--stdin-filename` names where the text lives, as for the config.
        Origin::Stdin(name) if name != "-" => Some(std::path::Path::new(name.as_str())),
        Origin::Stdin(_) => None,
    };
    let checker = ObjectChecker {
        y,
        src,
        cfg,
        around: project.around(manifest),
        partial: manifest.and_then(|m| project.patch(m)),
        fx: &fx,
        limit_ranges: &limit_ranges,
        vpas: &vpas,
        config_maps: &config_maps,
        rules: &rules,
        templates: &templates,
    };
    let check = |(doc, obj): &(usize, Object)| checker.check_object(*doc, obj);
    let own = |(doc, _): &&(usize, Object)| part.own.contains(doc);
    let checked: Vec<ObjectFindings> = if stats.objects >= PARALLEL_OBJECTS {
        objects.par_iter().filter(own).map(check).collect()
    } else {
        objects.iter().filter(own).map(check).collect()
    };
    // Sized once: a stream's tens of thousands of findings were copied at every doubling.
    let found: usize = checked.iter().map(|o| o.diags.len()).sum();
    diags.reserve(found);
    owners.reserve(found);
    for o in checked {
        diags.extend(o.diags);
        owners.extend(o.owners);
        suppressions.extend(o.suppressions);
        stats.containers += o.containers;
        stats.assumed_go += o.assumed_go;
        stats.unknown_runtime += o.unknown_runtime;
        stats.self_sizing += o.self_sizing;
    }

    // Suppressions, then config severity overrides.
    // Each finding only looks at the suppressions that can reach it: those of its document, of
    // its line and of its object (one `kind: List` carries thousands of annotated objects in one
    // document, and a finding that tried all of them made the list quadratic).
    let mut reach: std::collections::HashMap<Reach, Vec<usize>> = Default::default();
    for (i, s) in suppressions.iter().enumerate() {
        let key = match &s.scope {
            Scope::Line(line) => Reach::Line(s.doc, *line),
            Scope::Document(d) => Reach::Document(*d),
            Scope::Object { doc, object, .. } => Reach::Object(*doc, *object),
        };
        reach.entry(key).or_default().push(i);
    }
    // In place: `retain` visits the findings once each, in order, so they pair with their owners.
    let mut owners = owners.into_iter();
    diags.retain(|d| {
        let owner = owners.next().flatten();
        if !sel.enabled(d.code, cfg) {
            return false;
        }
        if reach.is_empty() {
            return true;
        }
        let line = src.line_index(d.range.start);
        let keys = [
            Some(Reach::Document(d.document)),
            Some(Reach::Line(d.document, line)),
            owner.map(|(object, _)| Reach::Object(d.document, object)),
        ];
        let mut suppressed = false;
        // Every match counts (a suppression that matched nothing is reported as unused).
        for key in keys.iter().flatten() {
            for &i in reach.get(key).map_or(&[][..], Vec::as_slice) {
                suppressed |= suppressions[i].matches(d.code, d.document, line, owner);
            }
        }
        !suppressed
    });
    let mut kept = diags;
    let ran = |code: Code| sel.enabled(code, cfg);
    let on_suppressions = crate::rules::SuppressionCtx {
        src,
        suppressions: &suppressions,
        ran: &ran,
    };
    for check in &rules.suppressions {
        check(&on_suppressions, &mut kept);
    }
    if !cfg.rules.is_empty() {
        for d in &mut kept {
            if let Some(RuleLevel::On(sev)) = cfg.rules.get(&d.code) {
                if !d.below_gate {
                    d.severity = *sev;
                }
            }
        }
    }
    crate::edit::guard_shared_edits(src, y, &mut kept);
    (sort_diagnostics(kept), stats)
}

/// One container as `--show-containers` lists it: where it is and what it was judged to run.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ContainerRow {
    pub file: String,
    pub line: usize,
    pub object: crate::k8s::ObjectRef,
    pub container: Option<String>,
    pub image: Option<String>,
    pub runtime: crate::diagnostic::RuntimeInfo,
}

/// Every container of a source with the Go view the rules would see.
pub fn containers(src: &Source, cfg: &Config, project: &Project) -> Vec<ContainerRow> {
    let y = src.parse();
    let manifest = match &src.origin {
        Origin::File(p) => Some(p.as_path()),
        Origin::Stdin(name) if name != "-" => Some(std::path::Path::new(name.as_str())),
        Origin::Stdin(_) => None,
    };
    let mut rows = Vec::new();
    for (obj, spec) in pod_specs(&y, cfg) {
        let annotations = k8s::annotation_maps(&y, &obj, spec.template_metadata);
        let pod = Pod::read(&y, spec);
        for c in &pod.containers {
            let label =
                crate::runtime::release_label(&y, [spec.template_metadata, obj.metadata], &pod, c);
            let go =
                GoView::decide_in_pod(&y, &annotations, c, cfg, project.around(manifest), label);
            rows.push(ContainerRow {
                file: src.origin.display_name(),
                line: src.line_col(y.span(c.anchor_node()).start).0,
                object: obj.reference(),
                container: c.name.map(str::to_string),
                image: c.image.map(str::to_string),
                runtime: go.info(),
            });
        }
    }
    rows
}

/// Every object of a parsed source that has a pod spec, with the spec.
fn pod_specs<'y>(y: &'y Yaml, cfg: &Config) -> Vec<(Object<'y>, k8s::PodSpecRef)> {
    let objects = y.docs.iter().filter_map(|d| d.root);
    objects
        .flat_map(|root| k8s::objects(y, root))
        .filter_map(|obj| k8s::pod_spec(y, &obj, &cfg.pod_spec_paths).map(|spec| (obj, spec)))
        .collect()
}

/// The image references of a source's containers, as written (`--inspect-images`).
pub fn images(src: &Source, cfg: &Config) -> Vec<String> {
    let y = src.parse();
    let mut out = Vec::new();
    for (_, spec) in pod_specs(&y, cfg) {
        let pod = Pod::read(&y, spec);
        out.extend(
            pod.containers
                .iter()
                .filter_map(|c| c.image.map(str::to_string)),
        );
    }
    out
}

/// By position, then code; stable. A stream's thousands of diagnostics are large to move at every
/// step of a sort, so their keys are sorted and the diagnostics then swapped into place, in the
/// list they are in (collecting them into new lists cost a stream two fresh copies).
fn sort_diagnostics(mut diags: Vec<Diagnostic>) -> Vec<Diagnostic> {
    let key = |d: &Diagnostic| (d.range.start, d.code);
    if diags.len() < 256 {
        diags.sort_by_key(key);
        return diags;
    }
    diags.sort_by_cached_key(key);
    diags
}

/// Above this many objects in one file, they are checked in parallel.
const PARALLEL_OBJECTS: usize = 64;

/// What a suppression reaches: a document, a line of one, or an object of one.
#[derive(PartialEq, Eq, Hash)]
enum Reach {
    Document(usize),
    Line(usize, usize),
    Object(usize, u32),
}

/// Who a diagnostic belongs to, for annotation suppressions: (object root, container).
type Owner<'y> = Option<(u32, Option<&'y str>)>;

/// What one object contributed: its diagnostics with their owners, the suppressions its
/// annotations declare, and how many containers it has.
struct ObjectFindings<'y> {
    diags: Vec<Diagnostic>,
    owners: Vec<Owner<'y>>,
    suppressions: Vec<Suppression>,
    containers: usize,
    assumed_go: usize,
    unknown_runtime: usize,
    self_sizing: usize,
}

/// The checks of the selected rules, by what they judge.
#[derive(Default)]
struct Rules {
    file: Vec<checks::FileCheck>,
    object: Vec<checks::ObjectCheck>,
    container: Vec<(checks::ContainerCheck, checks::Scope)>,
    suppressions: Vec<checks::SuppressionCheck>,
}

impl Rules {
    /// The checks of the rules that run on a file: selected, not off in the config, and not
    /// among the file's `ignored` (its `per-file-ignores`).
    fn enabled(sel: &Selection, cfg: &Config, ignored: &[Code]) -> Rules {
        let mut rules = Rules::default();
        let runs = |r: &&registry::Rule| sel.enabled(r.code, cfg) && !ignored.contains(&r.code);
        for rule in RULES.iter().filter(runs) {
            for check in checks::of(rule.code) {
                match *check {
                    Check::File(f) => rules.file.push(f),
                    Check::Object(f) => rules.object.push(f),
                    Check::Container(f, scope) => rules.container.push((f, scope)),
                    Check::Suppressions(f) => rules.suppressions.push(f),
                }
            }
        }
        rules
    }
}

/// What every object of one file is checked against.
struct ObjectChecker<'f, 'y> {
    y: &'f Yaml<'y>,
    src: &'f Source,
    cfg: &'f Config,
    /// The linted file, when it is one, and the project around it: `ko://` images find their
    /// Go source from here.
    around: crate::runtime::Around<'f>,
    /// The file is a Kustomize patch (a partial object), with what it patches: a container the
    /// base does not have is whole.
    partial: Option<Arc<crate::k8s::kustomize::Patch>>,
    fx: &'f crate::edit::emit::Emitter<'f, 'y>,
    limit_ranges: &'f [LimitRange<'f>],
    /// Every VPA of the run; each object keeps those that target it.
    vpas: &'f [&'f Vpa],
    config_maps: &'f [ConfigMap],
    rules: &'f Rules,
    templates: &'f [Option<Arc<str>>],
}

impl ObjectChecker<'_, '_> {
    fn check_object(&self, doc: usize, obj: &Object) -> ObjectFindings<'_> {
        let ObjectChecker {
            y,
            src,
            cfg,
            around,
            ref partial,
            fx,
            limit_ranges,
            vpas,
            config_maps,
            rules,
            templates,
        } = *self;
        let mut out = ObjectFindings {
            diags: Vec::new(),
            owners: Vec::new(),
            suppressions: Vec::new(),
            containers: 0,
            assumed_go: 0,
            unknown_runtime: 0,
            self_sizing: 0,
        };
        let diags = &mut out.diags;
        let on_object = crate::rules::ObjectCtx { y, object: obj };
        for check in &rules.object {
            check(&on_object, diags);
        }
        out.owners.resize(diags.len(), Some((obj.root, None)));
        let Some(spec) = k8s::pod_spec(y, obj, &cfg.pod_spec_paths) else {
            finish(diags, doc, obj, templates);
            return out;
        };
        // The pod's `annotations` mappings, found once for its suppressions and every container.
        let annotations = k8s::annotation_maps(y, obj, spec.template_metadata);
        annotation_suppressions(y, obj, &annotations, doc, &mut out.suppressions);
        let pod = Pod::read(y, spec);
        let ns = obj.effective_namespace();
        // Another file's LimitRange reaches only workloads that name its namespace (see
        // `k8s::index`).
        let lrs: Vec<&LimitRange> = limit_ranges
            .iter()
            .filter(|l| l.namespace == ns && (l.file.is_none() || obj.namespace.is_some()))
            .collect();
        let vpas: Vec<&Vpa> = vpas.iter().copied().filter(|v| v.targets(obj)).collect();
        let whole_cores = std::cell::OnceCell::new();
        for c in &pod.containers {
            let partial = partial
                .as_ref()
                .is_some_and(|p| p.partial(obj.kind, obj.name, c.name));
            out.containers += 1;
            let start = diags.len();
            let cx = ContainerCtx {
                y,
                src,
                cfg,
                object: obj,
                pod: &pod,
                c,
                eff: pod.effective(c, &lrs),
                go: GoView::decide_in_pod(
                    y,
                    &annotations,
                    c,
                    cfg,
                    around,
                    crate::runtime::release_label(
                        y,
                        [spec.template_metadata, obj.metadata],
                        &pod,
                        c,
                    ),
                ),
                go_note: Default::default(),
                whole_cores: &whole_cores,
                limit_ranges: &lrs,
                vpas: &vpas,
                config_maps,
                fx,
            };
            let unsettled = cx.go.unsettled();
            for (check, scope) in &rules.container {
                if scope.takes(cx.go.is_go, partial) {
                    let before = diags.len();
                    check(&cx, diags);
                    if scope.go_only && unsettled {
                        diags[before..].iter_mut().for_each(keep_below_gate);
                    }
                }
            }
            out.assumed_go += usize::from(cx.go.is_go && cx.go.assumed());
            out.unknown_runtime += usize::from(unsettled);
            out.self_sizing += usize::from(
                cx.go.is_go
                    && (cx.go.sizes_gomaxprocs.is_some() || cx.go.sizes_gomemlimit.is_some()),
            );
            // One copy of the name and the runtime for all of the container's findings.
            let (name, runtime) = match diags.len() > start {
                true => (c.name.map(Arc::from), Some(Arc::new(cx.go.info()))),
                false => (None, None),
            };
            for d in &mut diags[start..] {
                d.container = name.clone();
                d.runtime = runtime.clone();
            }
            out.owners
                .extend((start..diags.len()).map(|_| Some((obj.root, c.name))));
        }
        finish(diags, doc, obj, templates);
        out
    }
}

/// A Go-only finding that rests on the assumption alone: info, and a fix that `fix` applies only
/// with `--unsafe-fixes`, so a Java service with no runtime hint gets no Go settings by default.
fn keep_below_gate(d: &mut Diagnostic) {
    d.below_gate = true;
    d.severity = crate::diagnostic::Severity::Info;
    if let Some(f) = &mut d.fix {
        f.applicability = crate::diagnostic::Applicability::Unsafe;
    }
}

fn finish(diags: &mut [Diagnostic], doc: usize, obj: &Object, templates: &[Option<Arc<str>>]) {
    let mut reference = None;
    let template = templates.get(doc).and_then(Option::as_ref);
    for d in diags {
        d.document = doc;
        d.source_template = template.cloned();
        if d.object.is_none() {
            let r = reference.get_or_insert_with(|| Arc::new(obj.reference()));
            d.object = Some(Arc::clone(r));
        }
    }
}

fn annotation_suppressions(
    y: &Yaml,
    obj: &Object,
    maps: &[Option<crate::yaml::NodeId>; 2],
    doc: usize,
    out: &mut Vec<Suppression>,
) {
    let mut add = |value: NodeIdStr, container: Option<String>| {
        out.push(Suppression {
            scope: Scope::Object {
                doc,
                object: obj.root,
                container,
            },
            codes: suppress::parse_codes(value.0),
            span: y.span(value.1),
            doc,
        });
    };
    if let Some(v) = k8s::annotation_in(y, maps, "golint-k8s.io/ignore") {
        add(v, None);
    }
    // Per-container annotations: one key per container name that appears in the pod.
    for &ann in maps.iter().flatten() {
        for (k, v) in y.entries(ann) {
            let Some(name) = y
                .str(k)
                .and_then(|k| k.strip_prefix("golint-k8s.io/ignore."))
            else {
                continue;
            };
            if let Some(text) = y.str(v) {
                add((text, v), Some(name.to_string()));
            }
        }
    }
}

type NodeIdStr<'y> = (&'y str, yaml::NodeId);

/// Each document's Helm `# Source:` template, if it has one: one copy, shared by its findings.
pub fn source_templates(text: &str, y: &Yaml) -> Vec<Option<Arc<str>>> {
    let mut out = vec![None; y.docs.len()];
    for c in &y.comments {
        let text = &text[c.span.clone()];
        if let Some(path) = text.strip_prefix("# Source: ") {
            if let Some(slot) = out.get_mut(c.doc) {
                if slot.is_none() {
                    *slot = Some(Arc::from(path.trim()));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostic::Severity;

    #[test]
    fn sorting_by_permutation_keeps_the_stable_order() {
        // Many diagnostics sharing positions and codes, told apart by their messages.
        let codes = [Code::GK101, Code::GK203, Code::GK102, Code::GK401];
        let diags: Vec<Diagnostic> = (0..1000)
            .map(|i| {
                let start = (i * 7919) % 97;
                Diagnostic::new(
                    codes[(i * 31) % 4],
                    Severity::Warning,
                    start..start + 1,
                    format!("{i}"),
                )
            })
            .collect();
        let mut want = diags.clone();
        want.sort_by_key(|d| (d.range.start, d.code));
        let got = sort_diagnostics(diags);
        let messages = |v: &[Diagnostic]| v.iter().map(|d| d.message.clone()).collect::<Vec<_>>();
        assert_eq!(messages(&got), messages(&want));
    }

    #[test]
    fn only_manifests_are_judged() {
        let lint = |text: &str| {
            let src = Source::from_text(Origin::Stdin("x.yaml".into()), text.into());
            let r = lint_source(src, &Config::default(), &Selection::default());
            let codes: Vec<Code> = r.findings.iter().map(|f| f.diagnostic.code).collect();
            (codes, r.skipped.is_some())
        };
        // A broken manifest keeps its GK000.
        assert_eq!(
            lint("apiVersion: v1\nkind: Pod\nspec: [\n"),
            (vec![Code::GK000], false)
        );
        // Its keys may be quoted or follow the document marker.
        assert_eq!(
            lint("--- \"apiVersion\": v1\n'kind' : Pod\nspec: [\n"),
            (vec![Code::GK000], false)
        );
        // Other YAML that does not parse is skipped, and says so.
        assert_eq!(lint("name: [\n"), (vec![], true));
        // Even when it names both keys deeper in: they are another object's fields.
        assert_eq!(
            lint("steps:\n- params:\n    apiVersion: v1\n    kind: Pod\n  x: [\n"),
            (vec![], true)
        );
        // Other YAML that parses is not judged, not even for duplicate keys.
        assert_eq!(lint("name: ci\nname: cd\n"), (vec![], false));
        // A manifest with a duplicate key is.
        assert_eq!(
            lint("apiVersion: v1\nkind: Pod\nkind: Pod\n"),
            (vec![Code::GK001], false)
        );
        // Bytes that are not text, with no manifest keys in sight: skipped too.
        let failure = Source::decode(Origin::Stdin("x.yaml".into()), b"a: \xff\n".to_vec())
            .expect_err("not UTF-8");
        let r = decode_failure(*failure);
        assert!(r.findings.is_empty() && r.skipped.is_some(), "{r:?}");
    }
}

/// The project a run owns, as the linter sees it: tested here, in the layer above both.
#[cfg(test)]
mod project_reads {

    /// A run keeps what it read (every container of a tree asks about the same Dockerfiles) until
    /// it is told a file changed; another run in the same process reads the file as it is.
    #[test]
    fn a_project_keeps_its_reads_until_told_and_runs_do_not_share_them() {
        use crate::source::{Origin, Source};
        let dir = tempfile::tempdir().unwrap();
        let manifest = dir.path().join("deploy.yaml");
        let dockerfile = dir.path().join("Dockerfile");
        std::fs::write(
            &dockerfile,
            "FROM python:3.12-slim\nCMD [\"python\", \"app.py\"]\n",
        )
        .unwrap();
        let text = "kind: Pod\napiVersion: v1\nmetadata: {name: a}\nspec:\n  containers:\n  - {name: a, image: reg.example/a:1}\n";
        let language = |project: &crate::project::Project| {
            let src = Source::from_text(Origin::File(manifest.clone()), text.to_string());
            let rows = crate::lint::containers(&src, &crate::config::Config::default(), project);
            rows[0].runtime.language.clone().unwrap_or_default()
        };
        let mut session = crate::project::Project::default();
        assert_eq!(language(&session), "python");
        std::fs::write(&dockerfile, "FROM golang:1.24 AS b\nRUN go build -o /app .\nFROM scratch\nCOPY --from=b /app /app\nENTRYPOINT [\"/app\"]\n").unwrap();
        assert_eq!(language(&session), "python", "read once per run");
        assert_eq!(
            language(&crate::project::Project::default()),
            "go",
            "a new run reads it again"
        );
        session.forget_files();
        assert_eq!(language(&session), "go");
    }
}
