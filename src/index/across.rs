//! Searching several repos' indexes as one ranking. A repo's search is the case of one.
//!
//! BM25 weighs a term by how rare it is in its own index, and a chunk's length against its
//! index's average: the same chunk scores otherwise in a small repo than among many (a
//! two-file index squeezes every word's weight, a word rare in one repo is common in
//! another), so per-repo scores do not compare.
//! Here every index is scored with the pooled statistics of all of them (document counts,
//! token counts, document frequencies summed), which gives each chunk the score it would
//! have in one index holding every repo. Dense similarities compare as they are (one model).
//! The lexical and the dense candidates of all repos are then merged into one ranking each
//! and fused as a single repo's are.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use tantivy::query::Bm25StatisticsProvider;
use tantivy::schema::Field;
use tantivy::{DocAddress, Searcher, Term};

use super::concepts::{self, Expansion};
use super::rank::{
    candidate_depth, dense_confidence, fuse, internal_prior_for, lexical_confidence, with_ranks, Candidate, Ranking,
    Source,
};
use super::rank::{
    definitions_first, demote_older_versions, held_definitions, named_after, named_identifier, named_qualifier,
    named_versions, older_versions, path_keywords, path_match, tag, title_rank, untag, Title, FLAG_SECONDARY,
    MAX_PROMOTED_DEFINITIONS,
};
use super::search::{query_terms, render, SearchFilter};
use super::{RepoIndex, SearchOutcome, SearchParams};
use crate::protocol::{DocdexError, HitSource, Result, SearchMode};

/// The least share of a question's words a file's name must name to count (`raise_named_files`).
const PATH_MATCH_MIN: f32 = 0.1;

/// Most indexes one search covers (the tags below hold 256).
pub const MAX_INDEXES: usize = 256;

/// File ids (per index, dense from 0) get their index in the high byte for the same reason.
const FILE_SHIFT: u32 = 24;
/// Definitions of a qualified name, and of its qualifier, read to pick the ones the
/// qualifier holds (a name like `new` or `read` is defined in many files).
const QUALIFIED_DEFINITIONS: usize = 50;

/// One index's lexical candidates (with their files), dense ones (with their rank key and
/// files), the chunks defining a named identifier and how much of the question each
/// candidate's file name names (`rank::path_match`, when it is asked); addresses and files
/// tagged with the index.
/// The definitions a query names in one index: all of them, and those a named qualifier's
/// files hold (`held_definitions`).
#[derive(Default)]
struct Named {
    all: Vec<DocAddress>,
    held: Vec<DocAddress>,
    /// Those of `all` in a file named after the identifier, and how (`rank::named_after`).
    titled: Vec<(DocAddress, Title)>,
    /// Those of `all` in tests, benches and examples (`FLAG_SECONDARY`).
    secondary: Vec<DocAddress>,
}

type RepoCandidates = (Vec<(Candidate, u32)>, Vec<(f32, Candidate, u32)>, Named, HashMap<u32, f32>);

/// BM25 statistics of several indexes taken together. Each index's query asks for every
/// term's statistics, and each answer is a lookup in every index: remembered, so a search of
/// n indexes makes n lookups per term, not n².
struct PooledStats<'a> {
    searchers: &'a [Searcher],
    doc_freqs: Mutex<HashMap<Term, u64>>,
    tokens: Mutex<HashMap<Field, u64>>,
    docs: OnceLock<u64>,
}

impl<'a> PooledStats<'a> {
    fn new(searchers: &'a [Searcher]) -> Self {
        PooledStats {
            searchers,
            doc_freqs: Mutex::new(HashMap::new()),
            tokens: Mutex::new(HashMap::new()),
            docs: OnceLock::new(),
        }
    }
}

/// A remembered statistic, or computed and remembered (a poisoned lock only loses the memo).
fn remembered<K: Eq + std::hash::Hash + Clone>(
    memo: &Mutex<HashMap<K, u64>>,
    key: &K,
    compute: impl FnOnce() -> tantivy::Result<u64>,
) -> tantivy::Result<u64> {
    if let Some(value) = memo.lock().ok().and_then(|m| m.get(key).copied()) {
        return Ok(value);
    }
    let value = compute()?;
    if let Ok(mut memo) = memo.lock() {
        memo.insert(key.clone(), value);
    }
    Ok(value)
}

impl Bm25StatisticsProvider for PooledStats<'_> {
    fn total_num_tokens(&self, field: Field) -> tantivy::Result<u64> {
        remembered(&self.tokens, &field, || {
            self.searchers.iter().map(|s| Bm25StatisticsProvider::total_num_tokens(s, field)).sum()
        })
    }

    fn total_num_docs(&self) -> tantivy::Result<u64> {
        if let Some(&docs) = self.docs.get() {
            return Ok(docs);
        }
        let docs = self.searchers.iter().map(Bm25StatisticsProvider::total_num_docs).sum::<tantivy::Result<u64>>()?;
        Ok(*self.docs.get_or_init(|| docs))
    }

    fn doc_freq(&self, term: &Term) -> tantivy::Result<u64> {
        remembered(&self.doc_freqs, term, || {
            self.searchers.iter().map(|s| Bm25StatisticsProvider::doc_freq(s, term)).sum()
        })
    }
}

