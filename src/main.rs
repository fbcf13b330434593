//! The `golint-k8s` binary: everything lives in the library; this maps its result to an exit code.

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    std::process::exit(golint_k8s::cli::run(std::env::args_os()));
}
