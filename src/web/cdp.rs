//! A small Chrome DevTools Protocol client over the browser's pipe.
//!
//! Chromium started with `--remote-debugging-pipe` reads commands from its fd 3 and writes
//! answers and events to its fd 4, each message one JSON text ended by a NUL byte. Nothing
//! listens on a port, so no other local process can drive the browser (a DevTools port on
//! loopback has no authentication: any local user could open pages with it, read its cookies
//! or reach addresses the browser can). The CDP crates on crates.io speak WebSocket only.
//!
//! One reader thread per browser routes answers to the caller waiting for their id and
//! answers paused requests (`Fetch.requestPaused`) itself, so a page's requests are judged
//! while the caller waits for the navigation that made them.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};

/// Decides whether a request a page makes may be sent: `Some(reason)` refuses it.
pub type RequestGuard = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// A command's answer: its `result`, or the browser's error text.
type Reply = std::result::Result<Value, String>;

/// How long a command other than a navigation may take.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(20);

struct Shared {
    to_browser: Mutex<File>,
    next_id: AtomicU64,
    waiting: Mutex<HashMap<u64, mpsc::Sender<Reply>>>,
    /// The judge thread of each guarded tab (its paused requests go there), by CDP session id.
    judges: Mutex<HashMap<String, mpsc::Sender<Value>>>,
    closed: AtomicBool,
}

/// A connection to one browser. Cloning shares it.
#[derive(Clone)]
pub struct Connection {
    shared: Arc<Shared>,
}

impl Connection {
    /// Starts reading `from_browser` (the browser's fd 4) on a thread of its own; commands are
    /// written to `to_browser` (its fd 3). The thread ends when the browser closes its end.
    pub fn start(to_browser: File, from_browser: File) -> std::io::Result<Connection> {
        let shared = Arc::new(Shared {
            to_browser: Mutex::new(to_browser),
            next_id: AtomicU64::new(1),
            waiting: Mutex::new(HashMap::new()),
            judges: Mutex::new(HashMap::new()),
            closed: AtomicBool::new(false),
        });
        let reader = Arc::clone(&shared);
        std::thread::Builder::new()
            .name("docdex-cdp-reader".into())
            .spawn(move || read_messages(&reader, BufReader::new(from_browser)))?;
        Ok(Connection { shared })
    }

    /// Whether the browser has closed its end (it died or was killed).
    pub fn is_closed(&self) -> bool {
        self.shared.closed.load(Ordering::SeqCst)
    }

    /// Sends a command and waits for its answer.
    pub fn call(&self, session: Option<&str>, method: &str, params: Value, timeout: Duration) -> Reply {
        let (tx, rx) = mpsc::channel();
        let id = self.shared.next_id.fetch_add(1, Ordering::SeqCst);
        lock(&self.shared.waiting).insert(id, tx);
        if let Err(err) = self.shared.send(id, session, method, params) {
            lock(&self.shared.waiting).remove(&id);
            return Err(err);
        }
        match rx.recv_timeout(timeout) {
            Ok(reply) => reply,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                lock(&self.shared.waiting).remove(&id);
                Err(format!("{method} timed out after {} s", timeout.as_secs()))
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => Err("the browser closed its connection".into()),
        }
    }

    /// The browser's product and version (`Browser.getVersion`): proves the pipe works.
    pub fn version(&self, timeout: Duration) -> Reply {
        self.call(None, "Browser.getVersion", json!({}), timeout)
            .map(|v| v.get("product").cloned().unwrap_or(Value::Null))
    }

    /// Opens a blank tab and attaches to it. With a guard, every request the tab makes is
    /// paused until the guard has judged it.
    pub fn new_tab(&self, guard_opt: Option<RequestGuard>) -> std::result::Result<Tab, String> {
        let created = self.call(None, "Target.createTarget", json!({"url": "about:blank"}), COMMAND_TIMEOUT)?;
        let target_id = str_field(&created, "targetId")?;
        let attached =
            self.call(None, "Target.attachToTarget", json!({"targetId": target_id, "flatten": true}), COMMAND_TIMEOUT)?;
        let tab = Tab { connection: self.clone(), target_id, session_id: str_field(&attached, "sessionId")? };
        if let Some(guard) = guard_opt {
            let (paused_tx, paused_rx) = mpsc::channel::<Value>();
            let (shared, session) = (Arc::clone(&self.shared), tab.session_id.clone());
            let judge = std::thread::Builder::new().name("docdex-cdp-judge".into()).spawn(move || {
                // Ends when the tab closes or the browser goes (the sender is dropped).
                for paused in paused_rx {
                    shared.judge_request(&session, &paused, &guard);
                }
            });
            if let Err(err) = judge {
                tab.close();
                return Err(format!("cannot start a tab's request judge: {err}"));
            }
            lock(&self.shared.judges).insert(tab.session_id.clone(), paused_tx);
            // Without patterns every request of the tab is paused.
            if let Err(err) = tab.call("Fetch.enable", json!({}), COMMAND_TIMEOUT) {
                tab.close();
                return Err(err);
            }
        }
        Ok(tab)
    }
}

/// An attached page target.
pub struct Tab {
    connection: Connection,
    target_id: String,
    session_id: String,
}

impl Tab {
    fn call(&self, method: &str, params: Value, timeout: Duration) -> Reply {
        self.connection.call(Some(&self.session_id), method, params, timeout)
    }

    pub fn set_user_agent(&self, user_agent: &str) -> Reply {
        self.call("Emulation.setUserAgentOverride", json!({"userAgent": user_agent}), COMMAND_TIMEOUT)
    }

