"""An updated index answers as a build of the resulting corpus: after random sequences of adds, replacements and
removals, the same ids in the same order with scores within 1e-5 (BM25 statistics, dense vectors and, with a
trained model, its links, learned document vectors, expansions and late interaction), and briefs alike."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from citator.data.corpus import read_corpus
from citator.stance.brief.index import StanceIndex
from citator.stance.retrieve.index_dir import BuildOptions, build_index
from citator.stance.retrieve.layout import DOCUMENTS, open_folder
from citator.stance.retrieve.model import StanceModel
from citator.stance.retrieve.searcher import StanceSearcher
from citator.stance.shards.build import Sharding, build_sharded
from citator.stance.shards.search import open_searcher
from fixtures.updates import Model, assert_same_answers, sample_docs, sample_queries, write_corpus

PROPOSITIONS = ["A landlord owes a duty of care to a tenant's guests", "Evidence obtained without a warrant"]


def _apply(index: StanceIndex, model: Model, steps: int) -> None:
    for _ in range(steps):
        kind, items = model.next_change()
        index.add(items) if kind == "add" else index.remove(items)
        assert index.searcher.doc_ids == [d.doc_id for d in model.docs]


def _check_as_rebuilt(index_dir: Path, model: Model, reference: Path) -> None:
    """The index holds the model's corpus and answers searches and briefs as `reference`, a fresh build of it."""
    folder = open_folder(index_dir)
    held = folder.path(DOCUMENTS) if not folder.manifest.shards else None
    if held is not None:
        assert read_corpus(held) == model.docs
    queries = sample_queries(40)
    updated, rebuilt = open_searcher(index_dir), open_searcher(reference)
    assert_same_answers(updated.search(queries, 10), rebuilt.search(queries, 10))
    a, b = StanceIndex(updated), StanceIndex(rebuilt)
    for text in PROPOSITIONS:
        got, want = a.brief(text, 5), b.brief(text, 5)
        assert [c[:2] for c in got.columns()] == [c[:2] for c in want.columns()]
        for (_, _, mine), (_, _, theirs) in zip(got.columns(), want.columns()):
            assert [(h.doc_id, h.evidence.passage, h.flag, h.cited_by) for h in mine] == \
                   [(h.doc_id, h.evidence.passage, h.flag, h.cited_by) for h in theirs]
            assert all(abs(h.score - w.score) <= 1e-5 for h, w in zip(mine, theirs))
    # The treatment table too: the rows the resulting corpus's own text gives, as a rebuild extracts them.
    assert _rows(updated) == _rows(rebuilt)


def _rows(searcher) -> list[tuple[str, ...]]:  # type: ignore[no-untyped-def]
    return sorted((r.citing_doc_id, r.cited_doc_id, r.treatment, r.passage) for r in searcher.treatments.rows)


@pytest.mark.slow
@pytest.mark.parametrize("shards", [None, 3])
def test_twenty_random_updates_answer_as_a_rebuild(tmp_path: Path, shards: int | None) -> None:
    docs = sample_docs()
    model = Model(docs[:30], docs[30:120], seed=49 + (shards or 0))
    corpus = write_corpus(tmp_path / "start.jsonl", model.docs)
    index_dir = tmp_path / "index"
    if shards:
        build_sharded(corpus, index_dir, Sharding(shards), BuildOptions(progress=False))
    else:
        build_index(corpus, index_dir, BuildOptions(progress=False))
    index = StanceIndex.open(index_dir)
    _apply(index, model, 20)
    manifest = open_folder(index_dir).manifest
    assert manifest.generation.number == 20 and manifest.n_docs == len(model.docs)
    assert len(manifest.shards) == (shards or 0)
    if shards:  # where the sharding rule puts each document: the near-equal cut of the resulting corpus
        sizes = [ref.n_docs for ref in manifest.shards]
        assert max(sizes) - min(sizes) <= 1 and sum(sizes) == len(model.docs)
    reference = tmp_path / "rebuilt"
    final = write_corpus(tmp_path / "final.jsonl", model.docs)
    if shards:
        build_sharded(final, reference, Sharding(shards), BuildOptions(progress=False))
    else:
        build_index(final, reference, BuildOptions(progress=False))
    _check_as_rebuilt(index_dir, model, reference)
    # Only the generation before the current one is kept beside it.
    assert len(list(index_dir.glob("build-*"))) == 2


