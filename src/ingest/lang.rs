//! Language detection by file name.

use std::path::Path;

/// How a file is chunked; the name is what search results report as `language`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Language {
    Rust,
    Python,
    TypeScript,
    Tsx,
    JavaScript,
    Go,
    Markdown,
    Text,
    /// Source in a language without a parser here: chunked by line windows.
    OtherCode(&'static str),
}

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
            "md" | "markdown" | "mdx" => Language::Markdown,
            "txt" | "rst" | "adoc" | "text" | "" => match name.as_str() {
                "makefile" | "dockerfile" => Language::OtherCode("make"),
                _ => Language::Text,
            },
            "c" | "h" => Language::OtherCode("c"),
            "cc" | "cpp" | "cxx" | "hpp" | "hh" => Language::OtherCode("cpp"),
            "java" => Language::OtherCode("java"),
            "kt" | "kts" => Language::OtherCode("kotlin"),
            "rb" => Language::OtherCode("ruby"),
            "php" => Language::OtherCode("php"),
            "cs" => Language::OtherCode("csharp"),
            "swift" => Language::OtherCode("swift"),
            "sh" | "bash" | "zsh" => Language::OtherCode("shell"),
            "toml" => Language::OtherCode("toml"),
            "yaml" | "yml" => Language::OtherCode("yaml"),
            "json" => Language::OtherCode("json"),
            "html" | "htm" => Language::OtherCode("html"),
            "css" | "scss" => Language::OtherCode("css"),
            "sql" => Language::OtherCode("sql"),
            _ => Language::OtherCode("text"),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Language::Rust => "rust",
            Language::Python => "python",
            Language::TypeScript => "typescript",
            Language::Tsx => "tsx",
            Language::JavaScript => "javascript",
            Language::Go => "go",
            Language::Markdown => "markdown",
            Language::Text => "text",
            Language::OtherCode(name) => name,
        }
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
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_by_extension() {
        assert_eq!(Language::detect(Path::new("src/lib.rs")), Language::Rust);
        assert_eq!(Language::detect(Path::new("a/b.TSX")), Language::Tsx);
        assert_eq!(Language::detect(Path::new("README.md")), Language::Markdown);
        assert_eq!(Language::detect(Path::new("LICENSE")), Language::Text);
        assert_eq!(Language::detect(Path::new("Makefile")).name(), "make");
        assert_eq!(Language::detect(Path::new("x.java")).name(), "java");
    }
}
