//! `docdexd setup`: writes docdex into an agent's MCP configuration, in the place and format
//! each client documents, merging with what is there (other servers are never touched), with a
//! backup of the file it changes, and nothing written when it is already right.
//!
//! `AGENTS` is the one table of where each client reads its servers and in which shape; the
//! per-agent section of docs/agents.md is checked against it (`readme_matches_the_agent_table`).

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::config::{self, LoadedConfig};
use crate::protocol::{DocdexError, Result};

/// How a client's file is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// JSON, servers under `key` (`mcpServers`, or VS Code's `servers`).
    Json { key: &'static str },
    /// TOML, servers as `[<key>.docdex]` tables (Codex).
    Toml { key: &'static str },
}

/// One agent's configuration.
#[derive(Debug, Clone, Copy)]
pub struct Agent {
    pub name: &'static str,
    pub title: &'static str,
    /// The user-wide file, relative to the home directory.
    pub user_file: &'static str,
    /// The project file, relative to the repo root, when the client reads one (used with
    /// `--repo`).
    pub project_file: Option<&'static str>,
    pub format: Format,
    /// The key of the server's URL in the HTTP form (clients disagree).
    pub url_key: &'static str,
    /// Whether the HTTP entry names its type.
    pub http_type: Option<&'static str>,
    /// Whether the client's file can name an HTTP server at all (Claude Desktop's cannot:
    /// it gets the stdio form, whose `docdexd mcp` relays to a running daemon anyway).
    pub http_supported: bool,
    /// How the client's project file names the token without holding it (teams commit
    /// project files); `None` where the client has no such form.
    pub token_ref: Option<TokenRef>,
}

/// A reference to the daemon's token that the client resolves when it connects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenRef {
    /// The client expands this environment-variable form (it names `DOCDEX_AUTH_TOKEN`).
    Env(&'static str),
    /// VS Code asks for the value once (a password input) and keeps it in its secret store.
    VsCodeInput,
}

/// The id of VS Code's input for the token.
const VSCODE_TOKEN_INPUT: &str = "docdex-token";

pub const AGENTS: [Agent; 7] = [
    Agent {
        name: "claude-code",
        title: "Claude Code",
        user_file: ".claude.json",
        project_file: Some(".mcp.json"),
        format: Format::Json { key: "mcpServers" },
        url_key: "url",
        http_type: Some("http"),
        http_supported: true,
        token_ref: Some(TokenRef::Env("${DOCDEX_AUTH_TOKEN}")),
    },
    Agent {
        name: "cursor",
        title: "Cursor",
        user_file: ".cursor/mcp.json",
        project_file: Some(".cursor/mcp.json"),
        format: Format::Json { key: "mcpServers" },
        url_key: "url",
        http_type: None,
        http_supported: true,
        token_ref: Some(TokenRef::Env("${env:DOCDEX_AUTH_TOKEN}")),
    },
    Agent {
        name: "vscode",
        title: "VS Code",
        user_file: ".config/Code/User/mcp.json",
        project_file: Some(".vscode/mcp.json"),
        format: Format::Json { key: "servers" },
        url_key: "url",
        http_type: Some("http"),
        http_supported: true,
        token_ref: Some(TokenRef::VsCodeInput),
    },
    Agent {
        name: "codex",
        title: "Codex CLI",
        user_file: ".codex/config.toml",
        project_file: None,
        format: Format::Toml { key: "mcp_servers" },
        url_key: "url",
        http_type: None,
        http_supported: true,
        token_ref: None,
    },
    Agent {
        name: "gemini",
        title: "Gemini CLI",
        user_file: ".gemini/settings.json",
        project_file: Some(".gemini/settings.json"),
        format: Format::Json { key: "mcpServers" },
        url_key: "httpUrl",
        http_type: None,
        http_supported: true,
        token_ref: Some(TokenRef::Env("${DOCDEX_AUTH_TOKEN}")),
    },
    Agent {
        name: "claude-desktop",
        title: "Claude Desktop",
        user_file: ".config/Claude/claude_desktop_config.json",
        project_file: None,
        format: Format::Json { key: "mcpServers" },
        url_key: "url",
        http_type: None,
        http_supported: false,
        token_ref: None,
    },
    Agent {
        name: "windsurf",
        title: "Windsurf",
        user_file: ".codeium/windsurf/mcp_config.json",
        project_file: None,
        format: Format::Json { key: "mcpServers" },
        url_key: "serverUrl",
        http_type: None,
        http_supported: true,
        token_ref: None,
    },
];

/// What `setup` writes: the stdio form (the client starts `docdexd mcp`), or the HTTP form
/// (the running daemon, with the token).
#[derive(Debug, Clone)]
pub enum Server {
    /// `env` is set for the client to pass on (`DOCDEX_HOME` when this one is not the default).
    Stdio { command: String, args: Vec<String>, env: Vec<(String, String)> },
    /// `project`: the file is a project's, which teams commit: the token is referenced
    /// there, not written, where the client can resolve a reference.
    Http { url: String, token_opt: Option<String>, project: bool },
}

impl Agent {
    pub fn by_name(name: &str) -> Result<Vec<Agent>> {
        if name == "all" {
            return Ok(AGENTS.to_vec());
        }
        AGENTS.iter().find(|a| a.name == name).map(|a| vec![*a]).ok_or_else(|| {
            let names: Vec<&str> = AGENTS.iter().map(|a| a.name).collect();
            DocdexError::invalid(format!("unknown agent `{name}`"))
                .with_hint(format!("one of: {}, all", names.join(", ")))
        })
    }

    /// The file to write: the project's with a repo (when the client reads one), else the user's.
    pub fn file(&self, home: &Path, repo_opt: Option<&Path>) -> PathBuf {
        match (repo_opt, self.project_file) {
            (Some(repo), Some(project)) => repo.join(project),
            _ => home.join(self.user_file),
        }
    }

    /// docdex's entry, as JSON (the TOML form is written from the same value).
    pub fn entry(&self, server: &Server) -> Value {
        match server {
            Server::Stdio { command, args, env } => {
                let mut entry = stdio_entry(command, args, env);
                if self.http_type.is_some() {
                    entry["type"] = json!("stdio");
                }
                entry
            }
            Server::Http { url, token_opt, .. } => {
                let mut entry = json!({ self.url_key: url });
                if let Some(kind) = self.http_type {
                    entry["type"] = json!(kind);
                }
                if let Some(token) = token_opt {
                    let key = if matches!(self.format, Format::Toml { .. }) { "http_headers" } else { "headers" };
                    let value = match self.referenced_token(server) {
                        Some(TokenRef::Env(form)) => form.to_string(),
                        Some(TokenRef::VsCodeInput) => format!("${{input:{VSCODE_TOKEN_INPUT}}}"),
                        None => token.clone(),
                    };
                    entry[key] = json!({ "Authorization": format!("Bearer {value}") });
                }
                entry
            }
        }
    }

    /// The reference that stands for the token in this file, when it is a project's and the
    /// client can resolve one.
    pub fn referenced_token(&self, server: &Server) -> Option<TokenRef> {
        match server {
            Server::Http { token_opt: Some(_), project: true, .. } => self.token_ref,
            _ => None,
        }
    }

    /// Whether this file would hold the token itself.
    pub fn holds_token(&self, server: &Server) -> bool {
        matches!(server, Server::Http { token_opt: Some(_), .. }) && self.referenced_token(server).is_none()
    }

    /// VS Code's input declaration for the token, which the file must hold beside the
    /// server that names it.
    fn input(&self, server: &Server) -> Option<Value> {
        (self.referenced_token(server) == Some(TokenRef::VsCodeInput)).then(|| {
            json!({
                "type": "promptString",
                "id": VSCODE_TOKEN_INPUT,
                "description": "docdex daemon token (the file `token` in DOCDEX_HOME, or DOCDEX_AUTH_TOKEN)",
                "password": true
            })
        })
    }
}

/// The outcome for one agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Written { backup_opt: Option<PathBuf> },
    Unchanged,
    DryRun { content: String },
}

