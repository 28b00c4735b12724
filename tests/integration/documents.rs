//! Documents: real PDF, HTML and DOCX files (from Debian's documentation packages, or made
//! from them by pandoc and qpdf: tests/fixtures/documents/README.md) in a collection, indexed,
//! searched with their heading paths and pages, opened by the lines hits give, a broken one
//! listed by `status` and indexed once it is fixed. Real daemon, real HTTP, the real CLI.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::common::{write, Home, Server};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/documents").join(name)
}

fn get(server: &Server, path: &str) -> (u16, Value) {
    let response = server.blocking_client().get(server.url(path)).send().unwrap();
    let status = response.status().as_u16();
    (status, response.json().unwrap())
}

fn hits(body: &Value) -> Vec<Value> {
    body["hits"].as_array().cloned().unwrap_or_default()
}

/// The first hit of `path` for a lexical search of the collection.
fn hit_of(server: &Server, query: &str, path: &str) -> Value {
    let url = format!("/v1/search?collection=manuals&mode=lexical&limit=20&q={}", query.replace(' ', "%20"));
    let (status, body) = get(server, &url);
    assert_eq!(status, 200, "{body}");
    hits(&body)
        .into_iter()
        .find(|h| h["path"] == path)
        .unwrap_or_else(|| panic!("no hit in {path} for {query}: {body}"))
}

#[test]
fn documents_are_searched_by_heading_and_page_and_a_broken_one_is_listed_until_fixed() {
    let served = tempfile::tempdir().unwrap();
    let manuals = served.path().join("manuals");
    std::fs::create_dir_all(manuals.join("specs")).unwrap();
    for name in ["libtasn1.pdf", "qemu-nbd.html", "encrypted.pdf"] {
        std::fs::copy(fixture(name), manuals.join(name)).unwrap();
    }
    std::fs::copy(fixture("shared-mime-info-spec.docx"), manuals.join("specs/mime.docx")).unwrap();
    let pdf = std::fs::read(fixture("libtasn1.pdf")).unwrap();
    std::fs::write(manuals.join("broken.pdf"), &pdf[..pdf.len() / 3]).unwrap();
    write(&manuals, "notes.md", "# Notes\n\nThe manuals folder holds vendor documentation.\n");
    let home = Home::with_config("[watcher]\ndebounce_ms = 100\n");
    let roots = served.path().display().to_string();
    let server = Server::start_with_env(&home, &[], &[("DOCDEX_ALLOWED_ROOTS", roots.as_str())]);
    let response = server
        .blocking_client()
        .post(server.url("/v1/collections"))
        .json(&json!({"name": "manuals", "path": manuals}))
        .send()
        .unwrap();
    assert_eq!(response.status().as_u16(), 200, "{}", response.text().unwrap());

    // PDF: the outline's section and the page qpdf reads from the outline's destination.
    let hit = hit_of(&server, "Invoking asn1Parser", "libtasn1.pdf");
    assert_eq!(hit["heading_path"], "3 Utilities > Invoking asn1Parser", "{hit}");
    assert_eq!(hit["page"], 8, "{hit}");
    assert_eq!(hit["language"], "pdf");
    // The CLI prints the page beside the lines.
    let out = home.run(&["search", "--collection", "manuals", "--mode", "lexical", "Invoking asn1Parser"]);
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(text.lines().any(|l| l.contains("libtasn1.pdf:") && l.contains("(page 8)")), "{text}");
    // The lines a hit gives are the lines `get` shows.
    let (status, opened) = get(
        &server,
        &format!(
            "/v1/get?repo={}&path=libtasn1.pdf&line_start={}&line_end={}",
            manuals.display(),
            hit["line_start"],
            hit["line_end"]
        ),
    );
    assert_eq!(status, 200, "{opened}");
    assert!(opened["text"].as_str().unwrap().contains("asn1Parser"), "{opened}");

    // DOCX by its heading styles; HTML by its headings (no page for either).
    let hit = hit_of(&server, "globs2 file glob weight", "specs/mime.docx");
    assert_eq!(hit["heading_path"], "2. Unified system > 2.4. The glob files", "{hit}");
    assert!(hit.get("page").is_none(), "{hit}");
    let hit = hit_of(&server, "exit on the last connection", "qemu-nbd.html");
    assert_eq!(hit["heading_path"], "QEMU Disk Network Block Device Server > Options", "{hit}");
    // Markdown is a document too.
    assert!(hit_of(&server, "vendor documentation", "notes.md")["heading_path"] == "Notes");

    // Status: formats counted, the two documents that cannot be read listed with why.
    let (status, repo_status) = get(&server, &format!("/v1/status?repo={}", manuals.display()));
    assert_eq!(status, 200, "{repo_status}");
    let documents = &repo_status["documents"];
    assert_eq!(documents["formats"], json!({"docx": 1, "html": 1, "pdf": 1}), "{repo_status}");
    let skipped: Vec<(&str, &str)> = documents["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["path"].as_str().unwrap(), s["reason"].as_str().unwrap()))
        .collect();
    assert_eq!(skipped.len(), 2, "{repo_status}");
    assert_eq!(skipped[0].0, "broken.pdf");
    assert!(skipped[1].0 == "encrypted.pdf" && skipped[1].1.contains("password"), "{skipped:?}");
    let text = home.run(&["status", "--repo", manuals.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&text.stdout).to_string();
    assert!(
        text.contains("documents:   docx 1, html 1, pdf 1") && text.contains("skipped:     encrypted.pdf: "),
        "{text}"
    );
    // Opening a broken document says why.
    let (status, refused) = get(&server, &format!("/v1/get?repo={}&path=broken.pdf", manuals.display()));
    assert_eq!((status, refused["error"]["code"].as_str()), (415, Some("unsupported_media_type")), "{refused}");

    // The broken PDF fixed: the watcher indexes it, and status lists it no more.
    std::fs::write(manuals.join("broken.pdf"), &pdf).unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (_, repo_status) = get(&server, &format!("/v1/status?repo={}", manuals.display()));
        if repo_status["documents"]["formats"]["pdf"] == 2 {
            assert_eq!(repo_status["documents"]["skipped"].as_array().unwrap().len(), 1, "{repo_status}");
            break;
        }
        assert!(Instant::now() < deadline, "the fixed PDF was never indexed: {repo_status}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn the_document_bench_reports_pages_per_second_and_what_it_could_not_read() {
    let home = Home::new();
    let fixtures = fixture("");
    let report = home.bench_json(&["bench-documents", fixtures.to_str().unwrap(), "--runs", "1", "--json"]);
    let pdf = &report["formats"]["pdf"];
    assert_eq!((pdf["files"].as_u64(), pdf["pages"].as_u64()), (Some(2), Some(36)), "{report}");
    assert!(pdf["pages_per_sec"].as_f64().unwrap() > 0.0, "{report}");
    let failed = pdf["failed"].as_array().unwrap();
    assert!(failed.len() == 1 && failed[0].as_str().unwrap().starts_with("encrypted.pdf: "), "{report}");
    assert_eq!(report["formats"]["docx"]["files"], 1, "{report}");
    assert_eq!(report["formats"]["html"]["files"], 2, "{report}");
}
