//! `docdexd eval`: retrieval quality on a TREC-style test collection.
//!
//! Reads a corpus (`<DOC><DOCNO>…</DOCNO>text</DOC>`), topics (`<top><num>…<title>…`) and
//! qrels (`qid 0 docid rel`), indexes the corpus through the normal pipeline into a throwaway
//! state dir (one file per document), runs every judged topic and reports MAP, nDCG@10,
//! Recall@100 and MRR@10 (the trec_eval definitions) with per-query latency percentiles.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::Serialize;

use crate::search::percentile;
use docdex::actors::embedder::{EmbedQuery, ProbeModel};
use docdex::config::LoadedConfig;
use docdex::index::{FusionParams, SearchParams};
use docdex::protocol::{DocdexError, Result, SearchMode};

/// Ranks scored per query (TREC's customary depth).
const RUN_DEPTH: usize = 1000;

#[derive(Debug, Clone, PartialEq)]
pub struct TrecDoc {
    pub docno: String,
    pub text: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Topic {
    pub id: String,
    pub title: String,
}

/// qid → docno → relevance grade.
pub type Qrels = HashMap<String, HashMap<String, u32>>;

fn between<'a>(text: &'a str, open: &str, close: &str) -> Option<&'a str> {
    let start = text.find(open)? + open.len();
    let end = text[start..].find(close)? + start;
    Some(&text[start..end])
}

/// Parses `<DOC>` records; text outside `<DOCNO>` (and inside an optional `<TEXT>`) is the body.
pub fn parse_corpus(text: &str) -> Vec<TrecDoc> {
    text.split("<DOC>")
        .skip(1)
        .filter_map(|record| {
            let record = record.split("</DOC>").next()?;
            let docno = between(record, "<DOCNO>", "</DOCNO>")?.trim().to_string();
            let body = match between(record, "<TEXT>", "</TEXT>") {
                Some(body) => body.to_string(),
                None => record.split("</DOCNO>").nth(1).unwrap_or("").to_string(),
            };
            Some(TrecDoc { docno, text: body.trim().to_string() })
        })
        .collect()
}

/// Parses `<top>` records with `<num>` and `<title>` (closing tags optional, as in old TREC).
pub fn parse_topics(text: &str) -> Vec<Topic> {
    text.split("<top>")
        .skip(1)
        .filter_map(|record| {
            let record = record.split("</top>").next()?;
            let after_num = &record[record.find("<num>")? + 5..];
            let id_text = after_num.split('<').next()?.trim();
            let id = id_text.trim_start_matches("Number:").trim().to_string();
            let after_title = &record[record.find("<title>")? + 7..];
            let title = after_title.split('<').next()?.split_whitespace().collect::<Vec<_>>().join(" ");
            (!id.is_empty() && !title.is_empty()).then_some(Topic { id, title })
        })
        .collect()
}

pub fn parse_qrels(text: &str) -> Qrels {
    let mut qrels = Qrels::new();
    for line in text.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if let [qid, _, docno, rel] = fields[..] {
            if let Ok(rel) = rel.parse::<i64>() {
                qrels.entry(qid.to_string()).or_default().insert(docno.to_string(), rel.max(0) as u32);
            }
        }
    }
    qrels
}

/// Per-query scores.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct QueryMetrics {
    pub average_precision: f64,
    pub ndcg_at_10: f64,
    pub recall_at_100: f64,
    pub reciprocal_rank_at_10: f64,
}

/// Scores one ranked list against its judgments.
pub fn score_run(ranked: &[String], judged: &HashMap<String, u32>) -> QueryMetrics {
    let relevant = judged.values().filter(|&&r| r > 0).count();
    if relevant == 0 {
        return QueryMetrics::default();
    }
    let mut hits = 0usize;
    let mut precision_sum = 0.0;
    let mut dcg = 0.0;
    let mut rr = 0.0;
    let mut seen = HashSet::new();
    for (i, docno) in ranked.iter().enumerate() {
        if !seen.insert(docno) {
            continue;
        }
        let grade = judged.get(docno).copied().unwrap_or(0);
        if grade == 0 {
            continue;
        }
        hits += 1;
        precision_sum += hits as f64 / (i + 1) as f64;
        if i < 10 {
            dcg += f64::from(grade) / ((i + 2) as f64).log2();
            if rr == 0.0 {
                rr = 1.0 / (i + 1) as f64;
            }
        }
    }
    let recall_hits = ranked.iter().take(100).filter(|d| judged.get(*d).copied().unwrap_or(0) > 0).count();
    let mut ideal: Vec<u32> = judged.values().copied().filter(|&r| r > 0).collect();
    ideal.sort_unstable_by(|a, b| b.cmp(a));
    let idcg: f64 = ideal.iter().take(10).enumerate().map(|(i, &g)| f64::from(g) / ((i + 2) as f64).log2()).sum();
    QueryMetrics {
        average_precision: precision_sum / relevant as f64,
        ndcg_at_10: if idcg > 0.0 { dcg / idcg } else { 0.0 },
        recall_at_100: recall_hits as f64 / relevant as f64,
        reciprocal_rank_at_10: rr,
    }
}

