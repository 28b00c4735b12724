//! CrateCache: the crates the crate tools have loaded (items, their search index and
//! vectors), kept in memory so a warm `crate_search` or `item_doc` costs no disk reads. A
//! sync actor: loading parses `items.json` and builds the BM25 index on its own thread.

use std::collections::HashMap;
use std::sync::Arc;

use actix::{Actor, Handler, Message, SyncContext};

use crate::libs::crates::CrateDocs;
use crate::libs::CachedLibrary;
use crate::protocol::Result;

/// Crates kept loaded; the least recently used goes beyond it.
const MAX_LOADED: usize = 16;

#[derive(Default)]
pub struct CrateCache {
    /// Cache entry dir (and its fetch time) → the crate and when it was last used.
    loaded: HashMap<String, (Arc<CrateDocs>, u64)>,
    uses: u64,
}

impl Actor for CrateCache {
    type Context = SyncContext<Self>;
}

/// The loaded crate of a cache entry.
#[derive(Message)]
#[rtype(result = "Result<Arc<CrateDocs>>")]
pub struct LoadCrate(pub CachedLibrary);

impl Handler<LoadCrate> for CrateCache {
    type Result = Result<Arc<CrateDocs>>;

    fn handle(&mut self, LoadCrate(entry): LoadCrate, _: &mut SyncContext<Self>) -> Self::Result {
        super::guarded("the crate cache", || {
            self.uses += 1;
            // A re-fetched entry (same dir, new fetch time) is loaded again.
            let key = format!("{}#{}", entry.dir.display(), entry.manifest.fetched_at);
            if let Some((docs, used)) = self.loaded.get_mut(&key) {
                *used = self.uses;
                return Ok(Arc::clone(docs));
            }
            let docs = Arc::new(CrateDocs::load(&entry)?);
            if self.loaded.len() >= MAX_LOADED {
                if let Some(oldest) = self.loaded.iter().min_by_key(|(_, (_, used))| *used).map(|(k, _)| k.clone()) {
                    self.loaded.remove(&oldest);
                }
            }
            self.loaded.insert(key, (Arc::clone(&docs), self.uses));
            Ok(docs)
        })
    }
}
