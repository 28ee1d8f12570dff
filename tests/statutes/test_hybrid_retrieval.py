"""The two retrieval arms: the keyword arm as it was, the hybrid arm deterministic, versioned and cached safely."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from citator.statutes.crossrefs import cited_by, cited_doc_ids, cross_references, defined_terms, definitions_used, neighbours
from citator.statutes.hybrid import DEFAULT, RETRIEVAL_VERSION, HybridIndex, HybridSettings
from citator.statutes.keyword import RETRIEVAL_VERSION as KEYWORD_VERSION
from citator.statutes.keyword import KeywordIndex
from citator.statutes.pool import POOL_SIZE, build_pools
from citator.statutes.run import RunConfig, run_statutes
from citator.statutes.vectors import CAPTIONS, PASSAGE_KEYS, PASSAGES, SectionVectors, section_passages
from citator.data.atomic import CACHE_LOCK
from citator.data.hashing import sha256_file
from citator.data.statutes import StatuteSection, read_sections, read_suite
from citator.errors import OutputError, ReceiptError, StatuteError
from citator.statutes.review.pool import read_pool
from citator.statutes.providers.base import ChatProvider, Exchange

FIXTURES = Path(__file__).parent / "fixtures"


def test_keyword_arm_is_the_code_it_was(tmp_path: Path, nrs_sections: Path, nrs_suite: Path) -> None:
    """Pools, passages and metrics of the default arm are those the keyword code made before the hybrid arm existed
    (recorded from commit 6e13867 in keyword_parity.json)."""
    golden = json.loads((FIXTURES / "keyword_parity.json").read_text(encoding="utf-8"))
    run_statutes(RunConfig(nrs_sections, nrs_suite, tmp_path / "run"), None)
    pools: dict[str, list[list[object]]] = {}
    for name in ("pool.jsonl", "control_pools.jsonl"):
        for line in (tmp_path / "run" / name).read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            pools.setdefault(row["query_id"], []).append([row["doc_id"], row["keyword_rank"], row["passage_sha256"]])
    assert pools == golden["pools"]
    assert sha256_file(tmp_path / "run" / "metrics.json") == golden["metrics_sha256"]
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["fingerprint"]["retrieval_version"] == KEYWORD_VERSION and "retrieval" not in manifest["fingerprint"]


def test_cross_references_and_neighbours() -> None:
    assert cited_doc_ids("as described in NRS 1.4653 and NRS 432B.220, or NRS 1.4653 again") == [
        "NRS 1.4653", "NRS 432B.220"]
    assert cited_doc_ids("pursuant to §§ 16-904 and 16-905, or section 22-3211.") == [
        "D.C. Code § 16-904", "D.C. Code § 16-905", "D.C. Code § 22-3211"]
    # Every number of a list after one marker, subsections dropped; a range's first section, not its last.
    assert cited_doc_ids("under NRS 432B.220, 432B.230 or 432B.340, as provided in NRS 1.425 to 1.4695, inclusive") == [
        "NRS 432B.220", "NRS 432B.230", "NRS 432B.340", "NRS 1.425"]
    assert cited_doc_ids("§§ 1-1001.08(o), 1-1001.16(o), and 1-1001.17(k); §§ 1-609.01 through 1-609.03; "
                         "sections 22-3211 and 22-3212.") == [
        "D.C. Code § 1-1001.08", "D.C. Code § 1-1001.16", "D.C. Code § 1-1001.17", "D.C. Code § 1-609.01",
        "D.C. Code § 22-3211", "D.C. Code § 22-3212"]
    assert cited_doc_ids("chapter 49 of NRS, within 5 days; section 12 of the Act") == []
    sections = [StatuteSection("NRS 1.1", "", "See NRS 1.3.", chapter="1"),
                StatuteSection("NRS 1.2", "", "Nothing.", chapter="1"),
                StatuteSection("NRS 1.3", "", "See NRS 1.3 and NRS 9.9.", chapter="1"),
                StatuteSection("NRS 1.3 (version 2)", "", "Text.", chapter="1"),
                StatuteSection("NRS 2.1", "", "Other chapter.", chapter="2")]
    # Every printed version of a cited section; a section never cites itself; unknown citations are dropped.
    assert cross_references(sections) == [(2, 3), (), (3,), (), ()]
    assert cited_by(cross_references(sections)) == [(), (), (0,), (0, 2), ()]
    assert neighbours(sections, 3) == [2] and neighbours(sections, 1, reach=2) == [0, 2, 3]


def _chapter() -> list[StatuteSection]:
    return [
        StatuteSection("NRS 5.010", "Definitions.", "As used in this chapter, “minor” means a person under 18 and "
                       "“reasonable cause to believe” has the meaning ascribed in NRS 5.020.", chapter="5"),
        StatuteSection("NRS 5.020", "“Reasonable cause to believe” defined.", "Reasonable cause to believe means "
                       "a prudent person would suspect.", chapter="5"),
        StatuteSection("NRS 5.030", "Duty to report.", "A teacher with reasonable cause to believe a minor is "
                       "abused shall report it. See NRS 5.050.", chapter="5"),
        StatuteSection("NRS 5.040", "Records.", "Records of each minor are confidential.", chapter="5"),
        StatuteSection("NRS 5.050", "Penalty.", "A person who fails to report is guilty of a misdemeanor.", chapter="5"),
        StatuteSection("NRS 6.010", "Minors in court.", "A minor with reasonable cause to believe may testify.",
                       chapter="6"),
        StatuteSection("D.C. Code § 7-101", "Purpose; definitions.", "For this chapter: “PILOT” means a payment in lieu "
                       "of taxes, “minor” means a person under 21, and “payment plan” includes a schedule.", chapter="7"),
        StatuteSection("D.C. Code § 7-102", "Pilots.", "A pilot program; the idea of minority rights.", chapter="7"),
        StatuteSection("D.C. Code § 7-103", "Payments.", "Each PILOT is due from minors on a payment\n  plan.",
                       chapter="7"),
    ]


def test_definitions_are_found_in_headings_and_texts() -> None:
    sections = _chapter()
    # "Definitions." lists its terms as `“term” means`; "“X” defined." names it in the heading; others define nothing.
    assert defined_terms(sections[0]) == ["minor", "reasonable cause to believe"]
    assert defined_terms(sections[1]) == ["reasonable cause to believe"]
    assert defined_terms(StatuteSection("X 2", "Definition of “prompt,” and “as soon as practicable.”", "")) == [
        "prompt", "as soon as practicable"]
    assert defined_terms(sections[6]) == ["PILOT", "minor", "payment plan"]  # an acronym keeps its capitals
    assert defined_terms(sections[2]) == [] and defined_terms(
        StatuteSection("X 1", "Penalty.", "“Minor” means a child.")) == []
    used = definitions_used(sections)
    # Chapter 5: "minor" is used by 2 of its 5 sections (specificity 0.6), "reasonable cause to believe" by 1 (0.8);
    # the sections defining a term are not its users. The duty to report reaches both definition sections, at the
    # more specific term's strength for the one defining both; a definition section never links to itself or to
    # another defining the same term; chapter 6 sees none of chapter 5's definitions.
    assert used[2] == {0: pytest.approx(0.8), 1: pytest.approx(0.8)}
    assert used[3] == {0: pytest.approx(0.6)}
    assert used[0] == {} and used[1] == {} and used[4] == {} and used[5] == {}
    # Chapter 7: "PILOT" in capitals only, "minor" with a plural ending but never inside "minority", a term broken
    # across a line still found.
    assert used[7] == {} and used[8] == {6: pytest.approx(2 / 3)}


def test_definitions_do_not_depend_on_string_hashing(nrs_sections: Path) -> None:
    """Python salts str hashes per process: the links and their order must not follow it."""
    code = ("import json, sys; from citator.data.statutes import read_sections; "
            "from citator.statutes.crossrefs import definitions_used; "
            "print(json.dumps([list(d.items()) for d in definitions_used(read_sections(sys.argv[1]))]))")
    runs = {subprocess.run([sys.executable, "-c", code, str(nrs_sections)], capture_output=True, text=True, check=True,
                           env={**os.environ, "PYTHONHASHSEED": seed}).stdout for seed in ("1", "2", "3")}
    assert len(runs) == 1 and any(json.loads(runs.pop()))


def test_structure_scores_what_the_best_hits_cite_and_define() -> None:
    sections = _chapter()
    index = HybridIndex(sections, None, None, replace(DEFAULT, seeds=2))  # type: ignore[arg-type]
    first = np.array([0.0, 0.0, 2.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0])  # seeds: duty to report (rank 1), records (2)
    k = DEFAULT.rrf_k
    got = index.structure(first)
    # The penalty it cites at full strength; "Definitions." from both seeds, "“Reasonable cause” defined." from one.
    assert got == {4: pytest.approx(1 / (k + 1)), 0: pytest.approx(0.8 / (k + 1) + 0.6 / (k + 2)),
                   1: pytest.approx(0.8 / (k + 1))}
    # Each part can be switched off, and each setting is its own version.
    assert HybridIndex(sections, None, None, replace(DEFAULT, seeds=2, definitions=False)).structure(first) == {  # type: ignore[arg-type]
        4: pytest.approx(1 / (k + 1))}
    assert set(HybridIndex(sections, None, None, replace(DEFAULT, seeds=2, crossrefs=False)).structure(first)) == {0, 1}  # type: ignore[arg-type]
    versions = {HybridSettings().version(), replace(DEFAULT, definitions=False).version(),
                replace(DEFAULT, weights={**DEFAULT.weights, "structure": 1.0}).version(),
                replace(DEFAULT, cited_by=5).version()}
    assert len(versions) == 4 and "-defs1-" in RETRIEVAL_VERSION and "structure0.25" in RETRIEVAL_VERSION


def test_structure_reaches_the_best_sections_citing_a_hit() -> None:
    """A seed's citing sections are reached, at most `cited_by` of them, the best of the first fusion first (ties in
    corpus order); a section both cited by and citing a seed counts once."""
    sections = [StatuteSection("NRS 9.010", "Duty.", "A person shall report as NRS 9.060 provides.", chapter="9"),
                *(StatuteSection(f"NRS 9.0{n}0", "Procedure.", "A report made pursuant to NRS 9.010.", chapter="9")
                  for n in range(2, 6)),
                StatuteSection("NRS 9.060", "Both.", "Under NRS 9.010.", chapter="9")]
    k = DEFAULT.rrf_k
    first = np.array([1.0, 0.2, 0.0, 0.5, 0.0, 0.0])  # the seed: 9.010; its citers 9.020-9.060 rank 9.040, 9.020, ...
    index = HybridIndex(sections, None, None, replace(DEFAULT, seeds=1, cited_by=3))  # type: ignore[arg-type]
    assert index.structure(first) == {5: pytest.approx(1 / (k + 1)), 3: pytest.approx(1 / (k + 1)),
                                      1: pytest.approx(1 / (k + 1)), 2: pytest.approx(1 / (k + 1))}
    every = HybridIndex(sections, None, None, replace(DEFAULT, seeds=1, cited_by=5))  # type: ignore[arg-type]
    assert every.structure(first) == {j: pytest.approx(1 / (k + 1)) for j in range(1, 6)}
    off = HybridIndex(sections, None, None, replace(DEFAULT, seeds=1, cited_by=0))  # type: ignore[arg-type]
    assert off.structure(first) == {5: pytest.approx(1 / (k + 1))}


class _Flat:
    """Caption vectors and a query encoder that rank nothing (all cosines 0): the fusion under test is BM25's and
    the structure score's."""

    def __init__(self, n: int) -> None:
        self.captions = np.zeros((n, 4), dtype=np.float32)

    def encode_queries(self, texts: list[str], _kinds: list[str]) -> np.ndarray:
        return np.ones((len(texts), 4), dtype=np.float32)


