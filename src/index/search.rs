//! Searching a repo's index: the lexical query over the weighted fields, dense candidates
//! from the vector index, their fusion, and hits rendered with snippets.

use std::collections::{HashMap, HashSet};

use tantivy::collector::TopDocs;
use tantivy::query::{Bm25StatisticsProvider, BooleanQuery, BoostQuery, DisjunctionMaxQuery, Occur, Query, TermQuery};
use tantivy::schema::{Field, IndexRecordOption, Value};
use tantivy::tokenizer::TextAnalyzer;
use tantivy::{DocAddress, Searcher, Term};

use super::analyzer::{analyze, is_word_char};
use super::concepts::{ExpandedConcept, Expansion};
use super::rank::{
    candidate_depth, flags_prior, internal_prior_for, lexical_confidence, untag, with_ranks, Candidate,
    RankedCandidate, Source, COVERAGE_EXPONENT, DENSE_MIN_SIMILARITY,
};
use super::rank::{is_prose, superseded_by, FLAG_LIBRARY, FLAG_PROSE, FLAG_SUPERSEDED, FLAG_WEB, VERSION_BITS};
use super::{RepoIndex, SearchOutcome, SearchParams};
use crate::protocol::{DocdexError, HitSource, Result, SearchHit, SearchMode};

/// Each distinct path a lookup met (its bytes), with the id it got.
type PathIds = HashMap<Vec<u8>, u32>;

/// Field boosts: a query word that names an item or a heading says more than one in a body.
pub(super) const BOOST_SYMBOLS: f32 = 2.5;

pub(super) const BOOST_HEADING: f32 = 1.5;

pub(super) const BOOST_PATH: f32 = 1.0;

pub(super) const BOOST_BODY: f32 = 1.0;

/// A word in a code chunk's comment prose (doc comments, docstrings, notes; code examples
/// left out) weighs more than the same word in its code: the prose says what the code is for
/// in the words a question uses, while code and examples mention every API they touch. 1.6
/// chosen on the tune splits among 1.15 / 1.3 / 1.6 / 2.0 (see ARCHITECTURE.md, Ranking).
pub(super) const BOOST_DOCS: f32 = 1.6;

/// Share of the non-best fields' scores a term keeps (BM25F-like, without double counting).
pub(super) const DISMAX_TIE_BREAKER: f32 = 0.3;

/// Lines in a snippet.
pub(super) const SNIPPET_LINES: usize = 3;

pub(super) const SNIPPET_LINE_CHARS: usize = 200;

pub(super) const SOURCE_REPO: &str = "repo";

pub(super) const SOURCE_WEB: &str = "web";

pub(super) const SOURCE_LIBRARY: &str = "library";

/// Which chunks a search considers: by where they came from, and one library by name.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SearchFilter {
    /// `None`: every source.
    pub source_opt: Option<HitSource>,
    pub library_opt: Option<String>,
}

impl SearchFilter {
    pub fn is_empty(&self) -> bool {
        self.source_opt.is_none() && self.library_opt.is_none()
    }

    /// Whether a chunk with these flags may be returned (the library name is checked
    /// separately, from the postings).
    fn admits_flags(&self, flags: u64) -> bool {
        let source = if flags & FLAG_LIBRARY != 0 {
            HitSource::Library
        } else if flags & FLAG_WEB != 0 {
            HitSource::Web
        } else {
            HitSource::Repo
        };
        let wanted = if self.library_opt.is_some() { Some(HitSource::Library) } else { self.source_opt };
        wanted.is_none_or(|w| w == source)
    }
}

pub(super) fn source_name(source: HitSource) -> &'static str {
    match source {
        HitSource::Repo => SOURCE_REPO,
        HitSource::Web => SOURCE_WEB,
        HitSource::Library => SOURCE_LIBRARY,
        // Diff hits are made from a diff, never stored: no indexed chunk has this source.
        HitSource::Diff => "diff",
    }
}

pub(super) fn hit_source(source: &str) -> HitSource {
    match source {
        SOURCE_WEB => HitSource::Web,
        SOURCE_LIBRARY => HitSource::Library,
        _ => HitSource::Repo,
    }
}

