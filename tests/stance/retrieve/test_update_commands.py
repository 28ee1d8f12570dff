"""`citator add`, `remove` and `info`: bad update input gets one line, exit 2, and changes nothing (the manifest's
bytes and the index's folders stay as they were); `info` says the generation, documents and the last update."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from citator.cli.main import main
from citator.errors import CorpusError, UpdateError
from citator.stance.brief.index import StanceIndex
from citator.stance.retrieve.index_dir import build_lock
from citator.stance.retrieve.layout import DOC_IDS, MANIFEST, open_folder


@pytest.fixture
def index_dir(small_index: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "index"
    shutil.copytree(small_index, copy)
    return copy


def _state(index_dir: Path) -> tuple[bytes, list[str]]:
    return (index_dir / MANIFEST).read_bytes(), sorted(p.name for p in index_dir.iterdir())


def _ids(index_dir: Path) -> list[str]:
    return json.loads(open_folder(index_dir).path(DOC_IDS).read_text())


def _lines(tmp_path: Path, name: str, lines: list[str]) -> Path:
    path = tmp_path / name
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


CASES = {
    "an id not in the index": ("remove", lambda ids: ["no-such-doc"], 'no document "no-such-doc" in the index'),
    "a duplicate id to remove": ("remove", lambda ids: [ids[0], ids[0]], "duplicate doc_id"),
    "a duplicate id to add": ("add", lambda ids: [json.dumps({"doc_id": "n1", "text": "a"})] * 2, "duplicate"),
    "a record that breaks the corpus rules": ("add", lambda ids: [json.dumps({"doc_id": "n1", "text": 5})],
                                              'field "text": expected a string'),
    "a record with no doc_id": ("add", lambda ids: [json.dumps({"text": "words"})], 'field "doc_id"'),
    "too few documents left": ("remove", lambda ids: ids[:35], "would leave 5 documents"),
    "a corpus that is not JSONL": ("add", lambda ids: ["doc_id,text", "a,b"], "malformed JSON"),
    "ids as broken JSONL": ("remove", lambda ids: [json.dumps({"doc_id": ids[0]}), "{not json"], "malformed JSON"),
    "an empty file": ("remove", lambda ids: [""], "no doc ids to remove"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_input_is_one_line_and_changes_nothing(index_dir: Path, tmp_path: Path, case: str,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    command, lines, message = CASES[case]
    before = _state(index_dir)
    path = _lines(tmp_path, "input.jsonl", lines(_ids(index_dir)))
    flag = "--corpus" if command == "add" else "--ids"
    assert main([command, "--index-dir", str(index_dir), flag, str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err and "input.jsonl" in err, err
    assert _state(index_dir) == before


def test_a_real_process_is_refused_with_exit_2(index_dir: Path, tmp_path: Path) -> None:
    before = _state(index_dir)
    ids = _lines(tmp_path, "ids.txt", ["no-such-doc"])
    done = subprocess.run([sys.executable, "-m", "citator.cli.main", "remove", "--index-dir", str(index_dir),
                           "--ids", str(ids)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "ids.txt line 1" in done.stderr
    assert "Traceback" not in done.stderr and _state(index_dir) == before


def test_a_second_concurrent_update_is_refused_in_one_line(index_dir: Path, tmp_path: Path) -> None:
    before = _state(index_dir)
    ids = _lines(tmp_path, "ids.txt", _ids(index_dir)[:1])
    with build_lock(index_dir):  # an update or build holding the index, as a running one does
        done = subprocess.run([sys.executable, "-m", "citator.cli.main", "remove", "--index-dir", str(index_dir),
                               "--ids", str(ids)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "another build is running in this index directory (or an update)" in done.stderr
    assert _state(index_dir) == before


def test_the_api_refuses_as_the_commands_do(index_dir: Path) -> None:
    before = _state(index_dir)
    index = StanceIndex.open(index_dir)
    with pytest.raises(UpdateError, match='StanceIndex.remove line 1 field "doc_id": no document "x"'):
        index.remove(["x"])
    with pytest.raises(CorpusError, match='StanceIndex.add line 2 field "text"'):
        index.add([{"doc_id": "n1", "text": "fine"}, {"doc_id": "n2"}])
    with pytest.raises(UpdateError, match="not one"):
        index.add({"doc_id": "n1", "text": "one record, not a list"})  # type: ignore[arg-type]  # wrong on purpose
    with pytest.raises(CorpusError, match='line 2 field "doc_id": duplicate doc_id "n1"'):
        index.add([{"doc_id": "n1", "text": "a"}, {"doc_id": "n1", "text": "b"}])
    with pytest.raises(UpdateError, match='line 2 field "doc_id": duplicate doc_id'):
        index.remove([index.searcher.doc_ids[0]] * 2)
    assert _state(index_dir) == before


def test_info_says_the_generation_documents_and_last_update(index_dir: Path, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["info", "--index-dir", str(index_dir)]) == 0
    out = capsys.readouterr().out
    assert "generation 0, 40 documents" in out and "not updated since" in out, out
    ids = _lines(tmp_path, "ids.txt", _ids(index_dir)[:2])
    assert main(["remove", "--index-dir", str(index_dir), "--ids", str(ids)]) == 0
    assert "updated" in capsys.readouterr().err
    assert main(["info", "--index-dir", str(index_dir)]) == 0
    out = capsys.readouterr().out
    assert "generation 1, 38 documents" in out and "last update" in out and "0 added, 0 replaced, 2 removed" in out


def _metadata_input(tmp_path: Path, rows: list[dict]) -> Path:
    return _lines(tmp_path, "meta.jsonl", [json.dumps(row) for row in rows])


def test_add_lays_a_metadata_file_over_the_new_documents(index_dir: Path, tmp_path: Path) -> None:
    held = _ids(index_dir)[0]
    corpus = _lines(tmp_path, "new.jsonl", [
        json.dumps({"doc_id": "new-1", "title": "Doe v. Roe", "text": "A warrant is needed to search a car trunk.",
                    "court": "its own court"}),
        json.dumps({"doc_id": held, "title": "Replaced v. Held", "text": "The replaced text of a held document."}),
    ])
    meta = _metadata_input(tmp_path, [
        {"doc_id": "new-1", "citation": "999 U.S. 1", "date": "2026-06-01", "court": "Supreme Court"},
        {"doc_id": held, "date": "2026-06-02", "court": "Appeals Court", "votes": 5},
    ])
    assert main(["add", "--index-dir", str(index_dir), "--corpus", str(corpus), "--metadata", str(meta)]) == 0
    index = StanceIndex.open(index_dir)
    hits = index.search("warrant car trunk", k=10, filters=["date>=2026-01-01"])
    assert sorted(h.doc_id for h in hits) == sorted(["new-1", held])  # only the two dated documents match
    new = next(h for h in hits if h.doc_id == "new-1")
    assert dict(new.metadata) == {"citation": "999 U.S. 1", "date": "2026-06-01", "court": "Supreme Court"}
    assert new.citation == "Doe v. Roe, 999 U.S. 1 (2026)"  # the side file's court over the record's own
    replaced = next(h for h in hits if h.doc_id == held)
    assert dict(replaced.metadata) == {"date": "2026-06-02", "court": "Appeals Court", "votes": 5}
    assert [h.doc_id for h in index.search("anything at all", k=10, filters=["court=Appeals Court"])] == [held]


@pytest.mark.parametrize("rows, message", [
    ([{"doc_id": "elsewhere", "court": "X"}], 'line 1 field "doc_id": unknown doc_id "elsewhere"'),
    ([{"doc_id": "new-1", "date": "June 2026"}], 'line 1 field "date"'),
    ([{"doc_id": "new-1"}, {"doc_id": "new-1", "court": "X"}], 'line 2 field "doc_id": duplicate doc_id'),
])
def test_a_bad_metadata_file_is_one_line_and_changes_nothing(index_dir: Path, tmp_path: Path, rows: list[dict],
                                                             message: str, capsys: pytest.CaptureFixture[str]) -> None:
    before = _state(index_dir)
    corpus = _lines(tmp_path, "new.jsonl", [json.dumps({"doc_id": "new-1", "text": "words"})])
    meta = _metadata_input(tmp_path, rows)
    assert main(["add", "--index-dir", str(index_dir), "--corpus", str(corpus), "--metadata", str(meta)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err and "meta.jsonl" in err, err
    assert _state(index_dir) == before
