//! Ranking: a chunk's kind as flags stored with it (prose, secondary path, internal code,
//! library, web), the priors on its kind and path, confidence calibration, and the fusion
//! of the lexical and dense rankings by file (RRF). See docs/ranking.md for what each part
//! measured.

use std::collections::{HashMap, HashSet};

use tantivy::{DocAddress, TantivyDocument};

use super::concepts::ExpandedConcept;
use super::SearchParams;
use crate::code::test_files::is_test_file;
use crate::protocol::{HitExplain, RankedBy};

/// Prose (Markdown, text, web pages): ranked by plain BM25, without the coverage factor.
pub(super) const FLAG_PROSE: u64 = 1;

/// Tests, benches, examples, changelogs (see `path_prior`).
pub(super) const FLAG_SECONDARY: u64 = 4;

/// Code of a file without documented public items (see `ingest::FileSummary`).
pub(super) const FLAG_INTERNAL: u64 = 8;

/// A library's docs (`libs fetch`) and a fetched web page: where a chunk came from, read by
/// the dense filter without loading documents.
pub(super) const FLAG_LIBRARY: u64 = 16;

pub(super) const FLAG_WEB: u64 = 32;

/// Bits 8..24 of a chunk's flags: N of the innermost `vN` folder on its path (`zod/v3/`,
/// `pydantic/v1/`), 0 without one; bits 24..64: a hash of the folder that holds it, so that
/// sibling versions are recognised among a query's candidates (`older_versions`).
const VERSION_SHIFT: u32 = 8;
const VERSION_MASK: u64 = 0xFFFF;
const PARENT_SHIFT: u32 = 24;
/// The version bits of a chunk's flags: set on chunks in a `vN` folder.
pub(super) const VERSION_BITS: u64 = VERSION_MASK << VERSION_SHIFT;

/// Score multiplier for the chunks of an older version's folder when a newer sibling's
/// chunks answer too (`zod/v3/` beside `zod/v4/`): a library keeps its previous API for
/// compatibility, and a question means the current one unless it names the version.
pub(super) const OLDER_VERSION_PRIOR: f32 = 0.6;

/// The version bits of a path's flags (see `VERSION_SHIFT`).
fn version_flags(path: &str) -> u64 {
    let segments: Vec<&str> = path.split('/').collect();
    let Some((_, folders)) = segments.split_last() else { return 0 };
    for (i, segment) in folders.iter().enumerate().rev() {
        if let Some(version) = folder_version(segment) {
            // FNV-1a: stable across builds, as what is stored in an index must be.
            let parent = segments[..i].join("/");
            let hash =
                parent.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3));
            return (version.min(VERSION_MASK) << VERSION_SHIFT) | (hash << PARENT_SHIFT);
        }
    }
    0
}

/// N of a folder named `vN` (`v3`, `V12`).
fn folder_version(name: &str) -> Option<u64> {
    let digits = name.strip_prefix(['v', 'V'])?;
    if digits.is_empty() || digits.len() > 4 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok().filter(|&n| n > 0)
}

/// Set in memory, never stored, on a candidate in a version folder that the folder holding it
/// supersedes (`superseded_by`): read as an older version by `older_versions`.
pub(super) const FLAG_SUPERSEDED: u64 = 64;

/// For a file in a version folder (`pydantic/v1/fields.py`): the path of the same module in
/// the folder that holds it (`pydantic/fields.py`), and the paths it would have in the
/// neighbouring versions' folders (`pydantic/v0/…` is none, `pydantic/v2/fields.py`). A
/// library that moved its previous API into `v1/` keeps the current one where it was: when
/// the module exists there and no neighbouring version folder has it (`zod/src/v4/index.ts`
/// beside `v3/index.ts` is the current version, not a copy), the folder's copy is older.
pub(super) fn superseded_by(path: &str) -> Option<(String, Vec<String>)> {
    let segments: Vec<&str> = path.split('/').collect();
    let (_, folders) = segments.split_last()?;
    let at = folders.iter().rposition(|segment| folder_version(segment).is_some())?;
    let version = folder_version(segments[at])?;
    let holder = &segments[..at];
    let rest = segments[at + 1..].join("/");
    let joined = |middle: Option<String>| {
        holder
            .iter()
            .map(|s| s.to_string())
            .chain(middle)
            .chain(std::iter::once(rest.clone()))
            .collect::<Vec<_>>()
            .join("/")
    };
    // `v` or `V`, as the folder spells it.
    let prefix = &segments[at][..1];
    let neighbours = [version.checked_sub(1).filter(|&n| n > 0), Some(version + 1)]
        .into_iter()
        .flatten()
        .map(|n| joined(Some(format!("{prefix}{n}"))))
        .collect();
    Some((joined(None), neighbours))
}

/// The versions a query names (`v3` in "v3 compatibility errors"): their folders are meant.
pub(super) fn named_versions(query: &str) -> Vec<u64> {
    query.split(|c: char| !c.is_alphanumeric()).filter_map(folder_version).collect()
}

