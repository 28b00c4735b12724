//! The file tools: a file's lines, one chunk, several files, and the list of indexed
//! files, all read through the repo's root and refused outside it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use actix::{AsyncContext, Context, Handler, Message, ResponseFuture};
use schemars::JsonSchema;
use serde::Deserialize;

use super::params::{self, Caller, Tool};
use super::{open_indexed, tracked, ToolDispatcher};
use crate::actors::chat::ReadLines;
use crate::ingest::{Language, SizeLimits};
use crate::protocol::{
    ChunkContent, DocdexError, ErrorCode, FileContent, FileEntry, FileList, GetResult, MissingFile, MultiGetResponse,
    Result, SearchMode, SearchRequest, MAX_MULTI_GET, MAX_OPEN_LINES, MAX_SEARCH_LIMIT,
};

/// What `get` reads, from the parameters every surface takes (CLI `get`, `GET /v1/get`,
/// MCP `docdex_get`): lines of a file, the span of a symbol, or one chunk.
#[derive(Debug, Clone, PartialEq)]
pub enum GetTarget {
    Lines {
        path: String,
        start_opt: Option<u64>,
        end_opt: Option<u64>,
    },
    /// An item or heading name; `path_opt` narrows it to one file, and lines given override
    /// the span found.
    Symbol {
        symbol: String,
        path_opt: Option<String>,
        start_opt: Option<u64>,
        end_opt: Option<u64>,
    },
    Chunk(u32),
}

impl GetTarget {
    /// The one check of `get`'s parameters, shared by every surface.
    pub fn from_params(
        path_opt: Option<String>,
        symbol_opt: Option<String>,
        chunk_id_opt: Option<u64>,
        start_opt: Option<u64>,
        end_opt: Option<u64>,
    ) -> Result<Self> {
        params::line("line_start", start_opt)?;
        params::line("line_end", end_opt)?;
        match (chunk_id_opt, symbol_opt, path_opt) {
            (Some(id), None, None) if start_opt.is_none() && end_opt.is_none() => u32::try_from(id)
                .map(GetTarget::Chunk)
                .map_err(|_| DocdexError::new(ErrorCode::NotFound, format!("no chunk {id} in this repo"))),
            (Some(_), _, _) => {
                Err(DocdexError::invalid("chunk_id stands alone: give it without path, symbol, line_start or line_end"))
            }
            (None, Some(symbol), path_opt) => Ok(GetTarget::Symbol { symbol, path_opt, start_opt, end_opt }),
            (None, None, Some(path)) => Ok(GetTarget::Lines { path, start_opt, end_opt }),
            (None, None, None) => Err(DocdexError::invalid(
                "give path (with line_start/line_end), symbol (an item or heading name), or chunk_id",
            )),
        }
    }
}

/// Reads what a `GetTarget` names.
#[derive(Message)]
#[rtype(result = "Result<GetResult>")]
pub struct Get {
    pub repo_opt: Option<PathBuf>,
    pub target: GetTarget,
}

impl Handler<Get> for ToolDispatcher {
    type Result = ResponseFuture<Result<GetResult>>;

    fn handle(&mut self, msg: Get, ctx: &mut Context<Self>) -> Self::Result {
        let me = ctx.address();
        Box::pin(async move {
            let repo_opt = msg.repo_opt;
            match msg.target {
                GetTarget::Chunk(chunk_id) => Ok(GetResult::Chunk(me.send(GetChunk { repo_opt, chunk_id }).await??)),
                GetTarget::Lines { path, start_opt, end_opt } => {
                    Ok(GetResult::File(me.send(OpenFile { repo_opt, path, start_opt, end_opt }).await??))
                }
                GetTarget::Symbol { symbol, path_opt, start_opt, end_opt } => {
                    let (path, start, end) = locate(&me, repo_opt.clone(), &symbol, path_opt.as_deref()).await?;
                    let open = OpenFile {
                        repo_opt,
                        path,
                        start_opt: Some(start_opt.unwrap_or(start)),
                        end_opt: Some(end_opt.unwrap_or(end)),
                    };
                    Ok(GetResult::File(me.send(open).await??))
                }
            }
        })
    }
}

