//! Code chunking at item boundaries with tree-sitter.
//!
//! Top-level items (functions, types, impls, classes, …) become units, with the comments and
//! attributes just above them attached. A unit too long for one chunk is opened up when it
//! has a body of inner items (impl blocks, classes, modules, even long function bodies): its
//! signature becomes a unit of its own and the inner items are chunked with the signature as
//! their heading. Neighbouring small units are merged up to the target size, so a file of
//! one-line constants does not become a hundred chunks.

use tree_sitter::{Node, Parser, Tree};

use super::lang::Language;
use super::skeleton::{self, CommentLine};
use super::window::{window_spans, ChunkParams, Span};

/// Routes tree-sitter's C allocations to mimalloc. Call once at the start of `main`, before
/// any parser exists.
pub fn install_tree_sitter_allocator() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let allocator = tree_sitter::Allocator {
            malloc: libmimalloc_sys::mi_malloc,
            calloc: libmimalloc_sys::mi_calloc,
            realloc: libmimalloc_sys::mi_realloc,
            free: libmimalloc_sys::mi_free,
        };
        // SAFETY: the four functions are one allocator family (mimalloc), never return null
        // for non-zero sizes, align like malloc, and this runs first thing in `main`, on
        // one thread, before any tree-sitter object exists.
        unsafe { tree_sitter::set_allocator(Some(allocator)) };
    });
}

/// A syntactic unit before merging.
#[derive(Debug, Clone)]
struct Unit {
    start: usize,
    end: usize,
    context: String,
    symbols: Vec<String>,
    /// The signature of an opened-up container stays a chunk of its own.
    standalone: bool,
}

/// Returns `None` when the language has no grammar or the parse fails, so the caller falls
/// back to line windows.
pub(crate) fn chunk_code(
    language: Language,
    text: &str,
    lines: &[&str],
    params: ChunkParams,
    tree_opt: Option<&Tree>,
) -> Option<Vec<Span>> {
    match tree_opt {
        // A full parse made for the file's code facts: chunked as it is, no second parse.
        Some(tree) => chunk_parsed(language, text, lines, params, Parsed { tree: tree.clone(), comments: Vec::new() }),
        None => chunk_code_with(language, text, lines, params, Parse::Skeleton),
    }
}

/// How much of a text tree-sitter reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Parse {
    /// Everything.
    Full,
    /// Rust without the insides of function bodies and without whole-line comments (see
    /// `skeleton`); other languages in full.
    Skeleton,
}

pub(crate) fn chunk_code_with(
    language: Language,
    text: &str,
    lines: &[&str],
    params: ChunkParams,
    mode: Parse,
) -> Option<Vec<Span>> {
    let parsed = parse(language, text.as_bytes(), mode)?;
    chunk_parsed(language, text, lines, params, parsed)
}

fn chunk_parsed(
    language: Language,
    text: &str,
    lines: &[&str],
    params: ChunkParams,
    parsed: Parsed,
) -> Option<Vec<Span>> {
    let src = Src { bytes: text.as_bytes(), comments: &parsed.comments };
    let mut units = Vec::new();
    let walk = Walk { language, lines, params, depth: Default::default(), macro_depth: Default::default() };
    walk.collect_units(parsed.tree.root_node(), src, 0, "", &mut units);
    if units.is_empty() {
        return None;
    }
    Some(merge_units(units, lines, params))
}

/// A parsed text: the tree, and the comment lines the parser was not shown.
struct Parsed {
    tree: Tree,
    comments: Vec<CommentLine>,
}

/// Parses `source`; a skeleton parse that meets a syntax error falls back to a full one, so
/// a mistake of the lexical pass costs time, never chunks.
fn parse(language: Language, source: &[u8], mode: Parse) -> Option<Parsed> {
    let grammar = language.grammar()?;
    let mut parser = Parser::new();
    parser.set_language(&grammar).ok()?;
    if mode == Parse::Skeleton && language == Language::Rust {
        let bodies = skeleton::rust_fn_body_interiors(source);
        let comments = skeleton::comment_lines(source, &bodies);
        let holes = skeleton::merge_holes(&bodies, &comments);
        if !holes.is_empty() && parser.set_included_ranges(&skeleton::ranges_around(source, &holes)).is_ok() {
            match parser.parse(source, None) {
                Some(tree) if !tree.root_node().has_error() => return Some(Parsed { tree, comments }),
                _ => {
                    parser.set_included_ranges(&[]).ok()?;
                    let tree = parser.parse(source, None)?;
                    // Counted only when the full parse is clean: a file tree-sitter cannot
                    // parse either way is no mistake of the lexical pass.
                    #[cfg(test)]
                    if !tree.root_node().has_error() {
                        tests::SKELETON_FALLBACKS.with(|n| n.set(n.get() + 1));
                    }
                    return Some(Parsed { tree, comments: Vec::new() });
                }
            }
        }
    }
    Some(Parsed { tree: parser.parse(&*language.parse_input(source), None)?, comments: Vec::new() })
}

