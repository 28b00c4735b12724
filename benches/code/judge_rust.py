#!/usr/bin/env python3
"""Ground truth for docdex's code intelligence on a Rust crate, from rust-analyzer's SCIP index
(`rust-analyzer scip`) and its parser (`rust-analyzer parse --json`).

Usage (after fetch.sh):
  python3 benches/code/judge_rust.py PROJECT ROOT SPLIT FETCH [--imports-only]
  e.g. ... judge_rust.py clap_builder-4.6.7 clap_builder-4.6.7 tune "..."
Writes benches/code/PROJECT.json. Deterministic (fixed seed, sorted output). Needs the
rust-analyzer binary fetch.sh builds (target/code-eval/ra/bin/rust-analyzer, or $RUST_ANALYZER),
a toolchain with the rust-src component (std's source, which rust-analyzer reads) and the
crate's dependencies in the cargo registry cache: everything runs offline
(CARGO_NET_OFFLINE=true). rust-analyzer's own cargo runs (metadata, check for build scripts
and proc macros) use target/code-eval/ra-target as their target dir, so nothing is written
into ROOT. Standard library only: the SCIP protobuf is read by a small wire-format decoder
(field numbers of scip.proto as compiled into the `scip` 0.7.1 crate rust-analyzer uses:
Index.documents=2, Document.relative_path=1 / occurrences=2 / symbols=3, Occurrence.range=1
(packed int32) / symbol=2 / symbol_roles=3 / enclosing_range=7, SymbolInformation.symbol=1 /
kind=5 / display_name=6, Metadata.tool_info=2, ToolInfo.name=1 / version=2).

std resolves only when rust-analyzer's `cargo metadata` of the sysroot's library workspace
succeeds, which offline needs std's own locked dependencies in the cache (fetch.sh fetches
them); otherwise it silently falls back to a --no-deps sysroot in which Vec, Option, ... are
unknown types and most method calls go unresolved. `rust-analyzer analysis-stats ROOT` shows
the health: with the sysroot loaded, 2 of 29663 expressions of unknown type in clap_builder,
47 of 29722 in aho-corasick (core::arch intrinsics in its SIMD code).

Scope: the crate as rust-analyzer loads it with `cargo metadata` (default features, cfg(test)
on, target x86_64-unknown-linux-gnu), i.e. the files of its module tree (every SCIP document
under ROOT). "files" lists them; every other *.rs under ROOT (a module switched off by cfg or
a feature) is in "files_outside_module_tree" and has no truth. Paths relative to ROOT with
"/"; lines 1-based; columns 1-based in characters (SCIP's UTF-8 byte offsets converted).
Code under an inactive #[cfg(...)] is not analysed by rust-analyzer, so it has no definitions
or references here.

definitions  every SCIP occurrence with the Definition role (symbol_roles & 1) in a judged
             document whose symbol is not local ("local N") and whose SymbolInformation kind
             maps to a docdex kind:
               Function -> "function"; Method, StaticMethod, TraitMethod (associated fns of
               impls and traits, with or without self) -> "method"; Struct, Union ->
               "struct"; Enum -> "enum"; Trait -> "trait"; TypeAlias, AssociatedType (type
               aliases, associated types in traits and impls) -> "type"; Constant,
               StaticVariable (const and static items, associated consts included) ->
               "constant"; Macro (macro_rules!) -> "macro"; Module (`mod x;` at its
               declaration, `mod x { }`) -> "module".
             Not included: fields, enum variants, locals, parameters, generic parameters,
             the crate root module, impl blocks. An occurrence whose source text is not the
             symbol's display name is dropped (counted in generator.definitions_dropped).
             Items a macro invocation defines are included when rust-analyzer maps their name
             to a token of the invocation (aho-corasick's test functions named in a macro
             call; counted in generator.definitions_in_macro_calls). line/column = the name
             token; qualified_name = the crate name and the SCIP descriptors joined with "::"
             (an impl block contributes its self type: "clap_builder::builder::arg::Arg::
             get_id"; items nested in a function body get no function segment).
references   for a sample of the definitions (below): every other SCIP occurrence of the same
             symbol in a judged document (rust-analyzer's StaticIndex resolves every token of
             every file, descending into macro calls: the path segments, method calls, field
             accesses, `use` items, macro calls, ...), except the definition site itself.
             Dropped (counted in generator.references_dropped): occurrences whose source text
             is not the symbol's name (`Self`, the alias of `use x as y` and uses of the
             alias), the whole-file occurrence rust-analyzer gives a file's own module, and,
             for a symbol with several Definition occurrences (rust-analyzer gives items
             nested in different function bodies one symbol: a `fn imp` in three methods, a
             `static EMPTY` in five), every occurrence whose enclosing_range (the body of the
             item it resolves to, set when in that item's file) differs from the sampled
             definition's. Not in SCIP, so not here: names inside format strings
             (`write!(f, "{USAGE_SEP}")`), intra-doc links in comments, code under an
             inactive cfg.
             A method call resolves to what rust-analyzer resolves it to (the impl's method
             when the receiver's type is known, the trait's method otherwise); a trait
             method's implementations are separate symbols.
sample       judge_common.sample, seed 20240611, quota per kind struct 20, enum 10, trait 10,
             type 10, function 30, method 50, constant 10, macro 10 (= 150), within a kind half
             "popular", half "rare" by how many IDENT tokens (rust-analyzer's parser) in the
             project spell the name. Names under 3 characters skipped.
imports      file -> file module edges, each from a syntax node found with `rust-analyzer
             parse --json` and resolved with the SCIP occurrences at its tokens:
               - `mod x;` (a MODULE node without an item list): the module occurrence at
                 its name (rust-analyzer 0.0.349 gives it as a reference; the module's
                 Definition is the whole-file occurrence) -> the file whose whole-file
                 module occurrence has the same symbol (x.rs, x/mod.rs or a #[path] file,
                 as rust-analyzer resolved it);
               - `use` items (every USE node, also inside functions and inline modules, `pub
                 use` re-exports included): each leaf path of the use tree (groups expanded,
                 `{self, ..}` included, `*` globs, renames) -> the file of the module named
                 by the last path segment whose occurrence is a module symbol (SCIP
                 descriptor ending in "/"; `crate`, `self` and `super` resolve to module
                 symbols too). `use crate::a::b::C` -> the file of module a::b; `use
                 crate::a::b` -> b's file; `use crate::X` -> the crate root; `use super::*`
                 -> the parent module's file. A module's file is the file whose whole-file
                 occurrence is that module (file modules), else the file holding its
                 Definition occurrence (inline `mod x { }`).
             Only edges between judged files, no self edges (a `use self::inner::X` of an
             inline module stays in the file). Paths outside `use`/`mod` (e.g. an expression
             `crate::a::f()`) are not imports. Use leaves whose path names no module of the
             crate (external crates, std) give no edge; "import_files" = every judged file.
"""
import json
import os
import subprocess
import sys
import tempfile
import tomllib
from collections import Counter, defaultdict

