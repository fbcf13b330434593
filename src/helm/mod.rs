//! Helm: lint what a chart renders and point every finding back at the chart.
//!
//! Linters read rendered output and leave the user to find which template, and which values key,
//! produced an offending line. Helm marks each rendered document with `# Source:
//! chart/templates/x.yaml`, which [`crate::lint`] copies into every finding. With the chart's
//! sources at hand (`--helm CHART` renders it; `--chart DIR` names it for rendered standard
//! input) this module goes further: it finds the template line that writes the offending key and
//! the values key that fills it ([`template`]), or says why it could not, and for `fix` turns the
//! fixed rendering into the values change that would produce it ([`suggest`]).

pub mod suggest;
pub mod template;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::diagnostic::{ChartOrigin, Diagnostic, Provenance};
use crate::fix::engine::PathSeg;
use crate::yaml::{NodeKind, Yaml};
use template::Template;

/// A chart on disk whose renders are being linted.
#[derive(Debug, Clone)]
pub struct Chart {
    /// The chart directory as the user named it (paths in output start with it).
    pub root: PathBuf,
    /// `name` from Chart.yaml: the first component of every `# Source:` path.
    pub name: String,
}

impl Chart {
    /// Open a chart directory: it must hold a Chart.yaml with a name.
    pub fn open(root: &Path) -> Result<Chart, String> {
        let meta = root.join("Chart.yaml");
        let text = std::fs::read_to_string(&meta).map_err(|e| {
            format!(
                "{} is not a Helm chart: cannot read {}: {e}",
                root.display(),
                meta.display()
            )
        })?;
        let y = crate::yaml::parse(&text, 0);
        let name = y
            .docs
            .first()
            .and_then(|d| d.root)
            .and_then(|r| y.get_str(r, "name"))
            .map(str::to_string)
            .ok_or_else(|| format!("{} has no `name`", meta.display()))?;
        Ok(Chart {
            root: root.to_path_buf(),
            name,
        })
    }

    /// The template file behind a `# Source:` path, and the values prefix of its (sub)chart:
    /// `app/charts/db/templates/x.yaml` is `charts/db/templates/x.yaml` under the chart, and
    /// its values live under `db.` in the parent's values.
    pub fn locate(&self, source: &str) -> Result<(PathBuf, String), String> {
        let rest = source
            .strip_prefix(&self.name)
            .and_then(|r| r.strip_prefix('/'))
            .ok_or_else(|| format!("{source} is not from the chart {}", self.name))?;
        let mut prefix = String::new();
        let parts: Vec<&str> = rest.split('/').collect();
        let mut i = 0;
        while i + 1 < parts.len() && parts[i] == "charts" {
            prefix.push_str(parts[i + 1]);
            prefix.push('.');
            i += 2;
        }
        let file = self.root.join(rest);
        if !file.is_file() {
            return Err(format!(
                "{} is not in the chart's sources (a packaged subchart?)",
                file.display()
            ));
        }
        Ok((file, prefix))
    }
}

/// Templates read so far, by `# Source:` path; a template that cannot be read maps nothing.
#[derive(Default)]
pub struct Templates {
    cache: HashMap<String, Result<(PathBuf, String, Template), String>>,
}

impl Templates {
    /// Map a rendered path of a document rendered from `source`.
    pub fn origin(
        &mut self,
        chart: &Chart,
        source: &str,
        path: &[PathSeg],
        names: &[Option<String>],
    ) -> ChartOrigin {
        let entry = self.cache.entry(source.to_string()).or_insert_with(|| {
            let (file, prefix) = chart.locate(source)?;
            let text = std::fs::read_to_string(&file)
                .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
            Ok((file, prefix, Template::scan(&text)))
        });
        match entry {
            Err(e) => ChartOrigin {
                file: chart
                    .root
                    .join(source.split_once('/').map_or(source, |x| x.1))
                    .display()
                    .to_string(),
                line: None,
                values_key: None,
                unmapped: Some(e.clone()),
            },
            Ok((file, prefix, t)) => match t.map(path, names) {
                Ok(m) => ChartOrigin {
                    file: file.display().to_string(),
                    line: Some(m.line),
                    values_key: m.values_key.map(|k| format!("{prefix}{k}")),
                    unmapped: None,
                },
                Err(e) => ChartOrigin {
                    file: file.display().to_string(),
                    line: None,
                    values_key: None,
                    unmapped: Some(e),
                },
            },
        }
    }
}

/// Give every finding of a rendered file that names its template the template line and values
/// key it comes from (`y` is the rendered file's tree; see [`crate::lint::lint_source_with`]).
pub fn annotate(y: &Yaml, diags: &mut [Diagnostic], chart: &Chart) {
    let mut templates = Templates::default();
    for d in diags {
        let Some(source) = d.source_template.clone() else {
            continue;
        };
        let (path, names) = path_to(y, d.document, d.range.start);
        d.provenance = Some(Box::new(Provenance::Chart(
            templates.origin(chart, &source, &path, &names),
        )));
    }
}

