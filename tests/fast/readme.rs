//! The README's tour shows what the tool prints: every `console` block under "A short tour" is
//! run with the real binary from the repository's root and its output compared, line for line.
//! Shell completions are generated for every shell clap_complete knows; bash's parses, and bash
//! completes with it past the subcommand. The README stays under 25,000 bytes, and the relative
//! links of the README and docs/ resolve.

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

/// The front page stays a front page; the rest lives in docs/.
#[test]
fn the_readme_is_at_most_25000_bytes() {
    let root = env!("CARGO_MANIFEST_DIR");
    let size = std::fs::metadata(format!("{root}/README.md"))
        .unwrap()
        .len();
    assert!(
        size <= 25_000,
        "README.md is {size} bytes; move a section into docs/"
    );
}

/// Every relative link of README.md and docs/*.md names a file or directory that exists, and a
/// `#fragment` into a Markdown file names one of its headings (GitHub's anchor for it).
#[test]
fn relative_links_in_the_docs_resolve() {
    use std::path::{Path, PathBuf};
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut pages = vec![root.join("README.md")];
    for entry in std::fs::read_dir(root.join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            pages.push(path);
        }
    }
    let mut checked = 0;
    let mut broken = Vec::new();
    for page in &pages {
        let text = std::fs::read_to_string(page).unwrap();
        for target in links(&text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (path, fragment) = target.split_once('#').unwrap_or((&target, ""));
            let file: PathBuf = if path.is_empty() {
                page.clone()
            } else {
                page.parent().unwrap().join(path)
            };
            checked += 1;
            if !file.exists() {
                broken.push(format!("{}: {target} (no such file)", page.display()));
            } else if !fragment.is_empty() && file.extension().is_some_and(|e| e == "md") {
                let anchors = anchors(&std::fs::read_to_string(&file).unwrap());
                if !anchors.iter().any(|a| a == fragment) {
                    broken.push(format!("{}: {target} (no such heading)", page.display()));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
    assert!(checked >= 20, "only {checked} relative links found");
}

/// Lines of a Markdown page outside fenced code blocks.
fn outside_fences(markdown: &str) -> Vec<&str> {
    let mut fenced = false;
    let mut lines = Vec::new();
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced {
            lines.push(line);
        }
    }
    lines
}

/// Lines of a Markdown page outside fenced code blocks, with inline code spans removed.
fn prose(markdown: &str) -> Vec<String> {
    outside_fences(markdown)
        .into_iter()
        .map(|line| {
            line.split('`')
                .enumerate()
                .filter(|(i, _)| i % 2 == 0)
                .map(|(_, part)| part)
                .collect()
        })
        .collect()
}

/// The targets of the page's inline links, `[text](target)`.
fn links(markdown: &str) -> Vec<String> {
    let mut targets = Vec::new();
    for line in prose(markdown) {
        let mut rest = line.as_str();
        while let Some(at) = rest.find("](") {
            rest = &rest[at + 2..];
            let end = rest.find(')').unwrap_or(rest.len());
            targets.push(rest[..end].trim().to_string());
            rest = &rest[end..];
        }
    }
    targets
}

/// GitHub's anchors for a page's headings: lower case, punctuation dropped, spaces as hyphens.
fn anchors(markdown: &str) -> Vec<String> {
    outside_fences(markdown)
        .into_iter()
        .filter_map(|l| l.strip_prefix('#'))
        .map(|h| {
            h.trim_start_matches('#')
                .trim()
                .to_lowercase()
                .chars()
                .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
                .map(|c| if c == ' ' { '-' } else { c })
                .collect()
        })
        .collect()
}

/// What bash's own completion offers for a command line: the generated script sourced in a bare
/// bash, the words set as bash sets them when Tab is pressed at the end of `line`, and the
/// function that `complete -p golint-k8s` names called as bash calls it. One candidate a line.
fn bash_completes(script: &str, line: &str) -> Vec<String> {
    let driver = r#"
source "$1"
read -r -a COMP_WORDS <<< "$2"
if [[ "$2" == *" " ]]; then COMP_WORDS+=(""); fi
COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
COMP_LINE="$2"
COMP_POINT=${#COMP_LINE}
spec=$(complete -p golint-k8s) || exit 3
fn=$(sed -n 's/.*-F \([^ ]*\).*/\1/p' <<< "$spec")
[[ -n "$fn" ]] || exit 4
prev=""
if (( COMP_CWORD > 0 )); then prev="${COMP_WORDS[COMP_CWORD-1]}"; fi
"$fn" golint-k8s "${COMP_WORDS[COMP_CWORD]}" "$prev"
printf '%s\n' "${COMPREPLY[@]}"
"#;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("golint-k8s.bash");
    std::fs::write(&path, script).unwrap();
    let out = Command::new("bash")
        .args(["--norc", "--noprofile", "-c", driver, "bash"])
        .arg(&path)
        .arg(line)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{line:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect()
}

/// Bash completes past the subcommand: the options of `lint` and `fix`, the values of
/// `--format`, as well as the subcommands themselves. (clap_complete's bash script names its
/// states in two spellings when the binary's name has a hyphen, and then completed nothing after
/// the subcommand.)
#[test]
fn bash_completes_options_after_the_subcommand() {
    if Command::new("bash").arg("--version").output().is_err() {
        return crate::common::did_not_run("no bash on PATH: bash completion not driven");
    }
    let out = Command::new(BIN)
        .args(["completions", "bash"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let script = String::from_utf8(out.stdout).unwrap();
    let subcommands = bash_completes(&script, "golint-k8s ");
    for word in ["lint", "fix", "cluster", "completions", "explain"] {
        assert!(
            subcommands.iter().any(|c| c == word),
            "{word}: {subcommands:?}"
        );
    }
    let lint = bash_completes(&script, "golint-k8s lint --fo");
    assert!(lint.iter().any(|c| c == "--format"), "{lint:?}");
    assert!(lint.iter().all(|c| c.starts_with("--fo")), "{lint:?}");
    let fix = bash_completes(&script, "golint-k8s fix --");
    for option in ["--unsafe-fixes", "--diff", "--check", "--format"] {
        assert!(fix.iter().any(|c| c == option), "{option}: {fix:?}");
    }
    let formats = bash_completes(&script, "golint-k8s lint --format ");
    for format in ["human", "json", "sarif", "junit"] {
        assert!(formats.iter().any(|c| c == format), "{format}: {formats:?}");
    }
}
