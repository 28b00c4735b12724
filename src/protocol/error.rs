//! The one error table every surface (CLI, HTTP, MCP) renders from.
//!
//! A `DocdexError` carries a stable machine code, a human message and a hint that names the
//! fix. User errors (bad input, unknown repo) are kept apart from internal errors so that
//! HTTP can answer 4xx vs 5xx and the CLI can choose its exit code.

use serde::{Deserialize, Serialize};

/// The error table: each code's variant, its stable name (part of the public API), the HTTP
/// status it answers with, the CLI's exit code, and what it means. Adding a code is one line
/// here; every surface renders from it (see ARCHITECTURE.md, "Adding an error code").
macro_rules! error_codes {
    ($($(#[doc = $doc:literal])+ $variant:ident => $name:literal, $status:literal, $exit:literal;)+) => {
        /// Stable error codes. The string form (`snake_case`) is part of the public API.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
        #[serde(rename_all = "snake_case")]
        pub enum ErrorCode {
            $($(#[doc = $doc])+ $variant,)+
        }

        impl ErrorCode {
            /// Every code, in table order (the docs list them all).
            pub const ALL: &'static [ErrorCode] = &[$(ErrorCode::$variant),+];

            /// The HTTP status that goes with the code.
            pub fn http_status(self) -> u16 {
                match self {
                    $(ErrorCode::$variant => $status,)+
                }
            }

            /// The CLI's exit code for a command that failed with this code.
            pub fn exit_code(self) -> i32 {
                match self {
                    $(ErrorCode::$variant => $exit,)+
                }
            }

            pub fn as_str(self) -> &'static str {
                match self {
                    $(ErrorCode::$variant => $name,)+
                }
            }

            /// What the code means, as the docs say it.
            pub fn description(self) -> &'static str {
                match self {
                    $(ErrorCode::$variant => concat!($($doc),+),)+
                }
            }
        }
    };
}

error_codes! {
    /// The request is malformed: a missing or invalid parameter.
    InvalidRequest => "invalid_request", 400, 2;
    /// The repo path does not exist or is not a directory.
    RepoNotFound => "repo_not_found", 404, 2;
    /// The repo exists but has never been indexed (or its first index never completed).
    RepoNotIndexed => "repo_not_indexed", 404, 2;
    /// Another process holds the repo's index writer.
    IndexLocked => "index_locked", 409, 2;
    /// A bearer token is required and was missing or wrong.
    Unauthorized => "unauthorized", 401, 2;
    /// The request's Host or Origin is not this daemon's (DNS rebinding, a foreign web page).
    Forbidden => "forbidden", 403, 2;
    /// The requested route or item does not exist.
    NotFound => "not_found", 404, 2;
    /// The route exists but does not take the request's method.
    MethodNotAllowed => "method_not_allowed", 405, 2;
    /// Configuration could not be read or is invalid.
    ConfigInvalid => "config_invalid", 500, 2;
    /// The state directory could not be created or written.
    StateUnwritable => "state_unwritable", 500, 2;
    /// The embedding model or ONNX Runtime is missing or failed to load.
    ModelUnavailable => "model_unavailable", 503, 2;
    /// The web tier is turned off (`[web] enabled = false`) and the request needs it.
    WebDisabled => "web_disabled", 409, 2;
    /// A URL docdex refuses to fetch: another scheme than http(s), a private address, a
    /// blocked domain.
    UrlRefused => "url_refused", 403, 2;
    /// A web source failed: discovery blocked or down, a page that could not be fetched.
    WebUnavailable => "web_unavailable", 502, 2;
    /// A page or request took longer than its timeout.
    Timeout => "timeout", 504, 2;
    /// A library's docs could not be obtained (its registry client failed or is missing).
    LibraryUnavailable => "library_unavailable", 502, 2;
    /// A path docdex will not read: it resolves outside the repo, or is not a regular file.
    PathRefused => "path_refused", 403, 2;
    /// A request, body, or file over its size limit (the limit is in the message).
    TooLarge => "too_large", 413, 2;
    /// A state-changing request without a JSON body type.
    UnsupportedMediaType => "unsupported_media_type", 415, 2;
    /// A client with too many requests in flight.
    TooManyRequests => "too_many_requests", 429, 2;
    /// The LLM server cannot be reached, or does not have the model.
    LlmUnavailable => "llm_unavailable", 503, 2;
    /// The LLM server failed while answering.
    LlmError => "llm_error", 502, 2;
    /// The repo's first index run is still going (the message has its progress).
    IndexingInProgress => "indexing_in_progress", 503, 2;
    /// The repo's symbols were built by other grammars than this binary's; the next index
    /// run rebuilds them (a running daemon starts it on its own).
    StaleIndex => "stale_index", 409, 2;
    /// A second daemon for a home that has one running.
    DaemonRunning => "daemon_running", 409, 2;
    /// A name already taken otherwise (a collection's name, or its folder under another name).
    Conflict => "conflict", 409, 2;
    /// The team store (PostgreSQL, `[store] backend = "postgres"`) cannot be reached, lacks
    /// the vector extension, or has a schema newer than this docdexd.
    StoreUnavailable => "store_unavailable", 503, 2;
    /// Anything else: a bug or an environment failure.
    Internal => "internal", 500, 2;
}

impl ErrorCode {
    /// Whether the caller (rather than docdex or its environment) is at fault.
    pub fn is_user_error(self) -> bool {
        self.http_status() < 500
    }
}

/// Other words callers use for a parameter (`file` for `path`): checked before spelling, which
/// would pair `file` with `line`.
const PARAMETER_SYNONYMS: &[(&str, &[&str])] = &[
    ("path", &["file", "filename", "file_path", "filepath"]),
    ("budget_tokens", &["budget", "tokens", "max_tokens", "token_budget"]),
    ("query", &["q", "question", "text"]),
    ("q", &["query", "question"]),
    ("limit", &["max", "max_results", "top_k", "count"]),
    ("repo", &["repository", "root", "repo_path"]),
    ("name", &["symbol"]),
];

/// The parameter among `accepted` that `given` most likely meant: a synonym, one a typo away
/// (two in a long name), else a name it begins or that begins it (`budget`, `budget_tokens`).
pub fn closest_parameter<'a>(given: &str, accepted: &[&'a str]) -> Option<&'a str> {
    let lower = given.to_ascii_lowercase();
    let synonym = PARAMETER_SYNONYMS
        .iter()
        .find(|(name, words)| words.contains(&lower.as_str()) && accepted.contains(name))
        .and_then(|(name, _)| accepted.iter().find(|a| *a == name).copied());
    let prefix = || {
        accepted.iter().copied().find(|name| {
            (lower.len() >= 3 && name.starts_with(&*lower)) || (name.len() >= 3 && lower.starts_with(name))
        })
    };
    let spelling = || {
        accepted
            .iter()
            .map(|name| (strsim::damerau_levenshtein(&lower, name), *name))
            .filter(|(distance, name)| *distance <= (name.len() / 4).max(1))
            .min()
            .map(|(_, name)| name)
    };
    synonym.or_else(spelling).or_else(prefix)
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

    /// The error for serde's `unknown field` message: names the parameter, the closest one
    /// the endpoint or tool takes, and all it takes. `None` for any other message.
    pub fn unknown_parameter(serde_message: &str) -> Option<DocdexError> {
        let rest = serde_message.split("unknown field `").nth(1)?;
        let (given, rest) = rest.split_once('`')?;
        let accepted: Vec<&str> = rest.split('`').skip(1).step_by(2).collect();
        let message = match closest_parameter(given, &accepted) {
            Some(name) => format!("unknown parameter \"{given}\"; did you mean \"{name}\"?"),
            None => format!("unknown parameter \"{given}\""),
        };
        let hint = if accepted.is_empty() {
            "this endpoint takes no parameters".to_string()
        } else {
            format!("this endpoint takes: {}", accepted.join(", "))
        };
        Some(DocdexError::invalid(message).with_hint(hint))
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
            "name the root folder of an existing repository (`--repo` on the command line, `repo` over \
                 HTTP, `repo_path` in MCP tools, `docdex.repo` in a chat request)",
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
        // Tantivy's own text for an i/o error is the error's debug dump (`Os { code: 28, … }`):
        // the i/o error says it in words.
        if let tantivy::TantivyError::IoError(io) = &err {
            if io.kind() == std::io::ErrorKind::StorageFull || io.raw_os_error() == Some(28) {
                return DocdexError::disk_full(&**io);
            }
            return DocdexError::internal(format!("index error: {io}"));
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
    fn an_unknown_parameter_is_answered_with_the_one_meant() {
        let suggest = |given: &str, accepted: &[&str]| {
            let serde = format!(
                "unknown field `{given}`, expected one of {}",
                accepted.iter().map(|a| format!("`{a}`")).collect::<Vec<_>>().join(", ")
            );
            DocdexError::unknown_parameter(&serde).unwrap().message
        };
        let target = ["name", "path", "line", "limit", "offset", "min_confidence", "repo"];
        assert!(suggest("file", &target).ends_with("did you mean \"path\"?"));
        assert!(suggest("lmit", &target).ends_with("did you mean \"limit\"?"));
        assert!(suggest("min_confidnece", &target).ends_with("did you mean \"min_confidence\"?"));
        assert!(suggest("repoo", &target).ends_with("did you mean \"repo\"?"));
        let map = ["repo", "budget_tokens", "focus"];
        assert!(suggest("budget", &map).ends_with("did you mean \"budget_tokens\"?"));
        assert!(suggest("tokens", &map).ends_with("did you mean \"budget_tokens\"?"));
        // Two letters from `line` is too far for a four-letter name; nothing near, no guess.
        assert_eq!(suggest("fire", &["line", "limit"]), "unknown parameter \"fire\"");
        assert_eq!(suggest("zzz", &target), "unknown parameter \"zzz\"");
    }

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

    #[test]
    fn the_http_docs_list_every_code_with_its_status() {
        let docs = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/http.md")).unwrap();
        for code in ErrorCode::ALL {
            let row = format!("| `{}` | {} |", code.as_str(), code.http_status());
            assert!(docs.contains(&row), "docs/http.md has no row starting {row}");
            // The serde name is the table's name.
            assert_eq!(serde_json::to_value(code).unwrap(), code.as_str());
        }
    }
}
