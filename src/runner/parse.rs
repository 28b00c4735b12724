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

/// Which lines of a runner's output carry its results (kept when a flood of output around
/// them is dropped, `Capture`): libtest's `test x ... ok`, pytest's per-test and summary lines,
/// go's pass/fail/skip events and a failing test's own lines. vitest and jest write a report.
pub fn carries_result(runner: &Runner) -> fn(&str) -> bool {
    fn libtest(line: &str) -> bool {
        line.starts_with("test ") && line.contains(" ... ")
    }
    fn pytest(line: &str) -> bool {
        OUTCOMES.iter().any(|o| line.starts_with(o) || (line.contains("::") && line.contains(&format!(" {o}"))))
    }
    fn go(line: &str) -> bool {
        ["\"Action\":\"pass\"", "\"Action\":\"fail\"", "\"Action\":\"skip\""].iter().any(|a| line.contains(a))
            || (line.contains("\"Action\":\"output\"") && (line.contains("--- FAIL") || line.contains("_test.go:")))
    }
    fn either(line: &str) -> bool {
        libtest(line) || pytest(line)
    }
    fn none(_: &str) -> bool {
        false
    }
    match runner {
        Runner::Cargo => libtest,
        Runner::Pytest { .. } => pytest,
        Runner::Go => go,
        Runner::Custom(_) => either,
        Runner::Vitest { .. } | Runner::Jest { .. } => none,
    }
}

/// pytest's outcomes, as its `-v` lines and `-rA` summary write them.
const OUTCOMES: [&str; 6] = ["PASSED", "FAILED", "ERROR", "SKIPPED", "XFAIL", "XPASS"];

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

/// pytest `-rA -v`: the short summary's `PASSED`/`FAILED`/`ERROR`/`SKIPPED` lines and the
/// final counts line; without those (a run cut at the time limit), the `-v` lines of the
/// tests that ended, and the test that was running named as a failure.
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
    let mut summarised = false;
    for line in output.lines() {
        let (outcome, rest) = match line.split_once(' ') {
            Some(split) => split,
            None => continue,
        };
        match outcome {
            "FAILED" | "ERROR" => {
                summarised = true;
                let (name, message) = rest.split_once(" - ").unwrap_or((rest, ""));
                let name = name.trim();
                // A collection error says no more on its line: its section's `E` lines do.
                let message = if message.is_empty() { error_lines(output, name) } else { clip(message) };
                parsed.failures.push((name.to_string(), message));
                if !counted {
                    parsed.failed += 1;
                }
            }
            "PASSED" | "SKIPPED" => {
                summarised = true;
                if !counted {
                    if outcome == "PASSED" {
                        parsed.passed += 1;
                    } else {
                        parsed.skipped += 1;
                    }
                }
            }
            _ => {}
        }
    }
    if !counted && !summarised {
        verbose_lines(output, &mut parsed);
    }
    parsed
}

/// The `-v` lines of a run that never printed its summary: `path::test PASSED [ 50%]` for each
/// test that ended, and `path::test` alone for the one running when the output stopped.
fn verbose_lines(output: &str, parsed: &mut Parsed) {
    let mut running: Option<&str> = None;
    for line in output.lines().map(str::trim_end) {
        let Some((id, _)) = line.split_once("::") else { continue };
        if id.contains(' ') || !id.ends_with(".py") {
            continue;
        }
        let outcome = OUTCOMES.iter().find(|o| line.contains(&format!(" {o}")));
        match outcome {
            Some(&o) => {
                running = None;
                let name = line[..line.find(&format!(" {o}")).unwrap_or(line.len())].trim();
                match o {
                    "PASSED" | "XPASS" => parsed.passed += 1,
                    "SKIPPED" | "XFAIL" => parsed.skipped += 1,
                    _ => {
                        parsed.failed += 1;
                        parsed.failures.push((name.to_string(), String::new()));
                    }
                }
            }
            None if !line.contains(' ') => running = Some(line),
            None => {}
        }
    }
    if let Some(name) = running {
        parsed.failed += 1;
        parsed.failures.push((name.to_string(), "still running when the run was stopped".to_string()));
    }
}

/// The `E` lines of the section pytest prints for `name`'s error or failure (`ERROR
/// collecting tests/x.py`, `___ test_x ___`): the exception it ended with.
fn error_lines(output: &str, name: &str) -> String {
    let short = name.rsplit("::").next().unwrap_or(name);
    let mut lines = output.lines();
    let found = lines.by_ref().any(|l| l.starts_with('_') && (l.contains(name) || l.contains(&format!(" {short} "))));
    if !found {
        return String::new();
    }
    let message: Vec<&str> = lines
        .take_while(|l| !l.starts_with("____") && !l.starts_with("===="))
        .filter_map(|l| l.strip_prefix("E "))
        .map(str::trim)
        .collect();
    clip(&message.join("\n"))
}

