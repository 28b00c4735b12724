//! Per-language tables: which tree-sitter nodes define, use, call, scope and bind names.
//! The walker in `extract` is generic; what differs between grammars lives here.

use super::SymbolKind::{self, *};
use crate::ingest::Language;

pub(super) struct Spec {
    /// Node kinds that define a symbol, with its kind. A function inside a class-like
    /// container becomes a method.
    pub defs: &'static [(&'static str, SymbolKind)],
    /// Node kinds that contain members without being a symbol themselves (Rust `impl`,
    /// Swift `extension`): the container is named by the given field.
    pub impls: &'static [(&'static str, &'static str)],
    /// Identifier node kinds: each one not bound locally is a use of a name.
    pub idents: &'static [&'static str],
    /// Identifier kinds in type positions (uses of kind `type`).
    pub type_idents: &'static [&'static str],
    /// Call node kinds, with the field that holds the callee ("" = the first named child).
    pub calls: &'static [(&'static str, &'static str)],
    /// Member and path expressions: (kind, field of the object, field of the member); ""
    /// fields mean the first and the last named child.
    pub members: &'static [(&'static str, &'static str, &'static str)],
    /// Binding forms inside a function: (kind, field holding the bound pattern; "" = the
    /// first named child).
    pub bindings: &'static [(&'static str, &'static str)],
    /// The field of a function definition that holds its parameters.
    pub params: &'static [&'static str],
    /// Between a container's and a member's name in a qualified name.
    pub separator: &'static str,
    /// Other node kinds the walker reads: imports, package declarations, and the kinds some
    /// languages define or scope with (Elixir's `call`, Python's `assignment`…).
    pub special: &'static [&'static str],
}

/// A node kind the walk may skip: none of the tables names it.
pub(super) const SKIP: u8 = 0;
/// An identifier kind and nothing else: a use, read directly.
pub(super) const IDENT_ONLY: u8 = 1;
/// Anything else the tables name: the full visit.
pub(super) const VISIT: u8 = 2;

/// Slots for one table per code language (`CODE_LANGUAGES`).
type KindTables = [std::sync::OnceLock<Vec<u8>>; 20];

/// A language's table of one byte per kind id (`Node::kind_id`) of its grammar, built once
/// by `classify` (a kind's name → its byte): the walk then decides per node with an index,
/// not string compares. Empty for a language without a grammar.
fn kind_table(tables: &'static KindTables, language: Language, classify: impl Fn(&str) -> u8) -> &'static [u8] {
    let Some(slot) = crate::ingest::lang::CODE_LANGUAGES.iter().position(|l| *l == language) else {
        return &[];
    };
    tables[slot].get_or_init(|| {
        let Some(grammar) = language.grammar() else { return Vec::new() };
        (0..grammar.node_kind_count() as u16).map(|id| classify(grammar.node_kind_for_id(id).unwrap_or(""))).collect()
    })
}

/// Per kind id of a language's grammar: SKIP, IDENT_ONLY or VISIT.
pub(super) fn roles(language: Language) -> &'static [u8] {
    static TABLES: KindTables = [const { std::sync::OnceLock::new() }; 20];
    let Some(spec) = spec(language) else { return &[] };
    kind_table(&TABLES, language, |name| {
        let other = spec.defs.iter().any(|(k, _)| *k == name)
            || spec.impls.iter().any(|(k, _)| *k == name)
            || spec.calls.iter().any(|(k, _)| *k == name)
            || spec.members.iter().any(|(k, _, _)| *k == name)
            || spec.bindings.iter().any(|(k, _)| *k == name)
            || spec.special.contains(&name);
        if other {
            VISIT
        } else if spec.idents.contains(&name) {
            IDENT_ONLY
        } else {
            SKIP
        }
    })
}

/// Per kind id of a language's grammar: what the kind is to a doc lookup (`DOC_*`).
pub(super) fn doc_roles(language: Language) -> &'static [u8] {
    static TABLES: KindTables = [const { std::sync::OnceLock::new() }; 20];
    kind_table(&TABLES, language, |name| match name {
        kind if kind.contains("comment") || kind == "haddock" => DOC_COMMENT,
        "attribute_item" | "decorator" | "annotation" => DOC_ATTRIBUTE,
        _ => DOC_OTHER,
    })
}

/// A node kind that ends a run of comments before a definition.
pub(super) const DOC_OTHER: u8 = 0;
/// A comment.
pub(super) const DOC_COMMENT: u8 = 1;
/// An attribute, decorator or annotation (between a doc comment and its definition).
pub(super) const DOC_ATTRIBUTE: u8 = 2;

