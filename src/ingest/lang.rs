//! Language detection by file name.

use std::borrow::Cow;
use std::path::Path;

/// How a file is chunked and read for symbols; the name is what search results report as
/// `language`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Language {
    Rust,
    Python,
    TypeScript,
    Tsx,
    JavaScript,
    Go,
    Java,
    Kotlin,
    Scala,
    C,
    Cpp,
    CSharp,
    Swift,
    Ruby,
    Php,
    Lua,
    Bash,
    Elixir,
    Haskell,
    Zig,
    Markdown,
    Text,
    /// Documents converted to text before chunking (`crate::document`): by headings, PDF by
    /// pages too.
    Html,
    Pdf,
    Docx,
    /// Source in a language without a parser here: chunked by line windows.
    OtherCode(&'static str),
}

/// The languages with a tree-sitter grammar: chunked at item boundaries and read for
/// symbols, references and imports.
pub const CODE_LANGUAGES: [Language; 20] = [
    Language::Rust,
    Language::Python,
    Language::TypeScript,
    Language::Tsx,
    Language::JavaScript,
    Language::Go,
    Language::Java,
    Language::Kotlin,
    Language::Scala,
    Language::C,
    Language::Cpp,
    Language::CSharp,
    Language::Swift,
    Language::Ruby,
    Language::Php,
    Language::Lua,
    Language::Bash,
    Language::Elixir,
    Language::Haskell,
    Language::Zig,
];

/// Prose rather than code: a hit's heading is a heading path, not an enclosing item.
pub const PROSE_LANGUAGES: [Language; 5] =
    [Language::Markdown, Language::Text, Language::Html, Language::Pdf, Language::Docx];

impl Language {
    pub fn detect(path: &Path) -> Language {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("").to_ascii_lowercase();
        let ext = name.rsplit_once('.').map(|(_, ext)| ext).unwrap_or("");
        match ext {
            "rs" => Language::Rust,
            "py" | "pyi" => Language::Python,
            "ts" | "mts" | "cts" => Language::TypeScript,
            "tsx" => Language::Tsx,
            "js" | "jsx" | "mjs" | "cjs" => Language::JavaScript,
            "go" => Language::Go,
            "java" => Language::Java,
            "kt" | "kts" => Language::Kotlin,
            "scala" | "sc" => Language::Scala,
            // A `.h` is read as C unless its text says C++ (`with_text`): the C++ grammar
            // would misread C's `new` or `class` as keywords.
            "c" | "h" => Language::C,
            "cc" | "cpp" | "cxx" | "c++" | "hpp" | "hh" | "hxx" | "h++" | "ipp" | "inl" => Language::Cpp,
            "cs" => Language::CSharp,
            "swift" => Language::Swift,
            "rb" | "rake" | "gemspec" => Language::Ruby,
            "php" => Language::Php,
            "lua" => Language::Lua,
            "sh" | "bash" => Language::Bash,
            "ex" | "exs" => Language::Elixir,
            "hs" => Language::Haskell,
            "zig" => Language::Zig,
            "md" | "markdown" | "mdx" => Language::Markdown,
            "txt" | "rst" | "adoc" | "text" | "" => match name.as_str() {
                "makefile" | "dockerfile" => Language::OtherCode("make"),
                "rakefile" | "gemfile" => Language::Ruby,
                _ => Language::Text,
            },
            "zsh" => Language::OtherCode("shell"),
            "toml" => Language::OtherCode("toml"),
            "yaml" | "yml" => Language::OtherCode("yaml"),
            "json" => Language::OtherCode("json"),
            "html" | "htm" | "xhtml" => Language::Html,
            "pdf" => Language::Pdf,
            "docx" => Language::Docx,
            "css" | "scss" => Language::OtherCode("css"),
            "sql" => Language::OtherCode("sql"),
            _ => Language::OtherCode("text"),
        }
    }

    /// The language of `path` once its text is known: a `.h` that declares a class, a
    /// namespace or a template, has access labels or names `std::` is C++ (the C grammar
    /// would lose its classes and their members); a file without an extension is the
    /// language its `#!` line runs (a package's `bin/` scripts: `#!/usr/bin/env node`); every
    /// other file is what its name says.
    pub fn with_text(self, path: &Path, text: &str) -> Language {
        let header = path.extension().is_some_and(|ext| ext.eq_ignore_ascii_case("h"));
        if self == Language::C && header && says_cpp(text) {
            Language::Cpp
        } else if self == Language::Text && path.extension().is_none() {
            shebang_language(text).unwrap_or(self)
        } else {
            self
        }
    }

