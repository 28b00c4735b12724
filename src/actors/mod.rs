//! The actors. Each file holds one actor and the messages it handles; the ToolDispatcher is
//! a folder of tool modules; request and answer types every surface shares live in
//! `crate::protocol`. `system.rs` spawns them, downstream first, and wires their addresses.

pub mod chat;
pub mod crate_cache;
pub mod dag_logger;
pub mod discovery;
pub mod embedder;
pub mod indexer;
pub mod ingestor;
pub mod llm_gateway;
pub mod memory_store;
pub mod repo_manager;
pub mod repo_supervisor;
pub mod scraper;
pub mod system;
pub mod tool_dispatcher;
pub mod waterfall;

/// Runs a sync actor's handler body, turning a panic into an error for that one request.
/// An uncaught panic would end the actor's thread, and every later message to it would fail;
/// caught, the request gets an internal error naming the bug and the actor carries on.
pub(crate) fn guarded<T>(what: &str, body: impl FnOnce() -> crate::protocol::Result<T>) -> crate::protocol::Result<T> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)) {
        Ok(result) => result,
        Err(payload) => {
            let message = panic_message(payload.as_ref());
            tracing::error!(actor = what, panic = %message, "a request panicked; the actor carries on");
            Err(crate::protocol::DocdexError::internal(format!("{what} failed on this request: {message}"))
                .with_hint("this is a bug in docdex; the daemon keeps running, please report it with the request"))
        }
    }
}

/// The text of a panic payload.
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".into())
}

/// Returns freed heap pages to the system after something large was dropped (a model, an
/// idle repo's index): ONNX Runtime allocates through the C allocator, whose arenas
/// otherwise keep the memory resident, and mimalloc keeps freed segments for reuse.
pub(crate) fn release_free_memory() {
    // SAFETY: mi_collect only returns mimalloc's own unused pages (Rust's allocations: the
    // tokenizer, the model's weights as read from disk).
    unsafe {
        libmimalloc_sys::mi_collect(true);
    }
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only walks the allocator's own free lists.
    unsafe {
        libc::malloc_trim(0);
    }
}
