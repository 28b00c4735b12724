#!/usr/bin/env python3
"""Ground truth for docdex's code intelligence on a Go project, from the Go toolchain's own
type checker (go/parser + go/build + go/types, Go 1.19 from Debian's golang-go), driven
through judge_go.go.

Usage (after fetch.sh):
  python3 benches/code/judge_go.py PROJECT ROOT IMPORT_PATH SPLIT FETCH
  e.g. ... judge_go.py goldmark-1.5.4 goldmark-1.5.4 github.com/yuin/goldmark tune "..."
Writes benches/code/PROJECT.json. Deterministic (fixed seed, sorted output). Needs `go`
(apt-get install golang-go); runs offline: the project is copied into a throwaway GOPATH
(GO111MODULE=off) so go/build's source importer finds its packages by import path.

Files: every *.go file under target/code-eval/src/ROOT in a directory the go tool would read
(testdata and dot-directories skipped; _underscore directories kept) that matches the default
build context (GOOS linux, GOARCH amd64, no extra tags; tests included); the others are
listed in "files_excluded_by_build_constraints" and have no truth. Each directory is
type-checked as two units: the package with its in-package _test.go files, and its external
test package (package x_test) when there is one. Lines 1-based; columns 1-based in characters
(go/token's byte columns converted).

definitions  every package-level declaration in the AST (go/ast): FuncDecl without receiver
             -> "function", with receiver -> "method"; TypeSpec -> "struct", "interface"
             (by the type's literal) or "type"; ValueSpec names -> "variable" (var) or
             "constant" (const). Blank identifiers skipped. Not included: struct fields,
             interface methods, locals, parameters. line/column = the declared name;
             qualified_name = package name + "." + (receiver type name + ".") + name.
references   for a sample of the definitions (below): every identifier whose
             types.Info.Uses object is the definition's object, over every unit, the object
             identified by its declaration position (objects reached through the source
             importer are separate instances of the same declaration). Go's type checker
             resolves a call through an interface to the interface method, not to the
             implementing methods: such calls are not references of the concrete method
             (what gopls' references reports for the concrete method, too). Uses never hold
             the declaring identifier, so the definition site is absent by construction.
sample       judge_common.sample, seed 20240611, quota per kind struct 25, interface 15,
             type 10, function 40, method 45, variable 8, constant 7 (= 150), within a kind
             half "popular", half "rare" by how many IDENT tokens (go/scanner) in the project
             spell the name. Names under 3 characters skipped.
imports      Go imports packages (directories), not files: "imports_granularity" is
             "package" and an edge is {"from": file, "to": directory of the imported package
             relative to ROOT, "." for ROOT itself}, for every import spec (ast.File.Imports)
             whose path is the project's import path or below it. score.py compares a file's
             docdex imports as the set of their directories (a returned path that is a
             directory stays as is, a file becomes its directory), and imported_by as files
             (a file is imported by every file that imports its directory).
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections import Counter

from judge_common import SEED, dump, sample

QUOTA = {"struct": 25, "interface": 15, "type": 10, "function": 40, "method": 45,
         "variable": 8, "constant": 7}

HERE = os.path.dirname(os.path.abspath(__file__))
BASE = os.path.realpath(os.path.join(HERE, "..", "..", "target", "code-eval"))


def main():
    project, root_name, import_path, split, fetch = sys.argv[1:6]
    root = os.path.join(BASE, "src", root_name)
    with tempfile.TemporaryDirectory() as gopath:
        dst = os.path.join(gopath, "src", *import_path.split("/"))
        shutil.copytree(root, dst, symlinks=True)
        env = dict(os.environ, GO111MODULE="off", GOPATH=gopath, GOFLAGS="",
                   GOCACHE=os.path.join(BASE, "gocache"), GOTOOLCHAIN="local")
        r = subprocess.run(["go", "run", os.path.join(HERE, "judge_go.go"), dst], env=env,
                           capture_output=True, text=True, cwd=gopath)
        if r.returncode != 0:
            sys.exit(r.stderr)
        scan = json.loads(r.stdout)
    defs = scan["definitions"]
    counts = scan["counts"]
    chosen = sample(defs, counts, QUOTA)
    references = []
    for d, stratum in chosen:
        uses = scan["uses"].get(f"{d['path']}:{d['line']}:{d['column']}", [])
        references.append({
            "symbol": {"name": d["name"], "qualified_name": d["qualified_name"],
                       "kind": d["kind"], "path": d["path"], "line": d["line"],
                       "stratum": stratum, "name_tokens": counts.get(d["name"], 0)},
            "refs": [{"path": u["path"], "line": u["line"], "column": u["column"]} for u in uses],
        })
    edges = sorted({(e["from"], e["to"]) for e in scan["imports"] or []})
    out = {
        "project": project,
        "language": "go",
        "split": split,
        "fetch": fetch,
        "root": root_name,
        "generator": {"script": "benches/code/judge_go.py", "go": scan["go"], "seed": SEED,
                      "import_path": import_path,
                      "definition_kinds": sorted(QUOTA),
                      "type_errors": scan["type_errors"] or [],
                      "units": scan["units"]},
        "files": scan["files"],
        "files_excluded_by_build_constraints": scan["files_excluded_by_build_constraints"] or [],
        "definitions": defs,
        "references": references,
        "imports_granularity": "package",
        "import_files": scan["files"],
        "imports": [{"from": a, "to": b} for a, b in edges],
    }
    with open(os.path.join(HERE, project + ".json"), "w") as f:
        f.write(dump(out))
    kinds = Counter(d["kind"] for d in defs)
    print(f"{project}: {len(scan['files'])} files, {len(defs)} definitions {dict(kinds)}, "
          f"{len(references)} sampled symbols, {sum(len(r['refs']) for r in references)} refs, "
          f"{len(edges)} file->package import edges, {len(scan['type_errors'] or [])} type errors, "
          f"{len(out['files_excluded_by_build_constraints'])} files excluded by build constraints")


if __name__ == "__main__":
    main()
