"""The output rule: citator replaces only a regular file or nothing, and never one of the command's inputs."""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
from pathlib import Path

import pytest

from citator.cli.main import main
from citator.data.atomic import (
    CACHE_LOCK, INDEX_LOCK, RUN_LOCK, check_output, command_inputs, exclusive_dir, open_append, output_dir,
    write_text_atomic,
)
from citator.errors import IndexDirError, OutputError
from citator.stance.retrieve.index_dir import build_lock


def _kinds(tmp_path: Path) -> dict[str, Path]:
    """One path of every kind that is not a regular file, built here (devices only where they exist)."""
    directory = tmp_path / "a-directory"
    directory.mkdir()
    fifo = tmp_path / "a-fifo"
    os.mkfifo(fifo)
    real = tmp_path / "real.txt"
    real.write_text("keep me\n")
    link = tmp_path / "a-symlink"
    link.symlink_to(real)
    dangling = tmp_path / "a-dangling-symlink"
    dangling.symlink_to(tmp_path / "nowhere")
    sock_path = tmp_path / "a-socket"
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(sock_path))
    sock.close()
    kinds = {"directory": directory, "fifo": fifo, "symlink": link, "dangling symlink": dangling, "socket": sock_path}
    for device in ("/dev/null", "/dev/full"):
        if os.path.exists(device):
            kinds[device] = Path(device)
    return kinds


def test_every_kind_of_non_regular_target_is_refused_and_left_as_it_was(tmp_path: Path) -> None:
    for name, path in _kinds(tmp_path).items():
        before = os.lstat(path)
        with pytest.raises(OutputError, match="is a"):
            write_text_atomic(path, "x\n")
        after = os.lstat(path)
        assert (stat.S_IFMT(after.st_mode), after.st_ino) == (stat.S_IFMT(before.st_mode), before.st_ino), name
    assert (tmp_path / "real.txt").read_text() == "keep me\n"
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_an_input_is_never_replaced_even_under_another_name(tmp_path: Path) -> None:
    source = tmp_path / "queries.jsonl"
    source.write_text("input\n")
    hard = tmp_path / "hardlink.jsonl"
    os.link(source, hard)
    with pytest.raises(OutputError, match="one of this command's inputs"):
        write_text_atomic(hard, "x", inputs=[source])
    with command_inputs([str(source)]), pytest.raises(OutputError, match="inputs"):
        write_text_atomic(tmp_path / "." / "queries.jsonl", "x")
    assert source.read_text() == "input\n"
    write_text_atomic(tmp_path / "other.jsonl", "x", inputs=[source])  # any other path is fine


@pytest.mark.parametrize("case", ["under a file", "read-only directory"])
def test_a_place_that_cannot_hold_the_file_is_one_clear_error(tmp_path: Path, case: str) -> None:
    if case == "under a file":
        (tmp_path / "file").write_text("")
        target = tmp_path / "file" / "out.json"
        match = "is a file, not a directory"
    else:
        if os.geteuid() == 0:
            pytest.skip("root writes into a read-only directory")
        (tmp_path / "ro").mkdir(mode=0o555)
        target = tmp_path / "ro" / "out.json"
        match = "not writable"
    with pytest.raises(OutputError, match=match):
        write_text_atomic(target, "x")
    with pytest.raises(OutputError):
        output_dir(target)


def test_missing_parents_are_made_and_an_existing_file_is_replaced(tmp_path: Path) -> None:
    target = tmp_path / "new" / "deeper" / "out.txt"
    write_text_atomic(target, "one")
    write_text_atomic(target, "two")
    assert target.read_text() == "two"


