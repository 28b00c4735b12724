//! Per-repo memory: save/recall/delete over the CLI and HTTP, persistence, isolation between
//! repos, and the lexical fallback without a model.

use crate::common::{repo_with, Home, Server};

fn indexed_repo(home: &Home, name: &str) -> tempfile::TempDir {
    let repo = repo_with(&[("README.md", &format!("# {name}\n\nA small project.\n"))]);
    home.index(repo.path());
    repo
}

fn recall(
    home: &Home,
    repo: &std::path::Path,
    query: &str,
    extra_env: Option<(&str, &std::path::Path)>,
) -> serde_json::Value {
    let mut cmd = home.cmd();
    cmd.args(["memory", "recall", "--repo", repo.to_str().unwrap(), "--json", "--k", "5", query]);
    if let Some((key, value)) = extra_env {
        cmd.env(key, value);
    }
    let out = cmd.output().unwrap();
    assert!(matches!(out.status.code(), Some(0 | 1)), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn save_recall_delete_round_trip_survives_restarts_and_stays_in_its_repo() {
    let home = Home::with_model();
    let repo_a = indexed_repo(&home, "alpha");
    let repo_b = indexed_repo(&home, "beta");
    let a = repo_a.path().to_str().unwrap();

    let first = home.json(&[
        "memory",
        "save",
        "--repo",
        a,
        "--json",
        "--metadata",
        r#"{"topic":"deploy"}"#,
        "Deploys go out every Tuesday after the freeze lifts",
    ]);
    let second = home.json(&[
        "memory",
        "save",
        "--repo",
        a,
        "--json",
        "The billing service retries failed card charges three times",
    ]);
    assert_eq!(first["metadata"]["topic"], "deploy");
    assert_ne!(first["id"], second["id"]);

    // Each CLI call is a new process: recall reads what earlier processes saved.
    let found = recall(&home, repo_a.path(), "when do we ship releases", None);
    assert_eq!(found["mode"], "dense", "{found}");
    assert_eq!(found["items"][0]["id"], first["id"], "{found}");
    assert_eq!(found["items"][0]["metadata"]["topic"], "deploy");
    assert!(found["items"][0]["score"].as_f64().unwrap() > 0.2);

    // Notes as far from the question as unrelated text are not recalled by it.
    let unrelated = recall(&home, repo_a.path(), "xylophone tuning", None);
    for item in unrelated["items"].as_array().unwrap() {
        assert!(item["score"].as_f64().unwrap() >= 0.1, "{unrelated}");
    }

    // Memories never cross repos.
    let other = recall(&home, repo_b.path(), "when do we ship releases", None);
    assert!(other["items"].as_array().unwrap().is_empty(), "{other}");

    let deleted = home.json(&["memory", "delete", "--repo", a, "--json", &first["id"].to_string()]);
    assert_eq!(deleted["deleted"], true);
    let after = recall(&home, repo_a.path(), "when do we ship releases", None);
    assert!(after["items"].as_array().unwrap().iter().all(|i| i["id"] != first["id"]), "{after}");
    let again = home.run(&["memory", "delete", "--repo", a, &first["id"].to_string()]);
    assert_eq!(again.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&again.stderr).contains("no memory with id"));
}

#[test]
fn without_a_model_recall_matches_words_and_says_so() {
    let home = Home::with_model();
    let repo = indexed_repo(&home, "gamma");
    let empty_models = tempfile::tempdir().unwrap();
    let no_model = Some(("DOCDEX_MODELS_DIR", empty_models.path()));
    for text in ["The cache is flushed on every deploy", "Logs rotate daily", "Deploy notes live in the wiki"] {
        let out = home
            .cmd()
            .args(["memory", "save", "--repo", repo.path().to_str().unwrap(), text])
            .env("DOCDEX_MODELS_DIR", empty_models.path())
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let found = recall(&home, repo.path(), "deploy", no_model);
    assert_eq!(found["mode"], "lexical", "{found}");
    assert!(found["notice"].as_str().unwrap().contains("embedding model unavailable"));
    let texts: Vec<&str> = found["items"].as_array().unwrap().iter().map(|i| i["text"].as_str().unwrap()).collect();
    // Both mention deploy; equal scores come newest first.
    assert_eq!(texts, ["Deploy notes live in the wiki", "The cache is flushed on every deploy"]);

    // With the model back, the notes saved without vectors are embedded and recalled by meaning.
    let later = recall(&home, repo.path(), "rotating log files", None);
    assert_eq!(later["mode"], "dense");
    assert_eq!(later["items"][0]["text"], "Logs rotate daily", "{later}");
}

#[tokio::test]
async fn memory_over_http() {
    let home = Home::new();
    let repo = indexed_repo(&home, "delta");
    let server = Server::start(&home, &["--repo", repo.path().to_str().unwrap()]);
    let client = server.client();
    let saved: serde_json::Value = client
        .post(server.url("/v1/memory"))
        .json(&serde_json::json!({"text": "Feature flags live in config/flags.toml", "metadata": {"area": "config"}}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let id = saved["id"].as_u64().unwrap();
    let recalled: serde_json::Value = client
        .post(server.url("/v1/memory/recall"))
        .json(&serde_json::json!({"query": "where are the feature toggles", "k": 2}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(recalled["items"][0]["id"], id, "{recalled}");
    let bad = client.post(server.url("/v1/memory")).json(&serde_json::json!({"txt": "typo"})).send().await.unwrap();
    assert_eq!(bad.status().as_u16(), 400);
    let body: serde_json::Value = bad.json().await.unwrap();
    assert!(body["error"]["message"].as_str().unwrap().contains("txt"), "{body}");
    // A bare DELETE, as curl sends it: no body, so no content type to ask for.
    let deleted = client.delete(server.url(&format!("/v1/memory/{id}"))).send().await.unwrap();
    assert_eq!(deleted.status().as_u16(), 200);
    let missing = client
        .delete(server.url(&format!("/v1/memory/{id}")))
        .header("content-type", "application/json")
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status().as_u16(), 404);
}

/// `memory list` shows a repo's notes newest first, from the shell (locally and through a
/// daemon) and over HTTP.
#[test]
fn memory_list_shows_the_notes_newest_first_on_every_surface() {
    let home = Home::new();
    let repo = indexed_repo(&home, "listed");
    let path = repo.path().to_str().unwrap();
    for text in ["The first note", "The second note", "The third note"] {
        let out = home.run(&["memory", "save", "--repo", path, text]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let listed = home.json(&["memory", "list", "--repo", path, "--json", "--limit", "2"]);
    assert_eq!(listed["total"], 3, "{listed}");
    let texts: Vec<&str> = listed["items"].as_array().unwrap().iter().map(|i| i["text"].as_str().unwrap()).collect();
    assert_eq!(texts, ["The third note", "The second note"], "{listed}");

    let server = Server::start(&home, &[]);
    let through_daemon = home.json(&["memory", "list", "--repo", path, "--json"]);
    assert_eq!(through_daemon["total"], 3, "{through_daemon}");
    let body: serde_json::Value = server
        .blocking_client()
        .get(server.url(&format!("/v1/memory?repo={path}&limit=1")))
        .send()
        .unwrap()
        .json()
        .unwrap();
    assert_eq!(body["items"][0]["text"], "The third note", "{body}");
}