/// The text a tree was parsed from, with the comment lines the parse left out.
#[derive(Clone, Copy)]
struct Src<'a> {
    bytes: &'a [u8],
    comments: &'a [CommentLine],
}

/// A direct child of a container, in source order: a node, or a left-out comment line
/// standing in for the comment node a full parse would have there.
#[derive(Clone, Copy)]
enum Child<'tree> {
    Node(Node<'tree>),
    Comment(CommentLine),
}

impl Child<'_> {
    fn start_row(&self) -> usize {
        match self {
            Child::Node(node) => node.start_position().row,
            Child::Comment(comment) => comment.row,
        }
    }
}

/// `container`'s named children and the left-out comment lines directly inside it (not inside
/// one of the children), in source order. A parse's root owns the whole text.
fn direct_children<'tree>(container: Node<'tree>, src: Src) -> Vec<Child<'tree>> {
    let mut cursor = container.walk();
    let nodes: Vec<Node> = container.named_children(&mut cursor).collect();
    if src.comments.is_empty() {
        return nodes.into_iter().map(Child::Node).collect();
    }
    let (from, to) = if container.parent().is_none() {
        (0, src.bytes.len())
    } else {
        (container.start_byte(), container.end_byte())
    };
    let first = src.comments.partition_point(|c| c.start_byte < from);
    let mut comments = src.comments[first..].iter().take_while(|c| c.start_byte < to).copied().peekable();
    let mut children = Vec::with_capacity(nodes.len());
    for node in nodes {
        while let Some(comment) = comments.next_if(|c| c.start_byte < node.start_byte()) {
            children.push(Child::Comment(comment));
        }
        // Comment lines inside the child belong to it.
        while comments.next_if(|c| c.start_byte < node.end_byte()).is_some() {}
        children.push(Child::Node(node));
    }
    children.extend(comments.map(Child::Comment));
    children
}

fn is_prefix_kind(kind: &str) -> bool {
    matches!(kind, "line_comment" | "block_comment" | "comment" | "attribute_item" | "decorator")
}

pub(crate) fn last_row(node: Node) -> usize {
    let end = node.end_position();
    // A node that ends at column 0 ends on the previous line (trailing newline included).
    if end.column == 0 && end.row > node.start_position().row {
        end.row - 1
    } else {
        end.row
    }
}

/// An item too long for one chunk, with the rows its unit would cover (comments and
/// attributes above it included).
#[derive(Clone, Copy)]
struct LongItem<'a, 'tree> {
    node: Node<'tree>,
    start: usize,
    end: usize,
    name: Option<&'a str>,
}

/// `last_row` of a node that spans all of `text`.
fn text_last_row(text: &[u8]) -> usize {
    let newlines = text.iter().filter(|&&b| b == b'\n').count();
    if text.ends_with(b"\n") {
        newlines.saturating_sub(1)
    } else {
        newlines
    }
}

/// What stays the same through a recursive walk.
struct Walk<'a> {
    language: Language,
    lines: &'a [&'a str],
    params: ChunkParams,
    /// How deep the walk is inside opened-up items and macro bodies: bounded, so nested
    /// input (a macro in a macro in a macro…, or thousands of nested blocks) cannot blow
    /// the stack or re-parse the same text without end.
    depth: std::cell::Cell<usize>,
    /// Item macro bodies being expanded, one inside the other.
    macro_depth: std::cell::Cell<usize>,
}

/// Item macro bodies expanded inside one another, at most; deeper ones stay one block.
const MAX_MACRO_DEPTH: usize = 3;
/// Containers opened up inside one another, at most; deeper items are split by lines.
const MAX_OPEN_DEPTH: usize = 24;

impl Walk<'_> {
    /// Runs `f` one level deeper, or returns `None` past `limit`.
    fn deeper<T>(&self, limit: usize, f: impl FnOnce() -> T) -> Option<T> {
        if self.depth.get() >= limit {
            return None;
        }
        self.depth.set(self.depth.get() + 1);
        let out = f();
        self.depth.set(self.depth.get() - 1);
        Some(out)
    }
}

