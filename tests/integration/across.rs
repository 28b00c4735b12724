//! One search over several repos (`repos`, `group`): hits attributed to their repo, scores
//! comparable across repos of very different sizes (judged), and nothing from a repo the
//! daemon may not serve. Real daemon, real HTTP, real repos.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::{registry_crate, repo_with, Home, Server};

fn get(server: &Server, path_and_query: &str) -> (u16, Value) {
    let response = server.blocking_client().get(server.url(path_and_query)).send().unwrap();
    let status = response.status().as_u16();
    (status, response.json().unwrap())
}

fn canonical(path: &Path) -> String {
    std::fs::canonicalize(path).unwrap().display().to_string()
}

#[test]
fn a_search_over_several_repos_names_each_hit_s_repo_and_reaches_no_repo_outside_the_allowlist() {
    let served = tempfile::tempdir().unwrap();
    let billing = served.path().join("billing");
    let shipping = served.path().join("shipping");
    for (root, file, text) in [
        (
            &billing,
            "src/refund.rs",
            "/// Refunds a paid invoice to the card it was charged on.\npub fn refund_invoice() {}\n",
        ),
        (
            &shipping,
            "src/label.rs",
            "/// Prints the shipping label for a parcel, with its invoice number.\npub fn print_label() {}\n",
        ),
    ] {
        crate::common::write(root, file, text);
    }
    // Indexed in the same home, but outside what the daemon serves.
    let outside = repo_with(&[("src/secret.rs", "/// The invoice signing key.\npub fn invoice_key() {}\n")]);
    let config = format!(
        "[repos.groups]\nshop = [\"{}\", \"{}\"]\nleaky = [\"{}\", \"{}\"]\n",
        billing.display(),
        shipping.display(),
        billing.display(),
        outside.path().display()
    );
    let home = Home::with_config(&config);
    let indexed = home.run(&["index", "--repo", outside.path().to_str().unwrap()]);
    assert!(indexed.status.success(), "{}", String::from_utf8_lossy(&indexed.stderr));
    let server = Server::start_with_env(&home, &[], &[("DOCDEX_ALLOWED_ROOTS", served.path().to_str().unwrap())]);

    let both = format!("{},{}", billing.display(), shipping.display());
    for scope in [format!("repos={both}"), "group=shop".to_string()] {
        let (status, body) = get(&server, &format!("/v1/search?{scope}&q=invoice&mode=lexical"));
        assert_eq!(status, 200, "{body}");
        let hits = body["hits"].as_array().unwrap();
        let mut repos: Vec<&str> = hits.iter().map(|h| h["repo"].as_str().unwrap()).collect();
        repos.sort();
        assert_eq!(repos, [canonical(&billing), canonical(&shipping)], "{body}");
        for hit in hits {
            // Each hit's path is a file of the repo it names.
            let file = PathBuf::from(hit["repo"].as_str().unwrap()).join(hit["path"].as_str().unwrap());
            assert!(file.is_file(), "{hit}");
        }
    }
    // A repo outside the allowlist, named or in a group, refuses the whole search.
    for scope in [format!("repos={},{}", billing.display(), outside.path().display()), "group=leaky".to_string()] {
        let (status, body) = get(&server, &format!("/v1/search?{scope}&q=invoice&mode=lexical"));
        assert_eq!(status, 403, "{body}");
        assert_eq!(body["error"]["code"], "path_refused", "{body}");
        assert!(body.get("hits").is_none(), "{body}");
    }
    // `all`: the repos the daemon serves (mounted by the searches above), not the outside one.
    let (status, body) = get(&server, "/v1/search?group=all&q=invoice&mode=lexical");
    assert_eq!(status, 200, "{body}");
    let hits = body["hits"].as_array().unwrap();
    assert_eq!(hits.len(), 2, "{body}");
    assert!(hits.iter().all(|h| h["repo"] != canonical(outside.path())), "{body}");
    // What cannot be answered is refused, by name.
    let refusals = [
        (format!("repo={}&repos={both}", billing.display()), "`repo` names one repo"),
        (format!("repos={both}&group=shop"), "not both"),
        (format!("repos={both}&lib=serde"), "`lib` and `diff`"),
        ("group=nope".to_string(), "no group `nope`"),
    ];
    for (scope, needle) in refusals {
        let (status, body) = get(&server, &format!("/v1/search?{scope}&q=invoice"));
        assert_eq!(status, 400, "{scope}: {body}");
        assert!(body["error"]["message"].as_str().unwrap().contains(needle), "{scope}: {body}");
    }
    let (_, body) = get(&server, "/v1/search?group=nope&q=invoice");
    assert!(body["error"]["hint"].as_str().unwrap().contains("shop"), "the hint lists the groups: {body}");

    // The CLI, through the daemon: each hit printed with its repo.
    let out = home.run(&["search", "--repos", &both, "--mode", "lexical", "invoice"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains(&format!("{} :: src/refund.rs", canonical(&billing))), "{text}");
    assert!(text.contains(&format!("{} :: src/label.rs", canonical(&shipping))), "{text}");
    let out = home.run(&["search", "--group", "leaky", "invoice"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("outside"), "{}", String::from_utf8_lossy(&out.stderr));
}

/// Judged questions (`question<TAB>paths[<TAB>kind]`) of a file under benches/.
fn judged(file: &str) -> Vec<(String, Vec<String>)> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches").join(file);
    std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let mut fields = l.split('\t');
            let question = fields.next().unwrap().to_string();
            (question, fields.next().unwrap().split(',').map(str::to_string).collect())
        })
        .collect()
}

