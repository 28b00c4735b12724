//! Running a repo's tests: the whole suite, a file or folder, or the tests a diff reaches
//! (`impact`), with the runner the repo's files name (`crate::runner`).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use actix::{AsyncContext, Context, Handler, Message, ResponseFuture};
use schemars::JsonSchema;
use serde::Deserialize;

use super::impact::{diff_impact, reread, DiffImpact, DEFAULT_DIFF_DEPTH};
use super::params::{self, Caller, Tool};
use super::{open_indexed, tracked, ToolDispatcher};
use crate::change::git::DiffBase;
use crate::protocol::impact::{DiffImpactResponse, RunTestsResponse};
use crate::protocol::{DocdexError, Result};
use crate::runner::{self, Runner, Selection};

/// Which tests `run-tests` runs.
#[derive(Debug, Clone, PartialEq)]
pub enum TestScope {
    All,
    /// A file or folder, relative to the repo root.
    Target(String),
    /// The tests a diff's changes reach.
    Affected(DiffBase),
}

impl TestScope {
    /// The scope from `target` or `affected` as words (`affected`: a diff base; neither: the
    /// whole suite), the one check of the CLI's and MCP's parameters.
    pub fn from_params(target_opt: Option<String>, affected_opt: Option<String>) -> Result<TestScope> {
        match (target_opt.filter(|t| !t.trim().is_empty()), affected_opt) {
            (Some(_), Some(_)) => Err(DocdexError::invalid("give `target` or `affected`, not both")),
            (Some(target), None) => Ok(TestScope::Target(target)),
            (None, Some(affected)) => Ok(TestScope::Affected(DiffBase::parse(Some(&affected), false)?)),
            (None, None) => Ok(TestScope::All),
        }
    }
}

/// Files of a folder target read to tell its language (and so its runner).
const TARGET_FILES_READ: usize = 200;

/// Runs a repo's tests.
#[derive(Message)]
#[rtype(result = "Result<RunTestsResponse>")]
pub struct RunTests {
    pub repo_opt: Option<PathBuf>,
    pub scope: TestScope,
    /// At most `[tests] timeout_secs` (its default).
    pub timeout_secs_opt: Option<u64>,
}

impl Handler<RunTests> for ToolDispatcher {
    type Result = ResponseFuture<Result<RunTestsResponse>>;

    fn handle(&mut self, msg: RunTests, ctx: &mut Context<Self>) -> Self::Result {
        let repo = self.resolve_repo(msg.repo_opt.clone());
        let repo_manager = self.repo_manager.clone();
        let tests_config = self.config.tests.clone();
        let me = ctx.address();
        tracked(&self.metrics, "run_tests", async move {
            let max = tests_config.timeout_secs;
            let timeout = match msg.timeout_secs_opt {
                None => max,
                Some(t) if (1..=max).contains(&t) => t,
                Some(t) => {
                    return Err(DocdexError::invalid(format!("timeout_secs must be 1 to {max}, got {t}"))
                        .with_hint("raise [tests] timeout_secs in config.toml for longer runs"))
                }
            };
            let handle = open_indexed(&repo_manager, repo.await?).await?;
            let index = Arc::clone(&handle.index);
            if let TestScope::Affected(base) = &msg.scope {
                // Tests picked from a graph that lacks the diff's definitions would be none,
                // and a run of none passes.
                let (index, base) = (Arc::clone(&index), base.clone());
                let behind = tokio::task::spawn_blocking(move || -> Result<Vec<String>> {
                    let graph = index.code_graph()?;
                    Ok(crate::change::read(&index.root, &base, Some(&graph), Some(&index.side_facts))?.behind(&graph))
                })
                .await??;
                if !behind.is_empty() {
                    reread(&me, handle.index.root.clone(), behind).await;
                }
            }
            tokio::task::spawn_blocking(move || {
                let root = index.root.clone();
                let custom = tests_config.commands.get(&root.display().to_string()).map(String::as_str);
                let mut affected_opt = None;
                let selection = match &msg.scope {
                    TestScope::All => Selection::All,
                    TestScope::Target(target) => Selection::Target(inside(&root, target)?),
                    TestScope::Affected(base) => {
                        let graph = index.code_graph()?;
                        let changes = crate::change::read(&root, base, Some(&graph), Some(&index.side_facts))?;
                        let query = DiffImpact {
                            repo_opt: None,
                            base: base.clone(),
                            depth: DEFAULT_DIFF_DEPTH,
                            min_confidence: super::code::DEFAULT_MIN_CONFIDENCE,
                            limit: super::code::MAX_CODE_LIMIT,
                        };
                        let impact = diff_impact(&index, &graph, &changes, &query);
                        let tests = impact.tests.iter().map(|t| (t.path.clone(), t.name.clone())).collect();
                        affected_opt = Some(impact);
                        Selection::Tests(tests)
                    }
                };
                // The runner of the language of the files to run (a repo may hold several).
                let paths: Vec<String> = match &selection {
                    Selection::All => Vec::new(),
                    Selection::Target(target) => runner::files_under(&root, target, TARGET_FILES_READ),
                    Selection::Tests(tests) => tests.iter().map(|(path, _)| path.clone()).collect(),
                };
                let paths: Vec<&str> = paths.iter().map(String::as_str).collect();
                let runner = runner::detect(&root, custom, &paths)?;
                if let Some(impact) = affected_opt.as_ref().filter(|impact| impact.tests.is_empty()) {
                    return Ok(nothing_to_run(&runner, impact));
                }
                // Tests in another runner's language are not run by this one: the note names them.
                let mut left_out: Vec<String> = Vec::new();
                let selection = match selection {
                    Selection::Tests(tests) => {
                        let (ours, others): (Vec<_>, Vec<_>) =
                            tests.into_iter().partition(|(path, _)| runner::runs(&runner, path));
                        for (path, _) in others {
                            if !left_out.contains(&path) {
                                left_out.push(path);
                            }
                        }
                        Selection::Tests(ours)
                    }
                    other => other,
                };
                let reports = tempfile::tempdir()?;
                // A suite whose files need a feature (tokio's `full`) runs with it, as the
                // impact walk counted its tests.
                let features = match runner {
                    runner::Runner::Cargo => index
                        .code_graph()
                        .map(|graph| crate::code::default_run::DefaultRun::new(&root).suite_features(&graph))
                        .unwrap_or_default(),
                    _ => Vec::new(),
                };
                let plan = runner::plan(&runner, &selection, &root, reports.path())?.with_cargo_features(&features);
                let max_output = tests_config.max_output_bytes as usize;
                let mut response = runner::run(&runner, &plan, &root, Duration::from_secs(timeout), max_output)?;
                if !left_out.is_empty() {
                    let note = format!(
                        "{} test file(s) reached in another language were not run by {}: {}",
                        left_out.len(),
                        runner.name(),
                        left_out.join(", ")
                    );
                    response.note =
                        [response.note, note].into_iter().filter(|n| !n.is_empty()).collect::<Vec<_>>().join("; ");
                }
                Ok(response)
            })
            .await?
        })
    }
}

