//! `docdex-bench`: the benchmarks and retrieval evaluations, a binary of their own so that
//! `docdexd` does not carry them. Each subcommand keeps the name it had as a `docdexd`
//! command (`docdex-bench bench --repo R`, `docdex-bench eval --dataset D`, ...); they read
//! the same `DOCDEX_HOME` configuration and use scratch state where they say so.

mod across;
mod chat;
mod code;
mod daemon;
mod documents;
mod eval;
mod file_bm25;
mod gate;
mod impact;
mod libs;
mod questions;
mod search;
mod store_scale;
mod web;

use std::path::PathBuf;

use clap::{Parser, Subcommand};
use docdex::cli::init_tracing;
use docdex::cli::output::report_error;
use docdex::config::{self, LoadedConfig};
use docdex::protocol::{Result, SearchMode};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Debug, Parser)]
#[command(name = "docdex-bench", version, about = "Benchmarks and retrieval evaluations for docdex")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Benchmark chat: context assembly, time to first token and total latency for a short
    /// question, cold (first run) and warm. Needs the LLM server and an indexed repo.
    BenchChat {
        #[arg(long)]
        repo: PathBuf,
        #[arg(long, default_value = "How does the worker pool run jobs?")]
        question: String,
        /// Runs (the first is the cold one).
        #[arg(long, default_value_t = 5)]
        runs: usize,
        /// Most tokens per answer (a short answer; llm.max_answer_tokens caps it).
        #[arg(long, default_value_t = 64)]
        max_tokens: usize,
        #[arg(long)]
        json: bool,
    },
    /// Measure retrieval quality on a TREC-style collection (MAP, nDCG@10, Recall@100, MRR@10).
    Eval {
        /// Folder with a <DOC> corpus, a <top> topics file and a qrels file.
        #[arg(long)]
        dataset: PathBuf,
        /// Evaluate one mode only (default: lexical, dense and hybrid).
        #[arg(long)]
        mode: Option<SearchMode>,
        /// Also run hybrid under a grid of RRF settings (k, dense weight).
        #[arg(long)]
        sweep_fusion: bool,
        #[arg(long)]
        json: bool,
    },
    /// Benchmark a daemon as its users feel it, on a copy of REPO in a throwaway home:
    /// resident memory at start, after hybrid searches and after the idle release, and
    /// save-to-searchable latency through the watcher.
    BenchDaemon {
        #[arg(long)]
        repo: PathBuf,
        /// Save-to-searchable measurements.
        #[arg(long, default_value_t = 10)]
        runs: usize,
        /// Without the embedding model: no embedding wait and no hybrid searches (for repos
        /// too large to embed in a benchmark's time, where the watcher is what is measured).
        #[arg(long)]
        lexical_only: bool,
        #[arg(long)]
        json: bool,
    },
    /// Benchmark library docs: `libs fetch` cold and warm (the repo's direct dependencies,
    /// serde and tokio alone), the crate tools' warm latency, and crate_search quality on
    /// judged questions (`crate<TAB>question<TAB>paths`). Uses scratch state directories.
    BenchLibs {
        #[arg(long)]
        repo: PathBuf,
        #[arg(long)]
        questions: Option<PathBuf>,
        /// Rounds of the latency queries.
        #[arg(long, default_value_t = 3)]
        runs: usize,
        #[arg(long)]
        json: bool,
    },
    /// Benchmark the web tier against pages served from loopback: Chromium cold start, warm
    /// page loads, extraction per page, web-rag with the cache cold and warm.
    BenchWeb {
        /// Runs per measurement.
        #[arg(long, default_value_t = 5)]
        runs: usize,
        #[arg(long)]
        json: bool,
    },
    /// Measure the waterfall gate on labelled questions (`split<TAB>local|web<TAB>question`):
    /// precision and recall of escalating to the web, per mode, at the configured threshold
    /// and the best one. The repo must be indexed (with `--wait` for dense and hybrid).
    EvalGate {
        #[arg(long)]
        repo: PathBuf,
        #[arg(long)]
        questions: PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// Benchmark code intelligence on a repository: extraction symbols/s and MB/s, the graph's
    /// build time and peak memory, the index run, and the p50/p95 of symbols, references,
    /// callers and impact queries over HTTP (uses a throwaway state dir).
    BenchCode {
        #[arg(long)]
        repo: PathBuf,
        /// Timed requests per query kind.
        #[arg(long, default_value_t = 300)]
        queries: usize,
        #[arg(long)]
        json: bool,
    },
    /// Benchmark change impact on a repository: a scratch git copy, then `runs` diffs that
    /// each edit a function in `files` files, timed over HTTP (`GET /v1/impact/diff`).
    BenchImpact {
        #[arg(long)]
        repo: PathBuf,
        #[arg(long, default_value_t = 50)]
        runs: usize,
        /// Files each diff edits.
        #[arg(long, default_value_t = 10)]
        files: usize,
        #[arg(long)]
        json: bool,
    },
    /// One search over several repos against a search of one: each judged question asked of
    /// its repo alone and of all the repos (success@5 and MRR@10 side by side per set and
    /// mode), and both searches' latency over HTTP.
    BenchAcross {
        /// The repos searched together, comma-separated (the repos of --set join them).
        #[arg(long, value_delimiter = ',')]
        repos: Vec<PathBuf>,
        /// A judged question file and the repo it is about: `REPO=QUESTIONS` (repeat).
        #[arg(long = "set", value_parser = across::parse_set)]
        sets: Vec<across::JudgedSet>,
        /// Pooled judgments (`question<TAB>REPO-NAME/PATH<TAB>grade`): files of any repo
        /// graded 2 answer their question too (benches/across-judgments.tsv).
        #[arg(long)]
        judgments: Option<PathBuf>,
        /// Keep the indexes (and embeddings) here for the next run.
        #[arg(long)]
        state_dir: Option<PathBuf>,
        #[arg(long)]
        lexical_only: bool,
        /// Print each question found in the first five alone and not across, with the first
        /// five across (stderr).
        #[arg(long)]
        misses: bool,
        #[arg(long)]
        json: bool,
    },
    /// Benchmark documents: every HTML, PDF and DOCX file under DIR converted to text and
    /// chunked; per format files, failures, pages, MB, and pages/s and MB/s (median run).
    BenchDocuments {
        dir: PathBuf,
        #[arg(long, default_value_t = 3)]
        runs: usize,
        #[arg(long)]
        json: bool,
    },
    /// The team store at scale: synthetic repos loaded into the store at URL (its docdex
    /// tables are emptied of them first), then hybrid searches of single repos timed and
    /// checked for hits from other repos.
    BenchStoreScale(store_scale::ScaleOptions),
    /// Benchmark indexing and HTTP search latency on a repository (uses a throwaway state dir).
    Bench {
        #[arg(long)]
        repo: PathBuf,
        /// Number of timed search requests per mode.
        #[arg(long, default_value_t = 300)]
        queries: usize,
        /// Skip embedding the repo (and so the hybrid measurements).
        #[arg(long)]
        lexical_only: bool,
        /// A judged question file (`question<TAB>path[,path…][<TAB>kind]`), one split per
        /// file (repeat the flag): success@5, MRR@10 and nDCG@10 per split, mode and kind,
        /// and the misses.
        #[arg(long)]
        questions: Vec<PathBuf>,
        /// Keep the index in this state directory and reuse it on the next run (embeddings
        /// included) instead of indexing into a throwaway one; implies --index-runs 1.
        #[arg(long)]
        state_dir: Option<PathBuf>,
        /// Index runs to time, each from scratch; the median is reported (timings on a
        /// shared machine vary by a fifth from run to run).
        #[arg(long, default_value_t = 5)]
        index_runs: usize,
        /// Measure on the embedded store and on the team store at this URL (PostgreSQL),
        /// side by side (the repo's rows there are replaced).
        #[arg(long)]
        store_url: Option<String>,
        /// Static vectors only (`[embedding] model_vectors = false`): dense and hybrid
        /// measured on the vectors every chunk has seconds after its index run.
        #[arg(long)]
        static_only: bool,
        #[arg(long)]
        json: bool,
    },
}

