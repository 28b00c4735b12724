//! Structural search: a tree-sitter query (S-expression) run over one language's files,
//! bounded in matches and time; and the name patterns of symbol search.

use std::ops::ControlFlow;
use std::time::Instant;

use tree_sitter::{Parser, Query, QueryCursor, QueryCursorOptions, StreamingIterator};

use crate::ingest::Language;
use crate::protocol::code::{AstMatch, AstQueryResponse};

/// Deepest nesting of parentheses and brackets a query may have: tree-sitter compiles a query
/// recursively, and a few tens of thousands of levels overflow the stack of the thread that
/// compiles it (the daemon's). Real queries nest a handful of levels.
const MAX_QUERY_NESTING: usize = 64;
/// Longest query compiled, in bytes.
const MAX_QUERY_BYTES: usize = 16 * 1024;

/// How deep `source` nests `(…)` and `[…]`, outside strings and comments.
fn nesting(source: &str) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    let mut chars = source.chars();
    while let Some(c) = chars.next() {
        match c {
            '(' | '[' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            ')' | ']' => depth = depth.saturating_sub(1),
            // A string's brackets are text: skip to its end (past escapes).
            '"' => {
                while let Some(c) = chars.next() {
                    match c {
                        '\\' => {
                            chars.next();
                        }
                        '"' => break,
                        _ => {}
                    }
                }
            }
            // A comment runs to the end of its line.
            ';' => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        break;
                    }
                }
            }
            _ => {}
        }
    }
    deepest
}

/// A compiled structural query.
pub struct AstQuery {
    language: Language,
    query: Query,
}

impl AstQuery {
    /// Compiles `source` for `language`; the error says where the query is wrong.
    pub fn new(language: Language, source: &str) -> Result<AstQuery, String> {
        if source.len() > MAX_QUERY_BYTES {
            return Err(format!("the query is {} bytes; at most {MAX_QUERY_BYTES} are compiled", source.len()));
        }
        let depth = nesting(source);
        if depth > MAX_QUERY_NESTING {
            return Err(format!("the query nests {depth} levels deep; at most {MAX_QUERY_NESTING} are compiled"));
        }
        let grammar = language.grammar().ok_or_else(|| format!("{} has no grammar here", language.name()))?;
        let query = Query::new(&grammar, source).map_err(|e| {
            format!("query error at line {} column {}: {:?}: {}", e.row + 1, e.column + 1, e.kind, e.message)
        })?;
        Ok(AstQuery { language, query })
    }

    /// Runs over `files` (path, text) until the page of `limit` matches after the first
    /// `offset` is full (and one more is seen, to know there is a next page) or `deadline`.
    pub fn run<'a>(
        &self,
        files: impl Iterator<Item = (String, String)> + 'a,
        offset: usize,
        limit: usize,
        deadline: Instant,
    ) -> AstQueryResponse {
        let mut parser = Parser::new();
        let mut out = AstQueryResponse { matches: Vec::new(), files_searched: 0, truncated: false, next_offset: None };
        let page_end = offset.saturating_add(limit);
        let wanted = page_end.saturating_add(1);
        if self.language.grammar().and_then(|g| parser.set_language(&g).ok()).is_none() {
            return out;
        }
        let names = self.query.capture_names();
        for (path, text) in files {
            if out.matches.len() >= wanted || Instant::now() >= deadline {
                out.truncated = true;
                break;
            }
            let Some(tree) = parser.parse(&*self.language.parse_input(text.as_bytes()), None) else {
                continue;
            };
            out.files_searched += 1;
            let mut cursor = QueryCursor::new();
            cursor.set_match_limit(256);
            let mut timed_out = false;
            let mut check = |_: &tree_sitter::QueryCursorState| {
                if Instant::now() >= deadline {
                    timed_out = true;
                    ControlFlow::Break(())
                } else {
                    ControlFlow::Continue(())
                }
            };
            let options = QueryCursorOptions::new().progress_callback(&mut check);
            let mut matches = cursor.matches_with_options(&self.query, tree.root_node(), text.as_bytes(), options);
            while let Some(m) = matches.next() {
                for capture in m.captures() {
                    let node = capture.node;
                    let captured = node.utf8_text(text.as_bytes()).unwrap_or("");
                    let mut snippet: String = captured.chars().take(200).collect();
                    if snippet.len() < captured.len() {
                        snippet.push('…');
                    }
                    out.matches.push(AstMatch {
                        path: path.clone(),
                        line: node.start_position().row as u32 + 1,
                        end_line: node.end_position().row as u32 + 1,
                        column: node.start_position().column as u32 + 1,
                        capture: names.get(capture.index as usize).map(|n| n.to_string()).unwrap_or_default(),
                        text: snippet,
                    });
                }
                if out.matches.len() >= wanted {
                    break;
                }
            }
            drop(matches);
            if timed_out {
                out.truncated = true;
                break;
            }
        }
        if out.matches.len() > page_end {
            out.next_offset = Some(page_end);
        }
        out.matches.truncate(page_end);
        out.matches.drain(..offset.min(out.matches.len()));
        out
    }
}

