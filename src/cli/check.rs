//! `docdexd check` and `docdexd models install`: the installation checked piece by piece
//! (configuration, state directory, registry, bind address, model, LLM server, web tier).

use std::net::TcpListener;
use std::path::Path;
use std::time::Instant;

use super::output::report_error;
use crate::actors::repo_manager::{list_registry, RepoFingerprint};
use crate::config::{self, LoadedConfig};
use crate::protocol::{DocdexError, Result};

/// One line per check, a hint under each failure; with `--json`, the same as one object
/// (`{"ok", "checks": [{status, name, detail, hint?}]}`).
pub(super) struct CheckReport {
    failed: bool,
    json: bool,
    checks: Vec<serde_json::Value>,
}

impl CheckReport {
    fn line(&mut self, status: &str, name: &str, detail: &str) {
        if self.json {
            self.checks.push(serde_json::json!({ "status": status, "name": name, "detail": detail }));
        } else {
            crate::outln!("{:<5} {name:<10} {detail}", if status == "fail" { "FAIL" } else { status });
        }
    }

    fn hint(&mut self, hint: &str) {
        match self.checks.last_mut() {
            Some(last) if self.json => last["hint"] = hint.into(),
            _ => crate::outln!("      hint: {hint}"),
        }
    }

    fn ok(&mut self, name: &str, detail: &str) {
        self.line("ok", name, detail);
    }

    fn warn(&mut self, name: &str, detail: &str) {
        self.line("warn", name, detail);
    }

    fn fail(&mut self, name: &str, err: &DocdexError) {
        self.failed = true;
        self.line("fail", name, &err.message);
        if let Some(hint) = &err.hint {
            self.hint(hint);
        }
    }
}

pub(super) fn run_check(home: &Path, json: bool) -> i32 {
    let mut report = CheckReport { failed: false, json, checks: Vec::new() };
    let code = check_into(home, &mut report);
    if json {
        let _ = super::output::print_out(&format!(
            "{}\n",
            serde_json::json!({ "ok": !report.failed, "checks": report.checks })
        ));
    }
    code
}