def test_the_structure_score_is_fused_by_rank_among_the_sections_reached() -> None:
    sections = _chapter()
    flat = _Flat(len(sections))
    settings = replace(DEFAULT, seeds=2, weights={"bm25_section": 1.0, "dense_caption": 1.0, "structure": 0.25})
    index = HybridIndex(sections, flat, flat, settings)  # type: ignore[arg-type]
    without = HybridIndex(sections, flat, flat, replace(settings, weights={**settings.weights, "structure": 0.0}))  # type: ignore[arg-type]
    query = "teacher duty to report abuse"
    bonus = index.fused(query) - without.fused(query)
    reached = index.structure(without.fused(query))
    assert set(np.flatnonzero(bonus)) == set(reached)
    # Ranked by structure score, ties in corpus order: the n-th reached section earns 0.25 / (60 + n).
    order = sorted(reached, key=lambda i: (-reached[i], i))
    assert len(order) >= 3
    assert [bonus[i] for i in order] == pytest.approx([0.25 / (DEFAULT.rrf_k + n) for n in range(1, len(order) + 1)])


@pytest.fixture(scope="module")
def encoder(minilm_dir: Path):  # type: ignore[no-untyped-def]
    from citator.models.load import load_encoder

    return load_encoder(minilm_dir, device="cpu")