/// How many of the query's own `terms` a chunk matched, given the indices into `all_terms`
/// (the query's terms, then the concepts') it contains: a word that called for a concept
/// counts when the chunk has one of the concept's terms.
pub(super) fn matched_query_terms(
    terms: &[String],
    all_terms: &[String],
    concepts: &[ExpandedConcept],
    found: &HashSet<usize>,
) -> usize {
    let has = |term: &String| all_terms.iter().position(|t| t == term).is_some_and(|i| found.contains(&i));
    let credited: HashSet<&String> =
        concepts.iter().filter(|c| c.terms.iter().any(has)).flat_map(|c| c.covers.iter()).collect();
    terms.iter().enumerate().filter(|&(i, term)| found.contains(&i) || credited.contains(term)).count()
}

/// Distinct analyzed terms of a query, in order.
pub(super) fn query_terms(analyzer: &mut TextAnalyzer, query_text: &str) -> Vec<String> {
    let mut terms: Vec<String> = Vec::new();
    for term in analyze(analyzer, query_text) {
        if !terms.contains(&term) {
            terms.push(term);
        }
    }
    terms
}

/// Most letters of a term a line must hold for the term to be among the line's (`Snippets`).
const SNIPPET_PROBE_CHARS: usize = 3;

/// The letters a line must hold for `term` to be among its terms: a term is a lowercased part
/// of one of the text's words, stemmed, and stemming changes only a word's end (`try` → `tri`),
/// so its first three letters, or all but the last of a shorter term.
pub(super) fn snippet_probe(term: &str) -> String {
    term.chars().take(SNIPPET_PROBE_CHARS.min(term.chars().count().saturating_sub(1)).max(1)).collect()
}

/// Picks each hit's snippet: the few consecutive lines of its chunk that hold the most
/// distinct query terms.
pub(super) struct Snippets<'a> {
    /// The query's terms (at most 64: a line's are a bit mask) and their probes.
    terms: Vec<&'a str>,
    probes: Vec<String>,
    analyzer: &'a mut TextAnalyzer,
    /// Which query terms each word met so far that holds a probe analyzes to: a page's chunks
    /// share their words.
    words: HashMap<String, u64>,
}