fn check_into(home: &Path, report: &mut CheckReport) -> i32 {
    let loaded = match config::load(home) {
        Ok(loaded) => {
            report.ok("config", &loaded.path.display().to_string());
            for key in &loaded.unknown_keys {
                report.warn("config", &format!("unknown key `{key}` is ignored"));
            }
            for warning in &loaded.warnings {
                report.warn("config", warning);
            }
            let text = std::fs::read_to_string(&loaded.path).unwrap_or_default();
            for note in config::stale_default_notes(&text) {
                report.warn("config", &note);
            }
            loaded
        }
        Err(err) => {
            report.fail("config", &err);
            return 1;
        }
    };
    let state_dir = loaded.state_dir();
    match check_writable(&state_dir) {
        Ok(()) => report.ok("state dir", &state_dir.display().to_string()),
        Err(err) => report.fail("state dir", &err),
    }
    match list_registry(&state_dir.join("repos")) {
        Ok(entries) => {
            let mut problems = 0;
            for entry in &entries {
                let dir_name = entry.dir.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
                match &entry.meta_opt {
                    None => {
                        problems += 1;
                        report.warn("registry", &format!("{} has no readable repo_meta.json", entry.dir.display()));
                    }
                    Some(meta)
                        if meta.fingerprint != dir_name
                            || RepoFingerprint::of(Path::new(&meta.canonical_path)).0 != dir_name =>
                    {
                        problems += 1;
                        report.warn(
                            "registry",
                            &format!("{} does not match its repo {}", entry.dir.display(), meta.canonical_path),
                        );
                    }
                    Some(meta) if !Path::new(&meta.canonical_path).is_dir() => {
                        report.warn(
                            "registry",
                            &format!("repo {} no longer exists (its state can be deleted)", meta.canonical_path),
                        );
                    }
                    Some(_) => {}
                }
            }
            report.ok("registry", &format!("{} repos, {} inconsistent", entries.len(), problems));
        }
        Err(err) => report.fail("registry", &err),
    }
    let settings = crate::actors::system::embedder_settings(&loaded);
    if !settings.enabled {
        report.warn("model", "semantic search is disabled (embedding.enabled = false)");
    } else if let Some(missing) = settings.paths.missing() {
        report.warn(
            "model",
            &format!("{} is missing: search is lexical-only (run `docdexd models install`)", missing.display()),
        );
    } else {
        match crate::actors::embedder::probe(&settings) {
            Ok(detail) => report.ok("model", &detail),
            Err(reason) => report.fail(
                "model",
                &DocdexError::new(crate::protocol::ErrorCode::ModelUnavailable, reason)
                    .with_hint("reinstall with `docdexd models install`"),
            ),
        }
        let file = crate::index::static_model::StaticModel::path(&settings.paths);
        if !settings.static_vectors {
            report.ok("static vectors", "off (embedding.static_vectors = false)");
        } else if file.is_file() {
            report.ok("static vectors", &format!("distilled at {}", file.display()));
        } else {
            // Not a fault: the first embedding job distils them (seconds), it just waits.
            report.warn(
                "static vectors",
                &format!(
                    "not distilled yet ({} is missing): the first index run will do it; \
                     `docdexd models install` does it now",
                    file.display()
                ),
            );
        }
    }
    check_store(&loaded, report);
    check_web(&loaded, report);
    check_llm(&loaded, report);
    let bind = loaded.config.server.http_bind_addr.clone();
    let daemon_opt = crate::daemon::lock::running(&loaded.home);
    match &daemon_opt {
        Some(daemon) => {
            report.ok("daemon", &format!("{} (pid {}); `docdexd status` describes it", daemon.base_url, daemon.pid))
        }
        None => report.ok("daemon", "none running for this home (commands run locally)"),
    }
    // The address taken by this home's own daemon is the daemon working, not a conflict.
    let own_daemon_opt = daemon_opt.filter(|d| d.base_url == format!("http://{bind}"));
    match (TcpListener::bind(&bind), own_daemon_opt) {
        (Ok(_), _) => report.ok("bind", &format!("{bind} is free")),
        (Err(_), Some(daemon)) => {
            report.ok("bind", &format!("{bind} is served by this home's daemon (pid {})", daemon.pid))
        }
        (Err(err), None) => report.fail(
            "bind",
            &DocdexError::invalid(format!("cannot bind {bind}: {err}")).with_hint(
                "stop the process using it (another docdexd?) or set server.http_bind_addr / DOCDEX_HTTP_BIND_ADDR",
            ),
        ),
    }
    if report.failed {
        1
    } else {
        0
    }
}

/// The team store: reachable, its server's version, the vector extension and the schema
/// version against this binary's. `check` only reads: the schema is created or migrated by
/// the first daemon or command that opens a repo.
fn check_store(loaded: &LoadedConfig, report: &mut CheckReport) {
    let store = &loaded.config.store;
    if store.backend != crate::config::STORE_POSTGRES {
        return report.ok("store", "embedded (Tantivy and LMDB under the state dir)");
    }
    let pool = match crate::postgres::PgPool::connect(&store.url) {
        Ok(pool) => pool,
        Err(err) => return report.fail("store", &err),
    };
    let info = match pool.info() {
        Ok(info) => info,
        Err(err) => return report.fail("store", &err),
    };
    let ours = crate::postgres::SCHEMA_VERSION;
    let url = pool.display_url();
    let server = format!("PostgreSQL {} at {url}", info.server_version);
    if info.schema_version > ours {
        return report.fail(
            "store",
            &DocdexError::new(
                crate::protocol::ErrorCode::StoreUnavailable,
                format!("{server}: schema version {} is newer than this docdexd's ({ours})", info.schema_version),
            )
            .with_hint("upgrade docdexd to the version the other daemons run"),
        );
    }
    match (&info.vector_version, info.schema_version) {
        (None, 0) => report.warn(
            "store",
            &format!("{server}: no docdex schema yet and no vector extension; the first open runs CREATE EXTENSION vector, which needs pgvector installed and the right to create it"),
        ),
        (None, _) => report.fail(
            "store",
            &DocdexError::new(crate::protocol::ErrorCode::StoreUnavailable, format!("{server}: the vector extension is missing"))
                .with_hint("install pgvector on the server and run CREATE EXTENSION vector in the database"),
        ),
        (Some(vector), 0) => report.ok(
            "store",
            &format!("{server}, pgvector {vector}; no docdex schema yet (created at the first open, version {ours})"),
        ),
        (Some(vector), version) if version < ours => report.ok(
            "store",
            &format!("{server}, pgvector {vector}, schema {version} (migrated to {ours} at the next open), {} repos", info.repos),
        ),
        (Some(vector), version) => {
            report.ok("store", &format!("{server}, pgvector {vector}, schema {version}, {} repos", info.repos))
        }
    }
}

