"""Exact filters: applied before the top k, by one index and a sharded one alike (docs/metadata.md).

Every filtered result meets the filters; where at least k documents meet them there are exactly k, where fewer
there are exactly those (no filtered-out document, no score-0 filler); three shards answer as one index."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from citator.cli.main import main
from citator.data.filters import matches_all, parse_filters
from citator.data.queries import read_queries
from citator.data.results import read_results
from citator.errors import FilterError, IndexDirError
from citator.stance.brief.index import StanceIndex
from citator.stance.retrieve.index_dir import BuildOptions
from citator.stance.retrieve.layout import METADATA, open_folder
from citator.stance.retrieve.searcher import StanceSearcher
from citator.stance.shards.build import Sharding, build_sharded
from citator.stance.shards.search import open_searcher

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("error::RuntimeWarning")]

FILTERS = [
    ["date>=1950-01-01"],
    ["date<1900-01-01"],
    ["majority_vote>=7", "date>=1940-01-01"],
    ["court=Supreme Court of the United States", "decision_type != majority opinion"],
    ["majority_author=Marshall"],
    ["date>=2100-01-01"],  # nothing meets it
]


def _metadata(metadata_set: dict[str, Path]) -> dict[str, dict]:
    rows = [json.loads(line) for line in metadata_set["metadata"].open()]
    ids = [json.loads(line)["doc_id"] for line in metadata_set["corpus"].open()]
    by_id = {r.pop("doc_id"): r for r in rows}
    return {d: by_id.get(d, {}) for d in ids}


@pytest.fixture(scope="module")
def sharded_metadata_index(metadata_set: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    index_dir = tmp_path_factory.mktemp("sharded-metadata") / "index"
    build_sharded(metadata_set["corpus"], index_dir, Sharding(3),
                  BuildOptions(progress=False, metadata=metadata_set["metadata"]))
    return index_dir


@pytest.mark.parametrize("k", [3, 10])
@pytest.mark.parametrize("filters", FILTERS, ids=[" & ".join(f) for f in FILTERS])
def test_k_results_that_meet_the_filter_whenever_k_documents_do(metadata_index: Path, metadata_set: dict[str, Path],
                                                                 filters: list[str], k: int) -> None:
    meta = _metadata(metadata_set)
    meeting = {d for d, m in meta.items() if matches_all(parse_filters(filters), m)}
    queries = read_queries(metadata_set["queries"])[:8]
    for line in StanceSearcher(metadata_index).search(queries, k, filters=parse_filters(filters)):
        ids = line.doc_ids
        assert set(ids) <= meeting and len(set(ids)) == len(ids), line.query_id
        assert len(ids) == min(k, len(meeting)), (line.query_id, len(ids), len(meeting))


def test_the_filters_cases_are_not_trivial(metadata_set: dict[str, Path]) -> None:
    meta = _metadata(metadata_set)
    sizes = [sum(matches_all(parse_filters(f), m) for m in meta.values()) for f in FILTERS]
    assert sizes[-1] == 0 and any(0 < s < 10 for s in sizes) and any(10 <= s < len(meta) for s in sizes), sizes


def test_a_filtered_ranking_keeps_the_unfiltered_order_of_its_best(metadata_index: Path,
                                                                   metadata_set: dict[str, Path]) -> None:
    """Left-out documents take no place: a document ranked first of those meeting the filter, unfiltered, stays
    first filtered when the normalisation is unchanged (the filter leaves the signals' top n)."""
    searcher = StanceSearcher(metadata_index)
    queries = read_queries(metadata_set["queries"])[:8]
    meta = _metadata(metadata_set)
    filters = parse_filters(["date>=1900-01-01"])
    full = searcher.search(queries, len(meta))
    for whole, filtered in zip(full, searcher.search(queries, 5, filters=filters)):
        kept = [d for d in whole.doc_ids if matches_all(filters, meta[d])]
        assert filtered.doc_ids[0] in kept[:3], whole.query_id


def test_three_shards_filter_as_one_index(metadata_index: Path, sharded_metadata_index: Path,
                                          metadata_set: dict[str, Path]) -> None:
    queries = read_queries(metadata_set["queries"])
    one, sharded = StanceSearcher(metadata_index), open_searcher(sharded_metadata_index)
    assert sharded.metadata_keys == one.metadata_keys
    for filters in FILTERS:
        parsed = parse_filters(filters)
        for k in (3, 10):
            a, b = one.search(queries, k, filters=parsed), sharded.search(queries, k, filters=parsed)
            for x, y in zip(a, b):
                assert x.doc_ids == y.doc_ids, (filters, k, x.query_id)
                assert all(abs(d.score - e.score) <= 1e-5 for d, e in zip(x.results, y.results))
    with pytest.raises(FilterError, match="no document of this index has metadata 'nope'"):
        sharded.search(queries[:1], 3, filters=parse_filters(["nope=1"]))


def test_the_brief_carries_metadata_citation_and_filters(metadata_index: Path, sharded_metadata_index: Path) -> None:
    text = "A state may not tax an instrument of the federal government."
    for where in (metadata_index, sharded_metadata_index):
        index = StanceIndex.open(where)
        brief = index.brief(text, k=4, filters=["date<1900-01-01"])
        hits = [h for _, _, column in brief.columns() for h in column]
        assert hits and all(h.metadata["date"] < "1900-01-01" for h in hits)
        for hit in hits:
            year = hit.metadata["date"][:4]
            assert hit.citation == f"{hit.title}, {hit.metadata['citation']} ({year})"
            assert hit.to_json()["metadata"]["url"].startswith("https://")
        assert [h.doc_id for h in index.search(text, "supported", 4, ["date<1900-01-01"])] == \
            [h.doc_id for h in brief.columns()[0][2]]
        with pytest.raises(FilterError):
            index.brief(text, filters=["judge=Holmes"])
        index.close()


def test_an_index_without_metadata_answers_as_before_and_refuses_any_filter(small_index: Path) -> None:
    index = StanceIndex.open(small_index)
    hit = index.search("A grant of land is a contract.", "all", 1)[0]
    assert hit.citation is None and index.metadata_keys == []
    with pytest.raises(FilterError, match="it has: no metadata at all"):
        index.search("A grant of land is a contract.", "all", 1, ["court=x"])


def test_the_metadata_table_is_checked_as_the_index_opens(metadata_index: Path, tmp_path: Path) -> None:
    import shutil

    copy = tmp_path / "index"
    shutil.copytree(metadata_index, copy)
    table = open_folder(copy).path(METADATA)
    rows = json.loads(table.read_text())
    rows[0]["court"] = "Court of Somewhere Else"
    table.write_text(json.dumps(rows))
    with pytest.raises(IndexDirError):
        StanceSearcher(copy)


def _resealed_table(metadata_index: Path, tmp_path: Path, edit: Callable[[list[dict]], None]) -> Path:
    """A copy of the index whose metadata table `edit` changed, its manifest's file table re-recorded to match
    (as a careless tool or a hand edit would)."""
    import shutil

    from citator.stance.retrieve.index_files import record_files

    copy = tmp_path / "index"
    shutil.copytree(metadata_index, copy, ignore=shutil.ignore_patterns("service"))
    table = open_folder(copy).path(METADATA)
    rows = json.loads(table.read_text())
    edit(rows)
    table.write_text(json.dumps(rows))
    manifest = json.loads((copy / "manifest.json").read_text())
    manifest["files"] = record_files(copy / manifest["data_dir"])
    (copy / "manifest.json").write_text(json.dumps(manifest))
    return copy


def test_what_a_hit_shows_of_its_metadata_is_the_checked_tables(metadata_index: Path, tmp_path: Path) -> None:
    def move(rows: list[dict]) -> None:
        for row in rows:
            row["court"] = "Court of Somewhere Else"

    index = StanceIndex.open(_resealed_table(metadata_index, tmp_path, move))
    hit = index.search("A grant of land is a contract.", "all", 1)[0]
    assert hit.metadata["court"] == "Court of Somewhere Else"
    assert index.document(hit.doc_id).extra["court"] == "Court of Somewhere Else"


@pytest.mark.parametrize("key", ["\ud800", "x\u001b[31m", "", "a\nb", "text"])
def test_a_metadata_key_is_checked_as_it_is_read_back(metadata_index: Path, tmp_path: Path, key: str) -> None:
    def plant(rows: list[dict]) -> None:
        rows[0][key] = "b"

    with pytest.raises(IndexDirError, match="unreadable metadata"):
        StanceSearcher(_resealed_table(metadata_index, tmp_path, plant))


def test_search_and_brief_take_filters_on_the_command_line(metadata_index: Path, metadata_set: dict[str, Path],
                                                           tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                                           ) -> None:
    out = tmp_path / "results.jsonl"
    code = main(["search", "--index-dir", str(metadata_index), "--queries", str(metadata_set["queries"]),
                 "--output", str(out), "--top-k", "10", "--no-server", "--filter", "date < 1900-01-01"])
    meta = _metadata(metadata_set)
    meeting = {d for d, m in meta.items() if m.get("date", "9") < "1900-01-01"}
    assert code == 0 and 0 < len(meeting) < 10
    assert all(set(line.doc_ids) == meeting for line in read_results(out))
    capsys.readouterr()
    for bad in ("date < 1900", "nope=3", "court"):
        code = main(["search", "--index-dir", str(metadata_index), "--queries", str(metadata_set["queries"]),
                     "--output", str(tmp_path / "bad.jsonl"), "--no-server", "--filter", bad])
        err = capsys.readouterr().err
        assert code == 2 and err.startswith("FilterError: filter") and err.count("\n") == 1, err
        assert not (tmp_path / "bad.jsonl").exists()
    code = main(["brief", "--index-dir", str(metadata_index), "--format", "markdown", "--k", "2",
                 "--filter", "date<1900-01-01", "A state may not tax the federal bank."])
    shown = capsys.readouterr().out
    assert code == 0 and "U.S." in shown and "(18" in shown and "https://supreme.justia.com" in shown


def test_the_search_service_takes_filters(metadata_index: Path, metadata_set: dict[str, Path]) -> None:
    from citator.server.search_service import _answer
    from citator.stance.retrieve.service_protocol import decode_results, encode_request

    from citator.stance.retrieve.current import Current

    current = Current(metadata_index, StanceSearcher, lambda _: None)  # what the server holds: the current generation
    searcher = current.get()
    fingerprint = searcher.manifest.fingerprint
    queries = read_queries(metadata_set["queries"])[:3]
    reply = _answer(current, encode_request(fingerprint, queries, 10, ["date<1900-01-01"]))
    expected = searcher.search(queries, 10, filters=parse_filters(["date<1900-01-01"]))
    assert [r.doc_ids for r in decode_results(reply)] == [r.doc_ids for r in expected]
    refused = _answer(current, encode_request(fingerprint, queries, 10, ["nope=1"]))
    assert "results" not in refused and "FilterError" in refused["error"]


def test_a_trained_index_with_its_learned_ranker_filters_exactly_and_as_its_shards(
        metadata_set: dict[str, Path], small_artifacts: Path, tmp_path: Path) -> None:
    """The learned ranker reorders candidates: left-out documents are none of them while allowed ones are left,
    and three trained shards still answer as one trained index."""
    from citator.stance.retrieve.config import RetrievalConfig
    from citator.stance.retrieve.index_dir import build_index
    from citator.stance.retrieve.model import StanceModel

    artifacts = StanceModel.load(small_artifacts)
    options = BuildOptions(config=RetrievalConfig(fusion="learned", weights=artifacts.weights), artifacts=artifacts,
                           progress=False, metadata=metadata_set["metadata"])
    build_index(metadata_set["corpus"], tmp_path / "one", options)
    build_sharded(metadata_set["corpus"], tmp_path / "three", Sharding(3), options)
    one, three = StanceSearcher(tmp_path / "one"), open_searcher(tmp_path / "three")
    assert one.uses_ranker
    meta = _metadata(metadata_set)
    queries = read_queries(metadata_set["queries"])
    for filters in FILTERS:
        parsed = parse_filters(filters)
        meeting = {d for d, m in meta.items() if matches_all(parsed, m)}
        a, b = one.search(queries, 10, filters=parsed), three.search(queries, 10, filters=parsed)
        for x, y in zip(a, b):
            assert set(x.doc_ids) <= meeting and len(x.doc_ids) == min(10, len(meeting)), (filters, x.query_id)
            assert x.doc_ids == y.doc_ids, (filters, x.query_id)
            assert all(abs(d.score - e.score) <= 1e-5 for d, e in zip(x.results, y.results))
