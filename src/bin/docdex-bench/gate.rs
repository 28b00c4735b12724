//! `docdexd eval-gate`: how well the waterfall's gate tells questions a repo answers from
//! questions it cannot, so `web_trigger_threshold` is chosen by measurement.
//!
//! The questions file has one `split<TAB>label<TAB>question` per line: `split` is `tune` or
//! `test` (choose on tune, report test once), `label` is `local` (the repo answers it) or
//! `web` (it does not). Escalating is the positive class: precision is the share of
//! escalations that were needed, recall the share of needed escalations made. Every mode the
//! repo supports is measured (dense and hybrid need its embeddings), at the configured
//! threshold and over a sweep, with the best tune-split threshold applied to the test split.

use std::path::Path;

use serde::Serialize;

use docdex::actors::tool_dispatcher::indexing::Status;
use docdex::actors::tool_dispatcher::search::Search;
use docdex::config::LoadedConfig;
use docdex::protocol::{DocdexError, Result, SearchMode, SearchRequest};

#[derive(Debug, Clone, PartialEq)]
pub struct GateQuestion {
    pub split: String,
    /// True when the repo cannot answer it (the gate should escalate).
    pub needs_web: bool,
    pub question: String,
}

pub fn parse_questions(text: &str) -> Result<Vec<GateQuestion>> {
    let mut questions = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = line.split('\t').collect();
        let [split, label, question] = fields[..] else {
            return Err(DocdexError::invalid(format!("line {}: expected split<TAB>label<TAB>question", n + 1)));
        };
        let needs_web = match label {
            "web" => true,
            "local" => false,
            other => return Err(DocdexError::invalid(format!("line {}: label `{other}` is not local or web", n + 1))),
        };
        questions.push(GateQuestion { split: split.to_string(), needs_web, question: question.to_string() });
    }
    Ok(questions)
}

/// Gate quality at one threshold.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct GateScore {
    pub threshold: f32,
    pub precision: f64,
    pub recall: f64,
    pub f1: f64,
    /// Share of all questions the gate decided right.
    pub accuracy: f64,
}

/// Scores `escalate = top_score < threshold` against the labels.
pub fn score(scores: &[(f32, bool)], threshold: f32) -> GateScore {
    let (mut tp, mut fp, mut fn_, mut right) = (0f64, 0f64, 0f64, 0f64);
    for &(top, needs_web) in scores {
        let escalate = top < threshold;
        match (escalate, needs_web) {
            (true, true) => tp += 1.0,
            (true, false) => fp += 1.0,
            (false, true) => fn_ += 1.0,
            (false, false) => {}
        }
        if escalate == needs_web {
            right += 1.0;
        }
    }
    let precision = if tp + fp > 0.0 { tp / (tp + fp) } else { 1.0 };
    let recall = if tp + fn_ > 0.0 { tp / (tp + fn_) } else { 1.0 };
    let f1 = if precision + recall > 0.0 { 2.0 * precision * recall / (precision + recall) } else { 0.0 };
    GateScore { threshold, precision, recall, f1, accuracy: right / scores.len().max(1) as f64 }
}

/// The sweep's best threshold by F1 (ties: the lower threshold, which escalates less).
pub fn best_threshold(scores: &[(f32, bool)]) -> GateScore {
    (5..=95)
        .map(|t| score(scores, t as f32 / 100.0))
        .fold(None::<GateScore>, |best, s| match best {
            Some(b) if b.f1 >= s.f1 => Some(b),
            _ => Some(s),
        })
        .expect("non-empty sweep")
}