/// Where `symbol` is defined: a definition of that name in the code graph (plain or
/// qualified, the best ranked; in `path_opt` when given), else a chunk whose heading names
/// it (a markdown section, or code in a language without a grammar).
async fn locate(
    me: &actix::Addr<ToolDispatcher>,
    repo_opt: Option<PathBuf>,
    symbol: &str,
    path_opt: Option<&str>,
) -> Result<(String, u64, u64)> {
    use super::code::{FindSymbols, Page};
    let symbol = symbol.trim();
    if symbol.is_empty() {
        return Err(DocdexError::invalid("symbol must not be empty"));
    }
    let find = FindSymbols {
        repo_opt: repo_opt.clone(),
        name_opt: Some(symbol.to_string()),
        kind_opt: None,
        language_opt: None,
        page: Page { limit: 1000, offset: 0 },
    };
    // A graph that cannot answer (a stale index) leaves the headings to answer.
    if let Ok(Ok(found)) = me.send(find).await {
        if let Some(def) = found.symbols.iter().find(|s| path_opt.is_none_or(|path| s.path == path)) {
            return Ok((def.path.clone(), u64::from(def.line), u64::from(def.end_line)));
        }
    }
    let name = symbol.rsplit("::").next().unwrap_or("").trim().to_string();
    let request = SearchRequest {
        source_opt: None,
        lib_opt: None,
        repo_opt,
        query: name.clone(),
        limit: MAX_SEARCH_LIMIT,
        mode_opt: Some(SearchMode::Lexical),
        explain: false,
    };
    let response = me.send(super::search::Search(request)).await??;
    let names = |heading: &str| -> bool {
        let last = heading.rsplit(" > ").next().unwrap_or("");
        last.split(", ").any(|n| n.trim() == name) || last.trim() == name || heading.trim() == symbol
    };
    response
        .hits
        .iter()
        .filter(|hit| path_opt.is_none_or(|path| hit.path == path))
        .find(|hit| names(&hit.heading))
        .map(|hit| (hit.path.clone(), hit.line_start, hit.line_end))
        .ok_or_else(|| {
            DocdexError::new(ErrorCode::NotFound, format!("no item or section named `{symbol}` was found"))
                .with_hint("check the name with search or symbols, or read by path and lines")
        })
}

/// Reads lines of an indexed file.
#[derive(Message)]
#[rtype(result = "Result<FileContent>")]
pub struct OpenFile {
    pub repo_opt: Option<PathBuf>,
    pub path: String,
    pub start_opt: Option<u64>,
    pub end_opt: Option<u64>,
}

// ---- Parameters, as every surface takes them (see `params`).

/// `GET /v1/get`, MCP `docdex_get`, `docdex get`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetParams {
    /// File path relative to the repo root, as search results give it (with `symbol`: only
    /// that file's definition).
    #[serde(default)]
    pub path: Option<String>,
    /// Read where this item or section is defined instead of by line numbers: a function,
    /// type or heading name, plain or qualified, e.g. "run_detached", "Router::route" or
    /// "Installation".
    #[serde(default)]
    pub symbol: Option<String>,
    /// A chunk id from a search hit (that chunk in full; alone, without path or lines).
    #[serde(default, deserialize_with = "params::number")]
    #[schemars(range(min = 0))]
    pub chunk_id: Option<u64>,
    /// First line, 1-based (default 1, or the symbol's first line; the previous page's
    /// `line_end` + 1 to read on).
    #[serde(default, deserialize_with = "params::number")]
    #[schemars(range(min = 1))]
    pub line_start: Option<u64>,
    /// Last line, inclusive (default: the end of the file or of the symbol; at most 400
    /// lines are returned).
    #[serde(default, deserialize_with = "params::number")]
    #[schemars(range(min = 1))]
    pub line_end: Option<u64>,
    /// Repository root (default: the server's repo). `repo_path` and `project_root` are taken too.
    #[serde(default, alias = "repo_path", alias = "project_root")]
    pub repo: Option<PathBuf>,
}

