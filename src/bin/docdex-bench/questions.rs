//! Retrieval quality on judged questions about a codebase: `docdexd bench --questions`.
//!
//! A question file holds `question<TAB>path[,path…][<TAB>kind]` lines: any listed path is a
//! right answer, `kind` says what sort of question it is (`plain`, `behaviour`,
//! `identifier`, …). Each file is one split, named by its file stem, so a tune and a test
//! half are passed as two files and reported apart. Every question is asked once per mode
//! over HTTP and scored on the first ten hits: success@5 (a right file among the first five
//! hits), MRR@10 (the reciprocal rank of the first right hit) and nDCG@10 (binary gain, a
//! file counted at its first hit, the ideal ranking puts every judged file first). Beside
//! docdex's modes, the whole-file BM25 yardstick (`file_bm25`, mode `file-bm25`) answers every
//! question too, so a set's difficulty can be compared with sets measured elsewhere.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use serde::Serialize;

use crate::file_bm25::FileBm25;
use docdex::protocol::{DocdexError, Result};

/// Hits requested per question.
const DEPTH: usize = 10;

#[derive(Debug, Clone, PartialEq)]
pub struct Question {
    pub split: String,
    pub text: String,
    pub expected: Vec<String>,
    pub kind: String,
}

/// Parses one question file; `split` names it in reports.
pub fn parse_questions(text: &str, split: &str) -> Result<Vec<Question>> {
    text.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .map(|line| {
            let mut fields = line.split('\t');
            let (Some(question), Some(paths)) = (fields.next(), fields.next()) else {
                return Err(DocdexError::invalid(format!(
                    "question line without a tab before the expected path: {line}"
                )));
            };
            let expected: Vec<String> =
                paths.split(',').map(str::trim).filter(|p| !p.is_empty()).map(String::from).collect();
            if expected.is_empty() {
                return Err(DocdexError::invalid(format!("question line without an expected path: {line}")));
            }
            let kind = fields.next().map(str::trim).filter(|k| !k.is_empty()).unwrap_or("all").to_string();
            Ok(Question { split: split.to_string(), text: question.trim().to_string(), expected, kind })
        })
        .collect()
}

/// Reads a question file; its stem is the split's name.
pub fn read_questions(path: &Path) -> Result<Vec<Question>> {
    let text = std::fs::read_to_string(path)
        .map_err(|err| DocdexError::invalid(format!("cannot read {}: {err}", path.display())))?;
    let split = path.file_stem().map(|s| s.to_string_lossy().to_string()).unwrap_or_else(|| "questions".into());
    parse_questions(&text, &split)
}

/// How one question fared in one mode.
#[derive(Debug, Clone, Serialize)]
pub struct Answer {
    /// 1-based rank of the first right hit within the first ten, if any.
    pub rank: Option<usize>,
    pub ndcg: f64,
    /// The first three hits' paths.
    pub top: Vec<String>,
}

/// Scores a ranked list of hit paths against the judged files.
pub fn score(paths: &[String], expected: &[String]) -> Answer {
    let relevant: HashSet<&str> = expected.iter().map(String::as_str).collect();
    let mut seen: HashSet<&str> = HashSet::new();
    let mut rank = None;
    let mut dcg = 0.0;
    for (i, path) in paths.iter().take(DEPTH).enumerate() {
        if relevant.contains(path.as_str()) && seen.insert(path.as_str()) {
            rank.get_or_insert(i + 1);
            dcg += 1.0 / ((i + 2) as f64).log2();
        }
    }
    let ideal: f64 = (0..relevant.len().min(DEPTH)).map(|i| 1.0 / ((i + 2) as f64).log2()).sum();
    Answer { rank, ndcg: if ideal > 0.0 { dcg / ideal } else { 0.0 }, top: paths.iter().take(3).cloned().collect() }
}

/// Means over a group of answers.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    pub split: String,
    pub mode: String,
    pub kind: String,
    pub questions: usize,
    pub success_at_5: f64,
    pub mrr_at_10: f64,
    pub ndcg_at_10: f64,
}

