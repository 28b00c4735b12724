//! Code intelligence: what tree-sitter reads out of source files (definitions, identifier
//! uses, imports), and the repo-wide graph built from it (which use means which definition,
//! which file imports which).
//!
//! Extraction is per file and knows nothing of other files, so the index run can do it
//! beside chunking and store the result with the file's record; everything that needs the
//! whole repo (name resolution, import targets, callers) is done when the graph is loaded.

mod builtins;
pub mod default_run;
pub mod dependents;
pub mod extract;
pub mod graph;
pub mod imports;
pub mod map;
pub mod query;
pub mod resolve;
mod spec;
pub mod test_files;
mod test_scripts;

use crate::ingest::{Chunk, ChunkParams, Language};
use serde::{Deserialize, Serialize};

pub use extract::extract;
pub use graph::CodeGraph;

/// What a definition is. The names are the API's `kind` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
pub enum SymbolKind {
    Function,
    Method,
    Constructor,
    Class,
    Struct,
    Enum,
    EnumMember,
    Trait,
    Interface,
    Type,
    Constant,
    Variable,
    Field,
    Property,
    Module,
    Macro,
}

impl SymbolKind {
    pub const ALL: [SymbolKind; 16] = [
        SymbolKind::Function,
        SymbolKind::Method,
        SymbolKind::Constructor,
        SymbolKind::Class,
        SymbolKind::Struct,
        SymbolKind::Enum,
        SymbolKind::EnumMember,
        SymbolKind::Trait,
        SymbolKind::Interface,
        SymbolKind::Type,
        SymbolKind::Constant,
        SymbolKind::Variable,
        SymbolKind::Field,
        SymbolKind::Property,
        SymbolKind::Module,
        SymbolKind::Macro,
    ];

    pub fn name(self) -> &'static str {
        match self {
            SymbolKind::Function => "function",
            SymbolKind::Method => "method",
            SymbolKind::Constructor => "constructor",
            SymbolKind::Class => "class",
            SymbolKind::Struct => "struct",
            SymbolKind::Enum => "enum",
            SymbolKind::EnumMember => "enum_member",
            SymbolKind::Trait => "trait",
            SymbolKind::Interface => "interface",
            SymbolKind::Type => "type",
            SymbolKind::Constant => "constant",
            SymbolKind::Variable => "variable",
            SymbolKind::Field => "field",
            SymbolKind::Property => "property",
            SymbolKind::Module => "module",
            SymbolKind::Macro => "macro",
        }
    }

    pub fn from_name(name: &str) -> Option<SymbolKind> {
        SymbolKind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// Kinds whose members are named through them (`Type::method`, `Class.method`).
    pub fn is_container(self) -> bool {
        matches!(
            self,
            SymbolKind::Class
                | SymbolKind::Struct
                | SymbolKind::Enum
                | SymbolKind::Trait
                | SymbolKind::Interface
                | SymbolKind::Module
                | SymbolKind::Type
        )
    }

    pub fn is_callable(self) -> bool {
        matches!(self, SymbolKind::Function | SymbolKind::Method | SymbolKind::Constructor | SymbolKind::Macro)
    }
}

/// Who may name a definition from elsewhere, as the source says it (or the language's
/// default when it says nothing).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Visibility {
    Public,
    /// Rust `pub(crate)`, Java package-private, C# `internal`, Kotlin `internal`.
    Internal,
    Protected,
    Private,
}

impl Visibility {
    pub fn name(self) -> &'static str {
        match self {
            Visibility::Public => "public",
            Visibility::Internal => "internal",
            Visibility::Protected => "protected",
            Visibility::Private => "private",
        }
    }
}

/// One definition in a file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Symbol {
    pub name: String,
    /// The name through its containers in the file: `Router::route`, `Flask.route`.
    pub qualified_name: String,
    pub kind: SymbolKind,
    /// 1-based, the definition's first and last line (attributes and comments above it not
    /// included).
    pub line: u32,
    pub end_line: u32,
    /// 1-based column of the name.
    pub column: u32,
    /// The declaration up to its body, on one line.
    pub signature: String,
    /// First line of the doc comment or docstring.
    pub doc: String,
    /// Qualified name of the enclosing definition (type, impl, class, module), or "".
    pub container: String,
    pub visibility: Visibility,
    /// The trait a member's `impl` block implements (Rust `impl fmt::Display for Version`:
    /// `Display`), `OVERRIDE` for a Python method marked `@override`, or "": code that holds
    /// the trait or the base, or the language, calls it, not its name.
    pub implements: String,
    /// The language's test marker is on it (Rust `#[test]`, `#[tokio::test]`, `#[rstest]`):
    /// the test harness runs it; an unmarked function beside it is a helper.
    pub test_marked: bool,
}