#[derive(Debug, Serialize)]
struct ModeReport {
    mode: SearchMode,
    configured_tune: GateScore,
    configured_test: GateScore,
    best_tune: GateScore,
    best_on_test: GateScore,
    /// (question, label, top_score) of the test split.
    test_scores: Vec<(String, &'static str, f32)>,
}

pub async fn run(loaded: &LoadedConfig, repo: &Path, questions_path: &Path, json: bool) -> Result<i32> {
    let text = std::fs::read_to_string(questions_path)
        .map_err(|err| DocdexError::invalid(format!("cannot read {}: {err}", questions_path.display())))?;
    let questions = parse_questions(&text)?;
    let actors = docdex::actors::system::start_actors(loaded, None);
    let status = actors.dispatcher.send(Status(Some(repo.to_path_buf()))).await??;
    if !status.indexed {
        return Err(DocdexError::repo_not_indexed(&status.repo));
    }
    let mut modes = vec![SearchMode::Lexical];
    if status.embeddings.embedded > 0 && status.embeddings.model_available {
        modes.extend([SearchMode::Dense, SearchMode::Hybrid]);
    } else {
        eprintln!("note: the repo has no embeddings (run `docdexd index --wait`): lexical only");
    }
    let configured = loaded.config.search.web_trigger_threshold;
    let mut reports = Vec::new();
    for mode in modes {
        let mut tune = Vec::new();
        let mut test = Vec::new();
        let mut test_scores = Vec::new();
        for q in &questions {
            let request = SearchRequest {
                source_opt: None,
                lib_opt: None,
                repo_opt: Some(repo.to_path_buf()),
                query: q.question.clone(),
                limit: 10,
                mode_opt: Some(mode),
                explain: false,
            };
            let response = actors.dispatcher.send(Search(request)).await??;
            let entry = (response.top_score, q.needs_web);
            if q.split == "test" {
                test.push(entry);
                test_scores.push((q.question.clone(), if q.needs_web { "web" } else { "local" }, response.top_score));
            } else {
                tune.push(entry);
            }
        }
        let best_tune = best_threshold(&tune);
        reports.push(ModeReport {
            mode,
            configured_tune: score(&tune, configured),
            configured_test: score(&test, configured),
            best_tune,
            best_on_test: score(&test, best_tune.threshold),
            test_scores,
        });
    }
    if json {
        docdex::outln!("{}", serde_json::to_string_pretty(&reports)?);
        return Ok(0);
    }
    let line = |name: &str, s: &GateScore| {
        format!(
            "  {name:<26} threshold {:.2}: precision {:.2} recall {:.2} F1 {:.2} accuracy {:.2}\n",
            s.threshold, s.precision, s.recall, s.f1, s.accuracy
        )
    };
    let mut out = format!(
        "{} questions ({} tune, {} test); escalating to the web is the positive class\n",
        questions.len(),
        questions.iter().filter(|q| q.split != "test").count(),
        questions.iter().filter(|q| q.split == "test").count()
    );
    for r in &reports {
        out.push_str(&format!("{}:\n", r.mode.as_str()));
        out.push_str(&line("configured, tune split", &r.configured_tune));
        out.push_str(&line("configured, test split", &r.configured_test));
        out.push_str(&line("best on tune", &r.best_tune));
        out.push_str(&line("that threshold on test", &r.best_on_test));
    }
    let _ = docdex::cli::output::print_out(&out);
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn precision_and_recall_of_escalation() {
        let scores = [(0.9, false), (0.8, false), (0.5, false), (0.2, true), (0.6, true), (0.75, true)];
        let s = score(&scores, 0.7);
        // Escalated: 0.5 (wrong), 0.2, 0.6 (right); missed: 0.75.
        assert!((s.precision - 2.0 / 3.0).abs() < 1e-9);
        assert!((s.recall - 2.0 / 3.0).abs() < 1e-9);
        assert!((s.accuracy - 4.0 / 6.0).abs() < 1e-9);
        let parsed = parse_questions("# c\ntune\tweb\thow do I set up nginx\ntest\tlocal\tJoinSet abort\n").unwrap();
        assert_eq!(parsed.len(), 2);
        assert!(parsed[0].needs_web && !parsed[1].needs_web);
        assert!(parse_questions("tune\tmaybe\tq\n").is_err());
    }
}
