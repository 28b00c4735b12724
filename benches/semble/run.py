#!/usr/bin/env python3
"""docdex on semble's code-search benchmark, on the repos the package registries carry.

semble (MinishLab, MIT) publishes 62 pinned repos with annotated queries and scores tools by
file-level NDCG@10. This harness takes the benchmark's annotations for the repos whose
sources crates.io, PyPI and npm carry (`sources.json`: the release and where each package
lies in the repo's tree), fetches them with cargo, pip and npm, indexes each with docdexd,
asks every query in each mode, and scores the ranked files with the benchmark's own metric:
a target counts at the rank of the first returned file whose path equals it or ends with
`/target`; NDCG@10 with one gain per target (primary and secondary), ideal over
min(10, targets). Means are over queries, as the benchmark reports them.

    python3 benches/semble/run.py                       # every repo, lexical and hybrid
    python3 benches/semble/run.py --split tune --modes lexical --verbose
    python3 benches/semble/run.py --split test          # the held-out repos, at the end

Needs cargo, pip and npm (the registries), and a docdexd build (`--docdexd`, default
target/release/docdexd). The sources and the index state live under `--cache`
(default ~/.cache/docdex-semble); a second run reuses both.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import socket
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parent.parent
TOP_K = 10
# Hits asked for per query: several chunks of one file count once, so ten files need more.
HITS_PER_QUERY = 40
CATEGORIES = ("architecture", "semantic", "symbol")


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# ---- The benchmark's data and metric.


def infer_category(query: str) -> str:
    """The benchmark's rule for an annotation without a category."""
    if " " not in query.strip():
        return "symbol"
    lowered = query.lower()
    return "architecture" if lowered.startswith("how ") else "semantic"


def load_tasks(name: str, checkout: Path | None = None) -> list[dict]:
    """The repo's queries. With its checkout, a target that is a symlink in the repo's tree
    (RxSwift's `Sources/RxSwift/*.swift` link to `RxSwift/…`) is the file it links to: the
    walk, like git's, keeps one path per file and does not follow links."""
    raw = json.loads((HERE / "annotations" / f"{name}.json").read_text(encoding="utf-8"))
    tasks = []

    def target(t: str | dict) -> str:
        path = t if isinstance(t, str) else t["path"]
        if checkout is not None and (checkout / path).is_symlink():
            return str((checkout / path).resolve())
        return path

    for item in raw:
        tasks.append(
            {
                "query": item["query"],
                "targets": [target(t) for t in item.get("relevant", [])] + [target(t) for t in item.get("secondary", [])],
                "category": item.get("category") or infer_category(item["query"]),
            }
        )
    return tasks


def path_matches(file_path: str, target: str) -> bool:
    return file_path == target or file_path.endswith("/" + target)


def dcg(relevances: list[int]) -> float:
    return sum(rel / math.log2(i + 2) for i, rel in enumerate(relevances))


def ndcg_at_k(files: list[str], targets: list[str], k: int = TOP_K) -> float:
    if not targets:
        return 0.0
    relevances = [0] * k
    for target in targets:
        rank = next((i for i, f in enumerate(files, 1) if path_matches(f, target)), None)
        if rank is not None and rank <= k:
            relevances[rank - 1] = 1
    ideal = dcg([1] * min(k, len(targets)))
    return dcg(relevances) / ideal if ideal > 0 else 0.0


# ---- Fetching the sources from the registries.


def run(cmd: list[str], **kwargs) -> subprocess.CompletedProcess:
    result = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{result.stderr[-2000:]}")
    return result


def unpack(archive: Path, dest: Path) -> Path:
    """Unpacks a .tar.gz/.tgz/.crate/.zip into dest; returns its single top folder."""
    dest.mkdir(parents=True, exist_ok=True)
    if archive.suffix in (".zip", ".whl"):
        shutil.unpack_archive(str(archive), str(dest), "zip")
    else:
        with tarfile.open(archive) as tar:
            tar.extractall(dest, filter="data")
    tops = [p for p in dest.iterdir()]
    return tops[0] if len(tops) == 1 and tops[0].is_dir() else dest