def _ids(index, queries) -> list[list[str]]:  # type: ignore[no-untyped-def]
    return [p.doc_ids for p in build_pools(index, queries)]


@pytest.mark.slow
def test_hybrid_pools_are_deterministic_and_cached(tmp_path: Path, encoder, nrs_sections: Path,  # type: ignore[no-untyped-def]
                                                   nrs_suite: Path) -> None:
    sections = read_sections(nrs_sections)
    queries = read_suite(nrs_suite)
    built = SectionVectors(sections, encoder, "enc-a", tmp_path / "idx", progress=False)
    assert built.source == "built"
    first = _ids(HybridIndex(sections, built, encoder), queries)
    # Same pools twice, and the same from vectors read back from the cache (captions and passages).
    assert first == _ids(HybridIndex(sections, built, encoder), queries)
    cached = SectionVectors(sections, encoder, "enc-a", tmp_path / "idx", progress=False)
    assert cached.source == "cache" and np.array_equal(cached.captions, built.captions)
    assert first == _ids(HybridIndex(sections, cached, encoder), queries)
    assert all(len(p) == POOL_SIZE for p in first)
    pools = build_pools(HybridIndex(sections, cached, encoder), queries)
    assert {p.retrieval_version for p in pools} == {RETRIEVAL_VERSION} and not any(p.fallback for p in pools)
    # Another encoder is another cache: rebuilt, not trusted.
    assert SectionVectors(sections, encoder, "enc-b", tmp_path / "idx", progress=False).source == "built"