impl Walk<'_> {
    /// Collects the units among `container`'s children. `src` is the text the tree was
    /// parsed from and `row_offset` the file line where that text starts (non-zero inside
    /// macro bodies, which are parsed on their own).
    fn collect_units(&self, container: Node, src: Src, row_offset: usize, context: &str, out: &mut Vec<Unit>) {
        let params = self.params;
        let mut prefix_start: Option<usize> = None;
        // Where the last left-out comment line is: the parse's own nodes may end before it.
        let mut last_comment_row = 0;
        for child in direct_children(container, src) {
            let child = match child {
                Child::Comment(comment) => {
                    prefix_start.get_or_insert(row_offset + comment.row);
                    last_comment_row = row_offset + comment.row;
                    continue;
                }
                Child::Node(node) if is_prefix_kind(node.kind()) => {
                    prefix_start.get_or_insert(row_offset + node.start_position().row);
                    continue;
                }
                Child::Node(node) => node,
            };
            let start = prefix_start.take().unwrap_or(row_offset + child.start_position().row);
            let end = row_offset + last_row(child);
            if self.expand_macro_body(child, src, row_offset, context, start, out) {
                continue;
            }
            let name = item_name(child, src.bytes);
            let span = end.saturating_sub(start) + 1;
            if span > params.max_lines {
                let item = LongItem { node: child, start, end, name: name.as_deref() };
                if self.open_up(item, src, row_offset, context, out) {
                    continue;
                }
            }
            let mut symbols: Vec<String> = name.into_iter().collect();
            symbols.extend(inner_names(child, src.bytes));
            out.push(Unit { start, end, context: context.to_string(), symbols, standalone: false });
        }
        if let Some(start) = prefix_start {
            // Trailing comments with no item after them, up to where the container ends. A
            // parse's root ends with the text, except when the parser was not shown its end.
            let container_end = if container.parent().is_none() && !src.comments.is_empty() {
                text_last_row(src.bytes)
            } else {
                last_row(container)
            };
            let end = (row_offset + container_end).max(last_comment_row).max(start);
            out.push(Unit { start, end, context: context.to_string(), symbols: Vec::new(), standalone: false });
        }
    }

    /// Chunks a long item's inner items (methods of an impl, statements of a function) with
    /// the item's first line as their heading; its signature becomes a unit of its own.
    /// Returns whether it did.
    fn open_up(&self, item: LongItem, src: Src, row_offset: usize, context: &str, out: &mut Vec<Unit>) -> bool {
        self.deeper(MAX_OPEN_DEPTH, || self.open_up_here(item, src, row_offset, context, out)).unwrap_or(false)
    }

    fn open_up_here(&self, item: LongItem, src: Src, row_offset: usize, context: &str, out: &mut Vec<Unit>) -> bool {
        let Some(body) = body_of(item.node) else {
            return false;
        };
        if item.node.kind() == "function_item" && body.named_child_count() == 0 && body.byte_range().len() > 2 {
            // A skeleton parse skipped this body: parse the function alone, in full.
            let text = &src.bytes[item.node.byte_range()];
            let Some(parsed) = parse(self.language, text, Parse::Full) else {
                return false;
            };
            let Some(node) = parsed.tree.root_node().named_child(0).filter(|n| n.kind() == "function_item") else {
                return false;
            };
            let offset = row_offset + item.node.start_position().row;
            let full = Src { bytes: text, comments: &[] };
            return body_of(node)
                .is_some_and(|body| self.open_body(LongItem { node, ..item }, body, full, offset, context, out));
        }
        self.open_body(item, body, src, row_offset, context, out)
    }

    fn open_body(
        &self,
        item: LongItem,
        body: Node,
        src: Src,
        row_offset: usize,
        context: &str,
        out: &mut Vec<Unit>,
    ) -> bool {
        let children = direct_children(body, src);
        // One child is worth opening up to only when it is long itself (Ruby's `module Rack`
        // around `class Lint`, a namespace around one class): it is opened up in turn, or
        // windowed under its own name. A short one would only repeat the item.
        let worth_opening = match children.as_slice() {
            [Child::Node(only)] => last_row(*only) - only.start_position().row + 1 > self.params.max_lines,
            [_] | [] => false,
            _ => true,
        };
        if !worth_opening {
            return false;
        }
        let header = header_line(self.lines, row_offset + item.node.start_position().row);
        let inner_context = join_context(context, &header);
        let first_inner = children.first().map(|c| row_offset + c.start_row()).unwrap_or(item.end);
        if first_inner > item.start {
            out.push(Unit {
                start: item.start,
                end: first_inner - 1,
                context: context.to_string(),
                symbols: item.name.map(str::to_string).into_iter().collect(),
                standalone: true,
            });
        }
        self.collect_units(body, src, row_offset, &inner_context, out);
        true
    }

    /// Rust item macros such as `cfg_rt! { pub fn spawn_blocking … }` hide items in a token
    /// tree tree-sitter does not parse. When the body parses cleanly as items, chunk those
    /// items instead of one opaque block. Returns whether it did.
    fn expand_macro_body(
        &self,
        node: Node,
        src: Src,
        row_offset: usize,
        context: &str,
        start: usize,
        out: &mut Vec<Unit>,
    ) -> bool {
        if self.language != Language::Rust || node.kind() != "macro_invocation" {
            return false;
        }
        // Macro depth counts from the open-up depth too: one counter bounds both.
        if self.depth.get() >= MAX_OPEN_DEPTH {
            return false;
        }
        let macro_depth = self.macro_depth.get();
        if macro_depth >= MAX_MACRO_DEPTH {
            return false;
        }
        let mut cursor = node.walk();
        let Some(tree) = node.named_children(&mut cursor).find(|c| c.kind() == "token_tree") else {
            return false;
        };
        let (from, to) = (tree.start_byte() + 1, tree.end_byte().saturating_sub(1));
        if to <= from || src.bytes.get(from - 1) != Some(&b'{') {
            return false;
        }
        let inner = &src.bytes[from..to];
        let Some(parsed) = parse(self.language, inner, Parse::Skeleton) else {
            return false;
        };
        let root = parsed.tree.root_node();
        if root.has_error() || (root.named_child_count() == 0 && parsed.comments.is_empty()) {
            return false;
        }
        let inner_offset = row_offset + tree.start_position().row;
        let before = out.len();
        self.macro_depth.set(macro_depth + 1);
        self.collect_units(root, Src { bytes: inner, comments: &parsed.comments }, inner_offset, context, out);
        self.macro_depth.set(macro_depth);
        // The macro's own line(s) and any doc comments above it join the first inner unit.
        if let Some(first) = out.get_mut(before) {
            first.start = first.start.min(start);
        }
        true
    }
}

