//! Definitions in the shapes some languages give them beyond the grammar's fields: Python's
//! assignments and `self.x` fields, Ruby's constants and accessors, Kotlin's companion
//! objects, PHP's namespaces, Elixir's `def` calls.

use std::collections::HashSet;

use tree_sitter::Node;

use super::{Frame, Walker, MAX_NAME};
use crate::ingest::code::{elixir_defined, last_row};

use crate::code::{Symbol, SymbolKind, Visibility};

impl<'a> Walker<'a> {
    /// `X = …` at module or class level in Python: a constant, variable or class field.
    pub(super) fn python_assignment(&mut self, node: Node) {
        let Some(left) = node.child_by_field_name("left").filter(|l| l.kind() == "identifier") else {
            return;
        };
        let name = self.text(left).to_string();
        let in_class = self.container().is_some();
        if in_class {
            let off = node.child_by_field_name("right").is_some_and(|r| matches!(r.kind(), "none" | "false"));
            self.out.class_defaults.push((name.clone(), off));
        }
        let kind = if in_class {
            SymbolKind::Field
        } else if name.chars().all(|c| c.is_ascii_uppercase() || c == '_' || c.is_ascii_digit()) {
            SymbolKind::Constant
        } else {
            SymbolKind::Variable
        };
        let index = self.symbol_base + self.out.symbols.len() as u32;
        self.simple_symbol(node, left, name, kind);
        // Uses in the value belong to the variable (`_stdout = _cached(get_text_stdout)`): what
        // uses the variable depends on them.
        self.frames.push(Frame { end: node.end_byte(), symbol: Some(index), container: None, locals: None });
    }

    /// `self.console = Console()` in a method: a field of the class, first assignment only.
    /// Its signature names the value's type, which narrows `self.console.print()` to
    /// `Console`'s members (the graph's declared-type rule).
    pub(super) fn python_self_attribute(&mut self, node: Node) {
        let Some(left) = node.child_by_field_name("left").filter(|l| l.kind() == "attribute") else {
            return;
        };
        let (Some(object), Some(attribute)) =
            (left.child_by_field_name("object"), left.child_by_field_name("attribute"))
        else {
            return;
        };
        if self.text(object) != "self" {
            return;
        }
        let Some(container) = self.container().map(str::to_string) else {
            return;
        };
        let name = self.text(attribute).to_string();
        // Off while it holds `None`, `False` or a parameter that defaults to one (`self.strict
        // = strict` of `strict=False`); on once any method sets it to something else.
        let off = node.child_by_field_name("right").is_some_and(|r| {
            matches!(r.kind(), "none" | "false")
                || self.parameter_default(r).is_some_and(|d| matches!(d.kind(), "none" | "false"))
        });
        self.out.class_defaults.push((name.clone(), off));
        if self.out.symbols.iter().any(|s| s.name == name && s.container == container) {
            return;
        }
        // The use of `self.console` on the left is this definition's name, not a use.
        self.simple_symbol(node, attribute, name, SymbolKind::Field);
        // `self.soup = soup` where the method's parameter says `soup: BeautifulSoup`: the
        // field holds what the parameter does, so its signature states the parameter's type
        // as an annotated assignment would (`self.soup: BeautifulSoup = soup`), and
        // `self.soup.handle_data(…)` narrows to `BeautifulSoup`'s members as it would then.
        let value = node.child_by_field_name("right").filter(|_| node.child_by_field_name("type").is_none());
        if let Some((value, annotation)) = value.and_then(|v| Some((v, self.parameter_annotation(v)?))) {
            let declared = format!("{}: {annotation} = {}", self.text(left), self.text(value));
            if let Some(field) = self.out.symbols.last_mut() {
                field.signature = declared;
            }
        }
    }

    /// `MAX = 10` in a Ruby class or module body.
    pub(super) fn ruby_constant(&mut self, node: Node) {
        let Some(left) = node.child_by_field_name("left").filter(|l| l.kind() == "constant") else {
            return;
        };
        let name = self.text(left).to_string();
        self.simple_symbol(node, left, name, SymbolKind::Constant);
    }

    /// `attr_reader :name, :size` (or `attr_writer`, `attr_accessor`) in a class or module
    /// body: each name a property of it, defined there (its reader and writer methods).
    pub(super) fn ruby_accessors(&mut self, node: Node) {
        let Some(method) = node.child_by_field_name("method") else { return };
        if node.child_by_field_name("receiver").is_some()
            || !matches!(self.text(method), "attr_reader" | "attr_writer" | "attr_accessor")
            || self.container().is_none()
        {
            return;
        }
        let Some(arguments) = node.child_by_field_name("arguments") else { return };
        let names: Vec<Node> =
            arguments.named_children(&mut arguments.walk()).filter(|a| a.kind() == "simple_symbol").collect();
        for name_node in names {
            let name = self.text(name_node).trim_start_matches(':').to_string();
            if !name.is_empty() {
                self.simple_symbol(node, name_node, name, SymbolKind::Property);
            }
        }
    }