/// vitest's `--reporter=json` and jest's `--json`: one format.
fn jest_json(report: &str) -> Parsed {
    let mut parsed = Parsed::default();
    let Ok(value) = serde_json::from_str::<serde_json::Value>(report) else {
        return parsed;
    };
    let count = |key: &str| value[key].as_u64().unwrap_or(0);
    let suites: &[serde_json::Value] = value["testResults"].as_array().map_or(&[], Vec::as_slice);
    let statuses: Vec<&str> = suites
        .iter()
        .flat_map(|s| s["assertionResults"].as_array().map_or(&[][..], Vec::as_slice))
        .map(|a| a["status"].as_str().unwrap_or(""))
        .collect();
    if statuses.is_empty() {
        parsed.passed = count("numPassedTests");
        parsed.failed = count("numFailedTests");
        parsed.skipped = count("numPendingTests") + count("numTodoTests");
    } else {
        // Each test's own status: vitest 1's summary counts a skipped test as passed.
        for status in statuses {
            match status {
                "passed" => parsed.passed += 1,
                "failed" => parsed.failed += 1,
                "skipped" | "pending" | "todo" | "disabled" => parsed.skipped += 1,
                _ => {}
            }
        }
    }
    for suite in suites {
        let file = suite["name"].as_str().unwrap_or("");
        let assertions = suite["assertionResults"].as_array().cloned().unwrap_or_default();
        for a in &assertions {
            if a["status"] == "failed" {
                let message =
                    a["failureMessages"].as_array().and_then(|m| m.first()).and_then(|m| m.as_str()).unwrap_or("");
                // A test outside any `describe` has a name with a leading space.
                parsed.failures.push((a["fullName"].as_str().unwrap_or("").trim().to_string(), clip(message)));
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
                    // Its own lines, then its subtests' (`TestX/case`: where a table test says
                    // what failed).
                    let prefix = format!("{test}/");
                    let mut keys: Vec<&(String, String)> = outputs
                        .keys()
                        .filter(|(p, t)| *p == package && (*t == test || t.starts_with(&prefix)))
                        .collect();
                    keys.sort();
                    let message: String = keys.into_iter().map(|k| outputs[k].as_str()).collect();
                    parsed.failures.push((test, clip(&message)));
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
    fn a_pytest_run_stopped_at_the_limit_says_what_ended_and_what_hung() {
        let out = "tests/test_q.py::test_ok PASSED                [ 25%]\ntests/test_q.py::test_bad FAILED               [ 50%]\ntests/test_q.py::test_skip SKIPPED (later)     [ 75%]\ntests/test_q.py::test_hang \n";
        let p = pytest(out);
        assert_eq!((p.passed, p.failed, p.skipped), (1, 2, 1));
        assert_eq!(p.failures[0].0, "tests/test_q.py::test_bad");
        assert_eq!(p.failures[1].0, "tests/test_q.py::test_hang");
        assert!(p.failures[1].1.contains("still running"), "{:?}", p.failures);
    }

    #[test]
    fn a_pytest_collection_error_says_its_exception() {
        let out = "==================================== ERRORS ====================================\n__________________ ERROR collecting tests/test_broken.py __________________\nImportError while importing test module '/r/tests/test_broken.py'.\ntests/test_broken.py:1: in <module>\n    import nonexistent_mod\nE   ModuleNotFoundError: No module named 'nonexistent_mod'\n=========================== short test summary info ============================\nERROR tests/test_broken.py\n1 error in 0.05s\n";
        let p = pytest(out);
        assert_eq!(p.failed, 1);
        assert_eq!(
            p.failures,
            vec![(
                "tests/test_broken.py".to_string(),
                "ModuleNotFoundError: No module named 'nonexistent_mod'".to_string()
            )]
        );
    }

    #[test]
    fn a_skipped_vitest_test_is_skipped_and_a_failed_subtest_says_why() {
        // vitest 1's summary counts the skipped test as passed; its status says skipped.
        let report = r#"{"numPassedTests":2,"numFailedTests":1,"numPendingTests":0,"numTodoTests":0,"testResults":[{"name":"/r/test/a.test.ts","status":"failed","message":"","assertionResults":[{"fullName":" adds","status":"passed","failureMessages":[]},{"fullName":" later","status":"skipped","failureMessages":[]},{"fullName":" qa fails","status":"failed","failureMessages":["expected 1 to be 2"]}]}]}"#;
        let p = jest_json(report);
        assert_eq!((p.passed, p.failed, p.skipped), (1, 1, 1));
        assert_eq!(p.failures[0].0, "qa fails");
        let go_out = "{\"Action\":\"output\",\"Package\":\"x\",\"Test\":\"TestSub\",\"Output\":\"=== RUN   TestSub\\n\"}\n{\"Action\":\"output\",\"Package\":\"x\",\"Test\":\"TestSub/bad\",\"Output\":\"    sub_test.go:7: sub failed here\\n\"}\n{\"Action\":\"fail\",\"Package\":\"x\",\"Test\":\"TestSub/bad\"}\n{\"Action\":\"fail\",\"Package\":\"x\",\"Test\":\"TestSub\"}\n";
        let p = go(go_out);
        assert_eq!(p.failed, 1);
        assert!(p.failures[0].1.contains("sub failed here"), "{:?}", p.failures);
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