def fetch_crate(name: str, version: str, work: Path) -> Path:
    """cargo fetches the crate into its registry cache; the .crate there is unpacked."""
    project = work / f"fetch-{name}"
    (project / "src").mkdir(parents=True, exist_ok=True)
    (project / "src" / "lib.rs").write_text("")
    (project / "Cargo.toml").write_text(
        f'[package]\nname = "fetch-{name.replace("_", "-")}"\nversion = "0.0.0"\nedition = "2021"\n\n'
        f'[dependencies]\n{name} = "={version}"\n'
    )
    run(["cargo", "fetch", "--manifest-path", str(project / "Cargo.toml")])
    cargo_home = Path(os.environ.get("CARGO_HOME", Path.home() / ".cargo"))
    crates = sorted(cargo_home.glob(f"registry/cache/*/{name}-{version}.crate"))
    if not crates:
        raise SystemExit(f"cargo fetched {name} {version} but no .crate is in {cargo_home}/registry/cache")
    top = unpack(crates[0], work / f"unpacked-{name}")
    # A packaged crate holds a rewritten Cargo.toml and the original as Cargo.toml.orig: the
    # repo has the original only.
    original = top / "Cargo.toml.orig"
    if original.exists():
        original.replace(top / "Cargo.toml")
    return top


def fetch_pypi(name: str, version: str, work: Path) -> Path:
    """The package's wheel for CPython 3.12 on x86-64 Linux: its package folder is the
    repo's, and unlike a source distribution it needs no build step to download."""
    dest = work / f"wheel-{name}"
    run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:",
         "--platform", "manylinux_2_17_x86_64", "--python-version", "3.12", "--implementation", "cp",
         f"{name}=={version}", "-d", str(dest)])
    archives = [p for p in dest.iterdir() if p.name.endswith(".whl")]
    if not archives:
        raise SystemExit(f"pip downloaded no wheel of {name} {version}")
    return unpack(archives[0], work / f"unpacked-{name}")


def fetch_npm(name: str, version: str, work: Path) -> Path:
    dest = work / f"npm-{name.replace('/', '-')}"
    dest.mkdir(parents=True, exist_ok=True)
    run(["npm", "pack", f"{name}@{version}", "--pack-destination", str(dest)], cwd=dest)
    archives = sorted(dest.glob("*.tgz"))
    if not archives:
        raise SystemExit(f"npm packed nothing for {name} {version}")
    return unpack(archives[0], work / f"unpacked-{name.replace('/', '-')}")


def fetch_pypi_sdist(name: str, version: str, work: Path) -> Path:
    """The source distribution itself (C and C++ that a Python package vendors), found
    through PyPI's JSON API: `pip download --no-binary` would need each build backend."""
    base = f"https://pypi.org/pypi/{name}/json"
    with urllib.request.urlopen(base, timeout=120) as response:
        releases = json.load(response)["releases"]
    sdists = [f["url"] for f in releases.get(version, []) if f["packagetype"] == "sdist"]
    if not sdists:
        raise SystemExit(f"PyPI lists no source distribution of {name} {version}")
    url = urllib.parse.urljoin(base, sdists[0])
    archive = work / url.rsplit("/", 1)[-1]
    with urllib.request.urlopen(url, timeout=600) as response, open(archive, "wb") as out:
        shutil.copyfileobj(response, out)
    return unpack(archive, work / f"unpacked-{name}")


def debian_version(name: str, version: str) -> str:
    """`version` when the archive still has it, else another Debian revision of the same
    upstream release (a stable update such as +deb12u2 replaces +deb12u1 in the archive; the
    upstream source is the same)."""
    out = subprocess.run(["apt-cache", "madison", name], capture_output=True, text=True).stdout
    have = [line.split("|")[1].strip() for line in out.splitlines() if line.count("|") >= 2]
    if version in have:
        return version
    upstream = version.rsplit("-", 1)[0]
    same = [v for v in have if v.rsplit("-", 1)[0] == upstream]
    if not same:
        raise SystemExit(f"the archive has no {name} {upstream} (it has: {', '.join(have) or 'none'})")
    print(f"  {name} {version} is gone from the archive: taking {same[0]}, the same upstream release")
    return same[0]