    /// Whether a file named so may be code that only its text tells (`with_text`): a name
    /// without an extension.
    pub fn may_be_script(self, path: &Path) -> bool {
        self == Language::Text && path.extension().is_none()
    }

    pub fn name(self) -> &'static str {
        match self {
            Language::Rust => "rust",
            Language::Python => "python",
            Language::TypeScript => "typescript",
            Language::Tsx => "tsx",
            Language::JavaScript => "javascript",
            Language::Go => "go",
            Language::Java => "java",
            Language::Kotlin => "kotlin",
            Language::Scala => "scala",
            Language::C => "c",
            Language::Cpp => "cpp",
            Language::CSharp => "csharp",
            Language::Swift => "swift",
            Language::Ruby => "ruby",
            Language::Php => "php",
            Language::Lua => "lua",
            Language::Bash => "bash",
            Language::Elixir => "elixir",
            Language::Haskell => "haskell",
            Language::Zig => "zig",
            Language::Markdown => "markdown",
            Language::Text => "text",
            Language::Html => "html",
            Language::Pdf => "pdf",
            Language::Docx => "docx",
            Language::OtherCode(name) => name,
        }
    }

    /// A document format: its bytes are converted to text (`crate::document`) before they
    /// are chunked, and its hits carry a heading path (and a page, for a PDF).
    pub fn is_document(self) -> bool {
        matches!(self, Language::Html | Language::Pdf | Language::Docx)
    }

    /// The language a `name()` names, for the code languages (`ts` and `js` too).
    pub fn from_name(name: &str) -> Option<Language> {
        let name = name.to_ascii_lowercase();
        let alias = match name.as_str() {
            "ts" => "typescript",
            "js" => "javascript",
            "c++" => "cpp",
            "c#" | "cs" => "csharp",
            "sh" | "shell" => "bash",
            "py" => "python",
            "rs" => "rust",
            other => other,
        };
        CODE_LANGUAGES.into_iter().find(|l| l.name() == alias)
    }

    /// The tree-sitter grammar, for languages chunked at item boundaries.
    pub fn grammar(self) -> Option<tree_sitter::Language> {
        Some(match self {
            Language::Rust => tree_sitter_rust::LANGUAGE.into(),
            Language::Python => tree_sitter_python::LANGUAGE.into(),
            Language::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            Language::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
            Language::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
            Language::Go => tree_sitter_go::LANGUAGE.into(),
            Language::Java => tree_sitter_java::LANGUAGE.into(),
            Language::Kotlin => tree_sitter_kotlin_ng::LANGUAGE.into(),
            Language::Scala => tree_sitter_scala::LANGUAGE.into(),
            Language::C => tree_sitter_c::LANGUAGE.into(),
            Language::Cpp => tree_sitter_cpp::LANGUAGE.into(),
            Language::CSharp => tree_sitter_c_sharp::LANGUAGE.into(),
            Language::Swift => tree_sitter_swift::LANGUAGE.into(),
            Language::Ruby => tree_sitter_ruby::LANGUAGE.into(),
            Language::Php => tree_sitter_php::LANGUAGE_PHP.into(),
            Language::Lua => tree_sitter_lua::LANGUAGE.into(),
            Language::Bash => tree_sitter_bash::LANGUAGE.into(),
            Language::Elixir => tree_sitter_elixir::LANGUAGE.into(),
            Language::Haskell => tree_sitter_haskell::LANGUAGE.into(),
            Language::Zig => tree_sitter_zig::LANGUAGE.into(),
            _ => return None,
        })
    }

    /// What the grammar is given to parse `text`: the text itself, except where a grammar is
    /// known to fail on valid code and a rewrite of the same length avoids it, so every node's
    /// byte range still points at the same words of `text`. tree-sitter-c-sharp reads `ref`
    /// only right before `struct`, and the error at `ref partial struct Reader` swallows the
    /// rest of the file, every member of the type with it (its issue 361): there `ref` is
    /// parsed as blanks, a `partial struct` otherwise the same. Nor can it read a type's
    /// modifiers chosen by the preprocessor (`#if INTERNAL` / `internal` / `#else` / `public`
    /// / `#endif` before `enum Code`, MessagePack's way on every public type): such a group is
    /// parsed as its first branch alone, the directives and the other branches blanked.
    /// tree-sitter-c and tree-sitter-cpp cannot read a macro standing alone on its line
    /// (`blank_lone_macro_lines`): those lines are blanked.
    pub fn parse_input(self, text: &[u8]) -> Cow<'_, [u8]> {
        match self {
            Language::C | Language::Cpp => blank_lone_macro_lines(text),
            Language::CSharp => {
                let text = blank_ref_of_partial_structs(text);
                match blank_modifier_directives(&text) {
                    Cow::Borrowed(_) => text,
                    Cow::Owned(rewritten) => Cow::Owned(rewritten),
                }
            }
            _ => Cow::Borrowed(text),
        }
    }
}

