//! The Go source behind a `ko://` image. ko builds the image from a main package named by its
//! import path, and that package's module is often in the same repository as the manifests. Its
//! go.mod's `go` line decides the runtime's defaults (Go 1.25's container-aware GOMAXPROCS
//! applies only to main modules that say `go 1.25` or later), its `godebug` lines and the main
//! package's `//go:debug` directives override them, and the main package's imports show whether
//! it links a library that sizes GOMAXPROCS or GOMEMLIMIT itself.
//!
//! Only files are read, never a network or a Go toolchain; what is not found is simply unknown.

use crate::config::GoVersion;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// What the main package of a `ko://` image says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MainPackage {
    /// The go.mod, as a path from where the manifest was named.
    pub gomod: String,
    /// The `go` line.
    pub go: Option<GoVersion>,
    /// `godebug` settings of go.mod, then `//go:debug` directives of the main package (the
    /// directives win, as they do in the build).
    pub godebug: Vec<(String, String)>,
    /// Import paths of the main package's non-test files.
    pub imports: Vec<String>,
}

impl MainPackage {
    /// The last setting of a GODEBUG key in the build's defaults.
    pub fn godebug(&self, key: &str) -> Option<&str> {
        self.godebug
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// The main packages of `ko://` images a run has looked up: go.mod files are read once per
/// directory and import path, however many manifests name them. Owned by the run (see
/// [`crate::project::Project`]); a language server forgets it when a go.mod changes.
#[derive(Default)]
pub struct Modules(Mutex<HashMap<ManifestDirAndImport, Option<Arc<MainPackage>>>>);

/// A manifest's directory and a `ko://` import path named there.
type ManifestDirAndImport = (PathBuf, String);

impl Modules {
    /// Forget every go.mod read so far (one changed).
    pub fn forget(&mut self) {
        *self = Modules::default();
    }

    /// The main package of `ko://import/path` for a manifest at `manifest`: the nearest go.mod
    /// in the manifest's directory or its parents whose module is a prefix of the import path,
    /// then the nearest go.mod above the package directory itself (a nested module).
    pub fn main_package(&self, manifest: &Path, import_path: &str) -> Option<Arc<MainPackage>> {
        let dir = manifest.parent()?.to_path_buf();
        let key = (dir.clone(), import_path.to_string());
        if let Some(hit) = self.0.lock().ok()?.get(&key) {
            return hit.clone();
        }
        let found = find(&dir, import_path).map(Arc::new);
        if let Ok(mut c) = self.0.lock() {
            c.insert(key, found.clone());
        }
        found
    }
}

/// How far above a package directory its go.mod is looked for: the nearest go.mod above a
/// directory is its module's, as the go command decides.
const MODULE_DEPTH: usize = 8;

/// How far above a manifest the module of a `ko://` import is looked for: any repository's depth.
const SEARCH_DEPTH: usize = 32;

/// The main package in a directory (a Go service's Docker build context): the nearest go.mod at
/// or above it, and the directory's own Go files.
pub fn in_dir(dir: &Path) -> Option<MainPackage> {
    let (gomod_path, text) = crate::walk::ancestors(dir, MODULE_DEPTH)
        .iter()
        .find_map(|a| {
            let p = a.join("go.mod");
            std::fs::read_to_string(&p).ok().map(|t| (p, t))
        })?;
    Some(read_package(dir, gomod_path, &text))
}

fn find(dir: &Path, import_path: &str) -> Option<MainPackage> {
    let import_path = import_path.trim_end_matches('/');
    for ancestor in &crate::walk::ancestors(dir, SEARCH_DEPTH) {
        let ancestor = ancestor.as_path();
        let Ok(text) = std::fs::read_to_string(ancestor.join("go.mod")) else {
            continue;
        };
        let Some(module) = module_path(&text) else {
            continue;
        };
        let rest = if import_path == module {
            ""
        } else if let Some(r) = import_path.strip_prefix(&format!("{module}/")) {
            r
        } else {
            continue;
        };
        let pkg_dir = ancestor.join(rest);
        // A nested module between the package and this go.mod owns the package.
        let (gomod_path, gomod_text) = pkg_dir
            .ancestors()
            .take_while(|a| a.starts_with(ancestor) && *a != ancestor)
            .find_map(|a| {
                let p = a.join("go.mod");
                std::fs::read_to_string(&p).ok().map(|t| (p, t))
            })
            .unwrap_or((ancestor.join("go.mod"), text));
        return Some(read_package(&pkg_dir, gomod_path, &gomod_text));
    }
    // A main package of a dependency (`ko://knative.dev/pkg/…/cmd/migrate` from knative.dev/serving's
    // tree): ko runs `go build` in the working module, so that module is the main module and its
    // go.mod decides the runtime's defaults. The package's files are there only when vendored.
    for ancestor in &crate::walk::ancestors(dir, SEARCH_DEPTH) {
        let ancestor = ancestor.as_path();
        let gomod_path = ancestor.join("go.mod");
        let Ok(text) = std::fs::read_to_string(&gomod_path) else {
            continue;
        };
        if requires(&text, import_path) {
            let vendored = ancestor.join("vendor").join(import_path);
            return Some(read_package(&vendored, gomod_path, &text));
        }
    }
    None
}

/// Whether a go.mod requires the module that holds `import_path`.
fn requires(gomod: &str, import_path: &str) -> bool {
    lines(gomod).any(|l| {
        let l = l.strip_prefix("require").map_or(l, str::trim_start);
        let module = l.split_whitespace().next().unwrap_or("");
        !module.is_empty()
            && module != "("
            && (import_path == module || import_path.starts_with(&format!("{module}/")))
    })
}

/// A main package's facts: its go.mod's `go` and `godebug` lines, then its files' `//go:debug`
/// directives and imports.
fn read_package(pkg_dir: &Path, gomod_path: PathBuf, gomod_text: &str) -> MainPackage {
    let mut godebug = godebug_lines(gomod_text);
    let mut imports = Vec::new();
    if let Ok(entries) = std::fs::read_dir(pkg_dir) {
        let mut files: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.extension().is_some_and(|x| x == "go")
                    && !p.to_string_lossy().ends_with("_test.go")
            })
            .collect();
        files.sort();
        for f in files {
            if let Ok(src) = std::fs::read_to_string(&f) {
                godebug.extend(go_debug_directives(&src));
                imports.extend(go_imports(&src));
            }
        }
    }
    MainPackage {
        gomod: gomod_path
            .to_string_lossy()
            .trim_start_matches("./")
            .to_string(),
        go: go_line(gomod_text),
        godebug,
        imports,
    }
}

