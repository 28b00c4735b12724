//! The facts of diff sides the code graph does not hold, kept by their text's hash.
//!
//! A diff's side that is not what the index holds must be parsed, and parsing is most of a
//! diff's answer time (a large file takes tens of milliseconds). Two moments make the same
//! side come back: an agent asks again about the same working tree (impact, then
//! `run-tests --affected`, which reads the diff twice itself), and the index reads an edit,
//! after which the diff's *old* side is the text the index held just before. So the sides
//! parsed are kept here, and so are the facts a rebuilt graph no longer holds
//! (`keep_replaced`): then an edit the watcher has read answers without a parse.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::code::{CodeGraph, FileCode};

/// Sides kept at most: a few diffs' worth of files.
pub const MAX_SIDES: usize = 64;
/// And their facts' size at most, roughly (`approx_bytes`): a large file's facts take a few
/// megabytes, and 64 of those would be a daemon's memory twice over.
pub const MAX_BYTES: usize = 32 * 1024 * 1024;

/// (path, language, SHA-256 hex of the text).
type Key = (String, String, String);

/// Facts by the path, language and hash of the text they were read from, at most
/// `MAX_SIDES`, the least recently used forgotten first.
#[derive(Default)]
pub struct SideFacts {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    /// Facts, when last used, their `approx_bytes`.
    facts: HashMap<Key, (Arc<FileCode>, u64, usize)>,
    clock: u64,
    bytes: usize,
}

/// What a file's facts take in memory, roughly: their vectors' items and strings.
fn approx_bytes(code: &FileCode) -> usize {
    use std::mem::size_of_val;
    let strings: usize = code.strings.iter().map(|s| s.len() + 24).sum();
    let symbols: usize = code
        .symbols
        .iter()
        .map(|s| size_of_val(s) + s.name.len() + s.qualified_name.len() + s.container.len() + s.signature.len())
        .sum();
    size_of_val(code) + strings + symbols + size_of_val(code.occurrences.as_slice())
}

impl SideFacts {
    pub fn get(&self, path: &str, language: &str, hash: &str) -> Option<Arc<FileCode>> {
        let mut inner = self.inner.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        inner.clock += 1;
        let now = inner.clock;
        let key = (path.to_string(), language.to_string(), hash.to_string());
        let (code, used, _) = inner.facts.get_mut(&key)?;
        *used = now;
        Some(Arc::clone(code))
    }

    pub fn put(&self, path: &str, hash: &str, code: Arc<FileCode>) {
        // No language: a text its grammar could not read, which is not asked for by one.
        if hash.is_empty() || code.language.is_empty() {
            return;
        }
        let mut inner = self.inner.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        inner.clock += 1;
        let now = inner.clock;
        let key = (path.to_string(), code.language.clone(), hash.to_string());
        let bytes = approx_bytes(&code);
        // One side larger than the whole budget is not kept.
        if bytes > MAX_BYTES {
            return;
        }
        if let Some((_, _, was)) = inner.facts.remove(&key) {
            inner.bytes -= was;
        }
        while !inner.facts.is_empty() && (inner.facts.len() >= MAX_SIDES || inner.bytes + bytes > MAX_BYTES) {
            let oldest = inner.facts.iter().min_by_key(|(_, (_, used, _))| *used).map(|(k, _)| k.clone());
            if let Some((_, _, was)) = oldest.and_then(|k| inner.facts.remove(&k)) {
                inner.bytes -= was;
            }
        }
        inner.bytes += bytes;
        inner.facts.insert(key, (code, now, bytes));
    }

    pub fn len(&self) -> usize {
        self.inner.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).facts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Keeps the facts `old` holds for files whose text `new` holds at another version (or
    /// not at all): the base side of the edits the index has just read. A change of more
    /// files than `MAX_SIDES` (a branch switch) is no edit in progress: nothing is kept.
    pub fn keep_replaced(&self, old: &CodeGraph, new: &CodeGraph) {
        let replaced: Vec<u32> = (0..old.file_count() as u32)
            .filter(|&f| {
                let hash = old.content_hash(f);
                !hash.is_empty() && new.file_index(old.path(f)).is_none_or(|n| new.content_hash(n) != hash)
            })
            .collect();
        if replaced.len() > MAX_SIDES {
            return;
        }
        for f in replaced.into_iter().filter(|&f| approx_bytes(old.code(f)) <= MAX_BYTES) {
            self.put(old.path(f), old.content_hash(f), Arc::new(old.code(f).clone()));
        }
    }
}