impl Tool for GetParams {
    type Message = Get;
    type Output = GetResult;

    fn repo(&self) -> Option<&Path> {
        self.repo.as_deref()
    }

    fn into_message(self, repo_opt: Option<PathBuf>, _: &Caller) -> Result<Get> {
        let target = GetTarget::from_params(self.path, self.symbol, self.chunk_id, self.line_start, self.line_end)?;
        Ok(Get { repo_opt, target })
    }
}

/// `POST /v1/multi-get`, MCP `docdex_multi_get`, `docdex multi-get`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MultiGetParams {
    /// Paths relative to the repo root, or...
    #[serde(default, deserialize_with = "params::list")]
    pub paths: Option<Vec<String>>,
    /// ...a glob over them, e.g. "docs/**/*.md".
    #[serde(default)]
    pub glob: Option<String>,
    /// Files to read, 1-50 (default 10); each at most 400 lines.
    #[serde(default, deserialize_with = "params::number")]
    #[schemars(range(min = 1, max = 50))]
    pub limit: Option<u64>,
    /// Where this page starts: the `next_offset` of the previous one (default 0).
    #[serde(default, deserialize_with = "params::number")]
    #[schemars(range(min = 0))]
    pub offset: Option<u64>,
    /// Repository root (default: the server's repo). `repo_path` and `project_root` are taken too.
    #[serde(default, alias = "repo_path", alias = "project_root")]
    pub repo: Option<PathBuf>,
}

impl Tool for MultiGetParams {
    type Message = MultiGet;
    type Output = MultiGetResponse;

    fn repo(&self) -> Option<&Path> {
        self.repo.as_deref()
    }

    fn into_message(self, repo_opt: Option<PathBuf>, _: &Caller) -> Result<MultiGet> {
        Ok(MultiGet {
            repo_opt,
            paths: self.paths.unwrap_or_default(),
            glob_opt: params::text(self.glob),
            limit: params::bounded("limit", self.limit, DEFAULT_MULTI_GET, MAX_MULTI_GET)?,
            offset: params::offset(self.offset),
        })
    }
}

/// `GET /v1/files`, MCP `docdex_files`, `docdex files`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FilesParams {
    /// Glob over repo-relative paths, e.g. "src/**/*.rs".
    #[serde(default)]
    pub glob: Option<String>,
    /// Files to list, 1-5000 (default 200).
    #[serde(default, deserialize_with = "params::number")]
    #[schemars(range(min = 1, max = 5000))]
    pub limit: Option<u64>,
    /// Where this page starts: the `next_offset` of the previous one (default 0).
    #[serde(default, deserialize_with = "params::number")]
    #[schemars(range(min = 0))]
    pub offset: Option<u64>,
    /// Repository root (default: the server's repo). `repo_path` and `project_root` are taken too.
    #[serde(default, alias = "repo_path", alias = "project_root")]
    pub repo: Option<PathBuf>,
}

impl Tool for FilesParams {
    type Message = ListFiles;
    type Output = FileList;

    fn repo(&self) -> Option<&Path> {
        self.repo.as_deref()
    }

    fn into_message(self, repo_opt: Option<PathBuf>, _: &Caller) -> Result<ListFiles> {
        Ok(ListFiles {
            repo_opt,
            glob_opt: params::text(self.glob),
            limit: params::bounded("limit", self.limit, DEFAULT_FILES_LIMIT, MAX_FILES)?,
            offset: params::offset(self.offset),
        })
    }
}

/// Files a list gives when the caller names no limit (every surface: CLI, HTTP, MCP).
pub const DEFAULT_FILES_LIMIT: usize = 200;
/// Most files one list gives.
pub const MAX_FILES: usize = 5000;
/// Files one multi-get reads when the caller names no limit (at most `MAX_MULTI_GET`).
pub const DEFAULT_MULTI_GET: usize = 10;

