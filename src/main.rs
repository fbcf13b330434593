//! The `golint-k8s` binary: everything lives in the library; this maps its result to an exit code.

fn main() {
    std::process::exit(golint_k8s::cli::run(std::env::args_os()));
}
