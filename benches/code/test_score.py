#!/usr/bin/env python3
"""Tests score.py's arithmetic against a fake daemon (http.server on 127.0.0.1 serving canned
answers for a tiny hand-made judged set); the expected numbers are worked out in comments.
Run: python3 benches/code/test_score.py"""
import http.server
import json
import os
import sys
import tempfile
import threading
import unittest
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import score  # noqa: E402

TOKEN = "secret"

MINI = {
    "project": "mini", "language": "python", "split": "tune", "fetch": "-", "root": "mini",
    "definitions": [
        {"name": "f", "qualified_name": "a.f", "kind": "function", "path": "a.py", "line": 10},
        {"name": "C", "qualified_name": "a.C", "kind": "class", "path": "a.py", "line": 20},
        {"name": "m", "qualified_name": "b.K.m", "kind": "method", "path": "b.py", "line": 5},
        {"name": "v", "qualified_name": "b.v", "kind": "variable", "path": "b.py", "line": 1},
    ],
    "references": [
        {"symbol": {"name": "f", "kind": "function", "path": "a.py", "line": 10, "stratum": "popular"},
         "refs": [{"path": "a.py", "line": 12, "column": 5}, {"path": "a.py", "line": 12, "column": 20},
                  {"path": "b.py", "line": 3, "column": 1}, {"path": "b.py", "line": 8, "column": 1}]},
        {"symbol": {"name": "C", "kind": "class", "path": "a.py", "line": 20, "stratum": "rare"},
         "refs": [{"path": "c.py", "line": 1, "column": 1}]},
    ],
    "import_files": ["a.py", "b.py", "c.py"],
    "imports": [{"from": "a.py", "to": "b.py"}, {"from": "a.py", "to": "c.py"},
                {"from": "b.py", "to": "c.py"}],
}
OTHER = dict(MINI, project="other", split="test", root="other")


def make_handler(repo, log):
    def answer(route, q):
        if route == "/v1/symbols":
            return {
                "f": {"symbols": [{"name": "f", "path": "a.py", "line": 11}]},  # +1: found
                "C": {"symbols": [{"name": "C", "path": os.path.join(repo, "a.py"), "line": 19}]},
                "m": {"symbols": [{"name": "m", "path": "b.py", "line": 7}]},  # +2: not found
            }.get(q["name"])  # v: 404
        if route == "/v1/references":
            if q["name"] != "f":
                return None
            assert q["path"] == "a.py" and q["line"] == "10" and q["limit"] == "200", q
            if q.get("offset") is None:
                return {"symbol": {"name": "f"}, "total": 4, "next_offset": 2, "references": [
                    {"path": "a.py", "line": 12, "column": 5, "confidence": 0.9, "resolution": "exact"},
                    {"path": "./b.py", "line": 3, "column": 1, "confidence": 0.4, "resolution": "name"}]}
            assert q["offset"] == "2", q
            return {"symbol": {"name": "f"}, "total": 4, "next_offset": None, "references": [
                {"path": "b.py", "line": 99, "column": 1, "confidence": 0.95, "resolution": "exact"},
                {"path": "a.py", "line": 12, "column": 20, "confidence": 0.3, "resolution": "name"}]}
        if route == "/v1/graph/impact":
            return {
                "a.py": {"file": "a.py", "imports": [{"path": "b.py", "confidence": 1}, {"path": "d.py"}],
                         "imported_by": [], "unresolved": []},
                "b.py": {"file": "b.py", "imports": [{"path": "c.py"}], "imported_by": [{"path": "a.py"}],
                         "unresolved": []},
            }.get(q["file"])  # c.py: 404
        return None

    class H(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            u = urllib.parse.urlsplit(self.path)
            q = dict(urllib.parse.parse_qsl(u.query))
            log.append((u.path, q))
            if self.headers.get("Authorization") != f"Bearer {TOKEN}":
                return self.reply(401, {"error": "token"})
            if u.path == "/v1/references" and int(q.get("limit", 0)) > 200:
                return self.reply(400, {"error": {"code": "invalid_request",
                                                  "message": "limit must be 1-200"}})
            if u.path not in ("/v1/symbols", "/v1/references", "/v1/graph/impact"):
                return self.reply(404, {"error": {"code": "not_found", "message": "route"}})
            if q.get("repo") != repo:
                return self.reply(400, {"error": "repo " + q.get("repo", "")})
            body = answer(u.path, q)
            self.reply(404 if body is None else 200,
                       body or {"error": {"code": "symbol_not_found", "message": "-"}})

        def reply(self, code, body):
            data = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *a):
            pass

    return H


class ScoreTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        base = self.tmp.name
        for name, d in (("mini", MINI), ("other", OTHER)):
            os.makedirs(os.path.join(base, "src", d["root"]))
            os.makedirs(os.path.join(base, "data"), exist_ok=True)
            with open(os.path.join(base, "data", name + ".json"), "w") as f:
                json.dump(d, f)
        self.repo = os.path.realpath(os.path.join(base, "src", "mini"))
        self.log = []
        self.srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), make_handler(self.repo, self.log))
        threading.Thread(target=self.srv.serve_forever, daemon=True).start()
        self.argv = ["--url", f"http://127.0.0.1:{self.srv.server_address[1]}", "--token", TOKEN,
                     "--src", os.path.join(base, "src"), "--data", os.path.join(base, "data"),
                     "--json"]

    def tearDown(self):
        self.srv.shutdown()
        self.srv.server_close()
        self.tmp.cleanup()

    def run_score(self, *extra):
        with open(os.devnull, "w") as null:
            old, sys.stdout = sys.stdout, null
            try:
                return score.main(self.argv + list(extra))
            finally:
                sys.stdout = old

    def test_numbers(self):
        doc = self.run_score()
        self.assertEqual(set(doc["results"]), {"mini", "overall"})  # default split: tune only
        r = doc["results"]["mini"]
        # definitions: f (+1) and C (absolute path, -1) found; m (+2) and v (404) not
        self.assertEqual(r["definitions"], {"found": 2, "total": 4, "rate": 0.5})
        self.assertEqual(r["definitions_by_kind"]["method"]["found"], 0)
        self.assertEqual(r["definitions_by_kind"]["class"]["found"], 1)
        # references, (path, line) sets: f truth {a12, b3, b8}, docdex {a12, b3, b99};
        # C truth {c1}, docdex nothing (404) -> TP 2, FP 1, FN 2
        ref = r["references"]
        self.assertEqual((ref["tp"], ref["fp"], ref["fn"]), (2, 1, 2))
        self.assertAlmostEqual(ref["precision"], 2 / 3)
        self.assertAlmostEqual(ref["recall"], 0.5)
        self.assertAlmostEqual(ref["f1"], 2 * (2 / 3) * 0.5 / (2 / 3 + 0.5))
        # >= 0.5: a12 keeps its best confidence 0.9, b3 (0.4) dropped -> TP 1, FP 1, FN 3
        at5 = r["references_at_confidence"]["0.5"]
        self.assertEqual((at5["tp"], at5["fp"], at5["fn"]), (1, 1, 3))
        self.assertAlmostEqual(r["references_f1_at_confidence"]["0.5"], 2 * 0.5 * 0.25 / 0.75)
        self.assertEqual(r["references_at_confidence"]["0.8"], at5)
        # resolution: exact {a12 ok, b99 wrong}, name {b3 ok, a12 ok}
        self.assertEqual(r["references_by_resolution"]["exact"],
                         {"returned": 2, "correct": 1, "precision": 0.5})
        self.assertEqual(r["references_by_resolution"]["name"],
                         {"returned": 2, "correct": 2, "precision": 1.0})
        self.assertEqual(r["references_by_kind"]["class"]["fn"], 1)
        self.assertEqual(r["symbols"], 2)
        self.assertEqual(r["symbols_without_references"], 1)
        # imports: a {b, d} vs {b, c}: 1/1/1; b {c} vs {c}: 1/0/0; c (404) {} vs {} -> 2/1/1
        imp = r["imports"]
        self.assertEqual((imp["tp"], imp["fp"], imp["fn"]), (2, 1, 1))
        # imported_by: a {} vs {}; b {a} vs {a}; c {} vs {a, b} -> 1/0/2
        ib = r["imported_by"]
        self.assertEqual((ib["tp"], ib["fp"], ib["fn"]), (1, 0, 2))
        self.assertEqual(doc["results"]["overall"]["references"], ref)
        # limit 1000 refused (400) -> retried with 200; paging: second page with offset=2
        asked = [(q["limit"], q.get("offset")) for p, q in self.log
                 if p == "/v1/references" and q["name"] == "f"]
        # twice: the default answer, then every use (min_confidence=0)
        self.assertEqual(asked, [("1000", None), ("200", None), ("200", "2"), ("200", None), ("200", "2")])

    def test_split_all_and_table(self):
        # "other" (test split) points at a repo the fake refuses -> the scorer aborts on 400
        with self.assertRaises(RuntimeError):
            self.run_score("--split", "all")
        doc = self.run_score("--project", "mini")
        text = score.table(doc["results"])
        self.assertIn("mini", text)
        self.assertIn("0.500", text)

    def test_unindexed_repo_aborts(self):
        c = score.Client(self.argv[1], TOKEN)
        with self.assertRaises(RuntimeError):
            c.get("/v1/nope", repo=self.repo)

    def test_bad_token(self):
        argv = list(self.argv)
        argv[argv.index(TOKEN)] = "wrong"
        with self.assertRaises(RuntimeError):
            score.main(argv)


