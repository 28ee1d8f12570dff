"""The cold query side of workload 1, side by side in one run: the index's ONNX graph in onnxruntime (what a cold
run.sh uses), its int8 quantisation, torch, and the hand-written numpy BERT that the ONNX path replaced.

    .venv/bin/python benchmarks/query_encoder.py [--index-dir benchmarks/work/learning/casefacts/index] [--repeats 5]

The index is the trained CaseFacts index that benchmarks/learning.py builds. Queries: the first 311 CaseFacts `dev`
propositions (never test). Three measurements, each backend in turn within every repeat (medians reported):
  * encoder: a fresh process that imports the backend, loads the fine-tuned query encoder and encodes the 311
    queries with their token states, wall clock from process start to exit;
  * run.sh cold: the whole cold run.sh on the index as built (ONNX fp32), on a copy whose graphs are int8, and on a
    copy with no graphs (torch);
  * agreement: vectors against torch (max abs difference), and dev NDCG@10 and top-10 lists of each run.sh;
and, in one loaded process (a server's case), torch and the ONNX graph on the 311 queries and on one brief's pair.
The numpy BERT is read from git (commit NUMPY_COMMIT) into the work folder: it is not shipped any more.
Writes benchmarks/results/query_encoder.json.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from citator.data import read_ground_truth, read_queries, read_results, write_json_atomic, write_queries
from citator.evaluate import per_query
from citator.stance.retrieve.index_files import record_files

ROOT = Path(__file__).resolve().parents[1]
WORK = ROOT / "benchmarks" / "work" / "query_encoder"
DATA = ROOT.parent / "shared" / "data" / "stance" / "casefacts"
NUMPY_COMMIT = "f018d5a6361edfc8ce2d141aa94596a2d4fe971d"  # the last commit that ships src/citator/models/numpy_bert.py

ENCODE = """
import sys, time, json
from pathlib import Path
backend, model, graph, queries = sys.argv[1], Path(sys.argv[2]), sys.argv[3], json.load(open(sys.argv[4]))
if backend == "numpy":
    sys.path.insert(0, sys.argv[5])
    from numpy_bert import NumpyBertEncoder
    encoder = NumpyBertEncoder(model)
elif backend == "torch":
    from citator.models.transformer_encoder import TransformerEncoder
    encoder = TransformerEncoder(model, device="cpu")
else:
    from citator.models.onnx_encoder import OnnxEncoder
    encoder = OnnxEncoder(model, graph)
vectors, tokens = encoder.encode_queries_with_tokens([q[0] for q in queries], [q[1] for q in queries])
import numpy as np
np.save(sys.argv[6], vectors)
"""


def quantise(graph: Path, out: Path) -> None:
    from citator.models.onnx_encoder import telemetry_off

    telemetry_off()
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantize_dynamic(str(graph), str(out), weight_type=QuantType.QInt8)


def index_copy(index: Path, name: str, graphs: str) -> Path:
    """A copy of `index` whose query graphs are kept ("fp32"), quantised ("int8") or removed ("none"), with the
    manifest's file table re-recorded (the copy is a consistent index)."""
    out = WORK / name
    if out.exists():
        shutil.rmtree(out)
    shutil.copytree(index, out, ignore=shutil.ignore_patterns("service", ".build.lock"), symlinks=True)
    manifest = json.loads((out / "manifest.json").read_text())
    graph_dir = out / manifest["data_dir"] / "query_graphs"
    if graphs == "none":
        shutil.rmtree(graph_dir)
    elif graphs == "int8":
        for graph in sorted(graph_dir.glob("*.onnx")):
            quantise(graph, graph.with_suffix(".int8"))
            graph.with_suffix(".int8").replace(graph)
    manifest["files"] = record_files(out / manifest["data_dir"])
    (out / "manifest.json").write_text(json.dumps(manifest))
    return out


def warm_encoding(model: Path, graph: Path, dev: list, repeats: int) -> dict[str, dict[str, float]]:  # type: ignore[type-arg]
    """In one loaded process (a server's case): median seconds to encode the 311 queries, and one brief's pair."""
    from citator.models.onnx_encoder import OnnxEncoder
    from citator.models.transformer_encoder import TransformerEncoder

    texts, stances = [q.text for q in dev], [q.stance for q in dev]
    out = {}
    for name, encoder in (("torch", TransformerEncoder(model, device="cpu")), ("onnx fp32", OnnxEncoder(model, graph))):
        encoder.encode_queries_with_tokens(texts[:8], stances[:8])  # first-call set-up is not a warm cost
        batch, pair = [], []
        for _ in range(repeats):
            start = time.perf_counter()
            encoder.encode_queries_with_tokens(texts, stances)
            batch.append(time.perf_counter() - start)
        for i in range(100):
            start = time.perf_counter()
            encoder.encode_queries_with_tokens([texts[i], texts[i]], ["supported", "refuted"])
            pair.append(time.perf_counter() - start)
        out[name] = {"batch_311_seconds": statistics.median(batch), "pair_ms": 1000 * statistics.median(pair)}
    return out


