"""What an update costs against a full build, side by side in one run, and whether its answers are a build's.

    .venv/bin/python benchmarks/update.py [--fraction 0.01] [--mixed 20] [--queries 100]
    .venv/bin/python benchmarks/update.py --passages 100000 --random-vectors [--shards 3]

The corpus is CaseFacts' (../shared/data/stance/casefacts/corpus.jsonl, 3,264 opinions) or, with --passages N, one
of about N passages made as benchmarks/scale.py makes its corpora (the CaseFacts and D.C. Code texts repeated with
fresh ids). That corpus less its last --fraction is built as one index, or as --shards shards (untrained, MiniLM,
end to end: BM25, encoding, the treatment table, ONNX query graphs): the full build. Then that fraction is added
with one update, and --fraction of the resulting corpus, chosen at random (seeded), is removed with another; then
--mixed small updates follow (seeded: 1-3 documents added, replaced with longer text, or removed each time). After
the add, the remove and the mixed updates, the index's answers to --queries CaseFacts `dev` propositions (never
test) are compared with a build of the resulting corpus: the same ids in the same order and scores within 1e-5, and
the same treatment table row for row.

--random-vectors swaps the document encoder for hash-seeded unit vectors in every build and update of the run (as
scale.py's large indexes do), so the table times everything but encoding. A real build encodes every passage and an
update only those it adds, so the ratio measured this way bounds the real one from above. Without it, the
reference builds are given the updated index's passage vectors (one index only: a build that encodes would take
the full build's time again; the tests compare with builds that encode, on a small corpus).

All in this process, the libraries imported before the first timing; each step loads the encoder it needs, as a
command would. Prints a table and writes benchmarks/results/update[-N-passages][-S-shards][-random-vectors].json.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from scale import corpus_of, cpu_model, random_vectors  # noqa: E402 - the benchmark's sibling

CORPUS = ROOT.parent / "shared" / "data" / "stance" / "casefacts" / "corpus.jsonl"
QUERIES = ROOT.parent / "shared" / "data" / "stance" / "casefacts" / "queries.jsonl"
WORK = ROOT / "benchmarks" / "work" / "update"


def timed(step: str, work: object) -> tuple[float, object]:
    began = time.perf_counter()
    value = work() if callable(work) else None
    seconds = time.perf_counter() - began
    print(f"{step}: {seconds:.1f} s", file=sys.stderr, flush=True)
    return seconds, value


def same_table(a: Path, b: Path) -> bool:
    """Whether two indexes hold the same treatment table, row for row."""
    from citator.stance.retrieve.layout import TREATMENTS, open_folder
    from citator.stance.treat import read_table

    return read_table(open_folder(a).path(TREATMENTS)).rows == read_table(open_folder(b).path(TREATMENTS)).rows


def same_answers(a: Path, b: Path, queries: list) -> tuple[bool, float]:
    from citator.stance.shards.search import open_searcher

    got, want = open_searcher(a).search(queries, 10), open_searcher(b).search(queries, 10)
    ids = all([d.doc_id for d in x.results] == [d.doc_id for d in y.results] for x, y in zip(got, want))
    worst = max(abs(d.score - e.score) for x, y in zip(got, want) for d, e in zip(x.results, y.results))
    return ids and worst <= 1e-5, worst


class Mixed:
    """Seeded small updates (add 1-3 new documents, replace 1-3 with longer text, remove 1-3) and the corpus
    they leave, by the rule of stance/retrieve/update.py: replaced documents keep their place, new ones come last."""

    def __init__(self, docs: list, pool: list, seed: int) -> None:
        self.docs, self.pool, self.rng = list(docs), list(pool), random.Random(seed)

    def next(self):  # type: ignore[no-untyped-def]
        from citator.stance.retrieve.update import Change

        kind, n = self.rng.choice(["add", "replace", "remove"]), self.rng.randint(1, 3)
        if kind == "remove":
            gone = set(self.rng.sample([d.doc_id for d in self.docs], n))
            self.docs = [d for d in self.docs if d.doc_id not in gone]
            return Change(remove=tuple(sorted(gone)))
        if kind == "add":
            new = [self.pool.pop() for _ in range(n)]
            self.docs += new
            return Change(tuple(new))
        edited = {d.doc_id: replace(d, text=f"{d.text} {self.rng.choice(self.pool).text[:300]}")
                  for d in self.rng.sample(self.docs, n)}
        self.docs = [edited.get(d.doc_id, d) for d in self.docs]
        return Change(tuple(edited.values()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fraction", type=float, default=0.01)
    parser.add_argument("--mixed", type=int, default=20, help="small mixed updates after the add and the remove")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--passages", type=int, help="a corpus of about this many passages (else CaseFacts')")
    parser.add_argument("--shards", type=int, help="build and update a sharded index of this many shards")
    parser.add_argument("--random-vectors", action="store_true", help="hash-seeded vectors in place of encoding")
    args = parser.parse_args()
    if args.shards and not args.random_vectors:
        parser.error("--shards compares with sharded builds that encode: give --random-vectors")
    import torch  # noqa: F401 - imported before any timing: every step below pays the same warm process
    import transformers  # noqa: F401

    from citator.data.corpus import read_corpus, write_corpus
    from citator.data.queries import read_queries
    from citator.models.transformer_encoder import TransformerEncoder
    from citator.stance.retrieve.index_dir import BuildOptions, build_index
    from citator.stance.retrieve.layout import DENSE, open_folder
    from citator.stance.retrieve.passage_store import Passages
    from citator.stance.retrieve.update import Change
    from citator.stance.shards.build import Sharding, build_sharded
    from citator.stance.shards.update import update

    if args.random_vectors:
        TransformerEncoder.encode_documents = random_vectors  # type: ignore[method-assign]
    work = WORK / result_name(args)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    source = CORPUS
    if args.passages:
        source = work / "corpus.jsonl"
        corpus_of(args.passages, source)
    docs = read_corpus(source)
    n = max(1, round(len(docs) * args.fraction))
    queries = [q for q in read_queries(QUERIES) if q.extra.get("split") == "dev"][: args.queries]
    base, extra, pool = docs[: -2 * n], docs[-2 * n: -n], docs[-n:]  # the last n: the mixed updates' new documents
    options = BuildOptions(progress=False)

    def build(corpus: list, target: Path, given: Path | None = None) -> None:
        path = work / f"{target.name}.jsonl"
        write_corpus(path, corpus)
        if args.shards:
            build_sharded(path, target, Sharding(args.shards), options)
        else:
            vectors = None if given is None else Passages(np.load(open_folder(given).path(DENSE)))
            build_index(path, target, replace(options, passages=vectors))

    index = work / "index"
    build_s, _ = timed(f"full build of {len(base)} documents", lambda: build(base, index))
    gone = set(random.Random(49).sample([d.doc_id for d in base + extra], n))
    mixed = Mixed([d for d in base + extra if d.doc_id not in gone], pool, seed=52)
    rows: list[dict] = []

    def measure(label: str, changes: list, resulting: list) -> None:
        """Time `changes` as updates of the index, then compare its answers with a build of `resulting`."""
        seconds, _ = timed(label, lambda: [update(index, c, progress=False) for c in changes])
        reference = work / "rebuilt"
        build(resulting, reference, given=index)
        equal, worst = same_answers(index, reference, queries)
        table = same_table(index, reference)
        shutil.rmtree(reference)
        rows.append({"update": label, "documents": sum(len(c.add) + len(c.remove) for c in changes),
                     "update_seconds": round(seconds, 2), "per_update_seconds": round(seconds / len(changes), 2),
                     "full_build_seconds": round(build_s, 1), "ratio": round(seconds / len(changes) / build_s, 4),
                     "answers_equal": equal, "worst_score_diff": worst, "table_equal": table})

    measure(f"add {args.fraction:.0%}", [Change(tuple(extra))], base + extra)
    measure(f"remove {args.fraction:.0%}", [Change(remove=tuple(sorted(gone)))], mixed.docs)
    if args.mixed:
        changes = [mixed.next() for _ in range(args.mixed)]
        measure(f"{args.mixed} mixed updates", changes, mixed.docs)
    report(args, rows, docs, queries, index)


def result_name(args: argparse.Namespace) -> str:
    return "update" + (f"-{args.passages}-passages" if args.passages else "") + (
        f"-{args.shards}-shards" if args.shards else "") + ("-random-vectors" if args.random_vectors else "")


def report(args: argparse.Namespace, rows: list[dict], docs: list, queries: list, index: Path) -> None:
    print("| update | documents | seconds | per update s | full build s | per update / build | answers equal a build "
          "(worst diff) | treatment table equal |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['update']} | {r['documents']} | {r['update_seconds']:.1f} | {r['per_update_seconds']:.1f} | "
              f"{r['full_build_seconds']:.1f} | {100 * r['ratio']:.1f}% | "
              f"{'yes' if r['answers_equal'] else 'NO'} ({r['worst_score_diff']:.1e}) | "
              f"{'yes' if r['table_equal'] else 'NO'} |")
    from citator.stance.retrieve.layout import open_folder

    manifest = open_folder(index).manifest
    result = {"machine": f"{cpu_model()}, {os.cpu_count()} cores", "command": " ".join(["benchmarks/update.py",
              *sys.argv[1:]]), "corpus_documents": len(docs), "index_passages": manifest.n_passages,
              "shards": args.shards or 1, "encoder": "random vectors" if args.random_vectors else "MiniLM",
              "queries": len(queries), "rows": rows}
    (ROOT / "benchmarks" / "results" / f"{result_name(args)}.json").write_text(json.dumps(result, indent=2) + "\n",
                                                                  encoding="utf-8")


if __name__ == "__main__":
    main()
