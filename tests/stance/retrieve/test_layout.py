"""An index is opened from its manifest, read and checked once: a search, a brief and run.sh's in-process path
each open every manifest they need exactly once (counted by Python's audit hook on `open`, so no reading path can
hide from the count)."""

from __future__ import annotations

import shutil
import sys
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from citator.data import Query, write_queries
from citator.stance.retrieve.layout import MANIFEST, read_manifest

_OPENED: list[Counter[str]] = []


def _audit(event: str, args: tuple[object, ...]) -> None:
    if event == "open" and _OPENED and args and isinstance(args[0], (str, Path)) \
            and Path(args[0]).name == MANIFEST:
        _OPENED[-1][str(Path(args[0]).absolute())] += 1


sys.addaudithook(_audit)  # for the whole session: a hook cannot be removed, so it counts only inside `manifests_read`


@contextmanager
def manifests_read() -> Iterator[Counter[str]]:
    """How often each manifest.json is opened in the block, by absolute path."""
    _OPENED.append(Counter())
    try:
        yield _OPENED[-1]
    finally:
        _OPENED.pop()


def test_the_count_sees_every_read(small_index: Path) -> None:
    with manifests_read() as read:
        read_manifest(small_index)
        read_manifest(small_index)
    assert read == {str(small_index.absolute() / MANIFEST): 2}


def test_a_search_server_and_run_sh_read_the_manifest_once(small_index: Path, tmp_path: Path) -> None:
    from citator.stance.brief.index import StanceIndex
    from citator.stance.retrieve.searcher import StanceSearcher
    from citator.stance.workload import search

    queries = tmp_path / "queries.jsonl"
    write_queries(queries, [Query("q1", "the contract clause binds the state", "supported")])
    expected = {str(small_index.absolute() / MANIFEST): 1}
    with manifests_read() as read:
        search(small_index, queries, 10, use_server=False)  # run.sh's in-process path: checks, then searches
    assert read == expected
    with manifests_read() as read:
        StanceSearcher(small_index).search([Query("q1", "the contract clause", "all")], 10)
    assert read == expected
    with manifests_read() as read:
        StanceIndex.open(small_index).brief("the contract clause binds the state", 3)
    assert read == expected


@pytest.mark.slow
def test_a_sharded_index_reads_its_manifest_and_each_shards_once(small_stance_set: dict[str, Path],
                                                                  tmp_path: Path) -> None:
    from citator.stance.brief.index import StanceIndex
    from citator.stance.retrieve.index_dir import BuildOptions
    from citator.stance.shards.build import Sharding, build_sharded
    from citator.stance.workload import search

    index = tmp_path / "three"
    manifest = build_sharded(small_stance_set["corpus"], index, Sharding(3), BuildOptions(progress=False))
    every = {str(index.absolute() / MANIFEST): 1,
             **{str(index.absolute() / manifest.data_dir / ref.name / MANIFEST): 1 for ref in manifest.shards}}
    with manifests_read() as read:
        StanceIndex.open(index).brief("the contract clause binds the state", 3)
    assert read == every
    queries = tmp_path / "queries.jsonl"
    write_queries(queries, [Query("q1", "the contract clause binds the state", "supported")])
    with manifests_read() as read:
        search(index, queries, 10, use_server=False)
    assert read == every
    shutil.rmtree(index)
