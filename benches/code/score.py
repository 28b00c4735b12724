#!/usr/bin/env python3
"""Scores a running docdex daemon's code intelligence against the judged set in benches/code.

Usage:
  python3 benches/code/score.py [--split tune|test|all] [--url URL] [--token TOKEN]
                                [--src DIR] [--project NAME]... [--json] [--out FILE]
  URL defaults to $DOCDEX_URL or http://127.0.0.1:3210; TOKEN to $DOCDEX_TOKEN (sent as
  `Authorization: Bearer TOKEN` when set). Each project's repo R is the absolute (real) path
  of DIR/<root>, DIR defaulting to target/code-eval/src (what fetch.sh fills); the repos
  must already be indexed. Standard library only.

Endpoints used (the contract):
  GET /v1/symbols?repo=R&name=NAME&limit=1000
      -> {"symbols": [{"name","qualified_name","kind","path","line",...}]}
  GET /v1/references?repo=R&name=NAME&path=P&line=L&limit=1000[&offset=K]
      -> {"symbol": {...}, "references": [{"path","line","column","kind","confidence",
          "resolution"}], "total": int, "next_offset": int|null}  (paged while next_offset)
  GET /v1/graph/impact?repo=R&file=F
      -> {"file", "imports": [{"path","confidence"}], "imported_by": [...], "unresolved": [...]}
  A 404 answer counts as an empty answer, except the error codes repo_not_found,
  repo_not_indexed and not_found (unknown route), which abort like any other error. A 400
  about `limit` (a daemon capping it) retries with 200, then 100, then 50.

Metrics (micro-averaged within a project, and over all chosen projects for "overall"):
  definitions  found = the fraction of truth definitions for which /v1/symbols?name=<name>
               returns an entry with the same path and a line in [line-1, line+1] (the
               tolerance absorbs decorators and doc comments counted into a definition's
               start). Reported overall and per truth kind.
  references   for each sampled symbol, docdex's references (every page) and the truth's refs
               are each reduced to a set of (path, line): column is ignored, so several
               references on one line count once. TP = |docdex & truth|, FP = |docdex - truth|,
               FN = |truth - docdex|, summed over the symbols; precision, recall, F1 from the
               sums. A reference without "confidence" counts as confidence 1.0. F1 is also
               given with only the references of confidence >= 0.5 and >= 0.8. Per
               "resolution" value: how many (path, line) docdex returned with it and the
               precision among them (a line returned under two resolutions counts under
               each). Also P/R/F1 per truth kind of the symbol and per stratum (popular/rare),
               and how many symbols docdex answered with no references at all.
  imports      for each file in the truth's "import_files", the paths in docdex's "imports"
               against the truth's edges from that file (sets of paths); TP/FP/FN summed over
               files. "imported_by" is scored the same way against the truth's edges into
               the file. Go truth ("imports_granularity": "package") has file -> directory
               edges: docdex's imports are compared as directories (a returned path that is
               one of the project's files becomes its directory, "." for the root; any other
               path is taken as a directory), imported_by as files (a file is imported by
               every file importing its directory).
Paths docdex returns are normalised: "\\" -> "/", a leading "./" dropped, an absolute path
under R made relative to R.
"""
import argparse
import json
import os
import sys
import urllib.error
import urllib.parse
import urllib.request
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_SRC = os.path.join(HERE, "..", "..", "target", "code-eval", "src")
LIMIT = 1000
THRESHOLDS = (0.0, 0.5, 0.8)
FATAL_404 = {"repo_not_found", "repo_not_indexed", "not_found"}  # not_found: unknown route