/// Lists indexed files, optionally matching a glob.
#[derive(Message)]
#[rtype(result = "Result<FileList>")]
pub struct ListFiles {
    pub repo_opt: Option<PathBuf>,
    pub glob_opt: Option<String>,
    pub limit: usize,
    /// Files skipped first (the list is sorted by path).
    pub offset: usize,
}

impl Handler<OpenFile> for ToolDispatcher {
    type Result = ResponseFuture<Result<FileContent>>;

    fn handle(&mut self, msg: OpenFile, _: &mut Context<Self>) -> Self::Result {
        let repo = self.resolve_repo(msg.repo_opt.clone());
        let repo_manager = self.repo_manager.clone();
        let limits = open_limits(&self.config);
        tracked(&self.metrics, "open", async move {
            let handle = open_indexed(&repo_manager, repo.await?).await?;
            let index = Arc::clone(&handle.index);
            tokio::task::spawn_blocking(move || read_file_lines(&index, &msg, limits)).await?
        })
    }
}

/// The largest files `get` opens: `[core] max_open_bytes`, and for a document (whose bytes
/// are mostly not text) the index's own limit.
pub fn open_limits(config: &crate::config::Config) -> SizeLimits {
    SizeLimits { text: config.core.max_open_bytes, document: config.index.max_document_bytes }
}

/// Only indexed files can be opened: no reading outside the repo or past its ignore rules.
/// The file is opened first and the opened handle is checked (its real path inside the
/// repo, a regular file, at most `max_open_bytes`), so a symbolic link swapped in after
/// indexing cannot redirect the read.
fn read_file_lines(index: &crate::index::RepoIndex, msg: &OpenFile, limits: SizeLimits) -> Result<FileContent> {
    let rel = msg.path.trim_start_matches("./").to_string();
    if rel.trim().is_empty() {
        return Err(DocdexError::invalid("path must not be empty")
            .with_hint("use a path relative to the repo root, as search results and `files` give it"));
    }
    if index.store.file(&index.store.read_txn()?, &rel)?.is_none() {
        return Err(DocdexError::new(ErrorCode::NotFound, format!("{rel} is not an indexed file of this repo"))
            .with_hint("use a path relative to the repo root, as search results and `files` give it"));
    }
    let text = read_text_inside(&index.root, &rel, limits)?;
    let lines: Vec<&str> = text.lines().collect();
    let total = lines.len() as u64;
    let start = msg.start_opt.unwrap_or(1).max(1);
    if start > total.max(1) {
        return Err(DocdexError::invalid(format!("{rel} has {total} lines; line_start {start} is past the end")));
    }
    let wanted_end = msg.end_opt.unwrap_or(total).min(total);
    if msg.end_opt.is_some_and(|end| end < start) {
        return Err(DocdexError::invalid("line_end must not be before line_start"));
    }
    let end = wanted_end.min(start + MAX_OPEN_LINES - 1);
    let body = lines[(start - 1) as usize..end as usize].join("\n");
    Ok(FileContent {
        path: rel,
        line_start: start,
        line_end: end,
        total_lines: total,
        truncated: end < wanted_end,
        text: body,
    })
}

/// Reads `rel` under `root` through one handle whose resolved path must stay inside `root`.
/// `root` is the repo's path as it resolved when it was opened (`RepoIndex::root`), never
/// resolved again here: a root swapped for a link since cannot lead the read outside.
pub fn read_inside(root: &std::path::Path, rel: &str, max_bytes: u64) -> Result<String> {
    read_bytes_inside(root, rel, max_bytes).map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
}

/// A file's text as the index reads it: a document (HTML, PDF, DOCX) converted, so the lines
/// are the ones its hits give; any other file as `read_inside` reads it.
pub fn read_text_inside(root: &std::path::Path, rel: &str, limits: SizeLimits) -> Result<String> {
    let language = Language::detect(std::path::Path::new(rel));
    if !language.is_document() {
        return read_inside(root, rel, limits.text);
    }
    let bytes = read_bytes_inside(root, rel, limits.document)?;
    let hash = crate::ingest::sha256_hex(&bytes);
    if let Some(text) = recently_converted(&hash) {
        return Ok(text.to_string());
    }
    let text = crate::document::convert(language, rel, &bytes).map(|document| document.text).map_err(|reason| {
        DocdexError::new(
            ErrorCode::UnsupportedMediaType,
            format!("{rel} cannot be read as {}: {reason}", language.name()),
        )
    })?;
    remember_converted(hash, &text);
    Ok(text)
}