/// Merges neighbouring small units with the same context, and splits units still too long.
fn merge_units(units: Vec<Unit>, lines: &[&str], params: ChunkParams) -> Vec<Span> {
    let mut spans: Vec<Span> = Vec::new();
    let mut current: Option<Unit> = None;
    for unit in units {
        if unit.end - unit.start + 1 > params.max_lines {
            if let Some(done) = current.take() {
                spans.push(unit_span(done));
            }
            let heading = heading_of(&unit);
            spans.extend(window_spans(lines, unit.start, unit.end, params.max_lines, &heading, &unit.symbols));
            continue;
        }
        current = match current.take() {
            Some(mut open)
                if !open.standalone
                    && !unit.standalone
                    && open.context == unit.context
                    && unit.end + 1 - open.start <= params.target_lines =>
            {
                open.end = unit.end;
                open.symbols.extend(unit.symbols);
                Some(open)
            }
            Some(done) => {
                spans.push(unit_span(done));
                Some(unit)
            }
            None => Some(unit),
        };
    }
    if let Some(done) = current {
        spans.push(unit_span(done));
    }
    spans
}

fn unit_span(unit: Unit) -> Span {
    Span { start: unit.start, end: unit.end, heading: heading_of(&unit), symbols: unit.symbols }
}

/// "impl Foo > bar, baz": the enclosing item, then the names defined in the chunk.
fn heading_of(unit: &Unit) -> String {
    const MAX_NAMES: usize = 4;
    let mut names: Vec<&str> = Vec::new();
    for symbol in &unit.symbols {
        if !names.contains(&symbol.as_str()) {
            names.push(symbol);
        }
    }
    let mut listed = names.iter().take(MAX_NAMES).copied().collect::<Vec<_>>().join(", ");
    if names.len() > MAX_NAMES {
        listed.push_str(", …");
    }
    join_context(&unit.context, &listed)
}

fn join_context(context: &str, item: &str) -> String {
    match (context.is_empty(), item.is_empty()) {
        (true, _) => item.to_string(),
        (false, true) => context.to_string(),
        (false, false) => format!("{context} > {item}"),
    }
}