/// One line of the report.
#[derive(Debug, Clone, Serialize)]
pub struct ModeReport {
    pub mode: String,
    pub queries: usize,
    pub map: f64,
    pub ndcg_at_10: f64,
    pub recall_at_100: f64,
    pub mrr_at_10: f64,
    pub latency_p50_ms: f64,
    pub latency_p95_ms: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct EvalReport {
    pub dataset: String,
    pub documents: usize,
    pub topics: usize,
    pub index_seconds: f64,
    /// Time to embed the corpus (absent when no dense mode ran).
    pub embedding_seconds: Option<f64>,
    pub embedded_chunks: u64,
    /// Modes skipped and why.
    pub notes: Vec<String>,
    pub modes: Vec<ModeReport>,
    /// With `--sweep-fusion`: hybrid under several RRF settings, best MAP first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sweep: Vec<ModeReport>,
}

/// The collection's files: corpus documents, topics and qrels, found by content and name.
struct Dataset {
    corpus: Vec<PathBuf>,
    topics: PathBuf,
    qrels: PathBuf,
}

fn locate(dir: &Path) -> Result<Dataset> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let entries = std::fs::read_dir(&d).map_err(|err| {
            DocdexError::invalid(format!("cannot read dataset folder {}: {err}", d.display()))
                .with_hint("pass a folder with a TREC corpus, topics and qrels, e.g. --dataset data/vaswani")
        })?;
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                files.push(path);
            }
        }
    }
    files.sort();
    let name = |p: &PathBuf| p.file_name().map(|n| n.to_string_lossy().to_lowercase()).unwrap_or_default();
    let qrels = files.iter().find(|p| name(p).contains("qrel")).cloned();
    let mut topics = None;
    let mut corpus = Vec::new();
    for path in &files {
        if Some(path) == qrels.as_ref() || name(path).contains("readme") {
            continue;
        }
        let head: String = std::fs::read_to_string(path).unwrap_or_default().chars().take(4096).collect();
        if head.contains("<top>") {
            topics = Some(path.clone());
        } else if head.contains("<DOC>") {
            corpus.push(path.clone());
        }
    }
    match (topics, qrels, corpus.is_empty()) {
        (Some(topics), Some(qrels), false) => Ok(Dataset { corpus, topics, qrels }),
        _ => Err(DocdexError::invalid(format!("{} is not a TREC collection", dir.display()))
            .with_hint("it needs <DOC> corpus files, a topics file with <top> records and a qrels file")),
    }
}

