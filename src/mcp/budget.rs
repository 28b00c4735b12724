//! Every tool result within a token budget. Agents' clients cap what a tool may return (Claude
//! Code: 25k tokens) and refuse or cut what is over, so a result is fitted before it leaves:
//! lists keep their best items and say where the next page starts (`next_offset`), long texts
//! are cut with a marker. Tokens are estimated as characters / 3 (code and JSON run denser
//! than prose's 4), counting the text block and the structured content together; the
//! structured content leaves out the long texts the text block already carries, so the two
//! never double the size.

use rmcp::model::{CallToolResult, ContentBlock};
use serde::Serialize;
use serde_json::Value;

use crate::protocol::Result;

/// Characters per token in the estimate.
pub const CHARS_PER_TOKEN: usize = 3;

/// A result that can be shortened to fit.
pub trait Fit: Serialize {
    /// Items in its list (1 for a single document).
    fn items(&self) -> usize;
    /// Keeps the first `n` items.
    fn keep(&mut self, n: usize);
    /// Cuts a single item's long text to about `chars` characters; false when nothing to cut.
    fn clip(&mut self, chars: usize) -> bool;
    /// The structured content: the value without what the text block already carries.
    fn structured(&self) -> Value;
}

/// Which page a list result is: it started at `offset`, `limit` items were asked for, and
/// no page goes past `cap` items.
#[derive(Debug, Clone, Copy)]
pub struct Page {
    pub offset: usize,
    pub limit: usize,
    pub cap: usize,
}

impl Page {
    /// A single document: no pages.
    pub const SINGLE: Page = Page { offset: 0, limit: usize::MAX, cap: usize::MAX };
}

/// Renders `result` within `budget_tokens`: items are dropped from the end (the next page
/// starts where they did), a single item's text is clipped.
pub fn respond_fitted<T: Fit>(
    result: Result<T>,
    page: Page,
    budget_tokens: usize,
    render: impl Fn(&T) -> String,
) -> CallToolResult {
    let mut value = match result {
        Ok(value) => value,
        Err(err) => return super::tool_error(&err),
    };
    let budget = budget_tokens.max(500) * CHARS_PER_TOKEN;
    let before = value.items();
    let offset = page.offset;
    // A full page may have more after it.
    let mut next_opt = (before >= page.limit && offset + before < page.cap).then_some(offset + before);
    // The paging note and fields take a little room of their own.
    let room = budget.saturating_sub(200);
    loop {
        let size = render(&value).len() + value.structured().to_string().len();
        if size <= room {
            break;
        }
        let items = value.items();
        if items > 1 {
            // Proportional first, then one by one: a few passes at most.
            let keep = ((items * room) / size).clamp(1, items - 1);
            value.keep(keep);
        } else {
            let over = size - room;
            let text_len = value.structured().to_string().len().max(render(&value).len());
            if !value.clip(text_len.saturating_sub(over).max(200) / 2) {
                break;
            }
        }
    }
    if value.items() < before {
        next_opt = Some(offset + value.items()).filter(|n| *n < page.cap);
    }
    let mut text = render(&value);
    let mut structured = value.structured();
    if let Some(next) = next_opt {
        text.push_str(&format!("\n(more results: call again with offset={next})"));
        if let Value::Object(map) = &mut structured {
            map.insert("next_offset".into(), Value::from(next));
        }
    }
    let mut result = CallToolResult::structured(structured);
    result.content = vec![ContentBlock::text(text)];
    result
}

/// Cuts `text` to about `chars` characters at a line end, marking the cut.
pub fn clip_text(text: &mut String, chars: usize) -> bool {
    if text.len() <= chars {
        return false;
    }
    let mut cut = chars.min(text.len());
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    if let Some(line_end) = text[..cut].rfind('\n') {
        cut = line_end;
    }
    text.truncate(cut);
    text.push_str("\n… (cut to fit the result budget)");
    true
}

/// The value as JSON with `drop` removed from every object of the list under `list`.
pub fn without(value: &impl Serialize, list: &str, drop: &[&str]) -> Value {
    let mut json = serde_json::to_value(value).unwrap_or(Value::Null);
    if let Some(Value::Array(items)) = json.get_mut(list) {
        for item in items {
            if let Value::Object(map) = item {
                for key in drop {
                    map.remove(*key);
                }
            }
        }
    }
    json
}

use crate::protocol::{
    FileContent, FileList, LibsFetchSummary, MemoryRecallResponse, SearchResponse, WaterfallResponse,
};

impl Fit for crate::protocol::ItemDoc {
    fn items(&self) -> usize {
        1
    }

    fn keep(&mut self, _n: usize) {}

    fn clip(&mut self, chars: usize) -> bool {
        self.members.clear();
        clip_text(&mut self.docs, chars)
    }

    fn structured(&self) -> Value {
        without(self, "", &[])
            .as_object()
            .map(|m| {
                let mut m = m.clone();
                m.remove("docs");
                Value::Object(m)
            })
            .unwrap_or(Value::Null)
    }
}

impl Fit for crate::protocol::CrateExamples {
    fn items(&self) -> usize {
        self.examples.len()
    }

    fn keep(&mut self, n: usize) {
        self.more += self.examples.len().saturating_sub(n) as u64;
        self.examples.truncate(n);
    }

