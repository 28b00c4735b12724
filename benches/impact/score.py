#!/usr/bin/env python3
"""Scores a running docdex daemon's change impact ("which tests cover it") against the judged
set built by judge.py from real per-test coverage.

Usage:
  python3 benches/impact/score.py --split tune|test|blind|blind2|blind3|blind4|blind5|blind6|blind7|blind8|blind9|blind10|blind11|blind12|blind13|blind14|blind15|blind16|blind17|blind18|all [--url URL]
                                  [--depth D] [--limit N] [--min-confidence C] [--project NAME]...
                                  [--max-functions N]
                                  [--judged FILE] [--src DIR] [--timeout S] [--json]
                                  [--rows FILE]
  URL defaults to $DOCDEX_URL or http://127.0.0.1:3210. The bearer token is read from
  $DOCDEX_TOKEN (sent as `Authorization: Bearer TOKEN` when set). Standard library only.
  Each project's repo is the absolute (real) path of DIR/<project>, DIR defaulting to
  target/impact-eval/src (what fetch.sh fills); the daemon must serve those dirs and have
  indexed them. Exits 0 whatever the scores (2 on bad arguments, a missing judged set or a
  project's working copy that is not clean).

What it does, for each judged function (sequentially):
  1. appends a comment to the function's probe line in the project's git working copy:
     " // docdex-probe" in a JavaScript/TypeScript, Rust or Go file (.js .mjs .cjs .jsx .ts .mts
     .cts .tsx .rs .go),
     " # docdex-probe" in any other (Python) file (a comment-only edit of one line inside the
     function's own body; judge.py and js/judge.py chose the line so that this stays a comment);
  2. GET {URL}/v1/impact/diff?repo=<abs project dir>[&depth=D][&limit=N][&min_confidence=C]
     with the token; the answer is
       {"changed_files": [...], "changed_symbols": [{"name","qualified_name","kind","path",
        "line","change",...}], "dependents": [...], "tests": [{"path","name","line",
        "confidence",...}], "truncated": bool, ...}
     with paths relative to the repo root;
  3. restores the file with `git checkout -- <path>`, always (in a `finally`).
  Before a project starts, its working copy must have no modified tracked file (an
  interrupted run that could not restore one says which command cleans it).

Metrics. For one function, P = the set of distinct tests[].path in the answer (normalised:
"\\" -> "/", a leading "./" dropped, an absolute path under the repo made relative) and
T = its covering_test_files (test files one of whose tests executed a line of its body).
  recall    = |P & T| / |T|   (1.0 when T is empty; judge.py never emits such a function)
  precision = |P & T| / |P|   when P is not empty; when P is empty it is 1.0 if T is also
              empty and 0.0 otherwise (an empty answer to a covered function is a miss, not a
              perfect precision)
  F1        = 2PR / (P + R), 0.0 when both are 0
Macro figures average these per function; micro figures pool the (function, file) pairs:
TP = sum |P & T|, FP = sum |P - T|, FN = sum |T - P|, precision = TP / (TP + FP) (with the same
empty-answer convention: 1.0 only when FN is 0 too), recall = TP / (TP + FN).
A function whose request failed (connection error, HTTP 4xx/5xx, an answer that is not JSON)
is counted as an error AND scored as an empty answer (P = {}), so that errors never raise a
score. "changed symbol found" = some changed_symbols[].name equals the function's name (the
last segment, after '.' or '::', of a dotted name counts too); "... at path" additionally
requires the same path. Also: the mean number of predicted vs covering test files, how many
answers were truncated, micro precision/recall with only the test entries of confidence
>= 0.5 and >= 0.8 (a file's confidence is its best entry's; an entry without one counts 1.0),
and the 10 worst misses (most covering files missed).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
DEFAULT_SRC = os.path.join(ROOT, "target", "impact-eval", "src")
DEFAULT_JUDGED = os.path.join(ROOT, "target", "impact-eval", "judged.json")
PROBE = " # docdex-probe"
PROBE_SLASHES = " // docdex-probe"
SLASH_COMMENT_EXT = (".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx", ".rs", ".go")
THRESHOLDS = (0.5, 0.8)


# ---------------------------------------------------------------- pure metric code

def set_metrics(predicted, truth):
    """Recall, precision, F1 and TP/FP/FN of one predicted set against one truth set."""
    p, t = set(predicted), set(truth)
    tp, fp, fn = len(p & t), len(p - t), len(t - p)
    recall = tp / len(t) if t else 1.0
    if p:
        precision = tp / len(p)
    else:
        precision = 1.0 if not t else 0.0
    return {"recall": recall, "precision": precision, "f1": f1(precision, recall),
            "tp": tp, "fp": fp, "fn": fn}


def f1(precision, recall):
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


def micro(tp, fp, fn):
    """Pooled precision/recall/F1 from summed counts, with set_metrics' empty conventions."""
    recall = tp / (tp + fn) if tp + fn else 1.0
    if tp + fp:
        precision = tp / (tp + fp)
    else:
        precision = 1.0 if not fn else 0.0
    return {"precision": precision, "recall": recall, "f1": f1(precision, recall)}


