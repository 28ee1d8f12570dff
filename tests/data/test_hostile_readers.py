"""Every reader, fed hostile and damaged files, either reads them or raises its typed one-line error naming the file.

Fixed cases from the outside tester's list (100k-deep JSON, a plain file named .gz, cut-short gzip, 5,000-digit
numbers, lone surrogates ...) and hypothesis-driven damage to a valid file of each format (tests/fixtures/hostile.py).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fixtures.hostile import FIXED, FIXED_GZ, gzip_bytes, mutated, outcome
from fixtures.review_run import build_run

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "src" / "citator" / "samples" / "casefacts"
STATUTES = REPO / "tests" / "statutes" / "fixtures"


def _head(path: Path, n: int) -> bytes:
    return b"".join(path.read_bytes().splitlines(keepends=True)[:n])


HEX = "ab" * 32
LABEL = {"query_id": "q", "doc_id": "d", "reviewer": "r", "section_grade": 2, "passage_grade": "unknown", "note": "",
         "query_sha256": HEX, "section_sha256": HEX, "passage_sha256": HEX, "complete": True,
         "labeled_at": "2026-01-01T00:00:00Z"}


def _readers() -> dict[str, tuple[Callable[[Path], Any], bytes, str]]:
    """name -> (reader of a path, a valid file's bytes, the file name it reads)."""
    from citator.data import (read_corpus, read_graded_qrels, read_ground_truth, read_queries, read_results,
                              read_trec_qrels, read_trec_run)
    from citator.data.jsonl import read_json
    from citator.data.statutes import read_labels as read_statute_labels, read_sections, read_suite
    from citator.errors import ConfigFileError
    from citator.statutes.review.exchange import read_labels
    from citator.statutes.review.pool import read_pool as read_review_pool
    from citator.statutes.review.report import read_ranking
    from citator.rerank.deployment import load_deployment
    from citator.rerank.pool import read_pool
    from citator.stance.retrieve.config import RetrievalConfig

    results = b"".join(json.dumps({"query_id": f"q{i}", "results": [{"doc_id": "a", "score": 2.0},
                                                                     {"doc_id": "b", "score": 1}]}).encode() + b"\n"
                       for i in range(3))
    return {
        "corpus": (read_corpus, _head(SAMPLES / "corpus.jsonl", 3), "corpus.jsonl"),
        "corpus (lenient)": (lambda p: read_corpus(p, lenient=True), _head(SAMPLES / "corpus.jsonl", 3), "corpus.jsonl"),
        "queries": (read_queries, _head(SAMPLES / "queries.jsonl", 3), "queries.jsonl"),
        "queries (lenient)": (lambda p: read_queries(p, lenient=True), _head(SAMPLES / "queries.jsonl", 3),
                              "queries.jsonl"),
        "ground truth": (read_ground_truth, _head(SAMPLES / "ground_truth.jsonl", 3), "ground_truth.jsonl"),
        "results": (read_results, results, "results.jsonl"),
        "trec run": (read_trec_run, b"q1 Q0 a 1 2.0 t\nq1 Q0 b 2 1.5 t\nq2 Q0 a 1 1 t\n", "run.trec"),
        "trec qrels": (read_trec_qrels, b"q1 0 a 1\nq1 0 b 0\nq2 0 a 2\n", "qrels.txt"),
        "graded qrels": (read_graded_qrels, b'{"q1": {"a": 2, "b": 0}, "q2": {"a": 1}}\n', "qrels.json"),
        "statute sections": (read_sections, _head(STATUTES / "nrs_sections.jsonl", 3), "sections.jsonl"),
        "statute suite": (read_suite, _head(STATUTES / "nrs_suite.jsonl", 2), "suite.jsonl"),
        "statute labels": (read_statute_labels, json.dumps(LABEL).encode() + b"\n", "labels.jsonl"),
        "label export": (read_labels, json.dumps(LABEL).encode() + b"\n", "labels.jsonl"),
        "ranking": (read_ranking, b'{"query_id": "q", "doc_ids": ["a", "b"]}\n', "ranking.jsonl"),
        "rerank pool": (read_pool, _head(REPO / "tests" / "rerank" / "fixtures" / "pool.jsonl", 1), "pool.jsonl"),
        "review pool": (lambda p: read_review_pool(p.parent), b"", "pool.jsonl"),
        "deployment": (load_deployment, b'{"attention": "sdpa"}\n', "deployment.json"),
        "retrieval config": (lambda p: RetrievalConfig.from_json(read_json(p, ConfigFileError), p.name),
                             b'{"k1": 1.2, "weights": {"bm25": 1.0}}\n', "config.json"),
    }


READERS = _readers()


@pytest.fixture(scope="module")
def review_pool(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    return _head(build_run(tmp_path_factory.mktemp("run")) / "pool.jsonl", 4)


def _valid(name: str, review_pool: bytes) -> bytes:
    return review_pool if name == "review pool" else READERS[name][1]


def _try(name: str, data: bytes, folder: Path, gz: bool = False) -> str | None:
    reader, _, filename = READERS[name]
    path = folder / (filename + (".gz" if gz else ""))
    if name == "review pool" and gz:
        return None  # the pool's name is fixed (RUN_DIR/pool.jsonl)
    path.write_bytes(data)
    return outcome(lambda: reader(path), path)


@pytest.mark.parametrize("name", sorted(READERS))
def test_the_valid_sample_reads(name: str, tmp_path: Path, review_pool: bytes) -> None:
    assert _try(name, _valid(name, review_pool), tmp_path) is None


@pytest.mark.parametrize("name", sorted(READERS))
def test_fixed_hostile_cases_end_in_a_typed_error(name: str, tmp_path: Path) -> None:
    for case, data in FIXED.items():
        _try(name, data, tmp_path)  # read or a typed one-line error; anything else fails here
    for case, data in FIXED_GZ.items():
        _try(name, data, tmp_path, gz=True)
    assert _try(name, b"{}\n", tmp_path) is not None or name in ("deployment", "retrieval config", "graded qrels")


@pytest.mark.parametrize("name", sorted(READERS))
def test_deeply_nested_json_is_refused_naming_the_line(name: str, tmp_path: Path) -> None:
    message = _try(name, FIXED["nested list 100k deep"], tmp_path)
    assert message is not None


@pytest.mark.parametrize("name", sorted(READERS))
def test_a_missing_file_and_a_directory_are_typed_errors(name: str, tmp_path: Path) -> None:
    reader, _, filename = READERS[name]
    outcome(lambda: reader(tmp_path / filename), tmp_path / filename)
    (tmp_path / "dir" / filename).mkdir(parents=True)
    assert outcome(lambda: reader(tmp_path / "dir" / filename), tmp_path / "dir" / filename) is not None


@pytest.mark.parametrize("name", sorted(READERS))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data(), gz=st.booleans())
def test_damaged_files_read_or_end_in_a_typed_error(
    name: str, tmp_path: Path, review_pool: bytes, data: st.DataObject, gz: bool
) -> None:
    damaged = data.draw(mutated(_valid(name, review_pool)))
    if gz and data.draw(st.booleans()):
        damaged = gzip_bytes(damaged)  # a real gzip of a damaged file, or the damaged bytes under a .gz name
    _try(name, damaged, tmp_path, gz=gz)
