"""What an update costs against a full build, side by side in one run on the CaseFacts corpus.

    .venv/bin/python benchmarks/update.py [--fraction 0.01] [--queries 100]

The corpus (../shared/data/stance/casefacts/corpus.jsonl, 3,264 opinions) less its last 1% is built as one index
(untrained, MiniLM, end to end: BM25, encoding, ONNX query graphs): the full build. Then that 1% is added with an
update, and 1% of the resulting corpus, chosen at random (seeded), is removed with another. After each update its
answers to --queries CaseFacts `dev` propositions (never test) are compared with a build of the resulting corpus
given the updated index's passage vectors (a build that encodes would take the full build's time again; the tests
compare with builds that encode, on a small corpus): the same ids in the same order and scores within 1e-5.
All in this process, the libraries imported before the first timing; each step loads the encoder it needs, as a
command would. Prints a table and writes benchmarks/results/update.json.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import shutil
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "data" / "stance" / "casefacts" / "corpus.jsonl"
QUERIES = ROOT.parent / "shared" / "data" / "stance" / "casefacts" / "queries.jsonl"
WORK = ROOT / "benchmarks" / "work" / "update"
RESULTS = ROOT / "benchmarks" / "results" / "update.json"


def cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines() if Path("/proc/cpuinfo").is_file() else []:
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def timed(step: str, work: object) -> tuple[float, object]:
    began = time.perf_counter()
    value = work() if callable(work) else None
    seconds = time.perf_counter() - began
    print(f"{step}: {seconds:.1f} s", file=sys.stderr, flush=True)
    return seconds, value


def same_answers(a: Path, b: Path, queries: list) -> tuple[bool, float]:
    from citator.stance.retrieve.searcher import StanceSearcher

    got, want = StanceSearcher(a).search(queries, 10), StanceSearcher(b).search(queries, 10)
    ids = all([d.doc_id for d in x.results] == [d.doc_id for d in y.results] for x, y in zip(got, want))
    worst = max(abs(d.score - e.score) for x, y in zip(got, want) for d, e in zip(x.results, y.results))
    return ids and worst <= 1e-5, worst


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fraction", type=float, default=0.01)
    parser.add_argument("--queries", type=int, default=100)
    args = parser.parse_args()
    import torch  # noqa: F401 - imported before any timing: every step below pays the same warm process
    import transformers  # noqa: F401

    from citator.data.corpus import read_corpus, write_corpus
    from citator.data.queries import read_queries
    from citator.stance.retrieve.index_dir import BuildOptions, build_index
    from citator.stance.retrieve.update import Change
    from citator.stance.retrieve.layout import DENSE, open_folder
    from citator.stance.retrieve.passage_store import Passages
    from citator.stance.shards.update import update

    shutil.rmtree(WORK, ignore_errors=True)
    WORK.mkdir(parents=True)
    docs = read_corpus(CORPUS)
    n = max(1, round(len(docs) * args.fraction))
    queries = [q for q in read_queries(QUERIES) if q.extra.get("split") == "dev"][: args.queries]
    base, extra = docs[:-n], docs[-n:]
    write_corpus(WORK / "base.jsonl", base)
    write_corpus(WORK / "all.jsonl", docs)
    gone = set(random.Random(49).sample([d.doc_id for d in docs], n))
    write_corpus(WORK / "removed.jsonl", [d for d in docs if d.doc_id not in gone])
    options = BuildOptions(progress=False)
    index = WORK / "index"
    build, _ = timed(f"full build of {len(base)} documents", lambda: build_index(WORK / "base.jsonl", index, options))
    table = []
    for name, change, corpus in (("add", Change(tuple(extra)), WORK / "all.jsonl"),
                                 ("remove", Change(remove=tuple(sorted(gone))), WORK / "removed.jsonl")):
        seconds, _ = timed(f"{name} {n} documents", lambda: update(index, change, progress=False))
        reference = WORK / f"rebuilt-{name}"
        given = Passages(np.load(open_folder(index).path(DENSE)))
        build_index(corpus, reference, replace(options, passages=given))
        table.append((name, n, seconds, build, same_answers(index, reference, queries)))
    print("| update | documents | update s | full build s | update / build | answers equal a build (worst diff) |")
    print("|---|---|---|---|---|---|")
    for name, count, seconds, build, (equal, worst) in table:
        print(f"| {name} 1% | {count} | {seconds:.1f} | {build:.1f} | {100 * seconds / build:.1f}% | "
              f"{'yes' if equal else 'NO'} ({worst:.1e}) |")
    result = {
        "machine": f"{cpu_model()}, {__import__('os').cpu_count()} cores", "command": " ".join(sys.argv),
        "corpus_documents": len(docs), "queries": len(queries), "full_build_documents": len(base),
        "rows": [{"update": name, "documents": count, "update_seconds": seconds, "full_build_seconds": build,
                  "ratio": seconds / build, "answers_equal": equal, "worst_score_diff": worst}
                 for name, count, seconds, build, (equal, worst) in table],
    }
    RESULTS.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
