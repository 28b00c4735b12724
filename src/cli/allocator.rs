//! How a docdex process allocates: set once at the start of `main`, by `docdexd` and by the
//! benchmarks alike, so that what `docdex-bench` measures is what the daemon does.

/// Routes tree-sitter's allocations to mimalloc and sets the allocators' behaviour (below).
/// Call first thing in `main`, before any other thread or parser exists.
pub fn configure() {
    disable_transparent_huge_pages();
    return_large_blocks_at_once();
    purge_freed_pages_at_once();
    crate::ingest::code::install_tree_sitter_allocator();
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

/// mimalloc hands a page that has emptied back to the system a second later, but only when the
/// thread that owns it next allocates: the pages of a thread that goes quiet (a search or
/// embedding thread once the daemon is idle) stay resident for good. Purged at once instead
/// (`bench-daemon` on serde, three runs each: 89-90 -> 78-80 MiB after the idle release,
/// 191-194 -> 181-184 MiB after hybrid searches, embedding time the same within noise; on
/// tokio 97 -> 91 and 269 -> 260 MiB). The price: freed pages fault in again, and tokio's
/// index run takes 0.56-0.60 s instead of 0.53-0.55 s. A delay the user sets
/// (`MIMALLOC_PURGE_DELAY`, in milliseconds) is kept.
fn purge_freed_pages_at_once() {
    // mimalloc's `mi_option_purge_delay` (the bindings name no constant for it; the one that
    // `MIMALLOC_PURGE_DELAY` sets), written only while it holds the default of the mimalloc
    // built here, so another option layout is never written to.
    const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;
    const DEFAULT_PURGE_DELAY_MS: std::os::raw::c_long = 1000;
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_some() {
        return;
    }
    // SAFETY: reading and setting a mimalloc option touches only mimalloc's option table.
    unsafe {
        if libmimalloc_sys::mi_option_get(MI_OPTION_PURGE_DELAY) == DEFAULT_PURGE_DELAY_MS {
            libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, 0);
        }
    }
}

/// ONNX Runtime allocates through the C allocator, whose threshold for giving a large block
/// its own mapping rises with every such block freed (up to 32 MiB): after a model's load and
/// batches, its large buffers then sit in heap arenas that stay resident after they are
/// freed (measured: 20-30 MiB more after the idle release). A fixed threshold keeps each
/// large block in its own mapping, returned to the system the moment it is freed.
fn return_large_blocks_at_once() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets allocator parameters; called before any other thread starts.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 256 * 1024);
    }
}