/// Writes (or with `dry_run`, shows) docdex's entry in `file`, keeping everything else.
pub fn apply(agent: &Agent, file: &Path, server: &Server, dry_run: bool) -> Result<Outcome> {
    let existing = match std::fs::read_to_string(file) {
        Ok(text) => Some(text),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => None,
        Err(err) => return Err(DocdexError::internal(format!("cannot read {}: {err}", file.display()))),
    };
    let entry = agent.entry(server);
    let content = match agent.format {
        Format::Json { key } => merge_json(existing.as_deref(), key, entry, agent.input(server), file)?,
        Format::Toml { key } => merge_toml(existing.as_deref(), key, &entry, file)?,
    };
    if dry_run {
        return Ok(Outcome::DryRun { content });
    }
    if existing.as_deref() == Some(content.as_str()) {
        return Ok(Outcome::Unchanged);
    }
    if let Some(parent) = file.parent() {
        std::fs::create_dir_all(parent)?;
    }
    // A file that holds the token is the user's alone (0600), whatever it was; another keeps
    // its mode, never wider. The backup holds the old content (perhaps an old token): 0600.
    use std::os::unix::fs::PermissionsExt;
    let holds_token = agent.holds_token(server);
    let old_mode_opt = std::fs::metadata(file).ok().map(|m| m.permissions().mode() & 0o777);
    let mode = if holds_token { 0o600 } else { old_mode_opt.unwrap_or(0o600) };
    let private = |path: &Path, mode: u32| std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode));
    let backup_opt = match &existing {
        Some(text) => {
            let backup = file.with_file_name(format!(
                "{}.docdex-backup-{}",
                file.file_name().and_then(|n| n.to_str()).unwrap_or("config"),
                crate::protocol::time::unix_now()
            ));
            std::fs::write(&backup, text)?;
            private(&backup, 0o600)?;
            Some(backup)
        }
        None => None,
    };
    let tmp = file.with_extension(format!("docdex-tmp-{}", std::process::id()));
    std::fs::write(&tmp, &content)?;
    private(&tmp, mode)?;
    std::fs::rename(&tmp, file)?;
    Ok(Outcome::Written { backup_opt })
}

