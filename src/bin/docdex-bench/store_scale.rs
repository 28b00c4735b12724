//! `docdex-bench bench-store-scale`: many synthetic repos in one team store, then hybrid
//! searches of single repos, timed, and every hit checked to belong to the repo searched.
//!
//! Each repo is written through docdex's own paths (a `RepoIndex` on the store: Tantivy
//! segments uploaded as rows, vectors as rows); the vectors are synthetic (clustered unit
//! vectors: embedding two million chunks would take this machine a day), inserted a repo
//! per statement into the partitioned table with its HNSW indexes built after the load, as a
//! bulk import would. What a search pays does not depend on how the rows arrived.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use docdex::index::{RepoIndex, SearchParams, StoreBackend};
use docdex::ingest::Chunk;
use docdex::postgres::PgPool;
use docdex::protocol::{DocdexError, Result, SearchMode};

use crate::search::percentile;

const DIMS: usize = docdex::index::models::EMBEDDING_DIMS;
const CHUNKS_PER_FILE: usize = 20;
const TOPICS: usize = 64;
const WORDS: [&str; 48] = [
    "parse", "buffer", "socket", "retry", "cache", "token", "stream", "config", "worker", "queue", "timer", "signal",
    "channel", "mutex", "schema", "index", "query", "render", "layout", "session", "codec", "frame", "packet",
    "header", "router", "handler", "client", "server", "pool", "batch", "merge", "split", "encode", "decode", "hash",
    "digest", "cursor", "ledger", "invoice", "tenant", "policy", "quota", "metric", "trace", "span", "bucket", "shard",
    "replica",
];

#[derive(Debug, clap::Args)]
pub struct ScaleOptions {
    #[arg(long)]
    pub store_url: String,
    #[arg(long, default_value_t = 1000)]
    pub repos: usize,
    #[arg(long, default_value_t = 2000)]
    pub chunks_per_repo: usize,
    #[arg(long, default_value_t = 500)]
    pub queries: usize,
    /// Search the corpus an earlier run loaded.
    #[arg(long)]
    pub reuse: bool,
    /// One more repo of this many chunks, past the exact-search size: its searches go
    /// through HNSW, whose recall@10 against exact search is measured on it.
    #[arg(long, default_value_t = 0)]
    pub big_repo_chunks: usize,
    /// Leave out building the HNSW indexes after the load: repos within the exact-search
    /// size never read them, so their searches cost the same (the build takes long).
    #[arg(long)]
    pub skip_hnsw: bool,
    #[arg(long)]
    pub json: bool,
}

/// A deterministic generator (xorshift), so runs are comparable.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn unit(&mut self) -> f32 {
        (self.next() % 20_000) as f32 / 10_000.0 - 1.0
    }
}

fn normalize(mut v: Vec<f32>) -> Vec<f32> {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-9);
    v.iter_mut().for_each(|x| *x /= norm);
    v
}

fn root_of(repo: usize) -> PathBuf {
    PathBuf::from(format!("/scale/repo{repo:04}"))
}

fn fingerprint_of(repo: usize) -> String {
    docdex::actors::repo_manager::RepoFingerprint::of(&root_of(repo)).0
}

/// The words a chunk is made of: its repo's marker, its topic's words, and noise.
fn chunk_text(repo: usize, file: usize, at: usize, topic: usize, rng: &mut Rng) -> (String, Vec<String>) {
    let name = format!("{}_{}_{file}_{at}", WORDS[topic % WORDS.len()], WORDS[(topic * 7 + 3) % WORDS.len()]);
    let mut text = format!(
        "/// Repo{repo:04}marker: {} the {} {}.\npub fn {name}() {{\n",
        WORDS[topic % WORDS.len()],
        WORDS[rng.below(WORDS.len())],
        WORDS[rng.below(WORDS.len())]
    );
    for _ in 0..6 {
        text.push_str(&format!(
            "    let {} = {}({});\n",
            WORDS[rng.below(WORDS.len())],
            WORDS[(topic + rng.below(3)) % WORDS.len()],
            WORDS[rng.below(WORDS.len())]
        ));
    }
    text.push_str("}\n");
    (text, vec![name])
}