/// How an identifier is used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum UseKind {
    /// The callee of a call (`f(x)`, `a.f(x)`, `A::f(x)`, `new A()`).
    Call,
    /// A name in a type position.
    Type,
    /// Any other read or write of the name.
    Read,
    /// A name an import brings in.
    Import,
}

impl UseKind {
    pub fn name(self) -> &'static str {
        match self {
            UseKind::Call => "call",
            UseKind::Type => "type",
            UseKind::Read => "read",
            UseKind::Import => "import",
        }
    }
}

/// One use of a name that is not bound locally (parameters and local variables are left out:
/// they are never definitions another file can mean).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Occurrence {
    /// The name, as an index in the file's `strings`.
    pub name: u32,
    pub line: u32,
    pub column: u32,
    pub kind: UseKind,
    /// What the name was reached through, as an index in `strings` (0: bare): the path
    /// before `::` or the object before `.` (`self`, `Strings`, `crate::io`).
    pub qualifier: u32,
    /// Index in the file's `symbols` of the innermost definition the use is inside, if any:
    /// the caller of a call.
    pub enclosing: Option<u32>,
    /// How many arguments a Rust method call passes (`p.pick(x)`: 1), where the call is
    /// written out (not a macro's template): a method takes exactly that many besides `self`,
    /// which tells apart a builder's setter from its getter of the same name.
    #[serde(default)]
    pub arguments: Option<u8>,
}

/// One import statement's target as written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ImportSpec {
    /// The module path or file as written: `crate::extract::Path`, `.helpers`, `./a`,
    /// `shop/util.h`, `Shop\Util\Strings`.
    pub spec: String,
    pub line: u32,
    /// The names it brings in, as bound in this file (alias applied); empty for a whole-module
    /// import.
    pub names: Vec<String>,
    /// `mod foo;` in Rust, `#include`, `require_relative`, `source`, `@import`: a file path or
    /// module declaration rather than a name lookup.
    pub file_like: bool,
}

