//! The chat-side commands of `docdexd`: `chat` (one question or a REPL), `dag list|view`,
//! `llm-list` and `llm-setup` (`bench-chat` is in `docdex-bench`). Like the rest of the CLI
//! they call the ToolDispatcher and render.

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::actors::chat::ChatStart;
use crate::actors::tool_dispatcher::chat::{Chat, DagGet, DagSessions, LlmModels};
use crate::config::LoadedConfig;
use crate::daemon::client::Backend;
use crate::llm::hardware::{self, Advice, Hardware};
use crate::llm::{ChatMessage, StreamEvent, Usage};
use crate::protocol::{ChatContext, ChatRequest, DocdexError, ErrorCode, Result};

/// Options of `docdexd chat`.
pub struct ChatOptions {
    pub repo: PathBuf,
    pub query_opt: Option<String>,
    pub force_web: bool,
    /// The diff whose code goes first in the context.
    pub diff_opt: Option<crate::protocol::impact::DiffBase>,
    pub model_opt: Option<String>,
    pub max_tokens_opt: Option<usize>,
    pub json: bool,
}

/// The outcome of one streamed answer.
pub struct Answer {
    pub context: ChatContext,
    pub text: String,
    pub finish_reason: String,
    pub usage_opt: Option<Usage>,
    /// From sending the request to the first piece of text.
    pub first_token_ms: Option<f64>,
    pub total_ms: f64,
}

/// Runs one turn (in this process or through the daemon), handing each piece of text to
/// `on_text` as it arrives.
pub async fn ask(
    backend: &Backend,
    request: ChatRequest,
    mut on_text: impl FnMut(&str) -> Result<()>,
) -> Result<Answer> {
    let started = Instant::now();
    let mut first_token_ms = None;
    let mut timed = |piece: &str| {
        first_token_ms.get_or_insert_with(|| started.elapsed().as_secs_f64() * 1000.0);
        on_text(piece)
    };
    let (context, text, finish) = match backend {
        Backend::Daemon(daemon) => {
            let (context, text, usage_opt) = daemon.chat(&request, &mut timed).await?;
            (context, text, ("stop".to_string(), usage_opt))
        }
        Backend::Local(actors) => {
            let ChatStart { context, mut events } = actors.dispatcher.send(Chat(request)).await??;
            let mut text = String::new();
            let mut finish = ("stop".to_string(), None);
            while let Some(event) = events.recv().await {
                match event? {
                    StreamEvent::Delta(piece) => {
                        text.push_str(&piece);
                        timed(&piece)?;
                    }
                    StreamEvent::Done { finish_reason, usage_opt } => finish = (finish_reason, usage_opt),
                }
            }
            (context, text, finish)
        }
    };
    Ok(Answer {
        context,
        text,
        finish_reason: finish.0,
        usage_opt: finish.1,
        first_token_ms,
        total_ms: started.elapsed().as_secs_f64() * 1000.0,
    })
}

fn print_now(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Err(err) if err.kind() != std::io::ErrorKind::BrokenPipe => Err(err.into()),
        _ => Ok(()),
    }
}

fn render_sources(context: &ChatContext) -> String {
    let mut out = String::new();
    if context.sources.is_empty() {
        out.push_str("\nsources: none (nothing in the repo or its memory matched)\n");
    } else {
        out.push_str("\nsources:\n");
        for source in &context.sources {
            // Memory labels already say "memory #3".
            let kind = if source.memory_id.is_some() { String::new() } else { format!("{} ", source.kind.as_str()) };
            out.push_str(&format!("  [{}] {kind}{}\n", source.n, source.label));
        }
    }
    for dropped in &context.budget.dropped {
        out.push_str(&format!(
            "  (left out: {} {} — {} tokens, {})\n",
            dropped.kind.as_str(),
            dropped.label,
            dropped.tokens,
            dropped.reason
        ));
    }
    if let Some(notice) = &context.notice {
        out.push_str(&format!("notice: {notice}\n"));
    }
    out.push_str(&format!(
        "session: {} (docdexd dag view --repo {} {})\n",
        context.session_id, context.repo, context.session_id
    ));
    out
}

