"""An update is a new generation, switched to atomically: a kill -9 at any point leaves the old one whole and
answering; the running search server and research page answer from the old generation until the switch and from
the new one after it, without a restart, and never from a mix."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from citator.data.queries import read_queries
from citator.data.records import ResultLine
from citator.stance.retrieve.layout import BUILD_MARK, DENSE, DOCUMENTS, LEXICAL_DOC, MANIFEST, open_folder
from citator.stance.retrieve.searcher import StanceSearcher
from citator.stance.retrieve.service_protocol import search_via_service
from citator.stance.workload import start_server, stop_server
from fixtures.updates import assert_same_answers, sample_docs, write_corpus

CLI = [sys.executable, "-m", "citator.cli.main"]


@pytest.fixture
def index_dir(small_index: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "index"
    shutil.copytree(small_index, copy)
    return copy


def _new_docs(index_dir: Path, n: int = 2) -> list:
    held = set(StanceSearcher(index_dir).doc_ids)
    return [d for d in sample_docs() if d.doc_id not in held][:n]


def _answers(index_dir: Path, queries: list) -> list[ResultLine]:
    return StanceSearcher(index_dir).search(queries, 10)


def _kill_when(proc: subprocess.Popen, index_dir: Path, name: str, before: set[str]) -> bool:
    """SIGKILL the update once its new folder holds `name`; False if it finished first."""
    while proc.poll() is None:
        for folder in index_dir.glob("build-*"):
            if folder.name not in before and (folder / name).exists():
                proc.send_signal(signal.SIGKILL)
                proc.wait()
                return True
        time.sleep(0.002)
    return False


@pytest.mark.slow
@pytest.mark.parametrize("point", [BUILD_MARK, LEXICAL_DOC, DENSE, DOCUMENTS])
def test_kill_9_during_an_update_leaves_the_old_generation_whole(index_dir: Path, tmp_path: Path,
                                                                 point: str) -> None:
    queries = read_queries(Path(__file__).resolve().parents[3] / "src/citator/samples/casefacts/queries.jsonl")[:20]
    manifest_bytes, answers = (index_dir / MANIFEST).read_bytes(), _answers(index_dir, queries)
    before = {p.name for p in index_dir.glob("build-*")}
    corpus = write_corpus(tmp_path / "new.jsonl", _new_docs(index_dir))
    proc = subprocess.Popen([*CLI, "add", "--index-dir", str(index_dir), "--corpus", str(corpus)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    assert _kill_when(proc, index_dir, point, before), f"the update finished before {point} appeared"
    assert (index_dir / MANIFEST).read_bytes() == manifest_bytes
    assert _answers(index_dir, queries) == answers  # the old generation, whole: every digest checked as it opens
    # The lock died with the process; the next update succeeds and removes what the killed one left.
    done = subprocess.run([*CLI, "add", "--index-dir", str(index_dir), "--corpus", str(corpus)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert not [p for p in index_dir.glob("build-*") if (p / BUILD_MARK).exists()]
    assert open_folder(index_dir).manifest.generation.number == 1


@pytest.mark.slow
def test_the_search_server_follows_the_switch_and_never_mixes(index_dir: Path, tmp_path: Path) -> None:
    queries = read_queries(Path(__file__).resolve().parents[3] / "src/citator/samples/casefacts/queries.jsonl")[:8]
    new = _new_docs(index_dir)
    # A document that is the first query itself: after the update it must lead that query's answer.
    new[0] = type(new[0])(new[0].doc_id, "Added", queries[0].text, {})
    old = (open_folder(index_dir).manifest.fingerprint, _answers(index_dir, queries))
    start_server(index_dir)
    try:
        seen: list[tuple[str, list[ResultLine]]] = []
        stop = threading.Event()

        def ask() -> None:
            while not stop.is_set():
                fingerprint = open_folder(index_dir).manifest.fingerprint
                results, how = search_via_service(index_dir, fingerprint, queries, 10, timeout=60)
                if results is not None:
                    seen.append((fingerprint, results))

        asker = threading.Thread(target=ask)
        asker.start()
        corpus = write_corpus(tmp_path / "new.jsonl", new)
        done = subprocess.run([*CLI, "add", "--index-dir", str(index_dir), "--corpus", str(corpus)],
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr
        fingerprint = open_folder(index_dir).manifest.fingerprint
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not any(f == fingerprint for f, _ in seen):
            time.sleep(0.2)
        stop.set()
        asker.join()
        expected = {old[0]: old[1], fingerprint: _answers(index_dir, queries)}
        assert expected[fingerprint][0].results[0].doc_id == new[0].doc_id
        assert {f for f, _ in seen} == set(expected), "the server answered from the old and then the new generation"
        for f, results in seen:  # each answer wholly one generation's (the server scores BM25 by numba)
            assert_same_answers(results, expected[f])
        ready = json.loads((index_dir / "service" / "ready.json").read_text())
        assert ready["fingerprint"] == fingerprint  # run.sh finds the server holding the new generation
    finally:
        stop_server(index_dir)


@pytest.mark.slow
def test_the_research_page_serves_the_new_generation_without_a_restart(index_dir: Path, tmp_path: Path) -> None:
    from fixtures.servers import free_port, stop_process, wait_ready

    new = _new_docs(index_dir, 1)
    text = "A wholly new proposition about lighthouse keepers and salvage of whales"
    new[0] = type(new[0])("added-doc", "Lighthouse salvage", text, {})
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen([*CLI, "ui", "--index-dir", str(index_dir), "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_ready(url + "/", proc, timeout=180)
        assert httpx.get(url + "/document", params={"id": "added-doc"}, timeout=60).status_code == 404
        corpus = write_corpus(tmp_path / "new.jsonl", new)
        done = subprocess.run([*CLI, "add", "--index-dir", str(index_dir), "--corpus", str(corpus)],
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr
        page = httpx.get(url + "/document", params={"id": "added-doc"}, timeout=60)
        assert page.status_code == 200 and "lighthouse keepers" in page.text
        brief = httpx.get(url + "/", params={"q": text}, timeout=120)
        assert brief.status_code == 200 and "added-doc" in brief.text
    finally:
        stop_process(proc)