def test_logs_and_locks_never_follow_a_symlink(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("precious")
    (tmp_path / "server.log").symlink_to(victim)
    with pytest.raises(OutputError, match="symbolic link"):
        open_append(tmp_path / "server.log")
    with open_append(tmp_path / "fresh.log") as handle:
        handle.write(b"ok\n")
    assert victim.read_text() == "precious"


def take_lock(folder: Path, lock: str) -> None:
    """Take and release the lock named `lock` in `folder` as the code that holds it does (a vector cache's through
    its own locking, every other through exclusive_dir)."""
    from citator.statutes.vectors import SectionVectors

    if lock == CACHE_LOCK:
        cache = type("V", (), {"directory": folder})()
        with SectionVectors._locked(cache, shared=False):  # type: ignore[arg-type]
            pass
    else:
        with exclusive_dir(folder, lock, "busy"):
            pass


@pytest.mark.parametrize("lock", [INDEX_LOCK, RUN_LOCK, CACHE_LOCK])
def test_every_lock_is_opened_without_following_a_symlink(tmp_path: Path, lock: str) -> None:
    """An index's build lock, a run directory's lock and a vector cache's lock: a symbolic link planted where the
    lock goes (to a file that does not exist yet, or to one that does) is refused, and nothing is made or touched
    where it points."""
    folder = tmp_path / "folder"
    folder.mkdir()
    for victim in (tmp_path / "made-elsewhere", tmp_path / "precious"):
        (folder / lock).unlink(missing_ok=True)
        (folder / lock).symlink_to(victim)
        if victim.name == "precious":
            victim.write_text("precious")
        with pytest.raises(OutputError, match="symbolic link"):
            take_lock(folder, lock)
        assert not (tmp_path / "made-elsewhere").exists()
    assert (tmp_path / "precious").read_text() == "precious"


def test_no_command_writes_a_lock_or_inside_a_folder_it_does_not_hold(
        brief_index: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`brief --output IDX/.build.lock` replaced a held build lock (a second build then locked the new file while
    the first held the old one): no output is ever a lock file, and no command writes an index's manifest, a file
    in its build or server folders, or a file in a vector cache, unless it holds that folder (a build, a server,
    the run filling the cache). A file of the user's own beside the index is written as before."""
    import fcntl

    index = tmp_path / "idx"
    shutil.copytree(brief_index, index)
    data = index / json.loads((index / "manifest.json").read_text())["data_dir"]
    (index / "service").mkdir(exist_ok=True)
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / CACHE_LOCK).write_text("")
    (cache / "captions.npy").write_bytes(b"vectors")
    run = tmp_path / "run"
    run.mkdir()
    (run / RUN_LOCK).write_text("")
    with open(index / INDEX_LOCK, "rb") as held:  # a build holds the index
        fcntl.flock(held, fcntl.LOCK_EX)
        lock_inode = os.stat(index / INDEX_LOCK).st_ino
        eval_args = _eval_files(tmp_path)
        for target, says in ((index / INDEX_LOCK, "is a lock file"), (run / RUN_LOCK, "is a lock file"),
                             (cache / CACHE_LOCK, "is a lock file"),
                             (index / "service" / "server.pid", "index directory"),
                             (data / "new.json", "index directory"), (cache / "captions.npy", "vector cache"),
                             (cache / "new.json", "vector cache"), (index / "manifest.json", "index directory")):
            for command in (["brief", "--index-dir", str(brief_index), "--k", "1", "--output", str(target), "law"],
                            eval_args + ["--json", str(target)]):
                assert main(command) == 2, (command, target)
                err = capsys.readouterr().err.strip().splitlines()
                assert len(err) == 1 and err[0].startswith(f"OutputError: {target}: ") and says in err[0], err
        assert os.stat(index / INDEX_LOCK).st_ino == lock_inode
        with pytest.raises(IndexDirError, match="another build is running"):
            with build_lock(index):
                pass
    assert (cache / "captions.npy").read_bytes() == b"vectors" and not (data / "new.json").exists()
    assert main(eval_args + ["--json", str(index / "report.json")]) == 0 and (index / "report.json").is_file()


def test_check_output_accepts_a_regular_file_or_a_new_path(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("")
    assert check_output(tmp_path / "f") == tmp_path / "f"
    assert check_output(tmp_path / "new") == tmp_path / "new"


def _eval_files(tmp_path: Path) -> list[str]:
    q = tmp_path / "queries.jsonl"
    q.write_text(json.dumps({"query_id": "q1", "text": "x", "stance": "supported"}) + "\n")
    gt = tmp_path / "gt.jsonl"
    gt.write_text(json.dumps({"query_id": "q1", "relevant_doc_ids": ["a"]}) + "\n")
    r = tmp_path / "results.jsonl"
    r.write_text(json.dumps({"query_id": "q1", "results": [{"doc_id": "a", "score": 1.0}]}) + "\n")
    return ["eval", "--queries", str(q), "--ground-truth", str(gt), "--results", str(r)]


@pytest.mark.parametrize("target", ["queries.jsonl", "results.jsonl", "a-directory", "/dev/null", "file/under"])
def test_cli_refuses_each_bad_json_output_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], target: str
) -> None:
    args = _eval_files(tmp_path)
    (tmp_path / "a-directory").mkdir()
    (tmp_path / "file").write_text("")
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()}
    out = target if target.startswith("/") else str(tmp_path / target)
    assert main(args + ["--json", out]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("OutputError: ") and out in err[0]
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()} == before
    if os.path.exists("/dev/null"):
        assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


@pytest.mark.parametrize("command", [["rerank", "--pool", "p", "--qrels", "q", "--model", "m", "--strategy", "bm25"],
                                     ["train", "--corpus", "c", "--queries", "q", "--ground-truth", "g"]])
