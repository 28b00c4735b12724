//! A tool's parameters, declared once for every surface.
//!
//! Each tool module declares, beside its messages, one parameter struct per call: its names
//! (with the aliases clients send), its documentation (MCP's schema is made from it), its
//! bounds and defaults, and `Tool::into_message`, which checks the values and builds the
//! dispatcher message. The HTTP API takes the struct from the query string or the JSON body
//! (`http::tool_query`, `http::tool_body`), MCP from a tool call's arguments, and the CLI
//! fills it from its flags; none of them parses or defaults a value of its own.
//!
//! Values are taken leniently — `5` and `"5"`, `true` and `"true"` — because a query string
//! has only text and several MCP clients send numbers as strings.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Deserializer};

use crate::protocol::{DocdexError, Result};

/// Who is calling, as far as a tool's defaults and permissions care.
#[derive(Debug, Clone, Default)]
pub struct Caller {
    /// Why this caller may not run the repo's tests (`docdex_run_tests`), if it may not.
    pub run_tests_refusal: Option<DocdexError>,
}

/// A tool call: its parameters, and the message they become.
pub trait Tool: serde::de::DeserializeOwned + schemars::JsonSchema + Send + 'static {
    type Message: actix::Message<Result = Result<Self::Output>> + Send + 'static;
    type Output: serde::Serialize + Send + 'static;
    /// Whether the call is about a repo: one that is not (a crate's docs, the web) takes the
    /// surface's default repo when there is one and goes on without it otherwise.
    const NEEDS_REPO: bool = true;

    /// Whether this call needs a repo (a search naming `repos`, a group or a collection does not).
    fn needs_repo(&self) -> bool {
        Self::NEEDS_REPO
    }

    /// The repo the call names, if it names one (the surface's default fills in otherwise).
    fn repo(&self) -> Option<&Path>;

    /// Every path on this machine the call names (its repo, a collection's folder): over
    /// HTTP each must be absolute, since the daemon's working directory is not the caller's.
    fn local_paths(&self) -> Vec<&Path> {
        self.repo().into_iter().collect()
    }

    /// Checks every value and builds the message; `repo_opt` is the call's repo or the
    /// caller's default (the dispatcher falls back to its own).
    fn into_message(self, repo_opt: Option<PathBuf>, caller: &Caller) -> Result<Self::Message>;
}

/// Every path a call names must be absolute (`Tool::local_paths`) when it comes from another
/// process over the network (HTTP, MCP over HTTP): the daemon's working directory is not the
/// caller's, so a relative one would name whatever folder the daemon was started in.
pub fn absolute_paths<T: Tool>(params: &T) -> Result<()> {
    params.local_paths().into_iter().try_for_each(absolute)
}

/// `path`, if absolute (see `absolute_paths`).
pub fn absolute(path: &Path) -> Result<()> {
    if path.is_absolute() {
        return Ok(());
    }
    Err(DocdexError::invalid(format!(
        "`{}` is a relative path; over HTTP a path is given whole, from the root",
        path.display()
    ))
    .with_hint("the daemon's working directory is not yours: give the full path"))
}

/// A non-empty, trimmed text parameter.
pub fn text(value: Option<String>) -> Option<String> {
    value.map(|v| v.trim().to_string()).filter(|v| !v.is_empty())
}

/// `value` within `1..=max`, or `default` when left out.
pub fn bounded(name: &str, value: Option<u64>, default: usize, max: usize) -> Result<usize> {
    match value {
        None => Ok(default),
        Some(n) if n >= 1 && n <= max as u64 => Ok(n as usize),
        Some(n) => Err(DocdexError::invalid(format!("{name} must be between 1 and {max}, got {n}"))),
    }
}

/// A number that must be given: `5` or `"5"`.
pub fn required_number<'de, D: Deserializer<'de>>(deserializer: D) -> std::result::Result<u64, D::Error> {
    number(deserializer)?.ok_or_else(|| serde::de::Error::custom("expected a non-negative whole number, got nothing"))
}