/// Which candidates (by their flags) lie in an older version's folder while a newer
/// sibling version also has candidates, the versions a query names left alone.
pub(super) fn older_versions(flags: &[u64], named: &[u64]) -> Vec<bool> {
    let version = |f: u64| (f >> VERSION_SHIFT) & VERSION_MASK;
    let parent = |f: u64| f >> PARENT_SHIFT;
    let mut newest: HashMap<u64, u64> = HashMap::new();
    for &f in flags.iter().filter(|&&f| version(f) > 0) {
        let entry = newest.entry(parent(f)).or_insert(0);
        *entry = (*entry).max(version(f));
    }
    flags
        .iter()
        .map(|&f| {
            version(f) > 0
                && (version(f) < newest[&parent(f)] || f & FLAG_SUPERSEDED != 0)
                && !named.contains(&version(f))
        })
        .collect()
}

/// A candidate's index rides in the high bits of its segment ordinal, so that the fusion and
/// the rendering, which key candidates by address, see distinct addresses across indexes.
/// An index has far fewer than 2^16 segments.
const INDEX_SHIFT: u32 = 16;

pub(super) fn tag(index: usize, address: DocAddress) -> DocAddress {
    DocAddress::new(address.segment_ord | ((index as u32) << INDEX_SHIFT), address.doc_id)
}

/// The index a (tagged) address belongs to, and the address within it.
pub(super) fn untag(address: DocAddress) -> (usize, DocAddress) {
    let index = (address.segment_ord >> INDEX_SHIFT) as usize;
    (index, DocAddress::new(address.segment_ord & ((1 << INDEX_SHIFT) - 1), address.doc_id))
}

pub(super) fn chunk_flags(path: &str, language: &str, internal: bool) -> u64 {
    let mut flags = 0;
    if internal {
        flags |= FLAG_INTERNAL;
    }
    if is_prose(language) {
        flags |= FLAG_PROSE;
    }
    // A test file by its language's conventions (`FooTest.java`, `Foo.Tests/`, `foo_spec.rb`)
    // is secondary as a `tests/` folder is: the same test files change impact names.
    if path_prior(path) < 1.0 || is_test_file(path, language) {
        flags |= FLAG_SECONDARY;
    }
    flags | version_flags(path)
}

/// Score multiplier for tests, benches and examples: they mention every API they exercise,
/// but the definition or the guide is usually the better answer.
pub(super) const SECONDARY_PATH_PRIOR: f32 = 0.6;

/// Score multiplier for the code of files that define no documented public item (runtime
/// plumbing, private helpers, vendored mocks): they share a question's words ("task",
/// "wait") with the API that answers it but are rarely the answer. Chosen on the tune splits
/// (0.6-0.8 measured alike; tokio paraphrases dense success@5 0.48 -> 0.60, hybrid 0.68 ->
/// 0.72; rich unchanged). Not applied to questions about how something works, whose answer
/// is that plumbing (`asks_how_it_works`; blind tokio behaviour tune split hybrid success@5
/// 0.60 -> 0.75).
pub(super) const INTERNAL_PRIOR: f32 = 0.75;

/// Multi-word queries favour code chunks that contain more of the words: code repeats its
/// identifiers so often that BM25 alone lets one frequent word (`runtime`) outweigh several
/// rarer ones. Prose is left to plain BM25, which measured better on it (Vaswani MAP 0.289
/// without the factor, 0.275 with it).
pub(super) const COVERAGE_EXPONENT: f32 = 1.0;

/// Dense neighbours less similar than this are unrelated text (MiniLM puts unrelated pairs
/// near 0): not hits.
pub const DENSE_MIN_SIMILARITY: f32 = 0.1;

/// Confidence calibration, chosen with `docdexd eval-gate` on the tune split of
/// `benches/gate-questions.tsv` (tokio: questions it answers vs questions it cannot) so that
/// the default `web_trigger_threshold` of 0.7 sits where each ranking separates them best:
/// a best BM25 score of about 23 (`1 - exp(-23 / 19) = 0.70`; with 10, the questions tokio
/// cannot answer scored 0.72-0.92 on common words and the gate missed 9 of 11 on the test
/// split) and a best cosine of about 0.44 (MiniLM puts unrelated questions at 0.18-0.41 and
/// answerable ones at 0.47-0.77). Hybrid takes the larger of the two, so identifier lookups,
/// which embed weakly (`RecvError`: cosine 0.39) but match strongly by name, stay local.
pub(super) const LEXICAL_CONFIDENCE_SCALE: f32 = 19.0;

pub(super) const DENSE_CONFIDENCE_SCALE: f32 = 0.365;

/// Candidates each ranking contributes: deep enough that collapsing per file and fusion
/// still fill the page, bounded so evaluation runs (limit 1000) do not load thousands of
/// extra docs.
pub fn candidate_depth(params: SearchParams) -> usize {
    params.limit + params.limit.min(50) * (params.max_hits_per_file.max(1) + 2) + 10
}

/// Maps an unbounded lexical score to 0–1: 0.41 at 10, 0.70 at 23, 0.88 at 40.
pub(super) fn lexical_confidence(score: f32) -> f32 {
    1.0 - (-score / LEXICAL_CONFIDENCE_SCALE).exp()
}

/// Maps a cosine similarity to 0–1: 0.39 at 0.18, 0.70 at 0.44, 0.88 at 0.77.
pub(super) fn dense_confidence(similarity: f32) -> f32 {
    1.0 - (-similarity.max(0.0) / DENSE_CONFIDENCE_SCALE).exp()
}