def timed(cmd: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index-dir", type=Path, default=ROOT / "benchmarks/work/learning/casefacts/index")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    index = args.index_dir.resolve()
    manifest = json.loads((index / "manifest.json").read_text())
    model = index / manifest["data_dir"] / "finetuned_encoder"
    graph = index / manifest["data_dir"] / "query_graphs" / "finetuned.onnx"
    if not graph.is_file():
        sys.exit(f"{graph}: missing; rebuild the index with this citator (benchmarks/learning.py)")
    WORK.mkdir(parents=True, exist_ok=True)

    dev = [q for q in read_queries(DATA / "queries.jsonl") if q.split == "dev"][:311]
    qrels = read_ground_truth(DATA / "ground_truth.jsonl")
    queries_file = WORK / "dev311.jsonl"
    write_queries(queries_file, dev)
    (WORK / "dev311.json").write_text(json.dumps([[q.text, q.stance] for q in dev]))
    numpy_dir = WORK / "numpy_bert"
    numpy_dir.mkdir(exist_ok=True)
    source = subprocess.run(["git", "show", f"{NUMPY_COMMIT}:src/citator/models/numpy_bert.py"], cwd=ROOT,
                            check=True, capture_output=True, text=True).stdout
    (numpy_dir / "numpy_bert.py").write_text(source)
    # Cold means no search server: stop the index's, if one is running.
    subprocess.run([str(Path(sys.executable).with_name("citator")), "stop", "--index-dir", str(index)],
                   capture_output=True)
    int8_graph = WORK / "finetuned.int8.onnx"
    quantise(graph, int8_graph)

    indexes = {"onnx fp32": index, "onnx int8": index_copy(index, "index-int8", "int8"),
               "torch": index_copy(index, "index-torch", "none")}
    encoders = {"onnx fp32": str(graph), "onnx int8": str(int8_graph), "torch": "", "numpy (removed)": ""}
    enc_times: dict[str, list[float]] = {b: [] for b in encoders}
    run_times: dict[str, list[float]] = {b: [] for b in indexes}
    for repeat in range(args.repeats):
        for backend, g in encoders.items():
            kind = backend.split()[0]
            out = WORK / f"vectors-{kind}-{backend.split()[-1].strip('()')}.npy"
            enc_times[backend].append(timed([sys.executable, "-c", ENCODE, kind, str(model), g,
                                             str(WORK / "dev311.json"), str(numpy_dir), str(out)]))
        for backend, idx in indexes.items():
            run_times[backend].append(timed([str(ROOT / "run.sh"), "--index-dir", str(idx), "--queries",
                                             str(queries_file), "--output", str(WORK / f"run-{backend}.jsonl"),
                                             "--top-k", "10"]))
        print(f"repeat {repeat + 1}/{args.repeats} done", file=sys.stderr)

    warm = warm_encoding(model, graph, dev, args.repeats)
    torch_vectors = np.load(WORK / "vectors-torch-torch.npy")
    vector_diff = {b: float(np.abs(np.load(WORK / f"vectors-{b.split()[0]}-{b.split()[-1].strip('()')}.npy")
                                   - torch_vectors).max()) for b in encoders}
    runs = {b: {r.query_id: r.doc_ids for r in read_results(WORK / f"run-{b}.jsonl")} for b in indexes}
    ndcg = {b: float(np.mean(list(per_query(qrels, run, ["ndcg@10"], [q.query_id for q in dev])["ndcg@10"].values())))
            for b, run in runs.items()}
    same = {b: sum(runs[b][q] == runs["torch"][q] for q in runs["torch"]) for b in runs}
    result = {
        "queries": len(dev), "repeats": args.repeats,
        "encoder_process_seconds": {b: statistics.median(t) for b, t in enc_times.items()},
        "encoder_process_all": enc_times,
        "run_sh_cold_seconds": {b: statistics.median(t) for b, t in run_times.items()},
        "run_sh_cold_all": run_times,
        "warm_in_process": warm,
        "max_abs_vector_diff_vs_torch": vector_diff,
        "dev_ndcg@10": ndcg, "top10_lists_equal_to_torch": same,
        "graph_bytes": {"fp32": graph.stat().st_size, "int8": int8_graph.stat().st_size},
    }
    write_json_atomic(ROOT / "benchmarks" / "results" / "query_encoder.json", result)
    print("| backend | encoder process, 311 dev queries | run.sh cold | dev NDCG@10 | top-10 = torch | max |dv| |")
    print("|---|---|---|---|---|---|")
    for b in encoders:
        cold = f"{result['run_sh_cold_seconds'][b]:.2f} s" if b in indexes else ""
        quality = f"{ndcg[b]:.4f}" if b in ndcg else ""
        equal = f"{same[b]}/{len(dev)}" if b in same else ""
        print(f"| {b} | {result['encoder_process_seconds'][b]:.2f} s | {cold} | {quality} | {equal} "
              f"| {vector_diff[b]:.1e} |")

    for name, w in warm.items():
        print(f"warm, in one process, {name}: 311 queries {w['batch_311_seconds']:.2f} s, one brief's pair "
              f"{w['pair_ms']:.1f} ms")


if __name__ == "__main__":
    main()
