//! The one error table every surface (CLI, HTTP, later MCP) renders from.
//!
//! A `DocdexError` carries a stable machine code, a human message and a hint that names the
//! fix. User errors (bad input, unknown repo) are kept apart from internal errors so that
//! HTTP can answer 4xx vs 5xx and the CLI can choose its exit code.

use serde::{Deserialize, Serialize};

/// Stable error codes. The string form (`snake_case`) is part of the public API.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// The request is malformed: a missing or invalid parameter.
    InvalidRequest,
    /// The repo path does not exist or is not a directory.
    RepoNotFound,
    /// The repo exists but has never been indexed (or its first index never completed).
    RepoNotIndexed,
    /// Another process holds the repo's index writer.
    IndexLocked,
    /// A bearer token is required and was missing or wrong.
    Unauthorized,
    /// The request's Host or Origin is not this daemon's (DNS rebinding, a foreign web page).
    Forbidden,
    /// The requested route or item does not exist.
    NotFound,
    /// Configuration could not be read or is invalid.
    ConfigInvalid,
    /// The state directory could not be created or written.
    StateUnwritable,
    /// The embedding model or ONNX Runtime is missing or failed to load.
    ModelUnavailable,
    /// The web tier is turned off (`[web] enabled = false`) and the request needs it.
    WebDisabled,
    /// A URL docdex refuses to fetch: another scheme than http(s), a private address, a
    /// blocked domain.
    UrlRefused,
    /// A web source failed: discovery blocked or down, a page that could not be fetched.
    WebUnavailable,
    /// A page or request took longer than its timeout.
    Timeout,
    /// A library's docs could not be obtained (its registry client failed or is missing).
    LibraryUnavailable,
    /// A path docdex will not read: it resolves outside the repo, or is not a regular file.
    PathRefused,
    /// A request, body, or file over its size limit (the limit is in the message).
    TooLarge,
    /// A state-changing request without a JSON body type.
    UnsupportedMediaType,
    /// A client with too many requests in flight.
    TooManyRequests,
    /// The LLM server cannot be reached, or does not have the model.
    LlmUnavailable,
    /// The LLM server failed while answering.
    LlmError,
    /// The repo's first index run is still going (the message has its progress).
    IndexingInProgress,
    /// A second daemon for a home that has one running.
    DaemonRunning,
    /// Anything else: a bug or an environment failure.
    Internal,
}

impl ErrorCode {
    /// The HTTP status that goes with the code.
    pub fn http_status(self) -> u16 {
        match self {
            ErrorCode::InvalidRequest => 400,
            ErrorCode::Unauthorized => 401,
            ErrorCode::RepoNotFound | ErrorCode::RepoNotIndexed | ErrorCode::NotFound => 404,
            ErrorCode::IndexLocked | ErrorCode::WebDisabled | ErrorCode::DaemonRunning => 409,
            ErrorCode::UrlRefused | ErrorCode::PathRefused | ErrorCode::Forbidden => 403,
            ErrorCode::TooLarge => 413,
            ErrorCode::UnsupportedMediaType => 415,
            ErrorCode::TooManyRequests => 429,
            ErrorCode::WebUnavailable | ErrorCode::LlmError | ErrorCode::LibraryUnavailable => 502,
            ErrorCode::LlmUnavailable => 503,
            ErrorCode::Timeout => 504,
            ErrorCode::ModelUnavailable | ErrorCode::IndexingInProgress => 503,
            ErrorCode::ConfigInvalid | ErrorCode::StateUnwritable | ErrorCode::Internal => 500,
        }
    }

    /// Whether the caller (rather than docdex or its environment) is at fault.
    pub fn is_user_error(self) -> bool {
        self.http_status() < 500
    }

    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidRequest => "invalid_request",
            ErrorCode::RepoNotFound => "repo_not_found",
            ErrorCode::RepoNotIndexed => "repo_not_indexed",
            ErrorCode::IndexLocked => "index_locked",
            ErrorCode::Unauthorized => "unauthorized",
            ErrorCode::Forbidden => "forbidden",
            ErrorCode::NotFound => "not_found",
            ErrorCode::ConfigInvalid => "config_invalid",
            ErrorCode::StateUnwritable => "state_unwritable",
            ErrorCode::ModelUnavailable => "model_unavailable",
            ErrorCode::WebDisabled => "web_disabled",
            ErrorCode::UrlRefused => "url_refused",
            ErrorCode::WebUnavailable => "web_unavailable",
            ErrorCode::Timeout => "timeout",
            ErrorCode::LibraryUnavailable => "library_unavailable",
            ErrorCode::PathRefused => "path_refused",
            ErrorCode::TooLarge => "too_large",
            ErrorCode::UnsupportedMediaType => "unsupported_media_type",
            ErrorCode::TooManyRequests => "too_many_requests",
            ErrorCode::LlmUnavailable => "llm_unavailable",
            ErrorCode::LlmError => "llm_error",
            ErrorCode::IndexingInProgress => "indexing_in_progress",
            ErrorCode::DaemonRunning => "daemon_running",
            ErrorCode::Internal => "internal",
        }
    }
}