/// A chunk found by one ranking.
pub(super) struct Candidate {
    pub(super) address: DocAddress,
    pub(super) score: f32,
    /// Already loaded (lexical rescoring reads the doc), else loaded when rendered.
    pub(super) doc_opt: Option<TantivyDocument>,
    /// Its `FLAG_*` bits and version bits, as the ranking read them.
    pub(super) flags: u64,
}

/// A candidate in the final order, with how each ranking placed it.
pub(super) struct RankedCandidate {
    pub(super) address: DocAddress,
    pub(super) score: f32,
    pub(super) doc_opt: Option<TantivyDocument>,
    pub(super) explain: HitExplain,
}

#[derive(Clone, Copy)]
pub(super) enum Source {
    Lexical,
    Dense,
}

pub(super) fn with_ranks(candidates: Vec<Candidate>, source: Source) -> Vec<RankedCandidate> {
    candidates
        .into_iter()
        .enumerate()
        .map(|(i, c)| {
            let ranked_by = Some(RankedBy { rank: i + 1, score: c.score });
            let explain = match source {
                Source::Lexical => HitExplain { lexical: ranked_by, dense: None },
                Source::Dense => HitExplain { lexical: None, dense: ranked_by },
            };
            RankedCandidate { address: c.address, score: c.score, doc_opt: c.doc_opt, explain }
        })
        .collect()
}

/// Candidates in an older version's folder while a newer sibling's candidates answer too
/// (`older_versions`) go down: lexical scores and dense rank keys ×
/// `OLDER_VERSION_PRIOR`, each list sorted again.
pub(super) fn demote_older_versions(lexical: &mut [Candidate], dense: &mut [(f32, Candidate)], named: &[u64]) {
    let flags: Vec<u64> = lexical.iter().map(|c| c.flags).chain(dense.iter().map(|(_, c)| c.flags)).collect();
    let older = older_versions(&flags, named);
    if !older.contains(&true) {
        return;
    }
    let (lexical_older, dense_older) = older.split_at(lexical.len());
    for (candidate, _) in lexical.iter_mut().zip(lexical_older).filter(|(_, &older)| older) {
        candidate.score *= OLDER_VERSION_PRIOR;
    }
    for ((key, _), _) in dense.iter_mut().zip(dense_older).filter(|(_, &older)| older) {
        *key *= OLDER_VERSION_PRIOR;
    }
    lexical.sort_by(|a, b| b.score.total_cmp(&a.score));
    dense.sort_by(|a, b| b.0.total_cmp(&a.0));
}

/// Whether `name` is one identifier (letters, digits, `_`, `$`, not starting with a digit),
/// as definitions are named.
pub(super) fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_alphabetic() || c == '_' || c == '$')
        && chars.all(|c| c.is_alphanumeric() || c == '_' || c == '$')
}

/// The identifier a query names when the query is one, bare or qualified (`Router::route`,
/// `models.BaseModel`, `Router#route`): its last segment. Two characters at least: a
/// one-letter query names nothing in particular.
pub(super) fn named_identifier(query: &str) -> Option<&str> {
    let query = query.trim().trim_end_matches("()");
    if query.is_empty() || query.contains(char::is_whitespace) {
        return None;
    }
    let last = query.rsplit(['.', ':', '#', '/', '\\']).next()?;
    (is_identifier(last) && last.chars().count() >= 2).then_some(last)
}

/// The segment before the last of a qualified identifier query (`AsyncReadExt` for
/// `AsyncReadExt::read_exact`, `Flask` for `Flask.route`): the type or module that holds the
/// definition meant.
pub(super) fn named_qualifier(query: &str) -> Option<&str> {
    named_identifier(query)?;
    let query = query.trim().trim_end_matches("()");
    let mut segments = query.rsplit(['.', ':', '#', '/', '\\']).filter(|s| !s.is_empty());
    segments.next()?;
    segments.next().filter(|q| is_identifier(q))
}

/// Of the definitions of a qualified name (`definitions`, with `files` giving each one's
/// file and `qualifier_files` the files that define the qualifier), those in a file that also
/// defines the qualifier: `AsyncReadExt::read_exact` means the trait's method, not the
/// `read_exact` of another module. When no index searched holds one, all definitions stand
/// (`search_indexes` decides over every index, as one index of all of them would).
pub(super) fn held_definitions(definitions: &[DocAddress], files: &[u32], qualifier_files: &[u32]) -> Vec<DocAddress> {
    definitions.iter().zip(files).filter(|(_, f)| qualifier_files.contains(f)).map(|(&a, _)| a).collect()
}

/// How a file's name names an identifier (`named_after`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Title {
    /// All of it but its extension: `Router.java`, `from_request.rs`.
    Whole,
    /// Its first part: `MessagePackReader.Integers.cs` (one file of a C# partial type),
    /// `Router.jvm.kt` (Kotlin's platform half), `date-utils.d.ts` (declarations).
    First,
}

/// Whether the file at `path` is named after `identifier`: its name before the first `.`,
/// lower-cased without `_` and `-`, is the identifier so written (`application.rb` for
/// `Application`, `from_request.rs` for `FromRequest`, `Router.java` for `Router`); `Whole`
/// when that is all of its name but the extension.
pub(super) fn named_after(path: &str, identifier: &str) -> Option<Title> {
    let name = path.rsplit('/').next().unwrap_or(path);
    let stem = name.split('.').next().unwrap_or(name);
    let folded = |text: &str| -> String {
        text.chars().filter(|c| !matches!(c, '_' | '-')).flat_map(char::to_lowercase).collect()
    };
    if stem.is_empty() || folded(stem) != folded(identifier) {
        return None;
    }
    let without_extension = name.rsplit_once('.').map_or(name, |(before, _)| before);
    Some(if without_extension == stem { Title::Whole } else { Title::First })
}

