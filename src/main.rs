use clap::Parser;

/// mimalloc for Rust allocations, and for tree-sitter's C allocations too (below): parsing
/// and tokenizing allocate heavily, and glibc malloc was a sixth of indexing time.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    docdex::ingest::code::install_tree_sitter_allocator();
    let cli = docdex::cli::Cli::parse();
    std::process::exit(docdex::cli::run(cli));
}