/// Whether `file` has a docdex entry.
pub fn configured(agent: &Agent, file: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(file) else { return false };
    match agent.format {
        Format::Json { key } => serde_json::from_str::<Value>(&text).is_ok_and(|v| v[key]["docdex"].is_object()),
        Format::Toml { key } => {
            text.parse::<toml_edit::DocumentMut>().is_ok_and(|doc| doc.get(key).and_then(|t| t.get("docdex")).is_some())
        }
    }
}

fn merge_json(
    existing: Option<&str>,
    key: &str,
    entry: Value,
    input_opt: Option<Value>,
    file: &Path,
) -> Result<String> {
    let mut root: Value = match existing.map(str::trim).filter(|t| !t.is_empty()) {
        Some(text) => serde_json::from_str(text).map_err(|err| {
            DocdexError::invalid(format!("{} is not valid JSON ({err}); it was left as it is", file.display()))
                .with_hint("fix the file, or move it away and run setup again")
        })?,
        None => json!({}),
    };
    let Value::Object(map) = &mut root else {
        return Err(DocdexError::invalid(format!(
            "{} does not hold a JSON object; it was left as it is",
            file.display()
        )));
    };
    let servers = map.entry(key.to_string()).or_insert_with(|| json!({}));
    let Value::Object(servers) = servers else {
        return Err(DocdexError::invalid(format!(
            "`{key}` in {} is not an object; it was left as it is",
            file.display()
        )));
    };
    servers.insert("docdex".into(), entry);
    if let Some(input) = input_opt {
        let inputs = map.entry("inputs".to_string()).or_insert_with(|| json!([]));
        let Value::Array(inputs) = inputs else {
            return Err(DocdexError::invalid(format!(
                "`inputs` in {} is not an array; it was left as it is",
                file.display()
            )));
        };
        // One declaration of docdex's input, replaced in place on a rerun.
        match inputs.iter_mut().find(|i| i["id"] == input["id"]) {
            Some(old) => *old = input,
            None => inputs.push(input),
        }
    }
    Ok(format!("{}\n", serde_json::to_string_pretty(&root)?))
}