impl<'a> Snippets<'a> {
    pub(super) fn new(query_terms: &'a HashSet<&'a str>, analyzer: &'a mut TextAnalyzer) -> Snippets<'a> {
        let terms: Vec<&str> = query_terms.iter().copied().take(64).collect();
        let probes = terms.iter().map(|term| snippet_probe(term)).collect();
        Snippets { terms, probes, analyzer, words: HashMap::new() }
    }

    /// The snippet of one chunk's text.
    pub(super) fn best(&mut self, body: &str) -> String {
        let lines: Vec<&str> = body.lines().collect();
        // Analyzing every line of every hit was most of a lexical search's time. A term is made
        // of one word of the text (a run of letters, digits and `_`: the analyzer never joins
        // two) and holds its probe, so only the lines holding some probe are read, and in them
        // only the words holding one are analyzed, each once per search. Lowercasing never makes
        // a line break, so the lowercased chunk's lines are the chunk's.
        let lowered = if body.is_ascii() {
            body.to_ascii_lowercase()
        } else {
            body.chars().flat_map(char::to_lowercase).collect()
        };
        let line_terms: Vec<u64> = lines
            .iter()
            .zip(lowered.lines())
            .map(|(line, lower)| {
                if !self.probes.iter().any(|probe| lower.contains(probe.as_str())) {
                    return 0;
                }
                if !line.is_ascii() {
                    // Lowercasing may move bytes (`İ`): the words are found in the line itself.
                    let words = line.split(|c: char| !is_word_char(c));
                    return words.fold(0, |mask, word| mask | self.word_terms(word, &word.to_lowercase()));
                }
                let mut mask = 0;
                let mut at = 0;
                for word in lower.split(|c: char| !is_word_char(c)) {
                    if !word.is_empty() {
                        mask |= self.word_terms(&line[at..at + word.len()], word);
                    }
                    at += word.len() + 1; // the one ASCII character `split` cut at
                }
                mask
            })
            .collect();
        let mut best = (0usize, 0u32);
        for start in 0..lines.len() {
            let window = &line_terms[start..(start + SNIPPET_LINES).min(lines.len())];
            let distinct = window.iter().fold(0u64, |all, mask| all | mask).count_ones();
            let weight = distinct * 4 + window.iter().map(|mask| mask.count_ones()).sum::<u32>();
            if weight > best.1 {
                best = (start, weight);
            }
        }
        let start = if best.1 == 0 { lines.iter().position(|l| !l.trim().is_empty()).unwrap_or(0) } else { best.0 };
        lines[start..(start + SNIPPET_LINES).min(lines.len())]
            .iter()
            .map(|line| {
                let line = line.trim_end();
                if line.chars().count() > SNIPPET_LINE_CHARS {
                    let cut: String = line.chars().take(SNIPPET_LINE_CHARS).collect();
                    format!("{cut}…")
                } else {
                    line.to_string()
                }
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The query terms `word` (lowercased: `lower`) analyzes to, as a mask over `terms`.
    fn word_terms(&mut self, word: &str, lower: &str) -> u64 {
        if word.is_empty() || !self.probes.iter().any(|probe| lower.contains(probe.as_str())) {
            return 0;
        }
        if let Some(&mask) = self.words.get(word) {
            return mask;
        }
        let mask = analyze(self.analyzer, word)
            .iter()
            .filter_map(|term| self.terms.iter().position(|t| t == term))
            .fold(0, |mask, at| mask | 1 << at);
        self.words.insert(word.to_string(), mask);
        mask
    }
}

impl RepoIndex {
    /// Lexical search restricted to the chunks of the given paths (web pages by URL): how the
    /// waterfall ranks the pages it just fetched against the question.
    pub fn search_paths(&self, query_text: &str, paths: &[String], params: SearchParams) -> Result<SearchOutcome> {
        let searcher = self.searcher();
        let mut analyzer = self.analyzer.clone();
        let terms = query_terms(&mut analyzer, query_text);
        let depth = candidate_depth(params);
        let lexical = self.lexical_candidates_in(
            &searcher,
            &searcher,
            &terms,
            &Expansion::default(),
            0.0,
            depth,
            Some(paths),
            &SearchFilter::default(),
            internal_prior_for(query_text),
        )?;
        let top_score = lexical.first().map(|c| lexical_confidence(c.score)).unwrap_or(0.0);
        let ranked = with_ranks(lexical, Source::Lexical);
        let hits = render(&[self], &[searcher], ranked, &terms, &mut analyzer, params, false)?;
        Ok(SearchOutcome { top_score: if hits.is_empty() { 0.0 } else { top_score }, hits })
    }

    /// Lexical search: BM25 over body, symbols, headings and path, collapsing
    /// near-duplicates. (Kept as the one-call API for callers without a query vector.)
    pub fn search(&self, query_text: &str, params: SearchParams) -> Result<SearchOutcome> {
        self.search_with(query_text, None, SearchMode::Lexical, params, false)
    }

    /// Searches in `mode`; `query_vector_opt` is required for dense and hybrid (without it
    /// they return nothing).
    pub fn search_with(
        &self,
        query_text: &str,
        query_vector_opt: Option<&[f32]>,
        mode: SearchMode,
        params: SearchParams,
        explain: bool,
    ) -> Result<SearchOutcome> {
        self.search_filtered(query_text, query_vector_opt, mode, params, explain, &SearchFilter::default())
    }

    /// BM25 candidates, rescored by term coverage and path prior.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn lexical_candidates(
        &self,
        searcher: &Searcher,
        stats: &dyn Bm25StatisticsProvider,
        terms: &[String],
        expansion: &Expansion,
        concept_weight: f32,
        depth: usize,
        filter: &SearchFilter,
        internal_prior: f32,
    ) -> Result<Vec<Candidate>> {
        self.lexical_candidates_in(
            searcher,
            stats,
            terms,
            expansion,
            concept_weight,
            depth,
            None,
            filter,
            internal_prior,
        )
    }

    /// BM25 candidates, optionally only among chunks of `paths_opt`. The expansion's
    /// concepts each add the best of their terms at `concept_weight`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn lexical_candidates_in(
        &self,
        searcher: &Searcher,
        stats: &dyn Bm25StatisticsProvider,
        terms: &[String],
        expansion: &Expansion,
        concept_weight: f32,
        depth: usize,
        paths_opt: Option<&[String]>,
        filter: &SearchFilter,
        internal_prior: f32,
    ) -> Result<Vec<Candidate>> {
        if terms.is_empty() || paths_opt.is_some_and(|p| p.is_empty()) {
            return Ok(Vec::new());
        }
        let f = self.fields;
        let weighted = [
            (f.symbols, BOOST_SYMBOLS),
            (f.heading, BOOST_HEADING),
            (f.path_text, BOOST_PATH),
            (f.body, BOOST_BODY),
            (f.docs, BOOST_DOCS),
        ];
        let term_query = |term: &str| -> Box<dyn Query> {
            let per_field: Vec<Box<dyn Query>> = weighted
                .iter()
                .map(|&(field, boost)| {
                    let q = TermQuery::new(Term::from_field_text(field, term), IndexRecordOption::WithFreqs);
                    Box::new(BoostQuery::new(Box::new(q), boost)) as Box<dyn Query>
                })
                .collect();
            Box::new(DisjunctionMaxQuery::with_tie_breaker(per_field, DISMAX_TIE_BREAKER))
        };
        let mut clauses: Vec<(Occur, Box<dyn Query>)> =
            terms.iter().map(|term| (Occur::Should, term_query(term))).collect();
        if concept_weight > 0.0 {
            for concept in &expansion.concepts {
                // A concept's terms name one idea: the best of them counts, not their sum.
                let any: Vec<Box<dyn Query>> = concept.terms.iter().map(|t| term_query(t)).collect();
                let best = DisjunctionMaxQuery::with_tie_breaker(any, 0.0);
                clauses.push((Occur::Should, Box::new(BoostQuery::new(Box::new(best), concept_weight))));
            }
        }
        let mut query: Box<dyn Query> = Box::new(BooleanQuery::new(clauses));
        if let Some(paths) = paths_opt {
            let allowed: Vec<(Occur, Box<dyn Query>)> = paths
                .iter()
                .map(|p| {
                    let q = TermQuery::new(Term::from_field_text(f.path, p), IndexRecordOption::Basic);
                    (Occur::Should, Box::new(q) as Box<dyn Query>)
                })
                .collect();
            // The path filter must not add to the score: boosted to zero.
            let filter = BoostQuery::new(Box::new(BooleanQuery::new(allowed)), 0.0);
            query = Box::new(BooleanQuery::new(vec![(Occur::Must, query), (Occur::Must, Box::new(filter))]));
        }
        // Source and library filters are terms too (scoring nothing): the candidates are
        // drawn from the admitted chunks only, so a filtered search is as deep as any.
        let mut required: Vec<Term> = Vec::new();
        if let Some(library) = &filter.library_opt {
            required.push(Term::from_field_text(f.library, library));
        } else if let Some(source) = filter.source_opt {
            required.push(Term::from_field_text(f.source, source_name(source)));
        }
        for term in required {
            let only = BoostQuery::new(Box::new(TermQuery::new(term, IndexRecordOption::Basic)), 0.0);
            query = Box::new(BooleanQuery::new(vec![(Occur::Must, query), (Occur::Must, Box::new(only))]));
        }
        let top =
            searcher.search_with_statistics_provider(&*query, &TopDocs::with_limit(depth).order_by_score(), stats)?;
        let addresses: Vec<DocAddress> = top.iter().map(|&(_, address)| address).collect();
        let flags = self.flags_of(searcher, &addresses)?;
        let concepts: &[ExpandedConcept] = if concept_weight > 0.0 { &expansion.concepts } else { &[] };
        let present = if terms.len() > 1 {
            // Concept terms are looked up with the query's own: a chunk that has one counts
            // the words that called for the concept as matched.
            let mut all_terms = terms.to_vec();
            for term in concepts.iter().flat_map(|c| c.terms.iter()) {
                if !all_terms.contains(term) {
                    all_terms.push(term.clone());
                }
            }
            self.terms_present(searcher, &all_terms, &addresses)?
                .into_iter()
                .map(|found| matched_query_terms(terms, &all_terms, concepts, &found))
                .collect()
        } else {
            Vec::new()
        };
        let mut candidates = Vec::with_capacity(top.len());
        for (i, (score, address)) in top.into_iter().enumerate() {
            let coverage = if terms.len() > 1 && flags[i] & FLAG_PROSE == 0 {
                present[i] as f32 / terms.len() as f32
            } else {
                1.0
            };
            let score = score * flags_prior(flags[i], internal_prior) * coverage.powf(COVERAGE_EXPONENT);
            candidates.push(Candidate { address, score, doc_opt: None, flags: flags[i] });
        }
        candidates.sort_by(|a, b| b.score.total_cmp(&a.score));
        Ok(candidates)
    }

    /// The chunks that define `name` (exactly as written), those defining the fewest other
    /// names first; at most `limit`. Where none does, the chunks that re-export it (a facade
    /// over a dependency that defines it). Only a repo's own chunks define anything (docs and
    /// web pages name no items).
    pub(super) fn definitions(&self, searcher: &Searcher, name: &str, limit: usize) -> Result<Vec<DocAddress>> {
        let find = |field: Field| -> Result<Vec<DocAddress>> {
            let query = TermQuery::new(Term::from_field_text(field, name), IndexRecordOption::Basic);
            Ok(searcher
                .search(&query, &TopDocs::with_limit(limit).order_by_score())?
                .into_iter()
                .map(|(_, a)| a)
                .collect())
        };
        let defining = find(self.fields.defines)?;
        if defining.is_empty() {
            return find(self.fields.exports);
        }
        Ok(defining)
    }

    /// The file of each address, as an id per distinct path (across segments), read from
    /// the `path` fast field: no stored document is loaded. Each segment's paths are looked
    /// up in one pass over its dictionary, in ordinal order.
    pub(super) fn files_of(&self, searcher: &Searcher, addresses: &[DocAddress]) -> Result<Vec<u32>> {
        Ok(self.file_ids(searcher, addresses)?.0)
    }

    /// `files_of`, and the path of each file id.
    pub(super) fn files_and_paths_of(
        &self,
        searcher: &Searcher,
        addresses: &[DocAddress],
    ) -> Result<(Vec<u32>, Vec<String>)> {
        let (files, ids) = self.file_ids(searcher, addresses)?;
        let mut paths = vec![String::new(); ids.len()];
        for (path, id) in ids {
            paths[id as usize] = String::from_utf8_lossy(&path).into_owned();
        }
        Ok((files, paths))
    }

    /// `files_of`, with the id each path got.
    fn file_ids(&self, searcher: &Searcher, addresses: &[DocAddress]) -> Result<(Vec<u32>, PathIds)> {
        let mut ords_by_segment: HashMap<u32, Vec<(u64, usize)>> = HashMap::new();
        let mut files = vec![u32::MAX; addresses.len()];
        for (i, address) in addresses.iter().enumerate() {
            ords_by_segment.entry(address.segment_ord).or_default().push((u64::from(address.doc_id), i));
        }
        let mut ids: HashMap<Vec<u8>, u32> = HashMap::new();
        for (segment_ord, mut docs) in ords_by_segment {
            let column = searcher
                .segment_reader(segment_ord)
                .fast_fields()
                .str("path")?
                .ok_or_else(|| DocdexError::internal("the index has no path column"))?;
            // Document ids become path ordinals, then the ordinals are read in order.
            for (doc_or_ord, _) in docs.iter_mut() {
                *doc_or_ord = column.ords().first(*doc_or_ord as u32).unwrap_or(u64::MAX);
            }
            docs.sort_unstable();
            let ords: Vec<u64> = docs.iter().map(|&(ord, _)| ord).filter(|&ord| ord != u64::MAX).collect();
            let mut looked_up: Vec<u32> = Vec::with_capacity(ords.len());
            column.dictionary().sorted_ords_to_term_cb(&ords, |path| {
                let next = ids.len() as u32;
                looked_up.push(*ids.entry(path.to_vec()).or_insert(next));
            })?;
            for (&(_, i), &file) in docs.iter().zip(&looked_up) {
                files[i] = file;
            }
        }
        Ok((files, ids))
    }

    /// Each address's `flags` fast field.
    pub(super) fn flags_of(&self, searcher: &Searcher, addresses: &[DocAddress]) -> Result<Vec<u64>> {
        let mut columns = HashMap::new();
        addresses
            .iter()
            .map(|address| {
                let column =
                    match columns.entry(address.segment_ord) {
                        std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
                        std::collections::hash_map::Entry::Vacant(e) => {
                            e.insert(searcher.segment_reader(address.segment_ord).fast_fields().u64("flags").map_err(
                                |err| DocdexError::internal(format!("the index has no flags column: {err}")),
                            )?)
                        }
                    };
                Ok(column.first(address.doc_id).unwrap_or(0))
            })
            .collect()
    }

    /// Sets `FLAG_SUPERSEDED` in the `flags` of the `addresses` (one each) of a version
    /// folder's module that the folder holding it supersedes (`rank::superseded_by`: the
    /// module is there too, and in no neighbouring version's folder). Only chunks with
    /// version bits are looked at, so a repo without version folders pays nothing.
    pub(super) fn mark_superseded(
        &self,
        searcher: &Searcher,
        addresses: &[DocAddress],
        flags: &mut [u64],
    ) -> Result<()> {
        let versioned: Vec<usize> = (0..flags.len()).filter(|&i| flags[i] & VERSION_BITS != 0).collect();
        if versioned.is_empty() {
            return Ok(());
        }
        let chosen: Vec<DocAddress> = versioned.iter().map(|&i| addresses[i]).collect();
        let (files, paths) = self.files_and_paths_of(searcher, &chosen)?;
        let mut superseded = Vec::with_capacity(paths.len());
        for path in &paths {
            let mut is = false;
            if let Some((current, neighbours)) = superseded_by(path) {
                is = self.has_file(searcher, &current)?;
                for neighbour in &neighbours {
                    if is && self.has_file(searcher, neighbour)? {
                        is = false;
                    }
                }
            }
            superseded.push(is);
        }
        for (i, file) in versioned.into_iter().zip(files) {
            if superseded[file as usize] {
                flags[i] |= FLAG_SUPERSEDED;
            }
        }
        Ok(())
    }

    /// Whether the index holds a live chunk of the file at `path`.
    fn has_file(&self, searcher: &Searcher, path: &str) -> Result<bool> {
        let query = TermQuery::new(Term::from_field_text(self.fields.path, path), IndexRecordOption::Basic);
        Ok(searcher.search(&query, &tantivy::collector::Count)? > 0)
    }

    /// Which of `terms` (by index) each address's chunk contains (in its path, heading,
    /// names or body), read from the postings: no stored document is loaded or re-analyzed.
    pub(super) fn terms_present(
        &self,
        searcher: &Searcher,
        terms: &[String],
        addresses: &[DocAddress],
    ) -> Result<Vec<HashSet<usize>>> {
        use tantivy::{DocSet, TERMINATED};
        let f = self.fields;
        let mut present: HashMap<DocAddress, HashSet<usize>> = HashMap::new();
        let mut segments: Vec<u32> = addresses.iter().map(|a| a.segment_ord).collect();
        segments.sort_unstable();
        segments.dedup();
        for segment_ord in segments {
            let mut docs: Vec<u32> =
                addresses.iter().filter(|a| a.segment_ord == segment_ord).map(|a| a.doc_id).collect();
            docs.sort_unstable();
            let segment = searcher.segment_reader(segment_ord);
            for field in [f.path_text, f.heading, f.symbols, f.body] {
                let inverted = segment.inverted_index(field)?;
                for (t, term) in terms.iter().enumerate() {
                    let Some(mut postings) =
                        inverted.read_postings(&Term::from_field_text(field, term), IndexRecordOption::Basic)?
                    else {
                        continue;
                    };
                    for &doc in &docs {
                        let mut current = postings.doc();
                        if current < doc {
                            current = postings.seek(doc);
                        }
                        if current == TERMINATED {
                            break;
                        }
                        if current == doc {
                            present.entry(DocAddress::new(segment_ord, doc)).or_default().insert(t);
                        }
                    }
                }
            }
        }
        Ok(addresses.iter().map(|a| present.remove(a).unwrap_or_default()).collect())
    }

    /// Live documents containing `term` (a library's chunks: bounded by one library's docs).
    pub(super) fn docs_with(&self, searcher: &Searcher, term: Term) -> Result<HashSet<DocAddress>> {
        use tantivy::{DocSet, TERMINATED};
        let mut out = HashSet::new();
        for (segment_ord, segment) in searcher.segment_readers().iter().enumerate() {
            let inverted = segment.inverted_index(term.field())?;
            let Some(mut postings) = inverted.read_postings(&term, IndexRecordOption::Basic)? else { continue };
            let mut doc = postings.doc();
            while doc != TERMINATED {
                if segment.alive_bitset().is_none_or(|alive| alive.is_alive(doc)) {
                    out.insert(DocAddress::new(segment_ord as u32, doc));
                }
                doc = postings.advance();
            }
        }
        Ok(out)
    }

    /// The nearest chunks, each with the key they are ranked by (the similarity times the
    /// chunk's prior; the candidate's score stays the plain similarity, as explain shows it).
    pub(super) fn dense_candidates(
        &self,
        searcher: &Searcher,
        vector: &[f32],
        depth: usize,
        params: &SearchParams,
        filter: &SearchFilter,
        internal_prior: f32,
    ) -> Result<Vec<(f32, Candidate)>> {
        // A filtered search looks further (the nearest chunks may be of another source), then
        // keeps what the filter admits.
        let search_k = params.dense_search_k;
        let (count, search_k) =
            if filter.is_empty() { (depth, search_k) } else { (depth * 4, search_k.saturating_mul(4)) };
        let nearest = {
            let rtxn = self.store.read_txn()?;
            self.store.nearest_chunks_of(&rtxn, params.dense_vectors, vector, count, search_k)?
        };
        let library_docs = match &filter.library_opt {
            Some(library) => Some(self.docs_with(searcher, Term::from_field_text(self.fields.library, library))?),
            None => None,
        };
        let mut found = Vec::with_capacity(nearest.len());
        for (chunk_id, similarity) in nearest.into_iter().filter(|&(_, s)| s >= DENSE_MIN_SIMILARITY) {
            // A vector whose chunk is gone (deleted since) simply has no doc.
            if let Some(address) = self.chunk_address(searcher, chunk_id)? {
                if library_docs.as_ref().is_none_or(|docs| docs.contains(&address)) {
                    found.push((address, similarity));
                }
            }
        }
        let addresses: Vec<DocAddress> = found.iter().map(|&(address, _)| address).collect();
        let flags = self.flags_of(searcher, &addresses)?;
        let mut candidates = Vec::with_capacity(found.len());
        for ((address, similarity), flags) in found.into_iter().zip(flags) {
            if !filter.admits_flags(flags) {
                continue;
            }
            // Tests and examples rank lower here too (the explain output keeps the plain
            // similarity as the score).
            let rank_key = similarity * flags_prior(flags, internal_prior);
            candidates.push((rank_key, Candidate { address, score: similarity, doc_opt: None, flags }));
        }
        candidates.sort_by(|a, b| b.0.total_cmp(&a.0));
        Ok(candidates)
    }
}

/// Turns ranked candidates into hits: at most `max_hits_per_file` per file, identical
/// texts once, with snippets. A file's n-th hit (n from 0) is placed as if ranked
/// `n * repeat_hit_delay` places lower, so the first places go to distinct files. Candidates
/// of several indexes carry their index in their address (see `across::untag`); their hits
/// name their repo.
pub(super) fn render(
    indexes: &[&RepoIndex],
    searchers: &[Searcher],
    ranked: Vec<RankedCandidate>,
    terms: &[String],
    analyzer: &mut TextAnalyzer,
    params: SearchParams,
    explain: bool,
) -> Result<Vec<SearchHit>> {
    let f = indexes[0].fields;
    let many = indexes.len() > 1;
    let query_terms: HashSet<&str> = terms.iter().map(String::as_str).collect();
    let mut snippets = Snippets::new(&query_terms, analyzer);
    let mut per_file: HashMap<(usize, String), usize> = HashMap::new();
    let mut seen_hashes: HashSet<String> = HashSet::new();
    // Repeat hits waiting for their place, sorted by place (ties in ranked order).
    let mut waiting: std::collections::VecDeque<(usize, SearchHit)> = std::collections::VecDeque::new();
    let mut hits = Vec::new();
    for (position, candidate) in ranked.into_iter().enumerate() {
        while hits.len() < params.limit && waiting.front().is_some_and(|(place, _)| *place <= position) {
            hits.extend(waiting.pop_front().map(|(_, hit)| hit));
        }
        if hits.len() >= params.limit {
            break;
        }
        let (at, address) = untag(candidate.address);
        let doc = match candidate.doc_opt {
            Some(doc) => doc,
            None => searchers[at].doc(address)?,
        };
        let text_of = |field: Field| doc.get_first(field).and_then(|v| v.as_str()).unwrap_or("").to_string();
        let path = text_of(f.path);
        // The same text twice (vendored copies, generated twins) is one answer.
        if !seen_hashes.insert(text_of(f.chunk_hash)) {
            continue;
        }
        let count = per_file.entry((at, path.clone())).or_default();
        if *count >= params.max_hits_per_file.max(1) {
            continue;
        }
        let place = position + *count * params.repeat_hit_delay;
        *count += 1;
        let body = text_of(f.body);
        let language = text_of(f.language);
        let heading = text_of(f.heading);
        let source = hit_source(&text_of(f.source));
        let is_web = source == HitSource::Web;
        let is_library = source == HitSource::Library;
        let hit = SearchHit {
            path,
            line_start: doc.get_first(f.line_start).and_then(|v| v.as_u64()).unwrap_or(0),
            line_end: doc.get_first(f.line_end).and_then(|v| v.as_u64()).unwrap_or(0),
            score: candidate.score,
            snippet: snippets.best(&body),
            heading_path: is_prose(&language).then(|| heading.clone()),
            page: doc.get_first(f.page).and_then(|v| v.as_u64()).map(|page| page as u32),
            heading,
            language,
            source,
            library: is_library.then(|| text_of(f.library)),
            version: is_library.then(|| text_of(f.library_version)),
            url: is_web.then(|| text_of(f.path)),
            title: is_web.then(|| text_of(f.title)),
            fetched_at: is_web.then(|| {
                crate::protocol::time::format_unix(doc.get_first(f.fetched_at).and_then(|v| v.as_u64()).unwrap_or(0))
            }),
            explain: explain.then_some(candidate.explain),
            chunk_id: doc.get_first(f.chunk_id).and_then(|v| v.as_u64()).map(|id| id as u32),
            repo: many.then(|| indexes[at].root.display().to_string()),
        };
        if place == position {
            hits.push(hit);
        } else {
            // After the waiting hits of an earlier or equal place: ties keep ranked order.
            let slot = waiting.partition_point(|(waiting_place, _)| *waiting_place <= place);
            waiting.insert(slot, (place, hit));
        }
    }
    // Fewer distinct files than the limit: the repeats fill the page in their order.
    hits.extend(waiting.into_iter().map(|(_, hit)| hit).take(params.limit.saturating_sub(hits.len())));
    Ok(hits)
}
