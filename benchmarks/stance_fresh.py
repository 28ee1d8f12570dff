"""Stance retrieval beyond CaseFacts' construction: one table of NDCG@10 for plain bm25s, citator without artifacts
and citator with artifacts trained by `citator train`'s defaults (as shipped, with the opt-in stance contrast at the
weight that scored best on CaseFacts dev, and with the opt-in refuter slots), on CaseFacts dev and test, the fresh hand-written set
(benchmarks/data/fresh-stance/, over the CaseFacts corpus) and Climate-FEVER test.

    .venv/bin/python benchmarks/stance_fresh.py [--artifacts casefacts=artifacts climate-fever=DIR]

Artifacts not given are trained first, with `citator train` and no setting but the data (what `make artifacts`
runs), into benchmarks/work/learning/NAME/artifacts (the folder benchmarks/learning.py uses). Indexes go under
benchmarks/work/fresh/ (git-ignored). CaseFacts dev for the trained rows is the figure `citator train` measured
on dev before dev's propositions joined the shipped memory (searching dev with that memory would find dev's own
propositions); every other cell is searched here. Nothing here chooses anything: `test` splits are only reported.
Writes benchmarks/results/stance_fresh.json.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from citator.data import Query, read_corpus, read_ground_truth, read_queries, write_json_atomic
from citator.evaluate import per_query
from citator.stance.retrieve.model import StanceModel

ROOT = Path(__file__).resolve().parents[1]
WORK = ROOT / "benchmarks" / "work"
DATA = ROOT.parent / "shared" / "data" / "stance"
FRESH = ROOT / "benchmarks" / "data" / "fresh-stance"
# Refuter slots for the opt-in row: the number `citator train` used to choose on CaseFacts dev.
OPT_IN_SLOTS = 10
KINDS = ("newer", "older", "single", "plain")

sys.path.insert(0, str(ROOT / "benchmarks"))
from learning import best_on_dev, machine  # noqa: E402
from stance import plain_bm25s  # noqa: E402


def kind_of(query: Query) -> str:
    """The fresh set's kind, from its proposition id: fresh-KIND-NN."""
    return str(query.extra.get("proposition_id", "")).split("-")[1]


def ndcg(qrels, queries: Sequence[Query], run: dict[str, list[str]]) -> dict[str, float]:  # type: ignore[no-untyped-def]
    return per_query(qrels, run, ["ndcg@10"], [q.query_id for q in queries])["ndcg@10"]


def mean(values: dict[str, float], queries: Sequence[Query]) -> float:
    return float(np.mean([values[q.query_id] for q in queries])) if queries else float("nan")


def fresh_cells(qrels, queries: Sequence[Query], run: dict[str, list[str]]) -> dict[str, float]:  # type: ignore[no-untyped-def]
    """Overall; two-sided (newer + older) supported and refuted; each kind over all its queries."""
    values = ndcg(qrels, queries, run)
    two = [q for q in queries if kind_of(q) in ("newer", "older")]
    out = {"overall": mean(values, queries),
           "two-sided supported": mean(values, [q for q in two if q.stance == "supported"]),
           "two-sided refuted": mean(values, [q for q in two if q.stance == "refuted"])}
    for kind in KINDS:
        out[kind] = mean(values, [q for q in queries if kind_of(q) == kind])
    for kind in ("newer", "older"):
        for stance in ("supported", "refuted"):
            out[f"{kind} {stance}"] = mean(values, [q for q in queries if kind_of(q) == kind and q.stance == stance])
    return out


def citator(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "citator.cli.main", *args], check=True)


def artifacts_dir(name: str, given: dict[str, str]) -> Path:
    return Path(given[name]).absolute() if name in given else WORK / "learning" / name / "artifacts"


def train(name: str, out: Path) -> None:
    """`citator train` with no setting but the data (what `make artifacts` runs for CaseFacts)."""
    folder = DATA / name
    args = ["train", "--corpus", str(folder / "corpus.jsonl"), "--out", str(out)]
    for q, g in [("queries.jsonl", "ground_truth.jsonl")] + (
            [("queries_overruled.jsonl", "ground_truth_overruled.jsonl")] if name == "casefacts" else []):
        args += ["--queries", str(folder / q), "--ground-truth", str(folder / g)]
    citator(*args)


