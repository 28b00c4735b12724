//! A stand-in for Ollama (no Ollama binary can be had here) that speaks its documented API:
//! `GET /api/tags`, `POST /api/show` (model info with `<arch>.context_length`) and
//! `POST /api/chat` streaming NDJSON (`{"message": {"content"}, "done": false}` lines, then a
//! `done: true` line with `done_reason` and the eval counts); an unknown model is a 404 with
//! `{"error": "..."}` as Ollama answers. It keeps every request body it receives.

use std::io::Write;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};

pub struct OllamaStub {
    pub addr: SocketAddr,
    /// (path, body) of every request.
    pub requests: Mutex<Vec<(String, Value)>>,
    pub models: Vec<String>,
    pub context_length: u64,
    /// The answer, streamed one piece per line.
    pub pieces: Vec<String>,
}

impl OllamaStub {
    pub fn start(models: &[&str], context_length: u64, pieces: &[&str]) -> Arc<OllamaStub> {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let stub = Arc::new(OllamaStub {
            addr: listener.local_addr().unwrap(),
            requests: Mutex::new(Vec::new()),
            models: models.iter().map(|m| m.to_string()).collect(),
            context_length,
            pieces: pieces.iter().map(|p| p.to_string()).collect(),
        });
        let server = Arc::clone(&stub);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let server = Arc::clone(&server);
                std::thread::spawn(move || server.serve(stream));
            }
        });
        stub
    }

    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Bodies of the requests to `path`.
    pub fn bodies(&self, path: &str) -> Vec<Value> {
        self.requests.lock().unwrap().iter().filter(|(p, _)| p == path).map(|(_, b)| b.clone()).collect()
    }

    fn serve(&self, mut stream: TcpStream) {
        let Some((path, body)) = crate::fakeweb::read_request(&stream) else { return };
        let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        self.requests.lock().unwrap().push((path.clone(), body.clone()));
        let model = body["model"].as_str().unwrap_or_default().to_string();
        let known = self.models.contains(&model);
        let reply = |stream: &mut TcpStream, status: &str, value: Value| {
            let text = value.to_string();
            let head = format!(
                "HTTP/1.1 {status}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                text.len()
            );
            let _ = stream.write_all(head.as_bytes());
            let _ = stream.write_all(text.as_bytes());
        };
        match path.as_str() {
            "/api/tags" => {
                let models: Vec<Value> = self
                    .models
                    .iter()
                    .map(
                        |m| json!({ "name": m, "model": m, "size": 2_200_000_000u64, "details": { "family": "phi3" } }),
                    )
                    .collect();
                reply(&mut stream, "200 OK", json!({ "models": models }));
            }
            "/api/show" if known => reply(
                &mut stream,
                "200 OK",
                json!({ "model_info": { "general.architecture": "phi3", "phi3.context_length": self.context_length } }),
            ),
            "/api/show" | "/api/chat" if !known => reply(
                &mut stream,
                "404 Not Found",
                json!({ "error": format!("model \"{model}\" not found, try pulling it first") }),
            ),
            "/api/chat" => {
                // Streamed as Ollama does: NDJSON, one object per line, chunked transfer.
                let head =
                    "HTTP/1.1 200 OK\r\nContent-Type: application/x-ndjson\r\nTransfer-Encoding: chunked\r\n\r\n";
                let _ = stream.write_all(head.as_bytes());
                let chunk = |stream: &mut TcpStream, value: Value| {
                    let line = format!("{value}\n");
                    stream.write_all(format!("{:x}\r\n{line}\r\n", line.len()).as_bytes())
                };
                for piece in &self.pieces {
                    let line = json!({
                        "model": model,
                        "created_at": "2026-11-23T21:00:00Z",
                        "message": { "role": "assistant", "content": piece },
                        "done": false,
                    });
                    if chunk(&mut stream, line).is_err() {
                        return;
                    }
                    std::thread::sleep(Duration::from_millis(5));
                }
                let last = json!({
                    "model": model,
                    "created_at": "2026-11-23T21:00:01Z",
                    "message": { "role": "assistant", "content": "" },
                    "done": true,
                    "done_reason": "stop",
                    "total_duration": 1_000_000u64,
                    "prompt_eval_count": 321,
                    "eval_count": self.pieces.len(),
                });
                let _ = chunk(&mut stream, last);
                let _ = stream.write_all(b"0\r\n\r\n");
            }
            _ => reply(&mut stream, "404 Not Found", json!({ "error": "not found" })),
        }
        let _ = stream.flush();
    }
}
