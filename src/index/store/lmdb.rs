//! The embedded store: one LMDB environment per repo (through heed), a database per space,
//! and arroy's vector indexes in one more.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use arroy::distances::Cosine;
use arroy::{Reader, Writer};
use heed::types::Bytes;
use heed::{Database, Env, EnvOpenOptions, RoTxn, RwTxn, WithoutTls};
use rand::SeedableRng;

use super::{Entry, Space, Txn, TxnWrite, VectorKind};
use crate::protocol::Result;

const VECTORS_DB: &str = "vectors";
/// Seed of arroy's tree building, so index builds are reproducible.
const ARROY_SEED: u64 = 0x5eed_d0cd;
/// The node mode in the keys of arroy's stored vectors (an index's items are keyed by the
/// index, big-endian, then this byte, then the item: part of arroy's file format).
const ARROY_ITEM_MODE: u8 = 3;

pub(super) struct LmdbStore {
    env: Env<WithoutTls>,
    /// One database per space, in `Space::ALL` order.
    spaces: [Database<'static, Bytes, Bytes>; Space::ALL.len()],
    /// arroy's indexes: chunk vectors (index 0), memory vectors (index 1) and static chunk
    /// vectors (index 2).
    vectors: arroy::Database<'static, Cosine>,
    /// Per kind, the vectors an exact search compares (`Scan`, `vector_scan`).
    scans: PerCommit<Scan>,
    /// Per kind, how many vectors are stored: a hybrid search asks for both kinds' counts
    /// before it chooses one.
    counts: PerCommit<u64>,
}

/// A value per vector kind, kept for the committed transaction it was read at: a read
/// transaction's id is the last commit's, so any write since (this process's or another's)
/// reads it anew. Never kept from inside a write (`cacheable` false), whose id stays while
/// it changes the vectors.
#[derive(Default)]
struct PerCommit<T>(Mutex<HashMap<u16, (usize, T)>>);

impl<T: Clone> PerCommit<T> {
    fn get_or(
        &self,
        rtxn: &RoTxn<WithoutTls>,
        kind: VectorKind,
        cacheable: bool,
        read: impl FnOnce() -> Result<T>,
    ) -> Result<T> {
        let at = rtxn.id();
        if cacheable {
            let kept = self.0.lock().ok().and_then(|kept| kept.get(&kind.id()).cloned());
            if let Some((_, value)) = kept.filter(|(id, _)| *id == at) {
                return Ok(value);
            }
        }
        let value = read()?;
        if cacheable {
            if let Ok(mut kept) = self.0.lock() {
                kept.insert(kind.id(), (at, value.clone()));
            }
        }
        Ok(value)
    }
}

/// Every stored vector of a kind with its norm, as a search below `EXACT_MAX` compares them:
/// read out of LMDB again for each search, they took 6 of the 8 ms of a dense search over
/// tokio's 4,782 (`PerCommit` keeps them).
type Scan = Arc<Vec<(u32, Vec<f32>, f32)>>;

impl LmdbStore {
    pub(super) fn open(dir: &Path, map_bytes: usize) -> Result<LmdbStore> {
        std::fs::create_dir_all(dir)?;
        // SAFETY: the environment is opened once per process per repo (the RepoManager keeps
        // one handle) and the file is never truncated or modified outside LMDB.
        let env = unsafe {
            EnvOpenOptions::new().read_txn_without_tls().map_size(map_bytes.max(1 << 20)).max_dbs(16).open(dir)?
        };
        let wtxn = env.write_txn()?;
        let (spaces, vectors) = env
            .create_databases_and_commit(wtxn, |opener, wtxn| -> heed::Result<_> {
                let mut spaces = Vec::with_capacity(Space::ALL.len());
                for space in Space::ALL {
                    spaces.push(opener.create_database::<Bytes, Bytes>(wtxn, Some(space.name()))?);
                }
                let spaces: [_; Space::ALL.len()] = spaces.try_into().unwrap_or_else(|_| unreachable!("one per space"));
                let vectors = opener.create_database(wtxn, Some(VECTORS_DB))?;
                Ok(heed::CommitOrAbort::<_, ()>::Commit((spaces, vectors)))
            })?
            .unwrap_commit();
        Ok(LmdbStore { env, spaces, vectors, scans: PerCommit::default(), counts: PerCommit::default() })
    }

