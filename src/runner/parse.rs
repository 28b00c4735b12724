//! Each runner's results, from what it prints (cargo's libtest lines, pytest's `-rA`
//! summary, go's `-json` events) or the report it writes (vitest's and jest's JSON).

use std::collections::HashMap;

use super::Runner;

/// A failure's message is cut to this many characters.
const MAX_MESSAGE_CHARS: usize = 2000;

#[derive(Debug, Default, PartialEq)]
pub struct Parsed {
    pub passed: u64,
    pub failed: u64,
    pub skipped: u64,
    pub failures: Vec<(String, String)>,
}

pub fn results(runner: &Runner, output: &str, report_opt: Option<&str>) -> Parsed {
    match runner {
        Runner::Cargo => cargo(output),
        Runner::Pytest { .. } => pytest(output),
        Runner::Vitest { .. } | Runner::Jest { .. } => report_opt.map(jest_json).unwrap_or_default(),
        Runner::Go => go(output),
        // A command of the repo's own: counts when it prints cargo's or pytest's lines.
        Runner::Custom(_) => {
            let parsed = cargo(output);
            if parsed.passed + parsed.failed + parsed.skipped > 0 {
                parsed
            } else {
                pytest(output)
            }
        }
    }
}

fn clip(message: &str) -> String {
    let message = strip_ansi(message.trim());
    match message.char_indices().nth(MAX_MESSAGE_CHARS) {
        Some((i, _)) => format!("{}…", &message[..i]),
        None => message,
    }
}

fn strip_ansi(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' && chars.peek() == Some(&'[') {
            chars.next();
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
            continue;
        }
        out.push(c);
    }
    out
}

/// libtest: `test name ... ok|FAILED|ignored`, then `---- name stdout ----` blocks.
fn cargo(output: &str) -> Parsed {
    let mut parsed = Parsed::default();
    let mut failed_names: Vec<String> = Vec::new();
    for line in output.lines() {
        let Some(rest) = line.strip_prefix("test ") else { continue };
        let Some((name, outcome)) = rest.rsplit_once(" ... ") else { continue };
        match outcome.split([',', ' ']).next().unwrap_or("") {
            "ok" => parsed.passed += 1,
            "FAILED" => {
                parsed.failed += 1;
                failed_names.push(name.to_string());
            }
            "ignored" => parsed.skipped += 1,
            _ => {}
        }
    }
    let mut blocks: HashMap<String, String> = HashMap::new();
    let mut current: Option<(String, String)> = None;
    for line in output.lines() {
        if let Some(name) = line.strip_prefix("---- ").and_then(|l| l.strip_suffix(" stdout ----")) {
            if let Some((n, text)) = current.take() {
                blocks.insert(n, text);
            }
            current = Some((name.to_string(), String::new()));
            continue;
        }
        if line == "failures:" || line.starts_with("test result:") {
            if let Some((n, text)) = current.take() {
                blocks.insert(n, text);
            }
            continue;
        }
        if let Some((_, text)) = current.as_mut() {
            text.push_str(line);
            text.push('\n');
        }
    }
    if let Some((n, text)) = current.take() {
        blocks.insert(n, text);
    }
    for name in failed_names {
        let message = blocks.get(&name).map(|t| clip(t)).unwrap_or_default();
        parsed.failures.push((name, message));
    }
    parsed
}

/// pytest `-rA`: the short summary's `PASSED`/`FAILED`/`ERROR`/`SKIPPED` lines and the
/// final counts line.
fn pytest(output: &str) -> Parsed {
    let mut parsed = Parsed::default();
    let mut counted = false;
    // The last line with counts (`1 failed, 2 passed in 0.12s`, between `=` or not).
    if let Some(line) = output.lines().rev().find(|l| {
        l.contains(" in ")
            && (l.contains("passed")
                || l.contains("failed")
                || l.contains("error")
                || l.contains("skipped")
                || l.contains("no tests ran"))
    }) {
        let words: Vec<&str> = line
            .trim_matches(|c: char| c == '=' || c.is_whitespace())
            .split([',', ' '])
            .filter(|w| !w.is_empty())
            .collect();
        for pair in words.windows(2) {
            if let Ok(n) = pair[0].parse::<u64>() {
                counted = true;
                match pair[1] {
                    "passed" | "xpassed" => parsed.passed += n,
                    "failed" | "error" | "errors" => parsed.failed += n,
                    "skipped" | "xfailed" | "deselected" => parsed.skipped += n,
                    _ => {}
                }
            }
        }
    }
    for line in output.lines() {
        let (outcome, rest) = match line.split_once(' ') {
            Some(split) => split,
            None => continue,
        };
        match outcome {
            "FAILED" | "ERROR" => {
                let (name, message) = rest.split_once(" - ").unwrap_or((rest, ""));
                parsed.failures.push((name.trim().to_string(), clip(message)));
                if !counted {
                    parsed.failed += 1;
                }
            }
            "PASSED" if !counted => parsed.passed += 1,
            "SKIPPED" if !counted => parsed.skipped += 1,
            _ => {}
        }
    }
    parsed
}