/// Most definitions of a named identifier put first: a name defined in many places (every
/// module's `Error`) must not push everything else off the page.
pub(super) const MAX_PROMOTED_DEFINITIONS: usize = 5;

/// Puts the definitions of the identifier a query names first, at most
/// `MAX_PROMOTED_DEFINITIONS`: the code's before those in tests and examples (`secondary`),
/// and within each, those in a file named after it (`titled`) before the others (all of
/// the file's name before a first part of it: `MessagePackReader.cs` declares the type that
/// `MessagePackReader.Integers.cs` continues), each group
/// in the order their files have in the ranking (files it did not rank after those it did);
/// the rest keep their order. A query that is one identifier asks where that thing is
/// defined, and a file that uses it a hundred times outranks the definition on every other
/// signal. `ranked_files` and `definition_files` give each candidate's and each
/// definition's file.
pub(super) fn definitions_first(
    ranked: Vec<RankedCandidate>,
    ranked_files: &[u32],
    definitions: &[DocAddress],
    definition_files: &[u32],
    titled: &[(DocAddress, Title)],
    secondary: &[DocAddress],
) -> Vec<RankedCandidate> {
    if definitions.is_empty() {
        return ranked;
    }
    let file_place = |file: u32| ranked_files.iter().position(|&f| f == file).unwrap_or(usize::MAX);
    let mut chosen: Vec<(bool, u8, usize, usize, DocAddress)> = definitions
        .iter()
        .zip(definition_files)
        .map(|(&address, &file)| {
            let own_place = ranked.iter().position(|c| c.address == address).unwrap_or(usize::MAX);
            (secondary.contains(&address), title_rank(titled, address), file_place(file), own_place, address)
        })
        .collect();
    chosen.sort();
    chosen.truncate(MAX_PROMOTED_DEFINITIONS);
    let top_score = ranked.first().map_or(0.0, |c| c.score);
    let mut by_address: HashMap<DocAddress, RankedCandidate> = HashMap::new();
    let mut rest = Vec::with_capacity(ranked.len());
    for candidate in ranked {
        if chosen.iter().any(|(_, _, _, _, a)| *a == candidate.address) {
            by_address.insert(candidate.address, candidate);
        } else {
            // Past the cap, a definition keeps its place among the rest.
            rest.push(candidate);
        }
    }
    let mut first: Vec<RankedCandidate> = chosen
        .into_iter()
        .map(|(_, _, _, _, address)| {
            by_address.remove(&address).unwrap_or(RankedCandidate {
                address,
                score: top_score,
                doc_opt: None,
                explain: HitExplain::default(),
            })
        })
        .collect();
    first.extend(rest);
    first
}

/// Where a definition's file stands by its name: named after the identifier whole (0), by
/// its first part (1), not at all (2).
pub(super) fn title_rank(titled: &[(DocAddress, Title)], address: DocAddress) -> u8 {
    match titled.iter().find(|(a, _)| *a == address).map(|(_, title)| *title) {
        Some(Title::Whole) => 0,
        Some(Title::First) => 1,
        None => 2,
    }
}

/// Reciprocal Rank Fusion parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FusionParams {
    pub k: f32,
    pub lexical_weight: f32,
    pub dense_weight: f32,
}

impl Default for FusionParams {
    fn default() -> Self {
        FusionParams { k: 3.0, lexical_weight: 1.0, dense_weight: 1.0 }
    }
}

/// A file in the fusion: its fused score, and its place in the lexical and in the dense
/// order of files (MAX: not found there).
pub(super) struct FileRank {
    pub(super) score: f32,
    pub(super) places: [usize; 2],
}

/// One ranking's candidates, best first, with the file of each.
pub(super) struct Ranking {
    pub(super) candidates: Vec<Candidate>,
    pub(super) files: Vec<u32>,
    pub(super) weight: f32,
}