    pub(super) fn read_txn(&self) -> Result<LmdbRead<'_>> {
        Ok(LmdbRead { store: self, txn: self.env.read_txn()? })
    }

    pub(super) fn write_txn(&self) -> Result<LmdbWrite<'_>> {
        Ok(LmdbWrite { store: self, txn: self.env.write_txn()? })
    }

    fn db(&self, space: Space) -> Database<'static, Bytes, Bytes> {
        let at = Space::ALL.iter().position(|&s| s == space).expect("every space is in ALL");
        self.spaces[at]
    }

    fn vector_writer(&self, kind: VectorKind) -> Writer<Cosine> {
        Writer::new(self.vectors, kind.id(), crate::index::models::EMBEDDING_DIMS)
    }

    /// A reader of an arroy index's trees, or `None` while it has none built to read (or
    /// vectors changed since, which a build has not taken in).
    fn reader<'t>(&self, rtxn: &'t RoTxn<WithoutTls>, kind: VectorKind) -> Result<Option<Reader<'t, Cosine>>> {
        match Reader::<Cosine>::open(rtxn, kind.id(), self.vectors) {
            Ok(reader) => Ok(Some(reader)),
            Err(arroy::Error::MissingMetadata(_)) | Err(arroy::Error::NeedBuild(_)) => Ok(None),
            Err(err) => Err(arroy_error(err)),
        }
    }

    /// arroy's trees over `kind`, where they are used: over more than `EXACT_MAX` vectors.
    /// Below that every vector is compared, so no trees are built (`build_vectors`) and the
    /// vectors are read as arroy stores them.
    fn trees<'t>(&self, rtxn: &'t RoTxn<WithoutTls>, kind: VectorKind) -> Result<Option<Reader<'t, Cosine>>> {
        Ok(self.reader(rtxn, kind)?.filter(|reader| reader.n_items() > EXACT_MAX))
    }

    /// How many vectors of `kind` are stored, built into trees or not: their keys counted,
    /// not their vectors read.
    fn stored_count(&self, rtxn: &RoTxn<WithoutTls>, kind: VectorKind) -> Result<u64> {
        let mut prefix = kind.id().to_be_bytes().to_vec();
        prefix.push(ARROY_ITEM_MODE);
        let keys = self.vectors.remap_types::<Bytes, heed::types::DecodeIgnore>();
        let mut count = 0u64;
        for entry in keys.prefix_iter(rtxn, &prefix)? {
            entry?;
            count += 1;
        }
        Ok(count)
    }

    /// Every stored vector of `kind`, by id.
    fn stored_vectors(&self, rtxn: &RoTxn<WithoutTls>, kind: VectorKind) -> Result<Vec<(u32, Vec<f32>)>> {
        let dims = crate::index::models::EMBEDDING_DIMS;
        self.vector_writer(kind)
            .iter(rtxn)
            .map_err(arroy_error)?
            .map(|item| {
                item.map(|(id, mut vector)| {
                    vector.truncate(dims);
                    (id, vector)
                })
                .map_err(arroy_error)
            })
            .collect()
    }

    /// `stored_vectors` with their norms for an exact search, kept between commits.
    fn vector_scan(&self, rtxn: &RoTxn<WithoutTls>, kind: VectorKind, cacheable: bool) -> Result<Scan> {
        self.scans.get_or(rtxn, kind, cacheable, || {
            let items = self.stored_vectors(rtxn, kind)?.into_iter().map(|(id, vector)| {
                let norm = dot(&vector, &vector).sqrt();
                (id, vector, norm)
            });
            Ok(Arc::new(items.collect()))
        })
    }
}

/// A read transaction of the embedded store.
pub(super) struct LmdbRead<'s> {
    store: &'s LmdbStore,
    txn: RoTxn<'s, WithoutTls>,
}

/// A write transaction of the embedded store (LMDB has one writer per environment).
pub(super) struct LmdbWrite<'s> {
    store: &'s LmdbStore,
    txn: RwTxn<'s>,
}

/// The reads, the same for both kinds of transaction (a heed write transaction reads as a
/// read one).
impl LmdbStore {
    fn get(&self, rtxn: &RoTxn<WithoutTls>, space: Space, key: &[u8]) -> Result<Option<Vec<u8>>> {
        Ok(self.db(space).get(rtxn, key)?.map(<[u8]>::to_vec))
    }

