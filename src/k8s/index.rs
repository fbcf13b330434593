//! The objects that act across files. A LimitRange gives defaults to every pod of its namespace and
//! a VerticalPodAutoscaler resizes the workload it targets, wherever each is written: a repository
//! often keeps them in a file of their own (`namespace.yaml`, `vpa.yaml`), apart from the
//! Deployments they change.
//!
//! Before the lint, one cheap pass collects them from every linted file: a file is parsed only if
//! its bytes name one of these kinds, so most files cost one substring search. Each file's own
//! objects are read again from its tree when it is linted (with their nodes, for related
//! locations); the index lends it those of the other files.
//!
//! Across files, namespaces must be written out. An object without `metadata.namespace` lands in
//! whatever namespace it is applied to, and a tree of examples or of unrelated charts applies its
//! files to different ones: on a corpus of 935 files from public repositories, letting the
//! tutorials' namespace-less LimitRanges reach every namespace-less Deployment nearly doubled the
//! findings (1,248 to 2,239), nearly all on other repositories' manifests. So a LimitRange of
//! another file applies only to workloads that name its namespace. A VPA names its target, so one
//! without a namespace still applies to a namespace-less workload in the same directory (a
//! Kustomize base keeps both there and sets the namespace for both); within one file, both kinds
//! apply as before.

use memchr::memmem;

use super::limitrange::{LimitRange, Stored};
use super::vpa::Vpa;
use super::Object;
use crate::source::Source;

#[derive(Debug, Default)]
pub struct Index {
    limit_ranges: Vec<Stored>,
    vpas: Vec<Vpa>,
}

/// The kinds the index keeps. A file whose bytes do not contain one of these words has none of
/// them (a kind is written out in full, in YAML and JSON alike).
const KINDS: [&str; 2] = ["LimitRange", "VerticalPodAutoscaler"];

impl Index {
    /// Whether a file's bytes may hold an object the index keeps.
    pub fn may_hold(bytes: &[u8]) -> bool {
        // Built once: building a searcher cost as much as searching a small file.
        static FINDERS: std::sync::LazyLock<[memmem::Finder<'static>; 2]> =
            std::sync::LazyLock::new(|| KINDS.map(memmem::Finder::new));
        FINDERS.iter().any(|f| f.find(bytes).is_some())
    }

    /// The LimitRanges and VPAs of one decoded source.
    pub fn of(src: &Source) -> Index {
        let mut index = Index::default();
        if !Index::may_hold(src.text.as_bytes()) {
            return index;
        }
        let text = src.yaml_text();
        // A large stream is linted a group of documents at a time: only the documents that name
        // a kind are parsed here, so its whole tree is never built (the linter's `stream` module).
        let pieces = match text.len() > crate::source::STREAM_ABOVE {
            true => crate::yaml::documents_naming(text, &KINDS),
            false => std::iter::once(0..text.len()).collect(),
        };
        for r in pieces {
            let y = crate::yaml::parse(&text[r.clone()], src.bom_len + r.start);
            for root in y.docs.iter().filter_map(|d| d.root) {
                for obj in super::objects(&y, root) {
                    index.add(&y, &obj, &src.name);
                }
            }
        }
        index
    }

    fn add(&mut self, y: &crate::yaml::Yaml, obj: &Object, file: &str) {
        if let Some(lr) = LimitRange::read(y, obj) {
            if obj.namespace.is_some() {
                self.limit_ranges.push(lr.store(file));
            }
        } else if let Some(mut vpa) = Vpa::read(y, obj) {
            vpa.file = Some(file.to_string());
            self.vpas.push(vpa);
        }
    }

    /// Both indexes in one (files are indexed in parallel); `self`'s entries first.
    pub fn merge(mut self, other: Index) -> Index {
        self.limit_ranges.extend(other.limit_ranges);
        self.vpas.extend(other.vpas);
        self
    }

    /// The LimitRanges of every file but `file` (its own are read from its tree).
    pub fn limit_ranges_besides<'a>(
        &'a self,
        file: &'a str,
    ) -> impl Iterator<Item = LimitRange<'a>> + 'a {
        self.limit_ranges
            .iter()
            .filter(move |l| l.file != file)
            .map(Stored::lend)
    }

    /// The VPAs of every file but `file` that may reach it: those with a namespace, and those
    /// without one in `file`'s directory.
    pub fn vpas_besides<'a>(&'a self, file: &'a str) -> impl Iterator<Item = &'a Vpa> + 'a {
        let dir = |f: &'a str| std::path::Path::new(f).parent();
        self.vpas.iter().filter(move |v| match v.file.as_deref() {
            Some(f) if f == file => false,
            Some(f) => v.namespaced || dir(f) == dir(file),
            None => true,
        })
    }

    /// How many objects it holds, for `--verbose` and the tests.
    pub fn count(&self) -> usize {
        self.limit_ranges.len() + self.vpas.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::Origin;

    fn source(name: &str, text: &str) -> Source {
        Source::from_text(Origin::Stdin(name.to_string()), text.to_string())
    }

    #[test]
    fn only_files_that_name_a_kind_are_parsed_and_each_entry_names_its_file() {
        let lr = source(
            "ns.yaml",
            "apiVersion: v1\nkind: LimitRange\nmetadata: {name: mem, namespace: shop}\nspec:\n  limits:\n    - type: Container\n      default: {memory: 1Gi}\n",
        );
        let vpa = source(
            "vpa.json",
            r#"{"apiVersion": "autoscaling.k8s.io/v1", "kind": "VerticalPodAutoscaler", "metadata": {"name": "v"}, "spec": {"targetRef": {"kind": "Deployment", "name": "api"}}}"#,
        );
        let plain = source(
            "app.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
        );
        assert!(!Index::may_hold(plain.text.as_bytes()));
        let index = [&lr, &vpa, &plain]
            .iter()
            .map(|s| Index::of(s))
            .fold(Index::default(), Index::merge);
        assert_eq!(index.count(), 2);
        let lent: Vec<_> = index.limit_ranges_besides("app.yaml").collect();
        assert_eq!(lent.len(), 1);
        let limit = lent[0]
            .default_limit(crate::k8s::container::Resource::Memory)
            .unwrap();
        assert_eq!(limit.text, "1Gi");
        assert_eq!(limit.node, None);
        assert_eq!(index.limit_ranges_besides("ns.yaml").count(), 0);
        assert_eq!(index.vpas_besides("app.yaml").count(), 1);
        assert_eq!(index.vpas_besides("vpa.json").count(), 0);
    }
}