/// Hybrid fusion. Files are ranked by RRF over each ranking's order of files (a file's place
/// is where its first chunk appears): the two rankings often find different chunks of the
/// right file, which chunk-level RRF scores as two half-hits and ranks below a chunk both
/// found at middling ranks. Within a file, chunks keep their chunk-level RRF order; a file's
/// n-th chunk is placed `n * repeat_hit_delay` files later, as `render` does for one ranking.
/// A hit's score is its file's fused score. A file whose name names a share of the question's
/// words (`path_shares`) gains `params.path_match_weight` × that share of the best file's
/// score, as one ranking's candidates do (`across::raise_named_files`).
pub(super) fn fuse(
    lexical: Ranking,
    dense: Ranking,
    params: SearchParams,
    path_shares: &HashMap<u32, f32>,
) -> Vec<RankedCandidate> {
    let k = params.fusion.k;
    let mut by_address: HashMap<DocAddress, (RankedCandidate, u32)> = HashMap::new();
    let mut files: HashMap<u32, FileRank> = HashMap::new();
    for (source, ranking) in [(Source::Lexical, lexical), (Source::Dense, dense)] {
        let mut files_seen: HashSet<u32> = HashSet::new();
        for (i, (candidate, file)) in ranking.candidates.into_iter().zip(ranking.files).enumerate() {
            let rank = i + 1;
            if files_seen.insert(file) {
                let place = files_seen.len();
                let rank_of_file = files.entry(file).or_insert(FileRank { score: 0.0, places: [usize::MAX; 2] });
                rank_of_file.score += ranking.weight / (k + place as f32);
                rank_of_file.places[source as usize] = place;
            }
            let (entry, _) = by_address.entry(candidate.address).or_insert_with(|| {
                let ranked = RankedCandidate {
                    address: candidate.address,
                    score: 0.0,
                    doc_opt: None,
                    explain: HitExplain::default(),
                };
                (ranked, file)
            });
            entry.score += ranking.weight / (k + rank as f32);
            let ranked_by = Some(RankedBy { rank, score: candidate.score });
            match source {
                Source::Lexical => entry.explain.lexical = ranked_by,
                Source::Dense => entry.explain.dense = ranked_by,
            }
            if entry.doc_opt.is_none() {
                entry.doc_opt = candidate.doc_opt;
            }
        }
    }
    let best = files.values().map(|f| f.score).fold(0.0f32, f32::max);
    for (file, rank) in files.iter_mut() {
        if let Some(share) = path_shares.get(file) {
            rank.score += params.path_match_weight * share * best;
        }
    }
    // Best file first (of two equal, the one lexical search placed higher: its evidence is
    // the more exact); within a file, best chunk first.
    let mut chunks: Vec<(RankedCandidate, u32)> = by_address.into_values().collect();
    chunks.sort_by(|(a, file_a), (b, file_b)| {
        files[file_b]
            .score
            .total_cmp(&files[file_a].score)
            .then(files[file_a].places.cmp(&files[file_b].places))
            .then(b.score.total_cmp(&a.score))
            .then(a.address.cmp(&b.address))
    });
    let mut file_index: HashMap<u32, (usize, usize)> = HashMap::new();
    let mut placed: Vec<(usize, bool, RankedCandidate)> = Vec::with_capacity(chunks.len());
    for (mut candidate, file) in chunks {
        let files_so_far = file_index.len();
        let (index, count) = file_index.entry(file).or_insert((files_so_far, 0));
        let (index, nth) = (*index, *count);
        *count += 1;
        if nth < params.max_hits_per_file.max(1) {
            candidate.score = files[&file].score;
            placed.push((index + nth * params.repeat_hit_delay, nth == 0, candidate));
        }
    }
    // A repeat placed at a first hit's place goes before it, as in `render`.
    placed.sort_by_key(|&(place, first, _)| (place, first));
    placed.into_iter().map(|(_, _, candidate)| candidate).collect()
}

/// Words of a plain-words question that may name a file or its folder: three letters or
/// more, not a function word.
pub(super) fn path_keywords(query: &str) -> Vec<String> {
    const FUNCTION_WORDS: &[&str] = &[
        "the", "and", "for", "with", "how", "what", "does", "that", "this", "from", "into", "are", "was", "were",
        "when", "where", "which", "who", "why", "can", "not", "all", "any", "its", "has", "have", "there", "their",
        "then", "than", "they", "them", "but", "via", "onto", "over", "under", "about", "each", "other", "some",
        "should", "would", "could", "will", "you", "your", "our", "out", "one", "also", "more", "most",
    ];
    let mut words: Vec<String> = Vec::new();
    for word in query.split(|c: char| !c.is_alphanumeric()).map(str::to_lowercase) {
        if word.chars().count() >= 3 && !FUNCTION_WORDS.contains(&word.as_str()) && !words.contains(&word) {
            words.push(word);
        }
    }
    words
}

/// The lowercase parts of a file name without its extension, and of its folder's name
/// (`client_reqrep.py` in `aiohttp/` → client, reqrep and aiohttp; `ZodError.ts` → zod, error).
fn path_parts(path: &str) -> (Vec<String>, Vec<String>) {
    let mut components = path.rsplit('/');
    let file = components.next().unwrap_or("");
    let stem = file.rsplit_once('.').map_or(file, |(stem, _)| stem);
    let folder = components.next().unwrap_or("");
    (name_parts(stem), name_parts(folder))
}

/// A name's lowercase parts: `_`, `-`, other punctuation and case changes part it.
fn name_parts(name: &str) -> Vec<String> {
    let mut parts = Vec::new();
    for piece in name.split(|c: char| !c.is_alphanumeric()) {
        let mut current = String::new();
        let mut previous_lower = false;
        for c in piece.chars() {
            if c.is_uppercase() && previous_lower && !current.is_empty() {
                parts.push(std::mem::take(&mut current));
            }
            previous_lower = c.is_lowercase() || c.is_ascii_digit();
            current.extend(c.to_lowercase());
        }
        if !current.is_empty() {
            parts.push(current);
        }
    }
    parts
}

/// Whether a part of a file's name names `word`: equal, or a part of three letters or more
/// that begins it, or the word begins the part (`ser` for serialize, `persist` for
/// persistence); a plural part as its singular (`impls` for implementations, `utils` for
/// utility).
fn names(part: &str, word: &str) -> bool {
    let begins = |part: &str| {
        let (short, long) = if part.len() <= word.len() { (part, word) } else { (word, part) };
        short == long || (short.len() >= 3 && long.starts_with(short))
    };
    begins(part) || part.strip_suffix('s').is_some_and(|singular| singular.len() >= 3 && begins(singular))
}

