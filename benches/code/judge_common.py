"""Shared by judge_python.py and judge_typescript.py: the symbol sample and the JSON layout."""
import json
import random

SEED = 20240611


def sample(defs, counts, quota, seed=SEED):
    """Stratified random sample of definitions for the reference truth.

    Candidates: names of at least 3 characters that are not dunders (__x__). For each kind in
    `quota` (an ordered dict kind -> count), the kind's candidates are split at the median of
    their name's token count in the project (`counts`: identifier -> number of tokens spelling
    it) into "popular" (above the median) and "rare" (the rest); half the quota is drawn from
    each with random.Random(seed).sample, a short cell topped up from the other one. When a
    kind has fewer candidates than its quota, the shortfall is drawn at random from all
    remaining candidates of the kinds in `quota` (stratum taken from the same median split).
    Returns [(definition, stratum)] sorted by path, line, column."""
    rng = random.Random(seed)
    chosen = []
    strata = {}
    cands_all = []
    shortfall = 0
    for kind, q in quota.items():
        cands = [d for d in defs if d["kind"] == kind and len(d["name"]) >= 3
                 and not (d["name"].startswith("__") and d["name"].endswith("__"))]
        if not cands:
            shortfall += q
            continue
        cs = sorted(counts.get(d["name"], 0) for d in cands)
        median = cs[len(cs) // 2]
        popular = [d for d in cands if counts.get(d["name"], 0) > median]
        rare = [d for d in cands if counts.get(d["name"], 0) <= median]
        for d in popular:
            strata[id(d)] = "popular"
        for d in rare:
            strata[id(d)] = "rare"
        a = rng.sample(popular, min(q // 2, len(popular)))
        b = rng.sample(rare, min(q - len(a), len(rare)))
        if len(a) + len(b) < q:
            rest = [d for d in popular if d not in a]
            a += rng.sample(rest, min(q - len(a) - len(b), len(rest)))
        shortfall += q - len(a) - len(b)
        chosen += a + b
        cands_all += cands
    if shortfall:
        taken = set(id(d) for d in chosen)
        rest = [d for d in cands_all if id(d) not in taken]
        chosen += rng.sample(rest, min(shortfall, len(rest)))
    chosen.sort(key=lambda d: (d["path"], d["line"], d["column"]))
    return [(d, strata[id(d)]) for d in chosen]


def dump(obj):
    """JSON with one list element per line (readable diffs, small files)."""
    parts = []
    for k, v in obj.items():
        if isinstance(v, list) and v:
            body = ",\n".join(json.dumps(x, ensure_ascii=False) for x in v)
            parts.append(f"{json.dumps(k)}: [\n{body}\n]")
        else:
            parts.append(f"{json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}")
    return "{\n" + ",\n".join(parts) + "\n}\n"
