#!/usr/bin/env python3
"""Scores docdex's definitions in 11 languages against Universal Ctags' (judge.py).

Against a running daemon that serves the projects (target/defs-eval/src/<project>/):

    python3 benches/defs/score.py --split tune [--url URL --token TOKEN] [--misses 20]

Every definition docdex has is read with `GET /v1/symbols?repo=R&name=*&language=L`
(paged), kept when its file is of the project's language. A ctags definition is found when
docdex has a definition of the same name in the same file whose line span holds the line
ctags names (each docdex definition answers one ctags definition). Per class (judge.py):
  recall     ctags definitions found / ctags definitions
  precision  docdex definitions matched / docdex definitions of that class (callable, type,
             module, macro; ctags does not list every member kind docdex does, so member
             precision is shown but means less)
  kind       of those found, the share docdex puts in the same class
Tune on the `tune` projects; look at `test` only to report.
"""
import argparse
import json
import os
import re
import sys
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "code"))
from score import Client  # noqa: E402  (the code set's HTTP client: token, errors)

DEFAULT_SRC = os.path.join(HERE, "..", "..", "target", "defs-eval", "src")
CLASSES = ("callable", "type", "module", "macro", "member")
OUR_CLASS = {
    "function": "callable", "method": "callable", "constructor": "callable",
    "class": "type", "struct": "type", "enum": "type", "trait": "type", "interface": "type",
    "type": "type", "module": "module", "macro": "macro",
    "enum_member": "member", "field": "member", "property": "member", "constant": "member",
    "variable": "member",
}
# docdex's `language` of each project language.
LANGUAGE = {"java": "java", "kotlin": "kotlin", "c": "c", "cpp": "cpp", "csharp": "csharp",
            "ruby": "ruby", "php": "php", "lua": "lua", "bash": "bash", "elixir": "elixir",
            "haskell": "haskell"}


def same_class(language, ours, truth):
    if ours == truth:
        return True
    # An Elixir macro is called like a function; a C++ namespace-like type.
    return language == "elixir" and {ours, truth} == {"macro", "callable"}


def our_definitions(client, repo, language):
    out, offset = [], 0
    while True:
        ans = client.get("/v1/symbols", repo=repo, name="*", language=LANGUAGE[language],
                         limit=1000, offset=offset) or {}
        out.extend(ans.get("symbols", []))
        offset = ans.get("next_offset")
        if not offset:
            return out


def plain_name(language, name):
    """ctags names a Lua function by its whole path (`Date.Format:parse`, `M.util.f`);
    docdex by its own name with the table as its container."""
    if language == "lua":
        return re.split(r"[.:]", name)[-1]
    return name


def match(truth, ours):
    """Pairs each truth definition with the docdex definition of its name and file whose span
    holds its line, the tightest first; returns (pairs, unmatched truth, unmatched ours)."""
    by_key = {}
    for i, d in enumerate(ours):
        by_key.setdefault((d["path"], d["name"]), []).append(i)
    used, pairs, missed = set(), [], []
    for t in sorted(truth, key=lambda t: (t["path"], t["line"])):
        best = None
        for i in by_key.get((t["path"], t["name"]), []):
            d = ours[i]
            if i in used or not d["line"] <= t["line"] <= max(d["end_line"], d["line"]):
                continue
            span = (d["end_line"] - d["line"], abs(t["line"] - d["line"]))
            if best is None or span < best[0]:
                best = (span, i)
        if best is None:
            missed.append(t)
        else:
            used.add(best[1])
            pairs.append((t, ours[best[1]]))
    extra = [d for i, d in enumerate(ours) if i not in used]
    return pairs, missed, extra