pub fn summarize<'a>(split: &str, mode: &str, kind: &str, answers: impl Iterator<Item = &'a Answer>) -> Summary {
    let (mut n, mut success, mut rr, mut ndcg) = (0usize, 0.0, 0.0, 0.0);
    for answer in answers {
        n += 1;
        if answer.rank.is_some_and(|r| r <= 5) {
            success += 1.0;
        }
        rr += answer.rank.map_or(0.0, |r| 1.0 / r as f64);
        ndcg += answer.ndcg;
    }
    let mean = |x: f64| if n == 0 { 0.0 } else { x / n as f64 };
    Summary {
        split: split.to_string(),
        mode: mode.to_string(),
        kind: kind.to_string(),
        questions: n,
        success_at_5: mean(success),
        mrr_at_10: mean(rr),
        ndcg_at_10: mean(ndcg),
    }
}

/// One question's outcome in every mode.
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    pub split: String,
    pub kind: String,
    pub question: String,
    pub expected: Vec<String>,
    /// Per mode, the rank of the first right hit (None: not in the first ten).
    pub ranks: BTreeMap<String, Option<usize>>,
    /// What the last mode (hybrid when measured) put first.
    pub top: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct QuestionsReport {
    /// Per split, mode and kind (`all` aggregates the kinds).
    pub summaries: Vec<Summary>,
    /// The questions missed (no right file in the top 5) by at least one mode.
    pub misses: Vec<Outcome>,
    /// Every question (JSON only): to compare two rankings question by question.
    pub questions: Vec<Outcome>,
}

/// The mode name of the whole-file BM25 yardstick (`file_bm25`).
pub const BASELINE_MODE: &str = "file-bm25";

/// Asks every question of the yardstick, then in every mode through `GET url` (the HTTP
/// search endpoint).
pub async fn run(
    client: &reqwest::Client,
    url: &str,
    baseline: &FileBm25,
    docdex_modes: &[&str],
    questions: &[Question],
) -> Result<QuestionsReport> {
    let mut modes = vec![BASELINE_MODE];
    modes.extend_from_slice(docdex_modes);
    // answers[mode][question]
    let mut answers: Vec<Vec<Answer>> =
        vec![questions.iter().map(|q| score(&baseline.search(&q.text, DEPTH), &q.expected)).collect()];
    for mode in docdex_modes {
        let mut per_mode = Vec::with_capacity(questions.len());
        for question in questions {
            let paths = search_paths(client, url, mode, &question.text).await?;
            per_mode.push(score(&paths, &question.expected));
        }
        answers.push(per_mode);
    }
    let mut splits: Vec<&str> = Vec::new();
    let mut kinds: Vec<&str> = Vec::new();
    for q in questions {
        if !splits.contains(&q.split.as_str()) {
            splits.push(&q.split);
        }
        if !kinds.contains(&q.kind.as_str()) {
            kinds.push(&q.kind);
        }
    }
    let mut summaries = Vec::new();
    for split in &splits {
        for (m, mode) in modes.iter().enumerate() {
            let in_split = |q: &&(usize, &Question)| q.1.split == *split;
            let all: Vec<(usize, &Question)> = questions.iter().enumerate().collect();
            summaries.push(summarize(split, mode, "all", all.iter().filter(in_split).map(|(i, _)| &answers[m][*i])));
            // Per kind, for the kinds this split has (`all` is the aggregate above).
            for kind in kinds.iter().filter(|k| **k != "all") {
                let of_kind: Vec<&Answer> = all
                    .iter()
                    .filter(in_split)
                    .filter(|(_, q)| q.kind == *kind)
                    .map(|(i, _)| &answers[m][*i])
                    .collect();
                if !of_kind.is_empty() {
                    summaries.push(summarize(split, mode, kind, of_kind.into_iter()));
                }
            }
        }
    }
    let outcomes: Vec<Outcome> = questions
        .iter()
        .enumerate()
        .map(|(i, q)| Outcome {
            split: q.split.clone(),
            kind: q.kind.clone(),
            question: q.text.clone(),
            expected: q.expected.clone(),
            ranks: modes.iter().zip(&answers).map(|(mode, per_mode)| (mode.to_string(), per_mode[i].rank)).collect(),
            top: answers.last().map(|per_mode| per_mode[i].top.clone()).unwrap_or_default(),
        })
        .collect();
    // A miss is docdex's: the yardstick misses too much to list.
    let misses = outcomes
        .iter()
        .filter(|o| o.ranks.iter().any(|(mode, rank)| mode != BASELINE_MODE && rank.is_none_or(|r| r > 5)))
        .cloned()
        .collect();
    Ok(QuestionsReport { summaries, misses, questions: outcomes })
}