class Client:
    def __init__(self, url, token=None, timeout=120):
        self.url = url.rstrip("/")
        self.token = token
        self.timeout = timeout
        self.requests = 0
        self.limits = {}

    def get(self, route, allow_not_found=False, **params):
        """GET route?params as JSON. A 404 whose error code is about the symbol or file asked
        for is an empty answer (None); one about the repo or the route aborts. A 400 that
        names `limit` retries with the next smaller limit (1000 -> 200 -> 100 -> 50); the
        limit that worked is kept for the route (answers are then paged, or capped for
        /v1/symbols, which has no paging)."""
        if "limit" in params and route in self.limits:
            params["limit"] = self.limits[route]
        q = urllib.parse.urlencode({k: v for k, v in params.items() if v is not None})
        req = urllib.request.Request(f"{self.url}{route}?{q}")
        if self.token:
            req.add_header("Authorization", f"Bearer {self.token}")
        self.requests += 1
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as r:
                return json.loads(r.read().decode("utf-8"))
        except urllib.error.HTTPError as e:
            body = e.read().decode("utf-8", "replace")
            try:
                err = json.loads(body).get("error") or {}
                code, msg = err.get("code", ""), err.get("message", "")
            except (ValueError, AttributeError):
                code, msg = "", body
            if e.code == 404 and (code not in FATAL_404 or (allow_not_found and code == "not_found")):
                return None
            if e.code == 400 and "limit" in params and "limit" in (msg + code).lower():
                smaller = [x for x in (200, 100, 50) if x < int(params["limit"])]
                if smaller:
                    self.limits[route] = smaller[0]
                    return self.get(route, allow_not_found=allow_not_found, **params)
            raise RuntimeError(f"GET {route}?{q}: HTTP {e.code}: {body[:300]}") from None


def norm_path(p, repo):
    if p is None:
        return None
    p = str(p).replace("\\", "/")
    if os.path.isabs(p):
        r = os.path.relpath(p, repo).replace("\\", "/")
        if not r.startswith("../"):
            p = r
    while p.startswith("./"):
        p = p[2:]
    return p


def prf(tp, fp, fn):
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return {"precision": p, "recall": r, "f1": f, "tp": tp, "fp": fp, "fn": fn}


class Counts:
    """TP/FP/FN sums under named keys."""

    def __init__(self):
        self.c = defaultdict(lambda: [0, 0, 0])

    def add(self, key, tp, fp, fn):
        x = self.c[key]
        x[0] += tp
        x[1] += fp
        x[2] += fn

    def merge(self, other):
        for k, (tp, fp, fn) in other.c.items():
            self.add(k, tp, fp, fn)

    def report(self, key):
        return prf(*self.c[key]) if key in self.c else prf(0, 0, 0)

    def keys(self, prefix):
        return sorted(k[len(prefix):] for k in self.c if k.startswith(prefix))


def score_definitions(client, repo, data, st):
    cache = {}
    for d in data["definitions"]:
        name = d["name"]
        if name not in cache:
            ans = client.get("/v1/symbols", repo=repo, name=name, limit=LIMIT) or {}
            cache[name] = [(norm_path(s.get("path"), repo), s.get("line"))
                           for s in ans.get("symbols") or []]
        ok = any(p == d["path"] and isinstance(l, int) and abs(l - d["line"]) <= 1
                 for p, l in cache[name])
        for key in ("all", "kind:" + d["kind"]):
            st["found"][key][0] += int(ok)
            st["found"][key][1] += 1


def fetch_references(client, repo, sym, min_confidence=None):
    """The references docdex answers: with min_confidence=None, its default answer."""
    refs, offset, pages = [], None, 0
    while True:
        ans = client.get("/v1/references", repo=repo, name=sym["name"], path=sym["path"],
                         line=sym["line"], limit=LIMIT, offset=offset, min_confidence=min_confidence,
                         allow_not_found=True)  # a definition docdex lacks: nothing found
        if not ans:
            break
        refs += ans.get("references") or []
        nxt = ans.get("next_offset")
        pages += 1
        if nxt is None or pages >= 1000 or not ans.get("references"):
            break
        offset = nxt
    return refs


def score_references(client, repo, data, st):
    c = st["refs"]
    for entry in data["references"]:
        sym = entry["symbol"]
        truth = {(r["path"], r["line"]) for r in entry["refs"]}
        # The default answer is the headline; every use (min_confidence=0) gives the
        # thresholds.
        default = {(norm_path(r.get("path"), repo), r.get("line")) for r in fetch_references(client, repo, sym)}
        c.add("default", len(default & truth), len(default - truth), len(truth - default))
        got = fetch_references(client, repo, sym, min_confidence=0)
        if not default:
            st["empty_answers"] += 1
        best = {}  # (path, line) -> highest confidence
        by_res = defaultdict(set)
        for r in got:
            key = (norm_path(r.get("path"), repo), r.get("line"))
            conf = r.get("confidence")
            conf = 1.0 if conf is None else float(conf)
            best[key] = max(conf, best.get(key, -1.0))
            by_res[str(r.get("resolution"))].add(key)
        for t in THRESHOLDS:
            d = {k for k, v in best.items() if v >= t}
            tp, fp, fn = len(d & truth), len(d - truth), len(truth - d)
            c.add(f"conf>={t}", tp, fp, fn)
            if t == 0.0:
                c.add("kind:" + sym.get("kind", "?"), tp, fp, fn)
                c.add("stratum:" + sym.get("stratum", "?"), tp, fp, fn)
        for res, keys in by_res.items():
            c.add("resolution:" + res, len(keys & truth), len(keys - truth), 0)
        st["symbols"] += 1


