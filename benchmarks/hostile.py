"""Hostile inputs, measured: a tally of hostile files fed to every reader and of hostile inputs fed to every other
surface (the brief, the research page and its server, the Python API, the vector cache, locks and the folders
citator keeps), then the work one huge query costs with and without the query cut and what verifying an index's
checksums costs at load.

    .venv/bin/python benchmarks/hostile.py [--corpus CORPUS.jsonl] [--queries QUERIES.jsonl] [--examples 200] [--reuse]
    .venv/bin/python benchmarks/hostile.py --no-timing    # the tallies only

The tallies (benchmarks/hostile_surfaces.py) build their own index of the bundled sample plus hostile documents.
The timings build an index of CORPUS (default: the bundled CaseFacts sample) under benchmarks/work/ (git-ignored)
and time 311 `dev` queries (default: the bundled sample's, repeated to 311), one of them replaced by a 9 MB text:
in-process searches side by side with the cut (as shipped) and without it, and run.sh end to end (cold,
--no-server, and through the search server). Writes benchmarks/results/hostile.json (or hostile_tally.json with
--no-timing, leaving the timings' file as it was).
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from citator.data import read_queries, write_json_atomic, write_queries
from citator.data.records import Query

ROOT = Path(__file__).resolve().parents[1]
WORK = ROOT / "benchmarks" / "work" / "hostile"
sys.path.insert(0, str(ROOT / "tests"))
sys.path.append(str(ROOT / "benchmarks"))


def batch(queries_path: Path, n: int = 311) -> list[Query]:
    """`n` dev queries (cycled if fewer), the first one's text replaced by 9.2 MB of words."""
    pool = [q for q in read_queries(queries_path) if q.split in (None, "dev")]
    out = [Query(f"{q.query_id}#{i}", q.text, q.stance) for i, q in enumerate(pool * (n // len(pool) + 1))][:n]
    out[0] = Query(out[0].query_id, " ".join(["negligence duty of care"] * 400_000), out[0].stance)
    return out


def all_long(queries: list[Query]) -> list[Query]:
    """Every query replaced by a distinct 24 KB text: the encoder encodes each distinct text once, so 311 copies of
    one text would cost one; 24 KB is as long as 9 MB once cut."""
    long_text = queries[0].text[:24_000]
    return [Query(q.query_id, f"{i} {long_text}", q.stance) for i, q in enumerate(queries)]


def time_in_process(index: Path, queries: list[Query]) -> dict[str, float]:
    import citator.stance.retrieve.searcher as searcher_module
    from citator.data.queries import cut_for_search
    from citator.stance.retrieve.searcher import StanceSearcher

    searcher = StanceSearcher(index, cold=True)
    searcher.search(queries[1:3], 10)  # load the encoder once, outside the timings
    out = {}
    every_one_huge = all_long(queries)
    for name, cut, batch_ in (("no huge query", cut_for_search, queries[1:]),
                              ("one 9 MB query, cut", cut_for_search, queries),
                              ("one 9 MB query, uncut", lambda qs: list(qs), queries),
                              ("all 311 long queries, cut", cut_for_search, every_one_huge)):
        searcher_module.cut_for_search = cut
        start = time.perf_counter()
        searcher.search(batch_, 10)
        out[name] = time.perf_counter() - start
    searcher_module.cut_for_search = cut_for_search
    return out


def time_run_sh(index: Path, queries: Path, extra: list[str]) -> float:
    start = time.perf_counter()
    done = subprocess.run([str(ROOT / "run.sh"), "--index-dir", str(index), "--queries", str(queries),
                           "--output", str(WORK / "results.jsonl"), "--top-k", "10", *extra],
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(done.stderr)
    return time.perf_counter() - start


def time_verification(index: Path) -> dict[str, float]:
    from citator.stance.retrieve.index_files import verify_digests, verify_sizes
    from citator.stance.retrieve.layout import read_manifest
    from citator.stance.retrieve.searcher import StanceSearcher

    manifest = read_manifest(index)
    data = index / manifest.data_dir
    out = {"index_bytes": float(sum(e["bytes"] for e in manifest.files.values()))}
    for name, step in (("sizes_seconds", verify_sizes), ("sha256_seconds", verify_digests)):
        start = time.perf_counter()
        step(data, manifest.files)
        out[name] = time.perf_counter() - start
    start = time.perf_counter()
    StanceSearcher(index, cold=True)
    out["searcher_load_seconds"] = time.perf_counter() - start
    return out


def tally(examples: int) -> dict[str, dict[str, int]]:
    """Every reader of tests/data/test_hostile_readers.py on its fixed cases and `examples` damaged files."""
    import tempfile

    from fixtures.hostile import FIXED, FIXED_GZ, mutated, outcome
    from fixtures.review_run import build_run

    import data.test_hostile_readers as readers  # type: ignore[import-not-found]

    tmp = Path(tempfile.mkdtemp(prefix="citator-hostile-"))
    pool = b"".join((build_run(tmp / "run") / "pool.jsonl").read_bytes().splitlines(keepends=True)[:4])
    out: dict[str, dict[str, int]] = {}
    for name, (reader, valid, filename) in readers.READERS.items():
        counts: Counter[str] = Counter()
        folder = tmp / name.replace(" ", "-")
        folder.mkdir()
        sample = pool if name == "review pool" else valid

        def feed(data: bytes, gz: bool = False) -> None:
            path = folder / (filename + (".gz" if gz and name != "review pool" else ""))
            path.write_bytes(data)
            counts["tried"] += 1
            try:
                counts["read" if outcome(lambda: reader(path), path) is None else "clear_errors"] += 1
            except AssertionError:
                counts["tracebacks"] += 1

        for data in FIXED.values():
            feed(data)
        for data in FIXED_GZ.values():
            feed(data, gz=True)

        @settings(max_examples=examples, deadline=None, database=None,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
        @given(st.data())
        def damaged(data: st.DataObject) -> None:
            feed(data.draw(mutated(sample)))

        damaged()
        out[name] = {k: counts[k] for k in ("tried", "read", "clear_errors", "tracebacks")}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=ROOT / "src" / "citator" / "samples" / "casefacts" / "corpus.jsonl")
    parser.add_argument("--queries", type=Path, default=ROOT / "src" / "citator" / "samples" / "casefacts" / "queries.jsonl")
    parser.add_argument("--examples", type=int, default=200, help="damaged files per reader")
    parser.add_argument("--reuse", action="store_true", help="search the index an earlier run built (same code)")
    parser.add_argument("--artifacts", type=Path, help="trained artifacts to build the index with (default: none)")
    parser.add_argument("--no-timing", action="store_true", help="count the hostile inputs only")
    args = parser.parse_args()
    if args.no_timing:
        report = tallies(args.examples)
        write_json_atomic(ROOT / "benchmarks" / "results" / "hostile_tally.json", report)
        return
    from citator.stance.retrieve.index_dir import BuildOptions
    from citator.stance.workload import build, start_server, stop_server
    from citator.stance.retrieve.model import StanceModel

    WORK.mkdir(parents=True, exist_ok=True)
    load = os.getloadavg()[0]  # other work on the machine slows every timing here; it is reported beside them
    index = WORK / "index"
    if not args.reuse:
        model = StanceModel.load(args.artifacts) if args.artifacts else None
        build(args.corpus, index, BuildOptions(artifacts=model), serve=True)
    else:
        start_server(index)
    queries = batch(args.queries)
    write_queries(WORK / "queries.jsonl", queries)
    write_queries(WORK / "long_queries.jsonl", all_long(queries))
    try:
        report = {
            "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores",
            "load_average_at_start": load,
            "artifacts": str(args.artifacts) if args.artifacts else None,
            "corpus": str(args.corpus), "queries": len(queries), "huge_query_bytes": len(queries[0].text.encode()),
            "in_process_search_seconds": time_in_process(index, queries),
            "run_sh_seconds": {"cold (--no-server)": time_run_sh(index, WORK / "queries.jsonl", ["--no-server"]),
                               "server": time_run_sh(index, WORK / "queries.jsonl", []),
                               "all long, cold": time_run_sh(index, WORK / "long_queries.jsonl", ["--no-server"]),
                               "all long, server": time_run_sh(index, WORK / "long_queries.jsonl", [])},
            "index_verification": time_verification(index),
        }
    finally:
        stop_server(index)
    report.update(tallies(args.examples))
    print(f"{len(queries)} queries, one of {report['huge_query_bytes'] / 1e6:.1f} MB ({report['machine']}, load "
          f"average {load:.1f} at start)")
    for name, seconds in report["in_process_search_seconds"].items():
        print(f"  in-process search, {name:<22} {seconds:7.2f} s")
    for name, seconds in report["run_sh_seconds"].items():
        print(f"  run.sh, {name:<25} {seconds:7.2f} s")
    v = report["index_verification"]
    print(f"  index of {v['index_bytes'] / 1e6:.1f} MB: sizes {v['sizes_seconds'] * 1e3:.1f} ms, sha256 "
          f"{v['sha256_seconds'] * 1e3:.1f} ms, whole cold load {v['searcher_load_seconds']:.2f} s")
    write_json_atomic(ROOT / "benchmarks" / "results" / "hostile.json", report)


def tallies(examples: int) -> dict[str, Any]:
    """The readers' tally and every other surface's, printed as one table."""
    from hostile_surfaces import surfaces

    samples = ROOT / "src" / "citator" / "samples" / "casefacts"
    readers = tally(examples)
    totals: Counter[str] = Counter()
    for row in readers.values():
        totals.update(row)
    rows = {f"readers ({len(readers)})": {"tried": totals["tried"], "answered": totals["read"],
                                         "refused": totals["clear_errors"], "escapes": 0, "wrong_answers": 0,
                                         "tracebacks": totals["tracebacks"]}}
    rows.update(surfaces(samples / "corpus.jsonl", ROOT / "tests" / "statutes" / "fixtures" / "nrs_sections.jsonl",
                         examples))
    print(f"{'surface':<26}{'tried':>8}{'answered':>10}{'refused':>9}{'escapes':>9}{'wrong':>7}{'traceback':>11}")
    for name, row in rows.items():
        print(f"{name:<26}{row['tried']:>8}{row['answered']:>10}{row['refused']:>9}{row['escapes']:>9}"
              f"{row['wrong_answers']:>7}{row['tracebacks']:>11}")
    return {"machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores",
            "examples": examples, "reader_tally": readers, "surfaces": rows}


if __name__ == "__main__":
    main()
