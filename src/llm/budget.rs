//! The token budget of a grounded prompt: about 10% for the system prompt (instructions,
//! conversation, question), 20% for memory, 50% for repo, library and web evidence, 20% for
//! the answer. Priority is Memory > Repo > Library > Web: when the evidence share fills up,
//! or the whole prompt would not fit the context window, the lowest-priority snippets go
//! first (web, then library, then repo, then memory; the lowest-ranked first within a
//! kind), and every drop is reported with its source and size.

pub use crate::protocol::chat::{BudgetReport, Dropped, SnippetKind};

pub const SYSTEM_SHARE: f64 = 0.10;
pub const MEMORY_SHARE: f64 = 0.20;
pub const EVIDENCE_SHARE: f64 = 0.50;
pub const ANSWER_SHARE: f64 = 0.20;

/// Tokens a chat template adds around each message (role markers, separators); measured on
/// llama.cpp's templates at 4–6, rounded up.
pub const MESSAGE_OVERHEAD_TOKENS: usize = 8;

/// Token estimate when the server has no tokenizer endpoint (Ollama, most hosted-style
/// servers): one token per 3 characters, plus one. BPE vocabularies average about 4
/// characters per token on English and 3–3.5 on code, so this over-counts slightly, which
/// errs on the side of fitting the window.
pub fn estimate_tokens(text: &str) -> usize {
    text.chars().count().div_ceil(3) + 1
}

/// A candidate piece of context, already rendered and counted.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    pub kind: SnippetKind,
    /// `src/pool.rs:1-12`, `memory #3`, a URL: what the drop log and the sources name.
    pub label: String,
    pub text: String,
    pub tokens: usize,
}

impl Dropped {
    pub(crate) fn of(c: &Candidate, reason: String) -> Dropped {
        Dropped { kind: c.kind, label: c.label.clone(), tokens: c.tokens, reason }
    }
}

/// The outcome: indexes (into the candidates) of the kept snippets, in their given order.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub kept: Vec<usize>,
    pub report: BudgetReport,
}

fn share(window: usize, fraction: f64) -> usize {
    (window as f64 * fraction).floor() as usize
}

/// The answer's reserve: what was asked for, at most the answer share.
pub fn answer_tokens(window: usize, requested: usize) -> usize {
    requested.clamp(1, share(window, ANSWER_SHARE).max(1))
}

