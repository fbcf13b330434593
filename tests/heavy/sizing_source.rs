//! The catalog's GOMAXPROCS formulas are read from the programs' own source: each formula names
//! lines of files at releases (`evidence` in `src/go/catalog.json`), and this test downloads
//! each of those module versions through the Go module proxy (`go mod download -json`) and
//! checks that the line is there, or, where the evidence says `absent`, that it is not (the
//! release before a change).
//!
//! Modules are cached under the user cache directory (`golint-k8s/sizing-source`).

use crate::common;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;

use golint_k8s::go::catalog::{Evidence, CATALOG};

/// Whether the module proxy can serve `version` of `module` at all: a tag of major version 2
/// or more belongs to the module path ending in `/vN`, so the proxy has no such version of a
/// path without it.
fn servable(module: &str, version: &str) -> bool {
    let major: u32 = version
        .trim_start_matches('v')
        .split('.')
        .next()
        .and_then(|m| m.parse().ok())
        .unwrap_or(0);
    major < 2 || module.ends_with(&format!("/v{major}"))
}

/// The module's directory at `version`, downloaded now or earlier.
fn download(cache: &std::path::Path, module: &str, version: &str) -> Result<PathBuf, String> {
    let out = Command::new("go")
        .args(["mod", "download", "-json", &format!("{module}@{version}")])
        .env("GOMODCACHE", cache.join("mod"))
        .env("GOFLAGS", "-modcacherw")
        // The files are read, never built, and a proxy other than the public one may lack the
        // checksum database's answers for old releases.
        .env("GOSUMDB", "off")
        .env("GOTOOLCHAIN", "local")
        .current_dir(cache)
        .output()
        .map_err(|e| format!("go mod download: {e}"))?;
    let info: serde_json::Value = serde_json::from_slice(&out.stdout)
        .map_err(|e| format!("go mod download {module}@{version}: {e}"))?;
    match (info["Dir"].as_str(), info["Error"].as_str()) {
        (Some(dir), _) => Ok(PathBuf::from(dir)),
        (_, Some(e)) => Err(e.to_string()),
        _ => Err(String::from_utf8_lossy(&out.stderr).into_owned()),
    }
}

#[test]
fn gomaxprocs_formulas_match_the_source_at_their_releases() {
    if !common::go_available() {
        common::did_not_run("sizing_source: did not run: no go command on PATH");
        return;
    }
    let cache = common::user_cache("sizing-source");
    std::fs::create_dir_all(&cache).unwrap();
    // Evidence by module version, so each is downloaded once.
    let mut by_version: BTreeMap<(&str, &str), Vec<(&str, &Evidence)>> = BTreeMap::new();
    for (name, items) in &CATALOG.formulas {
        for r in items {
            for e in &r.evidence {
                by_version
                    .entry((e.module.as_str(), e.version.as_str()))
                    .or_default()
                    .push((name.as_str(), e));
            }
        }
    }
    let mut checked = 0;
    let mut not_servable = Vec::new();
    let mut not_served = Vec::new();
    let mut wrong = Vec::new();
    for ((module, version), evidence) in &by_version {
        if !servable(module, version) {
            not_servable.push(format!("{module}@{version}"));
            continue;
        }
        let dir = match download(&cache, module, version) {
            Ok(d) => d,
            // A proxy that does not carry every version (a private mirror) says so.
            Err(e) if e.contains("not available") || e.contains("404 Not Found") => {
                not_served.push(format!("{module}@{version}"));
                continue;
            }
            Err(e) => {
                wrong.push(format!("{module}@{version}: {e}"));
                continue;
            }
        };
        for (name, e) in evidence {
            // A file that is not there holds no line.
            let text = std::fs::read_to_string(dir.join(&e.file)).unwrap_or_default();
            let found = text.lines().any(|l| l.trim() == e.line);
            checked += 1;
            if found == e.absent {
                wrong.push(format!(
                    "{name}: {module}@{version} {}: {:?} is {}",
                    e.file,
                    e.line,
                    if found { "there" } else { "not there" }
                ));
            }
        }
    }
    println!(
        "sizing_source: {checked} lines checked in {} module versions; not servable by the module proxy, read at the tag in the repository instead: {}",
        by_version.len() - not_servable.len() - not_served.len(),
        if not_servable.is_empty() {
            "none".to_string()
        } else {
            not_servable.join(", ")
        }
    );
    // A proxy that filters what it serves (a mirror) refuses some releases: those were read at
    // their tags in the repository instead, and are named here. A proxy that serves almost
    // nothing checks nothing, which must not pass.
    if !not_served.is_empty() {
        println!(
            "sizing_source: the module proxy did not serve {}",
            not_served.join(", ")
        );
    }
    assert!(
        not_served.len() * 3 <= by_version.len(),
        "the module proxy served too few of the versions: it refused {}",
        not_served.join(", ")
    );
    assert!(checked > 20, "only {checked} lines checked");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