/// A typed error with a message and an actionable hint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[error("{message}")]
pub struct DocdexError {
    pub code: ErrorCode,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

pub type Result<T, E = DocdexError> = std::result::Result<T, E>;

impl DocdexError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        DocdexError { code, message: message.into(), hint: None }
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::InvalidRequest, message)
    }

    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Internal, message)
    }

    pub fn web_disabled() -> Self {
        Self::new(ErrorCode::WebDisabled, "the web tier is disabled in this docdex's configuration")
            .with_hint("set `[web] enabled = true` in $DOCDEX_HOME/config.toml (or DOCDEX_WEB_ENABLED=1) and restart")
    }

    pub fn repo_not_indexed(path: &str) -> Self {
        Self::new(ErrorCode::RepoNotIndexed, format!("repo {path} is not indexed"))
            .with_hint(format!("run `docdexd index --repo {path}` first"))
    }

    pub fn repo_not_found(path: &str, why: &str) -> Self {
        Self::new(ErrorCode::RepoNotFound, format!("repo path {path} {why}")).with_hint(
            "name the root folder of an existing repository (`--repo` on the command line, `repo` or \
                 `repo_path` over HTTP and MCP, `docdex.repo_path` in a chat request)",
        )
    }

    /// The JSON body every HTTP error uses: `{"error": {code, message, hint}}`.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({ "error": self })
    }
}

/// Internal failures from the storage and I/O layers become `internal` errors whose message
/// keeps the original cause; the actors add context where they know more.
macro_rules! internal_from {
    ($($ty:ty => $what:literal),* $(,)?) => {
        $(impl From<$ty> for DocdexError {
            fn from(err: $ty) -> Self {
                DocdexError::internal(format!(concat!($what, ": {}"), err))
            }
        })*
    };
}

impl From<std::io::Error> for DocdexError {
    fn from(err: std::io::Error) -> Self {
        if err.kind() == std::io::ErrorKind::StorageFull || err.raw_os_error() == Some(28) {
            return DocdexError::disk_full(&err);
        }
        DocdexError::internal(format!("i/o error: {err}"))
    }
}

impl From<heed::Error> for DocdexError {
    fn from(err: heed::Error) -> Self {
        match &err {
            heed::Error::Mdb(heed::MdbError::MapFull) => DocdexError::new(
                ErrorCode::StateUnwritable,
                "the repo's metadata store is full (its LMDB map size is reached)",
            )
            .with_hint(
                "raise [index] lmdb_map_bytes in $DOCDEX_HOME/config.toml and retry; what was committed is kept",
            ),
            heed::Error::Io(io) if io.kind() == std::io::ErrorKind::StorageFull || io.raw_os_error() == Some(28) => {
                DocdexError::disk_full(io)
            }
            _ => DocdexError::internal(format!("metadata store error: {err}")),
        }
    }
}

impl From<tantivy::TantivyError> for DocdexError {
    fn from(err: tantivy::TantivyError) -> Self {
        if let tantivy::TantivyError::IoError(io) = &err {
            if io.kind() == std::io::ErrorKind::StorageFull || io.raw_os_error() == Some(28) {
                return DocdexError::disk_full(&err);
            }
        }
        DocdexError::internal(format!("index error: {err}"))
    }
}

impl DocdexError {
    fn disk_full(cause: &dyn std::fmt::Display) -> DocdexError {
        DocdexError::new(ErrorCode::StateUnwritable, format!("the disk is full: {cause}"))
            .with_hint("free disk space and retry; what was committed before is kept")
    }

    /// A failed write to `dir`: when its file system has no room left, the error says so
    /// (Tantivy's writer threads report a full disk only as "the index writer was killed").
    pub fn or_disk_full(self, dir: &std::path::Path) -> DocdexError {
        if self.code == ErrorCode::StateUnwritable || available_bytes(dir).is_none_or(|free| free >= 1 << 20) {
            return self;
        }
        DocdexError::disk_full(&self.message)
    }
}

/// Bytes available to this user on the file system holding `dir`.
fn available_bytes(dir: &std::path::Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let path = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    let mut stat: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: a valid C string and a zeroed struct for the kernel to fill.
    if unsafe { libc::statvfs(path.as_ptr(), &mut stat) } != 0 {
        return None;
    }
    Some(stat.f_bavail as u64 * stat.f_frsize as u64)
}

internal_from!(
    serde_json::Error => "json error",
    actix::MailboxError => "actor mailbox error",
    tokio::task::JoinError => "background task failed",
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_map_to_statuses_and_names() {
        assert_eq!(ErrorCode::RepoNotIndexed.http_status(), 404);
        assert_eq!(ErrorCode::InvalidRequest.http_status(), 400);
        assert!(ErrorCode::Unauthorized.is_user_error());
        assert!(!ErrorCode::Internal.is_user_error());
        let json = DocdexError::repo_not_indexed("/x").to_json();
        assert_eq!(json["error"]["code"], "repo_not_indexed");
        assert_eq!(json["error"]["hint"], "run `docdexd index --repo /x` first");
        assert_eq!(ErrorCode::IndexLocked.as_str(), "index_locked");
    }
}