pub async fn run(
    loaded: &LoadedConfig,
    dataset_dir: &Path,
    mode_opt: Option<SearchMode>,
    sweep_fusion: bool,
    json: bool,
) -> Result<i32> {
    let dataset = locate(dataset_dir)?;
    let mut docs = Vec::new();
    for path in &dataset.corpus {
        docs.extend(parse_corpus(&std::fs::read_to_string(path)?));
    }
    let topics = parse_topics(&std::fs::read_to_string(&dataset.topics)?);
    let qrels = parse_qrels(&std::fs::read_to_string(&dataset.qrels)?);
    let judged: Vec<&Topic> =
        topics.iter().filter(|t| qrels.get(&t.id).is_some_and(|j| j.values().any(|&r| r > 0))).collect();
    if judged.is_empty() {
        return Err(
            DocdexError::invalid("no topic has relevance judgments").with_hint("check that topic ids match the qrels")
        );
    }

    // The corpus becomes a throwaway repo, one file per document, indexed as plain text.
    let scratch = tempfile::tempdir()?;
    let repo = scratch.path().join("corpus");
    std::fs::create_dir_all(&repo)?;
    let mut file_names = HashSet::new();
    for doc in &docs {
        let file = safe_file_name(&doc.docno);
        if !file_names.insert(file.clone()) {
            return Err(DocdexError::invalid(format!("duplicate DOCNO {}", doc.docno)));
        }
        std::fs::write(repo.join(format!("{file}.txt")), &doc.text)?;
    }
    let docno_of: HashMap<String, String> =
        docs.iter().map(|d| (format!("{}.txt", safe_file_name(&d.docno)), d.docno.clone())).collect();
    let mut eval_config = loaded.clone();
    eval_config.config.core.global_state_dir = Some(scratch.path().join("state"));
    let actors = docdex::actors::system::start_actors(&eval_config, None);
    eprintln!("indexing {} documents from {}", docs.len(), dataset_dir.display());
    let summary = docdex::cli::progress::index_with_progress(&actors, repo.clone()).await?;
    let handle = actors
        .repo_manager
        .send(docdex::actors::repo_manager::OpenRepo { path: repo.clone(), create: false })
        .await??;

    let wanted: Vec<SearchMode> = match mode_opt {
        Some(mode) => vec![mode],
        None => vec![SearchMode::Lexical, SearchMode::Dense, SearchMode::Hybrid],
    };
    let mut notes = Vec::new();
    let mut embedding_seconds_opt = None;
    let mut embedded_chunks = 0;
    let needs_vectors = wanted.iter().any(|m| *m != SearchMode::Lexical);
    let model_ok = if needs_vectors {
        let probe = actors.embedder.send(ProbeModel).await?;
        if !probe.available {
            notes.push(format!("dense and hybrid skipped: {}", probe.detail));
        }
        probe.available
    } else {
        false
    };
    if model_ok {
        eprintln!("embedding {} chunks (this is the slow part on a CPU)", summary.chunks_total);
        let embedded = docdex::cli::progress::embed_with_progress(&actors, repo.clone()).await?;
        embedding_seconds_opt = Some(embedded.seconds);
        embedded_chunks = embedded.embedded;
    }
    let search = &loaded.config.search;
    let params = SearchParams {
        limit: RUN_DEPTH,
        max_hits_per_file: 1,
        fusion: FusionParams {
            k: search.fusion_k,
            lexical_weight: search.rrf_lexical_weight,
            dense_weight: search.rrf_dense_weight,
        },
        dense_search_k: 0,
        concept_weight: search.lexical_concept_weight(),
        repeat_hit_delay: 0,
        definitions_first: search.definitions_first,
        path_match_weight: search.path_match_weight,
        file_evidence_weight: search.file_evidence_weight,
        dense_vectors: Default::default(),
    };
    let run_mode = |mode: SearchMode, params: SearchParams| {
        let actors = &actors;
        let handle = &handle;
        let judged = &judged;
        let qrels = &qrels;
        let docno_of = &docno_of;
        async move {
            let mut latencies = Vec::with_capacity(judged.len());
            let mut total = QueryMetrics::default();
            for topic in judged {
                let started = Instant::now();
                // Query embedding is part of the measured latency, as it is for a user.
                let vector_opt = if mode == SearchMode::Lexical {
                    None
                } else {
                    Some(
                        actors
                            .embedder
                            .send(EmbedQuery::model(docdex::index::concepts::embedding_query(search, &topic.title)))
                            .await??,
                    )
                };
                let vector = vector_opt.as_deref().map(|v| v.as_slice());
                let outcome = handle.index.search_with(&topic.title, vector, mode, params, false)?;
                latencies.push(started.elapsed().as_secs_f64() * 1000.0);
                let ranked: Vec<String> = outcome.hits.iter().filter_map(|h| docno_of.get(&h.path).cloned()).collect();
                let m = score_run(&ranked, &qrels[&topic.id]);
                total.average_precision += m.average_precision;
                total.ndcg_at_10 += m.ndcg_at_10;
                total.recall_at_100 += m.recall_at_100;
                total.reciprocal_rank_at_10 += m.reciprocal_rank_at_10;
            }
            latencies.sort_by(f64::total_cmp);
            let n = judged.len() as f64;
            Ok::<_, DocdexError>(ModeReport {
                mode: mode.as_str().to_string(),
                queries: judged.len(),
                map: total.average_precision / n,
                ndcg_at_10: total.ndcg_at_10 / n,
                recall_at_100: total.recall_at_100 / n,
                mrr_at_10: total.reciprocal_rank_at_10 / n,
                latency_p50_ms: percentile(&latencies, 0.5),
                latency_p95_ms: percentile(&latencies, 0.95),
            })
        }
    };
    let mut modes = Vec::new();
    for mode in wanted {
        if mode != SearchMode::Lexical && !model_ok {
            continue;
        }
        modes.push(run_mode(mode, params).await?);
    }
    // Fusion settings measured side by side (query vectors are cached after the first pass).
    let mut sweep = Vec::new();
    if sweep_fusion && model_ok {
        for k in [2.0, 3.0, 5.0, 10.0, 20.0] {
            for dense_weight in [0.5, 0.75, 1.0, 1.5, 2.0] {
                let fusion = FusionParams { k, lexical_weight: 1.0, dense_weight };
                let mut report = run_mode(SearchMode::Hybrid, SearchParams { fusion, ..params }).await?;
                report.mode = format!("hybrid k={k} dense×{dense_weight}");
                sweep.push(report);
            }
        }
        sweep.sort_by(|a, b| b.map.total_cmp(&a.map));
    }
    let report = EvalReport {
        dataset: dataset_dir.display().to_string(),
        documents: docs.len(),
        topics: judged.len(),
        index_seconds: summary.seconds,
        embedding_seconds: embedding_seconds_opt,
        embedded_chunks,
        notes,
        modes,
        sweep,
    };
    if json {
        docdex::outln!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        docdex::outln!(
            "dataset {}: {} documents, {} judged topics, indexed in {:.1} s",
            report.dataset,
            report.documents,
            report.topics,
            report.index_seconds
        );
        if let Some(seconds) = report.embedding_seconds {
            docdex::outln!(
                "embedded {} chunks in {seconds:.1} s ({:.1} chunks/s)",
                report.embedded_chunks,
                report.embedded_chunks as f64 / seconds.max(1e-9)
            );
        }
        for note in &report.notes {
            docdex::outln!("note: {note}");
        }
        docdex::outln!(
            "{:<8} {:>7} {:>8} {:>11} {:>7} {:>8} {:>8}",
            "mode",
            "MAP",
            "nDCG@10",
            "Recall@100",
            "MRR@10",
            "p50 ms",
            "p95 ms"
        );
        for m in report.modes.iter().chain(&report.sweep) {
            docdex::outln!(
                "{:<8} {:>7.4} {:>8.4} {:>11.4} {:>7.4} {:>8.2} {:>8.2}",
                m.mode,
                m.map,
                m.ndcg_at_10,
                m.recall_at_100,
                m.mrr_at_10,
                m.latency_p50_ms,
                m.latency_p95_ms
            );
        }
    }
    actors.repo_manager.send(docdex::actors::repo_manager::CloseAll).await?;
    Ok(0)
}

