#!/usr/bin/env python3
"""Retrieval quality of SEARCH on the bilingual agent-memory set.

The set (tests/data/recall/): 200 memories (memories_en.tsv, memories_zh.tsv:
id, name, description) and 128 queries (queries.tsv: id, category, the
relevant memory ids, the query). Categories: en-para / zh-para (a paraphrase
in the memory's language), en-zh / zh-en (query language → memory language),
exact (a name or token as stored).

Loads the memories into a fresh nexus as concepts of type Memory, runs every
query in each mode (`kip exec --request`, one batch per mode, LIMIT 10) and
prints nDCG@10 and recall@10 (binary relevance) per mode and category, as
BENCHMARKS.md reports them.

    python3 scripts/bench/recall.py [--kip PATH] [--json OUT]

Needs the embedding model (scripts/setup-model.sh) for semantic and hybrid;
without it those rows equal keyword's and the engine warns.
"""
import argparse, json, math, os, subprocess, sys, tempfile, time
from collections import defaultdict

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../tests/data/recall")
MODES = ["keyword", "semantic", "hybrid"]


def rows(name):
    with open(os.path.join(HERE, name), encoding="utf-8") as f:
        return [line.rstrip("\n").split("\t") for line in f if line.strip()]


def kip(binary, db, request):
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False, encoding="utf-8") as f:
        json.dump(request, f, ensure_ascii=False)
    try:
        out = subprocess.run([binary, "--db", db, "exec", "--request", f.name],
                             capture_output=True, text=True, check=False)
    finally:
        os.unlink(f.name)
    if out.returncode not in (0, 1):
        sys.exit(f"kip failed: {out.stderr}")
    return json.loads(out.stdout)


def load(binary, db, memories):
    schema = 'UPSERT { CONCEPT ?t { {type: "$ConceptType", name: "Memory"} SET ATTRIBUTES { description: "Something remembered about the user." } } }'
    r = kip(binary, db, {"command": schema})
    assert "error" not in r, r
    commands = []
    for _, name, desc in memories:
        commands.append({"command": 'UPSERT { CONCEPT ?m { {type: "Memory", name: :n} SET ATTRIBUTES { description: :d } } }',
                         "parameters": {"n": name, "d": desc}})
    r = kip(binary, db, {"commands": commands})
    bad = [x for x in r["result"] if "error" in x]
    assert not bad, bad[:3]


def dcg(gains):
    return sum(g / math.log2(i + 2) for i, g in enumerate(gains))


def evaluate(binary, db, queries, by_name, mode):
    commands = [{"command": "SEARCH CONCEPT :q WITH TYPE \"Memory\" MODE :m LIMIT 10",
                 "parameters": {"q": q, "m": mode}} for _, _, _, q in queries]
    # One warm-up search loads the model before the clock starts.
    kip(binary, db, {"command": "SEARCH CONCEPT \"warm up\" LIMIT 1"})
    start = time.monotonic()
    r = kip(binary, db, {"commands": commands})
    seconds = time.monotonic() - start
    per = defaultdict(lambda: {"ndcg": [], "recall": []})
    misses = []
    for (qid, cat, rel, q), res in zip(queries, r["result"]):
        relevant = set(rel.split(","))
        got = [by_name.get(h["name"]) for h in res.get("result", [])]
        gains = [1 if g in relevant else 0 for g in got]
        ideal = dcg([1] * min(len(relevant), 10))
        nd = dcg(gains) / ideal if ideal else 0
        rc = len(relevant & set(got)) / len(relevant)
        for key in (cat, "all"):
            per[key]["ndcg"].append(nd)
            per[key]["recall"].append(rc)
        if rc == 0:
            misses.append((qid, cat, q))
    avg = lambda xs: sum(xs) / len(xs) if xs else 0
    table = {k: {"ndcg@10": avg(v["ndcg"]), "recall@10": avg(v["recall"]), "queries": len(v["ndcg"])}
             for k, v in per.items()}
    return table, seconds, misses


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kip", default="kip")
    ap.add_argument("--json")
    ap.add_argument("--misses", action="store_true", help="list the queries a mode missed entirely")
    args = ap.parse_args()
    memories = rows("memories_en.tsv") + rows("memories_zh.tsv")
    queries = rows("queries.tsv")
    by_name = {name: mid for mid, name, _ in memories}
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "nexus")
        load(args.kip, db, memories)
        results = {}
        for mode in MODES:
            table, seconds, misses = evaluate(args.kip, db, queries, by_name, mode)
            results[mode] = {"table": table, "ms_per_query": 1000 * seconds / len(queries), "misses": misses}
    cats = ["all", "en-para", "zh-para", "en-zh", "zh-en", "exact"]
    print(f"{len(memories)} memories, {len(queries)} queries\n")
    print("| mode | " + " | ".join(cats) + " | ms/query |")
    print("|---|" + "---|" * (len(cats) + 1))
    for mode in MODES:
        t = results[mode]["table"]
        cells = [f"{t[c]['ndcg@10']:.3f} / {t[c]['recall@10']:.3f}" for c in cats]
        print(f"| {mode} | " + " | ".join(cells) + f" | {results[mode]['ms_per_query']:.0f} |")
    print("\n(each cell: nDCG@10 / recall@10)")
    if args.misses:
        for mode in MODES:
            print(f"\n{mode} missed:", *[f"{q} ({c}) {t}" for q, c, t in results[mode]["misses"]], sep="\n  ")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(results, f, ensure_ascii=False, indent=1)


if __name__ == "__main__":
    main()