impl RepoIndex {
    /// `search_with` among the chunks `filter` admits (a source, a library).
    pub fn search_filtered(
        &self,
        query_text: &str,
        query_vector_opt: Option<&[f32]>,
        mode: SearchMode,
        params: SearchParams,
        explain: bool,
        filter: &SearchFilter,
    ) -> Result<SearchOutcome> {
        search_indexes(&[self], query_text, query_vector_opt, mode, params, explain, filter)
    }
}

/// Searches `indexes` in `mode` as one index; `query_vector_opt` is required for dense and
/// hybrid (without it they return nothing). With more than one index each hit names its repo.
pub fn search_indexes(
    indexes: &[&RepoIndex],
    query_text: &str,
    query_vector_opt: Option<&[f32]>,
    mode: SearchMode,
    params: SearchParams,
    explain: bool,
    filter: &SearchFilter,
) -> Result<SearchOutcome> {
    let Some(first) = indexes.first() else {
        return Ok(SearchOutcome { hits: Vec::new(), top_score: 0.0 });
    };
    if indexes.len() > MAX_INDEXES {
        return Err(DocdexError::invalid(format!(
            "a search covers at most {MAX_INDEXES} repos, {} were asked for",
            indexes.len()
        )));
    }
    let searchers: Vec<Searcher> = indexes.iter().map(|index| index.searcher()).collect();
    let pooled = PooledStats::new(&searchers);
    let mut analyzer = first.analyzer.clone();
    let terms = query_terms(&mut analyzer, query_text);
    let depth = candidate_depth(params);
    let internal_prior = internal_prior_for(query_text);
    let versions = named_versions(query_text);
    let defined_name = named_identifier(query_text).filter(|_| {
        params.definitions_first
            && mode != SearchMode::Dense
            && matches!(filter.source_opt, None | Some(HitSource::Repo))
    });
    let qualifier = defined_name.and_then(|_| named_qualifier(query_text));
    // A question in words, not one identifier: its words may name a file or its folder (`ser`
    // for "serialize"), and a file's other chunks count for it.
    let question = query_text.trim().contains(char::is_whitespace);
    let keywords = if params.path_match_weight > 0.0 && question { path_keywords(query_text) } else { Vec::new() };
    let file_evidence = question && params.file_evidence_weight > 0.0;
    let expansion = if mode != SearchMode::Dense && params.concept_weight > 0.0 {
        concepts::expand(query_text, &terms, &mut analyzer)
    } else {
        Expansion::default()
    };
    // Each index's candidates. A dense search of several indexes runs on several threads
    // (measured over 8 repos: hybrid p95 16.5 ms on one thread, 12.6 on two); a lexical one
    // stays on one, where starting threads cost more than they saved (p95 3.6 ms vs 8.7).
    let candidates_of = |at: usize| -> Result<RepoCandidates> {
        let (index, searcher) = (indexes[at], &searchers[at]);
        // One index is scored by its own statistics (the same numbers, without the sums).
        let stats: &dyn Bm25StatisticsProvider = if indexes.len() == 1 { searcher } else { &pooled };
        let mut lexical_here = if mode == SearchMode::Dense {
            Vec::new()
        } else {
            index.lexical_candidates(
                searcher,
                stats,
                &terms,
                &expansion,
                params.concept_weight,
                depth,
                filter,
                internal_prior,
            )?
        };
        let mut dense_here = match (mode, query_vector_opt) {
            (SearchMode::Lexical, _) | (_, None) => Vec::new(),
            (_, Some(vector)) => index.dense_candidates(searcher, vector, depth, &params, filter, internal_prior)?,
        };
        let mut candidates: Vec<&mut Candidate> =
            lexical_here.iter_mut().chain(dense_here.iter_mut().map(|(_, c)| c)).collect();
        let addresses: Vec<DocAddress> = candidates.iter().map(|c| c.address).collect();
        let mut flags: Vec<u64> = candidates.iter().map(|c| c.flags).collect();
        index.mark_superseded(searcher, &addresses, &mut flags)?;
        for (candidate, flags) in candidates.iter_mut().zip(flags) {
            candidate.flags = flags;
        }
        demote_older_versions(&mut lexical_here, &mut dense_here, &versions);
        // A query that is one identifier: the chunks that define it (not in a dense search,
        // which ranks by meaning alone, nor one filtered to docs or web pages).
        let definitions_here = match defined_name {
            Some(name) => named_definitions(index, searcher, name, qualifier, &versions)?,
            None => Named::default(),
        };
        // Files matter to the fusion and to the path match.
        let file_tag = (at as u32) << FILE_SHIFT;
        let mut path_matches = HashMap::new();
        let files = if mode == SearchMode::Hybrid || !keywords.is_empty() || file_evidence {
            let addresses: Vec<DocAddress> =
                lexical_here.iter().map(|c| c.address).chain(dense_here.iter().map(|(_, c)| c.address)).collect();
            if keywords.is_empty() {
                index.files_of(searcher, &addresses)?
            } else {
                let (files, paths) = index.files_and_paths_of(searcher, &addresses)?;
                path_matches = (0..)
                    .zip(&paths)
                    .map(|(file, path)| (file | file_tag, path_match(&keywords, &expansion.concepts, path)))
                    .collect();
                files
            }
        } else {
            vec![0; lexical_here.len() + dense_here.len()]
        };
        let (lexical_files, dense_files) = files.split_at(lexical_here.len());
        let lexical = lexical_here
            .into_iter()
            .zip(lexical_files)
            .map(|(candidate, &file)| (Candidate { address: tag(at, candidate.address), ..candidate }, file | file_tag))
            .collect();
        let dense = dense_here
            .into_iter()
            .zip(dense_files)
            .map(|((key, candidate), &file)| {
                (key, Candidate { address: tag(at, candidate.address), ..candidate }, file | file_tag)
            })
            .collect();
        let tagged = |addresses: Vec<DocAddress>| addresses.into_iter().map(|address| tag(at, address)).collect();
        let definitions = Named {
            all: tagged(definitions_here.all),
            held: tagged(definitions_here.held),
            titled: definitions_here.titled.into_iter().map(|(address, title)| (tag(at, address), title)).collect(),
            secondary: tagged(definitions_here.secondary),
        };
        Ok((lexical, dense, definitions, path_matches))
    };
    let threads = match mode {
        SearchMode::Lexical => 1,
        _ => std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1).min(indexes.len()),
    };
    let per_index: Vec<Result<RepoCandidates>> = if threads <= 1 {
        (0..indexes.len()).map(candidates_of).collect()
    } else {
        std::thread::scope(|scope| {
            let workers: Vec<_> = (0..threads)
                .map(|worker| {
                    let candidates_of = &candidates_of;
                    scope.spawn(move || {
                        (worker..indexes.len()).step_by(threads).map(|at| (at, candidates_of(at))).collect::<Vec<_>>()
                    })
                })
                .collect();
            let mut all: Vec<(usize, Result<RepoCandidates>)> = workers
                .into_iter()
                .flat_map(|w| {
                    w.join().unwrap_or_else(|_| vec![(0, Err(DocdexError::internal("a search thread panicked")))])
                })
                .collect();
            all.sort_by_key(|(at, _)| *at);
            all.into_iter().map(|(_, r)| r).collect()
        })
    };
    let mut lexical: Vec<(Candidate, u32)> = Vec::new();
    let mut dense: Vec<(f32, Candidate, u32)> = Vec::new();
    let mut named = Named::default();
    let mut path_matches: HashMap<u32, f32> = HashMap::new();
    for result in per_index {
        let (lexical_here, dense_here, named_here, path_matches_here) = result?;
        path_matches.extend(path_matches_here);
        lexical.extend(lexical_here);
        dense.extend(dense_here);
        named.all.extend(named_here.all);
        named.held.extend(named_here.held);
        named.titled.extend(named_here.titled);
        named.secondary.extend(named_here.secondary);
    }
    // A qualified name held by its qualifier in any repo searched means that one: `Rack::Builder`
    // is rack's, not every other repo's `Builder`.
    let Named { all, held, titled, secondary } = named;
    let definitions = if held.is_empty() { all } else { held };
    if indexes.len() > 1 {
        // One ranking of all repos' candidates; a stable sort keeps each repo's order on ties.
        lexical.sort_by(|a, b| b.0.score.total_cmp(&a.0.score));
        dense.sort_by(|a, b| b.0.total_cmp(&a.0));
    }
    // How sure the ranking is: from the evidence before the path match.
    let lexical_confidence = lexical.first().map(|(c, _)| lexical_confidence(c.score)).unwrap_or(0.0);
    let dense_confidence = dense.first().map(|(_, c, _)| dense_confidence(c.score)).unwrap_or(0.0);
    // A file with many good chunks is a better answer than its best chunk alone says: each
    // ranking's files gain for all their candidates, then files whose name names the
    // question's words rise (in one ranking before it is rendered, in hybrid once, in the
    // fused order of files).
    if file_evidence {
        add_file_evidence(&mut lexical, |(c, _)| &mut c.score, |(_, file)| *file, params.file_evidence_weight);
        add_file_evidence(&mut dense, |(key, _, _)| key, |(_, _, file)| *file, params.file_evidence_weight);
    }
    path_matches.retain(|_, share| *share >= PATH_MATCH_MIN);
    let raise_in_lists = !path_matches.is_empty() && mode != SearchMode::Hybrid;
    if raise_in_lists {
        let weight = params.path_match_weight;
        raise_named_files(&mut lexical, |(c, _)| &mut c.score, |(_, file)| *file, &path_matches, weight);
        raise_named_files(&mut dense, |(key, _, _)| key, |(_, _, file)| *file, &path_matches, weight);
    }
    if file_evidence || raise_in_lists {
        lexical.sort_by(|a, b| b.0.score.total_cmp(&a.0.score));
        dense.sort_by(|a, b| b.0.total_cmp(&a.0));
    }
    let (lexical, lexical_files): (Vec<Candidate>, Vec<u32>) = lexical.into_iter().unzip();
    let (dense, dense_files): (Vec<Candidate>, Vec<u32>) = dense.into_iter().map(|(_, c, f)| (c, f)).unzip();
    let (ranked, top_score) = match mode {
        SearchMode::Lexical => (with_ranks(lexical, Source::Lexical), lexical_confidence),
        SearchMode::Dense => (with_ranks(dense, Source::Dense), dense_confidence),
        SearchMode::Hybrid => {
            let fused = fuse(
                Ranking { candidates: lexical, files: lexical_files, weight: params.fusion.lexical_weight },
                Ranking { candidates: dense, files: dense_files, weight: params.fusion.dense_weight },
                params,
                &path_matches,
            );
            (fused, lexical_confidence.max(dense_confidence))
        }
    };
    let ranked = if definitions.is_empty() {
        ranked
    } else {
        // Definitions go in the order of their files in the ranking (a name defined in the
        // module that ranks first is the one meant), so each needs its file.
        let addresses: Vec<DocAddress> = ranked.iter().map(|c| c.address).chain(definitions.iter().copied()).collect();
        let files = files_of_tagged(indexes, &searchers, &addresses)?;
        let (ranked_files, definition_files) = files.split_at(ranked.len());
        definitions_first(ranked, ranked_files, &definitions, definition_files, &titled, &secondary)
    };
    // The fusion already placed each file's later hits.
    let params = if mode == SearchMode::Hybrid { SearchParams { repeat_hit_delay: 0, ..params } } else { params };
    let hits = render(indexes, &searchers, ranked, &terms, &mut analyzer, params, explain)?;
    let top_score = if hits.is_empty() { 0.0 } else { top_score };
    Ok(SearchOutcome { hits, top_score })
}