/// Everything extracted from one file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FileCode {
    pub language: String,
    pub symbols: Vec<Symbol>,
    pub occurrences: Vec<Occurrence>,
    pub imports: Vec<ImportSpec>,
    /// The file's own module or package as it declares it (`package com.example`,
    /// `namespace Shop\Core`, `defmodule` of its first module, Go's `package x`), "" if none.
    pub package: String,
    /// The names and qualifiers the uses refer to, each once; `strings[0]` is "".
    pub strings: Vec<String>,
    /// Rust's `#[cfg(…)]` on definitions and `#![cfg(…)]` on the file, Go's `//go:build`:
    /// what a build may leave out (`default_run::DefaultRun` says whether the default test run
    /// builds it).
    pub gates: Vec<Gate>,
    /// Names the file binds or exports under an alias, as (bound, original): `from .a import
    /// foo as baz`, `export { foo as baz } from "./a"`, `export { fooCreate as foo }`, `pub
    /// use a::foo as baz`. The file's own uses are rewritten where that is unambiguous
    /// (`extract::apply_renames`); the graph follows these for the files that import `baz`
    /// from this one (`CodeGraph::link_aliases`).
    pub renames: Vec<(String, String)>,
    /// The class a function without a stated return type builds and returns on every path
    /// (`function create() { return new ArraySchema(); }`), by index in `symbols`: a call's
    /// result is typed by it as by an annotation (`array().min(5)`).
    pub returns: Vec<(u32, String)>,
    /// Python classes whose `__getattr__` hands unknown attributes on to a value of their
    /// own (`return getattr(self.table(…), name)`): the `__getattr__`, by index in `symbols`,
    /// and that value's text. A member the class lacks is that value's type's (tinydb's
    /// `db.count(…)` is `Table.count`).
    pub delegates: Vec<(u32, String)>,
    /// Python's `if __name__ == "__main__":` block at file level, as its first and last line:
    /// what runs when the file is a script, never when it is imported (by a test run).
    pub main_block: Option<(u32, u32)>,
    /// Rust's type parameters and the trait each is bound by, with the lines of the item that
    /// declares them (`impl<P: Point> AABB<P>`, `where P: Point`): there a value of type `P`
    /// (a field `lower: P`, a method returning `P`) has the trait's members.
    pub bounds: Vec<Bound>,
    /// Code that runs only when something fails, as 1-based (line, column, end line, end
    /// column): the argument of Rust's `Err(…)`, the closure given to `map_err` or
    /// `ok_or_else`. A test runs it only when it makes something fail.
    pub failure_spans: Vec<[u32; 4]>,
    /// The definitions (by index in `symbols`) that make something fail: Rust tests marked
    /// `#[should_panic]` or asking for the error (`is_err()`, `unwrap_err()`, `Err(…)`), and
    /// functions asking for it (a test's helper, `parse(t).unwrap_err()`).
    pub expects_failure: Vec<u32>,
    /// The Python functions that can only fail (by index in `symbols`): a body that, docstring
    /// aside, is one `raise` (an abstract base's `raise NotImplementedError`). A test that runs
    /// one passes only if it asks for the error.
    pub always_fails: Vec<u32>,
    /// Rust modules declared with a `#[path = "…"]` attribute (by index in `symbols`), and
    /// the path as written, relative to the declaring file's folder: chrono's `#[cfg(windows)]
    /// #[path = "windows.rs"] mod inner;`.
    pub module_paths: Vec<(u32, String)>,
    /// Code that makes no value, as 1-based (line, column, end line, end column): the type
    /// arguments of a Rust call that only checks them (`size_of::<T>()`, `assert_send::<T>()`
    /// of the file's `fn assert_send<T: Send>() {}`). No method of a type named there runs.
    pub type_only_spans: Vec<[u32; 4]>,
    /// Scripts the file runs in a child process (JavaScript's `spawn(process.execPath,
    /// [path.join(__dirname, 'exit', 'ok.js')])`).
    pub spawned: Vec<Spawn>,
    /// Modules the file loads by a path it computes (JavaScript's `await import(resolve(dir,
    /// name))` or `require(file)` over a folder's listing): the calls, each by line and
    /// enclosing definition (`CodeGraph::spawners`).
    #[serde(default)]
    pub computed_loads: Vec<ComputedLoad>,
    /// Names bound to a whole module of the repo (JavaScript's `var createDefaultStream =
    /// require('./lib/default_stream')`): a call of the name calls that module's `module.exports
    /// = function …`, whatever name the graph gives it (`CodeGraph::link_aliases`).
    pub whole_modules: Vec<String>,
    /// Python and Rust definitions that do to a value what runs one of its type's special
    /// methods (by index in `symbols`, `TOP_LEVEL` for the file's own code), as bits: formats it
    /// (`FORMATS_REPR`: `repr(x)`, `'%r' % x`, `f'{x!r}'`, Rust's `{:?}`, `dbg!`; `FORMATS_STR`:
    /// `str(x)`, `print(x)`, `f'{x}'`, `'%s' % x`, `.format(x)`, `pytest.raises(…, match=…)`,
    /// Rust's `{}`, `.to_string()`), applies an operator or comparison (`ADDS` … `NOT_EQUAL`;
    /// Rust's operators, `x[i]` and `.parse()`, which run its `ops` and `FromStr` traits),
    /// deletes an item (`DELETES_ITEM`), copies or pickles it (`COPIES`). A class's `__repr__`,
    /// `__sub__` or `__deepcopy__` (a Rust type's `Debug::fmt` or `Display::fmt`) runs only where
    /// a value is so treated. Sorted by index, one entry each. The file's own entry
    /// (`TOP_LEVEL`) also holds the `SERDE_SHAPES` of the Rust types it derives serde's traits
    /// for.
    pub operations: Vec<(u32, u32)>,
    /// Python dict entries of a plain string key and a name (`"wordcount": do_wordcount` in
    /// jinja2's filter table): the value's span as 1-based (line, column, end line, end
    /// column), and the key. What such a table holds runs where its key is looked up, so a
    /// test runs it only where the test names the key (`Reached::key`).
    pub keyed: Vec<([u32; 4], String)>,
    /// Python code that runs only when an attribute is set, as its 1-based (line, column,
    /// end line, end column) and the attribute's name: the body of `if meta.csrf:` (`if
    /// self.x is not None:`, an `elif` of one), and what follows `if locales is False:
    /// return` in its block. Where the repo's classes leave that attribute off
    /// (`CodeGraph::off_by_default`), a test runs the code only where the test names the
    /// attribute (`class Meta: csrf = True`, `meta={"csrf": True}`). Also the body of `if
    /// hasattr(formdata, "getall"):` (`GuardTest::Asked`), which runs only for an object of a
    /// class that has the name: where the repo's code defines no such name, a test's own
    /// object. And code under a parameter that defaults to `None` or `False` (`if datalist is
    /// not None:`, `GuardTest::Parameter`): it runs where a caller passes the parameter.
    pub guarded: Vec<([u32; 4], String, GuardTest)>,
    /// The attributes a Python class body of the file assigns (`csrf = False`), or a method
    /// assigns on `self`, each with whether the value is `None`, `False` or a parameter
    /// defaulting to one (`self.strict = strict` of `strict=False`): the attribute is off
    /// until something sets it.
    pub class_defaults: Vec<(String, bool)>,
    /// The keyword arguments the file's Python calls pass, as (the callee's name, the
    /// keyword), sorted: `("Field", "datalist")` for `Field(…, datalist=…)`. Not one that hands
    /// on the caller's own parameter (`datalist=datalist`). A parameter that no call outside
    /// the tests passes is one only a test does (`GuardTest::Parameter`).
    pub passed: Vec<(String, String)>,
    /// How many arguments the file's Python calls pass by place, with the callee's name,
    /// sorted: `("normalize_outbound_headers", 3)`. A parameter a call outside the tests
    /// reaches by place is passed there too.
    pub passed_by_place: Vec<(String, u32)>,
    /// The attribute names Python assignments write, as 1-based (line, column) and whether
    /// the assignment is augmented (`n.count += 1`, which reads the attribute too), sorted:
    /// `entry.key = k` runs `key`'s setter, not its getter.
    pub written: Vec<(u32, u32, bool)>,
    /// The values Rust code gives a named field, as the field's name, whether the value is
    /// `None` or `false`, and the definition that gives it (by index in `symbols`, `TOP_LEVEL`
    /// outside any): a struct literal's `range: None` or `range` (shorthand), `self.dev_mode =
    /// enable`, `self.cache.get_or_insert_with(…)`. A field some literal leaves off is on
    /// only where one of the others ran (`GuardTest::Field`).
    pub field_values: Vec<(String, bool, u32)>,
    /// Where a Rust guard compares a value with a constant (`if name == RAW_VALUE_TOKEN`), as
    /// the constant's 1-based (line, column), sorted: that use tests the value, the
    /// constant's other uses hand it on (`GuardTest::Constant`).
    pub compared: Vec<(u32, u32)>,
}