/// How much more a file's name counts when the question names all of it: `Zip.swift` is where
/// "the zip operator for pairing emissions" is defined, `Zip+arity.swift` one of its variants.
/// (semble's tune half, replayed over each query's fused files: 0.876 → 0.881, six repos up
/// and none down, at 0.2; 0.5 moved more repos both ways.)
const WHOLE_NAME_RISE: f32 = 0.2;

/// The share of a question's `words` that a file's name or folder names, raised by
/// `WHOLE_NAME_RISE` when every part of the file's name names one of them (the file is named
/// after what the question asks, as `named_after` is for one identifier). A concept the
/// question called up (`concepts.txt`: "for a while" adds sleep, delay) names one word when
/// one of its terms is named (`time/sleep.rs` for "pause the task for a while"), as its
/// terms count for the question's words in the coverage rescoring.
pub(super) fn path_match(words: &[String], concepts: &[ExpandedConcept], path: &str) -> f32 {
    if words.is_empty() {
        return 0.0;
    }
    let (stem, folder) = path_parts(path);
    let named = |word: &String| stem.iter().chain(&folder).any(|part| names(part, word));
    let matched =
        words.iter().filter(|w| named(w)).count() + concepts.iter().filter(|c| c.terms.iter().any(named)).count();
    let share = (matched as f32 / words.len() as f32).min(1.0);
    let names_a_word = |part: &String| {
        words.iter().any(|word| names(part, word)) || concepts.iter().any(|c| c.terms.iter().any(|t| names(part, t)))
    };
    if share > 0.0 && !stem.is_empty() && stem.iter().all(names_a_word) {
        share * (1.0 + WHOLE_NAME_RISE)
    } else {
        share
    }
}

/// Documents and plain text, as opposed to code.
pub(crate) fn is_prose(language: &str) -> bool {
    crate::ingest::lang::PROSE_LANGUAGES.iter().any(|prose| prose.name() == language)
}

/// The path prior of a chunk from its flags.
pub(super) fn flags_prior(flags: u64, internal_prior: f32) -> f32 {
    let mut prior = 1.0;
    if flags & FLAG_SECONDARY != 0 {
        prior *= SECONDARY_PATH_PRIOR;
    }
    if flags & FLAG_INTERNAL != 0 {
        prior *= internal_prior;
    }
    prior
}

/// The weight of internal code for a question: none lost when it asks how something works.
pub(super) fn internal_prior_for(query_text: &str) -> f32 {
    if asks_how_it_works(query_text) {
        1.0
    } else {
        INTERNAL_PRIOR
    }
}

/// Whether a question asks how something works ("how does …", "what happens when …",
/// "why …", "can writers starve readers …") rather than for something to use ("how do I …",
/// "read a file", "can I …"): the answer to the first is often the internal code the other
/// kind should rank lower. 137 of the 145 such questions in `benches/` are recognised, and
/// none of the 238 others ("how can …" is a request, whoever the subject: "how can many
/// readers see the latest value").
pub fn asks_how_it_works(query_text: &str) -> bool {
    let words: Vec<String> = query_text
        .split(|c: char| !c.is_alphanumeric() && c != '\'')
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    let word = |i: usize| words.get(i).map(String::as_str).unwrap_or("");
    let asker = |w: &str| matches!(w, "i" | "you" | "we");
    let anywhere = (0..words.len()).any(|i| match word(i) {
        "how" => {
            matches!(word(i + 1), "does" | "do" | "is" | "are" | "did" | "was" | "were" | "often")
                && !asker(word(i + 2))
        }
        "what" => matches!(word(i + 1), "happens" | "decides" | "determines" | "causes"),
        "why" => true,
        _ => false,
    });
    anywhere
        || match word(0) {
            "is" | "are" | "does" | "do" | "can" | "could" | "will" | "would" | "did" => {
                !asker(word(1)) && word(1) != "there"
            }
            "when" | "where" => matches!(word(1), "does" | "do" | "is" | "are"),
            _ => false,
        }
}