/// Candidates of a file whose name or folder names a share of the question's words (at
/// least `PATH_MATCH_MIN`: `path_shares` holds no other) gain `weight × share` of their
/// ranking's best score (`list`'s: a lexical score, a dense rank key): "request and response
/// internals" asks for `client_reqrep.py`, "standard library Serialize implementations" for
/// a file under `ser/`. A question's words are often in many files' bodies, but a file rarely
/// names its own module as its neighbours name it. semble's rule and constant (1.0 of the best
/// score, 0.10 of the words at least); measured in docs/ranking.md.
fn raise_named_files<T>(
    list: &mut [T],
    score: impl Fn(&mut T) -> &mut f32,
    file: impl Fn(&T) -> u32,
    path_shares: &HashMap<u32, f32>,
    weight: f32,
) {
    let best = list.iter_mut().map(|item| *score(item)).fold(0.0f32, f32::max);
    for item in list.iter_mut() {
        if let Some(share) = path_shares.get(&file(item)) {
            *score(item) += weight * share * best;
        }
    }
}

/// Candidates of each ranking whose scores a file's evidence sums: a fixed depth, so a page of
/// 10 and one of 40 agree on their first 10 (semble's, 5 × its 10 results).
const FILE_EVIDENCE_DEPTH: usize = 50;