fn main() {
    docdex::cli::allocator::configure();
    let cli = Cli::parse();
    let home = config::docdex_home();
    let loaded = match config::load(&home) {
        Ok(loaded) => loaded,
        Err(err) => std::process::exit(report_error(&err)),
    };
    init_tracing(&loaded.config.core.log_level);
    let system = actix::System::new();
    let code = system.block_on(async move {
        match run(cli.command, loaded).await {
            Ok(code) => code,
            Err(err) => report_error(&err),
        }
    });
    std::process::exit(code);
}

async fn run(command: Command, loaded: LoadedConfig) -> Result<i32> {
    match command {
        Command::Eval { dataset, mode, sweep_fusion, json } => {
            eval::run(&loaded, &dataset, mode, sweep_fusion, json).await
        }
        Command::BenchWeb { runs, json } => web::run(&loaded, runs, json).await,
        Command::BenchLibs { repo, questions, runs, json } => libs::run(&loaded, repo, questions, runs, json).await,
        Command::BenchDaemon { repo, runs, lexical_only, json } => {
            // Blocking HTTP and sleeps: off the async workers.
            tokio::task::spawn_blocking(move || daemon::run(&loaded, &repo, runs, lexical_only, json)).await?
        }
        Command::EvalGate { repo, questions, json } => gate::run(&loaded, &repo, &questions, json).await,
        Command::Bench {
            repo,
            queries,
            lexical_only,
            questions,
            state_dir,
            index_runs,
            store_url,
            static_only,
            json,
        } => {
            let options = search::BenchOptions {
                static_only,
                queries,
                lexical_only,
                questions,
                json,
                index_runs,
                state_dir_opt: state_dir,
                store_url_opt: store_url,
            };
            search::run(&loaded, &repo, options).await
        }
        Command::BenchAcross { repos, sets, judgments, state_dir, lexical_only, misses, json } => {
            let options = across::Options { repos, sets, judgments, state_dir, lexical_only, misses, json };
            across::run(&loaded, options).await
        }
        Command::BenchDocuments { dir, runs, json } => documents::run(&loaded, &dir, runs, json),
        Command::BenchStoreScale(options) => tokio::task::spawn_blocking(move || store_scale::run(options)).await?,
        Command::BenchCode { repo, queries, json } => code::run(&loaded, &repo, queries, json).await,
        Command::BenchImpact { repo, runs, files, json } => impact::run(&loaded, &repo, runs, files, json).await,
        Command::BenchChat { repo, question, runs, max_tokens, json } => {
            chat::run_bench_chat(&loaded, repo, question, runs, max_tokens, json).await
        }
    }
}
