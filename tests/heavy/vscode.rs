//! The VS Code extension (editors/vscode) as its users get it: its unit tests with its build, the
//! linux-x64 `.vsix` packaged by `vsce` with this build's binary inside, and that package installed
//! in a real VS Code (code-server) driven by headless Chromium (editors/vscode/e2e/run.mjs): GK101
//! shows in the Problems panel, and its quick fix leaves the file as `golint-k8s fix` writes it.
//!
//! code-server and Chromium come from `scripts/vscode-e2e-tools.sh`, pinned; the extension's and
//! the driver's npm packages from their lock files (`npm ci`).

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Run `cmd`, and fail the test with its output when it does not succeed.
fn run(what: &str, cmd: &mut Command) -> String {
    let out = cmd
        // npm's own reports are noise here, and must not ask the network for more.
        .env("npm_config_audit", "false")
        .env("npm_config_fund", "false")
        .env("npm_config_update_notifier", "false")
        .output()
        .unwrap_or_else(|e| panic!("{what}: cannot start: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{what} failed ({}):\n--- stdout\n{stdout}\n--- stderr\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// code-server's launcher and Chromium, or None (said in one line; a failure in CI) where this
/// machine cannot have them.
fn tools() -> Option<(PathBuf, PathBuf)> {
    let mut paths = crate::tools::script_paths("vscode-e2e-tools.sh")?;
    Some((paths.take("CODE_SERVER"), paths.take("CHROMIUM")))
}

fn npm(dir: &Path, args: &[&str]) -> String {
    run(
        &format!("npm {} in {}", args.join(" "), dir.display()),
        Command::new("npm").args(args).current_dir(dir),
    )
}

#[test]
fn the_packaged_extension_fixes_gk101_in_a_real_vscode() {
    let Some((code_server, chromium)) = tools() else {
        return;
    };
    let ext = root().join("editors/vscode");
    let binary = Path::new(env!("CARGO_BIN_EXE_golint-k8s"));

    // The extension's build and its unit tests.
    npm(&ext, &["ci"]);
    let unit = npm(&ext, &["test"]);
    assert!(
        unit.contains("# fail 0") && !unit.contains("# pass 0"),
        "the extension's unit tests did not all pass:\n{unit}"
    );

    // The package a linux-x64 user installs, with this build's binary inside.
    run(
        "package-target.sh linux-x64",
        Command::new("sh")
            .arg("package-target.sh")
            .arg("linux-x64")
            .arg(binary)
            .current_dir(&ext),
    );
    let vsix = ext.join("golint-k8s-linux-x64.vsix");
    assert!(vsix.is_file(), "vsce wrote no {}", vsix.display());

    let e2e = ext.join("e2e");
    npm(&e2e, &["ci"]);
    // Kept after a failure: the screenshot and code-server's log say what the workbench showed.
    let artifacts = root().join("target/vscode-e2e-artifacts");
    let _ = std::fs::remove_dir_all(&artifacts);
    let said = run(
        "the end-to-end run (editors/vscode/e2e/run.mjs)",
        Command::new("npm")
            .args(["run", "e2e"])
            .current_dir(&e2e)
            .env("CODE_SERVER", &code_server)
            .env("CHROMIUM", &chromium)
            .env("VSIX", &vsix)
            .env("GOLINT_K8S", ext.join("bin/golint-k8s"))
            .env("E2E_ARTIFACTS", &artifacts),
    );
    // The driver's last word: every step it checks passed.
    assert!(
        said.lines()
            .any(|l| l.contains("e2e") && l.contains("passed")),
        "the end-to-end run exited 0 without saying it passed:\n{said}"
    );
}