/// How much a path's hits count: 1 for primary sources and docs, less for test code.
pub fn path_prior(path: &str) -> f32 {
    let lower = path.to_ascii_lowercase();
    let mut components = lower.split('/');
    let file = components.next_back().unwrap_or("");
    let secondary_dir = components.any(|c| {
        matches!(
            c,
            "tests"
                | "test"
                | "benches"
                | "bench"
                | "examples"
                | "testdata"
                | "fixtures"
                | "__tests__"
                | "spec"
                // Kept for old callers, not where the current API lives.
                | "deprecated"
                | "legacy"
        )
    });
    let stem = file.split('.').next().unwrap_or("");
    // Release notes name every item that ever changed, in the words of its change.
    let changelog = matches!(stem, "changelog" | "changes" | "history" | "news" | "releases" | "release-notes");
    // Licence texts share every question's plain words and answer none of them.
    let licence = stem.starts_with("license") || stem.starts_with("licence") || matches!(stem, "copying" | "notice");
    let secondary_file = changelog
        || licence
        || stem.starts_with("test_")
        || stem.ends_with("_test")
        || stem.ends_with("_tests")
        || file.contains(".test.")
        || file.contains(".spec.");
    if secondary_dir || secondary_file {
        SECONDARY_PATH_PRIOR
    } else {
        1.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A test that re-declares a name (TypeScript's module augmentation of `interface ZodType`,
    /// a mock class) does not answer where it is defined: of the definitions promoted, the
    /// code's go first, each in its file's place, and the test's after them.
    #[test]
    fn a_test_s_definition_of_a_named_identifier_goes_after_the_code_s() {
        let at = |n: u32| DocAddress::new(0, n);
        let candidate = |n: u32| RankedCandidate {
            address: at(n),
            score: 1.0 / (n + 1) as f32,
            doc_opt: None,
            explain: HitExplain::default(),
        };
        // Ranked: a code definition, the test's, a second code definition, a use.
        let ranked = || -> Vec<RankedCandidate> { (0..4).map(candidate).collect() };
        let order = |secondary: &[DocAddress]| -> Vec<u32> {
            definitions_first(ranked(), &[10, 11, 12, 13], &[at(0), at(1), at(2)], &[10, 11, 12], &[], secondary)
                .iter()
                .map(|c| c.address.doc_id)
                .collect()
        };
        assert_eq!(order(&[at(1)]), [0, 2, 1, 3]);
        // As the ranking has them when no definition is a test's.
        assert_eq!(order(&[]), [0, 1, 2, 3]);
        // A test's definition named after the identifier still goes after the code's.
        let titled_test = definitions_first(
            ranked(),
            &[10, 11, 12, 13],
            &[at(0), at(1)],
            &[10, 11],
            &[(at(1), Title::Whole)],
            &[at(1)],
        );
        assert_eq!(titled_test.iter().map(|c| c.address.doc_id).collect::<Vec<_>>(), [0, 1, 2, 3]);
    }

    /// A C# partial type is defined in every file that continues it: of the definitions, the
    /// one in the file named after it whole goes first, then the one in a file named by its
    /// first part, then the rest, whatever places the ranking gave their files.
    #[test]
    fn a_definition_in_the_file_named_after_it_whole_goes_first() {
        let at = |n: u32| DocAddress::new(0, n);
        let ranked: Vec<RankedCandidate> = (0..4)
            .map(|n| RankedCandidate {
                address: at(n),
                score: 1.0 / (n + 1) as f32,
                doc_opt: None,
                explain: HitExplain::default(),
            })
            .collect();
        // Ranked: `Reader.Ints.cs`'s definition, an untitled one, `Reader.cs`'s, a use.
        let titled = [(at(0), Title::First), (at(2), Title::Whole)];
        let order: Vec<u32> =
            definitions_first(ranked, &[10, 11, 12, 13], &[at(0), at(1), at(2)], &[10, 11, 12], &titled, &[])
                .iter()
                .map(|c| c.address.doc_id)
                .collect();
        assert_eq!(order, [2, 0, 1, 3]);
    }

    #[test]
    fn a_query_names_an_identifier_when_it_is_one() {
        assert_eq!(named_identifier("Serialize"), Some("Serialize"));
        assert_eq!(named_identifier(" axum::extract::FromRequest "), Some("FromRequest"));
        assert_eq!(named_identifier("pydantic.BaseModel"), Some("BaseModel"));
        assert_eq!(named_identifier("spawn_blocking()"), Some("spawn_blocking"));
        assert_eq!(named_identifier("how does spawn work"), None);
        assert_eq!(named_identifier("x"), None);
        assert_eq!(named_identifier("2fa"), None);
        assert!(is_identifier("$state") && !is_identifier("impl Serialize for T"));
    }

    #[test]
    fn an_older_version_folder_is_older_only_beside_a_newer_sibling() {
        let flags: Vec<u64> = [
            "packages/zod/src/v3/types.ts",
            "packages/zod/src/v4/core/schemas.ts",
            "packages/zod/src/v4/classic/schemas.ts",
            "api/v1/users.py",
            "src/lib.rs",
        ]
        .iter()
        .map(|p| chunk_flags(p, "typescript", false))
        .collect();
        assert_eq!(older_versions(&flags, &[]), vec![true, false, false, false, false]);
        // Named, it is what is asked for.
        assert_eq!(older_versions(&flags, &named_versions("v3 compatibility errors")), vec![false; 5]);
        // v1 alone has no newer sibling among the candidates.
        assert_eq!(older_versions(&flags[3..], &[]), vec![false, false]);
        assert_eq!(named_versions("zod v4 vs V3, not version2"), vec![4, 3]);
        assert_eq!(folder_version("v0"), None);
        // The other flags are untouched.
        assert_eq!(chunk_flags("pydantic/deprecated/json.py", "python", false) & FLAG_SECONDARY, FLAG_SECONDARY);
    }

    #[test]
    fn a_version_folder_is_superseded_by_the_same_module_in_the_folder_holding_it() {
        assert_eq!(
            superseded_by("pydantic/v1/fields.py"),
            Some(("pydantic/fields.py".to_string(), vec!["pydantic/v2/fields.py".to_string()]))
        );
        assert_eq!(
            superseded_by("packages/zod/src/v4/classic/errors.ts"),
            Some((
                "packages/zod/src/classic/errors.ts".to_string(),
                vec![
                    "packages/zod/src/v3/classic/errors.ts".to_string(),
                    "packages/zod/src/v5/classic/errors.ts".to_string()
                ]
            ))
        );
        // At the top, in no version folder, or a file named like one: nothing to supersede it.
        assert_eq!(
            superseded_by("V2/api.py"),
            Some(("api.py".to_string(), vec!["V1/api.py".to_string(), "V3/api.py".to_string()]))
        );
        assert_eq!(superseded_by("src/lib.rs"), None);
        assert_eq!(superseded_by("docs/v1"), None);
        // Marked, it is older without a newer sibling among the candidates, unless named.
        let flags = chunk_flags("pydantic/v1/fields.py", "python", false);
        assert_eq!(older_versions(&[flags], &[]), vec![false]);
        assert_eq!(older_versions(&[flags | FLAG_SUPERSEDED], &[]), vec![true]);
        assert_eq!(older_versions(&[flags | FLAG_SUPERSEDED], &named_versions("v1 validators")), vec![false]);
    }

    #[test]
    fn test_files_by_their_language_s_conventions_are_secondary() {
        let secondary = |path: &str, language: &str| chunk_flags(path, language, false) & FLAG_SECONDARY != 0;
        assert!(secondary("Src/Newtonsoft.Json.Tests/JsonConvertTest.cs", "csharp"));
        assert!(secondary("core/GsonTypesTest.java", "java"));
        assert!(secondary("lib/rack/request_spec.rb", "ruby"));
        assert!(secondary("lib/plug/conn_test.exs", "elixir"));
        assert!(!secondary("src/main/java/com/google/gson/Gson.java", "java"));
        assert!(!secondary("lib/rack/request.rb", "ruby"));
        assert!(!secondary("src/Newtonsoft.Json/JsonConvert.cs", "csharp"));
    }

    #[test]
    fn licence_texts_are_secondary() {
        for path in ["LICENSE", "LICENSE-APACHE", "sub/LICENSE.txt", "COPYING", "NOTICE", "LICENCE.md"] {
            assert_eq!(path_prior(path), SECONDARY_PATH_PRIOR, "{path}");
        }
        assert_eq!(path_prior("src/licensing.rs"), 1.0);
    }

    #[test]
    fn a_file_name_or_folder_names_a_share_of_a_question_s_words() {
        assert_eq!(path_keywords("how does the Runtime work, and why?"), vec!["runtime", "work"]);
        let share = |question: &str, path: &str| path_match(&path_keywords(question), &[], path);
        // A folder's name that begins a word (three letters at least) names it.
        assert_eq!(share("standard library type Serialize implementations", "serde_core/src/ser/mod.rs"), 0.2);
        assert_eq!(share("request tracing and observability hooks", "aiohttp/client_tracing.py"), 0.25);
        // A file named after the words whole counts `WHOLE_NAME_RISE` more.
        assert_eq!(
            share("request tracing and observability hooks", "aiohttp/tracing.py"),
            0.25 * (1.0 + WHOLE_NAME_RISE)
        );
        // Parts of a name: `_`, `-` and case changes part it; the extension does not count.
        assert_eq!(share("zod error types", "packages/zod/src/v3/ZodErrorMap.ts"), 2.0 / 3.0);
        assert_eq!(share("saving models to disk", "model2vec/persistence/persistence.py"), 0.0);
        assert_eq!(share("persist a model", "model2vec/persistence/persistence.py"), 0.5 * (1.0 + WHOLE_NAME_RISE));
        // Two letters are too few to begin a word: `de` does not name "decode".
        assert_eq!(share("decode input", "serde_core/src/de/mod.rs"), 0.0);
        // A plural part as its singular: `impls` names "implementations".
        assert_eq!(
            share("standard library type Serialize implementations", "src/impls.rs"),
            0.2 * (1.0 + WHOLE_NAME_RISE)
        );
        assert_eq!(share("", "src/lib.rs"), 0.0);
        // A concept's terms name the word that called it up.
        let words = path_keywords("pause the current task for a while");
        let sleep = [ExpandedConcept { terms: vec!["sleep".to_string(), "delay".to_string()], covers: Vec::new() }];
        assert_eq!(path_match(&words, &sleep, "src/time/sleep.rs"), 0.25 * (1.0 + WHOLE_NAME_RISE));
        assert_eq!(path_match(&words, &[], "src/time/sleep.rs"), 0.0);
    }

    #[test]
    fn a_file_named_after_the_question_s_words_whole_counts_more() {
        let share = |question: &str, path: &str| path_match(&path_keywords(question), &[], path);
        let question = "zip operator for pairing emissions from multiple observables";
        // Both name "zip" and their folder "observables"; only the first is named whole.
        let whole = share(question, "RxSwift/Observables/Zip.swift");
        let variant = share(question, "RxSwift/Observables/Zip+arity.swift");
        assert_eq!(variant, 2.0 / 6.0);
        assert_eq!(whole, variant * (1.0 + WHOLE_NAME_RISE));
        // Every part of the name: `ZodError.ts` for "zod error types", not `ZodErrorMap.ts`.
        assert!(share("zod error types", "src/ZodError.ts") > share("zod error types", "src/ZodErrorMap.ts"));
        // A folder named whole is not the file: `observables/index.ts` gains nothing more.
        assert_eq!(share("observables of events", "src/observables/index.ts"), 0.5);
        assert_eq!(share("how tasks run", "src/lib.rs"), 0.0);
    }
}
