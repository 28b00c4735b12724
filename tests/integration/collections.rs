//! Collections: folders registered by name, indexed, watched and searched like a repo, over
//! HTTP and the CLI (MCP in tests/mcp/client.py). Real daemon, real HTTP.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::common::{write, Home, Server};

fn call(server: &Server, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
    let client = server.blocking_client();
    let url = server.url(path);
    let request = match method {
        "POST" => client.post(url).json(&body.unwrap_or(json!({}))),
        "DELETE" => client.delete(url).json(&json!({})),
        _ => client.get(url),
    };
    let response = request.send().unwrap();
    let status = response.status().as_u16();
    (status, response.json().unwrap())
}

fn paths(body: &Value) -> Vec<String> {
    body["hits"]
        .as_array()
        .map(|h| h.iter().map(|h| h["path"].as_str().unwrap().to_string()).collect())
        .unwrap_or_default()
}

#[test]
fn a_collection_is_added_searched_watched_listed_and_removed_over_http_and_the_cli() {
    let served = tempfile::tempdir().unwrap();
    let notes = served.path().join("notes");
    write(
        &notes,
        "runbooks/failover.md",
        "# Failover\n\nPromote the standby database when the primary stops answering.\n",
    );
    write(&notes, "decisions/queues.md", "# Queues\n\nWe chose a durable queue for invoices.\n");
    let app = served.path().join("app");
    write(&app, "src/billing.rs", "/// Sends each invoice to the durable queue.\npub fn enqueue_invoice() {}\n");
    let outside = tempfile::tempdir().unwrap();
    let home = Home::with_config("[watcher]\ndebounce_ms = 100\n");
    let roots = served.path().display().to_string();
    let server = Server::start_with_env(&home, &[], &[("DOCDEX_ALLOWED_ROOTS", roots.as_str())]);

    let (status, added) = call(&server, "POST", "/v1/collections", Some(json!({"name": "notes", "path": notes})));
    assert_eq!(status, 200, "{added}");
    assert_eq!((added["name"].as_str(), added["files"].as_u64()), (Some("notes"), Some(2)), "{added}");
    let (status, body) = call(&server, "GET", "/v1/search?collection=notes&q=standby%20database&mode=lexical", None);
    assert_eq!(status, 200, "{body}");
    assert_eq!(paths(&body)[0], "runbooks/failover.md", "{body}");

    // Watched: a new note is found without asking for an index run.
    write(&notes, "runbooks/rotate.md", "# Rotation\n\nRotate the signing certificate every spring.\n");
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (_, body) = call(&server, "GET", "/v1/search?collection=notes&q=signing%20certificate&mode=lexical", None);
        if paths(&body).first().map(String::as_str) == Some("runbooks/rotate.md") {
            break;
        }
        assert!(Instant::now() < deadline, "the new note was never found: {body}");
        std::thread::sleep(Duration::from_millis(200));
    }

    // Beside a repo: one ranking, each hit naming where it is from.
    let (status, body) = call(
        &server,
        "GET",
        &format!("/v1/search?collection=notes&repo={}&q=durable%20queue%20invoices&mode=lexical", app.display()),
        None,
    );
    assert_eq!(status, 200, "{body}");
    let from: Vec<(&str, &str)> = body["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| (h["repo"].as_str().unwrap(), h["path"].as_str().unwrap()))
        .collect();
    let notes_root = std::fs::canonicalize(&notes).unwrap().display().to_string();
    let repo_root = std::fs::canonicalize(&app).unwrap().display().to_string();
    assert!(from.contains(&(notes_root.as_str(), "decisions/queues.md")), "{body}");
    assert!(from.contains(&(repo_root.as_str(), "src/billing.rs")), "{body}");

    let (status, listed) = call(&server, "GET", "/v1/collections", None);
    assert_eq!(status, 200, "{listed}");
    let listed = &listed["collections"][0];
    assert_eq!((listed["name"].as_str(), listed["indexed"].as_bool()), (Some("notes"), Some(true)), "{listed}");
    assert_eq!(listed["files"], 3, "{listed}");

    // Refused, each with its reason: the name taken by another folder, a folder outside what
    // the daemon serves, a name that is not one, a folder that is not there.
    let refusals = [
        (json!({"name": "notes", "path": app}), 409, "conflict"),
        (json!({"name": "elsewhere", "path": outside.path()}), 403, "path_refused"),
        (json!({"name": "../up", "path": notes}), 400, "invalid_request"),
        (json!({"name": "gone", "path": served.path().join("nothing")}), 404, "repo_not_found"),
        (json!({"name": "x", "path": notes, "recursive": true}), 400, "invalid_request"),
    ];
    for (body, status, code) in refusals {
        let (got, answer) = call(&server, "POST", "/v1/collections", Some(body.clone()));
        assert_eq!((got, answer["error"]["code"].as_str()), (status, Some(code)), "{body}: {answer}");
    }

    let (status, removed) = call(&server, "DELETE", "/v1/collections/notes", None);
    assert_eq!(status, 200, "{removed}");
    assert_eq!(removed["path"], notes_root);
    let (status, body) = call(&server, "GET", "/v1/search?collection=notes&q=standby", None);
    assert_eq!((status, body["error"]["code"].as_str()), (404, Some("not_found")), "{body}");
    let (status, body) = call(&server, "DELETE", "/v1/collections/notes", None);
    assert_eq!(status, 404, "{body}");
    assert!(notes.join("runbooks/failover.md").is_file(), "the folder is left as it is");

    // The CLI, through the daemon.
    let cli = |args: &[&str]| {
        let out = home.run(args);
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        assert!(out.status.success(), "{args:?}: {text}{}", String::from_utf8_lossy(&out.stderr));
        text
    };
    assert!(cli(&["collection", "add", "team-notes", notes.to_str().unwrap()]).contains("collection team-notes added"));
    let listed: Value = serde_json::from_str(&cli(&["collection", "list", "--json"])).unwrap();
    assert_eq!(listed["collections"][0]["name"], "team-notes", "{listed}");
    let found = cli(&["search", "--collection", "team-notes", "--mode", "lexical", "standby", "database"]);
    assert!(found.contains("runbooks/failover.md"), "{found}");
    // Beside a repo on the CLI too: both are searched, not the collection alone.
    let app_arg = app.to_str().unwrap();
    let both =
        cli(&["search", "--collection", "team-notes", "--repo", app_arg, "--mode", "lexical", "durable", "queue"]);
    assert!(both.contains("decisions/queues.md") && both.contains("src/billing.rs"), "{both}");
    drop(server);

    // A daemon that starts mounts (and so watches) every collection before any search.
    let server = Server::start_with_env(&home, &[], &[("DOCDEX_ALLOWED_ROOTS", roots.as_str())]);
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (_, repos) = call(&server, "GET", "/v1/repos", None);
        if repos.as_array().unwrap().iter().any(|r| r["repo"] == notes_root.as_str()) {
            break;
        }
        assert!(Instant::now() < deadline, "the collection was not mounted at start: {repos}");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(cli(&["collection", "remove", "team-notes"]).contains("removed"));
    let (_, listed) = call(&server, "GET", "/v1/collections", None);
    assert_eq!(listed["collections"], json!([]), "{listed}");
}