    fn scan(
        &self,
        rtxn: &RoTxn<WithoutTls>,
        space: Space,
        from: &[u8],
        prefix: &[u8],
        max: usize,
    ) -> Result<Vec<Entry>> {
        let mut out = Vec::new();
        // LMDB refuses an empty key, even as a bound.
        let lower = if from.is_empty() { std::ops::Bound::Unbounded } else { std::ops::Bound::Included(from) };
        let range = (lower, std::ops::Bound::Unbounded);
        for entry in self.db(space).range(rtxn, &range)? {
            let (key, value) = entry?;
            if out.len() >= max || !key.starts_with(prefix) {
                break;
            }
            out.push((key.to_vec(), value.to_vec()));
        }
        Ok(out)
    }

    fn len(&self, rtxn: &RoTxn<WithoutTls>, space: Space) -> Result<u64> {
        Ok(self.db(space).len(rtxn)?)
    }

    fn last(&self, rtxn: &RoTxn<WithoutTls>, space: Space) -> Result<Option<Entry>> {
        Ok(self.db(space).last(rtxn)?.map(|(k, v)| (k.to_vec(), v.to_vec())))
    }

    /// How many vectors of `kind` there are, kept between commits.
    fn vector_count(&self, rtxn: &RoTxn<WithoutTls>, kind: VectorKind, cacheable: bool) -> Result<u64> {
        self.counts.get_or(rtxn, kind, cacheable, || match self.trees(rtxn, kind)? {
            Some(trees) => Ok(trees.n_items()),
            None => self.stored_count(rtxn, kind),
        })
    }

    fn all_vectors(&self, rtxn: &RoTxn<WithoutTls>, kind: VectorKind) -> Result<Vec<(u32, Vec<f32>)>> {
        self.stored_vectors(rtxn, kind)
    }

    fn nearest(
        &self,
        rtxn: &RoTxn<WithoutTls>,
        kind: VectorKind,
        vector: &[f32],
        count: usize,
        search_k: usize,
        cacheable: bool,
    ) -> Result<Vec<(u32, f32)>> {
        let Some(reader) = self.trees(rtxn, kind)? else {
            return Ok(exact_nearest(&self.vector_scan(rtxn, kind, cacheable)?, vector, count));
        };
        let mut query = reader.nns(count);
        if let Some(search_k) = std::num::NonZeroUsize::new(search_k) {
            query.search_k(search_k);
        }
        let found = query.by_vector(rtxn, vector).map_err(arroy_error)?;
        Ok(found.into_iter().map(|(id, distance)| (id, cosine_similarity(distance))).collect())
    }
}

/// `Txn`'s reads for a transaction type with a `store` and a heed `txn`.
macro_rules! lmdb_reads {
    ($cacheable:expr) => {
        fn get(&self, space: Space, key: &[u8]) -> Result<Option<Vec<u8>>> {
            self.store.get(&self.txn, space, key)
        }

        fn scan(&self, space: Space, from: &[u8], prefix: &[u8], max: usize) -> Result<Vec<Entry>> {
            self.store.scan(&self.txn, space, from, prefix, max)
        }

        fn len(&self, space: Space) -> Result<u64> {
            self.store.len(&self.txn, space)
        }

        fn last(&self, space: Space) -> Result<Option<Entry>> {
            self.store.last(&self.txn, space)
        }

        fn vector_count(&self, kind: VectorKind) -> Result<u64> {
            self.store.vector_count(&self.txn, kind, $cacheable)
        }

        fn all_vectors(&self, kind: VectorKind) -> Result<Vec<(u32, Vec<f32>)>> {
            self.store.all_vectors(&self.txn, kind)
        }

        fn nearest(&self, kind: VectorKind, vector: &[f32], count: usize, search_k: usize) -> Result<Vec<(u32, f32)>> {
            self.store.nearest(&self.txn, kind, vector, count, search_k, $cacheable)
        }
    };
}

impl Txn for LmdbRead<'_> {
    lmdb_reads!(true);

    /// A read has nothing to commit: it ends when dropped.
    fn commit(self: Box<Self>) -> Result<()> {
        Ok(())
    }

    fn write(&mut self) -> Option<&mut dyn TxnWrite> {
        None
    }
}

impl Txn for LmdbWrite<'_> {
    lmdb_reads!(false);

    fn commit(self: Box<Self>) -> Result<()> {
        Ok(self.txn.commit()?)
    }

    fn write(&mut self) -> Option<&mut dyn TxnWrite> {
        Some(self)
    }
}