/// A `Gate`'s condition on the Python version that runs a test: `python >=3.15` (its
/// operator and version follow).
pub const PYTHON_GATE: &str = "python ";

/// What the condition of a guarded span (`FileCode::guarded`) tests of its word.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum GuardTest {
    /// An attribute (`meta.csrf`, `self.x is not None`) is set.
    Attribute,
    /// An object has the name: `hasattr(x, "getall")`.
    Asked,
    /// The function's parameter of that name, which defaults to `None` or `False`, is not
    /// assigned before the test and comes after the first (callers pass that one by place),
    /// was passed: `if datalist is not None:` in `def __init__(self, label=None, …,
    /// datalist=None)`. With its place among the parameters a caller gives (`self` and
    /// `cls` not counted).
    Parameter(u32),
    /// A Rust field is on: `if let Some(r) = self.range`, `if self.dev_mode`, the rest of a
    /// block after `if !self.dev_mode { return … }`. The code runs where something that
    /// sets the field to another value than the `None` or `false` a literal gives it ran.
    Field,
    /// A Rust value is a constant: `if name == RAW_VALUE_TOKEN`. The code runs where another
    /// use of the constant ran (`serialize_newtype_struct(RAW_VALUE_TOKEN, …)`).
    Constant,
}

/// `FileCode::operations`: `__repr__` runs (Rust: `Debug::fmt`).
pub const FORMATS_REPR: u32 = 1;
/// `FileCode::operations`: `__str__` runs (Rust: `Display::fmt`).
pub const FORMATS_STR: u32 = 2;
/// `FileCode::operations` of a file's own code: it derives `Serialize` or `Deserialize` for a
/// struct with named fields. A serde data format's `serialize_struct` (`deserialize_struct`,
/// `SerializeStruct`'s methods) runs only for values of such a shape; ron's or serde_json's
/// tests each (de)serialize a few shapes, not all.
pub const SERDE_STRUCT: u32 = 1 << 2;
/// … for a tuple struct of one field (`newtype_struct`).
pub const SERDE_NEWTYPE_STRUCT: u32 = 1 << 3;
/// … for a tuple struct of several fields (`tuple_struct`).
pub const SERDE_TUPLE_STRUCT: u32 = 1 << 4;
/// … for a unit struct (`unit_struct`).
pub const SERDE_UNIT_STRUCT: u32 = 1 << 5;
/// … for an enum with a unit variant (`unit_variant`).
pub const SERDE_UNIT_VARIANT: u32 = 1 << 6;
/// … for an enum with a variant of one unnamed field (`newtype_variant`).
pub const SERDE_NEWTYPE_VARIANT: u32 = 1 << 7;
/// … for an enum with a variant of several unnamed fields (`tuple_variant`).
pub const SERDE_TUPLE_VARIANT: u32 = 1 << 8;
/// … for an enum with a variant of named fields (`struct_variant`).
pub const SERDE_STRUCT_VARIANT: u32 = 1 << 9;
/// Any enum (`deserialize_enum`, `EnumAccess`).
pub const SERDE_ENUM: u32 = SERDE_UNIT_VARIANT | SERDE_NEWTYPE_VARIANT | SERDE_TUPLE_VARIANT | SERDE_STRUCT_VARIANT;
/// Every shape serde's derive gives a type.
pub const SERDE_SHAPES: u32 = SERDE_STRUCT | SERDE_NEWTYPE_STRUCT | SERDE_TUPLE_STRUCT | SERDE_UNIT_STRUCT | SERDE_ENUM;
/// `FileCode::operations`: `copy.copy`, `copy.deepcopy`, `pickle.dumps` / `loads` (`__copy__`,
/// `__deepcopy__`, `__getstate__`, `__setstate__`, `__reduce__`, `__reduce_ex__`).
pub const COPIES: u32 = 1 << 10;
/// … `del x[k]`, or a mutable mapping's `pop`, `popitem`, `clear` (`__delitem__`).
pub const DELETES_ITEM: u32 = 1 << 11;
/// … `<`, `<=`, `>`, `>=`, `sorted`, `max`, `min`, `bisect`, `heapq` (`__lt__`, `__le__`,
/// `__gt__`, `__ge__`).
pub const ORDERS: u32 = 1 << 12;
/// … `!=` (`__ne__`).
pub const NOT_EQUAL: u32 = 1 << 13;
/// … `+`, `+=`, `sum` (`__add__`, `__radd__`, `__iadd__`).
pub const ADDS: u32 = 1 << 14;
/// … `-`, `-=` (`__sub__`, `__rsub__`, `__isub__`).
pub const SUBTRACTS: u32 = 1 << 15;
/// … `*`, `@` (`__mul__`, `__matmul__` and their reflected and in-place forms).
pub const MULTIPLIES: u32 = 1 << 16;
/// … `/`, `//` (`__truediv__`, `__floordiv__`, …).
pub const DIVIDES: u32 = 1 << 17;
/// … `%` (`__mod__`, `__rmod__`, `__imod__`).
pub const MODULO: u32 = 1 << 18;
/// … `**`, `pow` (`__pow__`, `__rpow__`, `__ipow__`).
pub const POWERS: u32 = 1 << 19;
/// … `<<`, `>>` (`__lshift__`, `__rshift__`, …).
pub const SHIFTS: u32 = 1 << 20;
/// … `&` (`__and__`, `__rand__`, `__iand__`).
pub const BIT_AND: u32 = 1 << 21;
/// … `|` (`__or__`, `__ror__`, `__ior__`).
pub const BIT_OR: u32 = 1 << 22;
/// … `^` (`__xor__`, `__rxor__`, `__ixor__`).
pub const BIT_XOR: u32 = 1 << 23;
/// … unary `~` (`__invert__`).
pub const INVERTS: u32 = 1 << 24;
/// … unary `-`, `+` (`__neg__`, `__pos__`).
pub const SIGNS: u32 = 1 << 25;
/// … `abs`, `round`, `math.floor`, `ceil`, `trunc`, `divmod` (`__abs__`, `__round__`,
/// `__floor__`, `__ceil__`, `__trunc__`, `__divmod__`).
pub const ROUNDS: u32 = 1 << 26;
/// … Rust: `x[i]` (`Index::index`, `IndexMut::index_mut`).
pub const INDEXES: u32 = 1 << 27;
/// … Rust: `s.parse()` (`FromStr::from_str`).
pub const PARSES: u32 = 1 << 28;
/// `FileCode::operations`: the index of a file's own code, outside any definition.
pub const TOP_LEVEL: u32 = u32::MAX;

