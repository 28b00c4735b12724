//! The licence notice a source file opens with (`// Copyright … Licensed under …`), left out
//! of its chunks. Every file of a project carries the same notice, so in search it is noise:
//! its words ("use", "copy", "modify", "merge", "file", "conditions") are a question's words
//! and answer none, and in the first chunk of each file it is most of what the embedding
//! model reads of the file's opening (the model reads 256 tokens; an Apache or MIT notice is
//! 150–250 of them), so that chunk says "licence" instead of what the module is for. The file
//! itself is untouched: only the lines the chunks cover start after the notice.

use super::lang::Language;

/// Phrases that make a comment a licence notice (lower-cased). A module's own documentation
/// does not say them; a notice says at least one.
const MARKERS: [&str; 8] = [
    "copyright",
    "spdx-license-identifier",
    "licensed under",
    "licensed to",
    "permission is hereby granted",
    "all rights reserved",
    "use of this source code is governed",
    "this program is free software",
];

/// Words each paragraph of a notice says (the Apache notice's "Unless required by applicable
/// law …" names the License, the MIT one's last paragraph disclaims warranty, BSD's clauses
/// speak of redistribution): the notice ends at the first paragraph that says none of them.
const NOTICE_WORDS: [&str; 8] =
    ["licen", "copyright", "warrant", "redistribut", "permission", "rights reserved", "free software", "liab"];

/// A notice is read among the file's first lines only: past them a comment is the code's.
const MAX_HEADER_LINES: usize = 400;

/// How a language writes comments: its line-comment prefixes and its block delimiters.
struct CommentSyntax {
    line: &'static [&'static str],
    block: Option<(&'static str, &'static str)>,
}

fn comment_syntax(language: Language) -> Option<CommentSyntax> {
    use Language::*;
    let c_like = CommentSyntax { line: &["//"], block: Some(("/*", "*/")) };
    Some(match language {
        Rust | TypeScript | Tsx | JavaScript | Go | Java | Kotlin | Scala | C | Cpp | CSharp | Swift | Zig => c_like,
        Php => CommentSyntax { line: &["//", "#"], block: Some(("/*", "*/")) },
        Python | Ruby | Bash | Elixir => CommentSyntax { line: &["#"], block: None },
        Lua => CommentSyntax { line: &["--"], block: Some(("--[[", "]]")) },
        Haskell => CommentSyntax { line: &["--"], block: Some(("{-", "-}")) },
        _ => return None,
    })
}

/// A paragraph of the file's opening comments: the line after its last, and its words.
struct Paragraph {
    end: usize,
    text: String,
}

/// The number of leading lines of `lines` that are a licence notice (with the blank lines
/// after it): 0 when the file does not open with one. The file's opening comments are read
/// as paragraphs (split at blank lines, at comment lines that hold no words, such as `//` or
/// a rule of dashes, and where a block comment ends); the notice is the first run of
/// paragraphs that each say a notice word, when one of them says a marker. What precedes it
/// in the opening comments (a file name, a banner) goes with it; what follows (a module's
/// documentation, curl's `<DESC>`, a Go package comment) stays.
pub fn header_lines(language: Language, lines: &[&str]) -> usize {
    let Some(syntax) = comment_syntax(language) else { return 0 };
    let mut end = 0;
    let mut marked = false;
    for paragraph in opening_paragraphs(&syntax, lines) {
        let is_link = !paragraph.text.trim().contains(' ') && paragraph.text.contains("://");
        if NOTICE_WORDS.iter().any(|word| paragraph.text.contains(word)) || (end > 0 && is_link) {
            marked |= MARKERS.iter().any(|marker| paragraph.text.contains(marker));
            end = paragraph.end;
        } else if end > 0 {
            break;
        }
    }
    if !marked {
        return 0;
    }
    // The notice's closing `*/`, the empty comment lines and blank lines after it go with it.
    while end < lines.len() && comment_words(lines[end]).is_empty() {
        end += 1;
    }
    end
}

/// A comment line's words: what is left without comment markers and rules (`*`, `-`, `=`).
fn comment_words(line: &str) -> &str {
    line.trim_matches(|c: char| c.is_whitespace() || "*-=/#~_+![]{}".contains(c))
}

