use clap::Parser;

/// mimalloc for Rust allocations, and for tree-sitter's C allocations too (below): parsing
/// and tokenizing allocate heavily, and glibc malloc was a sixth of indexing time.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    private_files();
    disable_transparent_huge_pages();
    docdex::ingest::code::install_tree_sitter_allocator();
    let cli = docdex::cli::args::Cli::parse();
    std::process::exit(docdex::cli::run(cli));
}

/// Everything docdex creates is its user's alone: the home and its folders 0700, files (the
/// token, the config, the index that holds a repo's text, the caches) 0600. Set once for the
/// process rather than per file, so no file written anywhere can be missed; the programs it
/// runs (cargo, npm, pip for library docs) inherit it.
fn private_files() {
    // SAFETY: umask only sets the process's file mode creation mask.
    unsafe {
        libc::umask(0o077);
    }
}

/// mimalloc asks the kernel for transparent huge pages, and then every first touch of a fresh
/// 2 MiB region zeroes all of it: a tenth of the CPU of an index run went to those page
/// faults. The opt-out is process-wide and a no-op where THP is off anyway.
fn disable_transparent_huge_pages() {
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_THP_DISABLE takes plain integers and touches no memory of ours.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
}