/// The keys and indices from a document's root down to the node at `pos`, and for each index the
/// `name` of that item (containers and env entries are told apart by name). A position on a key
/// ends the path at that key.
pub fn path_to(y: &Yaml, doc: usize, pos: usize) -> (Vec<PathSeg>, Vec<Option<String>>) {
    let mut path = Vec::new();
    let mut names = Vec::new();
    let Some(mut node) = y.docs.get(doc).and_then(|d| d.root) else {
        return (path, names);
    };
    'down: loop {
        match &y.node(node).kind {
            NodeKind::Mapping { entries, .. } => {
                for &(k, v) in entries {
                    let key = || PathSeg::Key(y.str(k).unwrap_or("").to_string());
                    if y.span(k).contains(&pos) {
                        path.push(key());
                        return (path, names);
                    }
                    let vs = y.span(v);
                    if vs.start <= pos && pos < vs.end.max(vs.start + 1) {
                        path.push(key());
                        node = v;
                        continue 'down;
                    }
                }
            }
            NodeKind::Sequence { items, .. } => {
                for (i, &item) in items.iter().enumerate() {
                    let s = y.span(item);
                    if s.start <= pos && pos < s.end.max(s.start + 1) {
                        path.push(PathSeg::Index(i));
                        names.push(item_name(y, item));
                        node = item;
                        continue 'down;
                    }
                }
            }
            _ => {}
        }
        return (path, names);
    }
}

/// The `name` of a sequence item that is a mapping (a container, an env entry).
pub(crate) fn item_name(y: &Yaml, item: crate::yaml::NodeId) -> Option<String> {
    if !y.is_mapping(item) {
        return None;
    }
    y.get_str(item, "name").map(str::to_string)
}

/// What running `helm template` gave: the rendered text, or why there is none.
pub fn render(
    chart: &Path,
    release: &str,
    values: &[PathBuf],
    sets: &[String],
) -> Result<Vec<u8>, String> {
    let Some(helm) = find_on_path("helm") else {
        return Err(format!(
            "rendering a Helm chart runs `helm template`, and no `helm` was found on PATH. Install Helm 3 (https://helm.sh/docs/intro/install/; with Go: `go install helm.sh/helm/v3/cmd/helm@v3.22.0`), or render the chart yourself: `helm template {release} {} | golint-k8s lint -`",
            chart.display()
        ));
    };
    let mut cmd = Command::new(helm);
    cmd.arg("template").arg(release).arg(chart);
    for v in values {
        cmd.arg("--values").arg(v);
    }
    for s in sets {
        cmd.arg("--set").arg(s);
    }
    let out = cmd
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .stdout(Stdio::piped())
        .output()
        .map_err(|e| format!("cannot run helm: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "`helm template` failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(out.stdout)
}

/// The program `name` as PATH finds it.
pub(crate) fn find_on_path(name: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_end_at_the_key_or_value_under_the_position() {
        let text = "spec:\n  containers:\n    - name: a\n    - name: b\n      resources:\n        limits:\n          cpu: 2\n";
        let y = crate::yaml::parse(text, 0);
        let at = text.find("cpu: 2").unwrap();
        let (p, names) = path_to(&y, 0, at + 5);
        assert_eq!(
            p,
            vec![
                PathSeg::Key("spec".into()),
                PathSeg::Key("containers".into()),
                PathSeg::Index(1),
                PathSeg::Key("resources".into()),
                PathSeg::Key("limits".into()),
                PathSeg::Key("cpu".into()),
            ]
        );
        assert_eq!(names, vec![Some("b".to_string())]);
        let (p, _) = path_to(&y, 0, text.find("resources").unwrap());
        assert_eq!(p.last(), Some(&PathSeg::Key("resources".into())));
    }

    #[test]
    fn subchart_sources_get_a_values_prefix() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("Chart.yaml"),
            "apiVersion: v2\nname: app\nversion: 1.0.0\n",
        )
        .unwrap();
        std::fs::create_dir_all(dir.path().join("charts/db/templates")).unwrap();
        std::fs::write(dir.path().join("charts/db/templates/s.yaml"), "a: 1\n").unwrap();
        let c = Chart::open(dir.path()).unwrap();
        let (f, prefix) = c.locate("app/charts/db/templates/s.yaml").unwrap();
        assert!(f.ends_with("charts/db/templates/s.yaml"));
        assert_eq!(prefix, "db.");
        assert!(c.locate("other/templates/x.yaml").is_err());
        assert!(c.locate("app/templates/missing.yaml").is_err());
    }
}
