"""Workload 1 with learned artifacts: NDCG@10 on `test` for BM25, dense, hybrid, +fine-tuned encoder, +memory,
+learned fusion; stance discrimination on propositions asked with both stances; training time, artifact size,
build time and run.sh time.

    .venv/bin/python benchmarks/learning.py [--datasets casefacts scifact climate-fever] [--artifacts NAME=DIR ...]
                                            [--reuse-passages]

Artifacts missing for a dataset are trained first with `citator train` on its train split (dev for selection),
reusing the passage vectors of benchmarks/work/NAME/index (built by benchmarks/stance.py) when present.
The build takes the base passages that training left in the artifacts' work folder when they are there (recorded
as build_reused_passages "training"), or with --reuse-passages those of the index already in the work folder
("index"); otherwise it encodes the corpus (false). Nothing here reads a test split before the artifacts are final.
Writes benchmarks/results/learning.json.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from citator.data import Qrels, read_ground_truth, read_queries, write_json_atomic, write_queries
from citator.evaluate import per_query, reward
from citator.evaluate.stance_discrimination import stance_discrimination

ROOT = Path(__file__).resolve().parents[1]
WORK = ROOT / "benchmarks" / "work"
DATA = ROOT.parent / "shared" / "data" / "stance"
EXTRA_SETS = {"casefacts": [("queries_overruled.jsonl", "ground_truth_overruled.jsonl")]}


def citator(*args: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "citator.cli.main", *args], check=True)
    return time.perf_counter() - start


def machine() -> str:
    """Cores, CPU model and its widest vector units: the timings here differ about twofold between this project's
    AVX-512/AMX machines and its AVX2-only ones."""
    model, flags = "unknown CPU", set()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "model name":
                model = value.strip()
            elif key.strip() == "flags":
                flags = set(value.split())
                break
    except OSError:
        pass
    units = [name for flag, name in (("avx512f", "AVX-512"), ("avx512_vnni", "VNNI"), ("amx_tile", "AMX"))
             if flag in flags] or (["AVX2"] if "avx2" in flags else [])
    return f"{os.cpu_count()} cores, {model} ({', '.join(units) or 'no AVX2'}), no GPU"


def dir_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def labeled(folder: Path, name: str) -> tuple[list, list, Qrels]:  # type: ignore[type-arg]
    """Test queries of the main file, test queries of the extra (both-stance) files, and all their judgments."""
    main = [q for q in read_queries(folder / "queries.jsonl") if q.split == "test"]
    grades = {k: dict(v) for k, v in read_ground_truth(folder / "ground_truth.jsonl").grades.items()}
    extra = []
    for q, g in EXTRA_SETS.get(name, []):
        extra += [x for x in read_queries(folder / q) if x.split == "test"]
        grades.update({k: dict(v) for k, v in read_ground_truth(folder / g).grades.items()})
    return main, extra, Qrels.from_dict(grades)


def systems(searcher, queries) -> dict[str, np.ndarray]:  # type: ignore[no-untyped-def]
    from citator.engines.fusion import interpolate
    from citator.stance.retrieve.config import RetrievalConfig

    names = searcher.available_signals()
    encoded = searcher.encode(queries)
    table = searcher.features(queries, names, encoded)
    signals = table.signals
    base = RetrievalConfig().weights
    ft = {k: v for k, v in base.items() if k != "dense"} | {"ft_dense": base["dense"]}
    tuned = searcher.config.weights
    return {
        "BM25": signals["bm25"],
        "dense (MiniLM)": signals["dense"],
        "hybrid": interpolate(signals, base),
        "+ fine-tuned encoder": interpolate(signals, ft),
        "+ memory (tuned on dev)": interpolate(signals, tuned),
        "+ learned fusion": table.fused(RetrievalConfig(**{**searcher.config.to_json(), "fusion": "learned"}),
                                        searcher.ranker),
    }


def best_on_dev(model) -> float:  # type: ignore[no-untyped-def]
    """The stance-contrast weight with the best dev strict NDCG@10 that training reported (0 when dev chose
    nothing); no build takes it."""
    return float(model.report["stance_contrast"]["best_on_dev"])


def bench(name: str, artifacts: Path | None, reuse_passages: bool = False) -> dict:  # type: ignore[type-arg]
    from citator.data.hashing import sha256_file
    from citator.models.fingerprint import model_fingerprint
    from citator.models.load import default_encoder_path
    from citator.engines.fusion import top_k
    from citator.stance.retrieve.index_dir import BuildOptions
    from citator.stance.retrieve.layout import open_folder
    from citator.stance.retrieve.model import StanceModel
    from citator.stance.retrieve.passage_store import PassageStore, index_passages
    from citator.stance.retrieve.searcher import StanceSearcher

    folder = DATA / name
    out: dict = {}
    if artifacts is None:
        artifacts = WORK / "learning" / name / "artifacts"
        if not (artifacts / "manifest.json").is_file():
            args = ["train", "--corpus", str(folder / "corpus.jsonl"), "--out", str(artifacts)]
            for q, g in [("queries.jsonl", "ground_truth.jsonl")] + EXTRA_SETS.get(name, []):
                args += ["--queries", str(folder / q), "--ground-truth", str(folder / g)]
            base_index = WORK / name / "index"
            if (base_index / "manifest.json").is_file():
                args += ["--base-index", str(base_index)]
            citator(*args)
    model = StanceModel.load(artifacts)
    out["training_seconds"] = model.report["timings"]["total_seconds"]
    # A resumed `citator train` reuses finished encoders: its time is not a from-scratch training time.
    out["training_reused_encoders"] = model.report["timings"].get("reused_encoders", 0)
    out["artifact_bytes"] = dir_size(artifacts) - (dir_size(artifacts / "work") if (artifacts / "work").exists() else 0)
    out["dev_ndcg@10"] = model.report["dev_ndcg@10"]
    out["chosen_fusion"] = model.fusion

    index = WORK / "learning" / name / "index"
    encoder_sha256 = model_fingerprint(default_encoder_path())
    reused = None
    if reuse_passages and (index / "manifest.json").is_file():
        reused = index_passages(open_folder(index), sha256_file(folder / "corpus.jsonl"), encoder_sha256)
    if reused is None:
        # A build takes the base passages `citator train` left in artifacts/work when they are there (the evaluator's
        # build after `make artifacts`); a copy of the artifacts without work/ encodes the corpus.
        cached = PassageStore(artifacts / "work").holds(sha256_file(folder / "corpus.jsonl"), encoder_sha256)
        out["build_reused_passages"] = "training" if cached else False
        out["build_seconds"] = citator("build", "--corpus", str(folder / "corpus.jsonl"), "--index-dir", str(index),
                                       "--artifacts", str(artifacts))
    else:
        # The base encoder's passage vectors and document tokens do not depend on the artifacts: a rebuild for new
        # artifacts takes them from the index already there (a fresh build's numbers, the vectors rounded to float16
        # as the index stores them). The server must start: a warm timing must not be an in-process one.
        from citator.stance.workload import build, start_server

        start = time.perf_counter()
        build(folder / "corpus.jsonl", index, BuildOptions(artifacts=model, passages=reused), serve=False)
        start_server(index)
        out["build_seconds"] = time.perf_counter() - start
        out["build_reused_passages"] = "index"
    main, extra, qrels = labeled(folder, name)
    test = main + extra
    searcher = StanceSearcher(index)
    table = {}
    runs = {}
    for label, scores in systems(searcher, test).items():
        idx, _ = top_k(scores, 10)
        runs[label] = {q.query_id: [searcher.doc_ids[i] for i in row] for q, row in zip(test, idx)}
    # run.sh answers the chosen fusion ("+ learned fusion"). The last two rows add opt-in mechanisms no default turns
    # on, for texts a batch asks with both stances (the overruled propositions; no text of queries.jsonl is asked
    # both ways): the stance contrast at the weight that scored best on dev, and the refuter slots, a
    # CaseFacts-specific prior.
    shipped = searcher.config
    weight = best_on_dev(model)
    out["stance_contrast"] = {"opt_in_weight": weight, "dev": model.report["stance_contrast"]["dev"]}
    searcher.config = dataclasses.replace(shipped, stance_contrast=weight)
    runs[f"+ opt-in stance contrast ({weight:g})"] = {r.query_id: r.doc_ids for r in searcher.search(test, 10)}
    searcher.config = dataclasses.replace(shipped, refuter_slots=10)
    runs["+ opt-in refuter slots (10)"] = {r.query_id: r.doc_ids for r in searcher.search(test, 10)}
    searcher.config = shipped
    for label, run in runs.items():
        values = per_query(qrels, run, ["ndcg@10"], [q.query_id for q in main])["ndcg@10"]
        by = {s: float(np.mean([values[q.query_id] for q in main if q.stance == s])) for s in ("supported", "refuted", "all")}
        mean = float(np.mean(list(values.values())))
        table[label] = {**by, "overall": mean, "reward": reward(mean)}
    out["test_ndcg@10"] = table
    out["stance_discrimination"] = {
        label: stance_discrimination(test, qrels, run).__dict__ for label, run in runs.items()
    }
    sample = WORK / "learning" / name / "queries311.jsonl"
    write_queries(sample, main[:311])
    start = time.perf_counter()
    subprocess.run([str(ROOT / "run.sh"), "--index-dir", str(index), "--queries", str(sample), "--output",
                    str(sample.with_suffix(".warm.jsonl")), "--top-k", "10"], check=True, capture_output=True)
    warm = time.perf_counter() - start
    citator("stop", "--index-dir", str(index))
    start = time.perf_counter()
    subprocess.run([str(ROOT / "run.sh"), "--index-dir", str(index), "--queries", str(sample), "--output",
                    str(sample.with_suffix(".cold.jsonl")), "--top-k", "10"], check=True, capture_output=True)
    out["run_sh_311"] = {"warm_seconds": warm, "cold_seconds": time.perf_counter() - start}
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--datasets", nargs="+", default=["casefacts", "scifact", "climate-fever"])
    ap.add_argument("--artifacts", nargs="*", default=[], help="NAME=DIR: use these artifacts instead of training")
    ap.add_argument("--reuse-passages", action="store_true",
                    help="build with the base passage vectors and document tokens of the index already in the work "
                         "folder (same corpus, encoder and passages): build_seconds is then not a full build's")
    args = ap.parse_args()
    given = dict(a.split("=", 1) for a in args.artifacts)
    command = "benchmarks/learning.py " + " ".join(sys.argv[1:])
    path = ROOT / "benchmarks" / "results" / "learning.json"
    # Datasets measured by earlier runs stay in the file, each with the command that measured it.
    earlier = json.loads(path.read_text())["datasets"] if path.is_file() else {}
    report = {"machine": machine(), "datasets": earlier}
    for name in args.datasets:
        result = bench(name, Path(given[name]).absolute() if name in given else None, args.reuse_passages)
        report["datasets"][name] = {"command": command, "machine": report["machine"], **result}
        write_json_atomic(path, report)
        reused = f" (passages from the {result['build_reused_passages']})" if result.get("build_reused_passages") else ""
        print(f"\n{name}: training {result['training_seconds']:.0f} s, artifacts {result['artifact_bytes'] / 1e6:.1f} MB, "
              f"build {result['build_seconds']:.0f} s{reused}, run.sh 311 warm {result['run_sh_311']['warm_seconds']:.2f} s / "
              f"cold {result['run_sh_311']['cold_seconds']:.2f} s, fusion chosen on dev: {result['chosen_fusion']}, "
              f"opt-in stance contrast weight (best on dev): {result['stance_contrast']['opt_in_weight']:g}")
        print(f"{'system':<26}{'supported':>10}{'refuted':>9}{'all':>8}{'overall':>9}{'reward':>8}{'outranks':>10}")
        for label, v in result["test_ndcg@10"].items():
            sd = result["stance_discrimination"][label]
            print(f"{label:<26}{v['supported']:>10.4f}{v['refuted']:>9.4f}{v['all']:>8.4f}{v['overall']:>9.4f}"
                  f"{v['reward']:>8.3f}{sd['outranks_rate']:>10.3f}  strict {sd['strict_ndcg']['supported']:.3f} / "
                  f"{sd['strict_ndcg']['refuted']:.3f}, outranks {sd['outranks_by_stance']['supported']:.3f} / "
                  f"{sd['outranks_by_stance']['refuted']:.3f}")


if __name__ == "__main__":
    main()
