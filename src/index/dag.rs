//! The reasoning DAG of a chat or web-rag session: typed nodes (UserRequest, Thought,
//! ToolCall, Observation, Decision) with small payloads and edges to their parents,
//! appended to the repo's LMDB environment by the `DagLogger` actor, and rendered as text,
//! Graphviz DOT or JSON.

use serde::{Deserialize, Serialize};

/// The kinds of node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum NodeKind {
    UserRequest,
    Thought,
    ToolCall,
    Observation,
    Decision,
}

impl NodeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            NodeKind::UserRequest => "UserRequest",
            NodeKind::Thought => "Thought",
            NodeKind::ToolCall => "ToolCall",
            NodeKind::Observation => "Observation",
            NodeKind::Decision => "Decision",
        }
    }
}

/// One node. `id` counts from 1 within its session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DagNode {
    pub id: u32,
    pub kind: NodeKind,
    /// RFC 3339 with milliseconds, UTC.
    pub at: String,
    pub parents: Vec<u32>,
    /// One line a person reads.
    pub summary: String,
    /// Small structured details (kept under `MAX_PAYLOAD_BYTES`).
    #[serde(default, skip_serializing_if = "serde_json::Value::is_null")]
    pub data: serde_json::Value,
}

/// A session's header.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DagSession {
    pub id: String,
    /// `chat` or `web_rag`.
    pub kind: String,
    pub started_at: String,
    /// The user's request, shortened.
    pub title: String,
    pub nodes: u32,
}

/// A whole session as `dag view` and `GET /v1/dag/{session}` return it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DagView {
    pub session: DagSession,
    pub nodes: Vec<DagNode>,
}

/// Sessions of a repo, newest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DagList {
    pub repo: String,
    pub sessions: Vec<DagSession>,
}

/// Builds a session's nodes in memory; the owner sends them to the DagLogger in batches.
#[derive(Debug, Clone)]
pub struct DagRecorder {
    pub session: DagSession,
    pending: Vec<DagNode>,
    next_id: u32,
}

impl DagRecorder {
    pub fn new(kind: &str, title: &str) -> DagRecorder {
        let started_at = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
        let session =
            DagSession { id: new_session_id(), kind: kind.into(), started_at, title: shorten(title, 120), nodes: 0 };
        DagRecorder { session, pending: Vec::new(), next_id: 1 }
    }

    /// Adds a node and returns its id.
    pub fn add(&mut self, kind: NodeKind, parents: &[u32], summary: impl Into<String>, data: serde_json::Value) -> u32 {
        let id = self.next_id;
        self.next_id += 1;
        self.pending.push(DagNode {
            id,
            kind,
            at: humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string(),
            parents: parents.to_vec(),
            summary: shorten(&summary.into(), 300),
            data: small_payload(data),
        });
        id
    }

    /// The nodes added since the last take.
    pub fn take(&mut self) -> Vec<DagNode> {
        std::mem::take(&mut self.pending)
    }
}

/// Payloads larger than this are cut: the DAG records what happened, not the documents.
pub const MAX_PAYLOAD_BYTES: usize = 4096;

/// Keeps a payload small: long strings inside it are shortened until it fits.
pub fn small_payload(mut data: serde_json::Value) -> serde_json::Value {
    let mut limit = 1024;
    while serde_json::to_string(&data).map(|s| s.len()).unwrap_or(0) > MAX_PAYLOAD_BYTES && limit > 16 {
        shorten_strings(&mut data, limit);
        limit /= 2;
    }
    data
}

fn shorten_strings(value: &mut serde_json::Value, limit: usize) {
    match value {
        serde_json::Value::String(s) if s.chars().count() > limit => *s = shorten(s, limit),
        serde_json::Value::Array(items) => items.iter_mut().for_each(|v| shorten_strings(v, limit)),
        serde_json::Value::Object(map) => map.values_mut().for_each(|v| shorten_strings(v, limit)),
        _ => {}
    }
}