/// Each file's best candidate in a ranking (`list`, best first) gains `weight` × the
/// ranking's best score × the file's share of evidence: the sum of its candidates' scores
/// among the first `FILE_EVIDENCE_DEPTH` over the largest such sum. A question about a large module (zod's `schemas.ts`, tokio's
/// `task/local.rs`) matches several of its chunks, each a little; one chunk of another file
/// that repeats a word outscores each of them but not their sum. semble's rule and constant
/// (`boost_multi_chunk_files`, 0.2); measured in docs/ranking.md.
fn add_file_evidence<T>(list: &mut [T], score: impl Fn(&mut T) -> &mut f32, file: impl Fn(&T) -> u32, weight: f32) {
    let mut sums: HashMap<u32, f32> = HashMap::new();
    let mut best_of_file: HashMap<u32, usize> = HashMap::new();
    let mut best = 0.0f32;
    for (i, item) in list.iter_mut().enumerate().take(FILE_EVIDENCE_DEPTH) {
        let file = file(item);
        let score = *score(item);
        best = best.max(score);
        *sums.entry(file).or_insert(0.0) += score;
        best_of_file.entry(file).or_insert(i);
    }
    let largest = sums.values().copied().fold(0.0f32, f32::max);
    if largest <= 0.0 {
        return;
    }
    for (file, i) in best_of_file {
        *score(&mut list[i]) += weight * best * sums[&file] / largest;
    }
}