fn merge_toml(existing: Option<&str>, key: &str, entry: &Value, file: &Path) -> Result<String> {
    let mut doc: toml_edit::DocumentMut = existing.unwrap_or("").parse().map_err(|err| {
        DocdexError::invalid(format!("{} is not valid TOML ({err}); it was left as it is", file.display()))
            .with_hint("fix the file, or move it away and run setup again")
    })?;
    let servers = doc.entry(key).or_insert_with(|| {
        let mut table = toml_edit::Table::new();
        table.set_implicit(true);
        toml_edit::Item::Table(table)
    });
    let Some(servers) = servers.as_table_mut() else {
        return Err(DocdexError::invalid(format!(
            "`{key}` in {} is not a table; it was left as it is",
            file.display()
        )));
    };
    let mut table = toml_edit::Table::new();
    for (name, value) in entry.as_object().into_iter().flatten() {
        table.insert(name, toml_edit::value(toml_value(value)));
    }
    servers.insert("docdex", toml_edit::Item::Table(table));
    Ok(doc.to_string())
}

fn toml_value(value: &Value) -> toml_edit::Value {
    match value {
        Value::String(s) => s.as_str().into(),
        Value::Bool(b) => (*b).into(),
        Value::Number(n) => n.as_i64().unwrap_or(0).into(),
        Value::Array(items) => toml_edit::Value::Array(items.iter().map(toml_value).collect()),
        Value::Object(map) => {
            let mut table = toml_edit::InlineTable::new();
            for (k, v) in map {
                table.insert(k, toml_value(v));
            }
            toml_edit::Value::InlineTable(table)
        }
        Value::Null => "".into(),
    }
}

/// The `mcpServers` entry that starts `command args` with `env` (left out when empty): the
/// shape every client reads, before a client's own additions such as `type`.
pub fn stdio_entry(command: &str, args: &[String], env: &[(String, String)]) -> Value {
    let mut entry = json!({ "command": command, "args": args });
    if !env.is_empty() {
        entry["env"] = env.iter().map(|(k, v)| (k.clone(), json!(v))).collect();
    }
    entry
}

/// What a client must set for the `docdexd mcp` it starts to use this docdex home and its
/// model: an editor does not inherit a shell's `DOCDEX_HOME` or `DOCDEX_MODELS_DIR`, and
/// without them the session would read another home's config, token and indexes, or run
/// without the model (lexical only).
pub fn stdio_env(loaded: &crate::config::LoadedConfig) -> Vec<(String, String)> {
    // Absolute: the editor starts the session in a directory of its own choosing.
    let absolute = |path: &std::path::Path| std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let set = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).is_some();
    let mut env = Vec::new();
    if set("DOCDEX_HOME") {
        env.push(("DOCDEX_HOME".to_string(), absolute(&loaded.home).display().to_string()));
    }
    if set("DOCDEX_MODELS_DIR") {
        env.push(("DOCDEX_MODELS_DIR".to_string(), absolute(&loaded.models_dir()).display().to_string()));
    }
    env
}

/// The per-agent sections of docs/agents.md, from the table: what `setup --agent` writes where.
pub fn readme_section() -> String {
    let example = Server::Stdio {
        command: "/home/me/.cargo/bin/docdexd".into(),
        args: vec!["mcp".into(), "--repo".into(), "/home/me/project".into()],
        env: Vec::new(),
    };
    let http =
        Server::Http { url: "http://127.0.0.1:3210/v1/mcp".into(), token_opt: Some("<token>".into()), project: false };
    let mut out = String::new();
    for agent in AGENTS {
        let (format, key) = match agent.format {
            Format::Json { key } => ("JSON", key),
            Format::Toml { key } => ("TOML", key),
        };
        let project = agent.project_file.map(|p| format!(" (with `--repo`: `<repo>/{p}`)")).unwrap_or_default();
        out.push_str(&format!(
            "#### {}\n\n`docdexd setup --agent {}` writes `~/{}`{project}, {format}, servers under `{key}`:\n\n",
            agent.title, agent.name, agent.user_file
        ));
        let render = |server: &Server| match agent.format {
            Format::Json { key } => format!(
                "```json\n{}```\n",
                merge_json(None, key, agent.entry(server), agent.input(server), Path::new("mcp.json"))
                    .unwrap_or_default()
            ),
            Format::Toml { key } => format!(
                "```toml\n{}```\n",
                merge_toml(None, key, &agent.entry(server), Path::new("config.toml")).unwrap_or_default()
            ),
        };
        out.push_str(&render(&example));
        if agent.http_supported {
            out.push_str("\nWith `--http`:\n\n");
            out.push_str(&render(&http));
            if let (Some(_), Some(project_file)) = (agent.token_ref, agent.project_file) {
                let project = Server::Http {
                    url: "http://127.0.0.1:3210/v1/mcp".into(),
                    token_opt: Some("<token>".into()),
                    project: true,
                };
                out.push_str(&format!(
                    "\nWith `--http --repo`, `<repo>/{project_file}` names the token instead of holding it (teams commit that folder):\n\n"
                ));
                out.push_str(&render(&project));
            }
        } else {
            out.push_str("\nIts file cannot name an HTTP server: with `--http` it gets the form above, whose `docdexd mcp` relays to the running daemon.\n");
        }
        out.push('\n');
    }
    out
}