/// Whether `line` is the preprocessor directive `#name` (`#if X`, `# endif`; not `#ifdef`).
pub(crate) fn is_directive(line: &[u8], name: &str) -> bool {
    line.trim_ascii_start().strip_prefix(b"#").is_some_and(|rest| {
        let rest = rest.trim_ascii_start();
        rest.starts_with(name.as_bytes()) && !rest.get(name.len()).is_some_and(|b| b.is_ascii_alphanumeric())
    })
}

/// `text` with every `#if` … `#endif` group whose branches hold only C# modifiers made its
/// first branch: the directive lines and the other branches' lines become spaces (their line
/// ends kept). A group with code in a branch, or another group inside it, is left alone.
fn blank_modifier_directives(text: &[u8]) -> Cow<'_, [u8]> {
    const MODIFIERS: &[&str] = &[
        "public",
        "internal",
        "private",
        "protected",
        "static",
        "sealed",
        "abstract",
        "partial",
        "readonly",
        "unsafe",
        "new",
        "virtual",
        "override",
        "extern",
        "ref",
    ];
    // Most files have no directive: no line list for them (every C# parse comes here).
    if !text.contains(&b'#') {
        return Cow::Borrowed(text);
    }
    let only_modifiers = |line: &[u8]| {
        std::str::from_utf8(line).is_ok_and(|line| line.split_whitespace().all(|word| MODIFIERS.contains(&word)))
    };
    // Each line with its start; `split_inclusive` keeps the line ends in place.
    let mut lines = Vec::new();
    let mut start = 0;
    for line in text.split_inclusive(|&b| b == b'\n') {
        lines.push((start, line));
        start += line.len();
    }
    let mut rewritten: Option<Vec<u8>> = None;
    let mut i = 0;
    while i < lines.len() {
        if !is_directive(lines[i].1, "if") {
            i += 1;
            continue;
        }
        // The group's lines up to its `#endif`: directives and modifier lines only.
        let mut end = None;
        for (j, &(_, line)) in lines.iter().enumerate().skip(i + 1) {
            if is_directive(line, "endif") {
                end = Some(j);
                break;
            }
            let branch = is_directive(line, "else") || is_directive(line, "elif");
            if !branch && !only_modifiers(line) {
                break;
            }
        }
        let Some(end) = end else {
            i += 1;
            continue;
        };
        let out = rewritten.get_or_insert_with(|| text.to_vec());
        let mut first_branch = true;
        for &(at, line) in &lines[i..=end] {
            let directive_line = line.trim_ascii_start().starts_with(b"#");
            if directive_line && at != lines[i].0 {
                first_branch = false;
            }
            if directive_line || !first_branch {
                blank(&mut out[at..at + line.len()]);
            }
        }
        i = end + 1;
    }
    rewritten.map_or(Cow::Borrowed(text), Cow::Owned)
}

