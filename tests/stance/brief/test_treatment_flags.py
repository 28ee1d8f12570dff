"""Treatment flags end to end: a build extracts the corpus's treatment table into the index (one index and sharded),
a user's rows are merged or refused in one line, the table is checked as the index opens, and every hit carries
its flag with the overruling case and passage as the reason, never reranked by it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from citator.errors import IndexDirError, TreatmentError
from citator.stance.brief.index import StanceIndex
from citator.stance.brief.render import render
from citator.stance.retrieve.index_dir import BuildOptions, build_index
from citator.stance.retrieve.index_files import file_entry
from citator.stance.retrieve.layout import MANIFEST, TREATMENTS, open_folder
from citator.stance.shards.build import Sharding, build_sharded

SANDERS, ACEVEDO = "t/sanders", "t/acevedo"
OVERRULING = ("In a 6-3 decision, the Court overruled Arkansas v. Sanders and held that the police may search a "
              "container in a car without a warrant when they have probable cause.")
PROPOSITION = "The police need a warrant to search luggage taken from the trunk of a taxi."
FILLER = ["A state may tax goods in interstate commerce once they come to rest.",
          "A jury of six persons satisfies the Sixth Amendment in a criminal trial.",
          "A city may zone land for single-family homes only.",
          "A union may not spend dues on politics over a member's objection.",
          "A patent may not claim an abstract idea.",
          "The press may publish a rape victim's name lawfully obtained.",
          "A school may not open the day with a prayer led by the state.",
          "A tax on newspapers alone violates the First Amendment.",
          "An agency's reading of an ambiguous statute is given deference.",
          "A sentence of death for a crime against property is excessive."]


@pytest.fixture(scope="module")
def flag_corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    docs = [{"doc_id": SANDERS, "title": "Arkansas v. Sanders",
             "text": "Facts of the case: Police searched luggage taken from the trunk of a taxi.\n\nConclusion: The "
                     "Court held that the police needed a warrant to search the luggage."},
            {"doc_id": ACEVEDO, "title": "California v. Acevedo",
             "text": f"Facts of the case: Police searched a bag in a car trunk.\n\nConclusion: {OVERRULING}"}]
    docs += [{"doc_id": f"t/{i}", "title": f"Party{i} v. Other{i}", "text": text} for i, text in enumerate(FILLER)]
    path = tmp_path_factory.mktemp("flags") / "corpus.jsonl"
    path.write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def flagged(flag_corpus: Path) -> Path:
    index_dir = flag_corpus.parent / "index"
    build_index(flag_corpus, index_dir, BuildOptions(progress=False))
    return index_dir


def _sanders(index: StanceIndex) -> object:
    hits = index.search(PROPOSITION, stance="all", k=12)
    return next(h for h in hits if h.doc_id == SANDERS)


def test_a_build_stores_the_table_and_a_hit_shows_its_red_flag_with_the_reason(flagged: Path) -> None:
    folder = open_folder(flagged)
    assert TREATMENTS in folder.manifest.files
    index = StanceIndex.open(flagged)
    hit = _sanders(index)
    assert hit.flag == "red"
    (reason,) = hit.reasons
    assert (reason.doc_id, reason.title, reason.treatment, reason.passage) == (
        ACEVEDO, "California v. Acevedo", "overrules", OVERRULING)
    acevedo = next(h for h in index.search(PROPOSITION, stance="all", k=12) if h.doc_id == ACEVEDO)
    assert acevedo.flag is None and acevedo.cited_by == ()
    # Every form says it: JSON carries the flag and the reason, the table and Markdown the words.
    brief = index.brief(PROPOSITION, k=12)
    as_json = next(h for h in json.loads(render(brief, "json"))["relevant"] if h["doc_id"] == SANDERS)
    assert as_json["flag"] == "red" and as_json["cited_by"][0]["passage"] == OVERRULING
    assert "RED FLAG: no longer good law: overruled by California v. Acevedo" in render(brief, "table")
    assert "**RED FLAG: no longer good law: overruled by California v. Acevedo" in render(brief, "markdown")


def test_flags_never_move_a_hit(flagged: Path, flag_corpus: Path, tmp_path: Path) -> None:
    # The same corpus with a user's row that turns the red flag into none: the ranking is the same, score for score.
    rows = tmp_path / "mine.jsonl"
    rows.write_text(json.dumps({"citing_doc_id": ACEVEDO, "cited_doc_id": SANDERS, "treatment": "follows"}) + "\n")
    other = tmp_path / "index"
    build_index(flag_corpus, other, BuildOptions(progress=False, treatments=rows))
    a = StanceIndex.open(flagged).search(PROPOSITION, stance="all", k=12)
    b = StanceIndex.open(other).search(PROPOSITION, stance="all", k=12)
    assert [(h.doc_id, h.score) for h in a] == [(h.doc_id, h.score) for h in b]
    sanders = _sanders(StanceIndex.open(other))
    assert sanders.flag is None and [(c.treatment, c.passage) for c in sanders.cited_by] == [("follows", "")]


def test_a_sharded_index_holds_the_corpus_table_beside_its_shards(flag_corpus: Path, tmp_path: Path) -> None:
    # Sanders and Acevedo fall in different shards: the table is the whole corpus's.
    index_dir = tmp_path / "sharded"
    manifest = build_sharded(flag_corpus, index_dir, Sharding(2), BuildOptions(progress=False))
    assert TREATMENTS in manifest.files
    assert all(TREATMENTS not in open_folder(index_dir / manifest.data_dir / ref.name).manifest.files
               for ref in manifest.shards)
    index = StanceIndex.open(index_dir)
    try:
        hit = _sanders(index)
        assert hit.flag == "red" and hit.reasons[0].doc_id == ACEVEDO
    finally:
        index.close()


@pytest.mark.parametrize("shards", [1, 2])
def test_a_side_files_dates_reach_the_extraction(flag_corpus: Path, tmp_path: Path, shards: int) -> None:
    # Dated by the side file alone, Acevedo comes first: a decision cannot overrule a later one, so no flag.
    side = tmp_path / "metadata.jsonl"
    side.write_text(json.dumps({"doc_id": ACEVEDO, "date": "1979-06-20"}) + "\n"
                    + json.dumps({"doc_id": SANDERS, "date": "1991-05-30"}) + "\n")
    index_dir, options = tmp_path / "index", BuildOptions(progress=False, metadata=side)
    if shards == 1:
        build_index(flag_corpus, index_dir, options)
    else:
        build_sharded(flag_corpus, index_dir, Sharding(shards), options)
    index = StanceIndex.open(index_dir)
    try:
        hit = _sanders(index)
        assert hit.flag is None and hit.metadata["date"] == "1991-05-30"
    finally:
        index.close()


def _rewrite_table(index_dir: Path, rows: list[dict[str, object]]) -> None:
    """Replace the index's table and record it in the file table, as if a build had written it."""
    manifest_path = index_dir / MANIFEST
    manifest = json.loads(manifest_path.read_text())
    path = index_dir / manifest["data_dir"] / TREATMENTS
    path.write_text("".join(json.dumps(r) + "\n" for r in [{"format": "citator-treatments/1"}, *rows]))
    manifest["files"][TREATMENTS] = file_entry(path)
    manifest_path.write_text(json.dumps(manifest))


