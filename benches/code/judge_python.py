#!/usr/bin/env python3
"""Ground truth for docdex's code intelligence on a Python project, from jedi and grimp.

Usage (with the venv fetch.sh made):
  target/code-eval/venv/bin/python benches/code/judge_python.py PROJECT ROOT SPLIT FETCH
  e.g. ... judge_python.py httpx-0.28.1 httpx-0.28.1 test "pip download --no-deps --no-binary :all: httpx==0.28.1"
Writes benches/code/PROJECT.json. Deterministic: same sources + same tool versions give the
same file (fixed seed, sorted output). Tools: jedi 0.20.1 (parso 0.8.7), grimp 3.20.

Files: every *.py under target/code-eval/src/ROOT (nothing skipped), paths relative to ROOT
with "/". Lines and columns are 1-based; a column counts characters (code points), as parso's
0-based column + 1.

definitions  jedi.Script(path, project=jedi.Project(ROOT)).get_names(all_scopes=True,
             definitions=True, references=False) for every file, keeping a name whose
             tree_name.get_definition() is
               - a funcdef whose name is this name: kind "method" when the enclosing scope is
                 a class, else "function" (nested functions included; each @overload and each
                 conditional variant is its own entry);
               - a classdef: kind "class";
               - an expr_stmt (assignment, annotated or augmented) at module scope: kind
                 "variable" (module-level constants/variables; every assigned name, each
                 assignment site once: a name assigned twice has two entries).
             Not included: class attributes, instance attributes, parameters, loop/with/except
             targets, imports, lambdas, names bound in comprehensions.
             line = the line of the name token (the `def`/`class` line, not a decorator's);
             qualified_name = jedi's full_name (module path + scopes, e.g.
             "httpx._client.Client.send"), or module + name when jedi gives none.
references   for a sample of the definitions (below): Script.get_references(line, column,
             scope="project", include_builtins=False) at the definition's name. Kept: every
             returned name in a file under ROOT, except the definition site itself (same path,
             line, column). Import statements that name the symbol (`from ._models import
             Request`) and re-assignments jedi ties to it are kept: they are references.
             Each ref also carries "is_definition" (jedi's Name.is_definition()) for analysis.
             jedi follows imports and re-exports; what it cannot infer (dynamic attribute
             access, untyped parameters) is missed, so recall against this truth is an upper
             estimate of the true recall.
sample       judge_common.sample, seed 20240611, quota per kind class 35, function 40,
             method 55, variable 20 (= 150): within a kind half "popular", half "rare" by how
             many NAME tokens (tokenize) in the project spell the name, split at the kind's
             median; dunder names and names under 3 characters never sampled.
imports      grimp.build_graph(*top_level_packages, include_external_packages=False,
             cache_dir=None) with ROOT on sys.path; top-level packages are the directories
             directly under ROOT that hold an __init__.py. For every module m and every
             module n in graph.find_modules_directly_imported_by(m): an edge file(m) ->
             file(n), where file(x) is x's path as x.py or x/__init__.py. grimp records
             `import a.b` as a.b, `from a.b import c` as a.b.c when c is a submodule and as
             a.b when c is a name; relative imports resolved; imports inside functions and
             under `if TYPE_CHECKING:` included. Only edges between project files (external
             packages dropped by grimp). "import_files" lists the files grimp analysed (those
             inside the packages); a .py file outside every package (none in the chosen
             projects, see the count in the output) has no import truth.
"""
import json
import os
import sys
import tokenize
from collections import Counter

import grimp
import jedi

from judge_common import SEED, dump, sample

QUOTA = {"class": 35, "function": 40, "method": 55, "variable": 20}

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, "..", "..", "target", "code-eval", "src")


def rel(root, p):
    return os.path.relpath(str(p), root).replace(os.sep, "/")


def py_files(root):
    out = []
    for d, dirs, files in os.walk(root):
        dirs.sort()
        for f in sorted(files):
            if f.endswith(".py"):
                out.append(os.path.join(d, f))
    return sorted(out)


def module_of(root, path):
    r = rel(root, path)[:-3].split("/")
    if r[-1] == "__init__":
        r = r[:-1]
    return ".".join(r)


