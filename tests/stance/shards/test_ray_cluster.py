"""On a real local Ray cluster (a head and two worker nodes, started here): a sharded index built by Ray actors
answers as one index does; a shard actor killed mid-batch is restarted from its files and the answer is whole; a
shard that cannot come back fails the search with one clear error, never a partial answer."""

from __future__ import annotations

import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from stance.shards.test_sharded_parity import assert_same_answers, assert_same_briefs

from citator.stance.brief.index import StanceIndex
from citator.data.queries import read_queries
from citator.stance.retrieve.layout import read_manifest
from citator.stance.retrieve.searcher import StanceSearcher
from citator.stance.retrieve.index_dir import BuildOptions
from citator.stance.shards.build import Sharding, build_sharded
from citator.stance.shards.search import ShardedSearcher
from citator.stance.shards.workers import ShardUnavailable

ray = pytest.importorskip("ray")
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    import os
    import tempfile

    from ray.cluster_utils import Cluster

    # The cluster's sockets and logs in a folder of this run's (short: Unix socket paths are limited), not a
    # /tmp/ray that another user's run may own.
    saved = os.environ.get("RAY_TMPDIR")
    os.environ["RAY_TMPDIR"] = tempfile.mkdtemp(prefix="ray-")
    c = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    for _ in range(2):
        c.add_node(num_cpus=1)
    c.wait_for_nodes()
    ray.init(address=c.address, log_to_driver=False, configure_logging=False)
    try:
        yield c.address
    finally:
        ray.shutdown()
        c.shutdown()
        shutil.rmtree(os.environ["RAY_TMPDIR"], ignore_errors=True)
        if saved is None:
            del os.environ["RAY_TMPDIR"]
        else:
            os.environ["RAY_TMPDIR"] = saved