fn load_repo(
    pool: &Arc<PgPool>,
    scratch: &std::path::Path,
    repo: usize,
    chunks: usize,
    centers: &[Vec<f32>],
) -> Result<()> {
    let mut rng = Rng(0x5ca1e ^ ((repo as u64 + 1) * 0x9e37_79b9));
    let backend = StoreBackend::Postgres(Arc::clone(pool));
    let state = scratch.join(format!("r{repo}"));
    let index = RepoIndex::open_in(&root_of(repo), &fingerprint_of(repo), &state, &backend)?;
    let writer = index.writer(50_000_000)?;
    let mut items: Vec<i64> = Vec::with_capacity(chunks);
    let mut vectors: Vec<String> = Vec::with_capacity(chunks);
    let repo_id = pool.repo_id(&fingerprint_of(repo), &root_of(repo).display().to_string())?;
    for file in 0..chunks.div_ceil(CHUNKS_PER_FILE) {
        let mut file_chunks = Vec::new();
        let mut ids = Vec::new();
        for at in 0..CHUNKS_PER_FILE.min(chunks - file * CHUNKS_PER_FILE) {
            let id = (file * CHUNKS_PER_FILE + at) as u32;
            let topic = rng.below(TOPICS);
            let (text, symbols) = chunk_text(repo, file, at, topic, &mut rng);
            let lines = text.lines().count() as u64;
            file_chunks.push(Chunk {
                line_start: at as u64 * 10 + 1,
                line_end: at as u64 * 10 + lines,
                content_hash: format!("{repo}-{id}"),
                text,
                heading: symbols[0].clone(),
                symbols,
                defined: Vec::new(),
                exported: Vec::new(),
                internal: false,
                page: None,
            });
            ids.push(id);
            let vector = normalize(centers[topic].iter().map(|c| c + 0.35 * rng.unit()).collect());
            let literal: Vec<String> = vector.iter().map(|x| format!("{x:.5}")).collect();
            items.push(i64::from(id));
            vectors.push(format!("[{}]", literal.join(",")));
        }
        index.replace_file(&writer, &format!("src/m{file:03}.rs"), "rust", &file_chunks, &ids)?;
    }
    let mut writer = writer;
    writer.commit()?;
    drop(writer);
    let mut client = pool.client()?;
    // One statement for the repo's vectors: arrays unnested into rows.
    client.query(
        "INSERT INTO docdex_vectors (repo_id, kind, item, embedding)
         SELECT $1, 0, item, embedding::vector FROM unnest($2::bigint[], $3::text[]) AS t(item, embedding)",
        &[&repo_id, &items, &vectors],
    )?;
    let mut txn = index.store.write_txn()?;
    let state_record = docdex::index::IndexRunState {
        last_completed: Some(1),
        chunks: chunks as u64,
        next_chunk_id: chunks as u32,
        format_version: docdex::index::INDEX_FORMAT_VERSION,
        ..Default::default()
    };
    index.store.put_run_state(&mut txn, &state_record)?;
    txn.commit()?;
    Ok(())
}

/// Recall@10 of the daemon's query for a repo past the exact-search size (HNSW with an
/// iterative scan in its partition) against exact search, and both queries' p50 (ms); and
/// whether the planner's plan reads the HNSW index.
fn hnsw_recall(pool: &Arc<PgPool>, repo: usize, centers: &[Vec<f32>], rng: &mut Rng) -> Result<(f64, f64, f64, bool)> {
    let repo_id = pool.repo_id(&fingerprint_of(repo), &root_of(repo).display().to_string())?;
    let mut client = pool.client()?;
    let (mut found, mut total) = (0usize, 0usize);
    let (mut hnsw_ms, mut exact_ms) = (Vec::new(), Vec::new());
    let mut uses_index = false;
    for q in 0..100 {
        let topic = rng.below(TOPICS);
        let query = pgvector::Vector::from(normalize(centers[topic].iter().map(|c| c + 0.2 * rng.unit()).collect()));
        let started = Instant::now();
        let approx: Vec<i64> = client
            .query(
                "SELECT item FROM docdex_vectors WHERE repo_id = $1 AND kind = 0 ORDER BY embedding <=> $2 LIMIT 10",
                &[&repo_id, &query],
            )?
            .iter()
            .map(|row| row.get(0))
            .collect();
        hnsw_ms.push(started.elapsed().as_secs_f64() * 1000.0);
        let started = Instant::now();
        let exact: Vec<i64> = client
            .query(
                "SELECT item FROM docdex_vectors WHERE repo_id = $1 AND kind = 0 ORDER BY (embedding <=> $2) + 0 LIMIT 10",
                &[&repo_id, &query],
            )?
            .iter()
            .map(|row| row.get(0))
            .collect();
        exact_ms.push(started.elapsed().as_secs_f64() * 1000.0);
        found += approx.iter().filter(|item| exact.contains(item)).count();
        total += exact.len();
        if q == 0 {
            let plan = client.query(
                "EXPLAIN SELECT item FROM docdex_vectors WHERE repo_id = $1 AND kind = 0 ORDER BY embedding <=> $2 LIMIT 10",
                &[&repo_id, &query],
            )?;
            uses_index = plan.iter().any(|row| row.get::<_, String>(0).contains("embedding_idx"));
        }
    }
    hnsw_ms.sort_by(f64::total_cmp);
    exact_ms.sort_by(f64::total_cmp);
    Ok((found as f64 / total.max(1) as f64, percentile(&hnsw_ms, 0.5), percentile(&exact_ms, 0.5), uses_index))
}

