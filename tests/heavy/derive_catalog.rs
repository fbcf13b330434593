//! The catalog's ranges against the programs' own releases: `scripts/derive-catalog.py --check`
//! re-reads a sample of releases at the ranges' boundaries through the Go module proxy (go.mod
//! `go` lines, the main packages' imports) and must agree with `src/go/catalog-derived.json`,
//! which a unit test holds the catalog to. A copy of the file with one boundary moved must fail.

use crate::common;
use std::path::Path;
use std::process::Command;

/// Releases on both sides of a boundary, for programs whose module versions are their releases.
const SAMPLE: &[(&str, &str)] = &[
    // go 1.25 on the 3.5 branch (3.5.28, not on the proxy, is the first), not on 3.6 until 3.6.9.
    ("etcd", "3.5.27,3.6.8,3.6.9"),
    // automaxprocs dropped in 2.12.5; the 2.11 branch reached go 1.25 in 2.11.14.
    ("NATS server", "2.11.14,2.12.4,2.12.5"),
    ("Thanos", "0.41.0,0.42.0"),
    ("KEDA", "2.19.0,2.20.0"),
    // Read through the proxy only (the repositories are too large to clone): the go line from
    // each release's .mod file, the imports from its zip. Vitess's releases are v0.N.P there.
    ("Kubernetes", "1.34.4,1.35.0"),
    ("Vitess", "22.0.4,23.0.0"),
    ("Consul", "1.21.4,1.21.5"),
];

/// How many of the sampled releases were read; the proxy refuses some versions it does not hold.
fn checked(stdout: &str, program: &str) -> usize {
    let prefix = format!("{program}: ");
    stdout
        .lines()
        .find_map(|l| {
            l.strip_prefix(&prefix)?
                .strip_suffix(" refused by the module proxy")
        })
        .and_then(|l| l.split(' ').next()?.parse().ok())
        .unwrap_or_else(|| panic!("{program}: no count of releases checked in {stdout}"))
}

fn derive(data: &Path, program: &str, versions: &str) -> std::process::Output {
    let cache = common::user_cache("derive-catalog-mod");
    Command::new("python3")
        .arg(common::root().join("scripts/derive-catalog.py"))
        .args(["--source", "proxy", "--check", "--only", program])
        .args(["--versions", versions])
        .arg("--data")
        .arg(data)
        .arg("--modcache")
        .arg(&cache)
        .env("GOMODCACHE", &cache)
        .output()
        .expect("python3 runs")
}

#[test]
fn derived_ranges_match_releases_read_through_the_module_proxy() {
    if !common::go_available() {
        common::did_not_run("derive_catalog: did not run: no go command on PATH");
        return;
    }
    let data = common::root().join("src/go/catalog-derived.json");
    for (program, versions) in SAMPLE {
        let out = derive(&data, program, versions);
        assert!(
            out.status.success(),
            "{program} {versions}:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        if checked(&String::from_utf8_lossy(&out.stdout), program) == 0 {
            common::did_not_run(&format!(
                "derive_catalog: {program}: the module proxy refused every sampled release"
            ));
        }
    }
    // The same check fails when the file says another boundary than the sources.
    let text = std::fs::read_to_string(&data).unwrap();
    let moved = text.replacen("\"below\": \"2.12.5\"", "\"below\": \"2.12.4\"", 1);
    assert_ne!(moved, text, "NATS's automaxprocs range ends at 2.12.5");
    let dir = tempfile::tempdir().unwrap();
    let wrong = dir.path().join("catalog-derived.json");
    std::fs::write(&wrong, moved).unwrap();
    let out = derive(&wrong, "NATS server", "2.12.4");
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("NATS server 2.12.4: automaxprocs says True"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn a_release_the_module_proxy_refuses_is_reported_not_counted_as_a_difference() {
    if !common::go_available() {
        common::did_not_run("derive_catalog: did not run: no go command on PATH");
        return;
    }
    // No such release: the proxy refuses it as it refuses a version it does not hold.
    let data = common::root().join("src/go/catalog-derived.json");
    let out = derive(&data, "Kubernetes", "1.35.0,1.35.99");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    assert!(
        stdout.contains("Kubernetes: release 1.35.99 refused by the module proxy"),
        "{stdout}"
    );
    assert_eq!(checked(&stdout, "Kubernetes"), 1, "{stdout}");
}