def test_a_run_directory_that_is_a_file_is_one_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    (tmp_path / "FILE").write_text("not a directory")
    assert main(command + ["--out", str(tmp_path / "FILE")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"OutputError: {tmp_path / 'FILE'}: is a file, not a directory; give a directory for the output"]


def test_an_output_never_replaces_what_the_command_read_inside_its_directories(
        brief_index: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # `--output idx/manifest.json` would replace the manifest of the index the brief reads, and an output over one
    # of the index's data files would break it: refused under any spelling of the folder, the index as it was.
    # A file of the user's own beside the index (run.sh writes its results there) is written, and written again.
    index = tmp_path / "idx"
    shutil.copytree(brief_index, index)
    (tmp_path / "alias").symlink_to(index)
    data = index / json.loads((index / "manifest.json").read_text())["data_dir"]
    before = {p: p.read_bytes() for p in (index / "manifest.json", data / "doc_ids.json")}
    for target in (index / "manifest.json", tmp_path / "alias" / "manifest.json", data / "doc_ids.json"):
        assert main(["brief", "--index-dir", str(index), "--k", "1", "--output", str(target), "law"]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert err == [f"OutputError: {target}: is one of this command's inputs; write the output somewhere else"]
    assert {p: p.read_bytes() for p in before} == before
    for _ in range(2):
        assert main(["brief", "--index-dir", str(index), "--k", "1", "--output", str(index / "b.txt"), "law"]) == 0
    # Library callers record nothing: an index read in this process may be rebuilt by it.
    from citator.stance.retrieve.layout import read_manifest

    read_manifest(index)
    write_text_atomic(index / "manifest.json", (index / "manifest.json").read_text())


def test_review_metrics_never_replaces_the_pool_it_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from fixtures.review_run import build_run

    run = build_run(tmp_path / "run")
    labels = tmp_path / "labels.jsonl"
    labels.write_text("")
    pool = (run / "pool.jsonl").read_bytes()
    assert main(["review", "metrics", str(run), "--labels", str(labels), "--json", str(run / "pool.jsonl")]) == 2
    assert "pool.jsonl: is one of this command's inputs" in capsys.readouterr().err
    assert (run / "pool.jsonl").read_bytes() == pool
    assert main(["review", "metrics", str(run), "--labels", str(labels), "--json", str(run / "review.json")]) == 0


def test_a_replaced_file_keeps_its_mode(tmp_path: Path) -> None:
    # Reviewer notes exported over a private file must stay private.
    private = tmp_path / "labels.jsonl"
    private.write_text("old\n")
    os.chmod(private, 0o600)
    write_text_atomic(private, "new\n")
    assert private.read_text() == "new\n" and stat.S_IMODE(os.stat(private).st_mode) == 0o600
    fresh = tmp_path / "fresh.txt"
    write_text_atomic(fresh, "x")
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(os.stat(fresh).st_mode) == 0o666 & ~umask


def test_a_build_removes_only_folders_it_made(tmp_path: Path) -> None:
    # Earlier builds' folders go once a build has switched (the marked ones, and the one the manifest names); a
    # user's folder that merely looks like one, and a build folder holding a file or folder the command reads (a
    # corpus or model given from it), stay.
    from citator.stance.retrieve.index_dir import fresh_build
    from citator.stance.retrieve.layout import BUILD_MARK

    def folder(name: str, marked: bool) -> Path:
        (tmp_path / name).mkdir()
        (tmp_path / name / "dense.npy").write_bytes(b"old")
        if marked:
            (tmp_path / name / BUILD_MARK).touch()
        return tmp_path / name

    folder("build-personal", marked=False)
    folder("build-abcd_123", marked=True)
    folder("build-legacy01", marked=False)
    (tmp_path / "manifest.json").write_text('{"data_dir": "build-legacy01"}')
    corpus = folder("build-zz99zz99", marked=True) / "documents.jsonl"
    corpus.write_text("{}\n")
    (folder("build-mm11mm11", marked=True) / "model").mkdir()
    with command_inputs([str(corpus), str(tmp_path / "build-mm11mm11" / "model")]), fresh_build(tmp_path) as new:
        assert (new / BUILD_MARK).is_file()
    assert sorted(p.name for p in tmp_path.glob("build-*")) == sorted(
        ["build-personal", "build-zz99zz99", "build-mm11mm11", new.name])
    assert corpus.read_text() == "{}\n"


def test_training_refuses_to_empty_an_encoder_folder_it_did_not_finish(tmp_path: Path) -> None:
    from citator.stance.learn.fitting import FINETUNE_STAMP, clear_encoder_dir

    theirs = tmp_path / "encoder"
    theirs.mkdir()
    (theirs / "weights.bin").write_bytes(b"the user's")
    with pytest.raises(OutputError, match="no citator fine-tune finished"):
        clear_encoder_dir(theirs)
    assert (theirs / "weights.bin").read_bytes() == b"the user's"
    ours = tmp_path / "ours"
    ours.mkdir()
    (ours / FINETUNE_STAMP).write_text("{}")
    (ours / "model.safetensors").write_bytes(b"x")
    clear_encoder_dir(ours)
    assert not ours.exists()
    (tmp_path / "empty").mkdir()
    clear_encoder_dir(tmp_path / "empty")
    clear_encoder_dir(tmp_path / "absent")
