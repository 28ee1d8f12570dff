"""A ranking that repeats a document is refused by every metric, and by `citator eval` with file, line and field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from citator.cli.main import main
from citator.data import Qrels, read_results, read_trec_run
from citator.errors import ResultsError, RunError
from citator.evaluate import evaluate, hit, ndcg, precision, reciprocal_rank, recall

TEN_TIMES = ["rel"] * 10


@pytest.mark.parametrize("metric", [ndcg, precision, recall, hit, reciprocal_rank])
def test_every_metric_refuses_a_repeated_document(metric) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(RunError, match='doc id "rel" is listed twice'):
        metric(TEN_TIMES, {"rel": 1}, 10)


def test_evaluate_names_the_query_and_never_scores_above_one() -> None:
    qrels = Qrels.from_dict({"q1": {"rel": 1}})
    with pytest.raises(RunError, match='query "q1": doc id "rel"'):
        evaluate(qrels, {"q1": TEN_TIMES}, ["ndcg@10"])
    # A repeat beyond the cut-off changes no score, and the distinct top is scored as before.
    assert evaluate(qrels, {"q1": ["rel", "x"]}, ["ndcg@10", "p@1"]) == {"ndcg@10": 1.0, "p@1": 1.0}


def _files(tmp_path: Path, results: list[dict]) -> list[str]:
    q = tmp_path / "queries.jsonl"
    q.write_text(json.dumps({"query_id": "q1", "text": "x", "stance": "supported"}) + "\n")
    gt = tmp_path / "gt.jsonl"
    gt.write_text(json.dumps({"query_id": "q1", "relevant_doc_ids": ["rel"]}) + "\n")
    r = tmp_path / "results.jsonl"
    r.write_text("".join(json.dumps(x) + "\n" for x in results))
    return ["eval", "--queries", str(q), "--ground-truth", str(gt), "--results", str(r)]


def test_eval_refuses_a_run_listing_the_relevant_document_ten_times(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    line = {"query_id": "q1", "results": [{"doc_id": "rel", "score": 1.0 - i / 10} for i in range(10)]}
    assert main(_files(tmp_path, [line])) == 2
    captured = capsys.readouterr()
    assert "reward" not in captured.out
    err = captured.err.strip().splitlines()
    assert err == ['ResultsError: results.jsonl line 1 field "results": results[1].doc_id "rel" is listed twice for '
                   "this query"]


def test_readers_refuse_repeats(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps({"query_id": "q", "results": [{"doc_id": "a", "score": 1}, {"doc_id": "a", "score": 0}]}))
    with pytest.raises(ResultsError, match='line 1 field "results"'):
        read_results(path)
    trec = tmp_path / "run.txt"
    trec.write_text("q Q0 a 1 2.0 t\nq Q0 b 2 1.0 t\nq Q0 a 3 0.5 t\n")
    with pytest.raises(ResultsError, match='run.txt line 3 field "docid": doc id "a" is listed twice'):
        read_trec_run(trec)