/// Plans the prompt. `system_tokens` is everything that always goes in (instructions,
/// conversation, question, message overheads); candidates come in rank order within each
/// kind. Fails when even the fixed part and the answer do not fit the window.
pub fn plan(
    window: usize,
    requested_answer: usize,
    system_tokens: usize,
    candidates: &[Candidate],
) -> Result<Plan, String> {
    let answer = answer_tokens(window, requested_answer);
    if system_tokens + answer > window {
        return Err(format!(
            "the question and conversation take {system_tokens} tokens; with {answer} for the answer that is over the model's {window}-token context window"
        ));
    }
    let available = window - answer - system_tokens;
    let memory_share = share(window, MEMORY_SHARE);
    let evidence_share = share(window, EVIDENCE_SHARE);
    // Each share is filled in priority order (memory within its own share; repo, then
    // library, then web within the evidence share), best-ranked first. A snippet that does
    // not fit is dropped and closes the share to every lower-priority kind, so a web snippet
    // never takes room a repo snippet was refused; smaller snippets of the same kind may
    // still fill the rest.
    let mut kept: Vec<usize> = Vec::new();
    let mut dropped: Vec<Dropped> = Vec::new();
    let mut memory_used = 0;
    let mut evidence_used = 0;
    let mut closed_below: Option<SnippetKind> = None;
    let mut order: Vec<usize> = (0..candidates.len()).collect();
    order.sort_by_key(|&i| (candidates[i].kind, i));
    for i in order {
        let c = &candidates[i];
        let (used, share, what) = if c.kind == SnippetKind::Memory {
            (&mut memory_used, memory_share, "memory")
        } else {
            (&mut evidence_used, evidence_share, "repo/library/web")
        };
        let closed = c.kind != SnippetKind::Memory && closed_below.is_some_and(|k| c.kind > k);
        if !closed && *used + c.tokens <= share {
            *used += c.tokens;
            kept.push(i);
            continue;
        }
        if c.kind != SnippetKind::Memory && closed_below.is_none() {
            closed_below = Some(c.kind);
        }
        let left = share.saturating_sub(*used);
        let reason = if closed {
            format!("the {what} share ({share} tokens) was closed: a higher-priority snippet did not fit")
        } else {
            format!("{} tokens, {left} left of the {what} share ({share} tokens)", c.tokens)
        };
        dropped.push(Dropped::of(c, reason));
    }
    // A long conversation can leave less than the shares: give way from the bottom.
    while memory_used + evidence_used > available {
        let victim_pos = kept
            .iter()
            .enumerate()
            .max_by_key(|(pos, &i)| (candidates[i].kind, *pos))
            .map(|(pos, _)| pos)
            .expect("something is kept while over budget");
        let c = &candidates[kept.remove(victim_pos)];
        if c.kind == SnippetKind::Memory {
            memory_used -= c.tokens;
        } else {
            evidence_used -= c.tokens;
        }
        dropped.push(Dropped::of(c, format!("over the context window ({available} tokens left for context)")));
    }
    kept.sort_unstable();
    Ok(Plan {
        kept,
        report: BudgetReport {
            context_window: window,
            token_count: String::new(),
            answer_tokens: answer,
            system_tokens,
            memory_share,
            evidence_share,
            memory_tokens: memory_used,
            evidence_tokens: evidence_used,
            dropped,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(kind: SnippetKind, label: &str, tokens: usize) -> Candidate {
        Candidate { kind, label: label.into(), text: String::new(), tokens }
    }

    #[test]
    fn everything_fits_a_roomy_window() {
        let cands = [c(SnippetKind::Memory, "m1", 50), c(SnippetKind::Repo, "r1", 200), c(SnippetKind::Web, "w1", 200)];
        let plan = plan(8192, 256, 100, &cands).unwrap();
        assert_eq!(plan.kept, vec![0, 1, 2]);
        assert!(plan.report.dropped.is_empty());
        assert_eq!(plan.report.answer_tokens, 256);
    }

    #[test]
    fn the_evidence_share_drops_web_before_repo() {
        // Window 1000: memory share 200, evidence share 500.
        let cands = [
            c(SnippetKind::Repo, "r1", 200),
            c(SnippetKind::Web, "w1", 200),
            c(SnippetKind::Repo, "r2", 200),
            c(SnippetKind::Web, "w2", 100),
            c(SnippetKind::Memory, "m1", 150),
        ];
        let plan = plan(1000, 100, 50, &cands).unwrap();
        let dropped: Vec<&str> = plan.report.dropped.iter().map(|d| d.label.as_str()).collect();
        // Repo first: r1 + r2 = 400; w1 (200) does not fit, the smaller w2 (100) does.
        assert_eq!(dropped, vec!["w1"]);
        assert_eq!(plan.kept, vec![0, 2, 3, 4]);
        assert_eq!(plan.report.evidence_tokens, 500);
        // A repo snippet that does not fit closes the share to the web, even small pages.
        let cands = [c(SnippetKind::Repo, "big", 600), c(SnippetKind::Repo, "r2", 100), c(SnippetKind::Web, "w1", 50)];
        let plan = super::plan(1000, 100, 50, &cands).unwrap();
        let dropped: Vec<&str> = plan.report.dropped.iter().map(|d| d.label.as_str()).collect();
        assert_eq!(dropped, vec!["big", "w1"]);
        assert_eq!(plan.kept, vec![1]);
        // Each reason says what did not fit in what was left.
        assert_eq!(plan.report.dropped[0].reason, "600 tokens, 500 left of the repo/library/web share (500 tokens)");
        assert!(plan.report.dropped[1].reason.contains("was closed"), "{:?}", plan.report.dropped[1]);
        // With no web left, the lowest-ranked repo snippet goes.
        let repo_only =
            [c(SnippetKind::Repo, "r1", 300), c(SnippetKind::Repo, "r2", 300), c(SnippetKind::Memory, "m1", 250)];
        let plan = super::plan(1000, 100, 50, &repo_only).unwrap();
        let dropped: Vec<&str> = plan.report.dropped.iter().map(|d| d.label.as_str()).collect();
        assert_eq!(dropped, vec!["m1", "r2"], "memory over its own share, repo over the evidence share");
    }

    #[test]
    fn an_overfull_window_gives_way_web_then_repo_then_memory() {
        // 1000 tokens, 200 for the answer, 500 of conversation: 300 left for context.
        let cands = [
            c(SnippetKind::Memory, "m1", 150),
            c(SnippetKind::Repo, "r1", 100),
            c(SnippetKind::Repo, "r2", 100),
            c(SnippetKind::Web, "w1", 100),
        ];
        let plan = plan(1000, 400, 500, &cands).unwrap();
        let dropped: Vec<&str> = plan.report.dropped.iter().map(|d| d.label.as_str()).collect();
        assert_eq!(dropped, vec!["w1", "r2"]);
        assert_eq!(plan.kept, vec![0, 1]);
        assert!(plan.report.dropped.iter().all(|d| d.reason.contains("context window")));
    }

    #[test]
    fn memory_goes_last_and_a_question_too_long_is_an_error() {
        let cands = [c(SnippetKind::Memory, "m1", 150), c(SnippetKind::Repo, "r1", 100)];
        let plan = plan(1000, 200, 600, &cands).unwrap();
        assert_eq!(plan.kept, vec![0]);
        assert!(plan_err(1000, 200, 900).contains("context window"));
    }

    fn plan_err(window: usize, answer: usize, system: usize) -> String {
        plan(window, answer, system, &[]).unwrap_err()
    }

    #[test]
    fn estimate_overcounts_plain_english() {
        let text = "The quick brown fox jumps over the lazy dog near the river bank.";
        assert!(estimate_tokens(text) >= 14);
        assert_eq!(estimate_tokens(""), 1);
    }
}