@pytest.mark.slow
def test_a_trained_index_updates_as_a_rebuild(small_stance_set: dict[str, Path], small_artifacts: Path,
                                              tmp_path: Path) -> None:
    """The model's parts fitted to the corpus (memory links, learned document vectors, the expanded documents'
    BM25, document tokens for late interaction) follow the documents an update adds, replaces and removes."""
    docs = read_corpus(small_stance_set["corpus"])
    held = {d.doc_id for d in docs}
    model = Model(docs, [d for d in sample_docs() if d.doc_id not in held][:60], seed=7)
    options = BuildOptions(artifacts=StanceModel.load(small_artifacts), keep_tokens=True, progress=False)
    index_dir = tmp_path / "index"
    build_index(small_stance_set["corpus"], index_dir, options)
    index = StanceIndex.open(index_dir)
    assert index.trained
    _apply(index, model, 6)
    reference = tmp_path / "rebuilt"
    build_index(write_corpus(tmp_path / "final.jsonl", model.docs), reference, options)
    assert StanceSearcher(reference).late_store is not None
    _check_as_rebuilt(index_dir, model, reference)
    got, want = StanceSearcher(index_dir), StanceSearcher(reference)
    assert got.learned is not None and want.learned is not None
    for a, b in zip(got.learned.links, want.learned.links):
        assert a.tolist() == b.tolist()


def test_a_removal_encodes_nothing_and_keeps_every_other_vector(small_index: Path, tmp_path: Path) -> None:
    import shutil

    import numpy as np

    from citator.stance.retrieve.layout import DENSE, DOC_IDS
    from citator.stance.retrieve.update import given
    from citator.stance.shards.update import update

    index_dir = tmp_path / "index"
    shutil.copytree(small_index, index_dir)
    before = open_folder(index_dir)
    ids = json.loads(before.path(DOC_IDS).read_text())
    vectors, starts = np.load(before.path(DENSE)), StanceSearcher(before).passage_starts
    manifest = update(index_dir, given(remove=[ids[3]]), progress=False)
    after = open_folder(index_dir)
    kept = np.concatenate([np.arange(starts[i], starts[i + 1] if i + 1 < len(starts) else len(vectors))
                           for i in range(len(ids)) if i != 3])
    assert np.array_equal(np.load(after.path(DENSE)), vectors[kept])
    assert manifest.generation.removed == 1 and manifest.n_docs == len(ids) - 1
    assert json.loads(after.path(DOC_IDS).read_text()) == ids[:3] + ids[4:]


def test_an_update_keeps_the_users_treatment_rows_whose_documents_remain(tmp_path: Path) -> None:
    docs = sample_docs()
    corpus = write_corpus(tmp_path / "start.jsonl", docs[:20])
    citing, cited, other = (d.doc_id for d in docs[:3])
    rows = tmp_path / "treatments.jsonl"
    rows.write_text(json.dumps({"citing_doc_id": citing, "cited_doc_id": cited, "treatment": "overrules",
                                "passage": "We overrule it today."}) + "\n"
                    + json.dumps({"citing_doc_id": other, "cited_doc_id": cited, "treatment": "questions"}) + "\n")
    build_index(corpus, tmp_path / "index", BuildOptions(treatments=rows, progress=False))
    index = StanceIndex.open(tmp_path / "index")
    assert index.treatment(cited)[0] == "red"
    index.add([docs[20]])  # a user's rows are no text of the corpus: the update carries them
    flag, citing_rows = index.treatment(cited)
    assert flag == "red" and {(c.doc_id, c.treatment) for c in citing_rows} >= {(citing, "overrules"),
                                                                                (other, "questions")}
    index.remove([citing])  # a row whose citing decision left goes with it
    flag, citing_rows = index.treatment(cited)
    assert flag == "yellow" and (other, "questions") in {(c.doc_id, c.treatment) for c in citing_rows}
    assert citing not in {c.doc_id for c in citing_rows}