impl FileCode {
    /// The key of the dict entry whose value holds the occurrence `o` (`keyed`).
    pub fn key_of(&self, o: u32) -> Option<&str> {
        let occ = self.occurrences.get(o as usize)?;
        let at = (occ.line, occ.column);
        self.keyed.iter().find(|([l, c, el, ec], _)| (*l, *c) <= at && at <= (*el, *ec)).map(|(_, key)| key.as_str())
    }

    /// The attributes whose being set the occurrence `o` runs under (`guarded`), the innermost
    /// condition's first, each with what the condition tests of it and the guarded span.
    pub fn guards_of(&self, o: u32) -> impl Iterator<Item = (&str, GuardTest, [u32; 4])> {
        let at = self.occurrences.get(o as usize).map(|occ| (occ.line, occ.column));
        self.guarded
            .iter()
            .rev()
            .filter(move |([l, c, el, ec], ..)| at.is_some_and(|at| (*l, *c) <= at && at < (*el, *ec)))
            .map(|(span, w, test)| (w.as_str(), *test, *span))
    }

    /// Whether occurrence `o` is an attribute an assignment writes (`written`): `Some(true)`
    /// when the assignment is augmented.
    pub fn written_at(&self, o: u32) -> Option<bool> {
        let occ = self.occurrences.get(o as usize)?;
        let k = self.written.partition_point(|&(l, c, _)| (l, c) < (occ.line, occ.column));
        self.written.get(k).filter(|&&(l, c, _)| (l, c) == (occ.line, occ.column)).map(|&(.., augmented)| augmented)
    }