def fetch_debian(name: str, version: str, work: Path) -> Path:
    """A Debian package that ships the source (Go's golang-*-dev, PHP and Ruby libraries,
    headers), unpacked: its file system tree, `from` picks the repo's part."""
    dest = work / f"deb-{name}"
    dest.mkdir(parents=True, exist_ok=True)
    for stale in dest.glob("*.deb"):
        stale.unlink()
    run(["apt-get", "download", f"{name}={debian_version(name, version)}"], cwd=dest)
    debs = sorted(dest.glob("*.deb"))
    if not debs:
        raise SystemExit(f"apt-get downloaded no package {name} {version}")
    tree = work / f"unpacked-{name}"
    run(["dpkg-deb", "-x", str(debs[0]), str(tree)])
    return tree


def fetch_debian_source(name: str, version: str, work: Path) -> Path:
    """A Debian source package's upstream tarball (`apt-get source`: Java and other code no
    binary package ships as source), from bookworm or trixie (the newer release where it is
    closer to the benchmark's pin), through a sources list of its own so the system's apt
    configuration is left as it is."""
    apt = work / f"apt-{name}"
    lists = apt / "lists"
    (lists / "partial").mkdir(parents=True, exist_ok=True)
    (apt / "sources.list").write_text(
        "deb-src http://deb.debian.org/debian bookworm main\ndeb-src http://deb.debian.org/debian trixie main\n"
    )
    options = ["-o", f"Dir::Etc::sourcelist={apt / 'sources.list'}", "-o", "Dir::Etc::sourceparts=/dev/null",
               "-o", f"Dir::State::Lists={lists}"]
    run(["apt-get", *options, "update"])
    dest = work / f"debsrc-{name}"
    dest.mkdir(parents=True, exist_ok=True)
    run(["apt-get", *options, "source", "--download-only", f"{name}={version}"], cwd=dest)
    origs = sorted(p for p in dest.iterdir() if ".orig.tar." in p.name)
    if not origs:
        raise SystemExit(f"apt-get source downloaded no upstream tarball of {name} {version}")
    return unpack(origs[0], work / f"unpacked-{name}")


# Where `git` packages find a clone of their repo (`--git-clones`): DIR/NAME, NAME the last
# part of the repo's URL without `.git`. A repo with no clone there is cloned into it.
GIT_CLONES: Path | None = None


def fetch_git(url: str, revision: str, work: Path, paths: list[str] = ()) -> Path:
    """The repo itself at the benchmark's pinned commit (`git archive`), for the repos no
    registry carries: the pin, not a release near it, so the published scores compare.
    `paths` limits it to the folders searched (a partial clone need not hold the rest)."""
    assert GIT_CLONES is not None
    clone = GIT_CLONES / url.rstrip("/").rsplit("/", 1)[-1].removesuffix(".git")
    if not clone.exists():
        GIT_CLONES.mkdir(parents=True, exist_ok=True)
        run(["git", "clone", "--bare", "--filter=blob:none", url, str(clone)])
    archive = work / f"git-{clone.name}.tar"
    run(["git", "-C", str(clone), "archive", "--format=tar", "-o", str(archive), revision, "--", *paths])
    tree = work / f"unpacked-{clone.name}"
    tree.mkdir(parents=True)

    def keep(member: tarfile.TarInfo, dest: str) -> tarfile.TarInfo | None:
        # A link out of the tree (an absolute one, or `../..` past the root) is left out.
        try:
            return tarfile.data_filter(member, dest)
        except tarfile.FilterError:
            return None

    with tarfile.open(archive) as tar:
        tar.extractall(tree, filter=keep)
    return tree


# Bumped when the way a repo's tree is laid out changes: checkouts made before are redone.
LAYOUT_VERSION = 2

FETCHERS = {
    "crates": fetch_crate,
    "pypi": fetch_pypi,
    "npm": fetch_npm,
    "pypi-sdist": fetch_pypi_sdist,
    "debian": fetch_debian,
    "debian-source": fetch_debian_source,
    "git": fetch_git,
}


