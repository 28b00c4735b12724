#!/usr/bin/env python3
"""Ground truth for docdex's code intelligence on a TypeScript project, from the `typescript`
npm package's language service (5.9.3), driven through judge_typescript_ls.js.

Usage (after fetch.sh):
  python3 benches/code/judge_typescript.py PROJECT ROOT SPLIT FETCH
  e.g. ... judge_typescript.py mobx-7.1.3 mobx-7.1.3 tune "npm pack mobx@7.1.3 (src/ kept)"
Writes benches/code/PROJECT.json. Deterministic (fixed seed, sorted output). Needs node and
target/code-eval/node/node_modules/typescript.

Program: every *.ts/*.tsx/*.mts/*.cts file under target/code-eval/src/ROOT (no node_modules,
no dot-directories; .d.ts files included) as the root files of one LanguageService with fixed
options (no tsconfig ships in the tarballs): target ES2022, module ESNext, moduleResolution
Bundler, jsx Preserve, strict, types []. Paths relative to ROOT with "/"; lines 1-based;
columns 1-based in characters (code points; the service's UTF-16 offsets converted).

definitions  ls.getNavigationTree(file) for every file, walking every item and every one of
             its spans (so each overload signature and merged declaration is its own entry);
             the declaration node at a span decides the kind:
               FunctionDeclaration -> "function" (nested functions included)
               ClassDeclaration -> "class"; InterfaceDeclaration -> "interface";
               TypeAliasDeclaration -> "type"; EnumDeclaration -> "enum";
               ModuleDeclaration (namespace) -> "namespace" (not `declare global`, whose
                 contents are skipped too)
               MethodDeclaration / get / set accessor in a class, and a class property whose
                 initializer is an arrow function or function expression -> "method"
               VariableDeclaration at module (or namespace) level -> "function" when its
                 initializer is an arrow function / function expression, else "variable"
             Not included: constructors, plain class properties, interface and type members,
             object-literal members, enum members, local variables, parameters, anonymous
             default exports. line/column = the declaration's name identifier;
             qualified_name = the navigation-tree containers joined with "." (e.g.
             "ObservableSet.delete"; nested function "outer.inner"), no module prefix.
references   for a sample of the definitions (below): ls.findReferences(file, position of the
             name). The entries of the returned ReferencedSymbol groups for the symbol itself
             and for the import/export aliases that resolve to it, kept when the file is
             under ROOT, except the definition site itself (same path, line, column). Import/export specifiers that
             name the symbol are kept: they are references. "is_definition" is the service's
             isDefinition flag, kept for analysis. Dropped (counted in
             generator.references_dropped): groups whose definition is another symbol
             (checker.getSymbolAtLocation at the group's definition, aliases followed with
             getAliasedSymbol, shares no declaration with the target: the base-class and
             interface members a method overrides or implements, and their other
             implementations); entries whose source text is not the symbol's name (the alias
             in `x as y` and uses of y); entries inside comments (ts.isInComment: JSDoc
             {@link X}); entries in files outside ROOT (lib.*.d.ts).
sample       judge_common.sample, seed 20240611, quota per kind class 25, interface 15, type
             10, function 45, method 40, variable 15 (= 150), within a kind half "popular",
             half "rare" by how many identifier tokens (ts.createScanner) in the project spell
             the name; a kind with too few candidates gives its shortfall to a random draw
             over the other candidates. Dunder names and names under 3 characters skipped.
imports      for every file, ts.preProcessFile(text, readImportFiles=true,
             detectJavaScriptImports=true).importedFiles (import/export ... from, import
             type, import(), require(), import x = require()) resolved with
             ts.resolveModuleName(spec, file, options, ts.sys); an edge file -> resolved file
             when the resolved file is under ROOT (and is not the file itself). Specifiers
             that resolve outside ROOT or not at all are listed in "imports_external" /
             "imports_unresolved" (not edges). Triple-slash references not included.
             "import_files" = every program file (all have import truth).
"""
import json
import os
import subprocess
import sys
from collections import Counter

from judge_common import SEED, dump, sample

QUOTA = {"class": 25, "interface": 15, "type": 10, "function": 45, "method": 40, "variable": 15}

HERE = os.path.dirname(os.path.abspath(__file__))
BASE = os.path.realpath(os.path.join(HERE, "..", "..", "target", "code-eval"))
LS = os.path.join(HERE, "judge_typescript_ls.js")


def node(cmd, root, stdin=None):
    env = dict(os.environ, NODE_PATH=os.path.join(BASE, "node", "node_modules"))
    r = subprocess.run(["node", LS, cmd, root], input=stdin, capture_output=True, text=True,
                       env=env, check=True)
    return json.loads(r.stdout)


def main():
    project, root_name, split, fetch = sys.argv[1:5]
    root = os.path.join(BASE, "src", root_name)
    scan = node("scan", root)
    defs = scan["definitions"]
    counts = scan["counts"]
    chosen = sample(defs, counts, QUOTA)
    refs = node("refs", root, json.dumps([d for d, _ in chosen]))
    references = []
    dropped = Counter()
    for (d, stratum), rs in zip(chosen, refs):
        references.append({
            "symbol": {"name": d["name"], "qualified_name": d["qualified_name"],
                       "kind": d["kind"], "path": d["path"], "line": d["line"],
                       "stratum": stratum, "name_tokens": counts.get(d["name"], 0)},
            "refs": rs["refs"],
        })
        for k, v in rs["dropped"].items():
            dropped[k] += v
    out = {
        "project": project,
        "language": "typescript",
        "split": split,
        "fetch": fetch,
        "root": root_name,
        "generator": {"script": "benches/code/judge_typescript.py", "typescript": scan["typescript"],
                      "compiler_options": scan["options"], "seed": SEED,
                      "definition_kinds": ["class", "enum", "function", "interface", "method",
                                           "namespace", "type", "variable"],
                      "syntactic_errors": scan["syntactic_errors"],
                      "references_dropped": dict(sorted(dropped.items()))},
        "files": scan["files"],
        "definitions": defs,
        "references": references,
        "import_files": scan["files"],
        "imports": scan["imports"]["edges"],
        "imports_unresolved": scan["imports"]["unresolved"],
        "imports_external": scan["imports"]["external"],
    }
    with open(os.path.join(HERE, project + ".json"), "w") as f:
        f.write(dump(out))
    kinds = Counter(d["kind"] for d in defs)
    print(f"{project}: {len(scan['files'])} files, {len(defs)} definitions {dict(kinds)}, "
          f"{len(references)} sampled symbols, {sum(len(r['refs']) for r in references)} refs, "
          f"{len(out['imports'])} import edges, {len(out['imports_unresolved'])} unresolved and "
          f"{len(out['imports_external'])} external specifiers")


if __name__ == "__main__":
    main()