pub async fn run_chat(loaded: &LoadedConfig, mut options: ChatOptions) -> Result<i32> {
    options.repo = crate::daemon::client::absolute(&options.repo);
    // Through a running daemon: it holds the repo's index (the web tier may add pages).
    let backend = Backend::for_repo(loaded, &options.repo).await?;
    let result = chat_loop(&backend, &options).await;
    backend.close().await?;
    result
}

async fn chat_loop(actors: &Backend, options: &ChatOptions) -> Result<i32> {
    let request = |messages: Vec<ChatMessage>| ChatRequest {
        repo_opt: Some(options.repo.clone()),
        messages,
        model_opt: options.model_opt.clone(),
        max_tokens_opt: options.max_tokens_opt,
        temperature_opt: None,
        force_web: options.force_web,
        diff_opt: options.diff_opt.clone(),
    };
    if let Some(query) = &options.query_opt {
        let messages = vec![ChatMessage::new("user", query.clone())];
        if options.json {
            let answer = ask(actors, request(messages), |_| Ok(())).await?;
            let value = serde_json::json!({
                "answer": answer.text,
                "finish_reason": answer.finish_reason,
                "usage": answer.usage_opt,
                "first_token_ms": answer.first_token_ms,
                "total_ms": answer.total_ms,
                "docdex": answer.context,
            });
            print_now(&format!("{}\n", serde_json::to_string_pretty(&value)?))?;
        } else {
            let answer = ask(actors, request(messages), print_now).await?;
            print_now(&format!("\n{}", render_sources(&answer.context)))?;
        }
        return Ok(0);
    }
    // The REPL: the conversation so far goes with each question.
    eprintln!("docdex chat on {} — ask a question; an empty line or Ctrl-D ends.", options.repo.display());
    let mut messages: Vec<ChatMessage> = Vec::new();
    let stdin = std::io::stdin();
    loop {
        eprint!("> ");
        let mut line = String::new();
        if stdin.lock().read_line(&mut line)? == 0 {
            break;
        }
        let question = line.trim();
        if question.is_empty() || question == "exit" || question == "quit" {
            break;
        }
        messages.push(ChatMessage::new("user", question));
        match ask(actors, request(messages.clone()), print_now).await {
            Ok(answer) => {
                print_now(&format!("\n{}", render_sources(&answer.context)))?;
                messages.push(ChatMessage::new("assistant", answer.text));
            }
            Err(err) => {
                messages.pop();
                eprintln!("error: {}", err.message);
                if let Some(hint) = &err.hint {
                    eprintln!("hint: {hint}");
                }
            }
        }
    }
    Ok(0)
}

pub async fn run_dag_list(loaded: &LoadedConfig, repo: PathBuf, json: bool) -> Result<i32> {
    let actors = crate::actors::system::start_actors(loaded, None);
    let list = actors.dispatcher.send(DagSessions { repo_opt: Some(repo) }).await??;
    if json {
        print_now(&format!("{}\n", serde_json::to_string_pretty(&list)?))?;
    } else if list.sessions.is_empty() {
        print_now(&format!("no reasoning sessions recorded for {} yet (`docdexd chat` records them)\n", list.repo))?;
    } else {
        let mut out = String::new();
        for s in &list.sessions {
            out.push_str(&format!("{}  {:<8} {:>3} nodes  {}\n", s.id, s.kind, s.nodes, s.title));
        }
        print_now(&out)?;
    }
    Ok(if list.sessions.is_empty() { 1 } else { 0 })
}

pub async fn run_dag_view(loaded: &LoadedConfig, repo: PathBuf, session: String, format: &str) -> Result<i32> {
    if !matches!(format, "text" | "dot" | "json") {
        return Err(DocdexError::invalid(format!("--format must be text, dot or json, got `{format}`")));
    }
    let actors = crate::actors::system::start_actors(loaded, None);
    let view = actors.dispatcher.send(DagGet { repo_opt: Some(repo), session }).await??;
    let text = match format {
        "dot" => crate::index::dag::render_dot(&view),
        "json" => format!("{}\n", serde_json::to_string_pretty(&view)?),
        _ => crate::index::dag::render_text(&view),
    };
    print_now(&text)?;
    Ok(0)
}