def cached_passages(name: str, artifacts: Path):  # type: ignore[no-untyped-def]
    """The base passages `citator train` cached for NAME's corpus in the artifacts' work folder (there as soon as
    training has encoded them, finished or not), else None."""
    from citator.data.hashing import sha256_file
    from citator.models.fingerprint import model_fingerprint
    from citator.models.load import default_encoder_path
    from citator.stance.retrieve.passage_store import PassageStore

    return PassageStore(artifacts / "work").get(sha256_file(DATA / name / "corpus.jsonl"),
                                                model_fingerprint(default_encoder_path()))


def index(name: str, artifacts: Path, trained_index: bool, encode: bool) -> Path | None:
    """An index of NAME's corpus, with the artifacts or without them, built once, from the base passages training
    cached (the same numbers a build would encode); without them it encodes the corpus, or with `encode` False
    gives None."""
    from citator.stance.retrieve.index_dir import BuildOptions
    from citator.stance.workload import build

    path = WORK / "fresh" / name / ("trained" if trained_index else "untrained")
    if not (path / "manifest.json").is_file():
        passages = cached_passages(name, artifacts)
        if passages is None and not encode:
            return None
        model = StanceModel.load(artifacts) if trained_index else None
        build(DATA / name / "corpus.jsonl", path, BuildOptions(artifacts=model, passages=passages), serve=False)
    return path


def runs(searcher, queries: Sequence[Query], variants: dict[str, dict]) -> dict[str, dict[str, list[str]]]:  # type: ignore[no-untyped-def, type-arg]
    """Each variant's run: the searcher's config with the variant's fields replaced, all queries in one batch (so
    texts asked with both stances meet, as run.sh's batches do)."""
    shipped, out = searcher.config, {}
    for label, change in variants.items():
        searcher.config = dataclasses.replace(shipped, **change)
        out[label] = {r.query_id: r.doc_ids for r in searcher.search(list(queries), 10)}
    searcher.config = shipped
    return out