fn safe_file_name(docno: &str) -> String {
    docno.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_trec_files() {
        let corpus = parse_corpus(
            "<DOC>\n<DOCNO>7</DOCNO>\nfirst doc\n</DOC>\n<DOC><DOCNO> d2 </DOCNO><TEXT>\nsecond</TEXT></DOC>",
        );
        assert_eq!(
            corpus,
            vec![
                TrecDoc { docno: "7".into(), text: "first doc".into() },
                TrecDoc { docno: "d2".into(), text: "second".into() }
            ]
        );
        let topics = parse_topics("<top>\n<num>1</num><title>\nMEASUREMENT OF\n LIQUIDS\n</title>\n</top>\n<top><num> Number: 2\n<title> old style\n<desc> x\n</top>");
        assert_eq!(
            topics,
            vec![
                Topic { id: "1".into(), title: "MEASUREMENT OF LIQUIDS".into() },
                Topic { id: "2".into(), title: "old style".into() }
            ]
        );
        let qrels = parse_qrels("1 0 1239 1\n1 0 44 0\nbad line\n");
        assert_eq!(qrels["1"]["1239"], 1);
        assert_eq!(qrels["1"]["44"], 0);
    }

    #[test]
    fn metrics_follow_trec_eval() {
        let judged: HashMap<String, u32> =
            [("a", 1), ("b", 1), ("c", 0)].iter().map(|(d, r)| (d.to_string(), *r)).collect();
        let ranked: Vec<String> = ["x", "a", "c", "b"].iter().map(|s| s.to_string()).collect();
        let m = score_run(&ranked, &judged);
        // AP = (1/2 + 2/4) / 2
        assert!((m.average_precision - 0.5).abs() < 1e-9);
        assert!((m.reciprocal_rank_at_10 - 0.5).abs() < 1e-9);
        assert!((m.recall_at_100 - 1.0).abs() < 1e-9);
        let dcg = 1.0 / 3f64.log2() + 1.0 / 5f64.log2();
        let idcg = 1.0 + 1.0 / 3f64.log2();
        assert!((m.ndcg_at_10 - dcg / idcg).abs() < 1e-9);
        assert_eq!(score_run(&ranked, &HashMap::new()), QueryMetrics::default());
    }
}