/// vitest's `--reporter=json` and jest's `--json`: one format.
fn jest_json(report: &str) -> Parsed {
    let mut parsed = Parsed::default();
    let Ok(value) = serde_json::from_str::<serde_json::Value>(report) else {
        return parsed;
    };
    let count = |key: &str| value[key].as_u64().unwrap_or(0);
    parsed.passed = count("numPassedTests");
    parsed.failed = count("numFailedTests");
    parsed.skipped = count("numPendingTests") + count("numTodoTests");
    for suite in value["testResults"].as_array().into_iter().flatten() {
        let file = suite["name"].as_str().unwrap_or("");
        let assertions = suite["assertionResults"].as_array().cloned().unwrap_or_default();
        for a in &assertions {
            if a["status"] == "failed" {
                let message =
                    a["failureMessages"].as_array().and_then(|m| m.first()).and_then(|m| m.as_str()).unwrap_or("");
                parsed.failures.push((a["fullName"].as_str().unwrap_or("").to_string(), clip(message)));
            }
        }
        // A suite that failed as a whole (it did not load): its message, under the file.
        if suite["status"] == "failed" && !assertions.iter().any(|a| a["status"] == "failed") {
            parsed.failed += u64::from(assertions.is_empty());
            parsed.failures.push((file.to_string(), clip(suite["message"].as_str().unwrap_or(""))));
        }
    }
    parsed
}

/// `go test -json`: pass/fail/skip events per test, a failed test's output as its message,
/// a package that does not build as a failure of its own.
fn go(output: &str) -> Parsed {
    let mut parsed = Parsed::default();
    let mut outputs: HashMap<(String, String), String> = HashMap::new();
    for line in output.lines() {
        let Ok(event) = serde_json::from_str::<serde_json::Value>(line) else { continue };
        let package = event["Package"].as_str().unwrap_or("").to_string();
        let test = event["Test"].as_str().unwrap_or("").to_string();
        match event["Action"].as_str().unwrap_or("") {
            "output" => outputs.entry((package, test)).or_default().push_str(event["Output"].as_str().unwrap_or("")),
            // Subtests are counted with their test.
            action if !test.contains('/') => match (action, test.is_empty()) {
                ("pass", false) => parsed.passed += 1,
                ("skip", false) => parsed.skipped += 1,
                ("fail", false) => {
                    parsed.failed += 1;
                    let message = outputs.get(&(package.clone(), test.clone())).map(|m| clip(m)).unwrap_or_default();
                    parsed.failures.push((test, message));
                }
                ("fail", true) if !parsed.failures.iter().any(|(n, _)| n.starts_with(&package)) => {
                    let message = outputs.get(&(package.clone(), String::new())).map(|m| clip(m)).unwrap_or_default();
                    if message.contains("[build failed]") || message.contains("cannot") || parsed.failed == 0 {
                        parsed.failures.push((package, message));
                    }
                }
                _ => {}
            },
            _ => {}
        }
    }
    parsed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cargo_lines_and_failure_blocks() {
        let out = "running 3 tests\ntest a::works ... ok\ntest a::breaks ... FAILED\ntest a::later ... ignored, slow\n\nfailures:\n\n---- a::breaks stdout ----\n\nthread 'a::breaks' panicked at src/a.rs:9:5:\nassertion `left == right` failed\n  left: 1\n right: 2\n\n\nfailures:\n    a::breaks\n\ntest result: FAILED. 1 passed; 1 failed; 1 ignored\n";
        let p = cargo(out);
        assert_eq!((p.passed, p.failed, p.skipped), (1, 1, 1));
        assert_eq!(p.failures[0].0, "a::breaks");
        assert!(p.failures[0].1.contains("left: 1"), "{:?}", p.failures);
    }

    #[test]
    fn pytest_summary() {
        let out = "..F\n=========================== short test summary info ============================\nPASSED tests/test_a.py::test_one\nFAILED tests/test_a.py::test_two - assert 1 == 2\n1 failed, 2 passed, 1 skipped in 0.05s\n";
        let p = pytest(out);
        assert_eq!((p.passed, p.failed, p.skipped), (2, 1, 1));
        assert_eq!(p.failures, vec![("tests/test_a.py::test_two".to_string(), "assert 1 == 2".to_string())]);
    }

    #[test]
    fn jest_and_go_reports() {
        let report = r#"{"numPassedTests":1,"numFailedTests":1,"numPendingTests":0,"numTodoTests":0,"testResults":[{"name":"/r/test/a.test.ts","status":"failed","message":"","assertionResults":[{"fullName":"cart adds","status":"passed","failureMessages":[]},{"fullName":"cart clears","status":"failed","failureMessages":["AssertionError: expected 1 to be 2"]}]}]}"#;
        let p = jest_json(report);
        assert_eq!((p.passed, p.failed), (1, 1));
        assert_eq!(p.failures[0].0, "cart clears");
        let go_out = "{\"Action\":\"run\",\"Package\":\"x/cart\",\"Test\":\"TestA\"}\n{\"Action\":\"output\",\"Package\":\"x/cart\",\"Test\":\"TestA\",\"Output\":\"cart_test.go:9: want 2\\n\"}\n{\"Action\":\"fail\",\"Package\":\"x/cart\",\"Test\":\"TestA\"}\n{\"Action\":\"pass\",\"Package\":\"x/cart\",\"Test\":\"TestB\"}\n{\"Action\":\"fail\",\"Package\":\"x/cart\"}\n";
        let p = go(go_out);
        assert_eq!((p.passed, p.failed), (1, 1));
        assert_eq!(p.failures[0], ("TestA".to_string(), "cart_test.go:9: want 2".to_string()));
    }
}
