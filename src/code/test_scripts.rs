//! The test files a package's `test` script names, for runners that have no config file of
//! their own to read: tape and tap (`tape 'test/*.js'`: no default, the files are the
//! arguments), mocha (`mocha test/unit --recursive`) and `node --test` (`node --test
//! 'test/**/*.mjs'`). The script is followed through the scripts it runs (`npm run
//! tests-only`, `yarn unit`, `npm-run-posix-or-windows tests-only`) and past the wrappers
//! that run the runner (`nyc`, `c8`, `cross-env NODE_OPTIONS=…`, `npx`). Only arguments are
//! read: a runner named without any (mocha's `.mocharc` may name them, tape has none) leaves
//! the decision to the conventions. A file under `test/` that no argument matches is a
//! fixture or a helper the tests load or spawn (tape's own `test/ignore/test/stub1.js`), not a
//! test: what the runner runs is what a change's tests are.

use serde_json::Value;

/// Scripts followed from `test`, at most: a loop of scripts naming each other ends here.
const MAX_SCRIPTS: usize = 8;
/// Programs that run the next word as a command (with their own options first).
const WRAPPERS: &[&str] = &["nyc", "c8", "cross-env", "npx", "env", "dotenv", "istanbul", "time"];
/// Options of the runners and wrappers that take the next word as their value.
const VALUED_OPTIONS: &[&str] = &[
    "-r",
    "--require",
    "-R",
    "--reporter",
    "-t",
    "--timeout",
    "-g",
    "--grep",
    "--ignore",
    "--import",
    "--loader",
    "--ui",
    "-u",
    "--reporter-options",
    "-O",
    "--node-arg",
    "--test-reporter",
    "--test-reporter-destination",
    "--extension",
    "--config",
    "--package",
    "--file",
];

/// The glob patterns (relative to the package's folder) of the test files that the package's
/// `test` script gives its runner; `None` when it runs none of these runners or names no files.
pub(crate) fn script_patterns(manifest: &Value) -> Option<Vec<String>> {
    let scripts = manifest.get("scripts")?.as_object()?;
    let mut queue: Vec<String> = vec!["test".to_string()];
    let mut seen: Vec<String> = Vec::new();
    let mut patterns: Vec<String> = Vec::new();
    let mut runner_without_files = false;
    while let Some(name) = queue.pop() {
        if seen.contains(&name) || seen.len() >= MAX_SCRIPTS {
            continue;
        }
        seen.push(name.clone());
        let Some(script) = scripts.get(&name).and_then(Value::as_str) else { continue };
        for command in commands(script) {
            match read_command(&command, |s| scripts.contains_key(s)) {
                Command::Scripts(names) => queue.extend(names),
                Command::Runner(files) if files.is_empty() => runner_without_files = true,
                Command::Runner(files) => patterns.extend(files),
                Command::Other => {}
            }
        }
    }
    // Where one runner's files are known and another's are not, the test files are not all known.
    (!patterns.is_empty() && !runner_without_files).then_some(patterns)
}

/// What one command of a script does.
#[derive(Debug, PartialEq)]
enum Command {
    /// Runs other scripts of the package.
    Scripts(Vec<String>),
    /// Runs tests with one of the runners read here, on these patterns.
    Runner(Vec<String>),
    Other,
}

/// The commands of a script as words: split at `&&`, `||`, `;` and `|` outside quotes, quotes
/// removed.
fn commands(script: &str) -> Vec<Vec<String>> {
    let mut out: Vec<Vec<String>> = vec![Vec::new()];
    let mut word = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    let mut chars = script.chars().peekable();
    let end_word = |word: &mut String, in_word: &mut bool, out: &mut Vec<Vec<String>>| {
        if *in_word {
            out.last_mut().unwrap().push(std::mem::take(word));
            *in_word = false;
        }
    };
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                in_word = true;
            }
            (None, '\\') => {
                if let Some(next) = chars.next() {
                    word.push(next);
                    in_word = true;
                }
            }
            (None, '&' | '|' | ';' | '\n') => {
                end_word(&mut word, &mut in_word, &mut out);
                if matches!(chars.peek(), Some('&' | '|')) {
                    chars.next();
                }
                out.push(Vec::new());
            }
            (None, c) if c.is_whitespace() => end_word(&mut word, &mut in_word, &mut out),
            (None, c) => {
                word.push(c);
                in_word = true;
            }
        }
    }
    end_word(&mut word, &mut in_word, &mut out);
    out.retain(|c| !c.is_empty());
    out
}