pub(super) fn spec(language: Language) -> Option<&'static Spec> {
    Some(match language {
        Language::Rust => &RUST,
        Language::Python => &PYTHON,
        Language::TypeScript | Language::Tsx => &TYPESCRIPT,
        Language::JavaScript => &JAVASCRIPT,
        Language::Go => &GO,
        Language::Java => &JAVA,
        Language::Kotlin => &KOTLIN,
        Language::Scala => &SCALA,
        Language::C => &C,
        Language::Cpp => &CPP,
        Language::CSharp => &CSHARP,
        Language::Swift => &SWIFT,
        Language::Ruby => &RUBY,
        Language::Php => &PHP,
        Language::Lua => &LUA,
        Language::Bash => &BASH,
        Language::Elixir => &ELIXIR,
        Language::Haskell => &HASKELL,
        Language::Zig => &ZIG,
        _ => return None,
    })
}

static RUST: Spec = Spec {
    defs: &[
        ("function_item", Function),
        ("function_signature_item", Function),
        ("struct_item", Struct),
        ("union_item", Struct),
        ("enum_item", Enum),
        ("enum_variant", EnumMember),
        ("trait_item", Trait),
        ("type_item", Type),
        ("associated_type", Type),
        ("const_item", Constant),
        ("static_item", Constant),
        ("mod_item", Module),
        ("macro_definition", Macro),
        ("field_declaration", Field),
    ],
    impls: &[("impl_item", "type")],
    idents: &["identifier", "type_identifier", "field_identifier"],
    type_idents: &["type_identifier"],
    // `load::<_, P>` names a function with its generic arguments (a type would be a
    // `generic_type`): a value that is called, where it is called or handed on.
    calls: &[("call_expression", "function"), ("macro_invocation", "macro"), ("generic_function", "function")],
    members: &[
        ("field_expression", "value", "field"),
        ("scoped_identifier", "path", "name"),
        ("scoped_type_identifier", "path", "name"),
    ],
    bindings: &[
        ("let_declaration", "pattern"),
        ("for_expression", "pattern"),
        ("closure_parameters", ""),
        ("match_pattern", ""),
        ("let_condition", "pattern"),
    ],
    params: &["parameters"],
    separator: "::",
    special: &[
        "use_declaration",
        "mod_item",
        "extern_crate_declaration",
        "macro_invocation",
        // Guards and the field values that turn them on (`note_rust_guard`, `note_field_value`).
        "if_expression",
        "field_initializer",
        "shorthand_field_initializer",
        "assignment_expression",
    ],
};

static PYTHON: Spec = Spec {
    defs: &[("function_definition", Function), ("class_definition", Class)],
    impls: &[],
    idents: &["identifier"],
    type_idents: &[],
    calls: &[("call", "function")],
    members: &[("attribute", "object", "attribute")],
    bindings: &[
        ("assignment", "left"),
        ("augmented_assignment", "left"),
        ("for_statement", "left"),
        // A comprehension's `for_in_clause` is bound by the comprehension (before its element).
        // `with open(p) as f:` binds `f` only: the target, never the call before `as`.
        ("as_pattern_target", ""),
        ("lambda_parameters", ""),
        ("named_expression", "name"),
    ],
    params: &["parameters"],
    separator: ".",
    special: &[
        "import_statement",
        "import_from_statement",
        "future_import_statement",
        "assignment",
        // Their `for` clauses bind before the element expression written first.
        "list_comprehension",
        "set_comprehension",
        "dictionary_comprehension",
        "generator_expression",
        // A dict entry `"key": function` (`FileCode::keyed`).
        "pair",
        // Code that runs only when an attribute is set (`FileCode::guarded`).
        "if_statement",
        "elif_clause",
    ],
};

static TYPESCRIPT: Spec = Spec {
    defs: &[
        ("function_declaration", Function),
        ("generator_function_declaration", Function),
        ("function_signature", Function),
        ("method_definition", Method),
        ("method_signature", Method),
        ("abstract_method_signature", Method),
        ("class_declaration", Class),
        ("abstract_class_declaration", Class),
        ("interface_declaration", Interface),
        ("type_alias_declaration", Type),
        ("enum_declaration", Enum),
        ("internal_module", Module),
        ("public_field_definition", Field),
        ("property_signature", Field),
        ("variable_declarator", Variable),
    ],
    impls: &[],
    idents: &["identifier", "type_identifier", "property_identifier", "shorthand_property_identifier"],
    type_idents: &["type_identifier"],
    calls: &[("call_expression", "function"), ("new_expression", "constructor")],
    members: &[("member_expression", "object", "property"), ("nested_type_identifier", "module", "name")],
    bindings: &[("for_in_statement", "left"), ("catch_clause", "parameter"), ("arrow_function", "parameter")],
    params: &["parameters", "parameter"],
    separator: ".",
    special: &["import_statement", "export_statement", "call_expression"],
};