    /// What a definition (`None`: the file's own code) does to values that runs a special
    /// method (`operations`).
    pub fn operations_in(&self, definition: Option<u32>) -> u32 {
        let index = definition.unwrap_or(TOP_LEVEL);
        self.operations.binary_search_by_key(&index, |&(i, _)| i).map_or(0, |k| self.operations[k].1)
    }
}

/// A script a file runs in a child process: the path's parts after the file's folder
/// (`["exit", "ok.js"]`) or after the working directory (`from_cwd`: `process.cwd()`), and
/// the call (its line, callee name, enclosing definition).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Spawn {
    pub parts: Vec<String>,
    pub from_cwd: bool,
    pub line: u32,
    pub callee: String,
    pub enclosing: Option<u32>,
}

/// A call that loads a module by a computed path (`import(path)`, `require(file)`): its line
/// and enclosing definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ComputedLoad {
    pub line: u32,
    pub enclosing: Option<u32>,
}

/// A type parameter's bound over the lines of the item that declares it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Bound {
    pub param: String,
    /// The trait's name, its path left out (`Point` for `crate::point::Point`).
    pub bound: String,
    pub line: u32,
    pub end_line: u32,
}

/// A build condition written on a definition (Rust `#[cfg(feature = "serde")]` on an item,
/// `#![cfg(…)]` at the top of a file).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Gate {
    /// The definition, by index in the file's symbols; `None`: the whole file.
    pub symbol: Option<u32>,
    /// The predicate as written: inside Rust's `cfg(…)` (`feature = "serde"`, `all(test,
    /// not(loom))`), after Go's `//go:build` (`integration && !windows`); `false` for a skip
    /// marker (`#[ignore]`, `@pytest.mark.skip`): the harness never runs it unasked.
    pub cfg: String,
}