from judge_common import SEED, dump, sample

QUOTA = {"struct": 20, "enum": 10, "trait": 10, "type": 10, "function": 30, "method": 50,
         "constant": 10, "macro": 10}

# scip.SymbolInformation.Kind numbers -> docdex kinds
KINDS = {17: "function", 26: "method", 80: "method", 70: "method", 49: "struct", 59: "struct",
         11: "enum", 53: "trait", 55: "type", 3: "type", 8: "constant", 82: "constant",
         25: "macro", 29: "module"}

HERE = os.path.dirname(os.path.abspath(__file__))
BASE = os.path.realpath(os.path.join(HERE, "..", "..", "target", "code-eval"))


# ---- protobuf wire format -------------------------------------------------------------------

def varint(buf, i):
    shift = result = 0
    while True:
        b = buf[i]
        i += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, i
        shift += 7


def fields(buf):
    """Yields (field number, wire type, value) of one message; value is an int for varints and
    a memoryview for length-delimited fields."""
    i, n = 0, len(buf)
    while i < n:
        key, i = varint(buf, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = varint(buf, i)
        elif wt == 2:
            ln, i = varint(buf, i)
            v = buf[i:i + ln]
            i += ln
        elif wt == 1:
            v = bytes(buf[i:i + 8])
            i += 8
        elif wt == 5:
            v = bytes(buf[i:i + 4])
            i += 4
        else:
            raise ValueError(f"wire type {wt}")
        yield num, wt, v


def int32(v):
    return v - (1 << 64) if v >= 1 << 63 else v


def packed(v):
    out, i = [], 0
    while i < len(v):
        x, i = varint(v, i)
        out.append(int32(x))
    return out


def decode_index(data):
    buf = memoryview(data)
    tool = {}
    docs = {}
    for num, wt, v in fields(buf):
        if num == 1:  # metadata
            for n2, _, v2 in fields(v):
                if n2 == 2:  # tool_info
                    for n3, _, v3 in fields(v2):
                        if n3 == 1:
                            tool["name"] = bytes(v3).decode()
                        elif n3 == 2:
                            tool["version"] = bytes(v3).decode()
        elif num == 2:  # document
            path, occs, syms = None, [], {}
            for n2, _, v2 in fields(v):
                if n2 == 1:
                    path = bytes(v2).decode()
                elif n2 == 2:
                    rng, sym, roles, encl = [], "", 0, []
                    for n3, w3, v3 in fields(v2):
                        if n3 in (1, 7):
                            r = rng if n3 == 1 else encl
                            if w3 == 2:
                                r += packed(v3)
                            else:
                                r.append(int32(v3))
                        elif n3 == 2:
                            sym = bytes(v3).decode()
                        elif n3 == 3:
                            roles = int32(v3)
                    if len(rng) == 3:
                        rng = [rng[0], rng[1], rng[0], rng[2]]
                    occs.append((rng[0], rng[1], rng[2], rng[3], sym, roles, tuple(encl)))
                elif n2 == 3:
                    sym, kind, display = "", 0, ""
                    for n3, _, v3 in fields(v2):
                        if n3 == 1:
                            sym = bytes(v3).decode()
                        elif n3 == 5:
                            kind = v3
                        elif n3 == 6:
                            display = bytes(v3).decode()
                    syms[sym] = (kind, display)
            docs[path] = {"occ": occs, "syms": syms}
    return tool, docs


# ---- SCIP symbols ---------------------------------------------------------------------------

def descriptors(symbol):
    """[(name, suffix)] of a SCIP symbol `scheme manager package version descriptors`;
    suffix one of / # . ( ) [ ] ! : with "(" for a method, "[" for a type parameter."""
    # scheme and the three package fields are space separated ("  " escapes a space)
    i = 0
    for _ in range(4):
        while True:
            j = symbol.index(" ", i)
            if symbol[j + 1:j + 2] == " ":
                i = j + 2
                continue
            i = j + 1
            break
    s, out = symbol[i:], []

    def name_at(k):
        if s[k] == "`":
            j, name = k + 1, []
            while True:
                if s[j] == "`" and s[j + 1:j + 2] == "`":
                    name.append("`")
                    j += 2
                elif s[j] == "`":
                    return "".join(name), j + 1
                else:
                    name.append(s[j])
                    j += 1
        j = k
        while j < len(s) and (s[j].isalnum() or s[j] in "_+-$"):
            j += 1
        return s[k:j], j

    k = 0
    while k < len(s):
        c = s[k]
        if c in "[(":  # type parameter [name], parameter (name)
            name, k = name_at(k + 1)
            out.append((name, c))
            k += 1  # "]" or ")"
            continue
        name, k = name_at(k)
        suf = s[k]
        if suf == "(":
            k = s.index(")", k) + 2  # "(disambiguator)."
        else:
            k += 1
        out.append((name, suf))
    return out


def qualified(crate, symbol):
    parts = [crate]
    ds = descriptors(symbol)
    k = 0
    while k < len(ds):
        name, suf = ds[k]
        if name == "impl" and suf == "#":
            # impl#[SelfType][Trait]: the self type names the container
            params = []
            while k + 1 < len(ds) and ds[k + 1][1] == "[":
                params.append(ds[k + 1][0])
                k += 1
            if params:
                parts.append(params[0].split("<")[0].strip())
        elif suf == "[":
            pass
        elif not (name == "crate" and suf == "/" and k == 0):
            parts.append(name)
        k += 1
    return "::".join(parts)


def is_module_symbol(symbol):
    return bool(symbol) and not symbol.startswith("local ") and symbol.endswith("/")


# ---- rust-analyzer --------------------------------------------------------------------------

def ra_binary():
    return os.environ.get("RUST_ANALYZER") or os.path.join(BASE, "ra", "bin", "rust-analyzer")


def ra_env():
    return dict(os.environ, CARGO_NET_OFFLINE="true",
                CARGO_TARGET_DIR=os.path.join(BASE, "ra-target"), RUST_LOG="error")


def ra_version():
    """The installed crate's version as `cargo install --list` records it (the binary's own
    --version says 0.0.0 outside rust-analyzer's release pipeline)."""
    ra = ra_binary()
    r = subprocess.run(["cargo", "install", "--list", "--root",
                        os.path.dirname(os.path.dirname(ra))], capture_output=True, text=True)
    for line in r.stdout.splitlines():
        if line.startswith("ra_ap_rust-analyzer "):
            return line.rstrip(":")
    return "unknown"


def rustc_version(root):
    r = subprocess.run(["rustc", "--version"], cwd=root, capture_output=True, text=True)
    return r.stdout.strip()


def run_scip(root):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "index.scip")
        r = subprocess.run([ra_binary(), "scip", root, "--output", out], env=ra_env(),
                           cwd=root, capture_output=True, text=True)
        if r.returncode != 0 or not os.path.exists(out):
            sys.exit(f"rust-analyzer scip failed ({r.returncode}):\n{r.stderr[-4000:]}")
        with open(out, "rb") as f:
            return f.read(), r.stderr


