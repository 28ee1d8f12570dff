"""The table's JSONL form: what it writes it reads back, and a damaged or foreign file ends in one TreatmentError
line naming file, line and field, never in another exception."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from citator.errors import TreatmentError
from citator.stance.treat import FORMAT, Treatment, TreatmentTable, read_table, read_user_table, write_table

TEXTS = {"a": "We overrule Booth v. Maryland today.", "b": "Facts.", "c": "More facts."}
ROW = Treatment("a", "b", "overrules", "We overrule Booth v. Maryland today.", 0, 36, "name", "Booth v. Maryland")


def lines(path: Path, *objs: object) -> Path:
    path.write_text("".join(json.dumps(o) + "\n" for o in objs), encoding="utf-8")
    return path


def row_json(**change: object) -> dict[str, object]:
    obj = {"citing_doc_id": "a", "cited_doc_id": "b", "treatment": "overrules", "passage": ROW.passage,
           "start": 0, "end": 36, "found_by": "name", "cited_as": "Booth v. Maryland"}
    obj.update(change)
    return obj


def test_a_written_table_reads_back_the_same(tmp_path: Path) -> None:
    user = Treatment("c", "b", "limits", "", None, None, "user", "")
    table = TreatmentTable((ROW, user))
    write_table(tmp_path / "t.jsonl", table)
    assert read_table(tmp_path / "t.jsonl", TEXTS) == table
    assert json.loads((tmp_path / "t.jsonl").read_text().splitlines()[0]) == {"format": FORMAT}


@pytest.mark.parametrize("objs, line, field", [
    ([row_json()], 1, "format"),
    ([{"format": "citator-treatments/2"}, row_json()], 1, "format"),
    ([{"format": FORMAT}, row_json(extra=1)], 2, "extra"),
    ([{"format": FORMAT}, row_json(treatment="criticizes")], 2, "treatment"),
    ([{"format": FORMAT}, row_json(start=True)], 2, "start"),
    ([{"format": FORMAT}, row_json(end=35)], 2, "end"),
    ([{"format": FORMAT}, row_json(found_by="guess")], 2, "found_by"),
    ([{"format": FORMAT}, row_json(cited_doc_id="a")], 2, "cited_doc_id"),
    ([{"format": FORMAT}, row_json(cited_doc_id="zz")], 2, "cited_doc_id"),
    ([{"format": FORMAT}, row_json(passage="We overrule Booth v. Marylanx today.")], 2, "passage"),
    ([{"format": FORMAT}, row_json(), row_json()], 3, "treatment"),
    ([{"format": FORMAT}, {k: v for k, v in row_json().items() if k != "cited_as"}], 2, "cited_as"),
])
def test_a_bad_row_is_one_line_naming_file_line_and_field(tmp_path: Path, objs: list, line: int, field: str) -> None:
    with pytest.raises(TreatmentError) as err:
        read_table(lines(tmp_path / "t.jsonl", *objs), TEXTS)
    assert (err.value.line, err.value.field) == (line, field)
    assert str(err.value).startswith(f't.jsonl line {line} field "{field}": ') and "\n" not in str(err.value)


def test_a_users_file_needs_only_the_pair_and_the_treatment(tmp_path: Path) -> None:
    path = lines(tmp_path / "mine.jsonl", {"citing_doc_id": "c", "cited_doc_id": "b", "treatment": "questions",
                                           "passage": "I read it so."})
    (row,) = read_user_table(path, doc_ids=set(TEXTS))
    assert (row.treatment, row.start, row.found_by, row.passage) == ("questions", None, "user", "I read it so.")
    with_header = lines(tmp_path / "h.jsonl", {"format": FORMAT}, {"citing_doc_id": "c", "cited_doc_id": "b",
                                                                  "treatment": "follows"})
    assert read_user_table(with_header)[0].treatment == "follows"


@pytest.mark.parametrize("obj, field", [
    ({"citing_doc_id": "c", "cited_doc_id": "b", "treatment": "follows", "start": 3}, "start"),
    ({"citing_doc_id": "c", "cited_doc_id": "b", "treatment": "follows", "found_by": "name"}, "found_by"),
    ({"citing_doc_id": "c", "treatment": "follows"}, "cited_doc_id"),
    ({"citing_doc_id": "c", "cited_doc_id": "nowhere", "treatment": "follows"}, "cited_doc_id"),
    ({"citing_doc_id": "c", "cited_doc_id": "b", "treatment": "follows", "passage": 7}, "passage"),
    ({"citing_doc_id": "c", "cited_doc_id": "b", "treatment": "follows", "passage": "p" * 2001}, "passage"),
    ({"citing_doc_id": "c", "cited_doc_id": "b", "treatment": "follows", "cited_as": "B" * 301}, "cited_as"),
])
def test_a_users_bad_row_is_refused_like_any_other(tmp_path: Path, obj: dict, field: str) -> None:
    with pytest.raises(TreatmentError) as err:
        read_user_table(lines(tmp_path / "mine.jsonl", obj), doc_ids=set(TEXTS))
    assert err.value.field == field and err.value.line == 1


def test_a_missing_or_unreadable_file_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(TreatmentError, match="file not found"):
        read_table(tmp_path / "none.jsonl")
    with pytest.raises(TreatmentError, match="is a directory"):
        read_user_table(tmp_path)
    (tmp_path / "bin.jsonl").write_bytes(b'{"format": "citator-treatments/1"}\n\xff\xfe\n')
    with pytest.raises(TreatmentError, match="line 2: not valid UTF-8"):
        read_table(tmp_path / "bin.jsonl")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cut=st.integers(min_value=0, max_value=400), flip=st.integers(min_value=0, max_value=400),
       byte=st.integers(min_value=0, max_value=255), user=st.booleans())
def test_a_damaged_file_reads_or_is_refused_in_one_line(tmp_path: Path, cut: int, flip: int, byte: int,
                                                        user: bool) -> None:
    path = tmp_path / "t.jsonl"
    write_table(path, TreatmentTable((ROW, Treatment("c", "b", "limits", "x", None, None, "user", ""))))
    data = bytearray(path.read_bytes())
    if data:
        data[flip % len(data)] = byte
    path.write_bytes(bytes(data[:len(data) - cut % (len(data) + 1)]))
    try:
        got = read_user_table(path) if user else read_table(path, TEXTS)
    except TreatmentError as err:
        assert "\n" not in str(err) and str(err).startswith("t.jsonl")
        return
    rows = got if user else got.rows
    assert all(isinstance(r, Treatment) for r in rows)
    if not user:  # what was read is what was checked: every span still quotes its text
        assert all(r.start is None or TEXTS[r.citing_doc_id][r.start:r.end] == r.passage for r in rows)