/// The paragraphs of the comments a file opens with (after a `#!` or `<?php` first line),
/// lower-cased, up to its first line of code.
fn opening_paragraphs(syntax: &CommentSyntax, lines: &[&str]) -> Vec<Paragraph> {
    let limit = lines.len().min(MAX_HEADER_LINES);
    let mut at = usize::from(lines.first().is_some_and(|first| first.starts_with("#!") || first.trim() == "<?php"));
    let mut paragraphs = Vec::new();
    let mut current: Option<Paragraph> = None;
    let mut in_block: Option<&str> = None;
    while at < limit {
        let line = lines[at].trim();
        let (words, block_ends) = if let Some(close) = in_block {
            let ends = line.contains(close);
            if ends {
                in_block = None;
            }
            (line.replace(close, ""), ends)
        } else if line.is_empty() {
            (String::new(), true)
        } else if let Some((open, close)) = syntax.block.filter(|(open, _)| line.starts_with(open)) {
            let rest = &line[open.len()..];
            let ends = rest.contains(close);
            if !ends {
                in_block = Some(close);
            }
            (rest.replace(close, ""), ends)
        } else if let Some(prefix) = syntax.line.iter().find(|prefix| line.starts_with(*prefix)) {
            (line[prefix.len()..].to_string(), false)
        } else {
            break;
        };
        let words = comment_words(&words).to_lowercase();
        if words.is_empty() {
            paragraphs.extend(current.take());
        } else {
            let paragraph = current.get_or_insert(Paragraph { end: at, text: String::new() });
            paragraph.text.push_str(&words);
            paragraph.text.push(' ');
            paragraph.end = at + 1;
        }
        if block_ends {
            paragraphs.extend(current.take());
        }
        at += 1;
    }
    // A block comment still open at the first line of code or at the limit is not a notice.
    if in_block.is_none() {
        paragraphs.extend(current);
    }
    paragraphs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(language: Language, text: &str) -> usize {
        header_lines(language, &text.lines().collect::<Vec<_>>())
    }

    #[test]
    fn a_notice_in_line_comments_is_left_out_with_the_blank_lines_after_it() {
        let go = "// Copyright 2014 Manu Martinez-Almeida. All rights reserved.\n\
                  // Use of this source code is governed by a MIT style\n\
                  // license that can be found in the LICENSE file.\n\
                  \n\
                  package gin\n";
        assert_eq!(header(Language::Go, go), 4);
        let swift = "//\n//  Session.swift\n//\n//  Copyright (c) 2014-2018 Alamofire Software Foundation\n//\n\nimport Foundation\n";
        assert_eq!(header(Language::Swift, swift), 6);
        let python = "#!/usr/bin/env python\n# Copyright 2020 The Authors\n# SPDX-License-Identifier: MIT\n\"\"\"The module.\"\"\"\n";
        assert_eq!(header(Language::Python, python), 3);
    }

    #[test]
    fn a_notice_in_a_block_comment_is_left_out_and_a_module_comment_after_it_stays() {
        let c = "/***************************************************************************\n\
                 *                                  _   _ ____  _\n\
                 * Copyright (C) Daniel Stenberg, <daniel@haxx.se>, et al.\n\
                 * SPDX-License-Identifier: curl\n\
                 ***************************************************************************/\n\
                 /* <DESC>\n\
                 * HTTP PUT with easy interface\n\
                 * </DESC>\n\
                 */\n\
                 #include <stdio.h>\n";
        assert_eq!(header(Language::C, c), 5);
        let go = "// Copyright 2020 The Authors. All rights reserved.\n\n// Package chi is a router.\npackage chi\n";
        assert_eq!(header(Language::Go, go), 2);
        let php = "<?php\n/* Licensed under the MIT licence. */\nnamespace App;\n";
        assert_eq!(header(Language::Php, php), 2);
        let lua = "--[[\n Copyright 2021 Someone\n]]\nlocal M = {}\n";
        assert_eq!(header(Language::Lua, lua), 3);
    }

    #[test]
    fn the_module_comment_that_goes_on_after_the_notice_stays() {
        // abseil's headers: the notice, a rule, then the file's documentation, all in `//`.
        let cpp = "// Copyright 2018 The Abseil Authors.\n\
                   //\n\
                   // Licensed under the Apache License, Version 2.0 (the \"License\");\n\
                   // you may not use this file except in compliance with the License.\n\
                   //\n\
                   //      https://www.apache.org/licenses/LICENSE-2.0\n\
                   //\n\
                   // Unless required by applicable law or agreed to in writing, software\n\
                   // limitations under the License.\n\
                   //\n\
                   // -----------------------------------------------------------------------------\n\
                   // File: hash.h\n\
                   // -----------------------------------------------------------------------------\n\
                   //\n\
                   // This header file defines the Abseil `hash` library.\n\
                   #include <x>\n";
        assert_eq!(header(Language::Cpp, cpp), 11);
        // MIT's last paragraph names no licence: it disclaims warranty.
        let mit = "/*\n * Copyright (c) 2015 Someone\n *\n * Permission is hereby granted, free of charge\n *\n \
                   * THE SOFTWARE IS PROVIDED \"AS IS\", WITHOUT WARRANTY OF ANY KIND\n */\n\
                   /** The parser. */\nclass Parser {}\n";
        assert_eq!(header(Language::Java, mit), 7);
        // Words of a notice without a notice's marker are a module's.
        let doc = "// Checks the permission a user needs; see the licence server.\nfn check() {}\n";
        assert_eq!(header(Language::Rust, doc), 0);
    }

    #[test]
    fn files_without_a_notice_keep_every_line() {
        // A module's documentation, code, a comment that never closes, a language without
        // comment syntax here: nothing is left out.
        for (language, text) in [
            (Language::Rust, "//! Tokio's runtime: the scheduler and its workers.\n\nmod scheduler;\n"),
            (Language::Python, "# The command line.\nimport sys\n"),
            (Language::C, "#include <stdio.h>\n/* Copyright 2020 */\n"),
            (Language::Java, "/* Copyright 2020 The Authors\n never closed\n"),
            (Language::Markdown, "<!-- Copyright 2020 -->\n# Title\n"),
            (Language::Rust, ""),
        ] {
            assert_eq!(header(language, text), 0, "{text:?}");
        }
    }

    #[test]
    fn a_notice_after_the_file_opening_is_code_s_and_stays() {
        let text = format!("{}// Copyright 2020 The Authors\nfn main() {{}}\n", "//\n".repeat(MAX_HEADER_LINES + 5));
        assert_eq!(header(Language::Rust, &text), 0);
    }
}