/// The machine as detected, or as given on the command line (to see another tier's advice).
fn hardware_of(ram_gb_opt: Option<f64>, vram_gb_opt: Option<f64>) -> Hardware {
    let mut hw = hardware::detect();
    if ram_gb_opt.is_some() || vram_gb_opt.is_some() {
        hw.simulated = true;
    }
    if let Some(ram) = ram_gb_opt {
        hw.ram_gb = ram;
    }
    if let Some(vram) = vram_gb_opt {
        // 0 means "no GPU".
        hw.vram_gb = (vram > 0.0).then_some(vram);
        hw.gpu = hw.vram_gb.map(|_| "given with --vram-gb".into());
    }
    hw
}

/// Advice plus what the configured server said (or why it could not be asked).
async fn advice(loaded: &LoadedConfig, ram_gb_opt: Option<f64>, vram_gb_opt: Option<f64>) -> (Advice, Option<String>) {
    let hw = hardware_of(ram_gb_opt, vram_gb_opt);
    let actors = crate::actors::system::start_actors(loaded, None);
    let (installed_opt, server_note) = match actors.dispatcher.send(LlmModels).await {
        Ok(Ok(models)) => (Some(models.into_iter().map(|m| m.id).collect::<Vec<_>>()), None),
        Ok(Err(err)) => (None, Some(err.message)),
        Err(err) => (None, Some(err.to_string())),
    };
    let list = hardware::shipped_list();
    (hardware::advise(&list, &hw, installed_opt.as_deref()), server_note)
}

fn render_advice(advice: &Advice, server_note: Option<&str>, loaded: &LoadedConfig) -> String {
    let hw = &advice.hardware;
    let mut out = format!(
        "machine: {:.1} GB RAM, {}{}\ntier:    {} ({})\n",
        hw.ram_gb,
        match (&hw.gpu, hw.vram_gb) {
            (Some(gpu), Some(vram)) => format!("GPU {gpu} with {vram:.1} GB VRAM"),
            _ => "no GPU".into(),
        },
        if hw.simulated { " (simulated)" } else { "" },
        advice.tier.name,
        advice.tier.description
    );
    let llm = &loaded.config.llm;
    out.push_str(&format!("server:  {} at {}", llm.provider, llm.base_url));
    match server_note {
        Some(note) => out.push_str(&format!(" — not reachable: {note}\n")),
        None => out.push_str(" — reachable\n"),
    }
    out.push_str("\n  model                 tier         params  download  needs RAM  fits  installed\n");
    for m in &advice.models {
        out.push_str(&format!(
            "{} {:<21} {:<12} {:>6} {:>7.1} GB {:>6} GB  {:<5} {}\n",
            if m.recommended { "*" } else { " " },
            m.spec.name,
            m.spec.tier,
            m.spec.params,
            m.spec.download_gb,
            m.spec.min_ram_gb,
            if m.fits { "yes" } else { "no" },
            match m.installed {
                Some(true) => "yes",
                Some(false) => "no",
                None => "?",
            }
        ));
    }
    match &advice.recommended {
        Some(name) => out.push_str(&format!("\nrecommended: {name} (*)\n")),
        None => out.push_str("\nno listed model fits this machine\n"),
    }
    for note in &advice.notes {
        out.push_str(&format!("note: {note}\n"));
    }
    out
}

pub async fn run_llm_list(
    loaded: &LoadedConfig,
    ram_gb_opt: Option<f64>,
    vram_gb_opt: Option<f64>,
    json: bool,
) -> Result<i32> {
    let (advice, server_note) = advice(loaded, ram_gb_opt, vram_gb_opt).await;
    if json {
        let value = serde_json::json!({ "advice": advice, "server_error": server_note });
        print_now(&format!("{}\n", serde_json::to_string_pretty(&value)?))?;
    } else {
        print_now(&render_advice(&advice, server_note.as_deref(), loaded))?;
    }
    Ok(0)
}