/// `text` with every line that is a macro alone made spaces (line ends kept). C's idiom for
/// shared fields and brackets, a macro that expands to members or statements without a `;`
/// of its own (libuv's `struct uv_req_s { UV_REQ_FIELDS };`, CPython's `PyObject_HEAD`, Qt's
/// `Q_OBJECT`, `ABSL_NAMESPACE_BEGIN`, `Py_BEGIN_ALLOW_THREADS`), is an error to the
/// grammars, whose recovery loses the struct that holds it (22 of libuv's 186 structs, every
/// handle type of `uv.h`) or makes a function of the lines after it (nlohmann-json's
/// `NLOHMANN_JSON_NAMESPACE_BEGIN`, a function `namespace` in 36 files). Such a line holds
/// one name with a capital letter, or a name in capitals and `_` called
/// (`UV_HANDLE_TYPE_MAP(XX)`; not a constructor, `Foo(const Foo& x)`); it stands where a
/// member or a statement begins (after `{`, `}`, `;`, a label's `:`, a directive or another
/// such line), outside an enum's body, and the next line does not continue it (a declarator:
/// `CURLcode` over `Curl_init(…)`, `Status` over `Foo::Bar()`; a body: `TEST_F(A, B)` over
/// `{`; an initializer list's `:`).
fn blank_lone_macro_lines(text: &[u8]) -> Cow<'_, [u8]> {
    // Names that stand alone as values or types, never as a macro of members.
    const NOT_MACROS: &[&[u8]] = &[b"NULL", b"TRUE", b"FALSE", b"EOF", b"BOOL", b"BOOLEAN", b"HRESULT", b"DWORD"];
    let name_len = |code: &[u8]| code.iter().take_while(|b| b.is_ascii_alphanumeric() || **b == b'_').count();
    let lone = |code: &[u8]| -> bool {
        let name = name_len(code);
        let (word, rest) = code.split_at(name);
        let called = rest.first() == Some(&b'(') && rest.last() == Some(&b')') && {
            let mut depth = 0i32;
            rest.iter().enumerate().all(|(i, &b)| {
                depth += i32::from(b == b'(') - i32::from(b == b')');
                depth > 0 || i == rest.len() - 1
            })
        };
        word.first().is_some_and(|b| b.is_ascii_alphabetic() || *b == b'_')
            && word.iter().any(u8::is_ascii_uppercase)
            && !NOT_MACROS.contains(&word)
            && (rest.is_empty() || called && word.contains(&b'_') && !word.iter().any(u8::is_ascii_lowercase))
    };
    // A line's code without a trailing `//` comment, trimmed.
    fn code(line: &[u8]) -> &[u8] {
        let cut = line.windows(2).position(|w| w == b"//").unwrap_or(line.len());
        line[..cut].trim_ascii()
    }
    let comment = |code: &[u8]| code.starts_with(b"/*") || code.starts_with(b"*") || code.ends_with(b"*/");
    // Whether `code` continues a line before it: a body (`{`), or a declarator (a name after
    // `*`s and `&`s followed by `(`, `[`, `;`, `,`, `=`, `)` or `::`, or a `(`).
    let continues = |code: &[u8]| -> bool {
        let rest = &code[code.iter().take_while(|b| matches!(b, b'*' | b'&' | b' ' | b'\t')).count()..];
        if matches!(rest.first(), Some(b'(' | b'{' | b':')) {
            return true;
        }
        let name = name_len(rest);
        let after = rest[name..].trim_ascii_start();
        name > 0 && (after.starts_with(b"::") || after.first().is_some_and(|b| b"([;,=)".contains(b)))
    };
    let is_enum = |code: &[u8]| code.split(|b| !b.is_ascii_alphanumeric() && *b != b'_').any(|w| w == b"enum");
    let mut rewritten: Option<Vec<u8>> = None;
    // Whether a member or statement may begin on the next line; the open braces, each with
    // whether it opened an enum's body (its line or the one before says `enum`).
    let mut boundary = true;
    let mut braces: Vec<bool> = Vec::new();
    let (mut continued, mut enum_before) = (false, false);
    let mut end = 0;
    for line in text.split_inclusive(|&b| b == b'\n') {
        let at = end;
        end += line.len();
        if std::mem::replace(&mut continued, line.trim_ascii_end().ends_with(b"\\")) {
            continue;
        }
        let here = code(line);
        if here.is_empty() || comment(here) {
            continue;
        }
        if here.starts_with(b"#") {
            boundary = true;
            continue;
        }
        let in_enum = braces.last().copied().unwrap_or(false);
        if boundary && !in_enum && lone(here) {
            let next = text[end..].split_inclusive(|&b| b == b'\n').map(code).find(|c| !c.is_empty() && !comment(c));
            if !next.is_some_and(&continues) {
                blank(&mut rewritten.get_or_insert_with(|| text.to_vec())[at..end]);
                continue;
            }
        }
        let enum_here = is_enum(here);
        for &b in here {
            match b {
                b'{' => braces.push(enum_here || enum_before),
                b'}' => {
                    braces.pop();
                }
                _ => {}
            }
        }
        enum_before = enum_here && !here.contains(&b'{');
        boundary = here.last().is_some_and(|b| b"{};:".contains(b));
    }
    rewritten.map_or(Cow::Borrowed(text), Cow::Owned)
}