def normalize_path(path, repo):
    """A path from the daemon, relative to repo with '/'."""
    p = (path or "").replace("\\", "/")
    r = (repo or "").replace("\\", "/").rstrip("/")
    if r and (p == r or p.startswith(r + "/")):
        p = p[len(r) + 1:]
    while p.startswith("./"):
        p = p[2:]
    return p


def last_segment(name):
    name = name or ""
    for sep in ("::", "."):
        if sep in name:
            name = name.rsplit(sep, 1)[1]
    return name


def symbol_found(changed_symbols, entry, with_path=False):
    """Whether the judged function is among the answer's changed_symbols (by name)."""
    for s in changed_symbols or []:
        if entry["name"] not in (s.get("name"), last_segment(s.get("name"))):
            continue
        if with_path and normalize_path(s.get("path"), "") != entry["path"]:
            continue
        return True
    return False


def predicted_files(tests, repo, min_confidence=None):
    """Distinct test file paths of an answer's tests, optionally only confident entries."""
    out = set()
    for t in tests or []:
        c = t.get("confidence")
        c = 1.0 if c is None else c
        if min_confidence is not None and c < min_confidence:
            continue
        p = normalize_path(t.get("path"), repo)
        if p:
            out.add(p)
    return out


def file_entries(tests, repo):
    """Each predicted test file's entries as [confidence, depth] pairs, surest first (to study
    what separates the files a run reaches from the rest)."""
    out = {}
    for t in tests or []:
        p = normalize_path(t.get("path"), repo)
        if p:
            c = t.get("confidence")
            out.setdefault(p, []).append([1.0 if c is None else c, t.get("depth")])
    for entries in out.values():
        entries.sort(key=lambda e: -e[0])
    return out


def file_confidence(tests, repo):
    """Each predicted test file's best entry confidence (for precision/recall curves)."""
    return {p: entries[0][0] for p, entries in file_entries(tests, repo).items()}


def probe_comment(path):
    """The comment appended to a probe line of the file at path: '//' for JavaScript and
    TypeScript, '#' otherwise."""
    return PROBE_SLASHES if (path or "").lower().endswith(SLASH_COMMENT_EXT) else PROBE


def probe_edit(text, line, path=None):
    """text with the probe comment for path (PROBE without a path) appended to 1-based line
    `line` (before its line ending)."""
    lines = text.splitlines(keepends=True)
    if not 1 <= line <= len(lines):
        raise ValueError("line %d out of range (1..%d)" % (line, len(lines)))
    cur = lines[line - 1]
    body = cur.rstrip("\r\n")
    lines[line - 1] = body + probe_comment(path) + cur[len(body):]
    return "".join(lines)