/// The LLM server: reachable, and has the configured model; a model too big for this
/// machine is a warning. A server that is down is a warning too: search works without it.
pub(super) fn check_llm(loaded: &LoadedConfig, report: &mut CheckReport) {
    let llm = &loaded.config.llm;
    let client = match crate::llm::LlmClient::new(llm) {
        Ok(client) => client,
        Err(err) => return report.fail("llm", &err),
    };
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(err) => return report.fail("llm", &DocdexError::internal(format!("cannot start a runtime: {err}"))),
    };
    match runtime.block_on(client.list_models()) {
        Err(err) => {
            report.warn("llm", &format!("{} (chat is unavailable; search works)", err.message));
            if let Some(hint) = &err.hint {
                report.hint(hint);
            }
        }
        Ok(models) => {
            let names: Vec<String> = models.iter().map(|m| m.id.clone()).collect();
            let wanted = llm.default_model.trim();
            if wanted.is_empty() {
                match names.first() {
                    Some(first) => report.ok("llm", &format!("{} at {}: serving {first}", llm.provider, llm.base_url)),
                    None => report.warn("llm", &format!("{} at {} has no models", llm.provider, llm.base_url)),
                }
            } else if crate::llm::hardware::is_installed(wanted, &names)
                || client.kind == crate::config::ProviderKind::OpenAi && names.len() == 1
            {
                report.ok("llm", &format!("{} at {}: {wanted} is available", llm.provider, llm.base_url));
            } else {
                report.warn(
                    "llm",
                    &format!(
                        "{} at {} does not have {wanted} (it has: {})",
                        llm.provider,
                        llm.base_url,
                        names.join(", ")
                    ),
                );
                report.hint("`docdexd llm-setup` shows what to pull for this machine");
            }
        }
    }
    let hw = crate::llm::hardware::detect();
    if let Some(why) = crate::llm::hardware::oversized(&crate::llm::hardware::shipped_list(), &hw, &llm.default_model) {
        report.warn("llm", &format!("the configured model may be too big for this machine: {why}"));
    }
}

/// The web tier: on or off, the discovery endpoint, Chromium (found, version, launches) and
/// stale browser locks (cleaned on the way).
/// Whether a TCP connection to the URL's host can be made (resolution included), within a
/// few seconds: "enabled" says nothing about a machine with no network.
fn reach(raw: &str) -> std::result::Result<(), String> {
    use std::net::ToSocketAddrs;
    let url = url::Url::parse(raw).map_err(|err| format!("not a URL: {err}"))?;
    let host = url.host_str().ok_or("no host")?.trim_start_matches('[').trim_end_matches(']').to_string();
    let port = url.port_or_known_default().unwrap_or(443);
    let addrs: Vec<_> =
        (host.as_str(), port).to_socket_addrs().map_err(|err| format!("cannot resolve {host}: {err}"))?.collect();
    let mut last = String::from("no address");
    for addr in addrs {
        match std::net::TcpStream::connect_timeout(&addr, std::time::Duration::from_secs(3)) {
            Ok(_) => return Ok(()),
            Err(err) => last = err.to_string(),
        }
    }
    Err(last)
}

