"""The "no good match" threshold of the research page, chosen on dev propositions only.

    .venv/bin/python benchmarks/no_match.py [--index-dir .demo/index]

Searches the index (default: the one `make demo` builds over the bundled sample) with every dev proposition of the
bundled sample and of benchmarks/data/fresh-stance (hand-written, phrased as users phrase them; its relevant
decisions are mostly absent from the sample, which makes them true "nothing here answers it" cases), each asked
with its stance and k=5, as the page asks. A query has a good match when a relevant document is among its 5 hits.
The statistic is the page's own (citator.stance.brief.notice.best_match: the best base-encoder cosine among the
hits). Chosen: the threshold that flags the most queries without a good match while flagging at most 10% of the
queries that have one. The test split of fresh-stance-2 is never read. Writes benchmarks/results/no_match.json.
"""

from __future__ import annotations

import argparse
import json
import platform
from pathlib import Path
from typing import Any

from citator.data import write_json_atomic
from citator.stance.brief.index import StanceIndex
from citator.stance.brief.notice import THRESHOLD, best_match

ROOT = Path(__file__).resolve().parents[1]
SETS = {"sample": ROOT / "src" / "citator" / "samples" / "casefacts",
        "fresh-stance": ROOT / "benchmarks" / "data" / "fresh-stance"}
K = 5
MAX_FALSE_NOTICES = 0.10


def rows(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def measured(index: StanceIndex) -> list[dict[str, Any]]:
    """Per dev query: its set, whether a relevant document is in its top K, and the page's statistic."""
    out = []
    for name, folder in SETS.items():
        relevant = {g["query_id"]: set(g["relevant_doc_ids"]) for g in rows(folder / "ground_truth.jsonl")}
        for q in rows(folder / "queries.jsonl"):
            if q.get("split") != "dev":
                continue
            hits = index.search(q["text"], stance=q["stance"], k=K)
            good = any(h.doc_id in relevant.get(q["query_id"], set()) for h in hits)
            out.append({"set": name, "query_id": q["query_id"], "good": good, "best": best_match(hits)})
    return out


def rates(queries: list[dict[str, Any]], threshold: float) -> dict[str, float]:
    good = [q for q in queries if q["good"]]
    bad = [q for q in queries if not q["good"]]
    shown = [q for q in queries if q["best"] < threshold]
    return {"threshold": round(threshold, 3), "notice_on_bad": sum(q["best"] < threshold for q in bad) / max(len(bad), 1),
            "notice_on_good": sum(q["best"] < threshold for q in good) / max(len(good), 1),
            "precision": sum(not q["good"] for q in shown) / len(shown) if shown else 1.0}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--index-dir", type=Path, default=ROOT / ".demo" / "index")
    args = ap.parse_args()
    index = StanceIndex.open(args.index_dir)
    queries = [q for q in measured(index) if q["best"] is not None]
    grid = [round(0.20 + 0.01 * i, 2) for i in range(41)]
    table = [rates(queries, t) for t in grid]
    allowed = [r for r in table if r["notice_on_good"] <= MAX_FALSE_NOTICES]
    chosen = max(allowed, key=lambda r: (r["notice_on_bad"], -r["threshold"])) if allowed else None
    print(f"{len(queries)} dev queries ({sum(q['good'] for q in queries)} with a relevant document in the top {K})")
    print(f"{'threshold':>9} {'notice | no match':>18} {'notice | match':>15} {'precision':>9}")
    for r in table[::5]:
        print(f"{r['threshold']:>9.2f} {r['notice_on_bad']:>18.2f} {r['notice_on_good']:>15.2f} {r['precision']:>9.2f}")
    print(f"chosen threshold: {chosen and chosen['threshold']} ({chosen})  in the code: {THRESHOLD}")
    write_json_atomic(ROOT / "benchmarks" / "results" / "no_match.json", {
        "index_dir": str(args.index_dir), "k": K, "max_false_notices": MAX_FALSE_NOTICES, "queries": len(queries),
        "good": sum(q["good"] for q in queries), "chosen": chosen, "threshold_in_code": THRESHOLD, "grid": table,
        "by_set": {name: {"queries": sum(q["set"] == name for q in queries),
                          "good": sum(q["good"] for q in queries if q["set"] == name)} for name in SETS},
        "machine": f"{platform.machine()}, {platform.python_version()}"})


if __name__ == "__main__":
    main()
