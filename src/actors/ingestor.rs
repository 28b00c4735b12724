//! Ingestor: walks repos and turns changed files into chunks. A sync actor: reading files,
//! hashing and tree-sitter parsing are blocking CPU work that must stay off the executor.

use std::collections::HashMap;
use std::path::PathBuf;

use actix::{Actor, Handler, Message, SyncContext};

use crate::code::FileCode;
use crate::index::FileRecord;
use crate::ingest::{
    read_text_file, scan_paths, scan_repo, sha256_hex, Chunk, ChunkParams, FileRead, Language, ScanResult, ScannedFile,
    SizeLimits,
};

pub struct Ingestor;

/// Nice value of the Ingestor threads.
const INGEST_NICE: i32 = 10;

/// Lowers the calling thread's CPU priority. Indexing is background work: searches, and the
/// Tantivy thread that drains what the Ingestors produce, come first (on two cores that
/// keeps the writer from falling behind and shortens an index run by a tenth). Best effort:
/// where it fails, the threads just keep the default priority.
pub fn lower_this_thread_priority() {
    #[cfg(target_os = "linux")]
    // SAFETY: plain integer arguments; on Linux, PRIO_PROCESS with a thread id sets the nice
    // value of that one thread.
    unsafe {
        libc::setpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t, INGEST_NICE);
    }
}

impl Actor for Ingestor {
    type Context = SyncContext<Self>;
}

/// Lists the files of a repo that pass the ignore rules and the size cap: all of them, or
/// those among the changed paths a watcher saw (`only_opt`, relative to the root).
#[derive(Message)]
#[rtype(result = "ScanResult")]
pub struct ScanRepo {
    pub root: PathBuf,
    pub limits: SizeLimits,
    pub only_opt: Option<Vec<String>>,
}

/// Reads and chunks files whose size or mtime changed since the last run.
#[derive(Message)]
#[rtype(result = "Vec<IngestedFile>")]
pub struct ChunkFiles {
    /// The repo's canonical root: files are read through handles checked to stay inside it.
    pub root: PathBuf,
    pub limits: SizeLimits,
    pub files: Vec<ScannedFile>,
    /// Content hash per path from the last run, to recognise touched-but-unchanged files.
    pub known_hashes: HashMap<String, String>,
    pub params: ChunkParams,
}

/// What ingesting one file produced.
#[derive(Debug)]
pub enum IngestedFile {
    /// New or changed content: its chunks (and code facts, for a language with a grammar)
    /// replace the old ones.
    Changed { path: String, record: FileRecord, chunks: Vec<Chunk>, code: Option<Box<FileCode>> },
    /// Same content, new mtime: only the record is refreshed.
    Unchanged { path: String, record: FileRecord },
    /// Binary or a document that cannot be converted (recorded, so it is not re-read every
    /// run; the document's record says why) or unreadable (not recorded, so it is retried next
    /// run). Either way it has no chunks.
    Skipped { path: String, record_opt: Option<FileRecord>, reason: String },
}

impl Handler<ScanRepo> for Ingestor {
    type Result = actix::MessageResult<ScanRepo>;

    fn handle(&mut self, msg: ScanRepo, _: &mut SyncContext<Self>) -> Self::Result {
        actix::MessageResult(match &msg.only_opt {
            Some(changed) => scan_paths(&msg.root, changed, msg.limits),
            None => scan_repo(&msg.root, msg.limits),
        })
    }
}

impl Handler<ChunkFiles> for Ingestor {
    type Result = actix::MessageResult<ChunkFiles>;

    fn handle(&mut self, msg: ChunkFiles, _: &mut SyncContext<Self>) -> Self::Result {
        let out = msg
            .files
            .into_iter()
            .map(|file| {
                let path = file.rel_path.clone();
                // A chunker bug on one file skips that file; the run and the thread go on.
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    ingest_file(&msg.root, msg.limits, file, &msg.known_hashes, msg.params)
                }))
                .unwrap_or_else(|payload| {
                    let reason = format!("the chunker failed: {}", super::panic_message(payload.as_ref()));
                    tracing::error!(path = %path, "{reason}");
                    IngestedFile::Skipped { path, record_opt: None, reason }
                })
            })
            .collect();
        actix::MessageResult(out)
    }
}

