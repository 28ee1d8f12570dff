"""A sharded index answers as one index over the same corpus: the same top-10 ids and scores (within 1e-5),
untrained and with trained artifacts (learned ranker, memory, late interaction)."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from citator.data.queries import read_queries
from citator.data.records import ResultLine
from citator.stance.brief.index import StanceIndex
from citator.stance.brief.records import Hit
from citator.errors import ConfigError, IndexDirError, PropositionError
from citator.stance.retrieve.model import StanceModel
from citator.stance.retrieve.config import RetrievalConfig
from citator.stance.retrieve.index_dir import BuildOptions, build_index
from citator.stance.retrieve.index_files import file_entry
from citator.stance.retrieve.layout import MANIFEST, read_manifest
from citator.stance.retrieve.searcher import StanceSearcher
from citator.stance.shards.build import Sharding, build_sharded
from citator.stance.shards.search import ShardedSearcher, open_searcher
from citator.stance.workload import search


def assert_same_answers(one: list[ResultLine], sharded: list[ResultLine]) -> None:
    assert [r.query_id for r in one] == [r.query_id for r in sharded]
    for a, b in zip(one, sharded):
        assert [d.doc_id for d in a.results] == [d.doc_id for d in b.results], a.query_id
        assert max((abs(d.score - e.score) for d, e in zip(a.results, b.results)), default=0.0) <= 1e-5, a.query_id


@pytest.fixture(scope="module")
def sharded_index(small_stance_set: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    index_dir = tmp_path_factory.mktemp("sharded") / "index"
    build_sharded(small_stance_set["corpus"], index_dir, Sharding(3), BuildOptions(progress=False))
    return index_dir


@pytest.mark.slow
def test_three_shards_answer_as_one_index(small_index: Path, sharded_index: Path,
                                          small_stance_set: dict[str, Path]) -> None:
    queries = read_queries(small_stance_set["queries"])
    manifest = read_manifest(sharded_index)
    assert [ref.n_docs for ref in manifest.shards] == [14, 13, 13] and manifest.n_docs == 40
    searcher = open_searcher(sharded_index)
    assert isinstance(searcher, ShardedSearcher)
    assert_same_answers(StanceSearcher(small_index).search(queries, 10), searcher.search(queries, 10))
    # Deeper than the shards' share, and in batches of one: the same again.
    assert_same_answers(StanceSearcher(small_index).search(queries[:5], 30), searcher.search(queries[:5], 30, 1))


@pytest.mark.slow
@pytest.mark.parametrize("fusion", ["chosen", "learned"])
def test_trained_shards_answer_as_one_trained_index(small_stance_set: dict[str, Path], small_artifacts: Path,
                                                    tmp_path: Path, fusion: str) -> None:
    # "chosen": the artifacts' own choice on this tiny set (interpolation of learned signals); "learned": their
    # ranker over it, with the memory's citation priors and late interaction.
    artifacts = StanceModel.load(small_artifacts)
    config = None if fusion == "chosen" else RetrievalConfig(fusion="learned", weights=artifacts.weights)
    options = BuildOptions(config=config, artifacts=artifacts, progress=False)
    build_index(small_stance_set["corpus"], tmp_path / "one", options)
    build_sharded(small_stance_set["corpus"], tmp_path / "three", Sharding(3), options)
    one, three = StanceSearcher(tmp_path / "one"), ShardedSearcher(tmp_path / "three")
    assert "ft_dense" in three.names
    if fusion == "learned":
        assert one.ranker is not None and three.learned and three.late == one.uses_late_interaction
        assert "memory_vote" in three.names and "bm25_expanded" in three.names
    queries = read_queries(small_stance_set["queries"])
    assert_same_answers(one.search(queries, 10), three.search(queries, 10))
    # Briefs too: the memory's reasons come from the shard that holds each hit.
    texts = sorted({q.text for q in queries})[:3]
    assert_same_briefs(StanceIndex.open(tmp_path / "one"), StanceIndex(three), texts)
    assert any(h.memory for text in texts for h in StanceIndex(three).brief(text, 8).columns()[0][2])


@pytest.mark.slow
def test_search_cli_answers_from_a_sharded_index(small_index: Path, sharded_index: Path,
                                                 small_stance_set: dict[str, Path], tmp_path: Path) -> None:
    from citator.cli.main import main

    for name, index in (("one", small_index), ("three", sharded_index)):
        assert main(["search", "--index-dir", str(index), "--queries", str(small_stance_set["queries"]),
                     "--output", str(tmp_path / f"{name}.jsonl"), "--no-server"]) == 0
    one = [json.loads(line) for line in (tmp_path / "one.jsonl").open()]
    three = [json.loads(line) for line in (tmp_path / "three.jsonl").open()]
    assert len(one) == len(three) == 24
    for a, b in zip(one, three):
        assert a["query_id"] == b["query_id"]
        assert [d["doc_id"] for d in a["results"]] == [d["doc_id"] for d in b["results"]]


def test_build_refuses_what_shards_cannot_fuse(small_stance_set: dict[str, Path], tmp_path: Path) -> None:
    for config in (RetrievalConfig(fusion="rrf"), RetrievalConfig(stance_contrast=1.0)):
        with pytest.raises(ConfigError, match="sharded index"):
            build_sharded(small_stance_set["corpus"], tmp_path / "x", Sharding(2), BuildOptions(config=config, progress=False))
    for shards in (0, -1, 41):
        with pytest.raises(ConfigError, match="--shards"):
            build_sharded(small_stance_set["corpus"], tmp_path / "x", Sharding(shards), BuildOptions(progress=False))
    with pytest.raises(ConfigError, match="--workers"):
        build_sharded(small_stance_set["corpus"], tmp_path / "x", Sharding(2, workers=0), BuildOptions(progress=False))
    with pytest.raises(ConfigError, match="--ray"):
        build_sharded(small_stance_set["corpus"], tmp_path / "x", Sharding(2, workers=2), BuildOptions(progress=False))
    assert not (tmp_path / "x" / MANIFEST).exists()


def test_cli_asks_for_shards_with_ray(small_stance_set: dict[str, Path], tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    from citator.cli.main import main

    assert main(["build", "--corpus", str(small_stance_set["corpus"]), "--index-dir", str(tmp_path / "x"),
                 "--ray", "local", "--no-serve"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--shards" in err[0]
    # An address where no cluster is: one line, nothing built.
    assert main(["build", "--corpus", str(small_stance_set["corpus"]), "--index-dir", str(tmp_path / "y"),
                 "--shards", "2", "--ray", "127.0.0.1:9", "--no-serve"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--ray 127.0.0.1:9" in err[0], err
    assert not (tmp_path / "y" / MANIFEST).exists()
    # A search finds that address in the environment, and names it as the user gave it.
    assert main(["build", "--corpus", str(small_stance_set["corpus"]), "--index-dir", str(tmp_path / "y"),
                 "--shards", "2", "--no-serve"]) == 0
    capsys.readouterr()
    monkeypatch.setenv("CITATOR_RAY", "127.0.0.1:9")
    assert main(["search", "--index-dir", str(tmp_path / "y"), "--queries", str(small_stance_set["queries"]),
                 "--output", str(tmp_path / "out.jsonl"), "--no-server"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "$CITATOR_RAY=127.0.0.1:9" in err[0], err


@pytest.mark.slow
def test_a_damaged_shard_table_is_refused(sharded_index: Path, small_stance_set: dict[str, Path],
                                          tmp_path: Path) -> None:
    copy = tmp_path / "index"
    shutil.copytree(sharded_index, copy)
    obj = json.loads((copy / MANIFEST).read_text())
    cases = {
        "overlap": lambda o: o["shards"][1].update(start=0),
        "outside": lambda o: o["shards"][0].update(name="../elsewhere"),
        "short": lambda o: o["shards"].pop(),
        "not a list": lambda o: o.update(shards={"a": 1}),
        "an empty list": lambda o: o.update(shards=[]),
        "absolute": lambda o: o["shards"][0].update(name="/etc"),
        "bad count": lambda o: o["shards"][2].update(n_docs=-1),
        "named twice": lambda o: o["shards"][2].update(name=o["shards"][1]["name"]),
        # Two shards of equal size trade places: each holds other documents than the manifest says.
        "swapped": lambda o: (o["shards"][1].update(name="stance/shards/002"), o["shards"][2].update(name="stance/shards/001")),
    }
    for damage in cases.values():
        broken = json.loads(json.dumps(obj))
        damage(broken)
        (copy / MANIFEST).write_text(json.dumps(broken))
        with pytest.raises(IndexDirError, match="rebuild"):
            ShardedSearcher(copy)
    # A count no integer holds is a corrupt manifest, not a crash.
    (copy / MANIFEST).write_text(json.dumps(obj).replace('"n_docs": 40', '"n_docs": 1e400'))
    with pytest.raises(IndexDirError, match="corrupt manifest"):
        ShardedSearcher(copy)
    # What is read before its digest is checked must be in the file table, which then vouches for it.
    for name in ("doc_ids.json", f"{obj['shards'][1]['name']}/{MANIFEST}"):
        unlisted = json.loads(json.dumps(obj))
        del unlisted["files"][name]
        (copy / MANIFEST).write_text(json.dumps(unlisted))
        with pytest.raises(IndexDirError, match=f"does not list {name}"):
            ShardedSearcher(copy)
    # A shard built with other settings, its entry in the file table made to match: refused, not fused.
    shard_manifest = copy / obj["data_dir"] / obj["shards"][1]["name"] / MANIFEST
    original = shard_manifest.read_bytes()
    edited = json.loads(original)
    edited["config"]["weights"] = {"bm25": 1.0, "bm25_maxp": 0.0, "dense": 0.0}
    shard_manifest.write_text(json.dumps(edited))
    resealed = json.loads(json.dumps(obj))
    resealed["files"][f"{obj['shards'][1]['name']}/{MANIFEST}"] = file_entry(shard_manifest)
    (copy / MANIFEST).write_text(json.dumps(resealed))
    with pytest.raises(IndexDirError, match="shard stance/shards/001 was built with another"):
        ShardedSearcher(copy)
    shard_manifest.write_bytes(original)
    # The ids run.sh checks every answer against are read only as built.
    (copy / MANIFEST).write_text(json.dumps(obj))
    ids = copy / obj["data_dir"] / "doc_ids.json"
    kept = ids.read_bytes()
    ids.write_bytes(b"{" + kept[1:])
    with pytest.raises(IndexDirError, match="doc_ids.json: content differs"):
        search(copy, small_stance_set["queries"], use_server=False)
    ids.write_bytes(kept)
    # A shard's own files are checked when it is loaded, as one index's are.
    (copy / MANIFEST).write_text(json.dumps(obj))
    shard = copy / obj["data_dir"] / obj["shards"][1]["name"]
    dense = read_manifest(shard).path(shard, "dense.npy")
    dense.write_bytes(dense.read_bytes()[:-8] + b"\0" * 8)
    with pytest.raises(IndexDirError, match="rebuild"):
        ShardedSearcher(copy)


def assert_same_hits(one: tuple[Hit, ...], sharded: tuple[Hit, ...]) -> None:
    """The same documents, scores, evidence, per-signal scores and ranks over the corpus, and memory reasons."""
    assert [h.doc_id for h in one] == [h.doc_id for h in sharded]
    for a, b in zip(one, sharded):
        assert (a.rank, a.title, a.label) == (b.rank, b.title, b.label)
        assert abs(a.score - b.score) <= 1e-5, a.doc_id
        ea, eb = a.evidence, b.evidence
        assert (ea.passage, ea.start, ea.end, ea.text, ea.marks, ea.signal) == (
            eb.passage, eb.start, eb.end, eb.text, eb.marks, eb.signal), a.doc_id
        assert abs(ea.score - eb.score) <= 1e-5
        assert [(s.name, s.rank) for s in a.signals] == [(s.name, s.rank) for s in b.signals], a.doc_id
        assert max(abs(s.score - t.score) for s, t in zip(a.signals, b.signals)) <= 1e-5
        assert (a.memory is None) == (b.memory is None)
        if a.memory is not None:
            assert [(m.proposition_id, m.stance, m.text) for m in a.memory] == [
                (m.proposition_id, m.stance, m.text) for m in b.memory], a.doc_id  # type: ignore[union-attr]
            assert all(abs(m.similarity - n.similarity) <= 1e-5 for m, n in zip(a.memory, b.memory))  # type: ignore[arg-type]


def assert_same_briefs(one: StanceIndex, sharded: StanceIndex, texts: list[str]) -> None:
    assert sharded.trained == one.trained
    for text in texts:
        a, b = one.brief(text, 8), sharded.brief(text, 8)
        assert a.proposition == b.proposition
        assert [c[:2] for c in a.columns()] == [c[:2] for c in b.columns()]
        for (_, _, mine), (_, _, theirs) in zip(a.columns(), b.columns()):
            assert_same_hits(mine, theirs)
        assert_same_hits(one.search(text, "all", 12), sharded.search(text, "all", 12))
        # Every hit's rank under a signal counts the documents of every shard that score above it.
        assert any(s.rank > 1 for h in b.columns()[0][2] for s in h.signals)


@pytest.mark.slow
def test_a_sharded_index_briefs_as_one_index(small_index: Path, sharded_index: Path,
                                            small_stance_set: dict[str, Path]) -> None:
    texts = sorted({q.text for q in read_queries(small_stance_set["queries"])})[:4]
    one, three = StanceIndex.open(small_index), StanceIndex.open(sharded_index)
    assert isinstance(three.searcher, ShardedSearcher)
    assert_same_briefs(one, three, texts)
    # The document view reads the shard that holds the document.
    hit = one.brief(texts[0], 3).columns()[0][2][-1]
    assert three.document(hit.doc_id) == one.document(hit.doc_id)
    assert three.passage_in_place(hit.doc_id, 0, texts[0]) == one.passage_in_place(hit.doc_id, 0, texts[0])
    with pytest.raises(PropositionError, match="no document"):
        three.document("no such document")
    three.close()


@pytest.mark.slow
def test_brief_cli_reads_a_sharded_index(small_index: Path, sharded_index: Path, tmp_path: Path) -> None:
    from citator.cli.main import main

    text = "A state may not punish speech for its content."
    for name, index in (("one", small_index), ("three", sharded_index)):
        assert main(["brief", "--index-dir", str(index), text, "--format", "json", "--k", "4",
                     "--output", str(tmp_path / f"{name}.json")]) == 0
    one, three = (json.loads((tmp_path / f"{n}.json").read_text()) for n in ("one", "three"))
    assert one["stance_ranked"] == three["stance_ranked"]
    for stance in [key for key in ("supported", "refuted", "relevant") if one.get(key) is not None]:
        assert [h["doc_id"] for h in one[stance]] == [h["doc_id"] for h in three[stance]]
        assert [h["evidence"]["text"] for h in one[stance]] == [h["evidence"]["text"] for h in three[stance]]
        assert [[s["rank"] for s in h["signals"]] for h in one[stance]] == [
            [s["rank"] for s in h["signals"]] for h in three[stance]]


@pytest.mark.slow
def test_build_sh_and_run_sh_serve_a_sharded_index(small_index: Path, small_stance_set: dict[str, Path],
                                                   tmp_path: Path) -> None:
    from stance.test_stance_contract import REPO, sh

    from citator.data import read_results

    index = tmp_path / "index"
    done = sh(REPO / "build.sh", "--corpus", small_stance_set["corpus"], "--index-dir", index, "--no-artifacts",
              "--shards", "2")
    assert done.returncode == 0, done.stderr
    assert "2 shards" in done.stderr and "search server ready" in done.stderr
    try:
        for flags, how in (((), "(server,"), (("--no-server",), "(in-process")):
            out = tmp_path / f"results{len(flags)}.jsonl"
            done = sh(REPO / "run.sh", "--index-dir", index, "--queries", small_stance_set["queries"], "--output", out,
                      "--top-k", "10", *flags)
            assert done.returncode == 0 and how in done.stderr, done.stderr
            assert_same_answers(StanceSearcher(small_index).search(read_queries(small_stance_set["queries"]), 10),
                                list(read_results(out)))
    finally:
        sh(sys.executable, "-m", "citator.cli.main", "stop", "--index-dir", index)


def test_workers_are_sized_so_all_of_them_can_be_placed_at_once() -> None:
    from citator.stance.shards.build import builder_resources, cores_each
    from citator.stance.shards.workers import share_of_cpus

    assert cores_each([2], 1) == 2 and cores_each([2], 2) == 1
    assert cores_each([3, 3, 3], 4) == 1  # 2 cores each would place only three of them
    assert cores_each([8, 8], 2) == 8 and cores_each([8, 8], 3) == 4
    # A whole GPU each only where the GPU nodes can host every builder, with cores from those nodes.
    assert builder_resources([(16, 0), (4, 1)], 2) == (8, 0)
    assert builder_resources([(8, 2), (8, 2)], 4) == (4, 1)
    assert builder_resources([(16, 0), (4, 2)], 2) == (2, 1)
    # Shard searchers: a share of a CPU that places all of them (two 1-CPU nodes host three at a half each).
    assert share_of_cpus([2], 2) == 1.0 and share_of_cpus([2], 4) == 0.5 and share_of_cpus([1, 1], 3) == 0.5
    assert share_of_cpus([], 3) == 0.0


@pytest.mark.slow
def test_deep_answers_past_the_shards_bounds_and_candidates(small_stance_set: dict[str, Path], small_artifacts: Path,
                                                          tmp_path: Path) -> None:
    # Normalisation over the 5 best and a ranker over 8 candidates, asked for 12: the bounds come from the merged
    # best scores, the candidates from the merged depth, and places 9-12 are the interpolation's below the ranker's.
    artifacts_dir = tmp_path / "artifacts"
    shutil.copytree(small_artifacts, artifacts_dir)
    model = StanceModel.load(artifacts_dir)
    ranker = json.loads((artifacts_dir / "ranker.json").read_text())
    ranker["candidates"] = 8
    (artifacts_dir / "ranker.json").write_text(json.dumps(ranker))
    artifacts = model.save()  # the changed ranker recorded: a model is refused when a file differs from its record
    config = RetrievalConfig(fusion="learned", weights=artifacts.weights, norm_depth=5)
    options = BuildOptions(config=config, artifacts=artifacts, progress=False)
    build_index(small_stance_set["corpus"], tmp_path / "one", options)
    build_sharded(small_stance_set["corpus"], tmp_path / "three", Sharding(3), options)
    one, three = StanceSearcher(tmp_path / "one"), ShardedSearcher(tmp_path / "three")
    assert one.ranker is not None and one.ranker.candidates == 8 and three.learned
    queries = read_queries(small_stance_set["queries"])
    assert_same_answers(one.search(queries, 12), three.search(queries, 12))
    assert_same_answers(one.search(queries, 3), three.search(queries, 3, batch_size=5))
    # The ranker magnifies a last-bit difference of a feature (the bounds span 5 close scores), so answers are the
    # same bits however a search is cut: encoders pad each query alone and every product is exact (exact_inner).
    assert one.search(queries, 12) == one.search(queries, 12, batch_size=1) == three.search(queries, 12, batch_size=7)


@pytest.mark.slow
def test_a_worker_that_lost_round_one_computes_it_again(sharded_index: Path, small_stance_set: dict[str, Path]) -> None:
    # A restarted actor has no signals from round 1: round 2 must compute them and give the same candidates.
    import numpy as np

    from citator.engines.fusion import best_n, topn_bounds
    from citator.stance.shards.search import ShardWorker

    searcher = ShardedSearcher(sharded_index)
    queries = read_queries(small_stance_set["queries"])[:6]
    encoded = searcher.encode(queries)
    manifest = read_manifest(sharded_index)
    name = manifest.shards[1].name
    shard = (str(sharded_index / manifest.data_dir / name), manifest.files[f"{name}/{MANIFEST}"]["sha256"])
    kept, fresh = ShardWorker(*shard), ShardWorker(*shard)
    tops = kept.best("batch", queries, encoded, searcher.names, 5)
    bounds = {name: topn_bounds(best_n(tops[name], 5)) for name in searcher.names}
    a = kept.candidates("batch", queries, encoded, searcher.names, bounds, 7, False)
    b = fresh.candidates("batch", queries, encoded, searcher.names, bounds, 7, False)
    assert np.array_equal(a.idx, b.idx) and np.array_equal(a.scores, b.scores)


@pytest.mark.slow
def test_the_research_page_serves_a_sharded_index(small_index: Path, sharded_index: Path) -> None:
    from urllib.parse import urlencode

    from fastapi.testclient import TestClient

    from citator.server.ui import create_app

    text = "A state may not punish speech for its content."
    pages = [TestClient(create_app(index, k=4)).get("/?" + urlencode({"q": text})) for index in (small_index,
                                                                                              sharded_index)]
    assert [p.status_code for p in pages] == [200, 200]
    assert pages[0].text.count('<blockquote class="passage"') == 4  # untrained: one list of 4, stance not ranked
    assert pages[0].text == pages[1].text  # the same hits, passages, marks, scores and ranks, rendered alike
    hit = StanceIndex.open(small_index).brief(text, 4).columns()[0][2][0]
    views = [TestClient(create_app(index, k=4)).get("/document?" + urlencode({"id": hit.doc_id, "p": 0, "q": text}))
             for index in (small_index, sharded_index)]
    assert views[0].status_code == 200 and views[0].text == views[1].text


def test_a_closed_sharded_index_says_so(sharded_index: Path) -> None:
    from citator.stance.shards.workers import ShardUnavailable

    index = StanceIndex.open(sharded_index)
    index.close()
    for call in (lambda: index.search("a grant of land", k=2), lambda: index.document(index.searcher.doc_ids[0])):
        with pytest.raises(ShardUnavailable, match="was closed: open it again"):
            call()