/// The file of each tagged address, as an id tagged with its index (`RepoIndex::files_of`).
fn files_of_tagged(indexes: &[&RepoIndex], searchers: &[Searcher], addresses: &[DocAddress]) -> Result<Vec<u32>> {
    let mut files = vec![0; addresses.len()];
    for (at, index) in indexes.iter().enumerate() {
        let (positions, here): (Vec<usize>, Vec<DocAddress>) = addresses
            .iter()
            .enumerate()
            .filter_map(|(i, a)| {
                let (index_at, address) = untag(*a);
                (index_at == at).then_some((i, address))
            })
            .unzip();
        if here.is_empty() {
            continue;
        }
        for (i, file) in positions.into_iter().zip(index.files_of(&searchers[at], &here)?) {
            files[i] = file | ((at as u32) << FILE_SHIFT);
        }
    }
    Ok(files)
}

/// The chunks of one index that define the identifier `name` a query is (with `qualifier`,
/// also those a file defining the qualifier holds), at most `MAX_PROMOTED_DEFINITIONS` of
/// each, those in a file named after the identifier first (`rank::named_after`): Ruby reopens
/// a class in every file of its folder (`rails/application/*.rb` each define `Application`),
/// and the one file named after it is where it is declared. Those in an older version's
/// folder beside a newer version's definition (`rank::older_versions`: `zod/src/v3/ZodError.ts`
/// beside `v4/classic/errors.ts`) are left to the ranking, unless the query names that
/// version (`versions`).
fn named_definitions(
    index: &RepoIndex,
    searcher: &Searcher,
    name: &str,
    qualifier: Option<&str>,
    versions: &[u64],
) -> Result<Named> {
    let named = index.definitions(searcher, name, QUALIFIED_DEFINITIONS)?;
    let holders = match qualifier {
        Some(qualifier) => index.definitions(searcher, qualifier, QUALIFIED_DEFINITIONS)?,
        None => Vec::new(),
    };
    // One call: file ids are only comparable within it.
    let all: Vec<DocAddress> = named.iter().chain(&holders).copied().collect();
    let (files, paths) = index.files_and_paths_of(searcher, &all)?;
    let (named_files, holder_files) = files.split_at(named.len());
    let mut flags = index.flags_of(searcher, &named)?;
    index.mark_superseded(searcher, &named, &mut flags)?;
    let older: Vec<DocAddress> =
        named.iter().zip(older_versions(&flags, versions)).filter(|(_, older)| *older).map(|(&a, _)| a).collect();
    let titled: Vec<(DocAddress, Title)> = named
        .iter()
        .zip(named_files)
        .filter_map(|(&address, &file)| Some((address, named_after(&paths[file as usize], name)?)))
        .collect();
    // A test's or an example's re-declaration (a TypeScript test augmenting `interface
    // ZodType`, a mock class) is not where the thing is defined: after the others.
    let secondary: Vec<DocAddress> =
        named.iter().zip(&flags).filter(|(_, &f)| f & FLAG_SECONDARY != 0).map(|(&a, _)| a).collect();
    // The first `MAX_PROMOTED_DEFINITIONS` of the current versions', the code's before the
    // tests', titled ones first, in document order.
    let promote = |chosen: Vec<DocAddress>| -> Vec<DocAddress> {
        let mut chosen: Vec<DocAddress> = chosen.into_iter().filter(|address| !older.contains(address)).collect();
        chosen.sort_by_key(|&address| (secondary.contains(&address), title_rank(&titled, address)));
        chosen.truncate(MAX_PROMOTED_DEFINITIONS);
        chosen.sort();
        chosen
    };
    let held = match qualifier {
        Some(_) => promote(held_definitions(&named, named_files, holder_files)),
        None => Vec::new(),
    };
    let all = promote(named);
    Ok(Named { all, held, titled, secondary })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An index at a fresh state dir holding `files` (path, Rust source).
    fn index_of(state: &std::path::Path, files: &[(String, String)]) -> RepoIndex {
        index_with(state, files, |_, _| {})
    }

    /// `index_of`, with `add` filling in what the code facts would add to each file's chunks.
    fn index_with(
        state: &std::path::Path,
        files: &[(String, String)],
        add: impl Fn(&str, &mut [crate::ingest::Chunk]),
    ) -> RepoIndex {
        let index = RepoIndex::open(state, "fp", state).unwrap();
        let mut writer = index.writer(15_000_000).unwrap();
        let params = crate::ingest::ChunkParams { max_lines: 40, target_lines: 20, max_chars: 4000 };
        let mut next_id = 0;
        for (path, text) in files {
            let mut chunks = crate::ingest::chunk_file(crate::ingest::Language::Rust, text, params);
            add(text, &mut chunks);
            let ids: Vec<u32> = (next_id..next_id + chunks.len() as u32).collect();
            next_id += chunks.len() as u32;
            index.replace_file(&writer, path, "rust", &chunks, &ids).unwrap();
        }
        writer.commit().unwrap();
        index.reload().unwrap();
        index
    }

    /// Several indexes score every chunk as one index holding all of them would: a word rare
    /// in a small repo but common across all of them weighs what it weighs across all.
    #[test]
    fn several_indexes_are_scored_as_one_index_of_all_their_chunks() {
        let file = |name: &str, text: &str| (format!("src/{name}.rs"), format!("/// {text}\npub fn {name}() {{}}\n"));
        // Small: "retry" in one of its two files. Large: "retry" in 30 of its 200 files,
        // "backoff" in a few more.
        let small = vec![file("retry_send", "Retries a send."), file("parse", "Parses a header.")];
        let large: Vec<(String, String)> = (0..200)
            .map(|i| {
                let text = if i % 20 == 0 { "Retries once with backoff." } else { "Counts the bytes." };
                file(&format!("item_{i}"), if i < 30 { "Retries and retries until retry gives up." } else { text })
            })
            .collect();
        let dirs: Vec<tempfile::TempDir> = (0..3).map(|_| tempfile::tempdir().unwrap()).collect();
        let small_index = index_of(dirs[0].path(), &small);
        let large_index = index_of(dirs[1].path(), &large);
        let both: Vec<(String, String)> = small.iter().cloned().chain(large.iter().cloned()).collect();
        let one_index = index_of(dirs[2].path(), &both);
        let params = SearchParams::new(50, 1);
        let filter = SearchFilter::default();
        let scores = |indexes: &[&RepoIndex]| -> Vec<(String, f32)> {
            let outcome =
                search_indexes(indexes, "retry backoff", None, SearchMode::Lexical, params, false, &filter).unwrap();
            let mut scores: Vec<(String, f32)> = outcome.hits.into_iter().map(|h| (h.path, h.score)).collect();
            scores.sort_by(|a, b| a.0.cmp(&b.0));
            scores
        };
        let pooled = scores(&[&small_index, &large_index]);
        let single = scores(&[&one_index]);
        assert_eq!(pooled.len(), single.len());
        for ((path, pooled), (same_path, single)) in pooled.iter().zip(&single) {
            assert_eq!(path, same_path);
            assert!((pooled - single).abs() < 1e-4, "{path}: {pooled} across, {single} in one index");
        }
        // Alone, the small repo's own statistics score its hit otherwise (a two-file index
        // squeezes every word's weight): the difference the pooling removes.
        let alone = scores(&[&small_index]);
        let of = |list: &[(String, f32)]| list.iter().find(|(p, _)| p == "src/retry_send.rs").unwrap().1;
        assert!(of(&alone) < of(&pooled) * 0.5, "alone {} vs pooled {}", of(&alone), of(&pooled));
        // Each hit of several indexes names its repo.
        let outcome =
            search_indexes(&[&small_index, &large_index], "retry", None, SearchMode::Lexical, params, false, &filter)
                .unwrap();
        assert!(outcome.hits.iter().all(|h| h.repo.is_some()));
        let repo_of = |path: &str| outcome.hits.iter().find(|h| h.path == path).and_then(|h| h.repo.clone()).unwrap();
        assert_eq!(repo_of("src/retry_send.rs"), dirs[0].path().display().to_string());
        assert_eq!(repo_of("src/item_0.rs"), dirs[1].path().display().to_string());
    }

    /// A query that is one identifier finds where it is defined first, however often other
    /// files use it; a question in words, or a dense search, ranks as before.
    #[test]
    fn a_query_naming_an_identifier_puts_its_definition_first() {
        let uses = "use crate::ser::Serialize;\n".to_string()
            + &(0..30)
                .map(|i| {
                    format!("impl Serialize for T{i} {{ fn serialize(&self) -> Serialize {{ Serialize::new() }} }}\n")
                })
                .collect::<String>();
        let files = vec![
            ("src/private/ser.rs".to_string(), uses),
            (
                "src/ser/mod.rs".to_string(),
                "/// A data structure that can be serialized.\npub trait Serialize {\n    fn serialize(&self);\n}\n"
                    .to_string(),
            ),
        ];
        let dir = tempfile::tempdir().unwrap();
        let index = index_of(dir.path(), &files);
        let params = SearchParams::new(10, 1);
        let filter = SearchFilter::default();
        let first = |query: &str| {
            let outcome = search_indexes(&[&index], query, None, SearchMode::Lexical, params, false, &filter).unwrap();
            outcome.hits.first().map(|h| h.path.clone()).unwrap()
        };
        assert_eq!(first("Serialize"), "src/ser/mod.rs");
        assert_eq!(first("ser::Serialize"), "src/ser/mod.rs");
        // Without the promotion the file that uses it wins: what the rule changes.
        assert_eq!(first("Serialize impl"), "src/private/ser.rs");
        // Documentation only: no definitions.
        let docs = SearchFilter { source_opt: Some(HitSource::Library), ..SearchFilter::default() };
        let outcome = search_indexes(&[&index], "Serialize", None, SearchMode::Lexical, params, false, &docs).unwrap();
        assert!(outcome.hits.is_empty());
    }

    /// A library that kept its previous API in `v1/` beside the current modules
    /// (`pydantic/v1/fields.py` and `pydantic/fields.py`) answers with the current one, even
    /// where the copy matches more words; a question naming the version gets the copy.
    #[test]
    fn a_version_folder_gives_way_to_the_module_that_supersedes_it() {
        let old = "/// Declares the fields of a model, each field with its constraints and default.\n\
                   pub fn declare(fields: Fields, constraints: Constraints) {}\n";
        let new = "/// Declares the fields of a model with their constraints and defaults.\n\
                   pub fn declare(fields: Fields) {}\n";
        let files = vec![
            ("pkg/v1/fields.rs".to_string(), old.to_string()),
            ("pkg/fields.rs".to_string(), new.to_string()),
            ("pkg/main.rs".to_string(), "/// The model.\npub struct Model;\n".to_string()),
        ];
        let params = SearchParams::new(10, 1);
        let filter = SearchFilter::default();
        let first = |index: &RepoIndex, query: &str| {
            let outcome = search_indexes(&[index], query, None, SearchMode::Lexical, params, false, &filter).unwrap();
            outcome.hits.first().map(|h| h.path.clone()).unwrap()
        };
        let dir = tempfile::tempdir().unwrap();
        let index = index_of(dir.path(), &files);
        assert_eq!(first(&index, "field constraints and defaults"), "pkg/fields.rs");
        assert_eq!(first(&index, "declare"), "pkg/fields.rs");
        assert_eq!(first(&index, "v1 field constraints and defaults"), "pkg/v1/fields.rs");
        // Without the current module beside it, the copy is what the repo has.
        let alone = tempfile::tempdir().unwrap();
        let index = index_of(alone.path(), &[files[0].clone(), files[2].clone()]);
        assert_eq!(first(&index, "field constraints and defaults"), "pkg/v1/fields.rs");
        // A neighbouring version's folder holding the module makes `v1/` one of several
        // versions, which the newest of them answers, not the folder holding them.
        let versions = tempfile::tempdir().unwrap();
        let mut with_v2 = files.clone();
        with_v2[0].0 = "pkg/v2/fields.rs".to_string();
        with_v2.push(("pkg/v1/fields.rs".to_string(), new.to_string()));
        let index = index_of(versions.path(), &with_v2);
        assert_eq!(first(&index, "field constraints and defaults"), "pkg/v2/fields.rs");
    }

    /// Of several definitions of a named identifier, the one in a file named after it comes
    /// first (Ruby reopens a class in each file of its folder); a name the repo defines
    /// nowhere is answered by the chunk that re-exports it (a facade over a dependency).
    #[test]
    fn a_query_naming_an_identifier_prefers_its_own_file_then_a_reexport() {
        let busy = (0..30)
            .map(|i| format!("impl Router {{ fn route_{i}(&self) -> Router {{ Router }} }}\n"))
            .collect::<String>();
        let files = vec![
            ("src/routing/finisher.rs".to_string(), format!("pub struct Router;\n{busy}")),
            ("src/routing/router.rs".to_string(), "/// Routes requests.\npub struct Router;\n".to_string()),
            // An older version beside a newer one: its definition goes after the newer one's,
            // named after the identifier or not.
            ("src/v1/router.rs".to_string(), "pub struct Router;\n".to_string()),
            ("src/v2/routing.rs".to_string(), "pub struct Router;\n".to_string()),
            ("src/form.rs".to_string(), (0..30).map(|i| format!("impl FromRequest for F{i} {{}}\n")).collect()),
            (
                "src/extract/mod.rs".to_string(),
                "pub use axum_core::extract::FromRequest;\n\npub mod path;\n".to_string(),
            ),
        ];
        let dir = tempfile::tempdir().unwrap();
        // What the code facts add at an index run (`code::chunks_and_code`).
        let index = index_with(dir.path(), &files, |text, chunks| {
            let exports = text
                .lines()
                .enumerate()
                .filter(|(_, l)| l.starts_with("pub use"))
                .map(|(i, _)| (i as u64 + 1, "FromRequest"));
            crate::ingest::chunk::add_exports(chunks, exports);
        });
        let filter = SearchFilter::default();
        let first_with = |query: &str, definitions_first: bool| {
            let params = SearchParams { definitions_first, ..SearchParams::new(10, 1) };
            let outcome = search_indexes(&[&index], query, None, SearchMode::Lexical, params, false, &filter).unwrap();
            outcome.hits.first().map(|h| h.path.clone()).unwrap()
        };
        let first = |query: &str| first_with(query, true);
        assert_eq!(first("Router"), "src/routing/router.rs");
        let outcome =
            search_indexes(&[&index], "Router", None, SearchMode::Lexical, SearchParams::new(10, 1), false, &filter)
                .unwrap();
        let place = |path: &str| outcome.hits.iter().position(|h| h.path == path).unwrap_or(usize::MAX);
        assert!(
            place("src/v2/routing.rs") < place("src/v1/router.rs"),
            "{:?}",
            outcome.hits.iter().map(|h| &h.path).collect::<Vec<_>>()
        );
        assert_eq!(first("FromRequest"), "src/extract/mod.rs");
        // Ranked as text, the files that use the names most come first: what the rules change.
        assert_eq!(first_with("Router", false), "src/routing/finisher.rs");
        assert_eq!(first_with("FromRequest", false), "src/form.rs");
    }

    /// A question in words ranks first the file whose name or folder names its words, even
    /// where another file repeats them more often; a query of one word is left as it was.
    #[test]
    fn a_question_ranks_the_file_its_words_name() {
        let busy = (0..3)
            .map(|i| format!("fn send_{i}(hooks: Hooks) {{ hooks.run(); let tracing = hooks.tracing(); }}\n"))
            .collect::<String>();
        let quiet = "fn span(start: Instant, hooks: Hooks) -> Duration {\n".to_string()
            + &(0..12).map(|i| format!("    let elapsed_{i} = start.elapsed();\n")).collect::<String>()
            + "    start.elapsed()\n}\n";
        let mut files = vec![("src/client.rs".to_string(), busy), ("src/tracing.rs".to_string(), quiet)];
        for i in 0..8 {
            files.push((format!("src/other_{i}.rs"), format!("fn other_{i}(value: u32) -> u32 {{ value + {i} }}\n")));
        }
        let dir = tempfile::tempdir().unwrap();
        let index = index_of(dir.path(), &files);
        let filter = SearchFilter::default();
        let first = |query: &str, weight: f32| {
            let params = SearchParams { path_match_weight: weight, ..SearchParams::new(10, 1) };
            let outcome = search_indexes(&[&index], query, None, SearchMode::Lexical, params, false, &filter).unwrap();
            outcome.hits.first().map(|h| h.path.clone()).unwrap()
        };
        assert_eq!(first("tracing hooks", 1.0), "src/tracing.rs");
        // Off, the file that repeats the words wins: what the rule changes.
        assert_eq!(first("tracing hooks", 0.0), "src/client.rs");
        // One word is not a question in words.
        assert_eq!(first("tracing", 1.0), "src/client.rs");
    }

    /// A file whose candidates add up gains on one whose single chunk scores best; the gain
    /// goes to each file's best chunk only, at most `weight` of the best score.
    #[test]
    fn a_file_with_many_good_chunks_gains_on_one_good_chunk() {
        // (score, file), best first: file 1 has one strong chunk, file 2 three fair ones.
        let mut list = vec![(10.0f32, 1u32), (9.5, 2), (7.0, 2), (7.0, 2), (1.0, 3)];
        add_file_evidence(&mut list, |(s, _)| s, |(_, f)| *f, 0.2);
        // Sums 10, 23.5, 1: file 2's best gains 0.2 × 10 × 23.5/23.5, file 1's 0.2 × 10 × 10/23.5.
        let close = |a: f32, b: f32| (a - b).abs() < 1e-4;
        assert!(close(list[1].0, 11.5) && close(list[0].0, 10.0 + 2.0 * 10.0 / 23.5), "{list:?}");
        assert!(list[1].0 > list[0].0, "the file of many good chunks passes: {list:?}");
        assert_eq!((list[2].0, list[3].0), (7.0, 7.0), "only a file's best chunk gains");
        // Off, nothing moves.
        let mut same = vec![(10.0f32, 1u32), (9.5, 2)];
        add_file_evidence(&mut same, |(s, _)| s, |(_, f)| *f, 0.0);
        assert_eq!(same, vec![(10.0, 1), (9.5, 2)]);
        // Candidates past the first FILE_EVIDENCE_DEPTH count for nothing: a deeper list (a
        // page of 40) ranks its first candidates as a shorter one (a page of 10) does.
        let mut long: Vec<(f32, u32)> =
            (0..FILE_EVIDENCE_DEPTH + 20).map(|i| (100.0 - i as f32, i as u32 % 7)).collect();
        let mut short = long[..FILE_EVIDENCE_DEPTH].to_vec();
        add_file_evidence(&mut long, |(s, _)| s, |(_, f)| *f, 0.2);
        add_file_evidence(&mut short, |(s, _)| s, |(_, f)| *f, 0.2);
        assert_eq!(long[..FILE_EVIDENCE_DEPTH], short[..]);
    }
}