def file_dir(p):
    d = p.rsplit("/", 1)[0] if "/" in p else ""
    return d or "."


def score_imports(client, repo, data, st):
    package = data.get("imports_granularity") == "package"
    known_files = set(data.get("files") or []) | set(data.get("files_excluded_by_build_constraints") or [])
    out_edges, in_edges = defaultdict(set), defaultdict(set)
    files = data.get("import_files") or sorted({e["from"] for e in data["imports"]} |
                                               {e["to"] for e in data["imports"]})
    for e in data["imports"]:
        out_edges[e["from"]].add(e["to"])
        if package:  # every file of the imported directory is imported by e["from"]
            for f in files:
                if file_dir(f) == e["to"]:
                    in_edges[f].add(e["from"])
        else:
            in_edges[e["to"]].add(e["from"])

    def as_target(p):
        if package:
            return file_dir(p) if p in known_files else (p.rstrip("/") or ".")
        return p

    for f in files:
        ans = client.get("/v1/graph/impact", repo=repo, file=f) or {}
        got_out = {as_target(norm_path(x.get("path"), repo)) for x in ans.get("imports") or []}
        got_in = {norm_path(x.get("path"), repo) for x in ans.get("imported_by") or []}
        for key, got, truth in (("imports", got_out, out_edges[f]),
                                ("imported_by", got_in, in_edges[f])):
            st["imports"].add(key, len(got & truth), len(got - truth), len(truth - got))


def new_stats():
    return {"found": defaultdict(lambda: [0, 0]), "refs": Counts(), "imports": Counts(),
            "symbols": 0, "empty_answers": 0}


def merge_stats(a, b):
    for k, (x, n) in b["found"].items():
        a["found"][k][0] += x
        a["found"][k][1] += n
    a["refs"].merge(b["refs"])
    a["imports"].merge(b["imports"])
    a["symbols"] += b["symbols"]
    a["empty_answers"] += b["empty_answers"]


def summarize(st):
    found = {k: {"found": x, "total": n, "rate": x / n if n else 0.0}
             for k, (x, n) in sorted(st["found"].items())}
    refs = st["refs"]
    res = {}
    for r in refs.keys("resolution:"):
        tp, fp, _ = refs.c["resolution:" + r]
        res[r] = {"returned": tp + fp, "correct": tp, "precision": tp / (tp + fp) if tp + fp else 0.0}
    return {
        "definitions": found.get("all", {"found": 0, "total": 0, "rate": 0.0}),
        "definitions_by_kind": {k[5:]: v for k, v in found.items() if k.startswith("kind:")},
        "references": refs.report("default"),
        "references_f1_at_confidence": {str(t): refs.report(f"conf>={t}")["f1"] for t in THRESHOLDS},
        "references_at_confidence": {str(t): refs.report(f"conf>={t}") for t in THRESHOLDS},
        "references_by_resolution": res,
        "references_by_kind": {k: refs.report("kind:" + k) for k in refs.keys("kind:")},
        "references_by_stratum": {k: refs.report("stratum:" + k) for k in refs.keys("stratum:")},
        "symbols": st["symbols"],
        "symbols_without_references": st["empty_answers"],
        "imports": st["imports"].report("imports"),
        "imported_by": st["imports"].report("imported_by"),
    }


def load_projects(data_dir, split, names):
    out = []
    for f in sorted(os.listdir(data_dir)):
        if not f.endswith(".json"):
            continue
        with open(os.path.join(data_dir, f)) as fh:
            d = json.load(fh)
        if not isinstance(d, dict) or "split" not in d or "definitions" not in d:
            continue
        if names and d["project"] not in names:
            continue
        if split != "all" and d["split"] != split:
            continue
        out.append(d)
    return out