pub(super) fn check_web(loaded: &LoadedConfig, report: &mut CheckReport) {
    use crate::web::browser;
    let web = &loaded.config.web;
    if !web.enabled {
        report.warn("web", "the web tier is disabled ([web] enabled = false): the waterfall stays local");
        return;
    }
    match reach(&web.ddg_base_url) {
        Ok(()) => report.ok("web", &format!("enabled; discovery via {}", web.ddg_base_url)),
        Err(why) => {
            report.warn(
                "web",
                &format!(
                    "enabled, but {} cannot be reached from here ({why}): web searches will fail",
                    web.ddg_base_url
                ),
            );
            report.hint("check the network, or set `[web] enabled = false` to keep the waterfall local");
        }
    }
    let locks_dir = loaded.state_dir().join("locks");
    let sweep = browser::sweep_stale_locks(&locks_dir);
    for cleaned in &sweep.cleaned {
        report.warn("locks", &format!("stale browser lock cleaned: {cleaned}"));
    }
    report.ok("locks", &format!("{} live browser locks in {}", sweep.live, locks_dir.display()));
    if web.engine == "http" {
        report.ok("chromium", "not used (web.engine = \"http\"): pages are fetched with plain HTTP");
        return;
    }
    let Some(binary) = browser::find_chromium(web.chrome_binary_path.as_deref()) else {
        let where_ = match &web.chrome_binary_path {
            Some(path) => format!("{} does not exist", path.display()),
            None => "no chromium or chrome binary found".to_string(),
        };
        report.warn(
            "chromium",
            &format!("{where_}: pages are fetched with plain HTTP (no JavaScript); install chromium or set [web] chrome_binary_path"),
        );
        return;
    };
    let version = match browser::chromium_version(&binary) {
        Ok(version) => version,
        Err(err) => {
            report.fail(
                "chromium",
                &err.with_hint("reinstall chromium or point [web] chrome_binary_path at a working one"),
            );
            return;
        }
    };
    let started = Instant::now();
    match browser::BrowserProcess::launch(&binary, &locks_dir, &loaded.state_dir().join("browser")) {
        Ok(process) => {
            let ms = started.elapsed().as_millis();
            drop(process);
            report.ok("chromium", &format!("{version} at {}; launches headless in {ms} ms", binary.display()));
        }
        Err(err) => report.fail("chromium", &err),
    }
}

pub(super) fn check_writable(dir: &Path) -> Result<()> {
    let unwritable = |err: std::io::Error| {
        DocdexError::new(
            crate::protocol::ErrorCode::StateUnwritable,
            format!("{} is not writable: {err}", dir.display()),
        )
        .with_hint("fix its permissions, or point DOCDEX_HOME / core.global_state_dir at a writable folder")
    };
    std::fs::create_dir_all(dir).map_err(unwritable)?;
    let probe = dir.join(format!(".docdex-write-check-{}", std::process::id()));
    std::fs::write(&probe, b"ok").map_err(unwritable)?;
    std::fs::remove_file(&probe).map_err(unwritable)?;
    Ok(())
}

pub(super) fn run_models_install(home: &Path) -> i32 {
    let loaded = match config::load(home) {
        Ok(loaded) => loaded,
        Err(err) => return report_error(&err),
    };
    let models_dir = loaded.models_dir();
    eprintln!("installing the embedding model and ONNX Runtime into {}", models_dir.display());
    match crate::index::models::install(&models_dir, &mut |line| eprintln!("  {line}")) {
        Ok(files) => {
            for file in files {
                let state = if file.already_present { "present" } else { "installed" };
                crate::outln!("{state:<10} {}", file.path.display());
            }
            let settings = crate::actors::system::embedder_settings(&loaded);
            match crate::actors::embedder::probe(&settings) {
                Ok(detail) => {
                    crate::outln!("ok: {detail}");
                    if !settings.static_vectors {
                        return 0;
                    }
                    // Distilled now, so the first index run does not wait for it.
                    let started = std::time::Instant::now();
                    let mut log = |line: &str| eprintln!("  {line}");
                    match crate::index::static_model::StaticModel::load_or_distill(
                        &settings.paths,
                        settings.threads,
                        &mut log,
                    ) {
                        Ok(_) => {
                            crate::outln!(
                                "ok: static vectors in {} ({:.1} s)",
                                crate::index::static_model::StaticModel::path(&settings.paths).display(),
                                started.elapsed().as_secs_f64()
                            );
                            0
                        }
                        Err(reason) => {
                            eprintln!("error: the static vectors could not be distilled: {reason}");
                            2
                        }
                    }
                }
                Err(reason) => {
                    eprintln!("error: the installed model does not load: {reason}");
                    2
                }
            }
        }
        Err(err) => report_error(&err),
    }
}