/// Documents converted for reading lately, by content hash, newest last: a chat that reads
/// five hits of one long PDF converts it once, not five times (a thousand pages take
/// seconds).
static CONVERTED: std::sync::Mutex<Vec<(String, Arc<str>)>> = std::sync::Mutex::new(Vec::new());
const MAX_CONVERTED: usize = 4;

fn recently_converted(hash: &str) -> Option<Arc<str>> {
    let cache = CONVERTED.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    cache.iter().find(|(h, _)| h == hash).map(|(_, text)| Arc::clone(text))
}

fn remember_converted(hash: String, text: &str) {
    let mut cache = CONVERTED.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    cache.retain(|(h, _)| *h != hash);
    if cache.len() >= MAX_CONVERTED {
        cache.remove(0);
    }
    cache.push((hash, Arc::from(text)));
}

fn read_bytes_inside(root: &std::path::Path, rel: &str, max_bytes: u64) -> Result<Vec<u8>> {
    use crate::ingest::open::{self, Refused};
    match open::read_inside(root, rel, max_bytes) {
        Ok(bytes) => Ok(bytes),
        Err(Refused::Outside) => Err(DocdexError::new(
            ErrorCode::PathRefused,
            format!("{rel} resolves outside the repo (a symbolic link?); docdex does not read it"),
        )),
        Err(Refused::NotRegular) => {
            Err(DocdexError::new(ErrorCode::PathRefused, format!("{rel} is not a regular file")))
        }
        Err(Refused::TooLarge(size)) => Err(DocdexError::new(
            ErrorCode::TooLarge,
            format!("{rel} is {size} bytes, over the {max_bytes}-byte limit for opening files"),
        )
        .with_hint("raise [core] max_open_bytes, or read it with line_start/line_end from search results")),
        Err(Refused::Io(err)) => Err(DocdexError::new(ErrorCode::NotFound, format!("cannot read {rel}: {err}"))),
    }
}

impl Handler<ListFiles> for ToolDispatcher {
    type Result = ResponseFuture<Result<FileList>>;

    fn handle(&mut self, msg: ListFiles, _: &mut Context<Self>) -> Self::Result {
        let repo = self.resolve_repo(msg.repo_opt);
        let repo_manager = self.repo_manager.clone();
        Box::pin(async move {
            let matcher = match &msg.glob_opt {
                Some(glob) => Some(
                    globset::Glob::new(glob)
                        .map_err(|err| DocdexError::invalid(format!("bad glob `{glob}`: {err}")))?
                        .compile_matcher(),
                ),
                None => None,
            };
            let handle = open_indexed(&repo_manager, repo.await?).await?;
            let index = Arc::clone(&handle.index);
            tokio::task::spawn_blocking(move || {
                let files = index.store.all_files(&index.store.read_txn()?)?;
                let mut entries: Vec<FileEntry> = files
                    .into_iter()
                    .filter(|(path, record)| {
                        record.language != "binary" && matcher.as_ref().is_none_or(|m| m.is_match(path))
                    })
                    .map(|(path, record)| FileEntry {
                        path,
                        language: record.language,
                        chunks: record.chunks,
                        size: record.size,
                    })
                    .collect();
                entries.sort_by(|a, b| a.path.cmp(&b.path));
                let total = entries.len() as u64;
                let files: Vec<FileEntry> = entries.into_iter().skip(msg.offset).take(msg.limit).collect();
                let truncated = ((msg.offset + files.len()) as u64) < total;
                Ok(FileList { total, truncated, files })
            })
            .await?
        })
    }
}

