//! `bench-chat`: chat's context assembly, time to first token and total latency.

use std::path::PathBuf;

use docdex::cli::chat::ask;
use docdex::config::LoadedConfig;
use docdex::daemon::client::Backend;
use docdex::llm::ChatMessage;
use docdex::protocol::{ChatRequest, Result};

/// `bench-chat`: time to first token and total latency for a short question, with context
/// assembly separated from generation; the first run is cold (model loads, caches empty),
/// the rest warm.
pub async fn run_bench_chat(
    loaded: &LoadedConfig,
    repo: PathBuf,
    question: String,
    runs: usize,
    max_tokens: usize,
    json: bool,
) -> Result<i32> {
    // In this process: the benchmark measures docdex's own work, not a daemon's queue.
    let backend = Backend::Local(docdex::actors::system::start_actors(loaded, None));
    let mut rows = Vec::new();
    for run in 0..runs.max(2) {
        let request = ChatRequest {
            repo_opt: Some(repo.clone()),
            messages: vec![ChatMessage::new("user", question.clone())],
            model_opt: None,
            max_tokens_opt: Some(max_tokens),
            temperature_opt: Some(0.0),
            force_web: false,
            diff_opt: None,
        };
        let answer = ask(&backend, request, |_| Ok(())).await?;
        let first = answer.first_token_ms.unwrap_or(answer.total_ms);
        rows.push(serde_json::json!({
            "run": run + 1,
            "cold": run == 0,
            "assembly_ms": answer.context.assembly_ms,
            "first_token_ms": first,
            "generation_first_token_ms": first - answer.context.assembly_ms,
            "total_ms": answer.total_ms,
            "completion_tokens": answer.usage_opt.map(|u| u.completion_tokens),
            "prompt_tokens": answer.usage_opt.map(|u| u.prompt_tokens),
            "context_window": answer.context.budget.context_window,
        }));
    }
    backend.close().await?;
    let median = |key: &str| {
        let mut values: Vec<f64> = rows[1..].iter().filter_map(|r| r[key].as_f64()).collect();
        values.sort_by(f64::total_cmp);
        values.get(values.len() / 2).copied().unwrap_or(0.0)
    };
    let summary = serde_json::json!({
        "question": question,
        "max_tokens": max_tokens,
        "context_window": rows[0]["context_window"],
        "model": loaded.config.llm.default_model,
        "provider": loaded.config.llm.provider,
        "cold": rows[0],
        "warm_median": {
            "assembly_ms": median("assembly_ms"),
            "first_token_ms": median("first_token_ms"),
            "generation_first_token_ms": median("generation_first_token_ms"),
            "total_ms": median("total_ms"),
        },
        "runs": rows,
    });
    if json {
        docdex::cli::output::print_out(&format!("{}\n", serde_json::to_string_pretty(&summary)?))?;
    } else {
        let line = |label: &str, v: &serde_json::Value| {
            format!(
                "{label:<12} assembly {:>8.1} ms   first token {:>8.1} ms (generation {:>8.1} ms)   total {:>8.1} ms\n",
                v["assembly_ms"].as_f64().unwrap_or(0.0),
                v["first_token_ms"].as_f64().unwrap_or(0.0),
                v["generation_first_token_ms"].as_f64().unwrap_or(0.0),
                v["total_ms"].as_f64().unwrap_or(0.0)
            )
        };
        let mut out = format!(
            "bench-chat: \"{question}\", {} runs, answers up to {max_tokens} tokens, prompt {} tokens of a {}-token window\n",
            rows.len(),
            rows[0]["prompt_tokens"],
            rows[0]["context_window"]
        );
        out.push_str(&line("cold", &summary["cold"]));
        out.push_str(&line("warm median", &summary["warm_median"]));
        docdex::cli::output::print_out(&out)?;
    }
    Ok(0)
}
