"""Probes, not shipped parts: how far can reordering the top 100 take the overruled pairs, and the stance contrast.

On CaseFacts dev's overruled propositions (55 asked with both stances), with the shipped artifacts but the memory
cut back to train's propositions (the first `memory_entries` of the shipped memory, as during selection; the shipped
one also holds dev's and would flatter dev), in an index built here from those artifacts:

1. where the requested stance's document sits: in the top 10 and in the top 100 of each query (the learned
   ranker's depth), and in the union of both queries' top 100 (what the contrast reorders), which bound what any
   reordering of them can reach;
2. the stance contrast at each weight of `citator.retrieve.contrast.GRID` (this must reproduce the manifest's
   `stance_contrast_dev`), and two variants not built: the lean read from the ranker's logits or from ranks
   instead of scores;
3. refuter slots: how many documents train's memory knows as refuters, how often each query's own document is
   one, and citator train's joint choice of weight and slots (this must reproduce the manifest's table too);
4. the same settings on two halves of these pairs: those whose refuting case train's memory knows as a refuter and
   those whose refuting case it does not (the slots are a closed-world prior: what they do to the second half is
   what they do where the refuting cases are new).

    .venv/bin/python benchmarks/experiments/contrast_probes.py

Needs `make artifacts`. Builds benchmarks/work/learning/casefacts/train-memory/{artifacts,index} (about 4 minutes
the first time); reads train and dev only. Output in benchmarks/results/contrast_probes.log.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import numpy as np

from citator.data import Qrels
from citator.evaluate import evaluate
from citator.learn import train as T
from citator.retrieve import contrast
from citator.retrieve.index_dir import build_index
from citator.retrieve.artifacts import read_artifacts
from citator.retrieve.searcher import StanceSearcher
from citator.evaluate.stance_discrimination import first_rank, paired_queries, stance_discrimination

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT.parent / "shared" / "data" / "stance" / "casefacts"
ARTIFACTS = ROOT / "artifacts"
WORK = ROOT / "benchmarks" / "work" / "learning" / "casefacts" / "train-memory"


def train_memory_artifacts() -> Path:
    out = WORK / "artifacts"
    manifest = json.loads((ARTIFACTS / "manifest.json").read_text())
    if (out / "manifest.json").is_file() and json.loads((out / "manifest.json").read_text())["source"] == manifest:
        return out
    shutil.rmtree(out, ignore_errors=True)
    (out / "memory").mkdir(parents=True)
    shutil.copytree(ARTIFACTS / "encoder", out / "encoder")
    shutil.copy(ARTIFACTS / "ranker.json", out / "ranker.json")
    n = manifest["training"]["memory_entries"]  # train's; dev's were appended after selection
    lines = (ARTIFACTS / "memory" / "memory.jsonl").read_text().splitlines()[:n]
    (out / "memory" / "memory.jsonl").write_text("\n".join(lines) + "\n")
    np.save(out / "memory" / "memory_vectors.npy", np.load(ARTIFACTS / "memory" / "memory_vectors.npy")[:n])
    for name in ("document_deltas.jsonl", "document_deltas.npy"):
        shutil.copy(ARTIFACTS / "memory" / name, out / "memory" / name)
    trimmed = {**manifest, "training": {k: v for k, v in manifest["training"].items() if k != "memory_entries_from_dev"}}
    (out / "manifest.json").write_text(json.dumps({**trimmed, "source": manifest}))
    return out


def train_memory_searcher() -> StanceSearcher:
    """A searcher over an index built (here, once per training) from train_memory_artifacts()."""
    artifacts = train_memory_artifacts()
    index = WORK / "index"
    try:
        return StanceSearcher(index)
    except Exception:  # none yet, or built from artifacts retrained since
        shutil.rmtree(index, ignore_errors=True)
        build_index(DATA / "corpus.jsonl", index, artifacts=read_artifacts(artifacts), progress=True)
        return StanceSearcher(index)


def dev_probe_setup() -> tuple[StanceSearcher, float, int, list, Qrels]:
    """The train-memory searcher with its contrast and slots turned off, the shipped weight and slots, and dev's
    queries (main and overruled) with their ground truth."""
    searcher = train_memory_searcher()
    shipped, slots = searcher.config.stance_contrast, searcher.config.refuter_slots
    # The index carries the artifacts' contrast weight and refuter slots; the probe starts from the fusion without.
    searcher.config = dataclasses.replace(searcher.config, stance_contrast=0.0, refuter_slots=0)
    sets = [(DATA / "queries.jsonl", DATA / "ground_truth.jsonl"),
            (DATA / "queries_overruled.jsonl", DATA / "ground_truth_overruled.jsonl")]
    dev_q, dev_qrels = T.load_labeled(sets, "dev")
    return searcher, shipped, slots, dev_q, dev_qrels


def main() -> None:
    searcher, shipped, slots, dev_q, dev_qrels = dev_probe_setup()
    memory_props = {json.loads(line)["proposition_id"] for line in (searcher.index_dir / searcher.manifest.data_dir / "memory" /
                                                                       "memory.jsonl").open()}
    assert not memory_props & {q.extra["proposition_id"] for q in dev_q}, "dev propositions in the memory"
    run10 = {r.query_id: r.doc_ids for r in searcher.search(dev_q, k=10)}
    print(f"dev NDCG@10, all {len(dev_q)} queries, train-only memory: "
          f"{evaluate(dev_qrels, run10, ['ndcg@10'])['ndcg@10']:.4f} (citator train's LambdaMART dev figure)")
    searcher.config = dataclasses.replace(searcher.config, stance_contrast=shipped, refuter_slots=slots)
    run10 = {r.query_id: r.doc_ids for r in searcher.search(dev_q, k=10)}
    print(f"   with the shipped stance contrast and refuter slots (weight {shipped:g}, {slots} slots): "
          f"{evaluate(dev_qrels, run10, ['ndcg@10'])['ndcg@10']:.4f}")
    searcher.config = dataclasses.replace(searcher.config, stance_contrast=0.0, refuter_slots=0)

    pairs = paired_queries(dev_q)
    both = [q for pair in pairs for q in pair]
    deep = searcher.search(both, k=contrast.DEPTH)
    idx = np.array([[searcher.doc_ids.index(d.doc_id) for d in r.results] for r in deep])
    scores = np.array([[d.score for d in r.results] for r in deep], dtype=np.float32)
    ranks = {r.query_id: r.doc_ids for r in deep}

    print(f"\n1. {len(pairs)} dev propositions asked with both stances: where each query's own document sits")
    for name, own in (("supported", 0), ("refuted", 1)):
        at, union = [], []
        for pair in pairs:
            mine = dev_qrels.relevant(pair[own].query_id) - dev_qrels.relevant(pair[1 - own].query_id)
            at.append(first_rank(ranks[pair[own].query_id], mine))
            union.append(bool(mine & (set(ranks[pair[0].query_id]) | set(ranks[pair[1].query_id]))))
        at_ = np.array(at)
        print(f"   {name:9s} query: own document in its top 10 {np.mean(at_ < 10):.3f}, in its top 100 "
              f"{np.mean(at_ < 100):.3f}, in the union of both queries' top 100 {np.mean(union):.3f}")
    print("   a reordering of a query's top 100 (or, for the contrast, of the union) cannot make a query win whose own\n"
          "   document is not in it")

    def report(label: str, moved_idx: np.ndarray) -> None:
        run = {q.query_id: [searcher.doc_ids[j] for j in row[:10]] for q, row in zip(both, moved_idx.tolist())}
        found = stance_discrimination(both, dev_qrels, run)
        print(f"   {label:22s} strict NDCG sup {found.strict_ndcg['supported']:.4f} ref {found.strict_ndcg['refuted']:.4f} "
              f"mean {np.mean(list(found.strict_ndcg.values())):.4f}  outranks {found.outranks_rate:.3f} "
              f"(sup {found.outranks_by_stance['supported']:.3f}, ref {found.outranks_by_stance['refuted']:.3f})")

    print("\n2. stance contrast on these pairs' top 100 (the lean read from the fused scores, as shipped)")
    for weight in contrast.GRID:
        report(f"weight {weight:g}", contrast.contrast_top(idx, scores, both, weight)[0])
    print("   variants, not built: the lean read from the ranker's logits, or from ranks (0 = first)")
    p = np.clip(scores.astype(np.float64) - 1.0, 1e-6, 1 - 1e-6)  # the learned fusion's scores are sigmoid + 1
    logits = np.log(p / (1 - p))
    for weight in (0.5, 1.0, 2.0, 3.0):
        report(f"logit lean, weight {weight:g}", contrast.contrast_top(idx, logits, both, weight)[0])
    rank_scores = -np.tile(np.arange(idx.shape[1], dtype=np.float64), (len(both), 1))
    for weight in (0.5, 1.0, 2.0):
        report(f"rank lean, weight {weight:g}", contrast.contrast_top(idx, rank_scores, both, weight)[0])


    print("\n3. refuter slots (the fused order over all documents, as citator train and run.sh read it)")
    refuters = contrast.known_refuters(searcher.citations)
    ids = np.array(searcher.doc_ids)
    print(f"   refuters known to train's memory: {int(refuters.sum())} of {len(ids)} documents")
    for name, own in (("supported", 0), ("refuted", 1)):
        share = np.mean([bool(set(ids[refuters]) & (dev_qrels.relevant(p[own].query_id) - dev_qrels.relevant(p[1 - own].query_id)))
                         for p in pairs])
        print(f"   {name:9s} query: own document is a refuter for {share:.3f} of the pairs")
    encoded = searcher.encode(both)
    fused = searcher.fuse(searcher.signal_matrices(both, searcher.needed_signals(), encoded), both, encoded=encoded)
    weight, chosen, table = T.choose_contrast(both, dev_qrels, searcher.doc_ids, fused, refuters)
    for key, v in table.items():
        print(f"   weight {v['weight']:<4g} slots {v['slots']:>2}: strict NDCG mean {v['strict_ndcg@10']:.4f}  "
              f"outranks {v['outranks']:.3f}")
    print(f"   chosen: weight {weight:g}, {chosen} slots (the manifest: {shipped:g}, {slots})")
    assert (weight, chosen) == (shipped, slots), "the probe does not reproduce citator train's choice"

    print("\n4. by whether the refuting case is a known refuter (run.sh's answers at each setting)")
    known_ids = set(ids[refuters])
    groups = {True: [], False: []}
    for pair in pairs:
        refuting = dev_qrels.relevant(pair[1].query_id) - dev_qrels.relevant(pair[0].query_id)
        groups[bool(refuting & known_ids)].append(pair)
    settings = [(0.0, 0), (2.0, 0), (shipped, 0), (shipped, slots)]
    runs = {}
    for w, m in settings:
        searcher.config = dataclasses.replace(searcher.config, stance_contrast=w, refuter_slots=m)
        runs[w, m] = {r.query_id: r.doc_ids for r in searcher.search(both, k=10)}
    for known, group in groups.items():
        queries = [q for pair in group for q in pair]
        at = np.array([first_rank(ranks[pair[1].query_id],
                                  dev_qrels.relevant(pair[1].query_id) - dev_qrels.relevant(pair[0].query_id))
                       for pair in group])
        print(f"   refuting case {'known' if known else 'not known'} to train's memory: {len(group)} pairs; "
              f"without contrast or slots it is in the refuted query's top 10 for {int(np.sum(at < 10))}, top 100 for "
              f"{int(np.sum(at < 100))} (median place there {np.median(at[at < 100]) + 1:g})")
        for w, m in settings:
            found = stance_discrimination(queries, dev_qrels, runs[w, m])
            print(f"   weight {w:<4g} slots {m:>2}: strict NDCG sup {found.strict_ndcg['supported']:.4f} "
                  f"ref {found.strict_ndcg['refuted']:.4f} mean {np.mean(list(found.strict_ndcg.values())):.4f}  "
                  f"outranks {found.outranks_rate:.3f} (sup {found.outranks_by_stance['supported']:.3f}, "
                  f"ref {found.outranks_by_stance['refuted']:.3f})")


if __name__ == "__main__":
    main()
