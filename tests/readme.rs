//! The README's tour shows what the tool prints: every `console` block under "A short tour" is
//! run with the real binary from the repository's root and its output compared, line for line.
//! Shell completions are generated for every shell clap_complete knows, and bash's parses.

use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_golint-k8s");

#[test]
fn the_tour_shows_what_the_tool_prints() {
    let root = env!("CARGO_MANIFEST_DIR");
    let readme = std::fs::read_to_string(format!("{root}/README.md")).unwrap();
    let tour = &readme[readme.find("## A short tour").unwrap()..];
    let tour = &tour[..tour[3..].find("\n## ").unwrap()];
    let mut blocks = 0;
    for block in tour.split("```console\n").skip(1) {
        let block = &block[..block.find("```").unwrap()];
        let (command, shown) = block.split_once('\n').unwrap();
        let args: Vec<&str> = command
            .strip_prefix("$ golint-k8s ")
            .expect("a tour block starts with `$ golint-k8s`")
            .split_whitespace()
            .collect();
        let out = Command::new(BIN)
            .args(&args)
            .current_dir(root)
            // The README shows the default width and no colour (output is not a terminal).
            .env_remove("COLUMNS")
            .output()
            .unwrap();
        let printed = String::from_utf8(out.stdout).unwrap();
        assert_eq!(
            printed,
            shown,
            "README tour: `golint-k8s {}` prints something else",
            args.join(" ")
        );
        blocks += 1;
    }
    assert!(blocks >= 2, "the tour has {blocks} console blocks");
}

#[test]
fn completions_for_every_shell() {
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let out = Command::new(BIN)
            .args(["completions", shell])
            .output()
            .unwrap();
        assert!(out.status.success(), "{shell}");
        let script = String::from_utf8(out.stdout).unwrap();
        for word in ["golint-k8s", "lint", "fix", "new-from-rev", "format"] {
            assert!(script.contains(word), "{shell} completions lack {word}");
        }
        if shell == "bash" && Command::new("bash").arg("--version").output().is_ok() {
            let mut check = Command::new("bash")
                .args(["-n"])
                .stdin(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            use std::io::Write;
            check
                .stdin
                .take()
                .unwrap()
                .write_all(script.as_bytes())
                .unwrap();
            assert!(
                check.wait().unwrap().success(),
                "bash cannot parse its completions"
            );
        }
    }
    let bad = Command::new(BIN)
        .args(["completions", "tcsh"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
}