    fn clip(&mut self, chars: usize) -> bool {
        // One example too long for the budget: cut at a line end, marked (never mid-line).
        self.examples.first_mut().is_some_and(|e| clip_text(&mut e.code, chars))
    }

    fn structured(&self) -> Value {
        without(self, "examples", &["code"])
    }
}

impl Fit for LibsFetchSummary {
    fn items(&self) -> usize {
        self.libraries.len()
    }

    fn keep(&mut self, n: usize) {
        self.libraries.truncate(n);
    }

    fn clip(&mut self, _chars: usize) -> bool {
        false
    }

    fn structured(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

impl Fit for SearchResponse {
    fn items(&self) -> usize {
        self.hits.len()
    }
    fn keep(&mut self, n: usize) {
        self.hits.truncate(n);
    }
    fn clip(&mut self, chars: usize) -> bool {
        self.hits.first_mut().is_some_and(|hit| clip_text(&mut hit.snippet, chars))
    }
    fn structured(&self) -> Value {
        without(self, "hits", &["snippet"])
    }
}

impl Fit for WaterfallResponse {
    fn items(&self) -> usize {
        self.hits.len()
    }
    fn keep(&mut self, n: usize) {
        self.hits.truncate(n);
    }
    fn clip(&mut self, chars: usize) -> bool {
        self.hits.first_mut().is_some_and(|hit| clip_text(&mut hit.snippet, chars))
    }
    fn structured(&self) -> Value {
        without(self, "hits", &["snippet"])
    }
}

impl Fit for FileList {
    fn items(&self) -> usize {
        self.files.len()
    }
    fn keep(&mut self, n: usize) {
        self.files.truncate(n);
        self.truncated = true;
    }
    fn clip(&mut self, _: usize) -> bool {
        false
    }
    fn structured(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

impl Fit for MemoryRecallResponse {
    fn items(&self) -> usize {
        self.items.len()
    }
    fn keep(&mut self, n: usize) {
        self.items.truncate(n);
    }
    fn clip(&mut self, chars: usize) -> bool {
        self.items.first_mut().is_some_and(|item| clip_text(&mut item.text, chars))
    }
    fn structured(&self) -> Value {
        without(self, "items", &["text"])
    }
}

impl Fit for FileContent {
    fn items(&self) -> usize {
        1
    }
    fn keep(&mut self, _: usize) {}
    /// Keeps whole lines: the range then ends earlier and the next page starts after it.
    fn clip(&mut self, chars: usize) -> bool {
        let mut kept = 0;
        let mut lines = 0u64;
        for line in self.text.split_inclusive('\n') {
            if kept + line.len() > chars && lines > 0 {
                break;
            }
            kept += line.len();
            lines += 1;
        }
        if kept >= self.text.len() {
            return false;
        }
        self.text.truncate(kept);
        // Whole lines, without the last one's line break (the text holds lines, joined).
        if self.text.ends_with('\n') {
            self.text.pop();
        }
        self.line_end = self.line_start + lines - 1;
        self.truncated = true;
        true
    }
    fn structured(&self) -> Value {
        let mut json = serde_json::to_value(self).unwrap_or(Value::Null);
        if let Value::Object(map) = &mut json {
            map.remove("text");
            if self.line_end < self.total_lines {
                map.insert("next_line_start".into(), Value::from(self.line_end + 1));
            }
        }
        json
    }
}

use crate::protocol::{ChunkContent, MultiGetResponse};

impl Fit for ChunkContent {
    fn items(&self) -> usize {
        1
    }
    fn keep(&mut self, _: usize) {}
    fn clip(&mut self, chars: usize) -> bool {
        clip_text(&mut self.text, chars)
    }
    fn structured(&self) -> Value {
        let mut json = serde_json::to_value(self).unwrap_or(Value::Null);
        if let Value::Object(map) = &mut json {
            map.remove("text");
        }
        json
    }
}

impl Fit for crate::protocol::GetResult {
    fn items(&self) -> usize {
        1
    }
    fn keep(&mut self, _: usize) {}
    fn clip(&mut self, chars: usize) -> bool {
        match self {
            Self::File(file) => file.clip(chars),
            Self::Chunk(chunk) => chunk.clip(chars),
        }
    }
    fn structured(&self) -> Value {
        match self {
            Self::File(file) => file.structured(),
            Self::Chunk(chunk) => chunk.structured(),
        }
    }
}

impl Fit for MultiGetResponse {
    fn items(&self) -> usize {
        self.files.len()
    }
    fn keep(&mut self, n: usize) {
        self.files.truncate(n);
    }
    fn clip(&mut self, chars: usize) -> bool {
        self.files.first_mut().is_some_and(|file| file.clip(chars))
    }
    fn structured(&self) -> Value {
        without(self, "files", &["text"])
    }
}

impl Fit for crate::protocol::pack::PackResponse {
    fn items(&self) -> usize {
        self.sections.len()
    }
    /// A pack too big for the result budget loses its last sections (the least relevant).
    fn keep(&mut self, n: usize) {
        let before = self.sections.len();
        if n < before {
            self.sections.truncate(n);
            self.tokens = self.sections.iter().map(|s| s.tokens).sum();
            self.summary = format!("{} ({n} of its {before} sections fit this tool result)", self.summary);
        }
    }
    fn clip(&mut self, _chars: usize) -> bool {
        false
    }
    fn structured(&self) -> Value {
        // The text block carries the sections' text.
        without(self, "sections", &["text"])
    }
}