impl TxnWrite for LmdbWrite<'_> {
    fn put(&mut self, space: Space, key: &[u8], value: &[u8]) -> Result<()> {
        Ok(self.store.db(space).put(&mut self.txn, key, value)?)
    }

    fn delete(&mut self, space: Space, key: &[u8]) -> Result<bool> {
        Ok(self.store.db(space).delete(&mut self.txn, key)?)
    }

    fn clear(&mut self, space: Space) -> Result<()> {
        Ok(self.store.db(space).clear(&mut self.txn)?)
    }

    fn put_vector(&mut self, kind: VectorKind, item: u32, vector: &[f32]) -> Result<()> {
        self.store.vector_writer(kind).add_item(&mut self.txn, item, vector).map_err(arroy_error)
    }

    fn delete_vector(&mut self, kind: VectorKind, item: u32) -> Result<()> {
        self.store.vector_writer(kind).del_item(&mut self.txn, item).map_err(arroy_error)?;
        Ok(())
    }

    fn clear_vectors(&mut self, kind: VectorKind) -> Result<()> {
        self.store.vector_writer(kind).clear(&mut self.txn).map_err(arroy_error)
    }

    fn build_vectors(&mut self, kind: VectorKind) -> Result<()> {
        let writer = self.store.vector_writer(kind);
        // Trees over a few thousand vectors cost a store tens of milliseconds of both cores
        // (60 ms on tokio's 4,800, after every batch the index or the embedder stores) and
        // would never be read: a search there compares every vector.
        if writer.need_build(&self.txn).map_err(arroy_error)? && self.store.stored_count(&self.txn, kind)? > EXACT_MAX {
            let mut rng = rand::rngs::StdRng::seed_from_u64(ARROY_SEED);
            writer.builder(&mut rng).build(&mut self.txn).map_err(arroy_error)?;
        }
        Ok(())
    }
}

/// The most vectors an index may hold for its nearest neighbours to be found exactly, every
/// vector compared, as the team store does below the same size: recall 1 and the same answer
/// after every rebuild, where arroy's trees find about 0.95 of the nearest ten and which ones
/// change as the trees do (tokio's judged questions moved by up to 0.05 MRR@10 between two
/// builds of the same chunks). Low in unit tests, so that their few hundred vectors go through
/// arroy too.
#[cfg(not(test))]
const EXACT_MAX: u64 = 10_000;
#[cfg(test)]
const EXACT_MAX: u64 = 500;

/// The `count` of `items` (each with its norm) most similar to `vector` by cosine, best
/// first (ties by id).
fn exact_nearest(items: &[(u32, Vec<f32>, f32)], vector: &[f32], count: usize) -> Vec<(u32, f32)> {
    let query_norm = dot(vector, vector).sqrt();
    let mut scored: Vec<(u32, f32)> = items
        .iter()
        .map(|(id, item, norm)| {
            let norms = norm * query_norm;
            (*id, if norms > 0.0 { dot(item, vector) / norms } else { 0.0 })
        })
        .collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    scored.truncate(count);
    scored
}

/// The dot product, summed in eight lanes so that the compiler can use vector instructions
/// (one running sum is a chain of dependent additions it may not reorder).
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut lanes = [0.0f32; 8];
    let (a_rest, b_rest) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f32 = a_rest.remainder().iter().zip(b_rest.remainder()).map(|(x, y)| x * y).sum();
    for (x, y) in a_rest.zip(b_rest) {
        for lane in 0..8 {
            lanes[lane] += x[lane] * y[lane];
        }
    }
    lanes.iter().sum::<f32>() + tail
}

/// arroy's cosine distance is (1 - cos) / 2.
fn cosine_similarity(distance: f32) -> f32 {
    1.0 - 2.0 * distance
}