/// Makes `part` spaces but its line ends, so the lines around it keep their numbers.
fn blank(part: &mut [u8]) {
    for byte in part.iter_mut().filter(|b| !matches!(b, b'\n' | b'\r')) {
        *byte = b' ';
    }
}

/// `text` with the `ref` of every `ref partial struct` made spaces.
fn blank_ref_of_partial_structs(text: &[u8]) -> Cow<'_, [u8]> {
    let is_word_byte = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80;
    let word_at = |at: usize, word: &[u8]| {
        text.get(at..).is_some_and(|rest| rest.starts_with(word))
            && !text.get(at + word.len()).is_some_and(|&b| is_word_byte(b))
    };
    let after_space = |at: usize| {
        let skipped = text.get(at..).map_or(0, |rest| rest.iter().take_while(|b| b.is_ascii_whitespace()).count());
        (skipped > 0).then_some(at + skipped)
    };
    let mut rewritten: Option<Vec<u8>> = None;
    let mut from = 0;
    while let Some(offset) = text[from..].windows(3).position(|w| w == b"ref") {
        let at = from + offset;
        from = at + 3;
        let starts_word = at == 0 || !is_word_byte(text[at - 1]);
        let partial_struct = starts_word
            && word_at(at, b"ref")
            && after_space(at + 3)
                .is_some_and(|p| word_at(p, b"partial") && after_space(p + 7).is_some_and(|s| word_at(s, b"struct")));
        if partial_struct {
            rewritten.get_or_insert_with(|| text.to_vec())[at..at + 3].copy_from_slice(b"   ");
        }
    }
    rewritten.map_or(Cow::Borrowed(text), Cow::Owned)
}

/// The language a script's `#!` line names as its interpreter (`#!/usr/bin/env node`,
/// `#!/usr/bin/python3 -u`, `#!/usr/bin/env -S deno run`), when it is one read here.
fn shebang_language(text: &str) -> Option<Language> {
    let line = text.strip_prefix("#!")?.lines().next()?;
    let mut words = line.split_whitespace();
    let mut program = words.next()?.rsplit('/').next()?;
    if program == "env" {
        // `env`'s options (`-S`, `-i`, `VAR=value`) come before the program it runs.
        program = words.find(|w| !w.starts_with('-') && !w.contains('='))?.rsplit('/').next()?;
    }
    let family = program.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    Some(match family {
        "node" | "nodejs" => Language::JavaScript,
        "deno" | "bun" | "ts-node" | "tsx" => Language::TypeScript,
        "python" | "pypy" => Language::Python,
        "sh" | "bash" | "dash" | "ksh" => Language::Bash,
        "ruby" => Language::Ruby,
        "php" => Language::Php,
        "lua" | "luajit" => Language::Lua,
        "elixir" => Language::Elixir,
        "runghc" | "runhaskell" => Language::Haskell,
        _ => return None,
    })
}

