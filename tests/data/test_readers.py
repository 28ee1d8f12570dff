"""Every reader names file, line and field for each kind of bad input."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from citator.data import (
    iter_corpus,
    read_corpus,
    read_graded_qrels,
    read_ground_truth,
    read_queries,
    read_results,
    read_trec_qrels,
    read_trec_run,
    write_ground_truth,
    write_results,
    write_trec_qrels,
    write_trec_run,
)
from citator.data.jsonl import MAX_LINE_BYTES
from citator.data.queries import STANCE_RULE
from citator.errors import CorpusError, DataError, JudgmentError, QueryError, ResultsError


def _lines(path: Path, *rows: object) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")
    return path


DOC = {"doc_id": "a", "title": "A v. B", "text": "Facts."}


def test_corpus_round_trip_keeps_extra_keys(tmp_path: Path) -> None:
    p = _lines(tmp_path / "corpus.jsonl", DOC, {"doc_id": "b", "title": "", "text": "x", "court": "SCOTUS"})
    docs = read_corpus(p)
    assert [d.doc_id for d in docs] == ["a", "b"]
    assert docs[1].extra == {"court": "SCOTUS"}
    assert docs[1].to_json()["court"] == "SCOTUS"


@pytest.mark.parametrize(
    "bad,message",
    [
        ('{"doc_id": "a", "title": "t", "text": ', 'corpus.jsonl line 2: malformed JSON: Expecting value at column 39'),
        ({"title": "t", "text": "x"}, 'corpus.jsonl line 2 field "doc_id": missing field'),
        ({"doc_id": 7, "title": "t", "text": "x"}, 'corpus.jsonl line 2 field "doc_id": expected a string, got int'),
        ({"doc_id": "a", "title": "t", "text": "x"}, 'corpus.jsonl line 2 field "doc_id": duplicate doc_id "a" (first on line 1)'),
        ({"doc_id": "c", "title": "", "text": "  "}, 'corpus.jsonl line 2 field "text": document has neither title nor text'),
        ({"doc_id": "c", "title": 3, "text": "x"}, 'corpus.jsonl line 2 field "title": expected a string, got int'),
        ("[1, 2]", "corpus.jsonl line 2: expected a JSON object, got list"),
    ],
)
def test_corpus_errors_name_file_line_field(tmp_path: Path, bad: object, message: str) -> None:
    p = _lines(tmp_path / "corpus.jsonl", DOC, bad)
    with pytest.raises(CorpusError) as err:
        read_corpus(p)
    assert str(err.value) == message


def test_non_utf8_bytes_are_named(tmp_path: Path) -> None:
    p = tmp_path / "corpus.jsonl"
    p.write_bytes(json.dumps(DOC).encode() + b"\n" + b'{"doc_id": "b\xff", "text": "x"}\n')
    with pytest.raises(CorpusError, match=r"^corpus.jsonl line 2: not valid UTF-8 \(byte 13\)"):
        read_corpus(p)


def test_a_lone_surrogate_escape_is_named_and_a_pair_is_a_character(tmp_path: Path) -> None:
    p = tmp_path / "queries.jsonl"
    p.write_text('{"query_id": "a", "text": "emoji \\ud83d\\ude00 ok", "stance": "all"}\n'
                 '{"query_id": "b", "text": "abortion \\ud800 rights", "stance": "all"}\n')
    with pytest.raises(QueryError, match=r'^queries.jsonl line 2 field "text": holds a lone UTF-16 surrogate'):
        read_queries(p)
    p.write_text('{"query_id": "a", "text": "emoji \\ud83d\\ude00 ok", "stance": "all"}\n')
    assert read_queries(p)[0].text == "emoji \U0001f600 ok"
    p = tmp_path / "corpus.jsonl"
    p.write_text('{"doc_id": "\\udc00", "title": "", "text": "x"}\n')
    with pytest.raises(CorpusError, match='line 1 field "doc_id": holds a lone UTF-16 surrogate'):
        read_corpus(p)
    p.write_text('{"doc_id": "a", "title": "T \\udc00", "text": "x"}\n')
    with pytest.raises(CorpusError, match='line 1 field "title": holds a lone UTF-16 surrogate'):
        read_corpus(p)
    # A corpus keeps its extra keys and writes them into the index's copy: there they must be writable too.
    p.write_text('{"doc_id": "a", "title": "T", "text": "x", "meta": {"k": ["\\ud800"]}}\n')
    with pytest.raises(CorpusError, match='line 1 field "meta": holds a lone UTF-16 surrogate'):
        read_corpus(p)
    p.write_text('{"doc_id": "a", "title": "T", "text": "x", "\\udc01": 1}\n')
    with pytest.raises(CorpusError, match=r'line 1 field "\\udc01": holds a lone UTF-16 surrogate'):
        read_corpus(p)
    # A field no reader uses is kept as it is: extra keys are allowed, and nothing reads this one.
    p = tmp_path / "extra.jsonl"
    p.write_text('{"query_id": "a", "text": "x", "stance": "all", "note": "\\ud800"}\n')
    assert [q.query_id for q in read_queries(p)] == [q.query_id for q in read_queries(p, lenient=True)] == ["a"]


def test_line_over_10_mb_is_refused(tmp_path: Path) -> None:
    p = tmp_path / "corpus.jsonl"
    big = json.dumps({"doc_id": "b", "title": "", "text": "x" * MAX_LINE_BYTES})
    p.write_text(json.dumps(DOC) + "\n" + big + "\n", encoding="utf-8")
    with pytest.raises(CorpusError, match=r"^corpus.jsonl line 2: line is longer than 10485760 bytes$"):
        read_corpus(p)


def test_missing_and_empty_files(tmp_path: Path) -> None:
    with pytest.raises(CorpusError, match="file not found"):
        read_corpus(tmp_path / "nope.jsonl")
    with pytest.raises(CorpusError, match="is a directory; give a file"):
        read_corpus(tmp_path)
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(CorpusError, match="is not a regular file"):
        read_corpus(tmp_path / "fifo")
    from citator.data.jsonl import read_json
    with pytest.raises(DataError, match="is a directory; give a file"):
        read_json(tmp_path)
    with pytest.raises(CorpusError, match="corpus has no documents"):
        read_corpus(_lines(tmp_path / "corpus.jsonl", ""))


def test_corpus_is_streamed(tmp_path: Path) -> None:
    p = _lines(tmp_path / "corpus.jsonl", DOC, "not json")
    stream = iter_corpus(p)
    assert next(stream).doc_id == "a"  # the first document arrives before the bad line is read
    with pytest.raises(CorpusError):
        next(stream)


Q = {"query_id": "q1", "text": "States may not ban X.", "stance": "supported", "split": "dev"}


@pytest.mark.parametrize(
    "bad,message",
    [
        ({"query_id": "q2", "text": "t", "stance": "maybe"},
         'queries.jsonl line 2 field "stance": unknown stance "maybe": ' + STANCE_RULE),
        ({"query_id": "q1", "text": "t", "stance": "all"}, 'queries.jsonl line 2 field "query_id": duplicate query_id "q1" (first on line 1)'),
        ({"query_id": "q2", "text": "", "stance": "all"}, 'queries.jsonl line 2 field "text": must not be empty'),
        ({"query_id": "q2", "text": "t"}, 'queries.jsonl line 2 field "stance": missing; ' + STANCE_RULE),
        ({"query_id": "q2", "text": ["t"], "stance": "all"}, 'queries.jsonl line 2 field "text": expected a string, got list'),
    ],
)
def test_query_errors(tmp_path: Path, bad: object, message: str) -> None:
    with pytest.raises(QueryError) as err:
        read_queries(_lines(tmp_path / "queries.jsonl", Q, bad))
    assert str(err.value) == message


def test_one_stance_rule_in_both_messages(tmp_path: Path) -> None:
    # The rule says which commands need a stance and what it may be, whether the stance is missing or wrong.
    assert "give one of supported, refuted, all" in STANCE_RULE and "brief" in STANCE_RULE and "run.sh" in STANCE_RULE
    # Where it may be left out (a brief), a wrong one is still refused with the same rule.
    path = _lines(tmp_path / "queries.jsonl", {"query_id": "q2", "text": "t", "stance": "maybe"})
    with pytest.raises(QueryError) as err:
        read_queries(path, default_stance="all")
    assert str(err.value).endswith(STANCE_RULE)
    assert read_queries(_lines(tmp_path / "q.jsonl", {"query_id": "q", "text": "t"}), default_stance="all")[0].stance == "all"


def test_a_repeated_id_names_the_line_of_its_first_copy(tmp_path: Path) -> None:
    rows = (Q, {**Q, "query_id": "q2"}, {**Q, "query_id": "q3"}, {**Q, "query_id": "q2"})
    with pytest.raises(QueryError, match=r'^queries.jsonl line 4 field "query_id": duplicate query_id "q2" \(first on line 2\)$'):
        read_queries(_lines(tmp_path / "queries.jsonl", *rows))


def test_a_key_given_twice_in_one_object_is_refused(tmp_path: Path) -> None:
    # json keeps the last copy silently: {"doc_id": "d1", "doc_id": "d2"} would be read as d2 by us, d1 by another.
    path = tmp_path / "corpus.jsonl"
    path.write_text('{"doc_id": "d0", "title": "T", "text": "x"}\n'
                    '{"doc_id": "d1", "title": "T", "text": "x", "extra": {"a": 1, "a": 2}}\n')
    with pytest.raises(CorpusError, match=r"corpus.jsonl line 2: malformed JSON: the key 'a' given twice"):
        read_corpus(path)
    path.write_text('{"doc_id": "d1", "doc_id": "d2", "title": "T", "text": "x"}\n')
    with pytest.raises(CorpusError, match=r"line 1: malformed JSON: the key 'doc_id' given twice"):
        read_corpus(path)


def test_queries_keep_split_and_extra(tmp_path: Path) -> None:
    (q,) = read_queries(_lines(tmp_path / "queries.jsonl", Q))
    assert q.stance == "supported" and q.split == "dev" and q.extra["split"] == "dev"


def test_default_stance_for_stance_free_files(tmp_path: Path) -> None:
    (q,) = read_queries(_lines(tmp_path / "q.jsonl", {"query_id": "x", "text": "t"}), default_stance="all")
    assert q.stance == "all"


@pytest.mark.parametrize(
    "bad,message",
    [
        ({"query_id": "q2"}, 'gt.jsonl line 2 field "relevant_doc_ids": missing field'),
        ({"query_id": "q2", "relevant_doc_ids": "a"}, 'gt.jsonl line 2 field "relevant_doc_ids": expected a list of non-empty strings'),
        ({"query_id": "q2", "relevant_doc_ids": ["a", "a"]}, 'gt.jsonl line 2 field "relevant_doc_ids": duplicate doc ids in list'),
        ({"query_id": "q1", "relevant_doc_ids": ["a"]}, 'gt.jsonl line 2 field "query_id": duplicate query_id "q1" (first on line 1)'),
    ],
)
def test_ground_truth_errors(tmp_path: Path, bad: object, message: str) -> None:
    with pytest.raises(JudgmentError) as err:
        read_ground_truth(_lines(tmp_path / "gt.jsonl", {"query_id": "q1", "relevant_doc_ids": ["a"]}, bad))
    assert str(err.value) == message


def test_ground_truth_and_trec_qrels_round_trip(tmp_path: Path) -> None:
    qrels = read_ground_truth(_lines(tmp_path / "gt.jsonl", {"query_id": "q1", "relevant_doc_ids": ["b", "a"]}))
    write_ground_truth(tmp_path / "gt2.jsonl", qrels)
    assert read_ground_truth(tmp_path / "gt2.jsonl") == qrels
    write_trec_qrels(tmp_path / "qrels.txt", qrels)
    assert read_trec_qrels(tmp_path / "qrels.txt").relevant("q1") == {"a", "b"}


def test_graded_qrels(tmp_path: Path) -> None:
    p = tmp_path / "qrels.json"
    p.write_text(json.dumps({"19335": {"1017759": 0, "1082489": 3}}))
    assert read_graded_qrels(p).of("19335")["1082489"] == 3
    p.write_text(json.dumps({"19335": {"1017759": "high"}}))
    with pytest.raises(JudgmentError, match='doc "1017759": grade must be an integer >= 0'):
        read_graded_qrels(p)


def test_trec_qrels_errors(tmp_path: Path) -> None:
    p = tmp_path / "qrels.txt"
    p.write_text("q1 0 d1 1\nq1 0 d2\n")
    with pytest.raises(JudgmentError, match=r"^qrels.txt line 2: expected 4 columns"):
        read_trec_qrels(p)
    p.write_text("q1 0 d1 one\n")
    with pytest.raises(JudgmentError, match=r'^qrels.txt line 1 field "grade": grade \'one\' is not an integer'):
        read_trec_qrels(p)


def test_results_and_trec_run_round_trip(tmp_path: Path) -> None:
    p = _lines(tmp_path / "r.jsonl", {"query_id": "q1", "results": [{"doc_id": "a", "score": 2}, {"doc_id": "b", "score": 1.5}]})
    lines = read_results(p)
    assert lines[0].doc_ids == ["a", "b"] and lines[0].results[0].score == 2.0
    write_results(tmp_path / "r2.jsonl", lines)
    assert read_results(tmp_path / "r2.jsonl") == lines
    write_trec_run(tmp_path / "run.txt", lines)
    assert read_trec_run(tmp_path / "run.txt") == lines


@pytest.mark.parametrize(
    "bad,message",
    [
        ({"query_id": "q1", "results": {}}, 'r.jsonl line 1 field "results": expected a list'),
        ({"query_id": "q1", "results": [{"doc_id": "a", "score": "1"}]}, 'r.jsonl line 1 field "results": results[0].score must be a number'),
        ({"query_id": "q1", "results": [{"doc_id": "", "score": 1}]}, 'r.jsonl line 1 field "results": results[0].doc_id must be a non-empty string'),
    ],
)
def test_results_type_errors(tmp_path: Path, bad: object, message: str) -> None:
    with pytest.raises(ResultsError) as err:
        read_results(_lines(tmp_path / "r.jsonl", bad))
    assert str(err.value) == message


def test_lenient_queries_answer_what_can_be_answered(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = _lines(tmp_path / "queries.jsonl", {"query_id": "a", "text": "x", "stance": "all"},
               {"query_id": "b", "text": " ", "stance": "refuted"})
    queries = read_queries(p, lenient=True)
    assert [(q.query_id, q.stance) for q in queries] == [("a", "all"), ("b", "refuted")]
    assert 'queries.jsonl line 2 field "text": empty text' in capsys.readouterr().err
    with pytest.raises(QueryError, match='unknown stance "neutral"'):  # a wrong request stays an error
        read_queries(_lines(tmp_path / "bad.jsonl", {"query_id": "a", "text": "x", "stance": "neutral"}), lenient=True)
    with pytest.raises(QueryError):  # duplicate ids stay an error even when lenient
        read_queries(_lines(tmp_path / "dup.jsonl", Q, Q), lenient=True)


def test_lenient_corpus_keeps_an_empty_document(tmp_path: Path) -> None:
    p = _lines(tmp_path / "corpus.jsonl", DOC, {"doc_id": "b", "title": "", "text": ""})
    assert [d.doc_id for d in read_corpus(p, lenient=True)] == ["a", "b"]


def test_byte_order_mark_is_skipped(tmp_path: Path) -> None:
    p = tmp_path / "corpus.jsonl"
    p.write_bytes(b"\xef\xbb\xbf" + json.dumps(DOC).encode() + b"\n")
    assert read_corpus(p)[0].doc_id == "a"