/// Lines of go.mod with comments removed.
fn lines(text: &str) -> impl Iterator<Item = &str> {
    text.lines()
        .map(|l| l.split("//").next().unwrap_or("").trim())
        .filter(|l| !l.is_empty())
}

pub(crate) fn module_path(text: &str) -> Option<&str> {
    lines(text)
        .find_map(|l| l.strip_prefix("module "))
        .map(|m| m.trim().trim_matches('"'))
}

fn go_line(text: &str) -> Option<GoVersion> {
    lines(text)
        .find_map(|l| l.strip_prefix("go "))
        .and_then(GoVersion::parse)
}

/// `godebug key=value` lines and `godebug ( … )` blocks.
fn godebug_lines(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut in_block = false;
    for l in lines(text) {
        let setting = if in_block {
            if l == ")" {
                in_block = false;
                continue;
            }
            l
        } else if let Some(rest) = l.strip_prefix("godebug") {
            let rest = rest.trim();
            if rest == "(" {
                in_block = true;
                continue;
            }
            rest
        } else {
            continue;
        };
        for kv in setting.split(',') {
            if let Some((k, v)) = kv.split_once('=') {
                out.push((k.trim().to_string(), v.trim().to_string()));
            }
        }
    }
    out
}

/// `//go:debug key=value` directives (they must come before the package clause).
fn go_debug_directives(src: &str) -> Vec<(String, String)> {
    src.lines()
        .filter_map(|l| l.trim().strip_prefix("//go:debug "))
        .flat_map(|s| s.split(','))
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect()
}