fn arroy_error(err: arroy::Error) -> crate::protocol::DocdexError {
    match err {
        // A full map or disk is the storage's condition, reported as such.
        arroy::Error::Heed(err) => err.into(),
        arroy::Error::Io(err) => err.into(),
        err => crate::protocol::DocdexError::internal(format!("vector store error: {err}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::store::TxnWrite;

    fn vector(seed: u32) -> Vec<f32> {
        (0..crate::index::models::EMBEDDING_DIMS as u32).map(|i| ((seed * 31 + i * 7) % 97) as f32 - 48.0).collect()
    }

    #[test]
    fn trees_are_built_only_over_more_vectors_than_are_compared_one_by_one() {
        let dir = tempfile::tempdir().unwrap();
        let store = LmdbStore::open(dir.path(), 1 << 30).unwrap();
        let kind = VectorKind::Chunks;
        let mut wtxn = store.write_txn().unwrap();
        for id in 0..EXACT_MAX as u32 {
            wtxn.put_vector(kind, id, &vector(id)).unwrap();
        }
        wtxn.build_vectors(kind).unwrap();
        assert!(store.trees(&wtxn.txn, kind).unwrap().is_none(), "no trees over {EXACT_MAX} vectors");
        assert_eq!(store.vector_count(&wtxn.txn, kind, false).unwrap(), EXACT_MAX);
        assert_eq!(store.nearest(&wtxn.txn, kind, &vector(7), 1, 0, false).unwrap()[0].0, 7);

        wtxn.put_vector(kind, EXACT_MAX as u32, &vector(EXACT_MAX as u32)).unwrap();
        wtxn.build_vectors(kind).unwrap();
        let trees = store.trees(&wtxn.txn, kind).unwrap().expect("trees over one vector more");
        assert_eq!(trees.n_items(), EXACT_MAX + 1);
        assert_eq!(store.nearest(&wtxn.txn, kind, &vector(7), 1, 0, false).unwrap()[0].0, 7);

        // Back under the limit: the trees are left stale and unread, every vector compared.
        for id in [3, 7] {
            wtxn.delete_vector(kind, id).unwrap();
        }
        wtxn.build_vectors(kind).unwrap();
        assert!(store.trees(&wtxn.txn, kind).unwrap().is_none());
        assert_eq!(store.vector_count(&wtxn.txn, kind, false).unwrap(), EXACT_MAX - 1);
        assert_eq!(store.all_vectors(&wtxn.txn, kind).unwrap().len() as u64, EXACT_MAX - 1);
        let nearest = store.nearest(&wtxn.txn, kind, &vector(7), 3, 0, false).unwrap();
        assert!(nearest.iter().all(|&(id, _)| id != 7 && id != 3), "{nearest:?}");
        let (id, similarity) = store.nearest(&wtxn.txn, kind, &vector(8), 1, 0, false).unwrap()[0];
        assert!(id == 8 && (similarity - 1.0).abs() < 1e-5, "{id} at {similarity}");
    }

    #[test]
    fn the_vectors_an_exact_search_reads_are_kept_until_a_commit() {
        let dir = tempfile::tempdir().unwrap();
        let store = LmdbStore::open(dir.path(), 1 << 30).unwrap();
        let kind = VectorKind::Chunks;
        let put = |ids: std::ops::Range<u32>| {
            let mut wtxn = store.write_txn().unwrap();
            for id in ids {
                wtxn.put_vector(kind, id, &vector(id)).unwrap();
            }
            wtxn.build_vectors(kind).unwrap();
            Box::new(wtxn).commit().unwrap();
        };
        put(0..10);
        let read = store.read_txn().unwrap();
        assert_eq!(read.nearest(kind, &vector(3), 1, 0).unwrap()[0].0, 3);
        assert_eq!(read.vector_count(kind).unwrap(), 10);
        let first = store.vector_scan(&read.txn, kind, true).unwrap();
        assert!(Arc::ptr_eq(&first, &store.vector_scan(&store.read_txn().unwrap().txn, kind, true).unwrap()), "kept");
        drop(read);
        put(10..20);
        let read = store.read_txn().unwrap();
        assert_eq!(read.nearest(kind, &vector(15), 1, 0).unwrap()[0].0, 15, "a commit reads them anew");
        assert_eq!(store.vector_scan(&read.txn, kind, true).unwrap().len(), 20);
        assert_eq!(read.vector_count(kind).unwrap(), 20, "counted anew after the commit");
        // Inside a write the vectors change under one id: never kept there.
        let mut wtxn = store.write_txn().unwrap();
        wtxn.put_vector(kind, 20, &vector(20)).unwrap();
        assert_eq!(wtxn.vector_count(kind).unwrap(), 21);
        assert_eq!(wtxn.nearest(kind, &vector(20), 1, 0).unwrap()[0].0, 20);
        wtxn.delete_vector(kind, 20).unwrap();
        assert_ne!(wtxn.nearest(kind, &vector(20), 1, 0).unwrap()[0].0, 20);
    }
}