def test_a_table_changed_or_not_of_this_corpus_is_refused_as_the_index_opens(flag_corpus: Path,
                                                                              tmp_path: Path) -> None:
    index_dir = tmp_path / "index"
    build_index(flag_corpus, index_dir, BuildOptions(progress=False))
    table = open_folder(index_dir).path(TREATMENTS)
    table.write_text(table.read_text().replace("overrules", "follows\u0020\u0020"[:9]))
    with pytest.raises(IndexDirError, match="sha256|differs|changed"):
        StanceIndex.open(index_dir)
    row = {"citing_doc_id": ACEVEDO, "cited_doc_id": SANDERS, "treatment": "overrules", "passage": "Not the text.",
           "start": 0, "end": 13, "found_by": "name", "cited_as": "Sanders"}
    _rewrite_table(index_dir, [row])
    with pytest.raises(TreatmentError, match="line 2.*passage"):
        StanceIndex.open(index_dir)
    _rewrite_table(index_dir, [{**row, "cited_doc_id": "t/elsewhere", "start": None, "end": None,
                                "found_by": "user"}])
    with pytest.raises(TreatmentError, match='line 2.*no document "t/elsewhere"'):
        StanceIndex.open(index_dir)


@pytest.mark.parametrize(("row", "field"), [
    ({"citing_doc_id": ACEVEDO, "cited_doc_id": "nowhere", "treatment": "overrules"}, "cited_doc_id"),
    ({"citing_doc_id": ACEVEDO, "cited_doc_id": SANDERS, "treatment": "praises"}, "treatment"),
    ({"citing_doc_id": ACEVEDO, "cited_doc_id": SANDERS}, "treatment"),
])
def test_citator_build_refuses_a_bad_user_row_in_one_line_and_builds_nothing(flag_corpus: Path, tmp_path: Path,
                                                                             row: dict[str, str], field: str) -> None:
    rows = tmp_path / "mine.jsonl"
    rows.write_text(json.dumps({"citing_doc_id": ACEVEDO, "cited_doc_id": SANDERS, "treatment": "limits"}) + "\n"
                    + json.dumps(row) + "\n")
    done = subprocess.run([sys.executable, "-m", "citator.cli.main", "build", "--corpus", str(flag_corpus),
                           "--index-dir", str(tmp_path / "index"), "--no-serve", "--no-artifacts",
                           "--treatments", str(rows)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and rows.name in lines[0] and "line 2" in lines[0] and field in lines[0], lines
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "index" / MANIFEST).exists()
