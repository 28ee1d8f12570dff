"""A training queries file's `split` field: all or none of its queries carry one, as a string."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from citator.errors import QueryError
from citator.stance.learn.labeled import check_splits


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows) + "\n")
    return path


def _row(i: int, **extra: object) -> dict:
    return {"query_id": f"q{i}", "text": f"proposition {i}", "stance": "supported", **extra}


def test_all_or_none_carry_a_split(tmp_path: Path) -> None:
    check_splits(_write(tmp_path / "all.jsonl", [_row(1, split="train"), _row(2, split="dev")]))
    check_splits(_write(tmp_path / "none.jsonl", [_row(1), _row(2)]))


def test_a_query_that_lost_its_split_is_named_by_line_and_field(tmp_path: Path) -> None:
    # A mangled key, as a damaged file has it: the query would otherwise count as both train and dev.
    rows = [_row(1, split="train"), {**_row(2), "[[split": "dev"}, _row(3, split="dev")]
    with pytest.raises(QueryError) as caught:
        check_splits(_write(tmp_path / "q.jsonl", rows))
    assert str(caught.value).startswith('q.jsonl line 2 field "split": missing field, while 2 other queries')


def test_a_split_that_is_not_a_string_is_refused(tmp_path: Path) -> None:
    with pytest.raises(QueryError, match='q.jsonl line 2 field "split": expected a string, got int'):
        check_splits(_write(tmp_path / "q.jsonl", [_row(1, split="train"), _row(2, split=1)]))


def test_train_refuses_it_in_one_line(tmp_path: Path, small_stance_set: dict,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    from citator.cli.main import main

    rows = [json.loads(line) for line in Path(small_stance_set["queries"]).read_text().splitlines() if line.strip()]
    rows[0].pop("split", None)
    rows[1]["split"] = rows[1].get("split", "train")
    queries = _write(tmp_path / "queries.jsonl", rows)
    assert main(["train", "--corpus", str(small_stance_set["corpus"]), "--queries", str(queries), "--ground-truth",
                 str(small_stance_set["gt"]), "--out", str(tmp_path / "art")]) == 2
    assert not (tmp_path / "art").exists()
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and 'queries.jsonl line 1 field "split": missing field' in err[0]