/// A line number: lines are 1-based, so 0 is refused rather than read as the first line.
pub fn line(name: &str, value: Option<u64>) -> Result<Option<u32>> {
    match value {
        None => Ok(None),
        Some(0) => Err(DocdexError::invalid(format!("{name} must be 1 or more (lines are 1-based), got 0"))),
        Some(n) => u32::try_from(n).map(Some).map_err(|_| DocdexError::invalid(format!("no line {n}"))),
    }
}

/// An `offset` (default 0).
pub fn offset(value: Option<u64>) -> usize {
    value.unwrap_or(0).min(usize::MAX as u64) as usize
}

/// Accepts `5` and `"5"`; an empty string is left out.
pub fn number<'de, D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Option<u64>, D::Error> {
    value_or_text(deserializer, "a non-negative whole number")
}

/// Accepts `0.5` and `"0.5"`; an empty string is left out.
pub fn fraction<'de, D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Option<f64>, D::Error> {
    value_or_text(deserializer, "a number from 0 to 1")
}

/// A value as itself or as its text (`5` or `"5"`); an empty text is left out.
fn value_or_text<'de, D, T>(deserializer: D, expected: &str) -> std::result::Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + std::str::FromStr,
{
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum ValueOrText<T> {
        Value(T),
        Text(String),
        // Anything else (`-1`, `2.5`, `true`, a list): named in the error, not as serde's
        // "did not match any variant".
        Other(serde_json::Value),
    }
    match Option::<ValueOrText<T>>::deserialize(deserializer)? {
        None => Ok(None),
        Some(ValueOrText::Value(value)) => Ok(Some(value)),
        Some(ValueOrText::Other(other)) => Err(serde::de::Error::custom(format!("expected {expected}, got {other}"))),
        Some(ValueOrText::Text(text)) if text.trim().is_empty() => Ok(None),
        Some(ValueOrText::Text(text)) => text
            .trim()
            .parse()
            .map(Some)
            .map_err(|_| serde::de::Error::custom(format!("expected {expected}, got \"{text}\""))),
    }
}

/// Accepts `true` and `"true"` (also `1`/`0`, `yes`/`no`); an empty string is left out.
pub fn flag<'de, D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Option<bool>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum BoolOrText {
        Bool(bool),
        Text(String),
    }
    match Option::<BoolOrText>::deserialize(deserializer)? {
        None => Ok(None),
        Some(BoolOrText::Bool(b)) => Ok(Some(b)),
        Some(BoolOrText::Text(text)) => match text.trim().to_ascii_lowercase().as_str() {
            "" => Ok(None),
            "true" | "1" | "yes" => Ok(Some(true)),
            "false" | "0" | "no" => Ok(Some(false)),
            _ => Err(serde::de::Error::custom(format!("expected true or false, got \"{text}\""))),
        },
    }
}

/// Accepts a list, or one text of comma-separated items (a query string's form).
pub fn list<'de, D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Option<Vec<String>>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum ListOrText {
        List(Vec<String>),
        Text(String),
        Other(serde_json::Value),
    }
    Ok(match Option::<ListOrText>::deserialize(deserializer)? {
        None => None,
        Some(ListOrText::Other(other)) => {
            return Err(serde::de::Error::custom(format!(
                "expected a list of texts or one comma-separated text, got {other}"
            )))
        }
        Some(ListOrText::List(items)) => Some(items),
        Some(ListOrText::Text(text)) => {
            Some(text.split(',').map(str::trim).filter(|s| !s.is_empty()).map(str::to_string).collect())
        }
    })
}

