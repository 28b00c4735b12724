#!/usr/bin/env python3
"""Ground truth for definitions in 11 languages, made by Universal Ctags (not by docdex).

For each project of projects.tsv (fetched by fetch.sh into target/defs-eval/src/<project>/),
runs

    ctags --output-format=json --fields=+nKs --extras=-F --languages=<L> --kinds-<L>=<K> -R -f - .

in the project's root and writes <project>.json beside this script: every definition ctags
reports of the kinds below, with its name, ctags kind, comparison class, path (relative, `/`),
1-based line (the line ctags names, where the name is spelled) and scope.

Kinds kept per language (ctags' own letters; its defaults minus locals, parameters,
prototypes, includes and labels) and the class each is compared in:
  callable  functions, methods, Elixir macros/delegates/guards, Ruby singleton methods
  type      classes, structs, unions, enums, interfaces, traits, typedefs, type aliases,
            Kotlin objects, Java annotations, Elixir protocols/exceptions/records/types
  module    namespaces, modules (Ruby, Elixir, Haskell)
  member    fields, properties, enum constants, C struct members, constants, globals
  macro     C/C++ #define
Left out everywhere: lambdas (ctags' `<lambda>`), the names ctags makes up for nameless
structs and enums (`__anon…`) and whatever ctags scopes inside a function
or method (locals). Ruby's `attr_accessor :x` is one accessor `x` (ctags adds `x=`).
Haskell: the equations of one function are one definition (its first), and modules are left
out (ctags 5.9 cuts a module's name at its first dot).
Nothing is hand-edited: run `python3 benches/defs/judge.py` again to regenerate.
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SRC = os.path.join(ROOT, "target", "defs-eval", "src")

# language -> (ctags language, {kind letter: class})
KINDS = {
    "java": ("Java", {"c": "type", "i": "type", "g": "type", "a": "type", "m": "callable",
                      "f": "member", "e": "member"}),
    "kotlin": ("Kotlin", {"c": "type", "i": "type", "o": "type", "T": "type", "m": "callable",
                          "C": "member", "v": "member"}),
    "c": ("C", {"f": "callable", "s": "type", "u": "type", "g": "type", "t": "type",
                "d": "macro", "e": "member", "m": "member", "v": "member"}),
    "cpp": ("C++", {"f": "callable", "c": "type", "s": "type", "u": "type", "g": "type",
                    "t": "type", "n": "module", "d": "macro", "e": "member", "m": "member",
                    "v": "member"}),
    "csharp": ("C#", {"c": "type", "s": "type", "i": "type", "g": "type", "t": "type",
                      "m": "callable", "n": "module", "f": "member", "p": "member",
                      "e": "member", "E": "member"}),
    "ruby": ("Ruby", {"c": "type", "m": "module", "f": "callable", "S": "callable",
                      "C": "member", "A": "member"}),
    "php": ("PHP", {"c": "type", "i": "type", "t": "type", "f": "callable", "n": "module",
                    "d": "member"}),
    "lua": ("Lua", {"f": "callable"}),
    "bash": ("Sh", {"f": "callable"}),
    "elixir": ("Elixir", {"m": "module", "p": "type", "i": "module", "e": "type", "r": "type",
                          "y": "type", "f": "callable", "a": "callable", "d": "callable",
                          "g": "callable"}),
    "haskell": ("Haskell", {"f": "callable", "t": "type", "c": "member", "m": "module"}),
}


# ctags scope kinds that are functions: what they hold is local to them.
CALLABLE_SCOPES = {"function", "method", "singletonMethod", "macro", "prototype", "callback"}


def ctags_version():
    out = subprocess.run(["ctags", "--version"], capture_output=True, text=True, check=True).stdout
    return out.splitlines()[0]


def judge(project, language, split, source):
    root = os.path.join(SRC, project)
    if not os.path.isdir(root):
        sys.exit(f"{root} is missing: run benches/defs/fetch.sh first")
    ctags_lang, kinds = KINDS[language]
    argv = ["ctags", "--output-format=json", "--fields=+nKsZ", "--extras=-F",
            f"--languages={ctags_lang}", f"--kinds-{ctags_lang}={''.join(sorted(kinds))}",
            "-R", "-f", "-", "."]
    if language == "c":
        # ctags reads `.h` as C++ unless told; these projects' headers are C.
        argv.insert(3, "--langmap=C:+.h")
    out = subprocess.run(argv, cwd=root, capture_output=True, text=True, check=True).stdout
    definitions, files = [], set()
    letters = {}
    kinds_out = subprocess.run(["ctags", f"--list-kinds-full={ctags_lang}"], capture_output=True,
                               text=True, check=True).stdout.splitlines()[1:]
    for line in kinds_out:
        letter, name = line.split()[:2]
        letters[name] = letter
    for line in out.splitlines():
        tag = json.loads(line)
        if tag.get("_type") != "tag":
            continue
        letter = letters.get(tag.get("kind"), tag.get("kind"))
        if letter not in kinds:
            continue
        name = tag["name"]
        if name.startswith(("<", "__anon")) or tag.get("scopeKind", "") in CALLABLE_SCOPES:
            # A lambda, or anything defined inside a function: a local, not a definition
            # another file can name.
            continue
        if language == "ruby" and tag["kind"] == "accessor":
            # `attr_accessor :name` is listed as `name` and `name=`: one accessor.
            if name.endswith("="):
                continue
        path = tag["path"].removeprefix("./")
        files.add(path)
        scope = tag.get("scope", "")
        definitions.append({"name": name, "kind": tag["kind"], "class": kinds[letter],
                            "path": path, "line": tag["line"], "scope": scope})
    definitions.sort(key=lambda d: (d["path"], d["line"], d["name"]))
    if language == "haskell":
        # ctags lists every equation of a function (`f [] = …`, `f (x:xs) = …`): one
        # function, defined where its first equation is. And it cuts a module's name at its
        # first dot (`module Distribution.Simple` is `Distribution`): modules are left out.
        kept = []
        for d in definitions:
            prev = kept[-1] if kept else None
            if d["kind"] == "module":
                continue
            if prev and prev["path"] == d["path"] and prev["name"] == d["name"] and prev["kind"] == d["kind"] == "function":
                continue
            kept.append(d)
        definitions = kept
    return {
        "project": project, "language": language, "split": split, "source": source,
        "generator": {"tool": ctags_version(), "argv": argv[:-1] + ["<project root>"]},
        "files": sorted(files), "definitions": definitions,
    }


def projects():
    with open(os.path.join(HERE, "projects.tsv")) as f:
        for line in f:
            if line.startswith("#") or not line.strip() or line.startswith("project\t"):
                continue
            yield line.rstrip("\n").split("\t")[:4]


def main():
    wanted = set(sys.argv[1:])
    for project, language, split, source in projects():
        if wanted and project not in wanted:
            continue
        data = judge(project, language, split, source)
        with open(os.path.join(HERE, f"{project}.json"), "w") as f:
            json.dump(data, f, indent=0, sort_keys=True)
            f.write("\n")
        print(f"{project:40} {language:8} {split:5} files {len(data['files']):4} "
              f"definitions {len(data['definitions']):6}")


if __name__ == "__main__":
    main()
