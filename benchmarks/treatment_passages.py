"""Treatment extraction on fresh passages written by outside reviewers in the ways full opinions, summaries and
law reviews talk about precedent, most of them traps (another decision's overruling told as history, a party's
plea, a lower court's ruling). See benchmarks/data/treatment-passages/PROVENANCE.md for who wrote each set, when,
and which were used to make choices (dev) and which was scored once (held out).

    .venv/bin/python benchmarks/treatment_passages.py [--errors]

Each passage is read as the text of a later decision over a corpus of the set's cases. Red flags are scored per
case: a red row (overrules or abrogates) is right when the passage's labels make that case red. The other
treatments a passage requires are counted found or missed; a non-red row neither required nor allowed is counted
as spurious (it shows as a false "cited by" entry, never as a flag). Writes
benchmarks/results/treatment_passages.json.
"""

from __future__ import annotations

import argparse
import json
import platform
from pathlib import Path
from typing import Any

from citator.data import write_json_atomic
from citator.data.records import Document
from citator.stance.treat import extract

ROOT = Path(__file__).resolve().parents[1]
SETS = ROOT / "benchmarks" / "data" / "treatment-passages"
RED = ("overrules", "abrogates")
ROLE = {"review-1": "dev", "review-2": "dev", "review-3": "dev", "review-4": "held out"}


def lines(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def read(cases: list[dict[str, Any]], text: str) -> set[tuple[str, str]]:
    docs = [Document(c["doc_id"], c["title"], f"Facts of the case: {c['title']} was decided.",
                     {"date": c["date"], "citation": c["citation"]}) for c in cases]
    docs.append(Document("new", "Smith v. Jones", text, {"date": "2021-01-01"}))
    return {(r.cited_doc_id, r.treatment) for r in extract(docs).by("new")}


def score(folder: Path) -> dict[str, Any]:
    cases, passages = lines(folder / "cases.jsonl"), lines(folder / "passages.jsonl")
    tp = fp = fn = found = required = spurious = 0
    errors = []
    for p in passages:
        got = read(cases, p["text"])
        expected = {(c, t) for c, t in p["expected"]}
        allowed = expected | {(c, t) for c, t in p["acceptable"]}
        want_red = {c for c, t in expected if t in RED}
        got_red = {c for c, t in got if t in RED}
        tp, fp, fn = tp + len(got_red & want_red), fp + len(got_red - want_red), fn + len(want_red - got_red)
        need = {(c, t) for c, t in expected if t not in RED}
        required, found = required + len(need), found + len(need & got)
        extra = {(c, t) for c, t in got if t not in RED and (c, t) not in allowed}
        spurious += len(extra)
        if got_red != want_red or need - got or extra:
            errors.append((p["id"], p["text"], sorted(expected), sorted(got)))
    return {"passages": len(passages), "cases": len(cases), "red_expected": tp + fn, "red_rows": tp + fp,
            "red_precision": tp / (tp + fp) if tp + fp else None, "red_recall": tp / (tp + fn) if tp + fn else None,
            "other_required": required, "other_found": found, "other_spurious": spurious, "errors": errors}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--errors", action="store_true", help="list every passage read otherwise than labelled")
    args = ap.parse_args()
    results: dict[str, Any] = {"machine": f"{platform.machine()}, {__import__('os').cpu_count()} cores",
                               "command": "python benchmarks/treatment_passages.py", "sets": {}}
    print("set | role | passages | red labelled | red rows | precision | recall | other rows found | spurious")
    print("---|---|---:|---:|---:|---:|---:|---:|---:")
    for folder in sorted(p for p in SETS.iterdir() if (p / "passages.jsonl").is_file()):
        r = score(folder)
        role = ROLE.get(folder.name, "?")
        print(f"{folder.name} | {role} | {r['passages']} | {r['red_expected']} | {r['red_rows']} | "
              f"{r['red_precision']:.2f} | {r['red_recall']:.2f} | {r['other_found']}/{r['other_required']} | "
              f"{r['other_spurious']}")
        if args.errors:
            for row in r["errors"]:
                print("   ", *row, sep=" | ")
        r.pop("errors")
        results["sets"][folder.name] = {"role": role, **r}
    write_json_atomic(ROOT / "benchmarks" / "results" / "treatment_passages.json", results)


if __name__ == "__main__":
    main()