/// The import paths of a Go file: `import "x"`, `import name "x"` and `import ( … )` blocks, up
/// to the first declaration.
fn go_imports(src: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_block = false;
    for line in src.lines() {
        let l = line.trim();
        if in_block {
            if l.starts_with(')') {
                in_block = false;
            } else if let Some(p) = quoted(l) {
                out.push(p.to_string());
            }
            continue;
        }
        if let Some(rest) = l.strip_prefix("import") {
            let rest = rest.trim();
            if rest.starts_with('(') {
                in_block = true;
            } else if let Some(p) = quoted(rest) {
                out.push(p.to_string());
            }
        } else if l.starts_with("func ") || l.starts_with("var ") || l.starts_with("type ") {
            break;
        }
    }
    out
}

fn quoted(s: &str) -> Option<&str> {
    let start = s.find('"')? + 1;
    let end = start + s[start..].find('"')?;
    Some(&s[start..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_go_mod_and_main_package() {
        let gomod = "module example.com/app // the app\n\ngo 1.25.0\n\ntoolchain go1.25.3\n\ngodebug (\n\tcontainermaxprocs=0\n\tpanicnil=1\n)\ngodebug madvdontneed=1\nrequire go.uber.org/automaxprocs v1.6.0\n";
        assert_eq!(module_path(gomod), Some("example.com/app"));
        assert_eq!(go_line(gomod), Some(GoVersion::new(1, 25)));
        assert_eq!(
            godebug_lines(gomod),
            [
                ("containermaxprocs", "0"),
                ("panicnil", "1"),
                ("madvdontneed", "1")
            ]
            .map(|(k, v)| (k.to_string(), v.to_string()))
        );
        let main = "//go:debug updatemaxprocs=0\npackage main\n\nimport (\n\t\"fmt\"\n\t_ \"go.uber.org/automaxprocs\"\n\tsm \"knative.dev/pkg/injection/sharedmain\"\n)\nimport \"os\"\n\nfunc main() {}\nimport \"late\"\n";
        assert_eq!(
            go_imports(main),
            [
                "fmt",
                "go.uber.org/automaxprocs",
                "knative.dev/pkg/injection/sharedmain",
                "os"
            ]
        );
        assert_eq!(
            go_debug_directives(main),
            [("updatemaxprocs".to_string(), "0".to_string())]
        );
    }

    #[test]
    fn finds_the_module_of_an_import_path() {
        let root = tempfile::tempdir().unwrap();
        let r = root.path();
        std::fs::create_dir_all(r.join("config")).unwrap();
        std::fs::create_dir_all(r.join("cmd/api")).unwrap();
        std::fs::create_dir_all(r.join("tools/gen/cmd/x")).unwrap();
        std::fs::write(r.join("go.mod"), "module example.com/app\ngo 1.24\n").unwrap();
        std::fs::write(
            r.join("cmd/api/main.go"),
            "package main\nimport _ \"go.uber.org/automaxprocs\"\nfunc main() {}\n",
        )
        .unwrap();
        std::fs::write(
            r.join("cmd/api/main_test.go"),
            "package main\nimport \"testing\"\n",
        )
        .unwrap();
        std::fs::write(
            r.join("tools/gen/go.mod"),
            "module example.com/app/tools/gen\ngo 1.26\n",
        )
        .unwrap();
        let modules = Modules::default();
        let main_package = |m: &Path, i: &str| modules.main_package(m, i);
        let manifest = r.join("config/deploy.yaml");
        let api = main_package(&manifest, "example.com/app/cmd/api").unwrap();
        assert_eq!(api.go, Some(GoVersion::new(1, 24)));
        assert_eq!(api.imports, ["go.uber.org/automaxprocs"]);
        let gen = main_package(&manifest, "example.com/app/tools/gen/cmd/x").unwrap();
        assert_eq!(gen.go, Some(GoVersion::new(1, 26)));
        assert!(main_package(&manifest, "example.com/other/cmd").is_none());
        assert!(main_package(&manifest, "example.com/application").is_none());
        // A main package of a required module is built in this one: its go line decides.
        std::fs::write(
            r.join("go.mod"),
            "module example.com/app\ngo 1.25.0\nrequire (\n\tknative.dev/pkg v0.0.0-2026\n)\n",
        )
        .unwrap();
        let other = r.join("other/deploy.yaml");
        let dep = main_package(&other, "knative.dev/pkg/storageversion/cmd/migrate").unwrap();
        assert_eq!(dep.go, Some(GoVersion::new(1, 25)));
        assert!(main_package(&other, "knative.dev/pkgs/cmd").is_none());
    }
}