/// Whether one of `expected` (in `repo`) is among the first five hits.
fn found_in_top_5(body: &Value, repo: &str, expected: &[String]) -> bool {
    body["hits"]
        .as_array()
        .unwrap()
        .iter()
        .take(5)
        .any(|hit| hit["repo"].as_str().is_none_or(|r| r == repo) && expected.iter().any(|e| hit["path"] == e.as_str()))
}

#[test]
fn the_answer_in_one_of_eight_repos_of_very_different_sizes_is_found_as_often_as_in_that_repo_alone() {
    // Eight crates from cargo's registry, from 650 lines (itoa) to 150,000 (tokio); judged
    // questions about four of them.
    let sets = [
        ("tokio-1.54.1", "tokio-questions-test.tsv"),
        ("serde-1.0.229", "serde-questions.tsv"),
        ("hyper-1.12.0", "hyper-questions.tsv"),
        ("syn-2.0.119", "syn-questions.tsv"),
    ];
    let others = ["regex-1.13.1", "clap-4.6.7", "itoa-1.0.18", "memchr-2.8.3"];
    let crates: Vec<PathBuf> = sets.iter().map(|(name, _)| *name).chain(others).map(registry_crate).collect();
    let home = Home::new();
    for root in &crates {
        let out = home.run(&["index", "--repo", root.to_str().unwrap()]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let server =
        Server::start_with_env(&home, &[], &[("DOCDEX_ALLOWED_ROOTS", crates[0].parent().unwrap().to_str().unwrap())]);
    let all = crates.iter().map(|c| c.display().to_string()).collect::<Vec<_>>().join(",");
    let encode = |q: &str| q.replace('%', "%25").replace(' ', "%20").replace('&', "%26").replace('#', "%23");
    let (mut alone, mut across, mut asked) = (0, 0, 0);
    for ((_, file), root) in sets.iter().zip(&crates) {
        let repo = canonical(root);
        for (question, expected) in judged(file) {
            let q = encode(&question);
            let (status, one) = get(&server, &format!("/v1/search?repo={repo}&q={q}&mode=lexical&limit=10"));
            assert_eq!(status, 200, "{one}");
            let (status, eight) = get(&server, &format!("/v1/search?repos={all}&q={q}&mode=lexical&limit=10"));
            assert_eq!(status, 200, "{eight}");
            asked += 1;
            alone += found_in_top_5(&one, &repo, &expected) as usize;
            across += found_in_top_5(&eight, &repo, &expected) as usize;
        }
    }
    let rate = |n: usize| n as f64 / asked as f64;
    eprintln!("success@5 over {asked} questions: alone {:.3}, across 8 repos {:.3}", rate(alone), rate(across));
    assert!(asked >= 50);
    // Measured lexically: alone 0.903, across 0.823 (the other repos answer some questions'
    // plain words too: "search raw bytes" finds memchr). The gap must not grow.
    assert!(rate(across) >= rate(alone) - 0.10, "alone {alone}, across {across} of {asked}");
}