/// Test hook: the chunker panics on files whose path ends with this value, to prove a bug
/// on one file costs that file only.
pub const FAULT_PANIC_ON_FILE_ENV: &str = "DOCDEX_FAULT_PANIC_ON_FILE";

fn ingest_file(
    root: &std::path::Path,
    limits: SizeLimits,
    file: ScannedFile,
    known_hashes: &HashMap<String, String>,
    params: ChunkParams,
) -> IngestedFile {
    let language = Language::detect(std::path::Path::new(&file.rel_path));
    let (size, mtime_ns) = (file.size, u64::try_from(file.mtime_ns).unwrap_or(u64::MAX));
    let record = move |content_hash: String, chunks: u32, language: &str| FileRecord {
        content_hash,
        size,
        mtime_ns,
        chunks,
        language: language.to_string(),
        // Assigned by the Indexer when the chunks are written.
        chunk_ids: Vec::new(),
        problem: None,
    };
    if language.is_document() {
        return ingest_document(root, limits.document, language, file, known_hashes, params, record);
    }
    let text = match read_text_file(root, &file.rel_path, limits.text) {
        FileRead::Text(text) => text,
        FileRead::Binary => {
            let record_opt = Some(record(String::new(), 0, "binary"));
            return IngestedFile::Skipped { record_opt, path: file.rel_path, reason: "binary".into() };
        }
        FileRead::Unreadable(reason) => {
            return IngestedFile::Skipped { record_opt: None, path: file.rel_path, reason };
        }
    };
    let language = language.with_text(std::path::Path::new(&file.rel_path), &text);
    let hash = sha256_hex(text.as_bytes());
    if known_hashes.get(&file.rel_path) == Some(&hash) {
        // The chunk count is carried over from the old record by the Indexer.
        return IngestedFile::Unchanged { record: record(hash, 0, language.name()), path: file.rel_path };
    }
    inject_fault(&file.rel_path);
    let (chunks, code) = crate::code::chunks_and_code(language, &file.rel_path, &text, params);
    IngestedFile::Changed {
        record: record(hash, chunks.len() as u32, language.name()),
        path: file.rel_path,
        chunks,
        code: code.map(Box::new),
    }
}

/// A document: its bytes hashed (unchanged ones are not converted again), converted to text
/// with its structure, and chunked by headings and pages. One that cannot be converted is
/// recorded with the reason, so `status` lists it and the next run does not retry it until
/// it changes.
fn ingest_document(
    root: &std::path::Path,
    max_bytes: u64,
    language: Language,
    file: ScannedFile,
    known_hashes: &HashMap<String, String>,
    params: ChunkParams,
    record: impl Fn(String, u32, &str) -> FileRecord,
) -> IngestedFile {
    let bytes = match crate::ingest::open::read_inside(root, &file.rel_path, max_bytes) {
        Ok(bytes) => bytes,
        Err(refused) => {
            let reason = format!("{} is not read: {refused}", file.rel_path);
            return IngestedFile::Skipped { record_opt: None, path: file.rel_path, reason };
        }
    };
    let hash = sha256_hex(&bytes);
    if known_hashes.get(&file.rel_path) == Some(&hash) {
        return IngestedFile::Unchanged { record: record(hash, 0, language.name()), path: file.rel_path };
    }
    inject_fault(&file.rel_path);
    match crate::document::convert(language, &file.rel_path, &bytes) {
        Ok(document) => {
            let chunks = crate::ingest::chunk_document(&document, params);
            IngestedFile::Changed {
                record: record(hash, chunks.len() as u32, language.name()),
                path: file.rel_path,
                chunks,
                code: None,
            }
        }
        Err(reason) => {
            tracing::warn!(path = %file.rel_path, "document skipped: {reason}");
            let record_opt = Some(FileRecord { problem: Some(reason.clone()), ..record(hash, 0, language.name()) });
            IngestedFile::Skipped { record_opt, path: file.rel_path, reason }
        }
    }
}

fn inject_fault(rel_path: &str) {
    if std::env::var(FAULT_PANIC_ON_FILE_ENV).is_ok_and(|suffix| !suffix.is_empty() && rel_path.ends_with(&suffix)) {
        panic!("injected chunker fault on {rel_path}");
    }
}
