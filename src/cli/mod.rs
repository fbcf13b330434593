//! Command-line interface: argument parsing and the commands. Each command returns an exit code;
//! `main` only maps it to the process status.

/// `eprintln!` without the panic: standard error may be a closed pipe (`2>&1 | head -1`), and a
/// message that cannot be shown is no reason to abort a run that is writing files.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        // Errors and notes quote paths, images and values of the inputs.
        let text = format!($($arg)*);
        let _ = writeln!(std::io::stderr().lock(), "{}", $crate::text::printable_lines(&text));
    }};
}

/// `eprint!` without the panic; see [`say!`].
macro_rules! say_raw {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stderr().lock(), $($arg)*);
    }};
}

/// Report an error on standard error and give the exit code it ends the command with.
pub fn fail(e: crate::error::Error) -> i32 {
    say!("error: {e}");
    e.exit_code()
}

pub mod cluster;
pub mod fix;
pub mod lint;
pub mod rules;

use clap::{Parser, Subcommand, ValueEnum};

#[derive(Parser, Debug)]
#[command(
    name = "golint-k8s",
    version,
    about = "Lint and fix Kubernetes manifests that run Go programs: GOMAXPROCS, GOMEMLIMIT, GOGC and GODEBUG against container limits",
    propagate_version = true,
    after_help = "Examples:
  golint-k8s lint deploy/                            lint a directory (walked in parallel)
  helm template api ./chart | golint-k8s lint -      lint rendered output from standard input
  golint-k8s fix deploy/ --diff                      show what the safe fixes would change
  golint-k8s lint . --new-from-rev origin/main       fail only on findings this branch adds
  golint-k8s lint . --format sarif -o out.sarif      SARIF for code scanning
  golint-k8s explain GK101                           a rule's documentation"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Lint manifests (files, directories, or - for standard input).
    Lint(lint::LintArgs),
    /// Apply fixes in place (safe ones; --unsafe-fixes for all), or show them with --diff.
    Fix(fix::FixArgs),
    /// List every rule: code, name, default severity, fix.
    Rules {
        /// `text` (a table) or `json` (code, name, severity, fix, applies_to, summary, url).
        #[arg(long, value_enum, default_value_t = RulesFormat::Text)]
        format: RulesFormat,
    },
    /// Run the language server on standard input and output (for editors).
    Lsp,
    /// Write a starter .golint-k8s.yaml in the current directory, with the schema line editors
    /// read to check and complete it. On a terminal it asks whether every image is Go.
    Init {
        /// Write `assume-go: true` (every image the repository deploys runs Go, so findings on
        /// containers nothing else settles fail the gate) or `false`, without asking.
        #[arg(long, value_name = "BOOL")]
        assume_go: Option<bool>,
    },
    /// Print a completion script for a shell, e.g. `golint-k8s completions bash >
    /// ~/.local/share/bash-completion/completions/golint-k8s`.
    Completions {
        /// bash, zsh, fish, powershell or elvish.
        shell: clap_complete::Shell,
    },
    /// Audit a live cluster, read-only, with the same rules (builds with the `cluster` feature).
    Cluster(cluster::ClusterArgs),
    /// Print a rule's documentation.
    Explain {
        /// A rule code (GK101) or name (memory-limit-without-gomemlimit).
        rule: String,
    },
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Each finding with its source lines, notes and fix (the default).
    Human,
    /// One line per finding: file:line:column: severity code rule: message.
    Concise,
    /// Every finding with its object, container, runtime, fingerprint and fix.
    Json,
    /// SARIF 2.1.0, for GitHub code scanning.
    Sarif,
    /// GitHub Actions annotations.
    Github,
    /// A GitLab Code Quality report.
    Gitlab,
    /// JUnit XML, one test case per finding.
    Junit,
    /// Checkstyle XML.
    Checkstyle,
}

