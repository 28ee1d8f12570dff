"""Document metadata (docs/metadata.md): what a side file or a corpus record may hold, the short citation, and
filters over it; every refusal one line naming file, line and field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from citator.data.corpus import read_corpus
from citator.data.filters import Filter, check_keys, matches_all, parse_filter, parse_filters
from citator.data.metadata import document_metadata, read_side_metadata, short_citation
from citator.data.records import Document
from citator.errors import CorpusError, FilterError, MetadataError


def _lines(path: Path, *rows: object) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")
    return path


ACEVEDO = {"doc_id": "1990.89-1690", "citation": "500 U.S. 565", "date": "1991-05-30",
           "court": "Supreme Court of the United States", "jurisdiction": "US",
           "url": "https://supreme.justia.com/cases/federal/us/500/565/", "majority_vote": 6, "docket": "89-1690"}


def test_a_side_file_is_read_whole_and_null_means_absent(tmp_path: Path) -> None:
    side = read_side_metadata(_lines(tmp_path / "m.jsonl", ACEVEDO, {"doc_id": "b", "court": None, "term": "1990"}))
    assert dict(side.rows["1990.89-1690"]) == {k: v for k, v in ACEVEDO.items() if k != "doc_id"}
    assert dict(side.rows["b"]) == {"term": "1990"} and side.lines == {"1990.89-1690": 1, "b": 2}
    docs = side.apply([Document("b", "T", "x", {"court": "old", "other": [1]}), Document("c", "U", "y")])
    assert dict(docs[0].extra) == {"court": "old", "other": [1], "term": "1990"} and docs[1].extra == {}


@pytest.mark.parametrize(("row", "field", "says"), [
    ({"doc_id": "a", "date": "1991"}, "date", "ISO date"),
    ({"doc_id": "a", "date": "1991-02-30"}, "date", "ISO date"),
    ({"doc_id": "a", "date": 1991}, "date", "expected a string"),
    ({"doc_id": "a", "dissenting": ["Scalia"]}, "dissenting", "metadata values are scalars"),
    ({"doc_id": "a", "votes": {"for": 6}}, "votes", "metadata values are scalars"),
    ({"doc_id": "a", "flag": True}, "flag", "bool"),
    ({"doc_id": "a", "url": "javascript:alert(1)"}, "url", "https://"),
    ({"doc_id": "a", "citation": 500}, "citation", "expected a string"),
    ({"doc_id": "a", "n": 1e400}, "n", ""),
    ({"citation": "1 U.S. 1"}, "doc_id", "missing field"),
    # a document's own fields, keys no filter could name, overlong values, a docket that is no docket number
    ({"doc_id": "a", "text": "replaced"}, "text", "the document's own field"),
    ({"doc_id": "a", "title": "Other v. Title"}, "title", "the document's own field"),
    ({"doc_id": "a", "majority vote": 5}, "majority vote", "what --filter names"),
    ({"doc_id": "a", "a<=b": "x"}, "a<=b", "what --filter names"),
    ({"doc_id": "a", "x\u001b[31m": "x"}, "x\u001b[31m", "what --filter names"),
    ({"doc_id": "a", "notes": "n" * 2001}, "notes", "longer than 2000"),
    ({"doc_id": "a", "docket": 1.5}, "docket", "whole number"),
    ({"doc_id": "a", "docket": -3}, "docket", "whole number"),
])
def test_a_bad_value_is_one_line_naming_file_line_and_field(tmp_path: Path, row: dict, field: str, says: str) -> None:
    path = _lines(tmp_path / "meta.jsonl", {"doc_id": "ok"}, json.dumps(row).replace("Infinity", "1e400"))
    with pytest.raises(MetadataError) as raised:
        read_side_metadata(path)
    message = str(raised.value)
    assert message.startswith(f'meta.jsonl line 2 field "{field}"') and says in message and "\n" not in message


def test_duplicate_and_unknown_doc_ids_are_refused(tmp_path: Path) -> None:
    with pytest.raises(MetadataError, match=r'meta.jsonl line 2 field "doc_id": duplicate doc_id "a"'):
        read_side_metadata(_lines(tmp_path / "meta.jsonl", {"doc_id": "a"}, {"doc_id": "a"}))
    side = read_side_metadata(_lines(tmp_path / "meta.jsonl", {"doc_id": "a"}, {"doc_id": "zz"}))
    with pytest.raises(MetadataError, match=r'meta.jsonl line 2 field "doc_id": unknown doc_id "zz"'):
        side.check_known(["a", "b"])


def test_a_corpus_records_named_keys_are_checked_and_other_extras_kept(tmp_path: Path) -> None:
    good = {"doc_id": "a", "title": "T", "text": "x", "date": "1991-05-30", "tags": ["kept", "as", "extra"],
            "case name": "kept, but no filter could name it", "syllabus": "s" * 5000}
    (doc,) = read_corpus(_lines(tmp_path / "corpus.jsonl", good))
    assert doc.extra["tags"] == ["kept", "as", "extra"] and document_metadata(doc) == {"date": "1991-05-30"}
    assert len(doc.extra["syllabus"]) == 5000  # longer than a value: the copy keeps it, metadata does not
    bad = {**good, "doc_id": "b", "date": "May 30, 1991"}
    with pytest.raises(CorpusError, match=r'corpus.jsonl line 2 field "date": .* is not an ISO date'):
        read_corpus(_lines(tmp_path / "corpus.jsonl", good, bad))


def test_the_short_citation_is_the_usual_form() -> None:
    assert short_citation("California v. Acevedo", ACEVEDO) == "California v. Acevedo, 500 U.S. 565 (1991)"
    assert short_citation("Roe v. Wade", {"citation": "410 U.S. 113"}) == "Roe v. Wade, 410 U.S. 113"
    assert short_citation("", {"citation": "410 U.S. 113", "date": "1973-01-22"}) == "410 U.S. 113 (1973)"
    assert short_citation("No Reporter v. Yet", {"date": "2020-06-15", "court": "SCOTUS"}) is None
    # Not yet in a reporter: the docket number and the full date, "U.S." for the Supreme Court.
    slip = {"docket": "15-9173", "date": "2016-10-11", "court": "Supreme Court of the United States"}
    assert short_citation("Bosse v. Oklahoma", slip) == "Bosse v. Oklahoma, No. 15-9173 (U.S. Oct. 11, 2016)"
    assert short_citation("A v. B", {**slip, "date": "2010-09-30", "docket": "No. 09-1"}) == \
        "A v. B, No. 09-1 (U.S. Sept. 30, 2010)"
    assert short_citation("A v. B", {"docket": 7, "date": "2010-06-01", "court": "Ninth Circuit"}) == \
        "A v. B, No. 7 (Ninth Circuit June 1, 2010)"
    assert short_citation("A v. B", {"docket": 15.0, "date": "2010-06-01", "court": "U.S. Supreme Court"}) == \
        "A v. B, No. 15 (U.S. June 1, 2010)"
    assert short_citation("A v. B", {"docket": "Nos. 14-1, 14-2", "court": "Supreme Court of the United States"}) \
        == "A v. B, Nos. 14-1, 14-2 (U.S.)"
    assert short_citation("A v. B", {"docket": "NOV-1"}) == "A v. B, No. NOV-1"
    assert short_citation("A v. B", {"docket": "09-1"}) == "A v. B, No. 09-1"
    for odd in (-7, 1.5, "", " ", "No.", True):
        assert short_citation("A v. B", {"docket": odd, "date": "2010-06-01"}) is None, odd
    assert short_citation("A v. B", {**slip, "citation": "580 U.S. 1"}) == "A v. B, 580 U.S. 1 (2016)"


@pytest.mark.parametrize(("text", "meta", "expected"), [
    ("date>=1980-01-01", ACEVEDO, True), ("date<1991-05-30", ACEVEDO, False), ("date<=1991-05-30", ACEVEDO, True),
    ("court=Supreme Court of the United States", ACEVEDO, True), ("court != Supreme Court of the United States",
                                                                   ACEVEDO, False),
    ("majority_vote>5", ACEVEDO, True), ("majority_vote>=10", ACEVEDO, False),  # numbers as numbers: 10 > 6
    ("docket=89-1690", ACEVEDO, True), ("jurisdiction != US", {}, False),  # no key: no match, != too
])
def test_filters_compare_dates_numbers_and_text(text: str, meta: dict, expected: bool) -> None:
    assert matches_all(parse_filters([text]), meta) is expected


def test_whole_numbers_compare_exactly_and_only_ascii_numbers_are_numbers() -> None:
    assert matches_all(parse_filters(["n=9007199254740993"]), {"n": 9007199254740993})
    assert not matches_all(parse_filters(["n=9007199254740993"]), {"n": 9007199254740992})
    big = 123456789012345678901234567890
    assert matches_all(parse_filters([f"x={big}"]), {"x": big}) and not matches_all(parse_filters([f"x!={big}"]),
                                                                                     {"x": big})
    assert matches_all(parse_filters(["n<1.5e1"]), {"n": 7}) and matches_all(parse_filters(["n>-.5"]), {"n": 0})
    # Python's float() reads "1_0" and an Arabic-Indic seven as numbers; a filter compares them as text
    assert not matches_all(parse_filters(["n=1_0"]), {"n": 10}) and not matches_all(parse_filters(["n=\u0667"]),
                                                                                    {"n": 7})


@pytest.mark.parametrize("text", ["date", "date>=", "=5", "date>1991", "date=May 1991", "a" * 400, "court~x",
                                  "majority_vote < =5", "n>=>3", "n<1e999"])
def test_a_malformed_filter_is_one_line(text: str) -> None:
    with pytest.raises(FilterError) as raised:
        parse_filter(text)
    assert "\n" not in str(raised.value) and len(str(raised.value)) < 300


def test_an_unknown_key_names_the_keys_there_are() -> None:
    check_keys([Filter("court", "=", "x")], frozenset({"court", "date"}))
    with pytest.raises(FilterError, match=r"no document of this index has metadata 'courts' \(it has: court, date\)"):
        check_keys(parse_filters(["courts=x"]), frozenset({"court", "date"}))
    with pytest.raises(FilterError):
        parse_filters("date>=1980-01-01")  # one text, not a list of them


@pytest.mark.parametrize(("row", "says"), [
    ({"doc_id": "nowhere", "court": "X"}, 'meta.jsonl line 2 field "doc_id": unknown doc_id "nowhere"'),
    ({"doc_id": "d1", "date": "30/05/1991"}, 'meta.jsonl line 2 field "date"'),
    ({"doc_id": "d0", "court": "Y"}, 'meta.jsonl line 2 field "doc_id": duplicate doc_id "d0"'),
    ({"doc_id": "d1", "dissenting": ["A", "B"]}, 'meta.jsonl line 2 field "dissenting"'),
])
def test_build_refuses_a_bad_side_file_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                   row: dict, says: str) -> None:
    from citator.cli.main import main

    corpus = _lines(tmp_path / "corpus.jsonl", *({"doc_id": f"d{i}", "title": "T", "text": "words"} for i in range(12)))
    meta = _lines(tmp_path / "meta.jsonl", {"doc_id": "d0", "court": "X"}, row)
    code = main(["build", "--corpus", str(corpus), "--index-dir", str(tmp_path / "idx"), "--metadata", str(meta),
                 "--no-serve", "--no-artifacts"])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith(f"MetadataError: {says}") and err.count("\n") == 1, err
    assert not (tmp_path / "idx" / "manifest.json").exists()