def parse_tree(text):
    r = subprocess.run([ra_binary(), "parse", "--json"], input=text.encode("utf-8"),
                       env=ra_env(), capture_output=True)
    if r.returncode != 0:
        sys.exit(f"rust-analyzer parse failed: {r.stderr.decode()[-2000:]}")
    return json.loads(r.stdout)


def walk(node):
    yield node
    for c in node.get("children") or ():
        yield from walk(c)


def kids(node, kind=None):
    return [c for c in node.get("children") or () if kind is None or c["kind"] == kind]


def path_segments(path_node):
    """The NAME_REF tokens of a PATH node, in order: [(line0, bytecol, text)]."""
    segs = []
    for seg in walk(path_node):
        if seg["kind"] != "PATH_SEGMENT":
            continue
        for nr in kids(seg, "NAME_REF"):
            for t in kids(nr):
                if t["type"] == "Token":
                    segs.append((t["start"][1], t["start"][2], t["text"]))
    return segs


def use_leaves(tree, prefix):
    """Leaf paths of a USE_TREE: lists of (line0, bytecol, text)."""
    own = []
    for p in kids(tree, "PATH"):
        own = path_segments(p)
    full = prefix + own
    lists = kids(tree, "USE_TREE_LIST")
    if lists:
        out = []
        for sub in kids(lists[0], "USE_TREE"):
            out += use_leaves(sub, full)
        return out
    return [full] if full else []