def score_function(entry, answer, repo):
    """One function's row: metrics against its covering files (answer None = failed request,
    scored as an empty answer)."""
    failed = answer is None
    answer = answer or {}
    tests = answer.get("tests") or []
    truth = set(entry["covering_test_files"])
    pred = predicted_files(tests, repo)
    row = set_metrics(pred, truth)
    row.update({
        "project": entry["project"], "path": entry["path"],
        "qualified_name": entry["qualified_name"], "name": entry["name"],
        "error": failed,
        "found": symbol_found(answer.get("changed_symbols"), entry),
        "found_at_path": symbol_found(answer.get("changed_symbols"), entry, with_path=True),
        "predicted": len(pred), "covering": len(truth),
        "missed": sorted(truth - pred), "extra": sorted(pred - truth),
        "truncated": bool(answer.get("truncated")),
        "file_confidence": file_confidence(tests, repo),
        "file_entries": file_entries(tests, repo),
    })
    for c in THRESHOLDS:
        m = set_metrics(predicted_files(tests, repo, c), truth)
        row["at_%s" % c] = {"tp": m["tp"], "fp": m["fp"], "fn": m["fn"]}
    return row


def aggregate(rows):
    """Summary of function rows: counts, macro and micro P/R/F1, means."""
    n = len(rows)
    if not n:
        return {"functions": 0}
    tp = sum(r["tp"] for r in rows)
    fp = sum(r["fp"] for r in rows)
    fn = sum(r["fn"] for r in rows)
    out = {
        "functions": n,
        "errors": sum(1 for r in rows if r["error"]),
        "changed_symbol_found": sum(1 for r in rows if r["found"]) / n,
        "changed_symbol_found_at_path": sum(1 for r in rows if r["found_at_path"]) / n,
        "macro": {k: statistics.mean(r[k] for r in rows) for k in ("recall", "precision", "f1")},
        "micro": micro(tp, fp, fn),
        "tp": tp, "fp": fp, "fn": fn,
        "mean_predicted_files": statistics.mean(r["predicted"] for r in rows),
        "mean_covering_files": statistics.mean(r["covering"] for r in rows),
        "truncated": sum(1 for r in rows if r["truncated"]),
        "no_prediction": sum(1 for r in rows if not r["predicted"]),
    }
    for c in THRESHOLDS:
        k = "at_%s" % c
        out["micro_confidence_%s" % c] = micro(sum(r[k]["tp"] for r in rows),
                                               sum(r[k]["fp"] for r in rows),
                                               sum(r[k]["fn"] for r in rows))
    return out


def worst_misses(rows, k=10):
    """The k rows that missed the most covering files (then lowest recall)."""
    missed = [r for r in rows if r["missed"]]
    missed.sort(key=lambda r: (-len(r["missed"]), r["recall"], r["project"], r["path"],
                               r["qualified_name"]))
    return [{"function": "%s %s:%s" % (r["project"], r["path"], r["qualified_name"]),
             "missed": r["missed"], "covering": r["covering"], "predicted": r["predicted"],
             "found": r["found"], "error": r["error"]} for r in missed[:k]]


# ---------------------------------------------------------------- I/O

def git(repo, *args):
    return subprocess.run(["git", "-C", repo] + list(args), capture_output=True, text=True)


def request(url, token, timeout):
    """(answer dict, None) or (None, error text)."""
    req = urllib.request.Request(url, headers={"Accept": "application/json"})
    if token:
        req.add_header("Authorization", "Bearer " + token)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            body = resp.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as e:
        try:
            body = e.read().decode("utf-8", "replace")
        except Exception:  # noqa: BLE001
            body = ""
        return None, "HTTP %d: %s" % (e.code, body[:500])
    except (urllib.error.URLError, OSError) as e:
        return None, "connection error: %s" % (getattr(e, "reason", None) or e)
    try:
        answer = json.loads(body)
    except ValueError:
        return None, "not JSON: %s" % body[:500]
    if not isinstance(answer, dict):
        return None, "not a JSON object: %s" % body[:500]
    return answer, None