static JAVASCRIPT: Spec = Spec {
    defs: &[
        ("function_declaration", Function),
        ("generator_function_declaration", Function),
        ("method_definition", Method),
        ("class_declaration", Class),
        ("field_definition", Field),
        ("variable_declarator", Variable),
        // `Test.prototype.run = function () {…}`, `exports.parse = …`: see
        // `assigned_function_member`.
        ("assignment_expression", Function),
    ],
    impls: &[],
    idents: &["identifier", "property_identifier", "shorthand_property_identifier"],
    type_idents: &[],
    calls: &[("call_expression", "function"), ("new_expression", "constructor")],
    members: &[("member_expression", "object", "property")],
    bindings: &[("for_in_statement", "left"), ("catch_clause", "parameter"), ("arrow_function", "parameter")],
    params: &["parameters", "parameter"],
    separator: ".",
    special: &["import_statement", "export_statement", "call_expression"],
};

static GO: Spec = Spec {
    defs: &[
        ("function_declaration", Function),
        ("method_declaration", Method),
        ("type_spec", Type),
        ("type_alias", Type),
        ("const_spec", Constant),
        ("var_spec", Variable),
        ("field_declaration", Field),
        ("method_elem", Method),
    ],
    impls: &[],
    idents: &["identifier", "type_identifier", "field_identifier", "package_identifier"],
    type_idents: &["type_identifier"],
    calls: &[("call_expression", "function")],
    members: &[("selector_expression", "operand", "field"), ("qualified_type", "package", "name")],
    bindings: &[
        ("short_var_declaration", "left"),
        ("range_clause", "left"),
        ("var_spec", "name"),
        ("const_spec", "name"),
        ("func_literal", "parameters"),
    ],
    params: &["parameters", "receiver"],
    separator: ".",
    special: &["import_spec", "package_clause"],
};

static JAVA: Spec = Spec {
    defs: &[
        ("class_declaration", Class),
        ("interface_declaration", Interface),
        ("enum_declaration", Enum),
        ("record_declaration", Class),
        ("annotation_type_declaration", Interface),
        // An annotation's element (`boolean serialize() default true;`): read as a method.
        ("annotation_type_element_declaration", Method),
        ("method_declaration", Method),
        ("constructor_declaration", Constructor),
        ("field_declaration", Field),
        ("constant_declaration", Constant),
        ("enum_constant", EnumMember),
    ],
    impls: &[],
    idents: &["identifier", "type_identifier"],
    type_idents: &["type_identifier"],
    calls: &[("method_invocation", "name"), ("object_creation_expression", "type")],
    members: &[
        ("method_invocation", "object", "name"),
        ("field_access", "object", "field"),
        ("scoped_type_identifier", "", ""),
    ],
    bindings: &[
        ("local_variable_declaration", "declarator"),
        ("enhanced_for_statement", "name"),
        ("catch_formal_parameter", "name"),
        ("lambda_expression", "parameters"),
        ("resource", "name"),
    ],
    params: &["parameters"],
    separator: ".",
    special: &["import_declaration", "package_declaration"],
};

static KOTLIN: Spec = Spec {
    defs: &[
        ("class_declaration", Class),
        ("object_declaration", Class),
        ("function_declaration", Function),
        ("property_declaration", Property),
        ("type_alias", Type),
        ("secondary_constructor", Constructor),
        ("enum_entry", EnumMember),
        ("class_parameter", Property),
    ],
    impls: &[],
    idents: &["identifier"],
    type_idents: &[],
    calls: &[("call_expression", ""), ("constructor_invocation", "")],
    members: &[("navigation_expression", "", "")],
    bindings: &[("for_statement", ""), ("lambda_parameters", ""), ("variable_declaration", "")],
    params: &["function_value_parameters"],
    separator: ".",
    special: &["import", "package_header", "companion_object"],
};

