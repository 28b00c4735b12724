#!/usr/bin/env python3
"""Prints N random entries of a judged file next to the source lines they point at, and
checks mechanically that each definition's and reference's name is spelled at its
line (and column, 1-based, when given). Usage: spotcheck.py benches/code/X.json [N] [SEED]"""
import json
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
data = json.load(open(sys.argv[1]))
n = int(sys.argv[2]) if len(sys.argv) > 2 else 10
rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 1)
root = os.path.join(HERE, "..", "..", "target", "code-eval", "src", data["root"])
cache = {}


def line(path, ln):
    if path not in cache:
        cache[path] = open(os.path.join(root, path), encoding="utf-8").read().split("\n")
    return cache[path][ln - 1]


def at(path, ln, col, name):
    text = line(path, ln)
    if col is None:
        return name in text
    return text[col - 1:col - 1 + len(name)] == name


bad = 0
for d in data["definitions"]:
    if not at(d["path"], d["line"], d.get("column"), d["name"]):
        bad += 1
        print("BAD DEF", d)
nref = 0
for r in data["references"]:
    s = r["symbol"]
    if not at(s["path"], s["line"], None, s["name"]):
        bad += 1
        print("BAD SYM", s)
    for x in r["refs"]:
        nref += 1
        if not at(x["path"], x["line"], x["column"], s["name"]):
            bad += 1
            print("BAD REF", s["name"], x, repr(line(x["path"], x["line"])))
print(f"mechanical check: {len(data['definitions'])} defs, {nref} refs, {bad} mismatches")

print("\n-- random definitions")
for d in rng.sample(data["definitions"], n):
    print(f"{d['kind']:8} {d['qualified_name']}  {d['path']}:{d['line']}:{d.get('column')}")
    print("    |", line(d["path"], d["line"]))
print("\n-- random references")
pairs = [(r["symbol"], x) for r in data["references"] for x in r["refs"]]
for s, x in rng.sample(pairs, min(n, len(pairs))):
    print(f"{s['name']} ({s['path']}:{s['line']}) <- {x['path']}:{x['line']}:{x['column']}")
    print("    |", line(x["path"], x["line"]))
print("\n-- random import edges")
for e in rng.sample(data["imports"], min(n, len(data["imports"]))):
    print(f"{e['from']} -> {e['to']}")
