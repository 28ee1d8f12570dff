"""Treatment extraction: precision and recall on the hand-labelled mentions, and the time to build the table.

    .venv/bin/python benchmarks/treatments.py [--test] [--errors]

Builds the treatment table of the whole CaseFacts corpus (its metadata's citations and dates carried in the
documents, as a build does) and scores it against benchmarks/data/treatments (see its PROVENANCE.md) on the dev
split; `--test` scores the held-out test split too (run once, at the end: nothing is chosen on it). `--errors`
lists dev's misses and false rows. Writes benchmarks/results/treatments.json.

Scoring. A row and a labelled mention agree when they have the same citing document, the same treatment and the
same cited decision (the same record, or records that share one reporter citation: cases decided together). Only
rows whose citing document is labelled are scored: those documents were labelled exhaustively, so every other
row of theirs is a false one. Recall counts the mentions whose case is in the corpus (a row can only point at a
corpus document); "recall, all" counts every mention, those of cases the corpus lacks as misses.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path
from typing import Any

from citator.data import read_corpus, write_json_atomic
from citator.data.records import Document
from citator.stance.treat import TREATMENTS, TreatmentTable, extract

ROOT = Path(__file__).resolve().parents[1]
LABELS = ROOT / "benchmarks" / "data" / "treatments"
CASEFACTS = ROOT.parent / "shared" / "data" / "stance" / "casefacts"
GROUPS = {**{t: (t,) for t in TREATMENTS}, "overrules+abrogates": ("overrules", "abrogates")}


def rows(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def documents(corpus: Path, metadata: Path) -> list[Document]:
    meta = {r["doc_id"]: r for r in rows(metadata)}
    out = []
    for d in read_corpus(corpus):
        m = meta.get(d.doc_id, {})
        extra = {k: m[k] for k in ("citation", "date") if isinstance(m.get(k), str)}
        out.append(Document(d.doc_id, d.title, d.text, {**d.extra, **extra}))
    return out


def score(table: TreatmentTable, split: str, citation: dict[str, str]) -> dict[str, Any]:
    docs = {r["doc_id"] for r in rows(LABELS / "docs.jsonl") if r["split"] == split}
    gold = [m for m in rows(LABELS / "mentions.jsonl") if m["split"] == split]
    predicted = [r for r in table.rows if r.citing_doc_id in docs]

    def same(a: str | None, b: str) -> bool:
        return a is not None and (a == b or (citation.get(a) is not None and citation.get(a) == citation.get(b)))

    out: dict[str, Any] = {}
    for name, kinds in GROUPS.items():
        g = [m for m in gold if m["treatment"] in kinds]
        p = [r for r in predicted if r.treatment in kinds]
        right = [r for r in p if any(m["citing_doc_id"] == r.citing_doc_id and same(m["cited_doc_id"], r.cited_doc_id)
                                     for m in g)]
        found = [m for m in g if any(m["citing_doc_id"] == r.citing_doc_id and same(m["cited_doc_id"], r.cited_doc_id)
                                     for r in p)]
        in_corpus = [m for m in g if m["cited_doc_id"] is not None]
        out[name] = {"mentions": len(g), "mentions_in_corpus": len(in_corpus), "rows": len(p), "right_rows": len(right),
                     "precision": len(right) / len(p) if p else None,
                     "recall": len(found) / len(in_corpus) if in_corpus else None,
                     "recall_all": len(found) / len(g) if g else None,
                     "false_rows": [(r.citing_doc_id, r.treatment, r.cited_doc_id, r.cited_as) for r in p
                                    if r not in right],
                     "missed": [(m["mention_id"], m["treatment"], m["cited_name"]) for m in in_corpus
                                if m not in found]}
    return out


def table_lines(split: str, result: dict[str, Any]) -> list[str]:
    def f(x: float | None) -> str:
        return "-" if x is None else f"{x:.2f}"

    lines = [f"{split}: treatment | mentions (in corpus) | rows | precision | recall | recall, all",
             "---|---:|---:|---:|---:|---:"]
    for name, r in result.items():
        lines.append(f"{name} | {r['mentions']} ({r['mentions_in_corpus']}) | {r['rows']} | {f(r['precision'])} | "
                     f"{f(r['recall'])} | {f(r['recall_all'])}")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", type=Path, default=CASEFACTS / "corpus.jsonl")
    ap.add_argument("--metadata", type=Path, default=CASEFACTS / "metadata.jsonl")
    ap.add_argument("--test", action="store_true", help="score the held-out test split too (once, at the end)")
    ap.add_argument("--errors", action="store_true", help="list dev's false rows and misses")
    args = ap.parse_args()
    docs = documents(args.corpus, args.metadata)
    start = time.perf_counter()
    table = extract(docs)
    seconds = time.perf_counter() - start
    citation = {d.doc_id: d.extra["citation"] for d in docs if "citation" in d.extra}
    results: dict[str, Any] = {"documents": len(docs), "rows": len(table), "extraction_seconds": round(seconds, 2),
                               "machine": f"{platform.machine()}, {__import__('os').cpu_count()} cores",
                               "command": "python benchmarks/treatments.py" + (" --test" if args.test else "")}
    for split in ("dev", "test") if args.test else ("dev",):
        results[split] = score(table, split, citation)
        print("\n".join(table_lines(split, results[split])), end="\n\n")
    if args.errors:
        for name in TREATMENTS:
            for row in results["dev"][name]["false_rows"]:
                print("false", *row, sep=" | ")
            for miss in results["dev"][name]["missed"]:
                print("missed", *miss, sep=" | ")
    print(f"{len(table)} rows from {len(docs)} documents in {seconds:.1f} s")
    for split in ("dev", "test"):
        for r in results.get(split, {}).values():
            r.pop("false_rows"), r.pop("missed")
    write_json_atomic(ROOT / "benchmarks" / "results" / "treatments.json", results)


if __name__ == "__main__":
    main()