/// The first line of an item without its opening brace or colon: `impl<T> JoinSet<T>`.
fn header_line(lines: &[&str], row: usize) -> String {
    let line = lines.get(row).copied().unwrap_or("").trim();
    let line = line.trim_end_matches('{').trim_end_matches(':').trim_end();
    let mut header: String = line.chars().take(100).collect();
    if line.chars().count() > 100 {
        header.push('…');
    }
    header
}

/// The node that holds an item's inner items, looking through wrappers such as Python
/// decorators and TypeScript `export`.
fn body_of(node: Node) -> Option<Node> {
    if let Some(body) = node.child_by_field_name("body") {
        return Some(body);
    }
    if node.kind() == "call" {
        // Elixir's `defmodule A do … end`: the block after `do`.
        return node.named_children(&mut node.walk()).find(|c| c.kind() == "do_block");
    }
    let inner = node.child_by_field_name("definition").or_else(|| node.child_by_field_name("declaration"))?;
    inner.child_by_field_name("body")
}

fn node_text<'a>(node: Node, source: &'a [u8]) -> &'a str {
    node.utf8_text(source).unwrap_or("")
}

/// The head of an Elixir definition macro call (`f(x)` of `def f(x) when …`, `A.B` of
/// `defmodule A.B do`) and the node naming what it defines; the chunker and the symbol walk
/// read definitions the same way.
pub(crate) fn elixir_defined(call: Node) -> Option<(Node, Node)> {
    let args = call.named_children(&mut call.walk()).find(|c| c.kind() == "arguments")?;
    let mut head = args.named_child(0)?;
    if head.kind() == "binary_operator" {
        // `def f(x) when is_integer(x)`
        head = head.child_by_field_name("left").unwrap_or(head);
    }
    let name = match head.kind() {
        "call" => head.child_by_field_name("target").unwrap_or(head),
        _ => head,
    };
    Some((head, name))
}

/// The Elixir macros that define what a chunk holds.
const ELIXIR_DEFINITIONS: [&str; 9] =
    ["defmodule", "defprotocol", "def", "defp", "defmacro", "defmacrop", "defdelegate", "defguard", "defguardp"];

/// The name an item defines, if any.
fn item_name(node: Node, source: &[u8]) -> Option<String> {
    let kind = node.kind();
    if kind.contains("import") || kind == "use_declaration" || kind == "package_clause" {
        // These name what a file uses, not what it defines.
        return None;
    }
    match kind {
        "impl_item" => {
            let ty = node.child_by_field_name("type").map(|n| node_text(n, source))?;
            Some(match node.child_by_field_name("trait") {
                Some(tr) => format!("impl {} for {ty}", node_text(tr, source)),
                None => format!("impl {ty}"),
            })
        }
        "decorated_definition" => node.child_by_field_name("definition").and_then(|d| item_name(d, source)),
        "export_statement" => node.child_by_field_name("declaration").and_then(|d| item_name(d, source)),
        // Elixir defines with macro calls; a module is named by its last segment, as the
        // symbols name it.
        "call" => {
            let target = node_text(node.child_by_field_name("target")?, source);
            if !ELIXIR_DEFINITIONS.contains(&target) {
                return None;
            }
            let name = node_text(elixir_defined(node)?.1, source);
            Some(name.rsplit('.').next().unwrap_or(name).to_string())
        }
        "lexical_declaration"
        | "variable_declaration"
        | "type_declaration"
        | "const_declaration"
        | "var_declaration" => {
            let mut cursor = node.walk();
            let first = node.named_children(&mut cursor).find_map(|c| c.child_by_field_name("name"));
            first.map(|n| node_text(n, source).to_string())
        }
        _ => node.child_by_field_name("name").map(|n| node_text(n, source).to_string()),
    }
    .filter(|name| !name.is_empty() && name.len() <= 120)
}

/// Names of items directly inside an item's body (methods of a small impl or class), so they
/// are searchable as symbols of the chunk that holds them.
fn inner_names(node: Node, source: &[u8]) -> Vec<String> {
    let Some(body) = body_of(node) else {
        return Vec::new();
    };
    let mut cursor = body.walk();
    let children: Vec<Node> = body.named_children(&mut cursor).collect();
    children
        .into_iter()
        .filter(|c| c.kind().contains("function") || c.kind().contains("method") || c.kind().contains("signature"))
        .filter_map(|c| item_name(c, source))
        .collect()
}

#[cfg(test)]
mod tests;