def main() -> None:
    from citator.stance.retrieve.searcher import StanceSearcher

    ap = argparse.ArgumentParser()
    ap.add_argument("--artifacts", nargs="*", default=[],
                    help="NAME=DIR (casefacts, climate-fever): artifacts to measure (default: train them into "
                         "benchmarks/work/learning/NAME/artifacts)")
    ap.add_argument("--untrained-only", action="store_true",
                    help="no trained rows (and no training); the hybrid only where training has cached the base "
                         "passages (else n/a): a quick measurement on a busy machine")
    args = ap.parse_args()
    given = dict(a.split("=", 1) for a in args.artifacts)
    cf = DATA / "casefacts"
    cf_corpus = read_corpus(cf / "corpus.jsonl")
    cf_all = read_queries(cf / "queries.jsonl")
    cf_qrels = read_ground_truth(cf / "ground_truth.jsonl")
    cf_sets = {"CaseFacts dev": [q for q in cf_all if q.split == "dev"],
               "CaseFacts test": [q for q in cf_all if q.split == "test"]}
    fresh_q, fresh_qrels = read_queries(FRESH / "queries.jsonl"), read_ground_truth(FRESH / "ground_truth.jsonl")
    cl = DATA / "climate-fever"
    cl_corpus = read_corpus(cl / "corpus.jsonl")
    cl_q = [q for q in read_queries(cl / "queries.jsonl") if q.split == "test"]
    cl_qrels = read_ground_truth(cl / "ground_truth.jsonl")
    cf_art, cl_art = artifacts_dir("casefacts", given), artifacts_dir("climate-fever", given)
    if not args.untrained_only:
        for name, art in (("casefacts", cf_art), ("climate-fever", cl_art)):
            if not (art / "manifest.json").is_file() or not json.loads((art / "manifest.json").read_text()).get("complete"):
                train(name, art)
    table: dict[str, dict[str, float]] = {}
    nan = float("nan")

    def row(label: str, cf_runs: dict[str, dict[str, list[str]]], fresh_run, cl_run) -> None:  # type: ignore[no-untyped-def]
        cells = {name: mean(ndcg(cf_qrels, qs, cf_runs[name]), qs) if name in cf_runs else nan
                 for name, qs in cf_sets.items()}
        fresh = fresh_cells(fresh_qrels, fresh_q, fresh_run) if fresh_run is not None else {}
        cells.update({f"fresh {k}": v for k, v in fresh.items()})
        cells["Climate-FEVER test"] = mean(ndcg(cl_qrels, cl_q, cl_run), cl_q) if cl_run is not None else nan
        table[label] = cells

    cf_queries = cf_sets["CaseFacts dev"] + cf_sets["CaseFacts test"]
    bm = plain_bm25s(cf_corpus, cf_queries + fresh_q)
    row("plain bm25s", {k: bm for k in cf_sets}, bm, plain_bm25s(cl_corpus, cl_q))

    plain = {"default": {}}
    encode = not args.untrained_only
    base_cf, base_cl = index("casefacts", cf_art, False, encode), index("climate-fever", cl_art, False, encode)
    cf_run = runs(StanceSearcher(base_cf), cf_queries + fresh_q, plain)["default"] if base_cf else None
    cl_run = runs(StanceSearcher(base_cl), cl_q, plain)["default"] if base_cl else None
    row("citator, no artifacts (hybrid)", {k: cf_run for k in cf_sets} if cf_run else {}, cf_run, cl_run)

    report: dict = {"command": "benchmarks/stance_fresh.py " + " ".join(sys.argv[1:]), "machine": machine(),  # type: ignore[type-arg]
                    "fresh_set": {"propositions": len({q.extra.get("proposition_id") for q in fresh_q}),
                                  "queries": len(fresh_q)}}
    if not args.untrained_only:
        tuned_cf = StanceSearcher(index("casefacts", cf_art, True, True))
        tuned_cl = StanceSearcher(index("climate-fever", cl_art, True, True))
        cf_model = StanceModel.load(cf_art)
        contrast_cf = best_on_dev(cf_model)
        variants = {"citator trained (train's defaults)": {},
                    f"citator trained + opt-in stance contrast {contrast_cf:g} (CaseFacts dev's best)":
                        {"stance_contrast": contrast_cf},
                    f"citator trained + opt-in refuter slots ({OPT_IN_SLOTS}, CaseFacts prior)":
                        {"refuter_slots": OPT_IN_SLOTS}}
        cf_runs = runs(tuned_cf, cf_sets["CaseFacts test"] + fresh_q, variants)
        cl_runs = runs(tuned_cl, cl_q, variants)
        dev_trained = cf_model.report["dev_ndcg@10"]
        for label in variants:
            row(label, {"CaseFacts test": cf_runs[label]}, cf_runs[label], cl_runs[label])
            # The chosen fusion is the best on dev; the manifest keeps every candidate's dev figure.
            table[label]["CaseFacts dev"] = max(v for k, v in dev_trained["fusions"].items()
                                                if k != "untrained_hybrid")
        report["casefacts_artifacts"] = {"path": str(cf_art), "fusion": cf_model.fusion,
                                         "stance_contrast": contrast_cf, "finetune": cf_model.report["finetune"],
                                         "stance_contrast_dev": cf_model.report["stance_contrast"]["dev"],
                                         "dev_ndcg@10": dev_trained}
        report["climate_fever_artifacts"] = {"path": str(cl_art)}
    # A cell this run could not measure is null (JSON has no NaN).
    report["ndcg@10"] = {label: {k: None if np.isnan(v) else v for k, v in cells.items()} for label, cells in table.items()}
    write_json_atomic(ROOT / "benchmarks" / "results" / "stance_fresh.json", report)
    columns = list(table["plain bm25s"])
    print("NDCG@10 (CaseFacts dev of trained rows: citator train's own dev figure, before dev joined the memory)")
    print("| model | " + " | ".join(columns) + " |")
    print("|---" * (len(columns) + 1) + "|")
    for label, cells in table.items():
        print(f"| {label} | " + " | ".join("n/a" if np.isnan(cells.get(c, nan)) else f"{cells[c]:.3f}"
                                          for c in columns) + " |")


if __name__ == "__main__":
    main()