/// Chat reads a hit's lines as a file open would.
impl Handler<ReadLines> for ToolDispatcher {
    type Result = ResponseFuture<Result<FileContent>>;

    fn handle(&mut self, msg: ReadLines, ctx: &mut Context<Self>) -> Self::Result {
        let open =
            OpenFile { repo_opt: Some(msg.repo), path: msg.path, start_opt: Some(msg.start), end_opt: Some(msg.end) };
        <Self as Handler<OpenFile>>::handle(self, open, ctx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A document is read as its converted text, and a changed document as its new text:
    /// the conversions kept for reading are keyed by content, not by path.
    #[test]
    fn a_document_reads_as_its_converted_text_and_a_changed_one_as_its_new_text() {
        let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/documents");
        let repo = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(repo.path()).unwrap();
        let limits = SizeLimits::uniform(64 << 20);
        std::fs::copy(fixtures.join("qemu-nbd.html"), root.join("doc.html")).unwrap();
        let first = read_text_inside(&root, "doc.html", limits).unwrap();
        assert!(first.contains("qemu-nbd") && !first.contains("<div"), "{first}");
        assert_eq!(read_text_inside(&root, "doc.html", limits).unwrap(), first);
        std::fs::copy(fixtures.join("shared-mime-info-spec.html"), root.join("doc.html")).unwrap();
        let second = read_text_inside(&root, "doc.html", limits).unwrap();
        assert!(second.contains("Unified system") && !second.contains("qemu-nbd"), "{second}");
        std::fs::write(root.join("broken.docx"), b"PK not a zip").unwrap();
        let err = read_text_inside(&root, "broken.docx", limits).unwrap_err();
        assert_eq!(err.code, ErrorCode::UnsupportedMediaType, "{err:?}");
    }

    #[test]
    fn open_reads_inside_the_repo_and_refuses_links_out_and_oversized_files() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.txt"), "do not read").unwrap();
        let repo = tempfile::tempdir().unwrap();
        std::fs::create_dir(repo.path().join("src")).unwrap();
        std::fs::write(repo.path().join("src/lib.rs"), "pub fn a() {}\n").unwrap();
        assert_eq!(read_inside(repo.path(), "src/lib.rs", 1024).unwrap(), "pub fn a() {}\n");
        // A link inside the repo to a file inside it is fine.
        std::os::unix::fs::symlink(repo.path().join("src/lib.rs"), repo.path().join("src/alias.rs")).unwrap();
        assert!(read_inside(repo.path(), "src/alias.rs", 1024).is_ok());
        // A file swapped for a link out of the repo after indexing is refused.
        std::fs::remove_file(repo.path().join("src/lib.rs")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret.txt"), repo.path().join("src/lib.rs")).unwrap();
        let err = read_inside(repo.path(), "src/lib.rs", 1024).unwrap_err();
        assert_eq!(err.code, ErrorCode::PathRefused, "{err:?}");
        // So is a directory link, and `..`.
        std::os::unix::fs::symlink(outside.path(), repo.path().join("out")).unwrap();
        assert_eq!(read_inside(repo.path(), "out/secret.txt", 1024).unwrap_err().code, ErrorCode::PathRefused);
        let escape = format!("../{}/secret.txt", outside.path().file_name().unwrap().to_string_lossy());
        assert_eq!(read_inside(repo.path(), &escape, 1024).unwrap_err().code, ErrorCode::PathRefused);
        // Not a regular file; over the size limit.
        assert_eq!(read_inside(repo.path(), "src", 1024).unwrap_err().code, ErrorCode::PathRefused);
        std::fs::write(repo.path().join("big.txt"), vec![b'x'; 2048]).unwrap();
        let err = read_inside(repo.path(), "big.txt", 1024).unwrap_err();
        assert_eq!(err.code, ErrorCode::TooLarge);
        assert!(err.message.contains("1024-byte limit"), "{}", err.message);
    }
}

/// One chunk by the id a search hit gave (`docdex_get`).
#[derive(Message)]
#[rtype(result = "Result<ChunkContent>")]
pub struct GetChunk {
    pub repo_opt: Option<PathBuf>,
    pub chunk_id: u32,
}

/// Several files at once, by a list of paths or a glob (`docdex_multi_get`).
#[derive(Message)]
#[rtype(result = "Result<MultiGetResponse>")]
pub struct MultiGet {
    pub repo_opt: Option<PathBuf>,
    pub paths: Vec<String>,
    pub glob_opt: Option<String>,
    /// At most this many files (≤ `MAX_MULTI_GET`).
    pub limit: usize,
    /// Files of the list (or matches of the glob) skipped first.
    pub offset: usize,
}

impl Handler<GetChunk> for ToolDispatcher {
    type Result = ResponseFuture<Result<ChunkContent>>;

    fn handle(&mut self, msg: GetChunk, _: &mut Context<Self>) -> Self::Result {
        let repo = self.resolve_repo(msg.repo_opt);
        let repo_manager = self.repo_manager.clone();
        tracked(&self.metrics, "open", async move {
            let handle = open_indexed(&repo_manager, repo.await?).await?;
            let index = Arc::clone(&handle.index);
            let chunk = tokio::task::spawn_blocking(move || index.chunk(msg.chunk_id)).await??;
            chunk.ok_or_else(|| {
                DocdexError::new(ErrorCode::NotFound, format!("no chunk {} in this repo", msg.chunk_id))
                    .with_hint("chunk ids change when their file is re-indexed: search again, or get the file by path")
            })
        })
    }
}

impl Handler<MultiGet> for ToolDispatcher {
    type Result = ResponseFuture<Result<MultiGetResponse>>;

    fn handle(&mut self, msg: MultiGet, ctx: &mut Context<Self>) -> Self::Result {
        let me = ctx.address();
        Box::pin(async move {
            if msg.limit == 0 || msg.limit > MAX_MULTI_GET {
                return Err(DocdexError::invalid(format!(
                    "limit must be between 1 and {MAX_MULTI_GET}, got {}",
                    msg.limit
                )));
            }
            let (total, paths) = match (&msg.glob_opt, msg.paths.is_empty()) {
                (Some(_), true) | (None, true) => {
                    let Some(glob) = msg.glob_opt.clone() else {
                        return Err(DocdexError::invalid("give paths or a glob"));
                    };
                    let list = me
                        .send(ListFiles {
                            repo_opt: msg.repo_opt.clone(),
                            glob_opt: Some(glob),
                            limit: msg.limit,
                            offset: msg.offset,
                        })
                        .await??;
                    (list.total, list.files.into_iter().map(|f| f.path).collect::<Vec<_>>())
                }
                (None, false) => {
                    // A path asked for twice is read once.
                    let mut unique: Vec<&String> = Vec::new();
                    for path in &msg.paths {
                        if !unique.contains(&path) {
                            unique.push(path);
                        }
                    }
                    (unique.len() as u64, unique.into_iter().skip(msg.offset).take(msg.limit).cloned().collect())
                }
                (Some(_), false) => return Err(DocdexError::invalid("give paths or a glob, not both")),
            };
            let read_to = (msg.offset + paths.len()) as u64;
            let next_offset = (read_to < total).then_some(read_to);
            let mut response = MultiGetResponse { total, files: Vec::new(), missing: Vec::new(), next_offset };
            for path in paths {
                if path.trim().is_empty() {
                    response.missing.push(MissingFile { path, error: "an empty path names no file".into() });
                    continue;
                }
                let open =
                    OpenFile { repo_opt: msg.repo_opt.clone(), path: path.clone(), start_opt: None, end_opt: None };
                match me.send(open).await? {
                    Ok(content) => response.files.push(content),
                    // A wrong path among several is reported, not fatal; a wrong repo is.
                    Err(err)
                        if matches!(err.code, ErrorCode::NotFound | ErrorCode::PathRefused | ErrorCode::TooLarge) =>
                    {
                        response.missing.push(MissingFile { path, error: err.message })
                    }
                    Err(err) => return Err(err),
                }
            }
            Ok(response)
        })
    }
}