    /// Asks for a page. Returns once the browser has the response (or the error) for the
    /// document; the page may still be loading.
    pub fn navigate(&self, url: &str, timeout: Duration) -> std::result::Result<(), String> {
        let answer = self.call("Page.navigate", json!({"url": url}), timeout)?;
        match answer.get("errorText").and_then(Value::as_str) {
            Some(error) if !error.is_empty() => Err(format!("Navigate failed: {error}")),
            _ => Ok(()),
        }
    }

    /// The value of a JavaScript expression in the page (thrown exceptions are errors).
    pub fn evaluate(&self, expression: &str) -> Reply {
        let answer =
            self.call("Runtime.evaluate", json!({"expression": expression, "returnByValue": true}), COMMAND_TIMEOUT)?;
        if let Some(exception) = answer.get("exceptionDetails") {
            let text = exception.pointer("/exception/description").or_else(|| exception.get("text"));
            return Err(format!("script error: {}", text.and_then(Value::as_str).unwrap_or("unknown")));
        }
        Ok(answer.pointer("/result/value").cloned().unwrap_or(Value::Null))
    }

    /// The page's URL and its rendered HTML, doctype included.
    pub fn content(&self) -> std::result::Result<(String, String), String> {
        let read = "[location.href, (document.doctype ? new XMLSerializer().serializeToString(document.doctype) : '') \
                    + (document.documentElement ? document.documentElement.outerHTML : '')]";
        let value = self.evaluate(read)?;
        match (value.get(0).and_then(Value::as_str), value.get(1).and_then(Value::as_str)) {
            (Some(url), Some(html)) => Ok((url.to_string(), html.to_string())),
            _ => Err("the page's content could not be read".into()),
        }
    }

    /// Closes the tab (its judge goes with it).
    pub fn close(&self) {
        lock(&self.connection.shared.judges).remove(&self.session_id);
        let _ = self.connection.call(
            None,
            "Target.closeTarget",
            json!({"targetId": self.target_id}),
            Duration::from_secs(5),
        );
    }
}

impl Shared {
    fn send(&self, id: u64, session: Option<&str>, method: &str, params: Value) -> std::result::Result<(), String> {
        if self.closed.load(Ordering::SeqCst) {
            return Err("the browser closed its connection".into());
        }
        let mut message = json!({"id": id, "method": method, "params": params});
        if let Some(session) = session {
            message["sessionId"] = Value::String(session.to_string());
        }
        let mut bytes = serde_json::to_vec(&message).map_err(|err| err.to_string())?;
        bytes.push(0);
        lock(&self.to_browser).write_all(&bytes).map_err(|err| format!("cannot write to the browser: {err}"))
    }

    /// A paused request: continued if the tab's guard lets it through, failed otherwise. No
    /// one waits for the browser's answer to that.
    fn judge_request(&self, session: &str, params: &Value, guard: &RequestGuard) {
        let Some(request_id) = params.get("requestId").and_then(Value::as_str) else { return };
        let url = params.pointer("/request/url").and_then(Value::as_str).unwrap_or("");
        let refusal = guard(url);
        let id = self.next_id.fetch_add(1, Ordering::SeqCst);
        let sent = match refusal {
            None => self.send(id, Some(session), "Fetch.continueRequest", json!({"requestId": request_id})),
            Some(why) => {
                tracing::debug!(url, "browser request refused: {why}");
                self.send(
                    id,
                    Some(session),
                    "Fetch.failRequest",
                    json!({"requestId": request_id, "errorReason": "AccessDenied"}),
                )
            }
        };
        if let Err(err) = sent {
            tracing::debug!(url, "cannot answer a paused request: {err}");
        }
    }
}

/// The reader thread: answers to their callers, paused requests to their tab's judge. When
/// the browser's end closes, every caller still waiting gets an error.
fn read_messages(shared: &Shared, mut from_browser: BufReader<File>) {
    let mut buffer = Vec::new();
    loop {
        buffer.clear();
        match from_browser.read_until(0, &mut buffer) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        if buffer.last() == Some(&0) {
            buffer.pop();
        }
        let Ok(message) = serde_json::from_slice::<Value>(&buffer) else { continue };
        if let Some(id) = message.get("id").and_then(Value::as_u64) {
            let Some(caller) = lock(&shared.waiting).remove(&id) else { continue };
            let reply = match message.get("error") {
                Some(error) => Err(error.get("message").and_then(Value::as_str).unwrap_or("browser error").to_string()),
                None => Ok(message.get("result").cloned().unwrap_or(Value::Null)),
            };
            let _ = caller.send(reply);
        } else if message.get("method").and_then(Value::as_str) == Some("Fetch.requestPaused") {
            let session = message.get("sessionId").and_then(Value::as_str).unwrap_or("");
            let judge_opt = lock(&shared.judges).get(session).cloned();
            if let (Some(judge), Some(params)) = (judge_opt, message.get("params")) {
                let _ = judge.send(params.clone());
            }
        }
    }
    shared.closed.store(true, Ordering::SeqCst);
    // Dropping the senders wakes every waiting caller with "closed" and ends the judges.
    lock(&shared.waiting).clear();
    lock(&shared.judges).clear();
}

fn str_field(value: &Value, field: &str) -> std::result::Result<String, String> {
    value
        .get(field)
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| format!("the browser's answer has no {field}"))
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A panic while holding one of these leaves plain data behind: keep going.
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}