/// A list as one comma-separated text (`list` reads it back): how the CLI sends a list in a
/// query string, which has no lists.
pub fn joined<S: serde::Serializer>(
    items: &Option<Vec<String>>,
    serializer: S,
) -> std::result::Result<S::Ok, S::Error> {
    match items {
        None => serializer.serialize_none(),
        Some(items) => serializer.serialize_some(&items.join(",")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Deserialize)]
    struct Probe {
        #[serde(default, deserialize_with = "number")]
        n: Option<u64>,
        #[serde(default, deserialize_with = "flag")]
        b: Option<bool>,
        #[serde(default, deserialize_with = "list")]
        l: Option<Vec<String>>,
        #[serde(default, deserialize_with = "fraction")]
        f: Option<f64>,
    }

    #[test]
    fn values_are_taken_as_json_and_as_query_text_alike() {
        let json: Probe = serde_json::from_str(r#"{"n": 5, "b": true, "l": ["a", "b"], "f": 0.5}"#).unwrap();
        let query: Probe = serde_urlencoded::from_str("n=5&b=true&l=a,+b&f=0.5").unwrap();
        for p in [&json, &query] {
            assert_eq!(
                (p.n, p.b, p.l.clone(), p.f),
                (Some(5), Some(true), Some(vec!["a".into(), "b".into()]), Some(0.5))
            );
        }
        let empty: Probe = serde_urlencoded::from_str("n=&b=&f=").unwrap();
        assert_eq!((empty.n, empty.b, empty.f), (None, None, None));
        let err = serde_urlencoded::from_str::<Probe>("n=many").unwrap_err().to_string();
        assert!(err.contains("whole number"), "{err}");
        assert!(serde_json::from_str::<Probe>(r#"{"b": "maybe"}"#).is_err());
        // A JSON value of another kind says what was expected and what came.
        for (body, said) in [
            (r#"{"n": -1}"#, "expected a non-negative whole number, got -1"),
            (r#"{"n": 2.5}"#, "expected a non-negative whole number, got 2.5"),
            (r#"{"f": true}"#, "expected a number from 0 to 1, got true"),
            (r#"{"l": ["a", 3]}"#, "expected a list of texts or one comma-separated text, got [\"a\",3]"),
        ] {
            let err = serde_json::from_str::<Probe>(body).unwrap_err().to_string();
            assert!(err.contains(said), "{body}: {err}");
        }
        assert_eq!(bounded("limit", Some(0), 10, 100).unwrap_err().message, "limit must be between 1 and 100, got 0");
        assert_eq!(bounded("limit", None, 10, 100).unwrap(), 10);
    }

    /// The CLI sends a tool's parameters to the daemon as they are: what it leaves out is
    /// left out of the query string, and the daemon reads back what was sent.
    #[test]
    fn parameters_round_trip_through_a_query_string() {
        use crate::actors::tool_dispatcher::search::SearchToolParams;
        let sent = SearchToolParams {
            query: "spawn a task".into(),
            limit: Some(3),
            offset: None,
            mode: None,
            explain: Some(false),
            source: None,
            lib: None,
            diff: None,
            web_research: None,
            force_web: None,
            repo: Some("/tmp/repo".into()),
            repos: None,
            group: None,
            collection: None,
        };
        let query = serde_urlencoded::to_string(&sent).unwrap();
        assert_eq!(query, "query=spawn+a+task&limit=3&explain=false&repo=%2Ftmp%2Frepo");
        let read: SearchToolParams = serde_urlencoded::from_str(&query).unwrap();
        assert_eq!((&read.query, read.limit, read.explain, read.offset), (&sent.query, Some(3), Some(false), None));
        // A list goes as one comma-separated text, and comes back a list.
        let sent = SearchToolParams { repo: None, repos: Some(vec!["/a".into(), "/b c".into()]), ..read };
        let query = serde_urlencoded::to_string(&sent).unwrap();
        let read: SearchToolParams = serde_urlencoded::from_str(&query).unwrap();
        assert_eq!(read.repos, sent.repos);
    }
}