/// A target inside the repo, as a path relative to its root.
fn inside(root: &std::path::Path, target: &str) -> Result<String> {
    let relative = target.trim().trim_start_matches("./");
    let refused = || {
        DocdexError::invalid(format!("`{target}` is not a file or folder of this repo"))
            .with_hint("give a path relative to the repo root, e.g. tests/ or src/cart.rs")
    };
    if relative.is_empty() {
        return Err(refused());
    }
    // An absolute path inside the repo is that path from its root (an editor gives them so).
    let resolved = std::fs::canonicalize(root.join(relative)).map_err(|_| refused())?;
    let Ok(inner) = resolved.strip_prefix(root) else { return Err(refused()) };
    if std::path::Path::new(relative).is_absolute() {
        let inner = inner.to_string_lossy().to_string();
        return if inner.is_empty() { Err(refused()) } else { Ok(inner) };
    }
    Ok(relative.trim_end_matches('/').to_string())
}

fn nothing_to_run(runner: &Runner, impact: &DiffImpactResponse) -> RunTestsResponse {
    let note = if impact.changed_files.is_empty() {
        format!("nothing changed against {}: no test to run", impact.base)
    } else {
        format!(
            "no test reaches the {} changed definitions of the {} changed files: nothing ran",
            impact.changed_symbols.len(),
            impact.changed_files.len()
        )
    };
    RunTestsResponse {
        runner: runner.name().to_string(),
        command: String::new(),
        passed: 0,
        failed: 0,
        skipped: 0,
        failures: Vec::new(),
        duration_ms: 0,
        timed_out: false,
        exit_code: None,
        output_tail: String::new(),
        output_truncated: false,
        note,
    }
}

// ---- Parameters, as every surface takes them (see `params`).

/// `POST /v1/run-tests`, MCP `docdex_run_tests`, `docdex run-tests`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunTestsParams {
    /// Run only the tests in this file or folder (relative to the repo root).
    #[serde(default)]
    pub target: Option<String>,
    /// Run only the tests a change reaches: "working" (the working tree against HEAD),
    /// "staged", or a revision to compare the working tree with ("HEAD~1", "main"); `true`
    /// is "working".
    #[serde(default, deserialize_with = "affected")]
    pub affected: Option<String>,
    /// Stop the run after this many seconds (default and most: [tests] timeout_secs, 600).
    #[serde(default, deserialize_with = "params::number")]
    #[schemars(range(min = 1))]
    pub timeout_secs: Option<u64>,
    /// Repository root (default: the server's repo). `repo_path` and `project_root` are taken too.
    #[serde(default, alias = "repo_path", alias = "project_root")]
    pub repo: Option<PathBuf>,
}

/// `affected` as a base, or `true` for the working tree (`false`: not asked).
fn affected<'de, D: serde::Deserializer<'de>>(deserializer: D) -> std::result::Result<Option<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum FlagOrBase {
        Flag(bool),
        Base(String),
        Other(serde_json::Value),
    }
    Ok(match Option::<FlagOrBase>::deserialize(deserializer)? {
        Some(FlagOrBase::Other(other)) => {
            return Err(serde::de::Error::custom(format!("expected true, false or a git revision, got {other}")))
        }
        None | Some(FlagOrBase::Flag(false)) => None,
        Some(FlagOrBase::Flag(true)) => Some("working".into()),
        Some(FlagOrBase::Base(base)) => match base.trim() {
            "" | "false" => None,
            "true" => Some("working".into()),
            base => Some(base.to_string()),
        },
    })
}

impl Tool for RunTestsParams {
    type Message = RunTests;
    type Output = RunTestsResponse;

    fn repo(&self) -> Option<&Path> {
        self.repo.as_deref()
    }

    /// Refused to a caller that may not run code (a daemon without a token, or exposed).
    fn into_message(self, repo_opt: Option<PathBuf>, caller: &Caller) -> Result<RunTests> {
        if let Some(refusal) = &caller.run_tests_refusal {
            return Err(refusal.clone());
        }
        let scope = TestScope::from_params(self.target, self.affected)?;
        Ok(RunTests { repo_opt, scope, timeout_secs_opt: self.timeout_secs })
    }
}