pub(crate) fn run_setup(
    loaded: &LoadedConfig,
    agent: &str,
    repo_opt: Option<PathBuf>,
    http: bool,
    dry_run: bool,
    check: bool,
) -> Result<i32> {
    use crate::cli::setup::{apply, configured, Agent, Outcome, Server, TokenRef};
    let agents = Agent::by_name(agent)?;
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .ok_or_else(|| DocdexError::invalid("HOME is not set").with_hint("set HOME to your home directory"))?;
    let repo_opt = match repo_opt {
        Some(repo) => Some(
            std::fs::canonicalize(&repo)
                .map_err(|_| DocdexError::repo_not_found(&repo.display().to_string(), "does not exist"))?,
        ),
        None => None,
    };
    if check {
        for agent in &agents {
            let file = agent.file(&home, repo_opt.as_deref());
            let state = if configured(agent, &file) { "configured" } else { "not configured" };
            crate::outln!("{:<15} {state:<15} {}", agent.name, file.display());
        }
        return Ok(0);
    }
    let stdio = {
        let command = std::env::current_exe()?.display().to_string();
        let mut args = vec!["mcp".to_string()];
        if let Some(repo) = &repo_opt {
            args.extend(["--repo".to_string(), repo.display().to_string()]);
        }
        Server::Stdio { command, args, env: crate::cli::setup::stdio_env(loaded) }
    };
    let http_token_opt = if http { Some(config::daemon_token(loaded)?) } else { None };
    // Where a user finds the token's value to hand to a client that references it.
    let token_source = if loaded.config.server.auth_token.is_some() {
        "[server] auth_token or DOCDEX_AUTH_TOKEN".to_string()
    } else {
        format!("the file {}", loaded.home.join("token").display())
    };
    let mut failed = false;
    for agent in &agents {
        let file = agent.file(&home, repo_opt.as_deref());
        let http_server = http_token_opt.clone().filter(|_| agent.http_supported).map(|token_opt| Server::Http {
            url: format!("http://{}/v1/mcp", loaded.config.server.http_bind_addr),
            token_opt,
            project: repo_opt.is_some() && agent.project_file.is_some(),
        });
        let server = http_server.as_ref().unwrap_or(&stdio);
        match apply(agent, &file, server, dry_run) {
            Ok(Outcome::Written { backup_opt }) => {
                let backup =
                    backup_opt.map(|b| format!(" (previous file kept as {})", b.display())).unwrap_or_default();
                crate::outln!("{:<15} written       {}{backup}", agent.name, file.display());
                match agent.referenced_token(server) {
                    Some(TokenRef::Env(form)) => eprintln!(
                        "note: {} names the token as {form}, not its value (the folder is often committed): \
                         set DOCDEX_AUTH_TOKEN in the environment {} starts from, to the token in {token_source}",
                        file.display(),
                        agent.title
                    ),
                    Some(TokenRef::VsCodeInput) => eprintln!(
                        "note: {} names the token as an input, not its value (the folder is often committed): \
                         {} asks for it once when it first connects; it is in {token_source}",
                        file.display(),
                        agent.title
                    ),
                    None if agent.holds_token(server) && repo_opt.is_some() && agent.project_file.is_some() => {
                        // A project file is what teams commit: the daemon's token would go with it.
                        eprintln!(
                            "warning: {} holds this daemon's token and lies in a folder that is often committed: \
                             keep it out of version control (e.g. list it in .gitignore), or set up without --repo \
                             (the user-wide file), or without --http (no token needed)",
                            file.display(),
                        )
                    }
                    None => {}
                }
            }
            Ok(Outcome::Unchanged) => crate::outln!("{:<15} already set    {}", agent.name, file.display()),
            Ok(Outcome::DryRun { content }) => crate::outln!("# {} ({})\n{content}", file.display(), agent.title),
            Err(err) => {
                failed = true;
                crate::outln!("{:<15} FAILED         {}: {}", agent.name, file.display(), err.message);
                if let Some(hint) = &err.hint {
                    crate::outln!("                hint: {hint}");
                }
            }
        }
    }
    Ok(if failed { 1 } else { 0 })
}