def score(d, ours):
    language = d["language"]
    truth = [dict(t, name=plain_name(language, t["name"])) for t in d["definitions"]]
    files = set(d["files"])
    # Only files ctags read (a file with no definition at all is not judged either way).
    ours = [o for o in ours if o["path"] in files]
    pairs, missed, extra = match(truth, ours)
    row = {}
    for c in CLASSES:
        t_all = sum(1 for t in truth if t["class"] == c)
        t_found = sum(1 for t, _ in pairs if t["class"] == c)
        o_all = sum(1 for o in ours if OUR_CLASS.get(o["kind"]) == c)
        o_matched = sum(1 for _, o in pairs if OUR_CLASS.get(o["kind"]) == c)
        agree = sum(1 for t, o in pairs if t["class"] == c and same_class(language, OUR_CLASS.get(o["kind"]), c))
        row[c] = {"truth": t_all, "found": t_found, "ours": o_all, "matched": o_matched, "agree": agree}
    return row, missed, extra


def ratio(a, b):
    return f"{a / b:.3f}" if b else "  -  "


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--split", choices=["tune", "test", "all"], default="tune")
    ap.add_argument("--url", default=os.environ.get("DOCDEX_URL", "http://127.0.0.1:3210"))
    ap.add_argument("--token", default=os.environ.get("DOCDEX_TOKEN"))
    ap.add_argument("--src", default=DEFAULT_SRC)
    ap.add_argument("--project", action="append", default=[])
    ap.add_argument("--misses", type=int, default=0, help="print this many misses and extras a project")
    ap.add_argument("--json", help="write the counts to this file")
    args = ap.parse_args(argv)

    judged = []
    for f in sorted(os.listdir(HERE)):
        if f.endswith(".json"):
            with open(os.path.join(HERE, f)) as fh:
                d = json.load(fh)
            if (args.split == "all" or d["split"] == args.split) and (not args.project or d["project"] in args.project):
                judged.append(d)
    if not judged:
        sys.exit(f"no judged project for split {args.split!r}: run benches/defs/judge.py")
    client = Client(args.url, args.token)
    results = {}
    print(f"{'project':34} {'lang':7} {'split':5} {'defs':>6}  recall: callable type   module macro  member"
          f" | precision: callable type   module macro | kind agrees")
    for d in judged:
        repo = os.path.realpath(os.path.join(args.src, d["project"]))
        if not os.path.isdir(repo):
            sys.exit(f"{repo} is missing: run benches/defs/fetch.sh")
        ours = our_definitions(client, repo, d["language"])
        row, missed, extra = score(d, ours)
        results[d["project"]] = {"language": d["language"], "split": d["split"], "classes": row}
        rec = " ".join(f"{ratio(row[c]['found'], row[c]['truth']):6}" for c in CLASSES)
        pre = " ".join(f"{ratio(row[c]['matched'], row[c]['ours']):6}" for c in CLASSES[:4])
        found = sum(r["found"] for r in row.values())
        agree = sum(r["agree"] for r in row.values())
        print(f"{d['project']:34} {d['language']:7} {d['split']:5} {len(d['definitions']):6}  recall: {rec} |"
              f" precision: {pre} | {ratio(agree, found)}")
        if args.misses:
            for t in missed[: args.misses]:
                print(f"    missed {t['class']:8} {t['kind']:14} {t['path']}:{t['line']} {t['name']}  [{t['scope']}]")
            judged_classes = ("callable", "type", "module", "macro")
            shown = [o for o in extra if OUR_CLASS.get(o["kind"]) in judged_classes]
            for o in shown[: args.misses]:
                print(f"    extra  {o['kind']:14} {o['path']}:{o['line']}-{o['end_line']} {o['name']}  [{o['container']}]")
    totals = {c: {k: sum(r["classes"][c][k] for r in results.values()) for k in ("truth", "found", "ours", "matched", "agree")}
              for c in CLASSES}
    print("overall recall " + " ".join(f"{c} {ratio(totals[c]['found'], totals[c]['truth'])}" for c in CLASSES)
          + " | precision " + " ".join(f"{c} {ratio(totals[c]['matched'], totals[c]['ours'])}" for c in CLASSES[:4]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