@pytest.mark.slow
@pytest.mark.parametrize("name", [CAPTIONS, PASSAGES])
def test_a_damaged_cache_is_refused(tmp_path: Path, encoder, nrs_sections: Path, name: str) -> None:  # type: ignore[no-untyped-def]
    sections = read_sections(nrs_sections)
    vectors = SectionVectors(sections, encoder, "enc", tmp_path / "idx", progress=False)
    vectors.passages(["Teachers must report suspected abuse.", "Severability."])
    path = tmp_path / "idx" / name
    array = np.load(path)
    array[0, 0] += 0.5
    np.save(path, array)
    with pytest.raises(StatuteError, match=f"{name}.*sha256"):
        SectionVectors(sections, encoder, "enc", tmp_path / "idx", progress=False)


def _reseal(directory: Path) -> None:
    """Record the files' current sha256 in the cache's meta file, as an editor who knows the format would."""
    meta_path = directory / "hybrid_vectors.json"
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    meta["files"] = {name: sha256_file(directory / name) for name in meta["files"]}
    meta_path.write_text(json.dumps(meta), encoding="utf-8")


def _wide(path: Path) -> None:
    np.save(path, np.zeros((np.load(path).shape[0], 100), np.float32))


def _truncated(path: Path) -> None:
    path.write_bytes(path.read_bytes()[:-40])


def _pickled(path: Path) -> None:
    np.save(path, np.array([{"a": 1}], dtype=object), allow_pickle=True)


def _keys(value: str) -> Any:
    def edit(path: Path) -> None:
        path.write_text(value, encoding="utf-8")
    return edit