# ---- the judge ------------------------------------------------------------------------------

def main():
    project, root_name, split, fetch = sys.argv[1:5]
    root = os.path.join(BASE, "src", root_name)
    with open(os.path.join(root, "Cargo.toml"), "rb") as f:
        manifest = tomllib.load(f)
    crate = (manifest.get("lib", {}).get("name") or manifest["package"]["name"]).replace("-", "_")

    data, stderr = run_scip(root)
    tool, docs = decode_index(data)
    docs = {p: d for p, d in docs.items() if not p.startswith("../") and not os.path.isabs(p)}
    files = sorted(docs)
    all_rs = []
    for d, dirs, fs in os.walk(root):
        dirs[:] = sorted(x for x in dirs if not x.startswith(".") and x != "target")
        all_rs += [os.path.relpath(os.path.join(d, f), root).replace(os.sep, "/")
                   for f in sorted(fs) if f.endswith(".rs")]
    outside = sorted(set(all_rs) - set(files))

    lines = {}
    for p in files:
        with open(os.path.join(root, p), encoding="utf-8") as f:
            lines[p] = [ln.encode("utf-8") for ln in f.read().split("\n")]

    def text_at(p, l0, c0, l1, c1):
        if l0 != l1:
            return None
        return lines[p][l0][c0:c1].decode("utf-8", "replace")

    def char_col(p, l0, bytecol):
        return len(lines[p][l0][:bytecol].decode("utf-8", "replace")) + 1

    def whole_file(p, o):
        last = len(lines[p]) - 1
        return o[0] == 0 and o[1] == 0 and o[2] == last and o[3] == len(lines[p][last])

    # symbol information over all documents
    syminfo = {}
    for p in files:
        for s, (k, disp) in docs[p]["syms"].items():
            syminfo.setdefault(s, (k, disp))

    # modules -> files
    module_file = {}
    module_def_file = {}
    for p in files:
        for o in docs[p]["occ"]:
            if is_module_symbol(o[4]):
                if whole_file(p, o):
                    module_file[o[4]] = p
                elif o[5] & 1:
                    module_def_file.setdefault(o[4], p)
    for s, p in module_def_file.items():
        module_file.setdefault(s, p)

    # definitions
    defs = []
    def_site = {}
    dropped_defs = Counter()
    for p in files:
        for o in docs[p]["occ"]:
            sym, roles = o[4], o[5]
            if not (roles & 1) or not sym or sym.startswith("local ") or whole_file(p, o):
                continue
            kind_num, disp = syminfo.get(sym, (0, ""))
            kind = KINDS.get(kind_num)
            if kind is None:
                continue
            txt = text_at(p, *o[:4])
            if not disp or txt != disp:
                dropped_defs[f"{kind}: text is not the name"] += 1
                continue
            d = {"name": disp, "qualified_name": qualified(crate, sym), "kind": kind, "path": p,
                 "line": o[0] + 1, "column": char_col(p, o[0], o[1])}
            key = (p, o[0], o[1], sym)
            if key in def_site:
                continue
            def_site[key] = d
            d["_symbol"] = sym
            d["_pos"] = (o[0], o[1])
            d["_encl"] = o[6]
            defs.append(d)
    defs.sort(key=lambda x: (x["path"], x["line"], x["column"], x["name"]))

    # identifier counts and parse trees
    counts = Counter()
    trees = {}
    for p in files:
        tree = parse_tree(b"\n".join(lines[p]).decode("utf-8"))
        trees[p] = tree
        for n in walk(tree):
            if n["type"] == "Token" and n["kind"] == "IDENT":
                counts[n["text"]] += 1

    in_macro = 0
    for p in files:
        tt_tokens = set()

        def mark(n, inside):
            if n["type"] == "Token":
                if inside:
                    tt_tokens.add((n["start"][1], n["start"][2]))
                return
            for ch in n.get("children") or ():
                mark(ch, inside or n["kind"] == "TOKEN_TREE")
        mark(trees[p], False)
        for d in defs:
            if d["path"] == p:
                o0 = d["_pos"]
                in_macro += (o0[0], o0[1]) in tt_tokens

    # references
    occ_by_symbol = defaultdict(list)
    for p in files:
        for o in docs[p]["occ"]:
            if o[4] and not o[4].startswith("local "):
                occ_by_symbol[o[4]].append((p, o))
    def_occs = Counter(o[4] for p in files for o in docs[p]["occ"] if o[5] & 1)
    chosen = sample(defs, counts, QUOTA)
    references = []
    dropped_refs = Counter()
    for d, stratum in chosen:
        refs = set()
        dup = def_occs[d["_symbol"]] > 1
        for p, o in occ_by_symbol[d["_symbol"]]:
            if dup and (p != d["path"] or o[6] != d["_encl"] or not o[6]):
                # rust-analyzer's duplicate symbols: items nested in different function
                # bodies (`fn imp` in three methods, `static EMPTY` in five) share one SCIP
                # symbol; each occurrence's enclosing_range is its own definition's body
                # (set when in the definition's file), which tells them apart
                dropped_refs["another item with the same symbol"] += 1
                continue
            if whole_file(p, o):
                dropped_refs["whole-file module occurrence"] += 1
                continue
            line, col = o[0] + 1, char_col(p, o[0], o[1])
            if p == d["path"] and line == d["line"] and col == d["column"]:
                continue
            txt = text_at(p, *o[:4])
            if txt != d["name"]:
                dropped_refs[f"text {'Self' if txt == 'Self' else 'is not the name'}"] += 1
                continue
            refs.add((p, line, col))
        references.append({
            "symbol": {"name": d["name"], "qualified_name": d["qualified_name"],
                       "kind": d["kind"], "path": d["path"], "line": d["line"],
                       "stratum": stratum, "name_tokens": counts.get(d["name"], 0)},
            "refs": [{"path": p, "line": l, "column": c} for p, l, c in sorted(refs)],
        })

    # imports
    occ_at = {}
    for p in files:
        for o in docs[p]["occ"]:
            if o[4] and not o[4].startswith("local "):
                occ_at.setdefault((p, o[0], o[1]), []).append(o[4])
    edges = set()
    stats = Counter()
    for p in files:
        for n in walk(trees[p]):  # mod x; (the name's occurrence is a reference, not a definition)
            if n["kind"] != "MODULE" or kids(n, "ITEM_LIST"):
                continue
            for name in kids(n, "NAME"):
                for t in kids(name):
                    if t.get("type") != "Token":
                        continue
                    for s in occ_at.get((p, t["start"][1], t["start"][2]), []):
                        target = module_file.get(s) if is_module_symbol(s) else None
                        if target and target != p:
                            edges.add((p, target))
                            stats["mod edges"] += 1
        for n in walk(trees[p]):
            if n["kind"] != "USE":
                continue
            for ut in kids(n, "USE_TREE"):
                for leaf in use_leaves(ut, []):
                    stats["use leaves"] += 1
                    target = None
                    for (l0, c0, _txt) in leaf:
                        mods = [s for s in occ_at.get((p, l0, c0), []) if is_module_symbol(s)]
                        if mods:
                            target = mods[0]
                    if target is None:
                        stats["use leaves naming no module"] += 1
                        continue
                    t = module_file.get(target)
                    if t is None:
                        stats["use leaves naming a module outside the crate"] += 1
                        continue
                    if t == p:
                        stats["use leaves naming the file's own module"] += 1
                        continue
                    edges.add((p, t))
    for d in defs:
        del d["_symbol"], d["_pos"], d["_encl"]

    kinds = Counter(d["kind"] for d in defs)
    out = {
        "project": project,
        "language": "rust",
        "split": split,
        "fetch": fetch,
        "root": root_name,
        "generator": {"script": "benches/code/judge_rust.py",
                      "rust_analyzer": ra_version(),
                      "rust_analyzer_reported_version": tool.get("version", "?"),
                      "rustc_sysroot": rustc_version(root), "seed": SEED,
                      "crate": crate,
                      "definition_kinds": sorted(set(KINDS.values())),
                      "sample_kinds": sorted(QUOTA),
                      "definitions_dropped": dict(sorted(dropped_defs.items())),
                      "definitions_in_macro_calls": in_macro,
                      "references_dropped": dict(sorted(dropped_refs.items())),
                      "import_stats": dict(sorted(stats.items()))},
        "files": files,
        "files_outside_module_tree": outside,
        "definitions": defs,
        "references": references,
        "import_files": files,
        "imports": [{"from": a, "to": b} for a, b in sorted(edges)],
    }
    target = os.path.join(HERE, project + ".json")
    if "--imports-only" in sys.argv[5:]:
        # Only the import edges are judged again: definitions and references stay those of
        # the judged file (a machine without std's source resolves fewer std method calls).
        with open(target) as f:
            kept = json.load(f)
        kept["generator"]["import_stats"] = out["generator"]["import_stats"]
        kept["import_files"], kept["imports"] = out["import_files"], out["imports"]
        out = kept
    with open(target, "w") as f:
        f.write(dump(out))
    print(f"{project}: {len(files)} files ({len(outside)} .rs outside the module tree), "
          f"{len(defs)} definitions {dict(kinds)}, {len(references)} sampled symbols, "
          f"{sum(len(r['refs']) for r in references)} refs, {len(edges)} import edges; "
          f"{ra_version()}; dropped defs {dict(dropped_defs)}, "
          f"refs {dict(dropped_refs)}; imports {dict(stats)}")


if __name__ == "__main__":
    main()
