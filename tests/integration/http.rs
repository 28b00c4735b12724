//! The HTTP API end to end over loopback against a real `docdexd serve`.

use crate::common::{get, hit_paths, sample_repo, Home, Server};

#[tokio::test]
async fn search_over_http_matches_the_cli() {
    let repo = sample_repo();
    let home = Home::new();
    let server = Server::start(&home, &["--repo", repo.path().to_str().unwrap()]);

    let (status, health) = get(&server.url("/healthz"), None).await;
    assert_eq!(status, 200);
    assert_eq!(health["status"], "ok");

    let (status, body) = get(&server.url("/v1/search?q=WorkerPool%20run_detached&limit=5"), None).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(hit_paths(&body).first().map(String::as_str), Some("src/pool.rs"));
    assert!(body["took_ms"].as_f64().unwrap() >= 0.0);

    let (_, status_body) = get(&server.url("/v1/status"), None).await;
    assert_eq!(status_body["indexed"], true);
    assert_eq!(status_body["files"], 4);

    // The CLI, reading the same state, gives the same hits.
    let cli = home.search(repo.path(), "WorkerPool run_detached");
    assert_eq!(hit_paths(&cli)[..1], hit_paths(&body)[..1]);
    assert_eq!(cli["hits"][0]["snippet"], body["hits"][0]["snippet"]);
}

#[tokio::test]
async fn malformed_requests_get_documented_errors() {
    let repo = sample_repo();
    let home = Home::new();
    let server = Server::start(&home, &["--repo", repo.path().to_str().unwrap()]);

    let cases = [
        ("/v1/search", 400, "invalid_request"),
        ("/v1/search?q=", 400, "invalid_request"),
        ("/v1/search?q=x&limit=abc", 400, "invalid_request"),
        ("/v1/search?q=x&limit=0", 400, "invalid_request"),
        ("/v1/search?q=x&limit=100000", 400, "invalid_request"),
        ("/v1/search?q=x&repo=/no/such/repo", 404, "repo_not_found"),
        ("/v1/nope", 404, "not_found"),
    ];
    for (path, want_status, want_code) in cases {
        let (status, body) = get(&server.url(path), None).await;
        assert_eq!(status, want_status, "{path}: {body}");
        assert_eq!(body["error"]["code"], want_code, "{path}: {body}");
        assert!(!body["error"]["message"].as_str().unwrap().is_empty());
    }
    let unindexed = tempfile::tempdir().unwrap();
    let url = server.url(&format!("/v1/search?q=x&repo={}", unindexed.path().display()));
    let (status, body) = get(&url, None).await;
    assert_eq!(status, 404);
    assert_eq!(body["error"]["code"], "repo_not_indexed");
    assert!(body["error"]["hint"].as_str().unwrap().contains("docdexd index --repo"));
}

#[tokio::test]
async fn auth_token_is_enforced_when_set() {
    let repo = sample_repo();
    let home = Home::new();
    let server = Server::start(&home, &["--repo", repo.path().to_str().unwrap(), "--auth-token", "s3cret"]);
    for path in ["/healthz", "/v1/search?q=WorkerPool"] {
        let (status, body) = get(&server.url(path), None).await;
        assert_eq!(status, 401, "{path}");
        assert_eq!(body["error"]["code"], "unauthorized");
        let (status, _) = get(&server.url(path), Some("wrong")).await;
        assert_eq!(status, 401, "{path}");
        let (status, _) = get(&server.url(path), Some("s3cret")).await;
        assert_eq!(status, 200, "{path}");
    }
}

#[test]
fn non_loopback_bind_requires_expose_and_a_token() {
    let home = Home::new();
    let out = home.run(&["serve", "--bind", "0.0.0.0:0"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--expose"));
    let out = home.run(&["serve", "--bind", "0.0.0.0:0", "--expose"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("without an auth token"));
}