def fetch_repo(name: str, spec: dict, cache: Path) -> Path:
    """The repo's tree as far as its packages carry it, under cache/sources/NAME."""
    checkout = cache / "sources" / name
    stamp = checkout / ".docdex-semble.json"
    wanted = json.dumps([LAYOUT_VERSION, spec["packages"], spec.get("symlinks")], sort_keys=True)
    if stamp.exists() and stamp.read_text() == wanted:
        return checkout
    if checkout.exists():
        shutil.rmtree(checkout)
    with tempfile.TemporaryDirectory() as tmp:
        for package in spec["packages"]:
            log(f"  fetching {package['name']} {package['version']} from {package['registry']}")
            extra = {"paths": package["paths"]} if "paths" in package else {}
            top = FETCHERS[package["registry"]](package["name"], package["version"], Path(tmp), **extra)
            if package.get("from"):
                # The part of the package that is the repo's (a vendored library, a package's
                # folder in /usr/share).
                top = top / package["from"]
                if not top.is_dir():
                    raise SystemExit(f"{package['name']} {package['version']} has no {package['from']}")
            into = checkout / package["into"] if package["into"] else checkout
            into.parent.mkdir(parents=True, exist_ok=True)
            if into.exists():
                for child in top.iterdir():
                    shutil.move(str(child), str(into / child.name))
            else:
                shutil.move(str(top), str(into))
    # What git keeps as a link, a package ships as a copy: the link comes back, so the copy's
    # paths do not compete with the originals (serde's src/core is serde_core's src).
    for link, target in spec.get("symlinks", {}).items():
        path = checkout / link
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        elif path.exists() or path.is_symlink():
            path.unlink()
        path.parent.mkdir(parents=True, exist_ok=True)
        path.symlink_to(target)
    stamp.write_text(wanted)
    return checkout


# ---- docdexd.


class Daemon:
    """A docdexd serving the checkouts, in a home of its own under the cache."""

    def __init__(
        self, binary: Path, cache: Path, models_dir: str | None, static_only: bool = False, search: list[str] = ()
    ):
        self.binary = binary
        # Static-only indexes hold other vectors: a home of their own.
        self.home = cache / ("home-static" if static_only else "home")
        self.home.mkdir(parents=True, exist_ok=True)
        config = f"[embedding]\nmodel_vectors = {str(not static_only).lower()}\n"
        if search:
            config += "[search]\n" + "".join(f"{setting}\n" for setting in search)
        (self.home / "config.toml").write_text(config)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.env = {
            **os.environ,
            "DOCDEX_HOME": str(self.home),
            "DOCDEX_ALLOWED_ROOTS": str(cache / "sources"),
            "DOCDEX_HTTP_BIND_ADDR": f"127.0.0.1:{self.port}",
        }
        if models_dir:
            self.env["DOCDEX_MODELS_DIR"] = models_dir
        self.process = subprocess.Popen(
            [str(binary), "serve"], env=self.env, stdout=subprocess.DEVNULL, stderr=open(self.home / "daemon.log", "w")
        )
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{self.port}/healthz", timeout=1)
                break
            except urllib.error.HTTPError:
                break  # it answers (asking for the token it writes at start)
            except OSError:
                time.sleep(0.2)
        else:
            self.process.kill()
            raise SystemExit(f"docdexd did not start: see {self.home / 'daemon.log'}")
        self.token = (self.home / "token").read_text().strip()

    def index(self, root: Path, wait_embeddings: bool) -> dict:
        cmd = [str(self.binary), "index", "--repo", str(root), "--json"] + (["--wait"] if wait_embeddings else [])
        result = subprocess.run(cmd, env=self.env, capture_output=True, text=True)
        if result.returncode != 0:
            raise SystemExit(f"indexing {root} failed:\n{result.stdout}\n{result.stderr[-2000:]}")
        return json.loads(result.stdout)

    def search(self, root: Path, query: str, mode: str, among: list[Path] | None = None) -> tuple[list[str], str]:
        """The first TOP_K distinct files for `query` in `root`, or in one search over every
        repo of `among` (then another repo's file keeps its place as a miss)."""
        scope = {"repos": ",".join(str(r) for r in among)} if among else {"repo": str(root)}
        params = urllib.parse.urlencode({**scope, "q": query, "mode": mode, "limit": HITS_PER_QUERY})
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.port}/v1/search?{params}", headers={"Authorization": f"Bearer {self.token}"}
        )
        with urllib.request.urlopen(request, timeout=120) as response:
            body = json.load(response)
        files: list[str] = []
        for hit in body["hits"]:
            hit_root = Path(hit.get("repo") or root)
            path = str(hit_root / hit["path"]) if hit_root == root else f"(other repo) {hit_root.name}:{hit['path']}"
            if path not in files:
                files.append(path)
        return files[:TOP_K], body.get("mode", mode)

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()