/// Whether a header's text is C++: a line that opens a class, namespace or template, an
/// access label, `using namespace`, a standard header without `.h`, or `std::` anywhere.
fn says_cpp(text: &str) -> bool {
    text.contains("std::")
        || text.lines().any(|line| {
            let line = line.trim_start();
            let word = |w: &str| line.strip_prefix(w).is_some_and(|rest| rest.starts_with([' ', '<', '\t']));
            word("namespace")
                || word("template")
                || (word("class") && !line.contains('('))
                || word("using namespace")
                || matches!(line.trim_end(), "public:" | "private:" | "protected:")
                || line.strip_prefix("#include <").is_some_and(|rest| {
                    rest.split('>').next().is_some_and(|header| !header.contains('.') && !header.is_empty())
                })
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_c_macro_alone_on_its_line_is_parsed_as_blanks() {
        let text = "#define UV_REQ_FIELDS \\\n  void* data; \\\n  int type;\n\nstruct uv_req_s {\n  UV_REQ_FIELDS\n};\n\nstruct uv_shutdown_s {\n  UV_REQ_FIELDS // shared\n  uv_stream_t* handle;\n  UV_SHUTDOWN_PRIVATE_FIELDS\n};\n";
        let input = Language::C.parse_input(text.as_bytes());
        assert_eq!(input.len(), text.len(), "byte ranges must point at the same words");
        let want = "#define UV_REQ_FIELDS \\\n  void* data; \\\n  int type;\n\nstruct uv_req_s {\n               \n};\n\nstruct uv_shutdown_s {\n                         \n  uv_stream_t* handle;\n                            \n};\n";
        assert_eq!(String::from_utf8_lossy(&input), want);
        let tree = crate::code::extract::parse(Language::C, text).unwrap();
        assert!(!tree.root_node().has_error(), "{}", tree.root_node().to_sexp());
        let facts = crate::code::extract::extract(Language::C, text).unwrap();
        let names: Vec<&str> = facts.symbols.iter().map(|s| s.name.as_str()).collect();
        for name in ["uv_req_s", "uv_shutdown_s", "handle"] {
            assert!(names.contains(&name), "{name} in {names:?}");
        }
        // Not a return type on its own line, an enumerator, a value or a continued line.
        for kept in [
            "CURLcode\nCurl_init(struct Curl_easy *data)\n{\n  return 0;\n}\n",
            "Status\nFoo::Bar() {\n}\n",
            "enum color {\n  RED\n};\n",
            "enum blob {\n  A,\n#ifdef X\n  B,\n#endif\n  BLOB_LAST\n};\n",
            "typedef enum\n{\n  ONLY\n} e;\n",
            "TEST_F(Suite, Name)\n{\n}\n",
            "class A {\n public:\n  A(const A& x)\n      : v_(x.v_) {}\n  A()\n};\n",
            "int x = {\n  a,\n  LAST\n};\n",
            "int f(void) {\n  return cond ?\n    VALUE\n    : 0;\n}\n",
            "struct s {\n  my_type\n};\n",
            "if (x)\n  NULL\n",
        ] {
            assert!(matches!(Language::C.parse_input(kept.as_bytes()), Cow::Borrowed(_)), "{kept}");
        }
        let x_macro = "union uv_any_req {\n  UV_REQ_TYPE_MAP(XX)\n};\n";
        let input = Language::C.parse_input(x_macro.as_bytes());
        assert_eq!(String::from_utf8_lossy(&input), "union uv_any_req {\n                     \n};\n");
        let qt = "class Window : public QWidget {\n  Q_OBJECT\npublic:\n  Window();\n};\n";
        assert!(matches!(Language::Cpp.parse_input(qt.as_bytes()), Cow::Owned(_)));
        assert!(matches!(Language::Rust.parse_input(b"struct A {\n  B\n}\n"), Cow::Borrowed(_)));
    }

    #[test]
    fn only_a_csharp_ref_partial_struct_is_parsed_otherwise() {
        let text = b"ref partial struct A {}\nreadonly ref\tpartial\n  struct B {}\nref int x;\nM(ref partial);\nrefpartial struct C {}\nxref partial struct D {}\n";
        let input = Language::CSharp.parse_input(text);
        assert_eq!(input.len(), text.len(), "byte ranges must point at the same words");
        let want = b"    partial struct A {}\nreadonly    \tpartial\n  struct B {}\nref int x;\nM(ref partial);\nrefpartial struct C {}\nxref partial struct D {}\n";
        assert_eq!(String::from_utf8_lossy(&input), String::from_utf8_lossy(want));
        assert!(matches!(Language::CSharp.parse_input(b"ref int x;"), Cow::Borrowed(_)));
        assert!(matches!(Language::Rust.parse_input(b"ref partial struct A {}"), Cow::Borrowed(_)));
    }

    #[test]
    fn a_csharp_type_s_modifiers_chosen_by_the_preprocessor_are_its_first_branch_s() {
        let text = "#if INTERNAL\n    internal\n#else\n    public\n#endif\n    enum Code : byte { A = 1 }\n#if DEBUG\n    Log();\n#endif\n";
        let input = Language::CSharp.parse_input(text.as_bytes());
        let want = "            \n    internal\n     \n          \n      \n    enum Code : byte { A = 1 }\n#if DEBUG\n    Log();\n#endif\n";
        assert_eq!(String::from_utf8_lossy(&input), want);
        let tree = crate::code::extract::parse(Language::CSharp, text).unwrap();
        assert!(!tree.root_node().has_error(), "{}", tree.root_node().to_sexp());
    }

    #[test]
    fn a_header_is_cpp_when_its_text_says_so() {
        let h = Path::new("src/cart.h");
        let c = Language::detect(h);
        assert_eq!(c, Language::C);
        assert_eq!(c.with_text(h, "namespace shop {\nclass Cart;\n}\n"), Language::Cpp);
        assert_eq!(c.with_text(h, "#include <vector>\nstruct Cart { int n; };\n"), Language::Cpp);
        assert_eq!(c.with_text(h, "template <typename T>\nT twice(T x);\n"), Language::Cpp);
        assert_eq!(c.with_text(h, "struct Cart {\n public:\n  int n;\n};\n"), Language::Cpp);
        // C: `class` and `new` as plain names, standard headers with `.h`, C++ only in prose.
        let plain = "#include <stdio.h>\n/* the class of errors (see below) */\nint new_cart(int class);\n";
        assert_eq!(c.with_text(h, plain), Language::C);
        // Only a header's language depends on its text.
        assert_eq!(c.with_text(Path::new("src/cart.c"), "namespace shop {}\n"), Language::C);
        assert_eq!(Language::Rust.with_text(Path::new("a.rs"), "namespace x {}"), Language::Rust);
    }

    #[test]
    fn a_script_without_an_extension_is_the_language_its_shebang_runs() {
        let bin = Path::new("bin/tape");
        let text = Language::detect(bin);
        assert_eq!(text, Language::Text);
        assert_eq!(text.with_text(bin, "#!/usr/bin/env node\n'use strict';\n"), Language::JavaScript);
        assert_eq!(text.with_text(bin, "#!/usr/bin/python3.12 -u\nimport sys\n"), Language::Python);
        assert_eq!(text.with_text(bin, "#!/usr/bin/env -S deno run --allow-read\n"), Language::TypeScript);
        assert_eq!(text.with_text(bin, "#! /bin/sh\nexec foo\n"), Language::Bash);
        // Not a shebang, an interpreter not read here, or a name with an extension: as named.
        assert_eq!(text.with_text(bin, "node is a runtime\n"), Language::Text);
        assert_eq!(text.with_text(bin, "#!/usr/bin/perl\n"), Language::Text);
        let notes = Path::new("notes.txt");
        assert_eq!(Language::detect(notes).with_text(notes, "#!/usr/bin/env node\n"), Language::Text);
        assert!(text.may_be_script(bin) && !Language::Text.may_be_script(notes));
    }

    #[test]
    fn detects_by_extension() {
        assert_eq!(Language::detect(Path::new("src/lib.rs")), Language::Rust);
        assert_eq!(Language::detect(Path::new("a/b.TSX")), Language::Tsx);
        assert_eq!(Language::detect(Path::new("README.md")), Language::Markdown);
        assert_eq!(Language::detect(Path::new("LICENSE")), Language::Text);
        assert_eq!(Language::detect(Path::new("Makefile")).name(), "make");
        assert_eq!(Language::detect(Path::new("x.java")).name(), "java");
        assert_eq!(Language::detect(Path::new("lib/tasks.rake")), Language::Ruby);
        assert_eq!(Language::from_name("TS"), Some(Language::TypeScript));
        assert_eq!(Language::from_name("toml"), None);
        assert_eq!(Language::detect(Path::new("docs/Guide.PDF")), Language::Pdf);
        assert!(Language::detect(Path::new("a/index.htm")).is_document());
        assert_eq!(Language::from_name("pdf"), None, "documents are not code");
    }

    #[test]
    fn every_code_language_has_a_grammar_this_tree_sitter_loads() {
        for language in CODE_LANGUAGES {
            let grammar = language.grammar().unwrap_or_else(|| panic!("{} has no grammar", language.name()));
            let mut parser = tree_sitter::Parser::new();
            assert!(parser.set_language(&grammar).is_ok(), "{}: grammar ABI not supported", language.name());
            assert_eq!(Language::from_name(language.name()), Some(language));
        }
    }
}