static SCALA: Spec = Spec {
    defs: &[
        ("class_definition", Class),
        ("object_definition", Class),
        ("trait_definition", Trait),
        ("enum_definition", Enum),
        ("function_definition", Function),
        ("function_declaration", Function),
        ("val_definition", Constant),
        ("var_definition", Variable),
        ("type_definition", Type),
    ],
    impls: &[],
    idents: &["identifier", "type_identifier"],
    type_idents: &["type_identifier"],
    calls: &[("call_expression", "function"), ("instance_expression", "")],
    members: &[("field_expression", "value", "field"), ("stable_type_identifier", "", "")],
    bindings: &[("lambda_expression", "parameters"), ("generator", "pattern")],
    params: &["parameters", "class_parameters"],
    separator: ".",
    special: &["import_declaration", "package_clause"],
};

static C: Spec = Spec {
    defs: &[
        ("function_definition", Function),
        ("struct_specifier", Struct),
        ("union_specifier", Struct),
        ("enum_specifier", Enum),
        ("enumerator", EnumMember),
        ("type_definition", Type),
        ("preproc_def", Macro),
        ("preproc_function_def", Macro),
        ("field_declaration", Field),
    ],
    impls: &[],
    idents: &["identifier", "type_identifier", "field_identifier"],
    type_idents: &["type_identifier"],
    calls: &[("call_expression", "function")],
    members: &[("field_expression", "argument", "field")],
    bindings: &[("declaration", "declarator"), ("init_declarator", "declarator")],
    params: &["declarator"],
    separator: ".",
    special: &["preproc_include"],
};

static CPP: Spec = Spec {
    defs: &[
        ("function_definition", Function),
        ("class_specifier", Class),
        ("struct_specifier", Struct),
        ("union_specifier", Struct),
        ("enum_specifier", Enum),
        ("enumerator", EnumMember),
        ("type_definition", Type),
        ("alias_declaration", Type),
        ("namespace_definition", Module),
        ("preproc_def", Macro),
        ("preproc_function_def", Macro),
        ("field_declaration", Field),
        ("concept_definition", Type),
    ],
    impls: &[],
    idents: &["identifier", "type_identifier", "field_identifier", "namespace_identifier"],
    type_idents: &["type_identifier"],
    calls: &[("call_expression", "function"), ("new_expression", "type")],
    members: &[("field_expression", "argument", "field"), ("qualified_identifier", "scope", "name")],
    bindings: &[
        ("declaration", "declarator"),
        ("init_declarator", "declarator"),
        ("for_range_loop", "declarator"),
        ("lambda_expression", "declarator"),
    ],
    params: &["declarator"],
    separator: "::",
    special: &["preproc_include"],
};

static CSHARP: Spec = Spec {
    defs: &[
        ("class_declaration", Class),
        ("struct_declaration", Struct),
        ("interface_declaration", Interface),
        ("enum_declaration", Enum),
        ("record_declaration", Class),
        ("record_struct_declaration", Struct),
        ("enum_member_declaration", EnumMember),
        ("method_declaration", Method),
        ("constructor_declaration", Constructor),
        ("property_declaration", Property),
        ("field_declaration", Field),
        ("event_field_declaration", Field),
        ("delegate_declaration", Type),
        ("namespace_declaration", Module),
        ("file_scoped_namespace_declaration", Module),
        ("local_function_statement", Function),
    ],
    impls: &[],
    idents: &["identifier"],
    type_idents: &[],
    calls: &[("invocation_expression", "function"), ("object_creation_expression", "type")],
    members: &[("member_access_expression", "expression", "name"), ("qualified_name", "qualifier", "name")],
    bindings: &[
        ("local_declaration_statement", ""),
        ("foreach_statement", "left"),
        ("catch_declaration", "name"),
        ("lambda_expression", "parameters"),
    ],
    params: &["parameters"],
    separator: ".",
    special: &["using_directive", "namespace_declaration", "file_scoped_namespace_declaration"],
};

static SWIFT: Spec = Spec {
    defs: &[
        ("class_declaration", Class),
        ("protocol_declaration", Interface),
        ("function_declaration", Function),
        ("protocol_function_declaration", Method),
        ("init_declaration", Constructor),
        ("property_declaration", Property),
        ("typealias_declaration", Type),
        ("enum_entry", EnumMember),
    ],
    impls: &[],
    idents: &["simple_identifier", "type_identifier"],
    type_idents: &["type_identifier"],
    calls: &[("call_expression", "")],
    members: &[("navigation_expression", "target", "suffix")],
    bindings: &[("property_declaration", "name"), ("for_statement", "item"), ("lambda_literal", "")],
    params: &[],
    separator: ".",
    special: &["import_declaration"],
};

