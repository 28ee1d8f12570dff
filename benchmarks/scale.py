"""Sharded build and search against one index, in this process and on a local Ray cluster, on the same cores.

    .venv/bin/python benchmarks/scale.py [--sizes 10000 100000] [--encode-passages 2000] [--builds one ray1 ray2] [--queries 311] [--no-build]

Corpora: the CaseFacts opinions (../shared/data/stance/casefacts/corpus.jsonl) and the D.C. Code sections
(../shared/data/statutes/dc_code/sections.jsonl), real texts, repeated with fresh doc ids until the corpus has the
wanted number of passages. Queries: CaseFacts `dev` propositions (never test).

Three measurements:
  * build, real encoding (MiniLM): a corpus of --encode-passages passages built as one index in this process, and
    as shards by Ray actors (1 worker; 2 workers for 2 shards): passages/s, and Ray's overhead against one process
    on the same cores;
  * search, per corpus size: one index, and 1, 2 and 4 shards with their workers in this process and as Ray actors:
    single-query latency p50/p95 (--latency-queries queries, one at a time), throughput of one batch of --queries
    queries, resident memory per shard worker, and whether every answer equals one index's (ids, scores within
    1e-5). Encoding a corpus this large takes hours on 2 cores, so these indexes hold random unit vectors in place of
    the encoder's (the build's document encoder is swapped for the benchmark only); lexical indexes, passages and
    the query encoder are real, and search time does not depend on the vectors' values.
Writes benchmarks/results/scale.json: rows of the sizes (and build configurations) measured replace those of an
earlier run, the others stay; each row records its machine and the command that measured it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import shutil
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
WORK = ROOT / "benchmarks" / "work" / "scale"


def source_documents() -> list[dict]:
    docs = [json.loads(line) for line in (SHARED / "stance" / "casefacts" / "corpus.jsonl").open()]
    docs += [json.loads(line) for line in (SHARED / "statutes" / "dc_code" / "sections.jsonl").open()]
    return [{"doc_id": d["doc_id"], "title": d.get("title", ""), "text": d["text"]} for d in docs if d["text"].strip()]


def corpus_of(passages: int, path: Path) -> int:
    """A corpus of about `passages` passages (the real texts, repeated with fresh ids); its document count."""
    from citator.engines.passages import PassageSpec, passage_layout

    if path.is_file():
        return sum(1 for _ in path.open())
    docs = source_documents()
    per_doc = [len(passage_layout([d["title"]], [d["text"]], PassageSpec())[0]) for d in docs]
    out, total, copy = [], 0, 0
    while total < passages:
        for doc, n in zip(docs, per_doc):
            if total >= passages:
                break
            out.append({**doc, "doc_id": f"{doc['doc_id']}#{copy}" if copy else doc["doc_id"]})
            total += n
        copy += 1
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(d) + "\n" for d in out))
    return len(out)


def random_vectors(_encoder: object, texts: list[str], *_: object, **__: object) -> np.ndarray:
    """Unit vectors drawn from each text's hash: what the large indexes hold in place of encodings."""
    out = np.empty((len(texts), 384), dtype=np.float32)
    for i, text in enumerate(texts):
        seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
        out[i] = np.random.default_rng(seed).standard_normal(384)
    return out / np.linalg.norm(out, axis=1, keepdims=True)


def cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines() if Path("/proc/cpuinfo").is_file() else []:
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def same_answers(one, other) -> bool:  # type: ignore[no-untyped-def]
    return all([d.doc_id for d in a.results] == [d.doc_id for d in b.results]
               and all(abs(d.score - e.score) <= 1e-5 for d, e in zip(a.results, b.results)) for a, b in zip(one, other))


# Build configurations: (row name, Ray builders; 0 for one index built in this process).
BUILDS = {"one": ("one index, this process", 0), "ray1": ("1 shard, 1 Ray worker", 1),
          "ray2": ("2 shards, 2 Ray workers", 2)}


def measure_build(corpus: Path, cluster: str, chosen: list[str]) -> list[dict]:
    from citator.stance.retrieve.index_dir import BuildOptions, build_index
    from citator.stance.shards.build import Sharding, build_sharded

    quiet = BuildOptions(progress=False)
    rows = []
    for key in dict.fromkeys(["one", *chosen]):  # one process first: the others are read against it
        name, shards = BUILDS[key]
        target = WORK / "build-index"
        shutil.rmtree(target, ignore_errors=True)
        began = time.perf_counter()
        manifest = (build_sharded(corpus, target, Sharding(shards, cluster), quiet) if shards
                    else build_index(corpus, target, quiet))
        seconds = time.perf_counter() - began
        rows.append({"build": name, "passages": manifest.n_passages, "seconds": round(seconds, 1),
                     "passages_per_s": round(manifest.n_passages / seconds, 1)})
        print(f"build  {name:28s} {manifest.n_passages:7d} passages {seconds:7.1f} s "
              f"{manifest.n_passages / seconds:6.1f} passages/s", flush=True)
    base = rows[0]["seconds"]
    for row in rows:
        row["vs_one_process"] = round(row["seconds"] / base - 1, 3)
    return rows


