"""An open index serves what it verified as it opened, or refuses in one line.

An attacker (or a careless copy) rewrites an index's files in place, at the same size and even with the old
modification time set back, after the index was opened: by `StanceIndex.open`, by a sharded index's workers, by
`citator ui` and by run.sh's search server. Nothing forged is ever served: every use ends with a check of each
file's state (inode, size, modification and change times) against the state its digest was verified in.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from urllib.parse import urlencode

import numpy as np
import pytest

from citator.errors import IndexDirError
from citator.stance.brief.index import StanceIndex
from citator.stance.retrieve.layout import DENSE, DOCUMENTS, LEXICAL_DOC, PASSAGE_STARTS, read_manifest

CHANGED = "changed since the index was opened"
TEXT = "A grant of land is a contract that a later legislature may not void."


def _copy(index: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "index"
    shutil.copytree(index, copy, ignore=shutil.ignore_patterns("service"))
    return copy


def rewrite_in_place(path: Path, old: bytes, new: bytes, keep_mtime: bool = False) -> None:
    """`old` replaced by `new` (as long) in the file itself: same inode, same size; with `keep_mtime`, its access
    and modification times set back to what they were, as an attacker covering a write would."""
    assert len(old) == len(new) and old != new
    before = path.stat()
    data = path.read_bytes()
    at = data.index(old)
    with path.open("r+b") as handle:
        handle.seek(at)
        handle.write(new)
    if keep_mtime:
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = path.stat()
    assert (after.st_ino, after.st_size) == (before.st_ino, before.st_size)
    assert not keep_mtime or after.st_mtime_ns == before.st_mtime_ns


def forge_title(documents: Path, title: str, keep_mtime: bool = False) -> bytes:
    """The document titled `title` renamed in place, every letter of its title made an X (as many bytes); the
    forged title."""
    old = json.dumps(title, ensure_ascii=False)[1:-1].encode()
    new = bytes(ord("X") if chr(b).isalpha() else b for b in old)
    rewrite_in_place(documents, b'"title": "' + old, b'"title": "' + new, keep_mtime)
    return new


@pytest.mark.parametrize("keep_mtime", [False, True])
def test_a_corpus_copy_rewritten_under_an_open_index_is_refused(brief_index: Path, tmp_path: Path,
                                                                keep_mtime: bool) -> None:
    index = _copy(brief_index, tmp_path)
    opened = StanceIndex.open(index)
    hit = opened.brief(TEXT, 3).columns()[0][2][0]
    documents = read_manifest(index).path(index, DOCUMENTS)
    forge_title(documents, opened.document(hit.doc_id).title, keep_mtime)
    for read in (lambda: opened.document(hit.doc_id), lambda: opened.brief(TEXT, 3),
                 lambda: opened.search(TEXT, "supported", 3)):
        with pytest.raises(IndexDirError, match=CHANGED) as caught:
            read()
        assert "\n" not in str(caught.value) and str(documents) in str(caught.value)
    # Opened again, the forgery is caught by its digest.
    with pytest.raises(IndexDirError, match="content differs from what was made"):
        StanceIndex.open(index)


def _flip_last_bytes(path: Path) -> None:
    data = path.read_bytes()
    rewrite_in_place(path, data[-8:], bytes(255 - b for b in data[-8:]), keep_mtime=True)


@pytest.mark.parametrize("name", [DENSE, PASSAGE_STARTS, f"{LEXICAL_DOC}/data.csc.index.npy"])
def test_any_file_of_an_open_index_rewritten_in_place_is_refused(small_index: Path, tmp_path: Path,
                                                                 name: str) -> None:
    from citator.stance.retrieve.searcher import StanceSearcher
    from citator.data import Query

    index = _copy(small_index, tmp_path)
    searcher = StanceSearcher(index)
    query = [Query("q", "the contract clause binds the state", "all")]
    before = searcher.search(query, 5)
    path = read_manifest(index).path(index, name)
    assert path.is_file(), sorted(p.name for p in path.parent.iterdir())
    _flip_last_bytes(path)  # the dense vectors and the BM25 arrays are mapped: a search would read the new bytes
    with pytest.raises(IndexDirError, match=CHANGED):
        searcher.search(query, 5)
    assert np.isfinite([d.score for d in before[0].results]).all()


def test_a_rebuilt_or_removed_index_is_refused_by_what_had_opened_it(small_index: Path, tmp_path: Path) -> None:
    index = _copy(small_index, tmp_path)
    opened = StanceIndex.open(index)
    shutil.rmtree(index / read_manifest(index).data_dir)
    with pytest.raises(IndexDirError, match=CHANGED):
        opened.brief(TEXT, 3)


@pytest.mark.slow
def test_a_shard_rewritten_under_an_open_sharded_index_is_refused(small_stance_set: dict[str, Path],
                                                                   tmp_path: Path) -> None:
    from citator.stance.retrieve.index_dir import BuildOptions
    from citator.stance.shards.build import Sharding, build_sharded

    index = tmp_path / "three"
    manifest = build_sharded(small_stance_set["corpus"], index, Sharding(3), BuildOptions(progress=False))
    opened = StanceIndex.open(index)
    hit = opened.brief(TEXT, 3).columns()[0][2][0]
    title = opened.document(hit.doc_id).title
    for ref in manifest.shards:
        shard = index / manifest.data_dir / ref.name
        documents = read_manifest(shard).path(shard, DOCUMENTS)
        if json.dumps({"title": title}, ensure_ascii=False)[1:-1].encode() in documents.read_bytes():
            forge_title(documents, title)
    with pytest.raises(IndexDirError, match=CHANGED):
        opened.document(hit.doc_id)
    with pytest.raises(IndexDirError, match=CHANGED):
        opened.brief(TEXT, 3)
    opened.close()


@pytest.mark.slow
def test_the_research_page_never_shows_a_document_rewritten_after_it_started(brief_index: Path,
                                                                             tmp_path: Path) -> None:
    import httpx

    from fixtures.servers import ui_server_at

    index = _copy(brief_index, tmp_path)
    opened = StanceIndex.open(index)
    # A hit whose title a page shows as it is (no markup to escape), so that it and its forgery can be looked for.
    hit = next(h for h in opened.brief(TEXT, 5).columns()[0][2] if h.title.replace(" ", "").replace(".", "").isalnum())
    title = opened.document(hit.doc_id).title
    opened.close()
    log_path = tmp_path / "server.log"
    with ui_server_at(index, log_path, timeout=180) as url:  # it logs no traceback
        page = "/document?" + urlencode({"id": hit.doc_id, "p": 0})
        shown = httpx.get(url + page, timeout=60)
        assert shown.status_code == 200 and title in shown.text
        forged = forge_title(read_manifest(index).path(index, DOCUMENTS), title)
        after = [httpx.get(url + page, timeout=60), httpx.get(url + "/", params={"q": TEXT}, timeout=60)]
    for answer in after:
        assert answer.status_code == 503 and "The index changed on disk" in answer.text
        assert forged.decode() not in answer.text
    assert CHANGED in log_path.read_text()


@pytest.mark.slow
def test_run_sh_never_answers_from_a_file_rewritten_under_its_search_server(small_stance_set: dict[str, Path],
                                                                            tmp_path: Path) -> None:
    from citator.stance.retrieve.index_dir import BuildOptions
    from citator.stance.workload import build, search_to_file, stop_server

    index = tmp_path / "index"
    build(small_stance_set["corpus"], index, BuildOptions(progress=False), serve=True)
    try:
        out = tmp_path / "results.jsonl"
        assert search_to_file(index, small_stance_set["queries"], out).startswith("server")
        _flip_last_bytes(read_manifest(index).path(index, DENSE))
        # The server refuses (its files changed); the in-process search refuses too (a digest differs): no output.
        out.unlink()
        with pytest.raises(IndexDirError, match="dense.npy: content differs"):
            search_to_file(index, small_stance_set["queries"], out)
        assert not out.exists()
    finally:
        stop_server(index)
