"""`citator eval` and `citator validate` as a user runs them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from citator.cli.main import main


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture()
def files(tmp_path: Path) -> dict[str, Path]:
    corpus = _write(tmp_path / "corpus.jsonl", [{"doc_id": f"d{i}", "title": "", "text": f"doc {i}"} for i in range(4)])
    queries = _write(
        tmp_path / "queries.jsonl",
        [{"query_id": "p1:supported", "text": "x", "stance": "supported"}, {"query_id": "p1:all", "text": "x", "stance": "all"}],
    )
    gt = _write(
        tmp_path / "gt.jsonl",
        [{"query_id": "p1:supported", "relevant_doc_ids": ["d0"]}, {"query_id": "p1:all", "relevant_doc_ids": ["d1"]}],
    )
    results = _write(
        tmp_path / "results.jsonl",
        [
            {"query_id": "p1:supported", "results": [{"doc_id": "d0", "score": 2.0}, {"doc_id": "d1", "score": 1.0}]},
            {"query_id": "p1:all", "results": [{"doc_id": "d0", "score": 2.0}, {"doc_id": "d1", "score": 1.0}]},
        ],
    )
    return {"corpus": corpus, "queries": queries, "gt": gt, "results": results, "dir": tmp_path}


def test_eval_prints_table_and_writes_json(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    out = files["dir"] / "m.json"
    rc = main(["eval", "--queries", str(files["queries"]), "--ground-truth", str(files["gt"]),
               "--results", str(files["results"]), "--metric", "ndcg@10", "--metric", "hit@1", "--json", str(out)])
    assert rc == 0
    printed = capsys.readouterr().out
    assert "supported" in printed and "overall" in printed
    report = json.loads(out.read_text())
    ndcg_all = 1 / 1.584962500721156  # relevant doc at rank 2
    assert report["metrics"]["ndcg@10"]["per_query"] == {"p1:supported": 1.0, "p1:all": pytest.approx(ndcg_all)}
    assert report["metrics"]["ndcg@10"]["by_stance"]["all"] == pytest.approx(ndcg_all)
    assert report["metrics"]["hit@1"]["mean"] == 0.5
    assert report["reward"] == pytest.approx(max(0.0, ((1 + ndcg_all) / 2 - 0.5610484855098774) / (1 - 0.5610484855098774)))


def test_validate_reports_exact_reasons(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    args = ["validate", "--corpus", str(files["corpus"]), "--queries", str(files["queries"]), "--results", str(files["results"])]
    assert main(args + ["--top-k", "2"]) == 0
    assert main(args + ["--top-k", "3"]) == 1
    err = capsys.readouterr().err
    assert 'line 1 (query "p1:supported"): has 2 results, expected exactly 3' in err


def test_help_lists_every_command() -> None:
    out = subprocess.run([sys.executable, "-m", "citator.cli.main", "--help"], capture_output=True, text=True, check=True).stdout
    for command in ("eval", "validate"):
        assert command in out


def test_bad_input_exits_2_with_typed_error(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    (files["dir"] / "bad.jsonl").write_text('{"query_id": "q", "text": "x", "stance": "maybe"}\n')
    rc = main(["eval", "--queries", str(files["dir"] / "bad.jsonl"), "--ground-truth", str(files["gt"]),
               "--results", str(files["results"])])
    assert rc == 2
    assert 'QueryError: bad.jsonl line 1 field "stance": unknown stance "maybe"' in capsys.readouterr().err


def test_an_error_naming_a_hostile_id_stays_one_line(files: dict[str, Path],
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    _write(files["queries"], [{"query_id": "a\nb\x1b[31m", "text": "x", "stance": "all"},
                              {"query_id": "a\nb\x1b[31m", "text": "y", "stance": "all"}])
    assert main(["eval", "--queries", str(files["queries"]), "--ground-truth", str(files["gt"]),
                 "--results", str(files["results"])]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "\x1b" not in err and "a\\nb\\x1b[31m" in err, err