/// Shows what to pull and, with `yes`, sets `[llm] default_model` in the config file
/// (comments and layout kept). Never installs or pulls anything.
pub async fn run_llm_setup(
    loaded: &LoadedConfig,
    ram_gb_opt: Option<f64>,
    vram_gb_opt: Option<f64>,
    yes: bool,
) -> Result<i32> {
    let (advice, server_note) = advice(loaded, ram_gb_opt, vram_gb_opt).await;
    let mut out = render_advice(&advice, server_note.as_deref(), loaded);
    let Some(model) = advice.recommended.clone() else {
        print_now(&out)?;
        return Ok(1);
    };
    let installed = advice.models.iter().any(|m| m.spec.name == model && m.installed == Some(true));
    let llm = &loaded.config.llm;
    out.push('\n');
    if !installed {
        match crate::config::ProviderKind::parse(&llm.provider) {
            Some(crate::config::ProviderKind::Ollama) => {
                out.push_str(&format!("to get it: ollama pull {model}   (docdex does not pull models itself)\n"))
            }
            _ => out.push_str(&format!(
                "to get it: download a GGUF build of {model} and serve it with an OpenAI-compatible server (llama-server -m <file> --port 8080)\n"
            )),
        }
    }
    if llm.default_model == model {
        out.push_str(&format!("[llm] default_model is already {model}\n"));
    } else if yes {
        set_default_model(&loaded.path, &model)?;
        out.push_str(&format!("set [llm] default_model = \"{model}\" in {}\n", loaded.path.display()));
    } else {
        out.push_str(&format!(
            "run `docdexd llm-setup --yes` to set [llm] default_model = \"{model}\" in {} (now \"{}\")\n",
            loaded.path.display(),
            llm.default_model
        ));
    }
    print_now(&out)?;
    Ok(0)
}

/// Rewrites one key of the config file with toml_edit, so the user's comments stay.
fn set_default_model(path: &Path, model: &str) -> Result<()> {
    let text = std::fs::read_to_string(path)?;
    let mut doc: toml_edit::DocumentMut =
        text.parse().map_err(|err| DocdexError::new(ErrorCode::ConfigInvalid, format!("{}: {err}", path.display())))?;
    let written = match uncomment_default_model(&doc, &text, model) {
        Some(edited) => edited,
        None => {
            if !doc.contains_table("llm") {
                doc["llm"] = toml_edit::table();
            }
            doc["llm"]["default_model"] = toml_edit::value(model);
            doc.to_string()
        }
    };
    let tmp = path.with_extension("toml.tmp");
    std::fs::write(&tmp, written)?;
    std::fs::rename(&tmp, path)?;
    Ok(())
}

/// A file written on first run has `# default_model = …` under its documentation: that
/// line is set, rather than a new one added above the documentation. `None` when the key is
/// live already or the edited text would not set `llm.default_model`.
fn uncomment_default_model(doc: &toml_edit::DocumentMut, text: &str, model: &str) -> Option<String> {
    fn setting(doc: &toml_edit::DocumentMut) -> Option<&toml_edit::Item> {
        doc.get("llm")?.get("default_model")
    }
    if setting(doc).is_some() {
        return None;
    }
    let at = text.find("\n# default_model = ")? + 1;
    let end = text[at..].find('\n').map_or(text.len(), |n| at + n);
    let edited = format!("{}default_model = {}{}", &text[..at], toml_edit::Value::from(model), &text[end..]);
    let parsed: toml_edit::DocumentMut = edited.parse().ok()?;
    (setting(&parsed).and_then(toml_edit::Item::as_str) == Some(model)).then_some(edited)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn llm_setup_sets_the_commented_default_model_line_of_a_first_run_file() {
        let text = crate::config::first_run_config();
        let doc: toml_edit::DocumentMut = text.parse().unwrap();
        let edited = uncomment_default_model(&doc, &text, "qwen2.5:0.5b").unwrap();
        assert!(edited.contains("\n# `docdexd llm-list` recommends one for this machine; `docdexd llm-setup --yes` sets it.\ndefault_model = \"qwen2.5:0.5b\"\n"), "{edited}");
        assert!(!edited.contains("# default_model"));
        let (config, unknown) = crate::config::parse(&edited).unwrap();
        assert!(unknown.is_empty());
        assert_eq!(config.llm.default_model, "qwen2.5:0.5b");
        // A live key is left to toml_edit.
        let live: toml_edit::DocumentMut = edited.parse().unwrap();
        assert!(uncomment_default_model(&live, &edited, "phi3.5:3.8b").is_none());
    }
}