@pytest.mark.slow
@pytest.mark.parametrize(("name", "edit", "says"), [
    (CAPTIONS, _wide, "width 384"), (PASSAGES, _wide, "width 384"), (PASSAGES, _truncated, "unreadable"),
    (CAPTIONS, _pickled, "unreadable"), (PASSAGE_KEYS, _keys("[1, 2]"), "sha256 digests"),
    (PASSAGE_KEYS, _keys('[["a"], ["b"]]'), "sha256 digests"), (PASSAGE_KEYS, _keys("{not json"), "unreadable"),
    (PASSAGE_KEYS, _keys('["' + "a" * 64 + '"]'), "not 1 finite"),  # one key for two vectors
    ("hybrid_vectors.json", _keys("[" * 100_000), "unreadable"),
])
def test_a_resealed_cache_is_still_checked(tmp_path: Path, encoder, nrs_sections: Path, name: str,  # type: ignore[no-untyped-def]
                                            edit: Any, says: str) -> None:
    """Files that match the sha256 an edited meta file records are still read with every check: a width that is not
    the encoder's, a cut or pickled array, keys that are not digests, JSON nested past the parser's limit."""
    sections = read_sections(nrs_sections)
    directory = tmp_path / "idx"
    SectionVectors(sections, encoder, "enc", directory, progress=False).passages(["One text.", "Another text."])
    edit(directory / name)
    if name != "hybrid_vectors.json":
        _reseal(directory)
    with pytest.raises(StatuteError, match=f"{re.escape(says)}.*delete {re.escape(str(directory))} to rebuild"):
        SectionVectors(sections, encoder, "enc", directory, progress=False)


def _random_rows(path: Path) -> None:
    shape = np.load(path).shape
    rows = np.random.default_rng(0).normal(size=shape).astype(np.float32)
    np.save(path, rows / np.linalg.norm(rows, axis=1, keepdims=True))  # of the right shape, width and length


def _swap_two(path: Path) -> None:
    rows = np.load(path)
    rows[[0, 1]] = rows[[1, 0]]
    np.save(path, rows)


def _reversed(path: Path) -> None:
    np.save(path, np.load(path)[::-1].copy())


@pytest.mark.slow
@pytest.mark.parametrize(("name", "forge"), [(CAPTIONS, _random_rows), (CAPTIONS, _reversed),
                                              (PASSAGES, _random_rows), (PASSAGES, _swap_two)])
def test_forged_vectors_with_resealed_digests_are_refused(tmp_path: Path, encoder, nrs_sections: Path,  # type: ignore[no-untyped-def]
                                                           name: str, forge: Any) -> None:
    """The outside tester's case: the files' digests rewritten to match random vectors of the right shape, or two
    rows swapped. Rows this corpus uses are encoded again on load (a sample, all of them in a cache this small)."""
    sections = read_sections(nrs_sections)
    directory = tmp_path / "idx"
    texts = [t for s in sections[:3] for t in section_passages(s)][:6]
    SectionVectors(sections, encoder, "enc", directory, progress=False).passages(texts)
    forge(directory / name)
    _reseal(directory)
    with pytest.raises(StatuteError, match=f"{name}.*is not the vector the encoder makes of its text"):
        SectionVectors(sections, encoder, "enc", directory, progress=False)