pub fn run(options: ScaleOptions) -> Result<i32> {
    let pool = PgPool::open(&options.store_url)?;
    let scratch = tempfile::tempdir()?;
    let mut rng = Rng(0xc0ffee);
    let centers: Vec<Vec<f32>> = (0..TOPICS).map(|_| normalize((0..DIMS).map(|_| rng.unit()).collect())).collect();
    let mut load_seconds = 0.0;
    if !options.reuse {
        let started = Instant::now();
        let mut admin = pool.client()?;
        admin.batch("DROP INDEX IF EXISTS docdex_vectors_hnsw")?;
        for repo in 0..options.repos + usize::from(options.big_repo_chunks > 0) {
            pool.forget_repo(&fingerprint_of(repo))?;
            let chunks = if repo == options.repos { options.big_repo_chunks } else { options.chunks_per_repo };
            load_repo(&pool, scratch.path(), repo, chunks, &centers)?;
            if repo % 50 == 49 {
                eprintln!("{} repos loaded ({:.0} s)", repo + 1, started.elapsed().as_secs_f64());
            }
        }
        if !options.skip_hnsw {
            eprintln!("building the HNSW indexes ...");
            admin.batch("SET maintenance_work_mem = '1GB'; SET max_parallel_maintenance_workers = 1")?;
            admin
                .batch("CREATE INDEX docdex_vectors_hnsw ON docdex_vectors USING hnsw (embedding vector_cosine_ops)")?;
        }
        admin.batch("ANALYZE docdex_vectors; ANALYZE docdex_records; ANALYZE docdex_index_files")?;
        load_seconds = started.elapsed().as_secs_f64();
    }
    let mut client = pool.client()?;
    let total_vectors: i64 = client.query("SELECT count(*) FROM docdex_vectors", &[])?[0].get(0);
    let total_repos: i64 = client.query("SELECT count(*) FROM docdex_repos", &[])?[0].get(0);
    drop(client);

    // Searches: a random repo, a query of its topic words, hybrid; every hit must carry the
    // repo's marker (leakage), and the first search of each repo pays its cache fill (cold).
    let backend = StoreBackend::Postgres(Arc::clone(&pool));
    let mut warm_ms = Vec::new();
    let mut cold_ms = Vec::new();
    let mut leaks = 0usize;
    let mut opened: std::collections::HashMap<usize, RepoIndex> = std::collections::HashMap::new();
    let params = SearchParams::new(10, 2);
    for q in 0..options.queries {
        let repo = rng.below(options.repos);
        let topic = rng.below(TOPICS);
        let text = format!("{} {} handling", WORDS[topic % WORDS.len()], WORDS[(topic * 7 + 3) % WORDS.len()]);
        let vector = normalize(centers[topic].iter().map(|c| c + 0.2 * rng.unit()).collect());
        let cold = !opened.contains_key(&repo);
        let started = Instant::now();
        if cold {
            let state = scratch.path().join(format!("q{repo}"));
            opened.insert(repo, RepoIndex::open_in(&root_of(repo), &fingerprint_of(repo), &state, &backend)?);
        }
        let index = &opened[&repo];
        let outcome = index.search_with(&text, Some(&vector), SearchMode::Hybrid, params, false)?;
        let ms = started.elapsed().as_secs_f64() * 1000.0;
        if cold {
            cold_ms.push(ms)
        } else {
            warm_ms.push(ms)
        }
        let marker = format!("Repo{repo:04}marker");
        for hit in &outcome.hits {
            let chunk = hit.chunk_id.and_then(|id| index.chunk(id).ok().flatten());
            if !chunk.is_some_and(|c| c.text.contains(&marker)) {
                leaks += 1;
            }
        }
        if outcome.hits.is_empty() {
            return Err(DocdexError::internal(format!("query {q} on repo {repo} found nothing")));
        }
    }
    warm_ms.sort_by(f64::total_cmp);
    cold_ms.sort_by(f64::total_cmp);
    let hnsw = if options.big_repo_chunks > 0 && !options.skip_hnsw {
        Some(hnsw_recall(&pool, options.repos, &centers, &mut rng)?)
    } else {
        None
    };
    let report = serde_json::json!({
        "repos": total_repos,
        "vectors": total_vectors,
        "load_seconds": load_seconds,
        "hnsw_built": !options.skip_hnsw,
        "queries_warm": warm_ms.len(),
        "hybrid_warm_p50_ms": percentile(&warm_ms, 0.5),
        "hybrid_warm_p95_ms": percentile(&warm_ms, 0.95),
        "queries_cold": cold_ms.len(),
        "hybrid_cold_p50_ms": percentile(&cold_ms, 0.5),
        "hybrid_cold_p95_ms": percentile(&cold_ms, 0.95),
        "hits_from_another_repo": leaks,
        "big_repo_chunks": options.big_repo_chunks,
        "hnsw_recall_at_10": hnsw.as_ref().map(|h| h.0),
        "hnsw_p50_ms": hnsw.as_ref().map(|h| h.1),
        "exact_p50_ms": hnsw.as_ref().map(|h| h.2),
        "hnsw_plan_uses_index": hnsw.as_ref().map(|h| h.3),
    });
    if options.json {
        docdex::outln!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        docdex::outln!("{report}");
    }
    Ok(if leaks == 0 { 0 } else { 1 })
}