static RUBY: Spec = Spec {
    defs: &[
        ("method", Method),
        ("singleton_method", Method),
        ("class", Class),
        ("module", Module),
        ("singleton_class", Class),
    ],
    impls: &[],
    idents: &["identifier", "constant"],
    type_idents: &[],
    calls: &[("call", "method")],
    members: &[("call", "receiver", "method"), ("scope_resolution", "scope", "name")],
    bindings: &[("assignment", "left"), ("block_parameters", ""), ("for", "pattern")],
    params: &["parameters"],
    separator: "::",
    special: &["call", "assignment"],
};

static PHP: Spec = Spec {
    defs: &[
        ("function_definition", Function),
        ("method_declaration", Method),
        ("class_declaration", Class),
        ("interface_declaration", Interface),
        ("trait_declaration", Trait),
        ("enum_declaration", Enum),
        ("enum_case", EnumMember),
        ("const_element", Constant),
        ("property_element", Property),
    ],
    impls: &[],
    idents: &["name"],
    type_idents: &[],
    calls: &[
        ("function_call_expression", "function"),
        ("member_call_expression", "name"),
        ("scoped_call_expression", "name"),
        ("nullsafe_member_call_expression", "name"),
        ("object_creation_expression", ""),
    ],
    members: &[
        ("member_call_expression", "object", "name"),
        ("nullsafe_member_call_expression", "object", "name"),
        ("scoped_call_expression", "scope", "name"),
        ("member_access_expression", "object", "name"),
        ("class_constant_access_expression", "", ""),
        ("qualified_name", "prefix", ""),
    ],
    bindings: &[],
    params: &[],
    separator: "::",
    special: &[
        "namespace_use_declaration",
        "namespace_definition",
        "require_expression",
        "require_once_expression",
        "include_expression",
        "include_once_expression",
    ],
};

static LUA: Spec = Spec {
    // A comment defines a class when it is a `---@class` annotation (`lua_annotated_class`).
    defs: &[("function_declaration", Function), ("comment", Class)],
    impls: &[],
    idents: &["identifier"],
    type_idents: &[],
    calls: &[("function_call", "name")],
    members: &[("dot_index_expression", "table", "field"), ("method_index_expression", "table", "method")],
    bindings: &[("for_generic_clause", ""), ("for_numeric_clause", "name")],
    params: &["parameters"],
    separator: ".",
    special: &["function_call"],
};

static BASH: Spec = Spec {
    defs: &[("function_definition", Function)],
    impls: &[],
    idents: &["command_name"],
    type_idents: &[],
    calls: &[("command", "name")],
    members: &[],
    bindings: &[],
    params: &[],
    separator: ".",
    special: &["command"],
};

static ELIXIR: Spec = Spec {
    // Elixir defines with calls (`def`, `defmodule`): the walker reads those itself.
    defs: &[],
    impls: &[],
    idents: &["identifier", "alias"],
    type_idents: &[],
    calls: &[("call", "target")],
    members: &[("dot", "left", "right")],
    bindings: &[],
    params: &[],
    separator: ".",
    special: &["call"],
};

static HASKELL: Spec = Spec {
    defs: &[
        ("function", Function),
        ("bind", Function),
        ("signature", Function),
        ("data_type", Type),
        ("newtype", Type),
        ("type_synonym", Type),
        ("class", Interface),
        ("data_constructor", EnumMember),
        ("newtype_constructor", EnumMember),
        ("field", Field),
    ],
    impls: &[("instance", "name")],
    idents: &["variable", "name", "constructor"],
    type_idents: &["name"],
    calls: &[("apply", "function")],
    members: &[("qualified", "module", "id")],
    bindings: &[("patterns", ""), ("lambda", "patterns"), ("bind", "pattern")],
    params: &["patterns"],
    separator: ".",
    special: &["import", "header"],
};

static ZIG: Spec = Spec {
    defs: &[("function_declaration", Function), ("variable_declaration", Constant), ("container_field", Field)],
    impls: &[],
    idents: &["identifier"],
    type_idents: &[],
    calls: &[("call_expression", "function")],
    members: &[("field_expression", "object", "member")],
    bindings: &[],
    params: &["parameters"],
    separator: ".",
    special: &["builtin_function", "test_declaration"],
};