def probe(entry, repo, args, token):
    """Edit, ask, restore. Returns (answer or None, error or None, seconds)."""
    path = os.path.join(repo, entry["path"])
    with open(path, encoding="utf-8", newline="") as f:
        text = f.read()
    params = [("repo", repo)]
    if args.depth is not None:
        params.append(("depth", str(args.depth)))
    if args.limit is not None:
        params.append(("limit", str(args.limit)))
    if args.min_confidence is not None:
        params.append(("min_confidence", str(args.min_confidence)))
    url = args.url.rstrip("/") + "/v1/impact/diff?" + urllib.parse.urlencode(params)
    t0 = time.monotonic()
    try:
        with open(path, "w", encoding="utf-8", newline="") as f:
            f.write(probe_edit(text, entry["probe_line"], entry["path"]))
        answer, err = request(url, token, args.timeout)
    finally:
        r = git(repo, "checkout", "--", entry["path"])
        if r.returncode != 0:
            sys.stderr.write("could not restore %s: %s\n" % (path, r.stderr.strip()))
    return answer, err, time.monotonic() - t0


def fmt(summary):
    if not summary.get("functions"):
        return "  (no functions)"
    s = summary
    return ("  functions %d (errors %d, truncated %d, no prediction %d)\n"
            "  changed symbol found %.3f (at path %.3f)\n"
            "  test files  macro R %.3f P %.3f F1 %.3f | micro R %.3f P %.3f F1 %.3f "
            "(TP %d FP %d FN %d)\n"
            "  micro at confidence >= 0.5: R %.3f P %.3f | >= 0.8: R %.3f P %.3f\n"
            "  mean test files predicted %.2f vs covering %.2f"
            % (s["functions"], s["errors"], s["truncated"], s["no_prediction"],
               s["changed_symbol_found"], s["changed_symbol_found_at_path"],
               s["macro"]["recall"], s["macro"]["precision"], s["macro"]["f1"],
               s["micro"]["recall"], s["micro"]["precision"], s["micro"]["f1"],
               s["tp"], s["fp"], s["fn"],
               s["micro_confidence_0.5"]["recall"], s["micro_confidence_0.5"]["precision"],
               s["micro_confidence_0.8"]["recall"], s["micro_confidence_0.8"]["precision"],
               s["mean_predicted_files"], s["mean_covering_files"]))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--split", choices=("tune", "test", "blind", "blind2", "blind3", "blind4", "blind5", "blind6", "blind7", "blind8", "blind9", "blind10", "blind11", "blind12", "blind13", "blind14", "blind15", "blind16", "blind17", "blind18", "all"),
                    required=True)
    ap.add_argument("--url", default=os.environ.get("DOCDEX_URL", "http://127.0.0.1:3210"))
    ap.add_argument("--depth", type=int)
    ap.add_argument("--limit", type=int, default=1000,
                    help="sent as limit= (the daemon's list cap, 100 unless asked: a function "
                         "reached by hundreds of tests would be scored on its first 100)")
    ap.add_argument("--min-confidence", type=float, help="sent as min_confidence=")
    ap.add_argument("--project", action="append", help="only these projects (repeatable)")
    ap.add_argument("--max-functions", type=int, help="at most N functions per project")
    ap.add_argument("--judged", default=DEFAULT_JUDGED)
    ap.add_argument("--split-file", default=os.path.join(HERE, "split.json"))
    ap.add_argument("--src", default=DEFAULT_SRC)
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per request")
    ap.add_argument("--json", action="store_true", help="print the report as JSON")
    ap.add_argument("--rows", help="also write every function's row (metrics, missed and extra "
                                   "files, changed symbols found) to this JSON file")
    args = ap.parse_args(argv)
    token = os.environ.get("DOCDEX_TOKEN", "")

    if not os.path.exists(args.judged):
        sys.stderr.write("%s missing: run benches/impact/fetch.sh and judge.py\n" % args.judged)
        return 2
    with open(args.split_file) as f:
        split = {p["name"]: p for p in json.load(f)["projects"]}
    with open(args.judged) as f:
        judged = json.load(f)
    # the projects of the split that this judged file covers (judged.json has the Python ones,
    # judged-js.json the JavaScript ones)
    in_file = {e["project"] for e in judged}
    projects = [n for n in split if (args.split == "all" or split[n]["split"] == args.split)
                and (not args.project or n in args.project) and n in in_file]
    if not projects:
        sys.stderr.write("no project of split %s in %s\n" % (args.split, args.judged))
        return 2

    rows_by_project, errors, latencies = {}, [], []
    for name in projects:
        repo = os.path.realpath(os.path.join(args.src, name))
        entries = [e for e in judged if e["project"] == name]
        if args.max_functions is not None:
            entries = entries[:args.max_functions]
        if not os.path.isdir(os.path.join(repo, ".git")):
            sys.stderr.write("%s is not a git working copy: run benches/impact/fetch.sh\n" % repo)
            return 2
        dirty = git(repo, "status", "--porcelain", "--untracked-files=no").stdout.strip()
        if dirty:
            sys.stderr.write("%s has modified files (an interrupted run?); clean it with\n"
                             "  git -C %s checkout -- .\n%s\n" % (repo, repo, dirty))
            return 2
        rows = []
        for e in entries:
            answer, err, secs = probe(e, repo, args, token)
            latencies.append(secs)
            if err:
                errors.append("%s %s:%s: %s" % (name, e["path"], e["qualified_name"], err))
            rows.append(score_function(e, answer, repo))
        rows_by_project[name] = rows
        if not args.json:
            sys.stderr.write("%s: %d functions, %d errors\n"
                             % (name, len(rows), sum(r["error"] for r in rows)))

    all_rows = [r for n in projects for r in rows_by_project[n]]
    report = {
        "split": args.split, "url": args.url, "depth": args.depth, "limit": args.limit,
        "min_confidence": args.min_confidence,
        "projects": {n: aggregate(rows_by_project[n]) for n in projects},
        "overall": aggregate(all_rows),
        "mean_seconds_per_function": statistics.mean(latencies) if latencies else 0.0,
        "errors": len(errors), "first_errors": errors[:5],
        "worst_misses": worst_misses(all_rows),
    }
    if args.rows:
        with open(args.rows, "w") as f:
            json.dump(all_rows, f, indent=1)
            f.write("\n")
    if args.json:
        print(json.dumps(report, indent=1))
        return 0
    print("change impact, split %s, %s%s" % (args.split, args.url,
                                             "" if args.depth is None else ", depth %d" % args.depth))
    for n in projects:
        print("%s %s (%s)" % (n, split[n]["version"], split[n]["split"]))
        print(fmt(report["projects"][n]))
    print("overall")
    print(fmt(report["overall"]))
    print("  mean %.2fs per function (edit + request + restore)" % report["mean_seconds_per_function"])
    if errors:
        print("errors: %d; first ones:" % len(errors))
        for e in errors[:5]:
            print("  " + e)
    if report["worst_misses"]:
        print("worst misses (covering test files not predicted):")
        for w in report["worst_misses"]:
            more = "" if len(w["missed"]) <= 4 else " ... (+%d)" % (len(w["missed"]) - 4)
            print("  %s: missed %d/%d, predicted %d%s: %s%s"
                  % (w["function"], len(w["missed"]), w["covering"], w["predicted"],
                     "" if w["found"] else ", not found as changed",
                     ", ".join(w["missed"][:4]), more))
    return 0


if __name__ == "__main__":
    sys.exit(main())
