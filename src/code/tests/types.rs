//! The types the code states and the graph follows: builder chains, Go receivers and
//! literals, fields' declared types, loop variables and callbacks' parameters, smart
//! pointers, collections' elements; on small repos written out in each test.

use std::collections::HashMap;

use super::super::{extract, CodeGraph, SymbolKind};
use super::resolution::{one_file_graph, python_graph, sure_lines, sure_uses};
use crate::ingest::Language;

/// A builder chain's type is followed from return type to return type, whatever its
/// arguments and line breaks: `Arg::new("x")\n.long("flag")` is an `Arg` (its methods return
/// `Self`), and so is a `let mut` bound to one; a call means the method, not the field of
/// the same name.
#[test]
fn a_builder_chain_and_a_local_bound_to_one_have_the_builders_type() {
    let text = "\
pub struct Arg {
    index: usize,
}

impl Arg {
    pub fn new(id: &str) -> Self {
        Arg { index: 0 }
    }
    pub fn long(mut self, l: &str) -> Self {
        self
    }
    pub fn index(mut self, i: usize) -> Self {
        self.index = i;
        self
    }
    pub fn build(&mut self) {}
}

pub struct Other;

impl Other {
    pub fn index(&self) {}
    pub fn build(&mut self) {}
}

fn flag_display_long() {
    let mut f = Arg::new(\"flg\")
        .long(\"flag\");
    f.build();
    let p = Arg::new(\"pos\").index(1);
}
";
    let code = crate::code::extract::extract(Language::Rust, text).unwrap();
    let graph = CodeGraph::build(HashMap::from([("src/arg.rs".to_string(), code)]), &HashMap::new());
    let sure = |name: &str| -> Vec<u32> {
        let target = graph.lookup(name).into_iter().find(|&r| graph.symbol(r).kind == SymbolKind::Method).unwrap();
        let mut lines: Vec<u32> = graph.references(target, 0.5).into_iter().map(|r| r.line).collect();
        lines.sort();
        lines
    };
    assert_eq!(sure("Arg::build"), vec![29]);
    assert_eq!(sure("Arg::index"), vec![30]);
    assert_eq!(sure("Arg::long"), vec![28]);
    assert!(sure("Other::build").is_empty());
}

/// A Go method's receiver is its `self`: `p.close()` in a method of the unexported `parser`
/// is `parser.close`, not the other type's method of that name.
#[test]
fn a_go_receiver_names_the_methods_own_type() {
    let text = "\
package parser

type parser struct{}

func (p *parser) parse() {
\tp.close()
}

func (p *parser) close() {}

type lexer struct{}

func (l *lexer) close() {}
";
    let code = extract(Language::Go, text).unwrap();
    let graph = CodeGraph::build(HashMap::from([("parser/parser.go".to_string(), code)]), &HashMap::new());
    let lines = |name: &str| -> Vec<u32> {
        let target = graph.lookup(name)[0];
        graph.references(target, 0.5).into_iter().map(|r| r.line).collect()
    };
    assert_eq!(lines("parser.close"), vec![6]);
    assert!(lines("lexer.close").is_empty());
}

/// A field's stated type decides what its members are: `data_: Map<string, Value>` is a
/// `Map`, so `this.data_.set(…)` is `Map.set`, not `Value.set`; `current_: Value` is a
/// `Value`.
#[test]
fn a_fields_stated_type_is_its_outer_type() {
    let text = "\
export class Value {
    set(v: number) {}
}

export class Other {
    set(v: number) {}
}

export class Store {
    data_: Map<string, Value>
    current_: Value

    put(v: number) {
        this.data_.set(\"k\", new Value())
        this.current_.set(v)
    }
}
";
    let code = extract(Language::TypeScript, text).unwrap();
    let graph = CodeGraph::build(HashMap::from([("src/store.ts".to_string(), code)]), &HashMap::new());
    let target = graph.lookup("Value.set")[0];
    let lines: Vec<u32> = graph.references(target, 0.0).into_iter().map(|r| r.line).collect();
    assert_eq!(lines, vec![15]);
}

/// Go values are typed as the Go compiler types them: by a composite literal or a type
/// assertion whatever the case of the type's name, by the first result of a function or
/// method (`NewString() *String`, a method's through its receiver's type, one of an imported
/// package through its alias, the value beside `ok` or an error), and a struct has the
/// methods of the types it embeds.
#[test]
fn go_values_are_typed_by_literals_assertions_results_and_embedding() {
    let ast = "\
package ast

type Segments struct{ items []int }

func (s *Segments) Len() int { return len(s.items) }

type Node interface {
	Lines() *Segments
}

type BaseNode struct{ next Node }

func (b *BaseNode) NextSibling() Node { return b.next }

type BaseBlock struct {
	BaseNode
	lines *Segments
}

func (b *BaseBlock) Lines() *Segments { return b.lines }

type Paragraph struct {
	BaseBlock
}

type String struct{ code bool }

func NewString() *String { return &String{} }

func (s *String) SetCode(v bool) { s.code = v }
";
    let run = "\
package parser

import gast \"example.com/md/ast\"

type parser struct{ depth int }

func (p *parser) close() {}

func run(node gast.Node, para *gast.Paragraph) {
	p := &parser{}
	p.close()
	s := gast.NewString()
	s.SetCode(true)
	lines := para.Lines()
	_ = lines.Len()
	list, ok := node.(*gast.Paragraph)
	_ = ok
	list.NextSibling()
}

type lexer struct{}

func (l *lexer) close() {}

func (l *lexer) SetCode(v bool) {}

func (l *lexer) Len() int { return 0 }

func (l *lexer) NextSibling() {}
";
    let files = HashMap::from([
        ("ast/ast.go".to_string(), extract(Language::Go, ast).unwrap()),
        ("parser/parser.go".to_string(), extract(Language::Go, run).unwrap()),
    ]);
    let configs = HashMap::from([("go.mod".to_string(), "module example.com/md\n\ngo 1.21\n".to_string())]);
    let graph = CodeGraph::build(files, &configs);
    let sure = |name: &str| -> Vec<(String, u32)> {
        let target = graph.lookup(name)[0];
        graph.references(target, 0.5).into_iter().map(|r| (r.path, r.line)).collect()
    };
    let at = |line| vec![("parser/parser.go".to_string(), line)];
    assert_eq!(sure("parser.close"), at(11));
    assert_eq!(sure("String.SetCode"), at(13));
    assert_eq!(sure("Segments.Len"), at(15));
    assert_eq!(sure("BaseNode.NextSibling"), at(18));
    for other in ["lexer.close", "lexer.SetCode", "lexer.Len", "lexer.NextSibling"] {
        assert!(sure(other).is_empty(), "{other}: {:?}", sure(other));
    }
    // The embedded field is a field named by its type, and still a use of the type.
    let embedded = graph.lookup("Paragraph.BaseBlock");
    assert_eq!(embedded.len(), 1);
    assert!(sure("BaseBlock").contains(&("ast/ast.go".to_string(), 23)), "{:?}", sure("BaseBlock"));
}

/// A loop variable and a callback's parameter hold an element of what is walked: the element
/// type of the walked call's result (`impl Iterator<Item = &Arg>`, `Vec<Arg>`, `list[Cart]`),
/// through adapters that keep the elements (`.iter()`, `.filter(…)`), from a method of the
/// type a `self` field states, and behind a `pub(crate)` visibility.
#[test]
fn a_loop_variable_and_a_callbacks_parameter_are_elements_of_what_is_walked() {
    let rust = "\
pub struct Arg;

impl Arg {
    pub fn get_help(&self) -> bool { true }
}

pub struct Other;

impl Other {
    pub fn get_help(&self) -> bool { false }
}

pub struct ArgMap {
    args: Vec<Arg>,
}

impl ArgMap {
    pub(crate) fn args(&self) -> impl Iterator<Item = &Arg> {
        self.args.iter()
    }
}

pub struct Command {
    args: ArgMap,
}

impl Command {
    pub fn all(&self) -> Vec<Arg> {
        Vec::new()
    }

    pub fn check(&self) {
        let _ = self.args.args().filter(|arg| arg.get_help()).count();
        for arg in self.all().iter().rev() {
            arg.get_help();
        }
        for arg in self.unknown() {
            arg.get_help();
        }
    }
}

impl ArgMap {
    pub fn each(&self) {
        for arg in &self.args {
            arg.get_help();
        }
    }

    pub fn numbered(&self) {
        for (i, arg) in self.args.iter().enumerate() {
            arg.get_help();
        }
        let walked = self.args.iter();
        for (i, arg) in walked.enumerate() {
            arg.get_help();
        }
        self.args.iter().enumerate().for_each(|(i, arg)| arg.get_help());
        for (i, arg) in self.args.iter().zip(0..) {
            arg.get_help();
        }
    }
}
";
    let graph = one_file_graph(Language::Rust, "src/lib.rs", rust);
    let sure = |name: &str| sure_lines(&graph, name);
    assert_eq!(sure("Arg::get_help"), vec![33, 35, 46, 52, 56, 58]);
    assert!(sure("Other::get_help").is_empty());

    let python = "\
class Cart:
    def total(self):
        return 0

class Order:
    def total(self):
        return 1

class Shop:
    def carts(self) -> \"list[Cart]\":
        return []

    def sum(self):
        return sum(c.total() for c in self.carts())

    def each(self):
        for cart in self.carts():
            cart.total()

class Basket:
    def __init__(self):
        self.items: list[Cart] = []

    def total(self):
        return [c.total() for c in self.items]

    def numbered(self, shop: Shop):
        for i, c in enumerate(self.items):
            c.total()
        carts = shop.carts()
        for c in carts:
            c.total()
        for i, c in zip(range(3), self.items):
            c.total()
";
    let graph = python_graph(&[("shop.py", python)]);
    let qualified = |line| ("shop.py".to_string(), line, "qualified_path".to_string());
    assert_eq!(
        sure_uses(&graph, "Cart.total", "shop.py"),
        vec![qualified(14), qualified(18), qualified(25), qualified(29), qualified(32)]
    );
    assert!(sure_uses(&graph, "Order.total", "shop.py").is_empty());

    let typescript = "\
export class Cart {
    total(): number { return 0 }
}

export class Order {
    total(): number { return 1 }
}

export class Shop {
    items: Cart[] = []

    carts(): Cart[] { return this.items }

    sum() {
        this.carts().forEach(c => c.total())
        this.items.map((c) => c.total())
        for (const cart of this.carts()) {
            cart.total()
        }
        for (const key in this.carts()) {
            key.total()
        }
    }
}
";
    let graph = one_file_graph(Language::TypeScript, "src/shop.ts", typescript);
    let sure = |name: &str| sure_lines(&graph, name);
    assert_eq!(sure("Cart.total"), vec![15, 16, 18]);
    assert!(sure("Order.total").is_empty());

    let go = "\
package shop

type Cart struct{}

func (c *Cart) Total() int { return 0 }

type Order struct{}

func (o *Order) Total() int { return 1 }

type Shop struct {
	items []*Cart
}

func (s *Shop) Carts() []*Cart { return s.items }

func (s *Shop) Sum() {
	for _, c := range s.items {
		c.Total()
	}
	for _, c := range s.Carts() {
		c.Total()
	}
	for i := range s.items {
		_ = i
	}
}
";
    let graph = one_file_graph(Language::Go, "shop/shop.go", go);
    let sure = |name: &str| sure_lines(&graph, name);
    assert_eq!(sure("Cart.Total"), vec![19, 22]);
    assert!(sure("Order.Total").is_empty());
}

/// A smart pointer stands for what it points to, past a lifetime argument: `Cow<'_, Template>`.
#[test]
fn a_value_behind_a_smart_pointer_has_its_pointees_methods() {
    let rust = "\
pub struct Template;

impl Template {
    pub fn render(&self) {}
}

pub struct Other;

impl Other {
    pub fn render(&self) {}
}

pub fn run(template: Cow<'_, Template>, shared: Ref<'_, Template>) {
    template.render();
    shared.render();
}
";
    let graph = one_file_graph(Language::Rust, "src/lib.rs", rust);
    assert_eq!(sure_lines(&graph, "Template::render"), vec![14, 15]);
    assert!(sure_lines(&graph, "Other::render").is_empty());
}

/// A field of a value whose type the code states has the type the field's declaration
/// states: `ht.name.expand()` with `ht: &HelperTemplate` and `name: Parameter`, beside
/// another type's `name` field of another type.
#[test]
fn a_field_of_a_typed_value_has_its_declared_type() {
    let rust = "\
pub struct Parameter;

impl Parameter {
    pub fn expand(&self) {}
}

pub struct Other;

impl Other {
    pub fn expand(&self) {}
}

pub struct HelperTemplate {
    pub name: Parameter,
}

pub struct Helper {
    pub name: Other,
}

pub fn run(ht: &HelperTemplate, h: Helper) {
    ht.name.expand();
    h.name.expand();
}
";
    let graph = one_file_graph(Language::Rust, "src/lib.rs", rust);
    assert_eq!(sure_lines(&graph, "Parameter::expand"), vec![22]);
    assert_eq!(sure_lines(&graph, "Other::expand"), vec![23]);
}

/// A std collection hands out its elements (`front()`, `get()`, `pop()`; a map its values)
/// and a `Result` or an `Option` its value (`?`, `unwrap()`, `and_then(|b| …)`): a local,
/// a parameter or a field of such a type, and a call returning `Result<Self, _>`, type what
/// comes out of them, and another type's method of the same name is not meant.
#[test]
fn elements_of_collections_and_values_of_results_have_their_types() {
    let rust = "\
pub struct Block;

impl Block {
    pub fn base_value(&self) -> Option<u8> {
        None
    }

    pub fn parse(s: &str) -> Result<Self, String> {
        Ok(Block)
    }
}

pub struct Other;

impl Other {
    pub fn base_value(&self) -> Option<u8> {
        None
    }
}

pub struct Stack {
    blocks: VecDeque<Block>,
    named: HashMap<String, Arc<Block>>,
}

impl Stack {
    pub fn top(&self) -> Option<u8> {
        self.blocks.front().and_then(|b| b.base_value())
    }

    pub fn named(&self, name: &str) -> Option<u8> {
        self.named.get(name).unwrap().base_value()
    }
}

pub fn run(blocks: &VecDeque<Block<'_>>, others: Vec<Other>) -> Result<(), String> {
    let blk = blocks.get(1).or_else(|| blocks.front());
    blk.and_then(|b| b.base_value());
    for b in &others {
        b.base_value();
    }
    let parsed = Block::parse(\"x\")?;
    parsed.base_value();
    Block::parse(\"y\").unwrap().base_value();
    Ok(())
}

pub fn walk(named: &HashMap<String, Block>) {
    for entry in named {
        entry.base_value();
    }
}
";
    let graph = one_file_graph(Language::Rust, "src/lib.rs", rust);
    let mut lines = sure_lines(&graph, "Block::base_value");
    lines.sort();
    assert_eq!(lines, vec![28, 32, 38, 43, 44]);
    assert_eq!(sure_lines(&graph, "Other::base_value"), vec![40]);
}

/// A Rust local made by an enum's variant (`ast::Range::Bounded(…)`, `Range::Unbounded`,
/// `Range::Named { … }`) is of the enum's type, also where an `if`, a `match` or a block
/// gives it: `range.is_valid()` is `Range::is_valid` (regex-syntax's parser).
#[test]
fn a_rust_value_made_by_an_enum_variant_is_of_the_enum() {
    let text = "mod ast {\n\
        pub enum Range { Bounded(u32, u32), Unbounded, Named { n: u32 } }\n\
        impl Range {\n    pub fn is_valid(&self) -> bool { true }\n}\n\
        }\n\
        pub struct Other;\n\
        impl Other {\n    pub fn is_valid(&self) -> bool { false }\n}\n\
        fn parse(a: bool, b: u8) -> bool {\n\
            let range = if a {\n        let n = 1;\n        if b > 0 { ast::Range::Bounded(n, 2) } else { ast::Range::Unbounded }\n    } else {\n        ast::Range::Bounded(0, 1)\n    };\n\
            let other = match b {\n        0 => ast::Range::Unbounded,\n        _ => ast::Range::Named { n: 3 },\n    };\n\
            let named = ast::Range::Named { n: 1 };\n\
            range.is_valid()\n        && other.is_valid()\n        && named.is_valid()\n\
        }\n\
        struct P;\n\
        impl P {\n    fn parse_counted(&self, a: bool) -> Result<u32, ()> {\n\
            let range = if a {\n            if !a {\n                return Err(());\n            }\n            \
            let c = match a {\n                true => 1,\n                _ => return Err(()),\n            };\n            \
            if a { ast::Range::Bounded(c, 2) } else { ast::Range::Unbounded }\n        } else {\n            \
            ast::Range::Unbounded\n        };\n        if !range.is_valid() {\n            return Err(());\n        }\n        Ok(1)\n    }\n\
        }\n";
    let graph = one_file_graph(Language::Rust, "src/lib.rs", text);
    assert_eq!(sure_lines(&graph, "Range::is_valid"), [23, 24, 25, 42]);
    assert!(sure_lines(&graph, "Other::is_valid").is_empty());
}

/// A Rust local bound to an element of a field (`let range = self.ranges[a]` with `ranges:
/// Vec<I>`, `I: Interval`) has the element's members: `range.difference(…)` is the trait's
/// method, not the set's own `difference` (regex-syntax's `IntervalSet::difference`).
#[test]
fn a_rust_local_indexed_from_a_field_is_of_its_element_type() {
    let text = "pub trait Interval: Copy {\n\
        fn difference(&self, other: &Self) -> Option<Self> {\n        None\n    }\n}\n\
        pub struct Block;\n\
        impl Block {\n    pub fn difference(&self) {}\n}\n\
        pub struct IntervalSet<I> {\n    ranges: Vec<I>,\n}\n\
        impl<I: Interval> IntervalSet<I> {\n\
            pub fn difference(&mut self, other: &IntervalSet<I>) {\n\
                let range = self.ranges[0];\n\
                range.difference(&other.ranges[0]);\n\
                let blocks: Vec<Block> = Vec::new();\n\
                let block = &blocks[0];\n\
                block.difference();\n\
            }\n\
        }\n";
    let graph = one_file_graph(Language::Rust, "src/lib.rs", text);
    assert_eq!(sure_lines(&graph, "Interval::difference"), [16]);
    assert_eq!(sure_lines(&graph, "Block::difference"), [19]);
}

/// A name a Rust pattern binds to an enum variant's field (`Ast::Group(ref g)` in a `match`,
/// `if let Ast::Group(g) = …`) is of the type the variant declares for it (`Group(Box<Group>)`):
/// `g.flags()` is `Group::flags`, not `Literal::flags`.
#[test]
fn a_name_bound_to_a_variants_field_is_of_the_fields_type() {
    let text = "pub enum Ast {\n    Group(Box<Group>),\n    Lit(Literal),\n}\n\
        pub struct Group;\n\
        impl Group {\n    pub fn flags(&self) -> u32 { 1 }\n}\n\
        pub struct Literal;\n\
        impl Literal {\n    pub fn flags(&self) -> u32 { 2 }\n}\n\
        fn visit(ast: &Ast) -> u32 {\n\
            match *ast {\n\
                Ast::Group(ref g) => g.flags(),\n\
                Ast::Lit(ref l) => l.flags(),\n\
            }\n\
        }\n\
        fn visit2(ast: &Ast) -> u32 {\n\
            if let Ast::Group(g) = ast {\n        return g.flags();\n    }\n    0\n\
        }\n";
    let graph = one_file_graph(Language::Rust, "src/lib.rs", text);
    assert_eq!(sure_lines(&graph, "Group::flags"), [15, 21]);
    assert_eq!(sure_lines(&graph, "Literal::flags"), [16]);
    let variant = graph.lookup("Ast::Group")[0];
    assert_eq!(graph.symbol(variant).signature, "Group(Box<Group>)");
}

/// The name `Some(x)` or `Ok(x)` binds is of what the matched value holds: `if let Some(g) =
/// self.find()` (what `find` returns, read through its `Option`), `if let Some(ref g) =
/// self.group` (the field's type), a `match` arm's `Some(g)`; `Some(lits)` out of an
/// `Option<&[Literal]>`, walked, yields `Literal`s.
#[test]
fn a_name_some_binds_is_of_the_value_the_option_holds() {
    let text = "pub struct Group;\n\
        impl Group {\n    pub fn flags(&self) -> u32 { 1 }\n}\n\
        pub struct Literal;\n\
        impl Literal {\n    pub fn flags(&self) -> u32 { 2 }\n}\n\
        pub struct Holder { group: Option<Group>, lits: Vec<Literal> }\n\
        impl Holder {\n\
            fn find(&self) -> Option<Group> { None }\n\
            fn visit(&self) -> u32 {\n\
                if let Some(g) = self.find() {\n            g.flags();\n        }\n\
                if let Some(ref g) = self.group {\n            g.flags();\n        }\n\
                if let Some(lits) = self.all() {\n            lits.iter().any(|l| l.flags() > 0);\n        }\n\
                match self.find() {\n            Some(g) => g.flags(),\n            None => 0,\n        }\n\
            }\n\
            fn all(&self) -> Option<&[Literal]> { None }\n\
        }\n";
    let graph = one_file_graph(Language::Rust, "src/lib.rs", text);
    let mut lines = sure_lines(&graph, "Group::flags");
    lines.sort();
    assert_eq!(lines, [14, 17, 23]);
    // An `Option` of a slice, taken out and walked: the slice's elements.
    assert_eq!(sure_lines(&graph, "Literal::flags"), [20]);
}

/// chrono's `WeekdaySet` tests: a loop over `WeekdaySet::iter_all()`, which returns `impl
/// Iterator<Item = Self>`, walks `WeekdaySet`s; and a test module's own helper (`fn check`)
/// is what its tests' bare calls mean, as surely as a function at the file's top level.
#[test]
fn an_iterator_of_self_and_a_test_modules_helper_are_known() {
    let text = "\
#[derive(Clone, Copy)]
pub struct WeekdaySet(u8);

impl WeekdaySet {
    pub const fn symmetric_difference(self, other: Self) -> Self {
        Self(self.0 ^ other.0)
    }

    fn iter_all() -> impl Iterator<Item = Self> {
        (0..128).map(Self)
    }
}

#[cfg(test)]
mod tests {
    use super::WeekdaySet;

    fn check(days: WeekdaySet) {
        assert!(days.0 < 128);
    }

    #[test]
    fn ops() {
        for set1 in WeekdaySet::iter_all() {
            check(set1.symmetric_difference(set1));
        }
    }
}
";
    let graph = one_file_graph(Language::Rust, "src/lib.rs", text);
    assert_eq!(sure_lines(&graph, "symmetric_difference"), [25]);
    assert_eq!(sure_lines(&graph, "check"), [25]);
}