async fn search_paths(client: &reqwest::Client, url: &str, mode: &str, question: &str) -> Result<Vec<String>> {
    let body: serde_json::Value = client
        .get(url)
        .query(&[("q", question), ("limit", &DEPTH.to_string()), ("mode", mode)])
        .send()
        .await
        .and_then(|r| r.error_for_status())
        .map_err(|err| DocdexError::internal(format!("bench request failed: {err}")))?
        .json()
        .await
        .map_err(|err| DocdexError::internal(format!("bench response unreadable: {err}")))?;
    Ok(body["hits"]
        .as_array()
        .map(|hits| hits.iter().filter_map(|h| h["path"].as_str().map(String::from)).collect())
        .unwrap_or_default())
}

/// The report as text: one table of means, then the misses.
pub fn print(report: &QuestionsReport) {
    docdex::outln!(
        "{:<28} {:<8} {:<11} {:>4} {:>9} {:>7} {:>8}",
        "split",
        "mode",
        "kind",
        "n",
        "success@5",
        "MRR@10",
        "nDCG@10"
    );
    for s in &report.summaries {
        docdex::outln!(
            "{:<28} {:<8} {:<11} {:>4} {:>9.3} {:>7.3} {:>8.3}",
            s.split,
            s.mode,
            s.kind,
            s.questions,
            s.success_at_5,
            s.mrr_at_10,
            s.ndcg_at_10
        );
    }
    if report.misses.is_empty() {
        return;
    }
    docdex::outln!("\nmissed at 5 by some mode (rank of the first right hit per mode, - = not in the top 10):");
    for miss in &report.misses {
        let ranks: Vec<String> = miss
            .ranks
            .iter()
            .map(|(mode, rank)| format!("{mode} {}", rank.map_or("-".to_string(), |r| r.to_string())))
            .collect();
        docdex::outln!("  [{} {}] {}  → {}", miss.split, miss.kind, miss.question, miss.expected.join(", "));
        docdex::outln!("      {}; first: {}", ranks.join(", "), miss.top.join(", "));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn question_files_parse_with_optional_kind() {
        let parsed = parse_questions("# c\nhow to x\tsrc/x.rs\n\nname y\ta.py, b.py\tidentifier\n", "tune").unwrap();
        assert_eq!(parsed.len(), 2);
        assert_eq!(parsed[0].expected, vec!["src/x.rs"]);
        assert_eq!(parsed[0].kind, "all");
        assert_eq!(parsed[1].expected, vec!["a.py", "b.py"]);
        assert_eq!(parsed[1].kind, "identifier");
        assert_eq!(parsed[1].split, "tune");
        assert!(parse_questions("no tab here", "s").is_err());
        assert!(parse_questions("q\t , ", "s").is_err());
    }

    #[test]
    fn metrics_count_a_file_once_and_normalise_by_the_judged_files() {
        let paths: Vec<String> = ["a", "b", "a", "c"].iter().map(|s| s.to_string()).collect();
        let one = score(&paths, &["b".to_string()]);
        assert_eq!(one.rank, Some(2));
        assert!((one.ndcg - 1.0 / 3f64.log2()).abs() < 1e-9);
        // Two judged files found at 1 and 4 (the repeat of `a` at 3 gains nothing).
        let two = score(&paths, &["a".to_string(), "c".to_string()]);
        assert_eq!(two.rank, Some(1));
        let ideal = 1.0 + 1.0 / 3f64.log2();
        assert!((two.ndcg - (1.0 + 1.0 / 5f64.log2()) / ideal).abs() < 1e-9);
        assert_eq!(score(&paths, &["z".to_string()]).rank, None);
        let s = summarize("t", "lexical", "all", [one, two].iter());
        assert_eq!(s.success_at_5, 1.0);
        assert!((s.mrr_at_10 - 0.75).abs() < 1e-9);
    }
}