    /// A Kotlin `companion object` (named `Companion` unless it says): a definition, while its
    /// members stay named through the class around it (`Cart.EMPTY`), as Kotlin names them.
    pub(super) fn kotlin_companion(&mut self, node: Node) {
        let named = node.named_children(&mut node.walk()).find(|c| c.kind() == "identifier");
        let name = named.map_or("Companion", |n| self.text(n)).to_string();
        self.simple_symbol(node, named.unwrap_or(node), name, SymbolKind::Class);
    }

    /// `namespace App\Http;` (or a braced one): a module, named whole as PHP names it. Its
    /// classes keep their own names (the namespace is the file's package for imports).
    pub(super) fn php_namespace(&mut self, node: Node) {
        let Some(name_node) = node.child_by_field_name("name") else { return };
        let name = self.text(name_node).to_string();
        self.simple_symbol(node, name_node, name, SymbolKind::Module);
    }

    pub(super) fn simple_symbol(&mut self, node: Node, name_node: Node, name: String, kind: SymbolKind) {
        let container = self.container().unwrap_or("").to_string();
        let qualified_name =
            if container.is_empty() { name.clone() } else { format!("{container}{}{name}", self.spec.separator) };
        let start = node.start_position();
        let visibility = self.visibility(node, kind, &qualified_name);
        self.def_names.insert(name_node.id());
        self.out.symbols.push(Symbol {
            name,
            qualified_name,
            kind,
            line: start.row as u32 + 1,
            end_line: last_row(node) as u32 + 1,
            column: name_node.start_position().column as u32 + 1,
            signature: self.signature(node),
            doc: self.doc(node),
            container,
            visibility,
            implements: String::new(),
            test_marked: false,
        });
    }

    /// Elixir defines with macros: `defmodule A.B do … end`, `def f(x) do … end`.
    pub(super) fn elixir_definition(&mut self, node: Node) {
        let Some(target) = node.child_by_field_name("target") else {
            return;
        };
        let macro_name = self.text(target);
        let kind = match macro_name {
            "defmodule" | "defprotocol" => SymbolKind::Module,
            "def" | "defp" | "defdelegate" | "defguard" | "defguardp" => SymbolKind::Function,
            "defmacro" | "defmacrop" => SymbolKind::Macro,
            "defimpl" => {
                // Functions of an implementation are named through the protocol.
                return;
            }
            _ => return,
        };
        self.def_names.insert(target.id());
        let Some((head, name_node)) = elixir_defined(node) else {
            return;
        };
        let name = self.text(name_node).to_string();
        if name.is_empty() || name.len() > MAX_NAME {
            return;
        }
        let container = self.container().unwrap_or("").to_string();
        let qualified_name = if kind == SymbolKind::Module || container.is_empty() {
            name.clone()
        } else {
            format!("{container}.{name}")
        };
        let start = node.start_position();
        self.def_names.insert(name_node.id());
        let index = self.symbol_base + self.out.symbols.len() as u32;
        if kind == SymbolKind::Module && self.out.package.is_empty() {
            self.out.package = name.clone();
        }
        let visibility = if macro_name.ends_with('p') { Visibility::Private } else { Visibility::Public };
        self.out.symbols.push(Symbol {
            name: if kind == SymbolKind::Module { name.rsplit('.').next().unwrap_or(&name).to_string() } else { name },
            qualified_name: qualified_name.clone(),
            kind,
            line: start.row as u32 + 1,
            end_line: last_row(node) as u32 + 1,
            column: name_node.start_position().column as u32 + 1,
            signature: self.signature(node),
            doc: String::new(),
            container: if kind == SymbolKind::Module { String::new() } else { container },
            visibility,
            implements: String::new(),
            test_marked: false,
        });
        if kind == SymbolKind::Module {
            self.frames.push(Frame {
                end: node.end_byte(),
                symbol: Some(index),
                container: Some(qualified_name),
                locals: None,
            });
        } else {
            self.frames.push(Frame {
                end: node.end_byte(),
                symbol: Some(index),
                container: None,
                locals: Some(HashSet::new()),
            });
            if let Some(params) = head.named_children(&mut head.walk()).find(|c| c.kind() == "arguments") {
                self.bind_params(params);
            }
        }
    }
}