# ---- The report.


def mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def fmt(value: float | None) -> str:
    return "  -  " if value is None else f"{value:.3f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "docdex-semble")
    parser.add_argument("--docdexd", type=Path, default=REPO_ROOT / "target" / "release" / "docdexd")
    parser.add_argument("--models-dir", default=os.environ.get("DOCDEX_MODELS_DIR"))
    parser.add_argument("--modes", default="lexical,hybrid", help="comma-separated: lexical, dense, hybrid")
    parser.add_argument("--repos", default="", help="comma-separated repo names (default: all)")
    parser.add_argument("--split", choices=["tune", "test", "all"], default="all")
    parser.add_argument("--verbose", action="store_true", help="print every query below 1.0 with its files")
    parser.add_argument("--json", type=Path, help="also write the per-query results here")
    parser.add_argument(
        "--search",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a [search] setting for the daemon, e.g. path_match_weight=0 (to measure one ranking part off)",
    )
    parser.add_argument(
        "--static-only", action="store_true", help="dense and hybrid on the static vectors alone (model_vectors = false)"
    )
    parser.add_argument(
        "--across",
        action="store_true",
        help="also ask every query of one search over all the selected repos (mode NAME@across)",
    )
    parser.add_argument(
        "--git-clones",
        type=Path,
        help="a folder of git clones (bare or not) named after each repo, for the repos fetched from git "
        "(default CACHE/git; a missing one is cloned there)",
    )
    parser.add_argument("--fetch-only", action="store_true", help="fetch the sources, check the annotations' files, stop")
    args = parser.parse_args()

    global GIT_CLONES
    GIT_CLONES = args.git_clones or args.cache / "git"
    sources = json.loads((HERE / "sources.json").read_text())["repos"]
    names = [n for n in sources if (not args.repos or n in args.repos.split(","))]
    names = [n for n in names if args.split == "all" or sources[n]["split"] == args.split]
    modes = [m for m in args.modes.split(",") if m]
    asked = modes + ([f"{m}@across" for m in modes] if args.across else [])
    if not args.fetch_only and not args.docdexd.exists():
        raise SystemExit(f"no docdexd at {args.docdexd}: cargo build --release, or --docdexd PATH")

    log(f"sources under {args.cache / 'sources'}")
    roots, checkouts = {}, {}
    for name in names:
        checkout = checkouts[name] = fetch_repo(name, sources[name], args.cache)
        roots[name] = (checkout / sources[name]["benchmark_root"]).resolve()
        tasks = load_tasks(name)
        targets = [t for task in tasks for t in task["targets"]]
        missing = sorted({t for t in targets if not (checkout / t).exists()})
        if missing:
            log(f"  {name}: {len(missing)} of {len(set(targets))} annotated files are not in this release: {missing[:5]}")
    if args.fetch_only:
        return 0

    daemon = Daemon(args.docdexd, args.cache, args.models_dir, args.static_only, args.search)
    rows: list[dict] = []
    try:
        for name in names:
            started = time.time()
            summary = daemon.index(roots[name], wait_embeddings=any(m != "lexical" for m in modes))
            log(f"{name}: indexed {summary.get('chunks_total')} chunks in {time.time() - started:.1f} s")
        for name in names:
            for task in load_tasks(name, checkouts[name]):
                for mode in asked:
                    plain, _, across = mode.partition("@")
                    among = list(roots.values()) if across else None
                    files, used = daemon.search(roots[name], task["query"], plain, among)
                    used = f"{used}@{across}" if across else used
                    score = ndcg_at_k(files, task["targets"])
                    rows.append({"repo": name, "mode": mode, "used": used, "category": task["category"],
                                 "query": task["query"], "ndcg10": score, "files": files, "targets": task["targets"]})
                    if args.verbose and score < 1.0:
                        shown = [os.path.relpath(f, args.cache / "sources" / name) for f in files[:5]]
                        log(f"  [{mode}] {score:.2f} {task['query']!r}\n      want {task['targets']}\n      got  {shown}")
    finally:
        daemon.stop()

    # Per repo and mode, then per category; published methods beside.
    published = HERE / "published.json"
    published = json.loads(published.read_text()) if published.exists() else {"methods": {}, "labels": {}}
    methods, labels = published["methods"], published.get("labels", {})
    modes = asked
    width = max(7, *(len(m) for m in modes))
    header = f"{'repo':<11} {'split':<5} {'n':>3}  " + "  ".join(f"{m:>{width}}" for m in modes)
    header += "  " + "  ".join(f"{labels.get(m, m)[:7]:>7}" for m in methods)
    print(header)
    for name in names:
        n = len(load_tasks(name))
        cells = [fmt(mean([r["ndcg10"] for r in rows if r["repo"] == name and r["mode"] == m])) for m in modes]
        cells += [fmt(methods[m].get(name, {}).get("ndcg10")) for m in methods]
        print(f"{name:<11} {sources[name]['split']:<5} {n:>3}  " + "  ".join(f"{c:>{width}}" for c in cells[: len(modes)]) + "  " + "  ".join(f"{c:>7}" for c in cells[len(modes):]))
    for split in ("tune", "test", "all"):
        picked = [n for n in names if split == "all" or sources[n]["split"] == split]
        if not picked or (split == "all" and len({sources[n]['split'] for n in names}) == 1):
            continue
        n = sum(len(load_tasks(p)) for p in picked)
        cells = [fmt(mean([r["ndcg10"] for r in rows if r["repo"] in picked and r["mode"] == m])) for m in modes]
        # Published numbers are per repo: weighted by each repo's queries, as a mean over queries.
        for m in methods:
            weighted = [(methods[m][p]["ndcg10"], len(load_tasks(p))) for p in picked if p in methods[m]]
            total = sum(w for _, w in weighted)
            cells.append(fmt(sum(v * w for v, w in weighted) / total if total else None))
        print(f"{'= ' + split:<11} {'':<5} {n:>3}  " + "  ".join(f"{c:>{width}}" for c in cells[: len(modes)]) + "  " + "  ".join(f"{c:>7}" for c in cells[len(modes):]))
    print()
    print(f"{'category':<13} {'n':>3}  " + "  ".join(f"{m:>{width}}" for m in modes) + "  " + "  ".join(f"{labels.get(m, m)[:7]:>7}" for m in methods))
    for category in CATEGORIES:
        n = sum(1 for r in rows if r["category"] == category and r["mode"] == modes[0])
        cells = [fmt(mean([r["ndcg10"] for r in rows if r["category"] == category and r["mode"] == m])) for m in modes]
        for m in methods:
            weighted = []
            for name in names:
                count = sum(1 for t in load_tasks(name) if t["category"] == category)
                value = methods[m].get(name, {}).get("by_category", {}).get(category)
                if count and value is not None:
                    weighted.append((value, count))
            total = sum(w for _, w in weighted)
            cells.append(fmt(sum(v * w for v, w in weighted) / total if total else None))
        print(f"{category:<13} {n:>3}  " + "  ".join(f"{c:>{width}}" for c in cells[: len(modes)]) + "  " + "  ".join(f"{c:>7}" for c in cells[len(modes):]))
    fallbacks = sorted({(r["mode"], r["used"]) for r in rows if r["mode"] != r["used"]})
    if fallbacks:
        print(f"\nnote: modes answered otherwise: {fallbacks} (embeddings missing?)")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