impl Format {
    /// Formats that programs read: standard output carries nothing else.
    pub fn is_machine(self) -> bool {
        !matches!(self, Format::Human | Format::Concise)
    }
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum RulesFormat {
    Text,
    Json,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailOn {
    Error,
    Warning,
    Info,
}

/// Runs the CLI and returns the exit code (0 clean, 1 findings, 2 usage or I/O error).
pub fn run(args: impl IntoIterator<Item = std::ffi::OsString>) -> i32 {
    let cli = match Cli::try_parse_from(args) {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return code;
        }
    };
    match cli.command {
        Command::Lint(a) => lint::run(a),
        Command::Fix(a) => fix::run(a),
        Command::Rules { format } => rules::list(format),
        Command::Init { assume_go } => rules::init(assume_go),
        Command::Completions { shell } => {
            use clap::CommandFactory;
            let mut out = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), BIN, &mut out);
            let script = String::from_utf8_lossy(&out);
            match shell {
                clap_complete::Shell::Bash => rules::emit(&bash_states_agree(&script, BIN)),
                _ => rules::emit(&script),
            }
        }
        Command::Lsp => crate::lsp::run(),
        Command::Cluster(a) => cluster::run(a),
        Command::Explain { rule } => rules::explain(&rule),
    }
}

/// The name the completion scripts complete.
const BIN: &str = "golint-k8s";

/// clap_complete's bash script (4.6 and earlier) walks the words typed into a state named
/// `golint__k8s__subcmd__lint`, the binary's hyphen escaped as `__`, but labels the state's
/// case arm `golint__subcmd__k8s__subcmd__lint`, the hyphen escaped as the subcommand
/// separator: no arm ever matches, and nothing completes after the subcommand. This rewrites
/// the arms' labels to the loop's spelling, and nothing else; once clap_complete spells them
/// alike no label matches and the script is left as it is.
fn bash_states_agree(script: &str, bin: &str) -> String {
    const SEP: &str = "__subcmd__";
    let wrong = format!("{}{SEP}", bin.replace('-', SEP));
    let right = format!("{}{SEP}", bin.replace('-', "__"));
    if wrong == right {
        return script.to_string();
    }
    script
        .split_inclusive('\n')
        .map(|line| {
            let label = line.trim_start();
            if label.starts_with(&wrong) && label.trim_end().ends_with(')') {
                line.replacen(&wrong, &right, 1)
            } else {
                line.to_string()
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bash_state_labels_take_the_loops_spelling_and_nothing_else_changes() {
        let script = "        case \"${cmd},${i}\" in\n            golint__k8s,lint)\n                cmd=\"golint__k8s__subcmd__lint\"\n    case \"${cmd}\" in\n        golint__k8s)\n        golint__subcmd__k8s__subcmd__lint)\n            opts=\"golint__subcmd__k8s__subcmd__x)\"\n";
        let fixed = bash_states_agree(script, "golint-k8s");
        assert_eq!(
            fixed,
            script.replacen(
                "        golint__subcmd__k8s__subcmd__lint)",
                "        golint__k8s__subcmd__lint)",
                1
            )
        );
        // A name without a hyphen has one spelling: nothing to rewrite.
        assert_eq!(bash_states_agree(script, "golint"), script);
    }

    /// The config's `format` and `fail-on` take exactly the values of the flags they stand in
    /// for: the config checks a name against its list, the command line parses it.
    #[test]
    fn config_names_are_the_values_of_the_flags() {
        let names = |variants: &[clap::builder::PossibleValue]| {
            variants
                .iter()
                .map(|v| v.get_name().to_string())
                .collect::<Vec<_>>()
        };
        let formats: Vec<_> = Format::value_variants()
            .iter()
            .filter_map(|f| f.to_possible_value())
            .collect();
        assert_eq!(names(&formats), crate::config::FORMATS);
        let fail_on: Vec<_> = FailOn::value_variants()
            .iter()
            .filter_map(|f| f.to_possible_value())
            .collect();
        assert_eq!(names(&fail_on), crate::config::FAIL_ON);
    }
}
