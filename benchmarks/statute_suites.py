"""The statute suites the benchmarks run: the dev suites in ../shared/data/statutes and three fresh hand-written sets:
benchmarks/data/fresh-statutes, which confirmed on new questions what was chosen on dev, and
benchmarks/data/fresh-statutes-2 and -3, written after the hybrid arm was declared and each read once as a held-out
check (PROVENANCE.md in each)."""

from __future__ import annotations

import argparse
import platform
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "statutes"
FRESH = {"fresh": ROOT / "benchmarks" / "data" / "fresh-statutes",
         "fresh2": ROOT / "benchmarks" / "data" / "fresh-statutes-2",
         "fresh3": ROOT / "benchmarks" / "data" / "fresh-statutes-3"}
CORPORA = {"nrs": "nevada_nrs_subset", "dc": "dc_code"}
SUITES = (*CORPORA, *(f"{fresh}-{c}" for fresh in FRESH for c in CORPORA))


def corpus_key(suite: str) -> str:
    """The corpus a suite asks about ("nrs" for "nrs" and "fresh2-nrs"): it names the vector cache's subfolder."""
    return suite.rpartition("-")[2]


def paths(data: Path, suite: str) -> tuple[Path, Path]:
    """(sections.jsonl, suite file) of `suite`."""
    corpus = data / CORPORA[corpus_key(suite)] / "sections.jsonl"
    fresh, _, key = suite.rpartition("-")
    if fresh:
        return corpus, FRESH[fresh] / f"{key}.jsonl"
    return corpus, data / CORPORA[suite] / "suite-dev.jsonl"


def display_path(path: Path, data: Path) -> str:
    """A suite or corpus file named relative to the repository or the data folder."""
    for base in (ROOT, data):
        if path.is_relative_to(base):
            return str(path.relative_to(base))
    return str(path)


def add_suite_arguments(parser: argparse.ArgumentParser, out: str, suites: tuple[str, ...] = SUITES) -> None:
    """The options every statute benchmark takes: data folder, suites, vector cache and results file."""
    parser.add_argument("--data", type=Path, default=DATA, help="folder holding nevada_nrs_subset/ and dc_code/")
    parser.add_argument("--suites", nargs="+", choices=SUITES, default=list(suites))
    parser.add_argument("--index-dir", type=Path, default=ROOT / "benchmarks" / "work" / "statutes-index",
                        help="the hybrid arm's MiniLM vector cache, one subfolder per corpus")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / out)


def write_results(out: Path, results: dict[str, object]) -> None:
    """`results`, with the machine they were measured on, written atomically to `out`."""
    from citator.data import write_json_atomic

    results["machine"] = {"python": platform.python_version(), "platform": platform.platform()}
    out.parent.mkdir(parents=True, exist_ok=True)
    write_json_atomic(out, results)
    print(f"wrote {out}")