@pytest.mark.slow
def test_the_spot_check_finds_a_forged_row_only_when_it_draws_it(tmp_path: Path, encoder, nrs_sections: Path,  # type: ignore[no-untyped-def]
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """What docs/guarantees.md says the cache does not stand against: one forged caption among 36 rows passes a
    load whose draw of 8 rows misses it, and is refused by one whose draw holds it."""
    import citator.statutes.vectors as vectors

    sections = read_sections(nrs_sections)
    directory = tmp_path / "idx"
    SectionVectors(sections, encoder, "enc", directory, progress=False)
    rows = np.load(directory / CAPTIONS)
    rows[5] = rows[6]
    np.save(directory / CAPTIONS, rows)
    _reseal(directory)
    drawn: list[list[int]] = []

    class Draw:
        def __init__(self, rows: list[int]) -> None:
            self.rows = rows

        def sample(self, population: list[int], k: int) -> list[int]:
            drawn.append(self.rows)
            return self.rows

    monkeypatch.setattr(vectors, "_DRAW", Draw([0, 1, 2, 3, 4, 7, 8, 9]))
    assert SectionVectors(sections, encoder, "enc", directory, progress=False).source == "cache"
    monkeypatch.setattr(vectors, "_DRAW", Draw([1, 2, 3, 4, 5, 7, 8, 9]))
    with pytest.raises(StatuteError, match="captions.npy.*row 5 is not the vector"):
        SectionVectors(sections, encoder, "enc", directory, progress=False)
    assert len(drawn) == 2 and len(sections) > vectors.SPOT_CHECK_ROWS


@pytest.mark.slow
def test_a_writer_has_the_cache_alone(tmp_path: Path, encoder, nrs_sections: Path) -> None:  # type: ignore[no-untyped-def]
    """A run adding passages waits for another run's lock, so the meta file never records one run's vectors beside
    another's keys; once it has the lock it writes a cache that reads back whole."""
    import fcntl
    import threading

    sections = read_sections(nrs_sections)
    directory = tmp_path / "idx"
    vectors = SectionVectors(sections, encoder, "enc", directory, progress=False)
    done = threading.Event()
    with open(directory / CACHE_LOCK, "a+b") as other:
        fcntl.flock(other, fcntl.LOCK_EX)
        worker = threading.Thread(target=lambda: (vectors.passages(["A new passage."]), done.set()))
        worker.start()
        assert not done.wait(1.0)  # blocked behind the other writer
    worker.join(60)
    assert done.is_set()
    again = SectionVectors(sections, encoder, "enc", directory, progress=False)
    assert np.array_equal(again.passages(["A new passage."]), vectors.passages(["A new passage."]))


@pytest.mark.parametrize("where", ["file", "under-file", "device"])
def test_a_cache_that_cannot_be_a_directory_is_refused_before_any_work(tmp_path: Path, nrs_sections: Path,
                                                                        nrs_suite: Path, where: str) -> None:
    a_file = tmp_path / "a-file"
    a_file.write_text("x", encoding="utf-8")
    index_dir = {"file": a_file, "under-file": a_file / "sub", "device": Path("/dev/null")}[where]
    out = tmp_path / "run"
    with pytest.raises(OutputError, match="vector cache .*not a directory"):
        run_statutes(RunConfig(nrs_sections, nrs_suite, out, retrieval="hybrid", index_dir=index_dir), None)
    assert not out.exists() and a_file.read_text(encoding="utf-8") == "x"


@pytest.mark.slow
def test_dense_signals_find_what_no_word_matches(tmp_path: Path, encoder, nrs_sections: Path) -> None:  # type: ignore[no-untyped-def]
    """A question sharing no indexed word with the corpus: keyword order is corpus order, the hybrid arm ranks."""
    sections = read_sections(nrs_sections)
    vectors = SectionVectors(sections, encoder, "enc", tmp_path / "idx", progress=False)
    query = "tribunal voids a clause; remainder survives?"
    keyword = KeywordIndex(sections)
    assert not keyword.scores(query).any()
    dense_only = replace(DEFAULT, weights={"dense_caption": 1.0, "dense_passage": 1.0})
    hits = HybridIndex(sections, vectors, encoder, dense_only, keyword).search(query, 5)
    assert "NRS 0.020" in [sections[h.index].doc_id for h in hits]  # Severability


@pytest.mark.parametrize("definitions", [True, False])
def test_candidates_follow_the_structure_around_the_best_hit(nrs_sections: Path, definitions: bool) -> None:
    sections = read_sections(nrs_sections)
    settings = replace(DEFAULT, depth=1, seeds=1, definitions=definitions, cited_by=3)
    index = HybridIndex(sections, None, None, settings)  # type: ignore[arg-type]
    full = {"bm25_section": np.zeros((1, len(sections))), "dense_caption": np.zeros((1, len(sections)))}
    first = np.zeros(len(sections))
    used = definitions_used(sections)
    xrefs = cross_references(sections)
    citers = cited_by(xrefs)
    top = next(i for i in range(len(sections)) if xrefs[i] and used[i] and len(citers[i]) > 3)
    first[top] = 1.0
    # Depth 1 of two all-zero signals is section 0; the rest is the best fused section's neighbours, citations, the
    # first sections citing it and (when on) the definitions its text uses.
    citing = citers[top][: settings.cited_by]  # all tied: corpus order
    expected = {0, *neighbours(sections, top), *xrefs[top], *citing,
                *(used[top] if definitions else ())}
    assert set(index.candidates(full, first)) == expected


class OnesProvider(ChatProvider):
    """Grades every candidate 1 and counts its calls (the run's version bookkeeping is under test, not grading)."""

    name = "ones"

    def __init__(self) -> None:
        self.model = "ones-1"
        self.calls = 0

    def describe(self) -> dict[str, Any]:
        return {"provider": self.name, "model": self.model, "version": self.model}

    def send(self, payload: Mapping[str, Any]) -> Exchange:
        self.calls += 1
        labels = re.findall(r"^\[(C\d+)\]", payload["messages"][-1]["content"], flags=re.MULTILINE)
        content = json.dumps({label: 1 for label in labels})
        return Exchange(200, {"model": self.model, "choices": [{"index": 0, "message": {"role": "assistant",
                        "content": content}, "logprobs": None}], "usage": {"prompt_tokens": 50, "completion_tokens": 9}})


@pytest.mark.slow
def test_hybrid_runs_are_versioned_and_keep_the_controls(tmp_path: Path, nrs_sections: Path, nrs_suite: Path) -> None:
    provider = OnesProvider()
    hybrid_run, keyword_run = tmp_path / "hybrid", tmp_path / "keyword"
    metrics = run_statutes(RunConfig(nrs_sections, nrs_suite, hybrid_run, retrieval="hybrid",
                                     index_dir=tmp_path / "idx"), provider)
    manifest = json.loads((hybrid_run / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["fingerprint"]["retrieval_version"] == RETRIEVAL_VERSION == metrics["retrieval_version"]
    assert manifest["fingerprint"]["retrieval"]["encoder_sha256"]
    receipts = [json.loads(p.read_text(encoding="utf-8")) for p in sorted((hybrid_run / "receipts").glob("*.json"))]
    assert receipts and {r["retrieval_version"] for r in receipts} == {RETRIEVAL_VERSION}
    # Exact-citation controls: rank 1 by direct lookup, never sent (8 requests per pooled query, none for them).
    suite = read_suite(nrs_suite)
    pooled = [q for q in suite if q.kind != "exact_citation"]
    assert provider.calls == 8 * len(pooled) == metrics["provider_requests"]
    assert metrics["by_split"]["dev"]["exact_citation"]["hit@1"] == 1.0
    assert all(c["provider_calls"] == 0 for c in metrics["controls"]["exact_citation"])
    # A run directory of one arm is not resumed with the other.
    with pytest.raises(ReceiptError, match="retrieval"):
        run_statutes(RunConfig(nrs_sections, nrs_suite, hybrid_run), provider)
    # Review items bind labels to the texts shown, not to the arm: a candidate both arms pooled has the same
    # hashes under both, so a reviewer's label counts for either.
    run_statutes(RunConfig(nrs_sections, nrs_suite, keyword_run), None)
    hybrid_items = {(e.item.query_id, e.item.doc_id): e.item.hashes for e in read_pool(hybrid_run)}
    keyword_items = {(e.item.query_id, e.item.doc_id): e.item.hashes for e in read_pool(keyword_run)}
    shared = hybrid_items.keys() & keyword_items.keys()
    assert shared and all(hybrid_items[k] == keyword_items[k] for k in shared)


def test_the_cli_takes_a_vector_cache_only_for_the_hybrid_arm(tmp_path: Path, nrs_sections: Path, nrs_suite: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    from citator.cli.main import main

    out = tmp_path / "run"
    rc = main(["bench", "statutes", "--corpus", str(nrs_sections), "--suite", str(nrs_suite), "--out", str(out),
               "--provider", "none", "--index-dir", str(tmp_path / "idx")])
    assert rc == 2 and "--index-dir is the hybrid arm's vector cache" in capsys.readouterr().err
    assert not out.exists()
    a_file = tmp_path / "a-file"
    a_file.write_text("x", encoding="utf-8")
    rc = main(["bench", "statutes", "--corpus", str(nrs_sections), "--suite", str(nrs_suite), "--out", str(out),
               "--provider", "none", "--retrieval", "hybrid", "--index-dir", str(a_file)])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and "OutputError" in err[0] and "not a directory" in err[0]
    assert not out.exists()
