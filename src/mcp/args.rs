//! The MCP tools' arguments: one struct per tool, its JSON schema (flat, typed and bounded,
//! for the strictest clients) and the defaults of what a call leaves out.

use rmcp::schemars;
use serde::{Deserialize, Deserializer};

/// Accepts `5` and `"5"` (several clients send numbers as strings).
pub(super) fn lenient_number<'de, D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Option<u64>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum NumberOrString {
        Number(u64),
        Text(String),
    }
    match Option::<NumberOrString>::deserialize(deserializer)? {
        None => Ok(None),
        Some(NumberOrString::Number(n)) => Ok(Some(n)),
        Some(NumberOrString::Text(text)) => text
            .trim()
            .parse()
            .map(Some)
            .map_err(|_| serde::de::Error::custom(format!("expected a non-negative whole number, got \"{text}\""))),
    }
}

/// Accepts `true` and `"true"`.
pub(super) fn lenient_bool<'de, D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Option<bool>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum BoolOrString {
        Bool(bool),
        Text(String),
    }
    match Option::<BoolOrString>::deserialize(deserializer)? {
        None => Ok(None),
        Some(BoolOrString::Bool(b)) => Ok(Some(b)),
        Some(BoolOrString::Text(text)) => match text.trim().to_ascii_lowercase().as_str() {
            "true" | "1" | "yes" => Ok(Some(true)),
            "false" | "0" | "no" => Ok(Some(false)),
            _ => Err(serde::de::Error::custom(format!("expected true or false, got \"{text}\""))),
        },
    }
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchArgs {
    /// Identifiers, words or a question.
    pub query: String,
    /// Hits to return, 1-200 (default 8).
    #[serde(default, deserialize_with = "lenient_number")]
    #[schemars(range(min = 1, max = 200))]
    pub limit: Option<u64>,
    /// Where this page starts: the `next_offset` of the previous one (default 0).
    #[serde(default, deserialize_with = "lenient_number")]
    #[schemars(range(min = 0))]
    pub offset: Option<u64>,
    /// lexical, dense or hybrid (default: hybrid when embeddings exist).
    #[serde(default)]
    #[schemars(extend("enum" = ["lexical", "dense", "hybrid"]))]
    pub mode: Option<String>,
    /// Add each ranking's rank and score to every hit.
    #[serde(default, deserialize_with = "lenient_bool")]
    pub explain: Option<bool>,
    /// Where hits may come from: the repo's files, the docs of its libraries (see
    /// docdex_libs_fetch), ingested web pages, or all (default).
    #[serde(default)]
    #[schemars(extend("enum" = ["repo", "library", "web", "all"]))]
    pub source: Option<String>,
    /// Only hits from this library's docs, e.g. "serde".
    #[serde(default)]
    pub lib: Option<String>,
    /// Put a diff's code first: "working" (the working tree against HEAD), "staged", or a
    /// revision. Its changed definitions and what directly uses them come back as hits with
    /// source "diff", before the repo's.
    #[serde(default)]
    pub diff: Option<String>,
    /// Repository root (default: the server's repo). `repo_path` and `project_root` are taken too.
    #[serde(default, alias = "repo_path", alias = "project_root")]
    pub repo: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WebResearchArgs {
    /// The question, in words.
    pub query: String,
    /// Go to the web even when the repo answers confidently (default false).
    #[serde(default, deserialize_with = "lenient_bool")]
    pub force_web: Option<bool>,
    /// Local hits to return, 1-200 (default 8); web hits follow, up to search.max_web_hits.
    #[serde(default, deserialize_with = "lenient_number")]
    #[schemars(range(min = 1, max = 200))]
    pub limit: Option<u64>,
    /// Where this page starts: the `next_offset` of the previous one (default 0).
    #[serde(default, deserialize_with = "lenient_number")]
    #[schemars(range(min = 0))]
    pub offset: Option<u64>,
    /// Repository root (default: the server's repo). `repo_path` and `project_root` are taken too.
    #[serde(default, alias = "repo_path", alias = "project_root")]
    pub repo: Option<String>,
}