def measure_search(size: int, queries: list, latency_queries: int, cluster: str) -> list[dict]:
    from citator.models.transformer_encoder import TransformerEncoder
    from citator.stance.retrieve.index_dir import BuildOptions, build_index
    from citator.stance.retrieve.searcher import StanceSearcher
    from citator.stance.shards.build import Sharding, build_sharded
    from citator.stance.shards.search import ShardedSearcher

    corpus = WORK / f"corpus-{size}.jsonl"
    n_docs = corpus_of(size, corpus)
    real = TransformerEncoder.encode_documents
    TransformerEncoder.encode_documents = random_vectors  # type: ignore[method-assign]
    try:
        one_dir = WORK / f"index-{size}-one"
        if not (one_dir / "manifest.json").is_file():
            build_index(corpus, one_dir, BuildOptions(progress=False))
        for shards in (1, 2, 4):
            target = WORK / f"index-{size}-{shards}"
            if not (target / "manifest.json").is_file():
                build_sharded(corpus, target, Sharding(shards), BuildOptions(progress=False))
    finally:
        TransformerEncoder.encode_documents = real  # type: ignore[method-assign]
    rows = []
    one = StanceSearcher(one_dir)
    expected = None
    for shards, backend in [(0, "one index"), *((s, b) for s in (1, 2, 4) for b in ("this process", "Ray"))]:
        if shards == 0:
            searcher, pids = one, [os.getpid()]
        else:
            searcher = ShardedSearcher(WORK / f"index-{size}-{shards}", ray=cluster if backend == "Ray" else None)
            pids = ([searcher.pool.run([(w, "describe", ())])[0]["pid"] for w in range(shards)] if backend == "Ray"
                    else [os.getpid()])
        searcher.search(queries[:2], 10)  # warm: encoders loaded, first-call costs paid
        latencies = []
        for q in queries[:latency_queries]:
            began = time.perf_counter()
            searcher.search([q], 10)
            latencies.append((time.perf_counter() - began) * 1000)
        began = time.perf_counter()
        answers = searcher.search(queries, 10)
        batch_s = time.perf_counter() - began
        expected = answers if shards == 0 else expected
        memory = [rss_mib(pid) for pid in pids]
        row = {"passages": size, "documents": n_docs, "shards": shards or 1, "workers": backend,
               "latency_p50_ms": round(statistics.median(latencies), 1),
               "latency_p95_ms": round(float(np.percentile(latencies, 95)), 1),
               "batch_queries": len(queries), "batch_s": round(batch_s, 2),
               "queries_per_s": round(len(queries) / batch_s, 1),
               "rss_mib_per_worker": round(statistics.mean(memory)) if backend == "Ray" else None,
               "rss_mib_process": round(rss_mib(os.getpid())),
               "same_as_one_index": True if shards == 0 else same_answers(expected, answers)}
        rows.append(row)
        print(f"search {size:7d} passages {row['shards']} shard(s) {backend:13s} p50 {row['latency_p50_ms']:7.1f} ms "
              f"p95 {row['latency_p95_ms']:7.1f} ms  {row['queries_per_s']:6.1f} q/s  worker RSS "
              f"{row['rss_mib_per_worker'] or '-'} MiB  same {row['same_as_one_index']}", flush=True)
        if shards:
            searcher.close()
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[10_000, 100_000],
                        help="corpus sizes (passages) to search; none: measure the build only")
    parser.add_argument("--encode-passages", type=int, default=2000)
    parser.add_argument("--builds", nargs="+", choices=sorted(BUILDS), default=sorted(BUILDS),
                        help="build configurations to measure (one process is always measured: the baseline)")
    parser.add_argument("--queries", type=int, default=311)
    parser.add_argument("--latency-queries", type=int, default=60)
    parser.add_argument("--no-build", action="store_true", help="measure search only; keep the recorded build rows")
    args = parser.parse_args()
    import ray

    from citator.data import read_queries, write_json_atomic

    WORK.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    cpus = os.cpu_count() or 1
    ray.init(num_cpus=cpus, include_dashboard=False, log_to_driver=False, configure_logging=False)
    cluster = ray.get_runtime_context().gcs_address
    dev = [q for q in read_queries(SHARED / "stance" / "casefacts" / "queries.jsonl") if q.split == "dev"]
    queries = dev[:args.queries]
    command = "python benchmarks/scale.py " + " ".join(sys.argv[1:])
    out = ROOT / "benchmarks" / "results" / "scale.json"
    before = json.loads(out.read_text()) if out.is_file() else {}
    machine = f"{cpu_model()}, {cpus} CPUs"
    builds = before.get("build", [])
    if not args.no_build:
        build_corpus = WORK / f"corpus-{args.encode_passages}.jsonl"
        corpus_of(args.encode_passages, build_corpus)
        fresh = [{**row, "machine": machine, "command": command}
                 for row in measure_build(build_corpus, cluster, args.builds)]
        builds = [row for row in builds if (row["build"], row["passages"]) not in
                  {(r["build"], r["passages"]) for r in fresh}] + fresh
        order = [name for name, _ in BUILDS.values()]
        builds.sort(key=lambda r: (r["passages"], order.index(r["build"])))
    searches = [{**row, "machine": machine, "command": command} for size in args.sizes
                for row in measure_search(size, queries, args.latency_queries, cluster)]
    ray.shutdown()
    kept = [row for row in before.get("search", []) if row["passages"] not in args.sizes]
    write_json_atomic(out, {"build": builds, "search": sorted(kept + searches, key=lambda r: r["passages"])})
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