def table(results):
    cols = ["project", "lang", "split", "defs", "def found", "syms", "ref P", "ref R", "ref F1",
            "F1@0", "F1@.5", "F1@.8", "imp P", "imp R", "imp F1"]
    rows = []
    for name, r in results.items():
        rows.append([
            name, r.get("language", ""), r.get("split", ""),
            str(r["definitions"]["total"]), f"{r['definitions']['rate']:.3f}", str(r["symbols"]),
            f"{r['references']['precision']:.3f}", f"{r['references']['recall']:.3f}",
            f"{r['references']['f1']:.3f}",
            f"{r['references_f1_at_confidence']['0.0']:.3f}",
            f"{r['references_f1_at_confidence']['0.5']:.3f}",
            f"{r['references_f1_at_confidence']['0.8']:.3f}",
            f"{r['imports']['precision']:.3f}", f"{r['imports']['recall']:.3f}",
            f"{r['imports']['f1']:.3f}",
        ])
    w = [max(len(c), *(len(x[i]) for x in rows)) for i, c in enumerate(cols)]
    lines = ["  ".join(c.ljust(w[i]) for i, c in enumerate(cols))]
    lines.append("  ".join("-" * x for x in w))
    for x in rows:
        lines.append("  ".join(v.ljust(w[i]) for i, v in enumerate(x)))
    lines.append("")
    for name, r in results.items():
        kinds = ", ".join(f"{k} {v['found']}/{v['total']}" for k, v in r["definitions_by_kind"].items())
        lines.append(f"{name}: definitions found by kind: {kinds}")
        res = ", ".join(f"{k} {v['correct']}/{v['returned']} ({v['precision']:.3f})"
                        for k, v in r["references_by_resolution"].items())
        lines.append(f"{name}: reference precision by resolution: {res or '-'}")
        kinds = ", ".join(f"{k} F1 {v['f1']:.3f}" for k, v in r["references_by_kind"].items())
        strata = ", ".join(f"{k} F1 {v['f1']:.3f}" for k, v in r["references_by_stratum"].items())
        lines.append(f"{name}: references by kind: {kinds}; by stratum: {strata}; "
                     f"{r['symbols_without_references']} of {r['symbols']} symbols answered empty")
        lines.append(f"{name}: imported_by P {r['imported_by']['precision']:.3f} "
                     f"R {r['imported_by']['recall']:.3f} F1 {r['imported_by']['f1']:.3f}")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--split", choices=["tune", "test", "all"], default="tune")
    ap.add_argument("--url", default=os.environ.get("DOCDEX_URL", "http://127.0.0.1:3210"))
    ap.add_argument("--token", default=os.environ.get("DOCDEX_TOKEN"))
    ap.add_argument("--src", default=DEFAULT_SRC, help="folder holding the projects' roots")
    ap.add_argument("--data", default=HERE, help="folder holding the judged JSON files")
    ap.add_argument("--project", action="append", default=[], help="only this project (repeatable)")
    ap.add_argument("--json", action="store_true", help="print JSON instead of the table")
    ap.add_argument("--out", help="also write the JSON to this file")
    args = ap.parse_args(argv)

    projects = load_projects(args.data, args.split, set(args.project))
    if not projects:
        sys.exit(f"no judged project for split {args.split!r} in {args.data}")
    client = Client(args.url, args.token)
    results, total = {}, new_stats()
    for d in projects:
        repo = os.path.realpath(os.path.join(args.src, d["root"]))
        if not os.path.isdir(repo):
            sys.exit(f"{repo} missing: run benches/code/fetch.sh")
        st = new_stats()
        score_definitions(client, repo, d, st)
        score_references(client, repo, d, st)
        score_imports(client, repo, d, st)
        results[d["project"]] = dict(language=d["language"], split=d["split"], repo=repo,
                                     **summarize(st))
        merge_stats(total, st)
    results["overall"] = dict(language="", split=args.split, **summarize(total))
    doc = {"url": args.url, "split": args.split, "requests": client.requests, "results": results}
    if args.out:
        with open(args.out, "w") as f:
            json.dump(doc, f, indent=1)
    if args.json:
        print(json.dumps(doc, indent=1))
    else:
        print(table(results))
    return doc


if __name__ == "__main__":
    main()
