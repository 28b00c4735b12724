/// mimalloc for Rust allocations, and for tree-sitter's C allocations too (below): parsing
/// and tokenizing allocate heavily, and glibc malloc was a sixth of indexing time.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    private_files();
    hide_token_from_process_list();
    docdex::cli::allocator::configure();
    match docdex::cli::parse_args() {
        Ok(cli) => std::process::exit(docdex::cli::run(cli)),
        Err(code) => std::process::exit(code),
    }
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

/// A token passed as `--auth-token T` is in the process list (`ps`, /proc/<pid>/cmdline) for
/// every local user to read. The process replaces itself at once with the same command minus
/// the flag, the token moved to `DOCDEX_AUTH_TOKEN` (the environment of a process is readable
/// by its user only); the flag keeps working as documented.
fn hide_token_from_process_list() {
    use std::os::unix::process::CommandExt;
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let mut kept = Vec::with_capacity(args.len());
    let mut token_opt = None;
    let mut rest = args.iter().skip(1);
    while let Some(arg) = rest.next() {
        let text = arg.to_string_lossy();
        if text == "--" {
            kept.push(arg.clone());
            kept.extend(rest.by_ref().cloned());
        } else if text == "--auth-token" {
            token_opt = rest.next().cloned();
        } else if let Some(value) = text.strip_prefix("--auth-token=") {
            token_opt = Some(value.into());
        } else {
            kept.push(arg.clone());
        }
    }
    let (Some(token), Ok(exe)) = (token_opt, std::env::current_exe()) else { return };
    // `exec` returns only when it failed: then the command runs as it was given.
    let err = std::process::Command::new(exe).args(&kept).env("DOCDEX_AUTH_TOKEN", token).exec();
    eprintln!("warning: could not hide --auth-token from the process list ({err}); use DOCDEX_AUTH_TOKEN");
}