/// Reads one command: the scripts it runs, or the runner and the files it gives it.
fn read_command(words: &[String], is_script: impl Fn(&str) -> bool) -> Command {
    let mut i = 0;
    // Variables set for the command, and the wrappers before the program with their options.
    loop {
        let Some(word) = words.get(i) else { return Command::Other };
        let program = word.rsplit('/').next().unwrap_or(word);
        if word.contains('=') && !word.starts_with('-') {
            i += 1;
        } else if WRAPPERS.contains(&program) {
            i += 1;
            // A wrapper's options (`nyc --reporter=lcov`, `c8 -r text`).
            while let Some(option) = words.get(i).filter(|w| w.starts_with('-')) {
                i += if VALUED_OPTIONS.contains(&option.as_str()) { 2 } else { 1 };
            }
        } else {
            break;
        }
    }
    let program = words[i].rsplit('/').next().unwrap_or(&words[i]).to_string();
    let rest = &words[i + 1..];
    match program.as_str() {
        "npm" | "pnpm" | "yarn" | "bun" => {
            let mut args = rest.iter().filter(|w| !w.starts_with('-'));
            match args.next().map(String::as_str) {
                Some("run" | "run-script") => args.next().map_or(Command::Other, |s| Command::Scripts(vec![s.clone()])),
                Some("test" | "t") => Command::Scripts(vec!["test".to_string()]),
                // `yarn unit`, `pnpm unit`: a script by its name.
                Some(s) if program != "npm" && is_script(s) => Command::Scripts(vec![s.to_string()]),
                _ => Command::Other,
            }
        }
        "npm-run-posix-or-windows" | "run-s" | "run-p" | "npm-run-all" => {
            Command::Scripts(rest.iter().filter(|w| !w.starts_with('-') && is_script(w)).cloned().collect())
        }
        "tape" | "tap" | "node" | "mocha" | "_mocha" => {
            if program == "node" && !rest.iter().any(|w| w == "--test") {
                return Command::Other;
            }
            let recursive = rest.iter().any(|w| w == "--recursive");
            let mocha = program.ends_with("mocha");
            let mut files = Vec::new();
            let mut j = 0;
            while let Some(word) = rest.get(j) {
                if word.starts_with('-') {
                    j += if VALUED_OPTIONS.contains(&word.as_str()) { 2 } else { 1 };
                    continue;
                }
                files.push(pattern(word, mocha, recursive));
                j += 1;
            }
            Command::Runner(files)
        }
        _ => Command::Other,
    }
}

/// A runner's argument as a glob: mocha takes a folder's files (`test/unit` is
/// `test/unit/*.{js,cjs,mjs}`, all below it with `--recursive`); a file or a glob is itself.
fn pattern(word: &str, mocha: bool, recursive: bool) -> String {
    let word = word.trim_start_matches("./").trim_end_matches('/');
    let last = word.rsplit('/').next().unwrap_or(word);
    let folder = !last.contains('.') && !word.contains(['*', '?', '{', '[']);
    match (mocha && folder, recursive) {
        (true, true) => format!("{word}/**/*.{{js,cjs,mjs}}"),
        (true, false) => format!("{word}/*.{{js,cjs,mjs}}"),
        _ => word.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn patterns(scripts: &str) -> Option<Vec<String>> {
        script_patterns(&serde_json::from_str(&format!("{{\"scripts\": {scripts}}}")).unwrap())
    }

    #[test]
    fn the_files_are_read_through_scripts_and_wrappers() {
        // tape's own package.json.
        let tape = r#"{"test": "npm-run-posix-or-windows tests-only", "pretest": "npm run lint",
            "tests-only": "cross-env NODE_OPTIONS='--no-warnings' nyc tap 'test/*.js'",
            "tests-only:windows": "nyc node_modules\\tap\\bin\\run.js test/*.js"}"#;
        assert_eq!(patterns(tape).unwrap(), ["test/*.js"]);
        // qs's.
        let qs = r#"{"test": "npm run tests-only", "tests-only": "nyc tape 'test/**/*.js'"}"#;
        assert_eq!(patterns(qs).unwrap(), ["test/**/*.js"]);
        let mocha = r#"{"test": "npm run lint && c8 -r text mocha --recursive -t 5000 test/unit ./test/e2e.js"}"#;
        assert_eq!(patterns(mocha).unwrap(), ["test/unit/**/*.{js,cjs,mjs}", "test/e2e.js"]);
        let node =
            r#"{"test": "yarn unit", "unit": "NODE_ENV=test node --test --test-reporter spec 'test/**/*.test.mjs'"}"#;
        assert_eq!(patterns(node).unwrap(), ["test/**/*.test.mjs"]);
    }

    #[test]
    fn a_runner_given_no_files_or_no_runner_leaves_it_to_the_conventions() {
        assert_eq!(patterns(r#"{"test": "mocha"}"#), None);
        assert_eq!(patterns(r#"{"test": "tape test/a.js && mocha"}"#), None);
        assert_eq!(patterns(r#"{"test": "vitest run"}"#), None);
        assert_eq!(patterns(r#"{"test": "node test.js"}"#), None);
        assert_eq!(patterns(r#"{"test": "npm run a", "a": "npm run b", "b": "npm run a"}"#), None);
        assert_eq!(script_patterns(&serde_json::json!({})), None);
    }

    #[test]
    fn words_split_at_operators_outside_quotes() {
        assert_eq!(
            commands("a 'b c' && d \"e;f\" | g; h\\ i"),
            vec![vec!["a", "b c"], vec!["d", "e;f"], vec!["g"], vec!["h i"]]
        );
    }
}
