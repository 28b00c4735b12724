//! Extraction and resolution on the fixture repos (`tests/fixtures/code/<language>`), one
//! small project per language, each with a file that imports and calls another.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::{extract, CodeGraph, FileCode, SymbolKind};
use crate::ingest::Language;

mod definitions;
mod depth;
mod dispatch;
mod guards;
mod import_time;
mod javascript;
mod macros;
mod modules;
mod resolution;
mod special_methods;
mod traits;
mod types;
mod walk;

/// The walk's bounds as the daemon sets them, for the code module's other tests too.
pub(in crate::code) use resolution::daemon_walk_limits;

fn fixture_root(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/code").join(name)
}

/// Reads a fixture repo the way an index run does: every file with a grammar is extracted,
/// the resolution configs are read.
pub(crate) fn load(name: &str) -> CodeGraph {
    load_dir(&fixture_root(name))
}

fn load_dir(root: &Path) -> CodeGraph {
    let mut files = HashMap::new();
    let mut configs = HashMap::new();
    for path in walk(root) {
        let rel = path.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/");
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        if super::is_graph_config(&rel) {
            configs.insert(rel.clone(), text.clone());
        }
        if let Some(code) = extract(Language::detect(&path).with_text(&path, &text), &text) {
            files.insert(rel, code);
        }
    }
    CodeGraph::build(files, &configs)
}

#[test]
#[ignore = "prints what the fixtures yield, for writing expectations"]
fn dump() {
    let only = std::env::var("DUMP").unwrap_or_default();
    for lang in std::fs::read_dir(fixture_root("")).unwrap() {
        let name = lang.unwrap().file_name().to_string_lossy().to_string();
        if !only.is_empty() && only != name {
            continue;
        }
        let graph = load(&name);
        println!("==== {name}");
        for r in graph.all_symbols() {
            let s = graph.info(r);
            println!(
                "  {}:{}-{} {} {} [{}] c={:?} v={} sig={:?} doc={:?}",
                s.path,
                s.line,
                s.end_line,
                s.kind,
                s.name,
                s.qualified_name,
                s.container,
                s.visibility,
                s.signature,
                s.doc
            );
        }
        for f in 0..graph.file_count() as u32 {
            let path = graph.path(f).to_string();
            let impact = graph.impact(&path, 1, 0, 100).unwrap();
            let imports: Vec<String> = impact.imports.iter().map(|e| format!("{}({})", e.path, e.confidence)).collect();
            let unresolved: Vec<String> = impact.unresolved.iter().map(|u| u.spec.clone()).collect();
            println!("  IMPORTS {path} -> {imports:?} unresolved {unresolved:?}");
        }
        for r in graph.all_symbols() {
            let refs = graph.references(r, 0.0);
            if refs.is_empty() {
                continue;
            }
            let s = graph.info(r);
            let list: Vec<String> = refs
                .iter()
                .map(|x| format!("{}:{} {} {} {}", x.path, x.line, x.kind, x.resolution, x.confidence))
                .collect();
            println!("  REFS {} ({}:{}) <- {list:?}", s.qualified_name, s.path, s.line);
        }
    }
}

#[test]
fn file_code_round_trips_through_its_encoding() {
    let code = extract(Language::Rust, "pub fn a() { b(); }\nfn b() {}\n").unwrap();
    let back = FileCode::decode(&code.encode()).unwrap();
    assert_eq!(back, code);
}

/// What one fixture repo must yield. Symbols are `path:line-end_line kind qualified_name`;
/// imports `from -> to`; references `qualified_name <- path:line resolution`.
struct Expect {
    fixture: &'static str,
    symbols: &'static [&'static str],
    imports: &'static [&'static str],
    references: &'static [&'static str],
}

