//! `golint-k8s rules`, `golint-k8s explain` and `golint-k8s init`: what the rules are, and a
//! config to start from.

use std::io::Write;

use crate::diagnostic::registry::{self, RULES};

pub fn list(format: super::RulesFormat) -> i32 {
    if format == super::RulesFormat::Json {
        let rules: Vec<serde_json::Value> = RULES
            .iter()
            .map(|r| {
                serde_json::json!({
                    "code": r.code,
                    "name": r.name,
                    "severity": r.severity,
                    "fix": r.fix.as_str(),
                    "applies_to": r.applies_to,
                    "summary": r.summary,
                    "url": crate::output::doc_url(r.code),
                })
            })
            .collect();
        let text = serde_json::to_string_pretty(&serde_json::json!({"version": 1, "rules": rules}))
            .unwrap_or_default();
        return emit(&(text + "\n"));
    }
    let mut out = String::new();
    out.push_str(&format!(
        "{:<6} {:<38} {:<8} {:<7} {}\n",
        "CODE", "NAME", "SEVERITY", "FIX", "APPLIES TO"
    ));
    for r in RULES {
        out.push_str(&format!(
            "{:<6} {:<38} {:<8} {:<7} {}\n",
            r.code,
            r.name,
            r.severity.as_str(),
            r.fix.as_str(),
            r.applies_to
        ));
    }
    emit(&out)
}

pub fn explain(rule: &str) -> i32 {
    match registry::find(rule) {
        Some(r) => emit(r.doc),
        None => {
            say!(
                "error: unknown rule {rule:?}{}; `golint-k8s rules` lists them",
                registry::did_you_mean(rule)
            );
            2
        }
    }
}

/// The config `init` writes: every setting a new user decides first, commented out at its
/// default, and the schema line that lets yaml-language-server check and complete the rest.
fn starter(assume_go: Option<bool>) -> String {
    let assume_go = match assume_go {
        Some(on) => format!("assume-go: {on}\n"),
        None => "# assume-go: true\n".to_string(),
    };
    format!(
        "# yaml-language-server: $schema={}\n\
# golint-k8s settings; every key is in docs/configuration.md.\n\
\n\
# The Go version your images are built with (\"1.25\" or later reads the CPU limit itself).\n\
# go-version: \"1.25\"\n\
\n\
# Images that run Go, and images that do not (globs); others are judged from the manifest.\n\
# go-images: [\"ghcr.io/acme/*\"]\n\
# non-go-images: [\"docker.io/library/nginx*\"]\n\
\n\
# A container nothing above settles is taken as Go, but its Go findings are info and their\n\
# fixes unsafe. Set true when every image this repository deploys runs Go, so they gate.\n\
{assume_go}\
\n\
# CPUs of your nodes, for the throttling numbers.\n\
# node-cpus: 16\n\
\n\
# The kubelet's CPU manager policy on your nodes; with static, Guaranteed pods with whole-core\n\
# requests get CPUs of their own, which their quota cannot throttle.\n\
# cpu-manager-policy: none\n\
\n\
# Rules to turn off, or to give another severity.\n\
# rules: {{GK401: off, GK203: error}}\n\
\n\
# Files a directory walk skips, and rules off for some files.\n\
# exclude: [\"vendor/**\"]\n\
# per-file-ignores: {{\"legacy/**\": [GK2]}}\n",
        crate::config::SCHEMA_URL
    )
}

/// Whether every image is Go: the flag, else the user's answer on a terminal, else unset.
fn ask_assume_go(flag: Option<bool>) -> Option<bool> {
    use std::io::IsTerminal;
    if flag.is_some() || !std::io::stdin().is_terminal() {
        return flag;
    }
    eprint!("Does every container this repository deploys run a Go program? [y/N] ");
    let mut answer = String::new();
    std::io::stdin().read_line(&mut answer).ok()?;
    matches!(answer.trim(), "y" | "Y" | "yes" | "Yes").then_some(true)
}

pub fn init(assume_go: Option<bool>) -> i32 {
    if let Some(existing) = crate::walk::CONFIG_FILE_NAMES
        .iter()
        .find(|n| std::path::Path::new(n).exists())
    {
        say!("error: {existing} already exists here; init writes a new one only");
        return 2;
    }
    let assume_go = ask_assume_go(assume_go);
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(crate::config::FILE_NAME)
        .and_then(|mut f| f.write_all(starter(assume_go).as_bytes()));
    match written {
        Ok(()) => {
            say!("wrote {}", crate::config::FILE_NAME);
            if assume_go.is_none() {
                say!("note: assume-go is left unset, so Go findings on containers of unknown runtime are info; `init --assume-go true` when every image is Go");
            }
            0
        }
        Err(e) => {
            say!("error: cannot write {}: {e}", crate::config::FILE_NAME);
            2
        }
    }
}

/// Write to standard output; a closed pipe is not an error.
pub fn emit(s: &str) -> i32 {
    let mut out = std::io::stdout().lock();
    match out.write_all(s.as_bytes()).and_then(|_| out.flush()) {
        Ok(()) => 0,
        // A closed pipe (`| head`) is the reader's choice, not an error.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => 0,
        Err(e) => {
            say!("error: {e}");
            2
        }
    }
}