/// `*` matches any run of characters, `?` one; everything else itself. Case-sensitive unless
/// the pattern is all lower case.
pub fn glob_match(pattern: &str, text: &str) -> bool {
    let fold = !pattern.chars().any(|c| c.is_uppercase());
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = if fold { text.to_lowercase().chars().collect() } else { text.chars().collect() };
    let (mut pi, mut ti) = (0, 0);
    let (mut star, mut mark) = (None, 0);
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = ti;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ti = mark;
        } else {
            return false;
        }
    }
    while pi < p.len() && p[pi] == '*' {
        pi += 1;
    }
    pi == p.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(glob_match("spawn*", "spawn_blocking"));
        assert!(glob_match("*Handle", "JoinHandle"));
        assert!(glob_match("get_?", "get_x"));
        assert!(!glob_match("get_?", "get_xy"));
        assert!(glob_match("joinhandle", "JoinHandle"));
        assert!(!glob_match("JoinHandle", "joinhandle"));
    }

    #[test]
    fn a_query_finds_functions_and_a_bad_query_says_where() {
        let q = AstQuery::new(Language::Rust, "(function_item name: (identifier) @name)").unwrap();
        let files = vec![("a.rs".to_string(), "fn one() {}\nfn two() {}\n".to_string())];
        let out = q.run(files.into_iter(), 0, 10, Instant::now() + std::time::Duration::from_secs(5));
        let names: Vec<&str> = out.matches.iter().map(|m| m.text.as_str()).collect();
        assert_eq!(names, ["one", "two"]);
        assert_eq!(out.matches[1].line, 2);
        let err = AstQuery::new(Language::Rust, "(function_item name: (nonsense) @x)").err().unwrap();
        assert!(err.contains("line 1"), "{err}");
    }

    #[test]
    fn a_query_nested_past_the_bound_is_refused_not_compiled() {
        // Deep enough to overflow a thread's stack in tree-sitter's compiler.
        let deep = format!("{}identifier{}", "(".repeat(60_000), ")".repeat(60_000));
        let err = AstQuery::new(Language::Rust, &deep).err().unwrap();
        assert!(err.contains("at most"), "{err}");
        let nested = format!("{}(identifier) @x{}", "(source_file ".repeat(70), ")".repeat(70));
        assert!(AstQuery::new(Language::Rust, &nested).err().unwrap().contains("nests 71 levels"));
        // Brackets inside strings and comments do not count.
        let quoted = format!("((identifier) @x (#eq? @x \"{}\")) ; {}\n", "(".repeat(100), "[".repeat(100));
        assert!(AstQuery::new(Language::Rust, &quoted).is_ok());
    }

    #[test]
    fn matches_come_in_pages_that_say_where_the_next_starts() {
        let q = AstQuery::new(Language::Rust, "(function_item name: (identifier) @name)").unwrap();
        let files = || {
            vec![
                ("a.rs".to_string(), "fn one() {}\nfn two() {}\n".to_string()),
                ("b.rs".to_string(), "fn three() {}\n".to_string()),
            ]
            .into_iter()
        };
        let deadline = || Instant::now() + std::time::Duration::from_secs(5);
        let names = |out: &AstQueryResponse| out.matches.iter().map(|m| m.text.clone()).collect::<Vec<_>>();
        let first = q.run(files(), 0, 2, deadline());
        assert_eq!((names(&first), first.next_offset), (vec!["one".to_string(), "two".to_string()], Some(2)));
        let second = q.run(files(), 2, 2, deadline());
        assert_eq!((names(&second), second.next_offset), (vec!["three".to_string()], None));
        // A page that ends with the last match says there is no next one.
        let whole = q.run(files(), 0, 3, deadline());
        assert_eq!((whole.matches.len(), whole.next_offset), (3, None));
    }
}