const EXPECT: &[Expect] = &[
    Expect {
        fixture: "rust",
        symbols: &[
            "src/cart.rs:6-8 struct Cart",
            "src/cart.rs:7-7 field Cart::items",
            "src/cart.rs:10-12 trait Sized2",
            "src/cart.rs:16-18 method Cart::new",
            "src/cart.rs:32-35 method Cart::size",
            "src/cart.rs:39-39 enum_member Color::Red",
            "src/cart.rs:43-47 macro shout",
            "src/lib.rs:3-3 module util",
            "src/lib.rs:8-8 constant MAX_ITEMS",
            "src/util/strings.rs:6-6 type Name",
        ],
        imports: &["src/cart.rs -> src/util/strings.rs", "src/cart.rs -> src/lib.rs", "src/lib.rs -> src/util/mod.rs"],
        references: &[
            "check <- src/cart.rs:21 import",
            "check <- src/cart.rs:1 qualified_path",
            "Cart::new <- src/lib.rs:11 qualified_path",
            "Cart::log <- src/cart.rs:25 qualified_path",
            "MAX_ITEMS <- src/cart.rs:22 import",
        ],
    },
    Expect {
        fixture: "python",
        symbols: &[
            "shop/cart.py:5-25 class Cart",
            "shop/cart.py:8-8 field Cart.limit",
            "shop/cart.py:13-18 method Cart.add",
            "shop/helpers.py:1-1 constant MAX_ITEMS",
            "shop/helpers.py:4-6 function check",
        ],
        imports: &["shop/cart.py -> shop/helpers.py", "main.py -> shop/cart.py", "shop/__init__.py -> shop/cart.py"],
        references: &[
            "check <- shop/cart.py:14 import",
            "Cart.log <- shop/cart.py:18 qualified_path",
            "Cart.build <- main.py:8 qualified_path",
            "Cart <- main.py:6 import",
        ],
    },
    Expect {
        fixture: "typescript",
        symbols: &[
            "src/cart.ts:5-7 interface Sized",
            "src/cart.ts:9-27 class Cart",
            "src/cart.ts:12-18 method Cart.add",
            "src/cart.ts:29-29 function makeCart",
            "src/cart.ts:31-34 enum Color",
            "src/lib/strings.ts:8-8 type Name",
            "src/main.tsx:3-7 function App",
        ],
        imports: &[
            "src/cart.ts -> src/lib/strings.ts",
            "src/cart.ts -> src/lib/index.ts",
            "src/main.tsx -> src/cart.ts",
        ],
        references: &[
            "check <- src/cart.ts:13 import",
            "makeCart <- src/main.tsx:4 import",
            "Cart.log <- src/cart.ts:17 qualified_path",
        ],
    },
    Expect {
        fixture: "javascript",
        symbols: &[
            "lib/cart.js:3-12 class Cart",
            "lib/cart.js:8-11 method Cart.add",
            "lib/cart.js:14-14 function makeCart",
        ],
        imports: &["lib/cart.js -> lib/strings.js", "index.mjs -> lib/cart.js", "index.mjs -> lib/strings.js"],
        references: &["check <- lib/cart.js:9 import", "makeCart <- index.mjs:4 import"],
    },
    Expect {
        fixture: "go",
        symbols: &[
            "cart.go:10-12 struct Cart",
            "cart.go:15-17 interface Sized",
            "cart.go:20-26 method Cart.Add",
            "internal/util/strings.go:4-6 function Check",
            "internal/util/strings.go:8-8 constant MaxItems",
        ],
        imports: &["cart.go -> internal/util/strings.go"],
        references: &[
            "Check <- cart.go:21 import",
            "logItem <- cart.go:25 same_package",
            "Cart <- log.go:9 same_package",
        ],
    },
    Expect {
        fixture: "java",
        symbols: &[
            "src/main/java/com/example/shop/Cart.java:8-31 class Cart",
            "src/main/java/com/example/shop/Cart.java:9-9 constant Cart.MAX_ITEMS",
            "src/main/java/com/example/shop/Cart.java:12-14 constructor Cart.Cart",
            "src/main/java/com/example/shop/Cart.java:30-30 enum Cart.Color",
            "src/main/java/com/example/shop/Sized.java:3-5 interface Sized",
        ],
        imports: &["src/main/java/com/example/shop/Cart.java -> src/main/java/com/example/util/Strings.java"],
        references: &[
            "Strings.check <- src/main/java/com/example/shop/Cart.java:17 qualified_path",
            "Cart.log <- src/main/java/com/example/shop/Cart.java:21 same_file",
            "Sized <- src/main/java/com/example/shop/Cart.java:8 same_package",
        ],
    },
    Expect {
        fixture: "kotlin",
        symbols: &[
            "src/shop/Cart.kt:6-8 interface Sized",
            "src/shop/Cart.kt:11-24 class Cart",
            "src/shop/Cart.kt:22-22 constant Cart.MAX_ITEMS",
            "src/shop/Cart.kt:26-26 enum Color",
            "src/shop/Cart.kt:28-28 type Carts",
            "src/util/Strings.kt:4-4 function check",
        ],
        imports: &["src/shop/Cart.kt -> src/util/Strings.kt"],
        references: &["check <- src/shop/Cart.kt:15 import", "Strings.trim <- src/shop/Cart.kt:16 qualified_path"],
    },
    Expect {
        fixture: "scala",
        symbols: &[
            "src/shop/Cart.scala:5-7 trait Sized",
            "src/shop/Cart.scala:10-19 class Cart",
            "src/shop/Cart.scala:23-23 method Cart.apply",
            "src/util/Strings.scala:5-5 method Strings.check",
        ],
        imports: &["src/shop/Cart.scala -> src/util/Strings.scala"],
        references: &[
            "Strings.check <- src/shop/Cart.scala:14 qualified_path",
            "Strings <- src/shop/Cart.scala:14 import",
        ],
    },
    Expect {
        fixture: "c",
        symbols: &[
            "include/util.h:4-4 macro MAX_ITEMS",
            "src/cart.c:5-8 struct cart",
            "src/cart.c:7-7 field cart.count",
            "src/cart.c:10-10 type cart_t",
            "src/cart.c:12-12 enum color",
            "src/cart.c:18-23 function cart_add",
            "src/util.c:3-5 function check",
        ],
        imports: &["src/cart.c -> include/util.h", "src/util.c -> include/util.h"],
        references: &[
            "check <- src/cart.c:19 import",
            "log_item <- src/cart.c:22 same_file",
            "MAX_ITEMS <- src/cart.c:19 import",
        ],
    },
    Expect {
        fixture: "cpp",
        symbols: &[
            "src/cart.hpp:5-20 module shop",
            "src/cart.hpp:7-16 class shop::Cart",
            "src/cart.cpp:5-5 constructor shop::Cart::Cart",
            "src/cart.cpp:7-11 method shop::Cart::add",
            "src/cart.hpp:19-19 type shop::Items",
            "src/strings.hpp:6-6 function util::check",
        ],
        imports: &["src/cart.cpp -> src/cart.hpp", "src/cart.cpp -> src/strings.hpp"],
        references: &[
            "util::check <- src/cart.cpp:8 qualified_path",
            "shop::Cart::size <- src/cart.cpp:8 qualified_path",
            "shop::Cart::items_ <- src/cart.cpp:9 qualified_path",
        ],
    },
    Expect {
        fixture: "csharp",
        symbols: &[
            "Core/Cart.cs:6-9 interface Shop.Core.ISized",
            "Core/Cart.cs:12-30 class Shop.Core.Cart",
            "Core/Cart.cs:16-16 property Shop.Core.Cart.Owner",
            "Core/Cart.cs:18-18 constructor Shop.Core.Cart.Cart",
            "Core/Cart.cs:34-34 struct Shop.Core.Point",
            "Util/Strings.cs:6-6 method Shop.Util.Strings.Check",
        ],
        imports: &["Core/Cart.cs -> Util/Strings.cs"],
        references: &[
            "Shop.Util.Strings.Check <- Core/Cart.cs:22 qualified_path",
            "Shop.Util.Strings <- Core/Cart.cs:22 import",
            "Shop.Core.Cart.Log <- Core/Cart.cs:24 same_file",
        ],
    },
    Expect {
        fixture: "swift",
        symbols: &[
            "Sources/Cart.swift:3-5 interface Sized",
            "Sources/Cart.swift:8-24 class Cart",
            "Sources/Cart.swift:12-12 constructor Cart.init",
            "Sources/Cart.swift:26-26 struct Point",
            "Sources/Cart.swift:28-28 enum Color",
            "Sources/Cart.swift:31-31 method Cart.clear",
        ],
        imports: &[],
        references: &["check <- Sources/Cart.swift:15 same_package", "Cart.log <- Sources/Cart.swift:18 same_file"],
    },
    Expect {
        fixture: "ruby",
        symbols: &[
            "lib/shop/cart.rb:6-26 class Shop::Cart",
            "lib/shop/cart.rb:7-7 constant Shop::Cart::MAX_ITEMS",
            "lib/shop/cart.rb:19-21 method Shop::Cart::build",
            "lib/shop/strings.rb:3-7 module Shop::Strings",
        ],
        imports: &["lib/shop/cart.rb -> lib/shop/strings.rb"],
        references: &[
            "Shop::Strings::check <- lib/shop/cart.rb:14 qualified_path",
            "Shop::Strings <- lib/shop/cart.rb:14 import",
        ],
    },
    Expect {
        fixture: "php",
        symbols: &[
            "src/Core/Cart.php:8-11 interface Sized",
            "src/Core/Cart.php:14-35 class Cart",
            "src/Core/Cart.php:16-16 constant Cart::MAX_ITEMS",
            "src/Core/Cart.php:37-41 enum Color",
            "src/Core/helpers.php:2-5 function log_item",
        ],
        imports: &["src/Core/Cart.php -> src/Util/Strings.php", "src/Core/Cart.php -> src/Core/helpers.php"],
        references: &[
            "Strings::check <- src/Core/Cart.php:21 qualified_path",
            "Cart::log <- src/Core/Cart.php:23 qualified_path",
            "log_item <- src/Core/Cart.php:33 import",
        ],
    },
    Expect {
        fixture: "lua",
        symbols: &[
            "shop/cart.lua:11-15 method Cart.add",
            "shop/cart.lua:17-19 function helper",
            "shop/strings.lua:4-6 method M.check",
        ],
        imports: &["shop/cart.lua -> shop/strings.lua"],
        references: &["M.check <- shop/cart.lua:12 import", "helper <- shop/cart.lua:22 same_file"],
    },
    Expect {
        fixture: "bash",
        symbols: &[
            "cart.sh:6-8 function add_item",
            "cart.sh:10-12 function main",
            "lib/util.sh:2-4 function check_item",
        ],
        imports: &["cart.sh -> lib/util.sh"],
        references: &["check_item <- cart.sh:7 import", "add_item <- cart.sh:11 same_file"],
    },
    Expect {
        fixture: "elixir",
        symbols: &[
            "lib/shop/cart.ex:1-17 module Shop.Cart",
            "lib/shop/cart.ex:8-12 function Shop.Cart.add",
            "lib/shop/cart.ex:16-16 macro Shop.Cart.shout",
            "lib/shop/strings.ex:4-4 function Shop.Strings.check",
        ],
        imports: &["lib/shop/cart.ex -> lib/shop/strings.ex"],
        references: &[
            "Shop.Strings.check <- lib/shop/cart.ex:9 qualified_path",
            "Shop.Cart.log <- lib/shop/cart.ex:10 same_file",
        ],
    },
    Expect {
        fixture: "haskell",
        symbols: &[
            "src/Shop/Cart.hs:7-7 type Cart",
            "src/Shop/Cart.hs:13-14 interface Sized",
            "src/Shop/Cart.hs:14-14 method Sized.size",
            "src/Shop/Cart.hs:16-19 function add",
            "src/Shop/Strings.hs:4-5 function check",
        ],
        imports: &["src/Shop/Cart.hs -> src/Shop/Strings.hs"],
        references: &["check <- src/Shop/Cart.hs:18 import", "Sized <- src/Shop/Cart.hs:21 same_file"],
    },
    Expect {
        fixture: "zig",
        symbols: &[
            "src/cart.zig:4-4 constant MAX_ITEMS",
            "src/cart.zig:7-16 struct Cart",
            "src/cart.zig:10-15 method Cart.add",
            "src/cart.zig:18-18 enum Color",
            "src/cart.zig:18-18 enum_member Color.red",
            "src/strings.zig:2-4 function check",
        ],
        imports: &["src/cart.zig -> src/strings.zig"],
        references: &["log <- src/cart.zig:14 same_file", "Cart.count <- src/cart.zig:11 qualified_path"],
    },
];