class OracleTest(unittest.TestCase):
    """A fake daemon that answers from the judged files themselves must score 1.0 everywhere
    (checks the scorer reads every real file's shape the way the judges write it)."""

    def test_oracle(self):
        here = os.path.dirname(os.path.abspath(__file__))
        projects = score.load_projects(here, "all", set())
        if not projects:
            self.skipTest("no judged files")
        with tempfile.TemporaryDirectory() as tmp:
            by_repo = {}
            for d in projects:
                os.makedirs(os.path.join(tmp, d["root"]))
                by_repo[os.path.realpath(os.path.join(tmp, d["root"]))] = d

            class H(http.server.BaseHTTPRequestHandler):
                def do_GET(self):
                    u = urllib.parse.urlsplit(self.path)
                    q = dict(urllib.parse.parse_qsl(u.query))
                    d = by_repo[q["repo"]]
                    if u.path == "/v1/symbols":
                        body = {"symbols": [x for x in d["definitions"] if x["name"] == q["name"]]}
                    elif u.path == "/v1/references":
                        [e] = [e for e in d["references"] if e["symbol"]["name"] == q["name"]
                               and e["symbol"]["path"] == q["path"]
                               and str(e["symbol"]["line"]) == q["line"]]
                        body = {"symbol": e["symbol"], "references": e["refs"],
                                "total": len(e["refs"]), "next_offset": None}
                    else:
                        f = q["file"]
                        if d.get("imports_granularity") == "package":
                            # answer with files (every file of an imported directory)
                            fdir = score.file_dir(f)
                            dirs = {x["to"] for x in d["imports"] if x["from"] == f}
                            imports = [g for g in d["files"] if score.file_dir(g) in dirs]
                            by = sorted({x["from"] for x in d["imports"] if x["to"] == fdir})
                        else:
                            imports = [x["to"] for x in d["imports"] if x["from"] == f]
                            by = [x["from"] for x in d["imports"] if x["to"] == f]
                        body = {"file": f, "imports": [{"path": x} for x in imports],
                                "imported_by": [{"path": x} for x in by], "unresolved": []}
                    data = json.dumps(body).encode()
                    self.send_response(200)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)

                def log_message(self, *a):
                    pass

            srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
            threading.Thread(target=srv.serve_forever, daemon=True).start()
            try:
                with open(os.devnull, "w") as null:
                    old, sys.stdout = sys.stdout, null
                    try:
                        doc = score.main(["--url", f"http://127.0.0.1:{srv.server_address[1]}",
                                          "--src", tmp, "--split", "all", "--json"])
                    finally:
                        sys.stdout = old
            finally:
                srv.shutdown()
                srv.server_close()
        for name, r in doc["results"].items():
            self.assertEqual(r["definitions"]["rate"], 1.0, name)
            self.assertEqual((r["references"]["fp"], r["references"]["fn"]), (0, 0), name)
            self.assertEqual((r["imports"]["fp"], r["imports"]["fn"]), (0, 0), name)
            self.assertEqual((r["imported_by"]["fp"], r["imported_by"]["fn"]), (0, 0), name)


if __name__ == "__main__":
    unittest.main()
