//! Helpers shared by the integration tests: lint text in-process and render it like the CLI does.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use golint_k8s::config::{AssumeGo, Config, GoVersion, Overrides};
use golint_k8s::lint::{lint_source, FileReport, Selection, Stats};
use golint_k8s::output::{self, Run};
use golint_k8s::source::{Origin, Source};

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The shared corpus of real manifests, when this checkout has it beside it.
pub fn corpus() -> Option<PathBuf> {
    let p = root().join("..").join("shared").join("corpus");
    p.is_dir().then_some(p)
}

/// A directory of this project's under the user's cache directory, where tests keep what is
/// slow to make (Go toolchains and the probes they build) from one run to the next.
pub fn user_cache(name: &str) -> PathBuf {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    base.join("golint-k8s").join(name)
}

/// The one cargo target directory of the release builds the tests make: the wheel (maturin) and
/// the pre-commit hook (pre-commit's own `cargo install`). Same profile and features, so the second
/// build reuses every unit the first made with the same dependency versions (`cargo install`
/// resolves afresh, ignoring Cargo.lock, so those that moved on since are built again).
pub fn release_build_dir() -> PathBuf {
    root().join("target").join("release-build")
}

/// Point a command that builds the crate in release mode (maturin, pre-commit's `cargo install`)
/// at [`release_build_dir`], with a lighter release profile: no LTO, 16 codegen units, opt-level 1.
///
/// These tests check that the packages install and run, not how fast the code they carry is. With
/// the shipped profile (thin LTO, 4 codegen units) this crate alone took 4 min 47 s to build on two
/// busy cores; with this one, 51 s. Cargo reads `CARGO_PROFILE_RELEASE_*` from the
/// environment of every build it runs, so the wheel and the hook are built alike.
pub fn release_build_env(cmd: &mut std::process::Command) -> &mut std::process::Command {
    cmd.env("CARGO_TARGET_DIR", release_build_dir())
        .env("CARGO_PROFILE_RELEASE_LTO", "false")
        .env("CARGO_PROFILE_RELEASE_CODEGEN_UNITS", "16")
        .env("CARGO_PROFILE_RELEASE_OPT_LEVEL", "1")
}