impl FileCode {
    pub fn new(language: &str) -> FileCode {
        FileCode { language: language.to_string(), strings: vec![String::new()], ..FileCode::default() }
    }

    /// A use's name.
    pub fn name_of(&self, occurrence: &Occurrence) -> &str {
        self.strings.get(occurrence.name as usize).map(String::as_str).unwrap_or("")
    }

    /// What a use was reached through ("" when bare).
    pub fn qualifier_of(&self, occurrence: &Occurrence) -> &str {
        self.strings.get(occurrence.qualifier as usize).map(String::as_str).unwrap_or("")
    }

    /// Variable-length integers: uses are mostly small numbers, and the facts of a large repo
    /// are stored once per file.
    pub fn encode(&self) -> Vec<u8> {
        use bincode::Options;
        bincode::DefaultOptions::new().serialize(self).unwrap_or_default()
    }

    pub fn decode(bytes: &[u8]) -> Option<FileCode> {
        use bincode::Options;
        bincode::DefaultOptions::new().deserialize(bytes).ok()
    }
}

/// Whether code in language `from` can name a definition written in `to`: the same
/// language, or languages that share their definitions by name (JavaScript and TypeScript;
/// C and C++ through headers; the JVM's Java, Kotlin and Scala). Anything else is a
/// coincidence of names between two halves of a mixed repo.
pub fn can_name(from: &str, to: &str) -> bool {
    fn family(language: &str) -> &str {
        match language {
            "javascript" | "typescript" | "tsx" => "js",
            "c" | "cpp" => "c",
            "java" | "kotlin" | "scala" => "jvm",
            other => other,
        }
    }
    from == to || family(from) == family(to)
}

/// What `Symbol::implements` holds for a Python method marked `@override` (PEP 698): it
/// overrides a base's method, which the base's code calls (a library's, where no base in the
/// repo defines it: cloup's `Command.format_help`, which click's `get_help` runs).
pub const OVERRIDE: &str = "override";

/// Identifies the grammars and the extraction that built a repo's symbols: stored with them,
/// so a binary with other grammars (or another extraction format) knows they are stale.
pub fn grammar_fingerprint() -> String {
    // Read on every code query and index run: computed once per process.
    static FINGERPRINT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    FINGERPRINT.get_or_init(compute_fingerprint).clone()
}

fn compute_fingerprint() -> String {
    // Bumped whenever `FileCode`, what the extractor emits or how a file is chunked changes:
    // a run under another fingerprint reads every file again.
    const FORMAT: u32 = 114;
    let abi: Vec<String> = crate::ingest::lang::CODE_LANGUAGES
        .iter()
        .filter_map(|l| l.grammar().map(|g| format!("{}:{}", l.name(), grammar_identity(&g))))
        .collect();
    let fingerprint = format!("format {FORMAT}; tree-sitter {}; {}", tree_sitter::LANGUAGE_VERSION, abi.join(","));
    match std::env::var(GRAMMAR_SALT_ENV) {
        Ok(salt) if !salt.is_empty() => format!("{fingerprint}; {salt}"),
        _ => fingerprint,
    }
}

/// The name an occurrence carries where code calls a member of `self` whose name is known
/// only at run time (`getattr(self, name)`; followed by the name's constant prefix when it
/// has one): no definition has it, and the graph reads it as a possible use of the methods
/// subclasses add and of the class's own that nothing names (`CodeGraph::uses`).
pub const DISPATCH_NAME: &str = "*";

/// Test hook: a binary run with this set counts as one with other grammars (the parser-drift
/// tests need two "binaries").
pub const GRAMMAR_SALT_ENV: &str = "DOCDEX_TEST_GRAMMAR_SALT";