/// The first `limit` characters, with an ellipsis when cut.
pub fn shorten(text: &str, limit: usize) -> String {
    if text.chars().count() <= limit {
        return text.to_string();
    }
    let mut out: String = text.chars().take(limit.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// A new session id: sortable by time to the millisecond, unique enough per repo
/// (`20261123T210501123Z-3fa9c2`).
pub fn new_session_id() -> String {
    let now = std::time::SystemTime::now();
    let stamp = humantime::format_rfc3339_millis(now).to_string().replace(['-', ':', '.'], "");
    format!("{}-{:06x}", stamp, rand::random::<u32>() & 0xff_ffff)
}

/// Session ids are made by `new_session_id`; anything else is refused before it reaches
/// the store (they are used in keys and file-like displays).
pub fn valid_session_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= 64 && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// Indented text: each node under its first parent.
pub fn render_text(view: &DagView) -> String {
    let s = &view.session;
    let mut out = format!("session {} ({}, started {}): {}\n", s.id, s.kind, s.started_at, s.title);
    let depth_of = |node: &DagNode, nodes: &[DagNode]| -> usize {
        let mut depth = 0;
        let mut current = node.parents.first().copied();
        while let Some(parent) = current {
            depth += 1;
            current = nodes.iter().find(|n| n.id == parent).and_then(|n| n.parents.first().copied());
            if depth > nodes.len() {
                break;
            }
        }
        depth
    };
    for node in &view.nodes {
        let indent = "  ".repeat(depth_of(node, &view.nodes) + 1);
        let extra_parents = if node.parents.len() > 1 {
            format!(" (after {})", node.parents.iter().map(|p| format!("#{p}")).collect::<Vec<_>>().join(", "))
        } else {
            String::new()
        };
        out.push_str(&format!(
            "{indent}#{} {} [{}]{}: {}\n",
            node.id,
            node.kind.as_str(),
            node.at.get(11..23).unwrap_or(&node.at),
            extra_parents,
            node.summary
        ));
    }
    out
}

/// Graphviz DOT: one box per node, an edge from each parent.
pub fn render_dot(view: &DagView) -> String {
    let escape = |text: &str| text.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n");
    let mut out = format!(
        "digraph \"{}\" {{\n  rankdir=TB;\n  node [shape=box, fontname=\"monospace\"];\n",
        escape(&view.session.id)
    );
    for node in &view.nodes {
        let shape = match node.kind {
            NodeKind::UserRequest => "ellipse",
            NodeKind::Decision => "diamond",
            NodeKind::ToolCall => "box",
            NodeKind::Observation => "note",
            NodeKind::Thought => "box",
        };
        out.push_str(&format!(
            "  n{} [label=\"#{} {}\\n{}\", shape={shape}];\n",
            node.id,
            node.id,
            node.kind.as_str(),
            escape(&shorten(&node.summary, 80))
        ));
    }
    for node in &view.nodes {
        for parent in &node.parents {
            out.push_str(&format!("  n{parent} -> n{};\n", node.id));
        }
    }
    out.push_str("}\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view() -> DagView {
        let node = |id, kind, parents: Vec<u32>, summary: &str| DagNode {
            id,
            kind,
            at: "2026-11-23T21:05:01.123Z".into(),
            parents,
            summary: summary.into(),
            data: serde_json::Value::Null,
        };
        DagView {
            session: DagSession {
                id: "s1".into(),
                kind: "chat".into(),
                started_at: "2026-11-23T21:05:01Z".into(),
                title: "how?".into(),
                nodes: 3,
            },
            nodes: vec![
                node(1, NodeKind::UserRequest, vec![], "how \"does\" it work?"),
                node(2, NodeKind::ToolCall, vec![1], "search"),
                node(3, NodeKind::Decision, vec![1, 2], "kept 3 snippets"),
            ],
        }
    }

    #[test]
    fn text_and_dot_show_every_node_and_edge() {
        let text = render_text(&view());
        assert!(text.contains("#2 ToolCall [21:05:01.123]: search"));
        assert!(text.contains("(after #1, #2)"));
        let dot = render_dot(&view());
        assert!(dot.starts_with("digraph \"s1\" {"));
        assert!(dot.contains("n1 -> n2;") && dot.contains("n2 -> n3;") && dot.contains("n1 -> n3;"));
        assert!(dot.contains("how \\\"does\\\" it work?"));
    }

    #[test]
    fn payloads_stay_small_and_ids_are_checked() {
        let big = serde_json::json!({ "text": "x".repeat(20_000), "list": ["y".repeat(5000)] });
        assert!(serde_json::to_string(&small_payload(big)).unwrap().len() <= MAX_PAYLOAD_BYTES);
        let id = new_session_id();
        assert!(valid_session_id(&id), "{id}");
        assert!(!valid_session_id("../x"));
    }
}