#[test]
fn every_language_fixture_yields_its_symbols_imports_and_references() {
    let mut failures = Vec::new();
    for expect in EXPECT {
        let graph = load(expect.fixture);
        let symbols: Vec<String> = graph
            .all_symbols()
            .map(|r| {
                let s = graph.info(r);
                format!("{}:{}-{} {} {}", s.path, s.line, s.end_line, s.kind, s.qualified_name)
            })
            .collect();
        for want in expect.symbols {
            if !symbols.iter().any(|s| s == want) {
                failures.push(format!("{}: no symbol `{want}`", expect.fixture));
            }
        }
        for want in expect.imports {
            let (from, to) = want.split_once(" -> ").unwrap();
            let impact = graph.impact(from, 1, 0, 100).unwrap_or_else(|| panic!("{}: no file {from}", expect.fixture));
            if !impact.imports.iter().any(|e| e.path == to) {
                failures.push(format!("{}: {from} does not import {to}: {:?}", expect.fixture, impact.imports));
            }
            let back = graph.impact(to, 1, 0, 100).unwrap();
            if !back.imported_by.iter().any(|e| e.path == from) {
                failures.push(format!("{}: {to} is not imported by {from}", expect.fixture));
            }
        }
        for want in expect.references {
            let (name, rest) = want.split_once(" <- ").unwrap();
            let (site, resolution) = rest.split_once(' ').unwrap();
            let (path, line) = site.split_once(':').unwrap();
            let line: u32 = line.parse().unwrap();
            let Some(target) = graph.all_symbols().find(|r| graph.symbol(*r).qualified_name == name) else {
                failures.push(format!("{}: no definition {name}", expect.fixture));
                continue;
            };
            let refs = graph.references(target, 0.0);
            let found = refs.iter().find(|r| r.path == path && r.line == line);
            match found {
                Some(r) if r.resolution == resolution => {
                    assert!(r.confidence > 0.0 && r.confidence <= 1.0);
                }
                Some(r) => failures.push(format!("{}: {want}: resolved as {}", expect.fixture, r.resolution)),
                None => failures.push(format!("{}: {want}: not found among {refs:?}", expect.fixture)),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn all_nineteen_languages_have_a_fixture() {
    let fixtures: Vec<&str> = EXPECT.iter().map(|e| e.fixture).collect();
    for language in crate::ingest::lang::CODE_LANGUAGES {
        let name = match language {
            Language::Tsx => continue,
            other => other.name(),
        };
        assert!(fixtures.contains(&name), "no fixture for {name}");
    }
}

#[test]
fn a_name_only_match_is_never_certain_and_common_names_do_not_match_by_name() {
    // Six definitions of `get`: a bare `get()` elsewhere matches none of them by name alone.
    let mut files = HashMap::new();
    for i in 0..6 {
        files.insert(format!("m{i}.py"), extract(Language::Python, "def get():\n    return 1\n").unwrap());
    }
    files.insert("user.py".into(), extract(Language::Python, "def run():\n    return get() + only()\n").unwrap());
    files.insert("only.py".into(), extract(Language::Python, "def only():\n    return 2\n").unwrap());
    let graph = CodeGraph::build(files, &HashMap::new());
    for r in graph.all_symbols() {
        for reference in graph.references(r, 0.0) {
            assert_eq!(graph.symbol(r).name, "only", "a common name matched by name alone: {reference:?}");
            assert_eq!(reference.resolution, "name_only");
            assert!(reference.confidence <= 0.5, "{reference:?}");
        }
    }
}

#[test]
fn an_object_literals_key_is_no_use_of_a_variable_named_so() {
    // `files: [...]` names a property of the object made; `{ files }` and `x.files` read.
    let js = |text: &str| extract(Language::JavaScript, text).unwrap();
    let code = js(
        "var files = [];\nmodule.exports = { files: ['a.js'], other: files };\nvar x = { files };\nx.files.push(1);\n",
    );
    let lines: Vec<u32> = code.occurrences.iter().filter(|o| code.name_of(o) == "files").map(|o| o.line).collect();
    assert_eq!(lines, [2, 3, 4], "{:?}", code.occurrences);
    let files = HashMap::from([
        ("bin/cli.js".to_string(), js("var files = [];\nfiles.push(1);\n")),
        ("eslint.config.js".to_string(), js("module.exports = [{ files: ['bin/*'] }];\n")),
    ]);
    let graph = CodeGraph::build(files, &HashMap::new());
    let variable = graph.all_symbols().find(|&r| graph.symbol(r).name == "files").unwrap();
    let users: Vec<String> = graph.references(variable, 0.0).iter().map(|r| r.path.clone()).collect();
    assert_eq!(users, ["bin/cli.js"]);
}

#[test]
fn a_mixed_language_repo_is_one_graph() {
    let graph = load_dir(&fixture_root(""));
    let languages: Vec<String> = graph.languages().into_iter().map(|(l, _)| l).collect();
    assert!(languages.len() >= 19, "{languages:?}");
    // Each language's import still resolves with the others beside it.
    for (from, to) in [
        ("rust/src/cart.rs", "rust/src/util/strings.rs"),
        ("python/shop/cart.py", "python/shop/helpers.py"),
        ("typescript/src/main.tsx", "typescript/src/cart.ts"),
        ("go/cart.go", "go/internal/util/strings.go"),
        ("java/src/main/java/com/example/shop/Cart.java", "java/src/main/java/com/example/util/Strings.java"),
        ("c/src/cart.c", "c/include/util.h"),
    ] {
        let impact = graph.impact(from, 1, 0, 100).unwrap();
        assert!(impact.imports.iter().any(|e| e.path == to), "{from} -> {to}: {:?}", impact.imports);
    }
    // A definition in one language is found by name beside the same name in the others.
    let carts: Vec<String> = graph.lookup("Cart").into_iter().map(|r| graph.info(r).language).collect();
    assert!(carts.len() >= 12, "{carts:?}");
}

#[test]
fn every_language_chunks_at_item_boundaries() {
    use crate::ingest::{chunk_file, ChunkParams};
    let params = ChunkParams { max_lines: 12, target_lines: 3, max_chars: 12_000 };
    let mut failures = Vec::new();
    for expect in EXPECT {
        let root = fixture_root(expect.fixture);
        let graph = load(expect.fixture);
        for f in 0..graph.file_count() as u32 {
            let path = graph.path(f).to_string();
            let text = std::fs::read_to_string(root.join(&path)).unwrap();
            let chunks = chunk_file(Language::detect(Path::new(&path)), &text, params);
            // Every definition short enough for one chunk lies whole in one chunk (members of
            // a long class too: the chunker opens it up at its members).
            for r in graph.all_symbols().filter(|r| r.0 == f) {
                let s = graph.symbol(r);
                if (s.end_line - s.line) as usize >= params.max_lines {
                    continue;
                }
                let whole =
                    chunks.iter().any(|c| c.line_start <= u64::from(s.line) && u64::from(s.end_line) <= c.line_end);
                if !whole {
                    let spans: Vec<(u64, u64)> = chunks.iter().map(|c| (c.line_start, c.line_end)).collect();
                    failures.push(format!(
                        "{}/{path}: {} {}-{} split across {spans:?}",
                        expect.fixture, s.name, s.line, s.end_line
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_hub_shortcut_changes_no_answer() {
    // Every definition of a real crate (tokio, from cargo's registry), references with and
    // without the shortcut that skips uses which cannot mean the definition.
    let Some(tokio) = crate_source("tokio-1.") else {
        eprintln!("tokio's source is not in cargo's registry cache: skipped");
        return;
    };
    let graph = load_dir(&tokio);
    let symbols: Vec<_> = graph.all_symbols().collect();
    assert!(symbols.len() > 5000, "{}", symbols.len());
    let mut hubs = 0;
    for (i, r) in symbols.iter().enumerate() {
        // Every 40th, and the first 40 whose name has more than five definitions (where the
        // shortcut skips most uses): a debug build resolves slowly.
        let hub = graph.lookup(&graph.symbol(*r).name).len() > 5 && hubs < 40;
        hubs += usize::from(hub);
        if i % 40 != 0 && !hub {
            continue;
        }
        let (with, without) = (graph.references_filtered(*r, 0.0, true), graph.references_filtered(*r, 0.0, false));
        let missing: Vec<_> = without.iter().filter(|x| !with.contains(x)).collect();
        assert!(missing.is_empty() && with.len() == without.len(), "{:?}: missing {missing:?}", graph.info(*r));
    }
}

#[test]
fn resolving_every_use_ahead_changes_no_answer() {
    // Every fixture (all nineteen languages), and tokio's source when cargo's registry has it:
    // each definition's references, and what resolves to nothing (a gone definition's
    // dangling uses, a method's calls through objects of unknown type), resolved on demand
    // and after `resolve_all`.
    // (Two graphs of each: the graph caches what it found on demand.)
    let mut roots: Vec<PathBuf> = std::fs::read_dir(fixture_root("")).unwrap().flatten().map(|e| e.path()).collect();
    roots.extend(crate_source("tokio-1."));
    for root in &roots {
        let (graph, resolved) = (load_dir(root), load_dir(root));
        let name = root.display();
        let symbols: Vec<_> = graph.all_symbols().collect();
        let answers = |graph: &CodeGraph| -> Vec<String> {
            symbols
                .iter()
                .enumerate()
                .filter(|(i, _)| symbols.len() < 2000 || i % 10 == 0)
                .map(|(_, &r)| {
                    let s = graph.symbol(r);
                    format!(
                        "{:?} {:?} {:?} {:?}",
                        graph.references_filtered(r, 0.0, true),
                        graph.dangling_uses(&s.name),
                        graph.unresolved_member_uses(&s.name, &graph.code(r.0).language, 0.2),
                        s.name
                    )
                })
                .collect()
        };
        let on_demand = answers(&graph);
        resolved.resolve_all();
        assert!(resolved.is_resolved() && !graph.is_resolved(), "{name}");
        let ahead = answers(&resolved);
        assert_eq!(on_demand.len(), ahead.len());
        for (a, b) in on_demand.iter().zip(&ahead) {
            assert_eq!(a, b, "{name}");
        }
    }
}

/// The newest source folder in cargo's registry cache whose name starts with `prefix`.
fn crate_source(prefix: &str) -> Option<PathBuf> {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))?;
    let mut found = Vec::new();
    for registry in std::fs::read_dir(home.join("registry/src")).ok()? {
        for entry in std::fs::read_dir(registry.ok()?.path()).ok()? {
            let path = entry.ok()?.path();
            if path.file_name()?.to_string_lossy().starts_with(prefix) {
                found.push(path);
            }
        }
    }
    found.sort();
    found.pop()
}

fn walk(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                out.push(path);
            }
        }
    }
    out
}

#[test]
fn a_match_guard_uses_names_and_binds_none() {
    // A guard's call was once bound as a local, which hid every later use in the function.
    let text = "fn ready(x: u8) -> bool { x > 0 }\nfn pick(v: Option<u8>) -> u8 {\n    match v {\n        Some(n) if ready(n) => n,\n        _ => 0,\n    }\n}\nfn again(v: u8) -> bool { ready(v) }\n";
    let code = crate::code::extract::extract(Language::Rust, text).unwrap();
    let lines: Vec<u32> = code.occurrences.iter().filter(|o| code.name_of(o) == "ready").map(|o| o.line).collect();
    assert_eq!(lines, vec![4, 8], "{:?}", code.occurrences);
    assert!(!code.occurrences.iter().any(|o| code.name_of(o) == "n"), "the pattern's binding is local");
}

#[test]
fn a_changed_method_reaches_the_tests_that_call_it_through_an_object_of_unknown_type() {
    use crate::code::dependents::{walk, Seed, WalkLimits};
    // `render` is defined by seven classes: `item.render()` on an object a factory made
    // resolves to none of them by name, so the test was never found.
    let mut files = HashMap::new();
    let classes: String =
        (0..7).map(|i| format!("class Item{i}:\n    def render(self):\n        return {i}\n\n")).collect();
    files.insert("shop/items.py".into(), extract(Language::Python, &classes).unwrap());
    files.insert(
        "tests/test_items.py".into(),
        extract(
            Language::Python,
            "from shop.factory import make\n\ndef test_render():\n    item = make()\n    assert item.render() == 3\n",
        )
        .unwrap(),
    );
    files.insert(
        "tests/test_other.py".into(),
        extract(Language::Python, "def test_nothing():\n    assert True\n").unwrap(),
    );
    let graph = CodeGraph::build(files, &HashMap::new());
    let changed = graph.lookup("Item3.render")[0];
    let seeds = [Seed {
        symbol_opt: Some(changed),
        name: String::new(),
        label: "Item3.render".into(),
        instances_only: false,
        declared_only: false,
        needs_operation: 0,
        key: None,
    }];
    let limits = |member_guess| WalkLimits { test_depth: 5, member_guess, ..resolution::daemon_walk_limits() };
    let tests = |guess| -> Vec<String> {
        walk(&graph, &seeds, limits(guess)).tests.iter().map(|t| graph.path(t.file).to_string()).collect()
    };
    assert_eq!(tests(0.0), Vec::<String>::new(), "without the guess nothing reaches the test");
    let found = walk(&graph, &seeds, limits(0.2));
    assert_eq!(found.tests.len(), 1, "{:?}", found.tests);
    assert_eq!(graph.path(found.tests[0].file), "tests/test_items.py");
    assert!(found.tests[0].confidence < 0.5, "a guess is never sure: {:?}", found.tests[0]);
    assert!(found.dependents.is_empty(), "a guess does not make a dependent: {:?}", found.dependents);
}

/// A construct the grammar cannot read (tree-sitter-typescript and generic call
/// signatures followed by a plain one, without semicolons) no longer loses the rest of the file: it is parsed again
/// from the next top-level line, its definitions at their own lines, its uses resolved.
#[test]
fn the_rest_of_a_file_after_a_syntax_error_keeps_its_definitions() {
    let text = r#"export function before(): number {
    return 1
}

export interface Factory extends Base, Other {
    // one argument
    <T extends Function | undefined | null>(fn: T): T
    // two
    <T extends Function | undefined | null>(name: string, fn: T): T

    // named
    (name: string): Wrapped<Other>
}

function makeFactory(flag: boolean): Factory {
    return before() as any
}

export const made: Factory = makeFactory(false)

export class Later {
    run() { return makeFactory(true) }
}
"#;
    let code = crate::code::extract::extract(Language::TypeScript, text).unwrap();
    let line_of = |name: &str| code.symbols.iter().find(|s| s.name == name).map(|s| (s.line, s.kind));
    assert_eq!(line_of("before"), Some((1, SymbolKind::Function)));
    assert_eq!(line_of("makeFactory"), Some((15, SymbolKind::Function)));
    assert_eq!(line_of("made").map(|(l, _)| l), Some(19));
    assert_eq!(line_of("Later"), Some((21, SymbolKind::Class)));
    assert_eq!(line_of("run"), Some((22, SymbolKind::Method)));
    // Uses after the error are read once each, at their own lines.
    let uses: Vec<u32> = code.occurrences.iter().filter(|o| code.name_of(o) == "makeFactory").map(|o| o.line).collect();
    assert_eq!(uses, vec![19, 22]);
    // A file without errors is read as before.
    let clean = crate::code::extract::extract(Language::TypeScript, "function a() {}\nfunction b() { a() }\n").unwrap();
    assert_eq!(clean.symbols.iter().map(|s| s.line).collect::<Vec<_>>(), vec![1, 2]);
}

/// A syntax error in a Rust test (snapbox's `str![…]`: `str` is the primitive type to the
/// grammar) before a raw string whose lines begin at column 0: the rest of the test is not
/// parsed again from inside the string, so its uses stay the test's.
#[test]
fn a_raw_strings_lines_are_no_place_to_parse_again_from() {
    let text = "#[test]\nfn factor_test() {\n    let expected = str![[r#\"\nOk(\n    3,\n)\n\"#]];\n    \
                assert_data_eq!(factor(\"3\"), expected);\n}\n\nfn after() {}\n";
    let code = crate::code::extract::extract(Language::Rust, text).unwrap();
    let test = code.symbols.iter().position(|s| s.name == "factor_test").unwrap() as u32;
    let uses: Vec<(u32, Option<u32>)> =
        code.occurrences.iter().filter(|o| code.name_of(o) == "factor").map(|o| (o.line, o.enclosing)).collect();
    assert_eq!(uses, vec![(8, Some(test))]);
    assert!(code.symbols.iter().any(|s| s.name == "after" && s.line == 11));
}

/// A Python test module's function that nothing calls or names runs with the module's tests:
/// a test class's `assert_case`, called by the tests its `load_fixtures` adds at import, and
/// `setUp`. A path that reaches one ends in a test of that module, named by its class (what
/// pytest collects), not by the helper's own name, which no runner would find.
#[test]
fn a_test_module_s_uncalled_helper_runs_with_its_tests() {
    let graph = resolution::python_graph(&[
        ("pkg/render.py", "def render(text):\n    return text\n"),
        (
            "tests/__init__.py",
            "class Base:\n\
             \x20   @classmethod\n\
             \x20   def load_fixtures(cls, name):\n\
             \x20       for n in range(3):\n\
             \x20           setattr(cls, 'test_%d' % n, lambda self: self.assert_case(n))\n\
             \n\
             \x20   def assert_case(self, n):\n\
             \x20       raise NotImplementedError\n",
        ),
        (
            "tests/test_syntax.py",
            "from pkg.render import render\n\
             from tests import Base\n\
             \n\
             class TestSyntax(Base):\n\
             \x20   def assert_case(self, n):\n\
             \x20       assert render(n)\n\
             \n\
             TestSyntax.load_fixtures('cases.txt')\n",
        ),
        (
            "tests/test_setup.py",
            "from pkg.render import render\n\
             \n\
             class Checks:\n\
             \x20   def setUp(self):\n\
             \x20       self.out = render('x')\n\
             \n\
             \x20   def test_out(self):\n\
             \x20       assert self.out\n",
        ),
        ("tests/test_other.py", "def test_nothing():\n    assert True\n"),
    ]);
    let mut found: Vec<(String, String)> = tests_reached(&graph, "render")
        .iter()
        .filter_map(|t| Some((graph.path(t.file).to_string(), graph.test_name(t.file, t.symbol_opt? as usize))))
        .collect();
    found.sort();
    assert_eq!(
        found,
        [
            ("tests/test_setup.py".to_string(), String::new()),
            ("tests/test_syntax.py".to_string(), "TestSyntax".to_string())
        ]
    );
}

/// A Python module-level variable that holds an instance (`html: Markdown = create(…)`,
/// `app = App()`) runs its class's `__call__` where another module calls it
/// (`pkg.html(text)`), as a call in its own module does.
#[test]
fn a_call_of_an_instance_another_module_holds_runs_its_call_method() {
    let graph = resolution::python_graph(&[
        (
            "pkg/__init__.py",
            "class Markdown:\n\
             \x20   def __call__(self, text):\n\
             \x20       return text\n\
             \n\
             class App:\n\
             \x20   def __call__(self, environ):\n\
             \x20       return environ\n\
             \n\
             def create():\n\
             \x20   return Markdown()\n\
             \n\
             html: Markdown = create()\n\
             app = App()\n",
        ),
        ("tests/test_html.py", "import pkg\n\ndef test_html():\n    assert pkg.html('a')\n"),
        ("tests/test_app.py", "from pkg import app\n\ndef test_app():\n    assert app({})\n"),
        ("tests/test_other.py", "import pkg\n\ndef test_create():\n    assert pkg.create()\n"),
    ]);
    let tests_of = |name: &str| -> Vec<String> {
        let mut found: Vec<String> =
            tests_reached(&graph, name).iter().map(|t| graph.path(t.file).to_string()).collect();
        found.sort();
        found.dedup();
        found
    };
    assert_eq!(tests_of("Markdown.__call__"), ["tests/test_html.py"]);
    assert_eq!(tests_of("App.__call__"), ["tests/test_app.py"]);
}

/// The tests a walk from the definition named `name` reaches, with a change impact's default
/// limits (2 levels of dependents, tests 5 hops away, guesses at 0.2).
fn tests_reached(graph: &CodeGraph, name: &str) -> Vec<crate::code::dependents::Reached> {
    use crate::code::dependents::{walk, Seed, WalkLimits};
    let seeds = [Seed::plain(Some(graph.lookup(name)[0]), "", name)];
    let limits = WalkLimits { test_depth: 5, ..resolution::daemon_walk_limits() };
    walk(graph, &seeds, limits).tests
}