/// A grammar's ABI version and size of its tables: any grammar release changes at least one.
fn grammar_identity(grammar: &tree_sitter::Language) -> String {
    format!(
        "{}/{}/{}/{}",
        grammar.abi_version(),
        grammar.node_kind_count(),
        grammar.parse_state_count(),
        grammar.field_count()
    )
}

/// Files the code graph reads besides code: Go's, Cargo's, TypeScript's and npm's manifests
/// for import resolution, and JavaScript test runners' configs for which files are tests.
pub fn is_graph_config(rel_path: &str) -> bool {
    let name = rel_path.rsplit('/').next().unwrap_or(rel_path);
    matches!(name, "go.mod" | "Cargo.toml" | "package.json")
        || (name.starts_with("tsconfig") && name.ends_with(".json"))
        || test_files::is_runner_config(rel_path)
}

/// A JavaScript member set to what is defined elsewhere (`exports.application = proto`): the
/// graph follows it as a definition, but a query naming it asks for the thing itself.
fn is_alias(signature: &str) -> bool {
    signature.split_once('=').is_some_and(|(_, value)| {
        let value = value.trim().trim_end_matches(';').trim_end();
        !value.is_empty() && value.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '$')
    })
}

/// A source file's chunks and code facts, from one full parse; each chunk names the
/// definitions on its lines (types, callables, constants, modules, macros: what a query of
/// one identifier asks for, not fields or variables).
///
/// `path` (relative to the repo root) names what a file is itself: a Zig file with fields is a
/// struct of its name (`extract::name_file_struct`).
pub fn chunks_and_code(
    language: Language,
    path: &str,
    text: &str,
    params: ChunkParams,
) -> (Vec<Chunk>, Option<FileCode>) {
    let tree_opt = crate::code::extract::parse(language, text);
    let mut chunks = crate::ingest::chunk::chunk_file_parsed(language, text, params, tree_opt.as_ref());
    if crate::ingest::surface::public_items(language, text) == Some(0) {
        for chunk in &mut chunks {
            chunk.internal = true;
        }
    }
    let mut code = tree_opt.and_then(|tree| crate::code::extract::extract_tree(language, &tree, text));
    if let Some(code) = &mut code {
        crate::code::extract::name_file_struct(code, path);
    }
    if let Some(code) = &code {
        // JavaScript's member assignments are the definitions that can be aliases.
        let script = matches!(language, Language::JavaScript | Language::TypeScript | Language::Tsx);
        let left_out = |s: &&Symbol| {
            matches!(s.kind, SymbolKind::Variable | SymbolKind::Field | SymbolKind::Property | SymbolKind::EnumMember)
                || (script && is_alias(&s.signature))
        };
        // A definition that is the whole file (line 1) belongs to its first chunk, which may
        // start below a licence notice no chunk holds.
        let first_line = chunks.first().map_or(1, |c| c.line_start);
        let named = code.symbols.iter().filter(|s| !left_out(s));
        let lines = named.map(|s| (if s.line == 1 { first_line } else { u64::from(s.line) }, s.name.as_str()));
        crate::ingest::chunk::add_definitions(&mut chunks, lines);
        // Only where a language can re-export and the file imports anything: the lines are
        // read for the statement's first word.
        if let Some(prefix) = reexport_prefix(language).filter(|_| !code.imports.is_empty()) {
            let lines: Vec<&str> = text.lines().collect();
            let exports = code
                .imports
                .iter()
                .filter(|i| {
                    lines.get((i.line as usize).wrapping_sub(1)).is_some_and(|l| l.trim_start().starts_with(prefix))
                })
                .flat_map(|i| i.names.iter().map(move |name| (u64::from(i.line), name.as_str())));
            crate::ingest::chunk::add_exports(&mut chunks, exports);
        }
    }
    (chunks, code)
}

/// How an import statement that makes its names public begins: Rust's `pub use` (not
/// `pub(crate) use`), JavaScript's and TypeScript's `export … from`. A facade crate or package
/// answers for what it re-exports (axum's `extract` module for `FromRequest`, which axum-core
/// defines).
fn reexport_prefix(language: Language) -> Option<&'static str> {
    match language {
        Language::Rust => Some("pub use "),
        Language::JavaScript | Language::TypeScript | Language::Tsx => Some("export "),
        _ => None,
    }
}

#[cfg(test)]
mod tests;