@pytest.fixture(scope="module")
def ray_index(cluster: str, small_stance_set: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    import citator.stance.shards.read as read_module

    index_dir = tmp_path_factory.mktemp("ray-sharded") / "index"
    saved = read_module.BLOCK_BYTES
    read_module.BLOCK_BYTES = 4096  # the sample corpus read by Ray Data in many blocks
    try:
        build_sharded(small_stance_set["corpus"], index_dir, Sharding(3, cluster), BuildOptions(progress=False))
    finally:
        read_module.BLOCK_BYTES = saved
    return index_dir


def test_shards_built_and_searched_on_ray_filter_as_one_index(cluster: str, metadata_set: dict[str, Path],
                                                               metadata_index: Path, tmp_path: Path) -> None:
    """Filters on a sharded index whose shards were built and are searched by Ray actors: each shard masks its
    documents as one index does, so every filter gives one index's ids, order and scores."""
    from stance.retrieve.test_filters import FILTERS

    from citator.data.filters import parse_filters

    index_dir = tmp_path / "index"
    build_sharded(metadata_set["corpus"], index_dir, Sharding(3, cluster),
                  BuildOptions(progress=False, metadata=metadata_set["metadata"]))
    queries = read_queries(metadata_set["queries"])
    one, searcher = StanceSearcher(metadata_index), ShardedSearcher(index_dir, ray=cluster)
    try:
        for filters in FILTERS:
            for k in (3, 10):
                parsed = parse_filters(filters)
                assert_same_answers(one.search(queries, k, filters=parsed), searcher.search(queries, k,
                                                                                             filters=parsed))
    finally:
        searcher.close()


def test_the_cluster_has_three_nodes(cluster: str) -> None:
    assert len([n for n in ray.nodes() if n["Alive"]]) == 3


def test_shards_built_and_searched_on_ray_answer_as_one_index(cluster: str, ray_index: Path, small_index: Path,
                                                               small_stance_set: dict[str, Path]) -> None:
    assert len(read_manifest(ray_index).shards) == 3
    queries = read_queries(small_stance_set["queries"])
    searcher = ShardedSearcher(ray_index, ray=cluster)
    try:
        assert_same_answers(StanceSearcher(small_index).search(queries, 10), searcher.search(queries, 10))
    finally:
        searcher.close()


def test_a_shard_actor_killed_mid_batch_is_restarted_and_the_answer_is_whole(
        cluster: str, ray_index: Path, small_index: Path, small_stance_set: dict[str, Path]) -> None:
    queries = read_queries(small_stance_set["queries"]) * 6
    expected = StanceSearcher(small_index).search(queries, 10)
    searcher = ShardedSearcher(ray_index, ray=cluster)
    try:
        victim = searcher.pool.workers[1]
        before = ray.get(victim.describe.remote())["pid"]
        results: list = []
        # Batches of two queries: the search is many rounds long, and the kill lands inside one of them.
        worker = threading.Thread(target=lambda: results.extend(searcher.search(queries, 10, batch_size=2)))
        worker.start()
        time.sleep(1.0)
        assert worker.is_alive(), "the search ended before the kill: make it longer"
        ray.kill(victim, no_restart=False)
        worker.join(timeout=300)
        assert not worker.is_alive()
        assert ray.get(victim.describe.remote())["pid"] != before  # restarted: a new process loaded the shard
        assert_same_answers(expected, results)
    finally:
        searcher.close()


def test_a_shard_that_cannot_come_back_fails_the_search_clearly(cluster: str, ray_index: Path, tmp_path: Path,
                                                                small_stance_set: dict[str, Path]) -> None:
    copy = tmp_path / "index"
    shutil.copytree(ray_index, copy)
    searcher = ShardedSearcher(copy, ray=cluster)
    try:
        queries = read_queries(small_stance_set["queries"])
        assert len(searcher.search(queries, 10)) == len(queries)
        manifest = read_manifest(copy)
        shutil.rmtree(copy / manifest.data_dir / manifest.shards[2].name)  # its files are gone
        ray.kill(searcher.pool.workers[2], no_restart=False)
        with pytest.raises(ShardUnavailable, match="stance/shards/002") as failure:
            searcher.search(queries, 10)
        assert len(str(failure.value).splitlines()) == 1 and "not found" in str(failure.value)
    finally:
        searcher.close()


def test_trained_shards_on_ray_answer_as_one_trained_index(cluster: str, small_stance_set: dict[str, Path],
                                                           small_artifacts: Path, tmp_path: Path) -> None:
    from citator.stance.retrieve.model import StanceModel
    from citator.stance.retrieve.config import RetrievalConfig
    from citator.stance.retrieve.index_dir import build_index

    artifacts = StanceModel.load(small_artifacts)
    config = RetrievalConfig(fusion="learned", weights=artifacts.weights)  # the ranker, memory priors, late interaction
    options = BuildOptions(config=config, artifacts=artifacts, progress=False)
    build_index(small_stance_set["corpus"], tmp_path / "one", options)
    build_sharded(small_stance_set["corpus"], tmp_path / "three", Sharding(3, cluster), options)
    searcher = ShardedSearcher(tmp_path / "three", ray=cluster)
    try:
        assert searcher.learned and searcher.late
        queries = read_queries(small_stance_set["queries"])
        assert_same_answers(StanceSearcher(tmp_path / "one").search(queries, 10), searcher.search(queries, 10))
        # The Python API's briefs: each hit explained by the shard actor that holds it, ranks over every shard.
        texts = sorted({q.text for q in queries})[:2]
        assert_same_briefs(StanceIndex.open(tmp_path / "one"), StanceIndex(searcher), texts)
    finally:
        searcher.close()


def test_ray_data_reads_the_corpus_in_blocks_as_one_reader_does(cluster: str, small_stance_set: dict[str, Path],
                                                                 tmp_path: Path) -> None:
    import citator.stance.shards.read as read_module
    from citator.data.corpus import read_corpus
    from citator.data.jsonl import line_spans

    # Blank lines and a last line without its newline: numbering and block cuts must still match one reader's.
    lines = small_stance_set["corpus"].read_text().splitlines()
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("\n".join(lines[:3] + ["", ""] + lines[3:]))
    saved = read_module.BLOCK_BYTES
    read_module.BLOCK_BYTES = 2048
    try:
        assert len(line_spans(corpus, 2048)) > 5
        read = read_module.read_corpus_blocks(corpus)
        expected = read_corpus(corpus, lenient=True)
        assert read.ids == [d.doc_id for d in expected] and read.titles == [d.title for d in expected]
        parts = read.parts([0, 7, 30])
        assert [d for part in parts for d in read_module.documents(part)] == expected
        assert [len(read_module.documents(part)) for part in parts] == [7, 23, len(expected) - 30]
        assert [read_module.documents(part) for part in read.parts([0])] == [expected]  # one shard
    finally:
        read_module.BLOCK_BYTES = saved


@pytest.mark.parametrize("damage", ["malformed", "duplicate", "no text"])
def test_a_bad_line_read_by_a_ray_task_is_one_line_naming_it(cluster: str, small_stance_set: dict[str, Path],
                                                             tmp_path: Path, damage: str) -> None:
    import json

    import citator.stance.shards.read as read_module
    from citator.errors import CorpusError

    lines = small_stance_set["corpus"].read_text().splitlines()
    first = json.loads(lines[2])
    bad = {"malformed": '{"doc_id": "x", "text": ', "duplicate": json.dumps(first),
           "no text": json.dumps({"doc_id": "x", "title": "t"})}[damage]
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("\n".join(lines[:33] + [bad] + lines[33:]) + "\n")  # line 34, blocks after the first
    saved = read_module.BLOCK_BYTES
    read_module.BLOCK_BYTES = 2048
    try:
        with pytest.raises(CorpusError) as failure:
            build_sharded(corpus, tmp_path / "index", Sharding(3, cluster), BuildOptions(progress=False))
    finally:
        read_module.BLOCK_BYTES = saved
    message = str(failure.value)
    assert type(failure.value) is CorpusError and len(message.splitlines()) == 1, message
    assert message.startswith("corpus.jsonl line 34"), message
    if damage == "duplicate":
        assert "first on line 3" in message
    assert not (tmp_path / "index" / "manifest.json").exists()


def test_updates_with_builders_on_ray_answer_as_a_rebuild(cluster: str, tmp_path: Path) -> None:
    """A sharded index updated 20 times by Ray builders (stance/shards/update.py: adds, replacements and removals,
    seeded) answers as a build of the resulting corpus, each document in the shard the sharding rule puts it in."""
    from fixtures.updates import Model, sample_docs, sample_queries, write_corpus

    from citator.stance.retrieve.update import given
    from citator.stance.shards.search import open_searcher
    from citator.stance.shards.update import update

    docs = sample_docs()
    model = Model(docs[:30], docs[30:80], seed=3)
    index_dir, reference = tmp_path / "index", tmp_path / "rebuilt"
    build_sharded(write_corpus(tmp_path / "start.jsonl", model.docs), index_dir, Sharding(3),
                  BuildOptions(progress=False))
    for _ in range(20):
        kind, items = model.next_change()
        update(index_dir, given(add=items) if kind == "add" else given(remove=items), progress=False, ray=cluster)
    build_sharded(write_corpus(tmp_path / "final.jsonl", model.docs), reference, Sharding(3),
                  BuildOptions(progress=False))
    assert [ref.n_docs for ref in read_manifest(index_dir).shards] == [ref.n_docs for ref in
                                                                      read_manifest(reference).shards]
    queries = sample_queries(30)
    assert_same_answers(open_searcher(index_dir).search(queries, 10), open_searcher(reference).search(queries, 10))