/// Held by each test that builds into [`release_build_dir`] or times a first run: one at a time,
/// so a build never waits on cargo's lock of the directory while its time is taken, and a timing
/// is not taken while another test builds on the same cores.
pub fn release_build_lock() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// Whether a `go` command is on PATH.
pub fn go_available() -> bool {
    std::process::Command::new("go")
        .arg("version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Say in one line that a test did not run because the machine lacks something; in CI (`CI`
/// set), where everything is installed, that is a failure instead of a silent pass.
#[allow(dead_code)]
pub fn did_not_run(why: &str) {
    assert!(
        std::env::var_os("CI").is_none_or(|v| v.is_empty()),
        "CI must run this test: {why}"
    );
    println!("{why}");
}

/// Options a fixture asks for on its first line: `# fixture-args: --go-version 1.25 --node-cpus 8`.
pub fn fixture_overrides(text: &str) -> Overrides {
    let mut o = Overrides::default();
    let first = text.lines().next().unwrap_or("");
    if let Some(args) = first.trim().strip_prefix("# fixture-args:") {
        let words: Vec<&str> = args.split_whitespace().collect();
        let mut i = 0;
        while i < words.len() {
            let (flag, value) = match words[i].split_once('=') {
                Some((f, v)) => (f, v.to_string()),
                None => {
                    i += 1;
                    (
                        words[i - 1],
                        words.get(i).copied().unwrap_or("").to_string(),
                    )
                }
            };
            match flag {
                "--go-version" => {
                    o.go_version = Some(GoVersion::parse(&value).expect("fixture go version"))
                }
                "--node-cpus" => o.node_cpus = Some(value.parse().expect("fixture node cpus")),
                other => panic!("unknown fixture arg {other}"),
            }
            i += 1;
        }
    }
    o
}

/// A fixture as the CLI would see it: its text named by its path under the crate, and the config
/// next to it (`<stem>.config.yaml`) with the fixture's args applied.
pub fn fixture_source(path: &Path) -> (Source, Config) {
    let text = std::fs::read_to_string(path).unwrap();
    let config_path = path.with_file_name(format!(
        "{}.config.yaml",
        path.file_stem().unwrap().to_string_lossy()
    ));
    let mut cfg = if config_path.exists() {
        Config::load(&config_path).unwrap_or_else(|e| panic!("{e}"))
    } else {
        Config::default()
    };
    // Rule fixtures stand for a repository whose images are all Go: their findings keep the
    // rule's severity and safe fixes. The gate for containers of unknown runtime has tests of
    // its own (tests/fast/gate.rs).
    if cfg.assume_go == AssumeGo::Unsettled {
        cfg.assume_go = AssumeGo::Go;
    }
    cfg.apply(&fixture_overrides(&text));
    let name = path
        .strip_prefix(root())
        .unwrap_or(path)
        .to_string_lossy()
        .replace('\\', "/");
    (Source::from_text(Origin::Stdin(name), text), cfg)
}

/// Lint a fixture as the CLI would.
pub fn lint_fixture(path: &Path) -> FileReport {
    let (src, cfg) = fixture_source(path);
    lint_source(src, &cfg, &Selection::default())
}

pub fn lint_text(name: &str, text: &str, cfg: &Config) -> FileReport {
    lint_source(
        Source::from_text(Origin::Stdin(name.to_string()), text.to_string()),
        cfg,
        &Selection::default(),
    )
}

/// The human format without colour, at a fixed width, as snapshots store it.
pub fn render_human(report: FileReport) -> String {
    let mut stats = Stats::default();
    stats += report.stats;
    let reports = [report];
    let run = Run {
        fixed: None,
        errors: &[],
        reports: &reports,
        stats,
    };
    let mut out = Vec::new();
    output::human::write(
        &run,
        &output::human::Options {
            color: false,
            width: 100,
            summary: true,
        },
        &mut out,
    )
    .unwrap();
    String::from_utf8(out).unwrap()
}

/// Lines (1-based) marked `# expect: GKnnn` for `code`.
pub fn expected_lines(text: &str, code: &str) -> Vec<usize> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| {
            l.split("# expect:").skip(1).any(|rest| {
                rest.split(|c: char| c == ',' || c.is_whitespace())
                    .any(|c| c == code)
            })
        })
        .map(|(i, _)| i + 1)
        .collect()
}

/// A YAML document as JSON, read with the project's own YAML layer: mappings, sequences and
/// scalars as strings (enough for values files and RBAC objects, which hold only strings).
pub fn yaml_to_json(text: &str) -> serde_json::Value {
    let y = golint_k8s::yaml::parse(text, 0);
    yaml_node_to_json(&y, y.docs[0].root.expect("an empty document"), false)
}

/// Every document of a YAML stream as JSON, with plain scalars typed as YAML 1.1 types them
/// (`true`, `1`, `null`): enough for API objects such as CustomResourceDefinitions.
pub fn yaml_stream_to_json(text: &str) -> Vec<serde_json::Value> {
    let y = golint_k8s::yaml::parse(text, 0);
    y.docs
        .iter()
        .filter_map(|d| d.root)
        .map(|r| yaml_node_to_json(&y, r, true))
        .collect()
}

fn yaml_node_to_json(
    y: &golint_k8s::yaml::Yaml,
    n: golint_k8s::yaml::NodeId,
    typed: bool,
) -> serde_json::Value {
    use golint_k8s::yaml::Yaml11;
    use serde_json::Value;
    if y.is_mapping(n) {
        let mut m = serde_json::Map::new();
        for (k, v) in y.entries(n) {
            let key = y.str(k).unwrap_or_default().to_string();
            m.insert(key, yaml_node_to_json(y, v, typed));
        }
        return Value::Object(m);
    }
    let Some(s) = y.str(n) else {
        let items = y.items(n).iter().map(|&i| yaml_node_to_json(y, i, typed));
        return Value::Array(items.collect());
    };
    match y.resolved(n).filter(|_| typed) {
        Some(Yaml11::Null) => Value::Null,
        Some(Yaml11::Bool(b)) => Value::Bool(b),
        Some(Yaml11::Int(i)) => Value::from(i64::try_from(i).expect("an int64")),
        Some(Yaml11::Float(f)) => Value::from(f),
        _ => Value::String(s.to_string()),
    }
}