/// JSON snippets that register docdex with MCP clients (Claude Desktop, Cursor, VS Code and
/// others share the `mcpServers` shape).
pub(crate) fn mcp_config(loaded: &LoadedConfig, repo_opt: Option<PathBuf>) -> Result<String> {
    let exe = std::env::current_exe()?;
    let repo = match repo_opt {
        Some(repo) => std::fs::canonicalize(&repo)
            .map_err(|_| DocdexError::repo_not_found(&repo.display().to_string(), "does not exist"))?,
        None => std::env::current_dir()?,
    };
    let args = ["mcp".to_string(), "--repo".to_string(), repo.display().to_string()];
    let stdio_server =
        crate::cli::setup::stdio_entry(&exe.display().to_string(), &args, &crate::cli::setup::stdio_env(loaded));
    let stdio = serde_json::json!({ "mcpServers": { "docdex": stdio_server } });
    let mut http_server = serde_json::json!({
        "type": "http",
        "url": format!("http://{}/v1/mcp", loaded.config.server.http_bind_addr),
    });
    if let Some(token) = config::daemon_token(loaded)? {
        http_server["headers"] = serde_json::json!({ "Authorization": format!("Bearer {token}") });
    }
    let http = serde_json::json!({ "mcpServers": { "docdex": http_server } });
    Ok(format!(
        "# stdio: the client starts docdex itself\n{}\n\n# HTTP: a running `docdexd daemon`\n{}\n",
        serde_json::to_string_pretty(&stdio)?,
        serde_json::to_string_pretty(&http)?
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_that_holds_the_token_and_its_backup_are_private() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let agent = AGENTS.iter().find(|a| matches!(a.format, Format::Json { .. })).unwrap();
        let file = dir.path().join("mcp.json");
        let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
        // An existing 0600 file stays 0600 when the token is written into it, and so does
        // its backup; a 0644 one becomes 0600.
        for before in [0o600, 0o644] {
            std::fs::write(&file, "{\"mcpServers\": {\"other\": {\"command\": \"x\"}}}").unwrap();
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(before)).unwrap();
            let server = Server::Http {
                url: "http://127.0.0.1:1/v1/mcp".into(),
                token_opt: Some("secret".into()),
                project: false,
            };
            let Outcome::Written { backup_opt: Some(backup) } = apply(agent, &file, &server, false).unwrap() else {
                panic!("not written")
            };
            assert_eq!(mode(&file), 0o600, "from {before:o}");
            assert_eq!(mode(&backup), 0o600, "backup from {before:o}");
        }
        // Without a token, a file keeps its mode.
        let plain = dir.path().join("plain.json");
        std::fs::write(&plain, "{}").unwrap();
        std::fs::set_permissions(&plain, std::fs::Permissions::from_mode(0o644)).unwrap();
        let stdio = Server::Stdio { command: "docdexd".into(), args: vec!["mcp".into()], env: Vec::new() };
        apply(agent, &plain, &stdio, false).unwrap();
        assert_eq!(mode(&plain), 0o644);
    }

    #[test]
    fn readme_matches_the_agent_table() {
        let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/agents.md")).unwrap();
        assert!(
            readme.contains(&readme_section()),
            "docs/agents.md's agent sections are stale; paste:\n{}",
            readme_section()
        );
    }
}
