"""End to end through ./build.sh and ./run.sh exactly as the evaluator calls them."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from citator.data import read_corpus, read_queries, read_results, validate_results
from citator.stance.retrieve.layout import read_manifest

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


def sh(*args: str | Path, user: str | None = None, cwd: Path = REPO, env: dict | None = None) -> subprocess.CompletedProcess:
    cmd = [str(a) for a in args]
    if user:
        entry = pwd.getpwnam(user)
        cmd = ["setpriv", f"--reuid={entry.pw_uid}", f"--regid={entry.pw_gid}", "--clear-groups", "--"] + cmd
    return subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, env=env, timeout=600)


@pytest.fixture(scope="module")
def served_index(small_stance_set: dict[str, Path]) -> Iterator[Path]:
    # A world-traversable place so that the unprivileged test can reach it too.
    root = Path(tempfile.mkdtemp(prefix="citator-contract-"))
    os.chmod(root, 0o755)
    index = root / "index"
    # --no-artifacts: a developer's trained artifacts/ must not change what this test builds.
    done = sh(REPO / "build.sh", "--corpus", small_stance_set["corpus"], "--index-dir", index, "--no-artifacts")
    assert done.returncode == 0, done.stderr
    assert "search server ready" in done.stderr
    yield index
    sh(sys.executable, "-m", "citator.cli.main", "stop", "--index-dir", index)
    shutil.rmtree(root, ignore_errors=True)


def run_sh(index: Path, queries: Path, out: Path, **kw) -> subprocess.CompletedProcess:  # type: ignore[no-untyped-def]
    return sh(REPO / "run.sh", "--index-dir", index, "--queries", queries, "--output", out, "--top-k", "10", **kw)


def copy_from_repo(code: Path, *names: str) -> None:
    """Copy these files and folders of the checkout into `code` (a code directory apart from the repository)."""
    for name in names:
        src = REPO / name
        (shutil.copytree if src.is_dir() else shutil.copy2)(src, code / name)


def link_tree(src: Path, dest: Path) -> None:
    """`dest` holds what `src` holds: hard links where the file system allows, copies otherwise (symlinks kept)."""
    if subprocess.run(["cp", "-al", str(src), str(dest)], capture_output=True).returncode != 0:
        shutil.rmtree(dest, ignore_errors=True)
        subprocess.run(["cp", "-a", str(src), str(dest)], check=True)


def check_output(out: Path, small: dict[str, Path], index: Path) -> None:
    queries = read_queries(small["queries"])
    corpus_ids = {d.doc_id for d in read_corpus(small["corpus"])}
    assert validate_results(read_results(out), corpus_ids, queries, 10) == []


def test_run_uses_the_live_server(served_index: Path, small_stance_set: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "results.jsonl"
    done = run_sh(served_index, small_stance_set["queries"], out)
    assert done.returncode == 0, done.stderr
    assert "(server," in done.stderr
    check_output(out, small_stance_set, served_index)
    assert stat.S_IMODE((served_index / "service" / "search.sock").stat().st_mode) == 0o600  # no one else's to use
    # In-process search gives the same rankings; its ONNX query encoder (the server uses torch) moves scores only
    # by float rounding.
    same = tmp_path / "inproc.jsonl"
    done = sh(REPO / "run.sh", "--index-dir", served_index, "--queries", small_stance_set["queries"], "--output", same,
              "--top-k", "10", "--no-server")
    assert done.returncode == 0 and "(in-process," in done.stderr
    served, cold = list(read_results(out)), list(read_results(same))
    assert [r.query_id for r in cold] == [r.query_id for r in served]
    for a, b in zip(cold, served):
        assert [d.doc_id for d in a.results] == [d.doc_id for d in b.results]
        assert max(abs(x.score - y.score) for x, y in zip(a.results, b.results)) < 1e-5


def test_stale_server_is_never_used(served_index: Path, small_stance_set: dict[str, Path], tmp_path: Path) -> None:
    # The server follows its manifest, so it is held still (SIGSTOP) while the index is "rebuilt" under it: it keeps
    # publishing the fingerprint of the build it holds, and run.sh must see that it is another and search here.
    manifest = served_index / "manifest.json"
    original = manifest.read_text()
    ready = served_index / "service" / "ready.json"
    deadline = time.monotonic() + 60
    while json.loads(ready.read_text())["fingerprint"] != read_manifest(served_index).fingerprint \
            and time.monotonic() < deadline:
        time.sleep(0.2)
    pid = json.loads(ready.read_text())["pid"]
    os.kill(pid, signal.SIGSTOP)
    try:
        # As if the index had been rebuilt under the running server: another fingerprint.
        manifest.write_text(json.dumps(dict(json.loads(original), built_at=0.0)))
        out = tmp_path / "results.jsonl"
        done = run_sh(served_index, small_stance_set["queries"], out)
        assert done.returncode == 0, done.stderr
        assert "(in-process, since the running server holds another build of the index" in done.stderr, done.stderr
    finally:
        manifest.write_text(original)
        os.kill(pid, signal.SIGCONT)


def test_a_stopped_server_is_given_up_on_at_once(served_index: Path, small_stance_set: dict[str, Path],
                                                 tmp_path: Path) -> None:
    # A stopped (or hung) server still accepts the connection: only the missing acknowledgement tells, and run.sh
    # must not spend its 20 s waiting for an answer before it searches in-process.
    # The server follows its manifest (stance/retrieve/current.py): after the test before rewrote it and put it back,
    # it publishes the index's own fingerprint again within its next look. Stopped only once it serves this index.
    ready, want = served_index / "service" / "ready.json", read_manifest(served_index).fingerprint
    deadline = time.monotonic() + 60
    while json.loads(ready.read_text())["fingerprint"] != want and time.monotonic() < deadline:
        time.sleep(0.2)
    pid = json.loads(ready.read_text())["pid"]
    os.kill(pid, signal.SIGSTOP)
    try:
        out = tmp_path / "results.jsonl"
        done = run_sh(served_index, small_stance_set["queries"], out)
        assert done.returncode == 0, done.stderr
        assert "(in-process, since the server sent no acknowledgement in time," in done.stderr
        check_output(out, small_stance_set, served_index)
    finally:
        os.kill(pid, signal.SIGCONT)
    done = run_sh(served_index, small_stance_set["queries"], tmp_path / "again.jsonl")
    assert done.returncode == 0 and "(server," in done.stderr, done.stderr


def test_unprivileged_user_and_read_only_code(small_stance_set: dict[str, Path]) -> None:
    # As the evaluator runs them: build.sh and then run.sh, both as one unprivileged user, from a read-only code
    # directory; all writable state in the index directory.
    if os.geteuid() != 0:
        pytest.skip("needs root to switch to the nobody user")
    code = Path(tempfile.mkdtemp(prefix="citator-ro-"))
    work = Path(tempfile.mkdtemp(prefix="citator-nobody-"))
    try:
        copy_from_repo(code, "build.sh", "run.sh", "scripts", "src")
        for name in ("corpus", "queries"):
            shutil.copy(small_stance_set[name], code / f"{name}.jsonl")
        subprocess.run(["chmod", "-R", "a-w,a+rX", str(code)], check=True)
        nobody = pwd.getpwnam("nobody")
        os.chmod(work, 0o755)
        os.chown(work, nobody.pw_uid, nobody.pw_gid)
        # run.sh finds the environment it was installed with, `.venv` beside it, as the evaluator's user does: its
        # interpreter must be one every user can run (the Makefile picks such a base, scripts/find_python.sh). This
        # checkout's .venv may sit under a private home, so the copy gets its own: hard links where the file system
        # allows (free; modes untouched), a copy otherwise. The index records the encoder's path, so it is built
        # from that copy too. The read-only copy of the code comes first on the path.
        os.chmod(code, 0o755)
        link_tree(Path(sys.prefix), code / ".venv")
        os.chmod(code, 0o555)
        env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(code / "src"), "HOME": "/nonexistent"}
        done = sh(code / "build.sh", "--corpus", code / "corpus.jsonl", "--index-dir", work / "index",
                  "--no-artifacts", user="nobody", env=env, cwd=work)
        assert "cannot be run by this user" not in done.stderr, (
            f"{sys.executable} cannot be run by nobody: rebuild .venv with make clean test (it picks a Python every "
            "user can run)")
        assert done.returncode == 0, done.stderr
        out = work / "results.jsonl"
        done = sh(code / "run.sh", "--index-dir", work / "index", "--queries", code / "queries.jsonl", "--output", out,
                  "--top-k", "10", user="nobody", env=env, cwd=work)
        assert done.returncode == 0, done.stderr
        check_output(out, small_stance_set, work / "index")
        # Nothing was written into the code directory (its .venv, made above, holds pip's own caches).
        assert not [p for p in code.rglob("__pycache__") if p.relative_to(code).parts[0] != ".venv"]
    finally:
        sh(sys.executable, "-m", "citator.cli.main", "stop", "--index-dir", work / "index")
        shutil.rmtree(work, ignore_errors=True)
        os.chmod(code, 0o755)
        shutil.rmtree(code / ".venv", ignore_errors=True)  # first: its files are the checkout venv's own inodes
        subprocess.run(["chmod", "-R", "u+w", str(code)], check=False)
        shutil.rmtree(code, ignore_errors=True)


def test_dead_server_falls_back_in_process(small_stance_set: dict[str, Path], tmp_path: Path) -> None:
    index = tmp_path / "index"
    done = sh(REPO / "build.sh", "--corpus", small_stance_set["corpus"], "--index-dir", index, "--no-artifacts")
    assert done.returncode == 0, done.stderr
    ready = json.loads((index / "service" / "ready.json").read_text())
    assert ready["frozen_objects"] > 10_000  # the loaded index and models, left out of garbage collections
    os.kill(ready["pid"], signal.SIGKILL)
    out = tmp_path / "results.jsonl"
    done = run_sh(index, small_stance_set["queries"], out)
    assert done.returncode == 0, done.stderr
    assert "(in-process," in done.stderr
    check_output(out, small_stance_set, index)


def test_bad_inputs_fail_clearly_and_write_nothing(served_index: Path, small_stance_set: dict[str, Path], tmp_path: Path) -> None:
    bad_queries = tmp_path / "queries.jsonl"
    bad_queries.write_text('{"query_id": "q1", "text": "x", "stance": "neutral"}\n')
    out = tmp_path / "results.jsonl"
    done = run_sh(served_index, bad_queries, out)
    assert done.returncode != 0
    assert 'QueryError: queries.jsonl line 1 field "stance": unknown stance "neutral"' in done.stderr
    assert not out.exists()

    done = sh(REPO / "run.sh", "--index-dir", served_index, "--queries", small_stance_set["queries"], "--output", out,
              "--top-k", "0")
    assert done.returncode != 0 and "run.sh: --top-k must be a whole number of at least 1, got 0" in done.stderr
    assert not out.exists()

    done = run_sh(tmp_path / "no-such-index", small_stance_set["queries"], out)
    assert done.returncode != 0 and "index directory not found" in done.stderr
    assert not out.exists()

    dup = tmp_path / "corpus.jsonl"
    dup.write_text('{"doc_id": "a", "title": "", "text": "x"}\n{"doc_id": "a", "title": "", "text": "y"}\n')
    done = sh(REPO / "build.sh", "--corpus", dup, "--index-dir", tmp_path / "idx")
    assert done.returncode != 0 and 'duplicate doc_id "a"' in done.stderr
    assert not (tmp_path / "idx" / "manifest.json").exists()
    assert list(tmp_path.glob("**/*.tmp")) == [] and [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


@pytest.mark.parametrize("first_line", ["#!/bin/sh", "#!/usr/bin/env sh"])
def test_scripts_run_an_installed_citator_whatever_its_first_line(tmp_path: Path, small_stance_set: dict[str, Path],
                                                                  first_line: str) -> None:
    # No .venv beside the scripts: they fall back to `citator` on PATH. pip writes a /bin/sh trampoline when the
    # interpreter's path holds a space; reading the interpreter off the first line ran `/bin/sh -m citator...`.
    code = tmp_path / "code"
    code.mkdir()
    copy_from_repo(code, "build.sh", "run.sh", "scripts")
    bin_dir = tmp_path / "bin dir"
    bin_dir.mkdir()
    entry = bin_dir / "citator"
    entry.write_text(f'{first_line}\nexec "{sys.executable}" -m citator.cli.main "$@"\n')
    entry.chmod(0o755)
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(tmp_path)}
    done = sh(code / "run.sh", "--index-dir", tmp_path / "no-index", "--queries", small_stance_set["queries"],
              "--output", tmp_path / "out.jsonl", env=env)
    # citator's own CLI answered (a clear error for the missing index), not the shell.
    assert done.returncode == 2 and "index directory not found; run build.sh first" in done.stderr, done.stderr


def test_a_server_holding_one_client_still_answers_another(served_index: Path, small_stance_set: dict[str, Path],
                                                           tmp_path: Path) -> None:
    import socket

    from citator.stance.retrieve.service_protocol import service_dir, short_socket_path

    # A client that connects and never finishes its request line: a server reading one client at a time would
    # leave run.sh unacknowledged, and run.sh would search cold beside it.
    with short_socket_path(service_dir(served_index)) as path, socket.socket(socket.AF_UNIX) as idle:
        idle.connect(path)
        idle.sendall(b'{"fingerprint": "')
        done = run_sh(served_index, small_stance_set["queries"], tmp_path / "results.jsonl")
    assert done.returncode == 0 and "(server," in done.stderr, done.stderr


def test_a_refused_build_leaves_the_old_index_and_its_server_answering(
    served_index: Path, small_stance_set: dict[str, Path], tmp_path: Path
) -> None:
    pid = json.loads((served_index / "service" / "ready.json").read_text())["pid"]
    manifest = (served_index / "manifest.json").read_text()
    dup = tmp_path / "dup.jsonl"
    dup.write_text('{"doc_id": "a", "title": "", "text": "x"}\n{"doc_id": "a", "title": "", "text": "y"}\n')
    four = tmp_path / "four.jsonl"
    four.write_text("".join(json.dumps({"doc_id": f"d{i}", "title": "", "text": f"text {i}"}) + "\n" for i in range(4)))
    for corpus, reason in ((dup, 'duplicate doc_id "a"'), (four, "4 documents: run.sh answers every query with top-k 10")):
        done = sh(REPO / "build.sh", "--corpus", corpus, "--index-dir", served_index, "--no-artifacts")
        assert done.returncode == 2 and reason in done.stderr, done.stderr
        assert len(done.stderr.strip().splitlines()) == 1
        os.kill(pid, 0)  # the old server is still running ...
        assert (served_index / "manifest.json").read_text() == manifest
        done = run_sh(served_index, small_stance_set["queries"], tmp_path / "results.jsonl")
        assert done.returncode == 0 and "(server," in done.stderr, done.stderr  # ... and answering


def test_hostile_run_arguments_are_one_clear_line(
    served_index: Path, small_stance_set: dict[str, Path], tmp_path: Path
) -> None:
    queries = tmp_path / "queries.jsonl"
    shutil.copy(small_stance_set["queries"], queries)
    before = queries.read_bytes()
    real = tmp_path / "real.jsonl"
    real.write_text("keep\n")
    link = tmp_path / "link.jsonl"
    link.symlink_to(real)
    cases = {
        "the queries file": (queries, "10", "is one of this command's inputs"),
        "a symlink": (link, "10", "is a symbolic link"),
        "/dev/null": (Path("/dev/null"), "10", "is a character device"),
        "a directory": (tmp_path, "10", "is a directory"),
        "under a file": (real / "out.jsonl", "10", "is a file, not a directory"),
        "more than the corpus": (tmp_path / "out.jsonl", "41", "--top-k 41 is more than the 40 documents"),
    }
    for name, (output, k, reason) in cases.items():
        done = sh(REPO / "run.sh", "--index-dir", served_index, "--queries", queries, "--output", output, "--top-k", k)
        lines = done.stderr.strip().splitlines()
        assert done.returncode == 2 and len(lines) == 1 and reason in lines[0], (name, done.stderr)
    assert queries.read_bytes() == before and link.is_symlink() and real.read_text() == "keep\n"
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    assert not (tmp_path / "out.jsonl").exists()


def test_a_9_mb_query_is_answered_within_the_rules(
    served_index: Path, small_stance_set: dict[str, Path], tmp_path: Path
) -> None:
    rows = [json.loads(line) for line in small_stance_set["queries"].read_text().splitlines()]
    rows[0]["text"] = " ".join(["negligence duty of care"] * 400_000)  # 9.2 MB
    queries = tmp_path / "queries.jsonl"
    queries.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "results.jsonl"
    done = run_sh(served_index, queries, out)
    assert done.returncode == 0, done.stderr
    problems = validate_results(read_results(out), {d.doc_id for d in read_corpus(small_stance_set["corpus"])},
                                read_queries(queries), 10)
    assert problems == []