def definitions(root, project, files):
    defs = []
    for path in files:
        script = jedi.Script(path=path, project=project)
        for n in script.get_names(all_scopes=True, definitions=True, references=False):
            tn = n._name.tree_name
            if tn is None:
                continue
            d = tn.get_definition()
            if d is None:
                continue
            kind = None
            if d.type == "funcdef" and d.name is tn:
                scope = d.parent
                while scope.type not in ("classdef", "funcdef", "file_input"):
                    scope = scope.parent
                kind = "method" if scope.type == "classdef" else "function"
            elif d.type == "classdef" and d.name is tn:
                kind = "class"
            elif d.type == "expr_stmt":
                scope = d.parent
                while scope.type not in ("classdef", "funcdef", "file_input", "lambdef"):
                    scope = scope.parent
                if scope.type == "file_input":
                    kind = "variable"
            if kind is None:
                continue
            qn = n.full_name or (module_of(root, path) + "." + n.name)
            defs.append({
                "name": n.name,
                "qualified_name": qn,
                "kind": kind,
                "path": rel(root, path),
                "line": n.line,
                "column": n.column + 1,
            })
    defs.sort(key=lambda x: (x["path"], x["line"], x["column"], x["name"]))
    return defs


def token_counts(files):
    c = Counter()
    for path in files:
        with open(path, "rb") as f:
            try:
                for tok in tokenize.tokenize(f.readline):
                    if tok.type == tokenize.NAME:
                        c[tok.string] += 1
            except (tokenize.TokenError, SyntaxError):
                pass
    return c


def references(root, project, chosen, counts):
    out = []
    for d, stratum in chosen:
        script = jedi.Script(path=os.path.join(root, d["path"]), project=project)
        refs = set()
        for r in script.get_references(d["line"], d["column"] - 1, scope="project",
                                       include_builtins=False):
            if r.module_path is None:
                continue
            p = os.path.realpath(str(r.module_path))
            if not p.startswith(os.path.realpath(root) + os.sep):
                continue
            rp = rel(os.path.realpath(root), p)
            if rp == d["path"] and r.line == d["line"] and r.column + 1 == d["column"]:
                continue
            refs.add((rp, r.line, r.column + 1, bool(r.is_definition())))
        out.append({
            "symbol": {"name": d["name"], "qualified_name": d["qualified_name"],
                       "kind": d["kind"], "path": d["path"], "line": d["line"],
                       "stratum": stratum, "name_tokens": counts[d["name"]]},
            "refs": [{"path": p, "line": l, "column": c, "is_definition": isdef}
                     for p, l, c, isdef in sorted(refs)],
        })
    return out


def imports(root, files):
    pkgs = sorted(e for e in os.listdir(root)
                  if os.path.isfile(os.path.join(root, e, "__init__.py")))
    sys.path.insert(0, root)
    graph = grimp.build_graph(*pkgs, include_external_packages=False, cache_dir=None)

    def file_of(m):
        base = os.path.join(root, *m.split("."))
        if os.path.isfile(base + ".py"):
            return rel(root, base + ".py")
        if os.path.isfile(os.path.join(base, "__init__.py")):
            return rel(root, os.path.join(base, "__init__.py"))
        return None

    edges = set()
    covered = set()
    for m in graph.modules:
        f = file_of(m)
        if f is None:
            continue
        covered.add(f)
        for n in graph.find_modules_directly_imported_by(m):
            t = file_of(n)
            if t is not None and t != f:
                edges.add((f, t))
    uncovered = sorted(set(rel(root, p) for p in files) - covered)
    return pkgs, sorted(covered), uncovered, [{"from": a, "to": b} for a, b in sorted(edges)]


def main():
    project, root_name, split, fetch = sys.argv[1:5]
    root = os.path.realpath(os.path.join(SRC, root_name))
    files = py_files(root)
    project_obj = jedi.Project(root)
    defs = definitions(root, project_obj, files)
    counts = token_counts(files)
    chosen = sample(defs, counts, QUOTA)
    refs = references(root, project_obj, chosen, counts)
    pkgs, covered, uncovered, edges = imports(root, files)
    out = {
        "project": project,
        "language": "python",
        "split": split,
        "fetch": fetch,
        "root": root_name,
        "generator": {"script": "benches/code/judge_python.py", "jedi": jedi.__version__,
                      "grimp": getattr(grimp, "__version__", "3.20"), "seed": SEED,
                      "definition_kinds": sorted(QUOTA), "packages": pkgs},
        "files": [rel(root, p) for p in files],
        "definitions": defs,
        "references": refs,
        "import_files": covered,
        "import_files_uncovered": uncovered,
        "imports": edges,
    }
    dst = os.path.join(HERE, project + ".json")
    with open(dst, "w") as f:
        f.write(dump(out))
    kinds = Counter(d["kind"] for d in defs)
    print(f"{project}: {len(files)} files, {len(defs)} definitions {dict(kinds)}, "
          f"{len(refs)} sampled symbols, {sum(len(r['refs']) for r in refs)} refs, "
          f"{len(edges)} import edges over {len(covered)} files "
          f"({len(uncovered)} .py files without import truth)")


if __name__ == "__main__":
    main()
