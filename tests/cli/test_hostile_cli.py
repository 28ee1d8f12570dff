"""Every CLI command, fed hostile and damaged files, succeeds or exits 2 with one line naming the file: never a
traceback, never the last-resort guard's exit 70. In-process through main() (hypothesis) and through real
subprocesses for the outside tester's cases."""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from citator.cli.main import main
from fixtures.hostile import FIXED, FIXED_GZ, mutated
from fixtures.review_run import build_run

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "src" / "citator" / "samples" / "casefacts"
STATUTES = REPO / "tests" / "statutes" / "fixtures"
RERANK = REPO / "tests" / "rerank" / "fixtures"


def _head(path: Path, n: int) -> bytes:
    return b"".join(path.read_bytes().splitlines(keepends=True)[:n])


def _valid_inputs(root: Path) -> dict[str, bytes]:
    queries = _head(SAMPLES / "queries.jsonl", 4)
    corpus = SAMPLES.joinpath("corpus.jsonl").read_bytes()
    doc_ids = [json.loads(line)["doc_id"] for line in corpus.splitlines()[:10]]
    results = b"".join(json.dumps({"query_id": json.loads(line)["query_id"],
                                   "results": [{"doc_id": d, "score": 10.0 - i} for i, d in enumerate(doc_ids)]}
                                  ).encode() + b"\n" for line in queries.splitlines())
    run = build_run(root / "run")
    return {
        "queries.jsonl": queries, "corpus.jsonl": corpus, "ground_truth.jsonl": _head(SAMPLES / "ground_truth.jsonl", 4),
        "results.jsonl": results, "sections.jsonl": STATUTES.joinpath("nrs_sections.jsonl").read_bytes(),
        "suite.jsonl": _head(STATUTES / "nrs_suite.jsonl", 2), "pool.jsonl": (run / "pool.jsonl").read_bytes(),
        "labels.jsonl": b"",
        "small_corpus.jsonl": _head(SAMPLES / "corpus.jsonl", 12),
        # The first proposition for training, the second for dev (train refuses data without both).
        "train_queries.jsonl": b"".join(json.dumps({**json.loads(line), "split": "train" if i < 2 else "dev"}
                                                   ).encode() + b"\n" for i, line in enumerate(queries.splitlines())),
        "rerank_pool.jsonl": _head(RERANK / "pool.jsonl", 2), "qrels.json": RERANK.joinpath("qrels.json").read_bytes(),
    }


def _commands(root: Path, index: Path | None = None) -> dict[str, tuple[list[str], list[str]]]:
    """name -> (argv, the input files it reads, by name under root). `index`: a built index that `search` (run.sh's
    command) answers from."""
    f = lambda name: str(root / name)  # noqa: E731
    return {
        "build": (["build", "--corpus", f("small_corpus.jsonl"), "--index-dir", f("index"), "--no-serve"],
                  ["small_corpus.jsonl"]),
        "search": (["search", "--index-dir", str(index or root / "index"), "--queries", f("queries.jsonl"),
                    "--output", f("out.jsonl"), "--no-server"], ["queries.jsonl"]),
        "eval": (["eval", "--queries", f("queries.jsonl"), "--ground-truth", f("ground_truth.jsonl"),
                  "--results", f("results.jsonl"), "--metric", "ndcg@10", "--metric", "rr"],
                 ["queries.jsonl", "ground_truth.jsonl", "results.jsonl"]),
        "validate": (["validate", "--corpus", f("corpus.jsonl"), "--queries", f("queries.jsonl"),
                      "--results", f("results.jsonl")], ["corpus.jsonl", "queries.jsonl", "results.jsonl"]),
        "review load": (["review", "load", f("run"), "--db", f("store.db")], ["pool.jsonl"]),
        "review import": (["review", "import", f("labels.jsonl"), "--db", f("store.db")], ["labels.jsonl"]),
        "review metrics": (["review", "metrics", f("run"), "--labels", f("labels.jsonl")], ["pool.jsonl", "labels.jsonl"]),
        "bench statutes": (["bench", "statutes", "--corpus", f("sections.jsonl"), "--suite", f("suite.jsonl"),
                            "--provider", "none", "--out", f("out")], ["sections.jsonl", "suite.jsonl"]),
    }


def _before_the_model(root: Path) -> dict[str, tuple[list[str], list[str]]]:
    """Commands whose valid run takes minutes (training, a model's reranking): fed damaged inputs, each must stop
    at the damaged file before any model is loaded. Their model is missing, so a run that got past its inputs would
    fail naming the model, not the damaged file."""
    f = lambda name: str(root / name)  # noqa: E731
    return {
        "train": (["train", "--corpus", f("small_corpus.jsonl"), "--queries", f("train_queries.jsonl"),
                   "--ground-truth", f("ground_truth.jsonl"), "--out", f("artifacts"), "--model", f("no-model")],
                  ["small_corpus.jsonl", "train_queries.jsonl", "ground_truth.jsonl"]),
        "rerank": (["rerank", "--pool", f("rerank_pool.jsonl"), "--qrels", f("qrels.json"), "--model", f("no-model"),
                    "--strategy", "bm25", "--out", f("rerank-run")], ["rerank_pool.jsonl", "qrels.json"]),
    }


def _place(root: Path, name: str, data: bytes) -> Path:
    path = root / "run" / name if name == "pool.jsonl" else root / name
    path.write_bytes(data)
    return path


def _run(argv: list[str]) -> tuple[int, list[str]]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        rc = main(argv)
    return rc, [line for line in err.getvalue().splitlines() if line.strip() and not line.startswith("warning:")]


def _check(rc: int, lines: list[str], damaged: str, command: str) -> None:
    if rc == 0:
        return
    if command == "validate" and rc == 1 and lines and lines[-1].startswith("INVALID:"):
        return  # validate's verdict on a results file that breaks the output rules, one problem a line
    assert rc == 2, (command, damaged, rc, lines)
    assert len(lines) == 1 and damaged in lines[0], (command, damaged, lines)


@pytest.fixture()
def root(tmp_path: Path) -> Path:
    return tmp_path


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An index of the first 12 sample documents (the default encoder), for `search`."""
    root = tmp_path_factory.mktemp("index")
    _place(root, "small_corpus.jsonl", _head(SAMPLES / "corpus.jsonl", 12))
    rc, lines = _run(["build", "--corpus", str(root / "small_corpus.jsonl"), "--index-dir", str(root / "index"),
                      "--no-serve"])
    assert rc == 0, lines
    return root / "index"


COMMANDS = sorted(_commands(Path("/")))


@pytest.mark.parametrize("command", COMMANDS)
def test_valid_inputs_succeed(command: str, tmp_path: Path, index: Path) -> None:
    valid = _valid_inputs(tmp_path)
    for name, data in valid.items():
        _place(tmp_path, name, data)
    argv, _ = _commands(tmp_path, index)[command]
    rc, lines = _run(argv)
    assert rc == 0, lines


@pytest.mark.parametrize("command", COMMANDS)
def test_fixed_hostile_inputs_are_one_clear_line(command: str, tmp_path: Path, index: Path) -> None:
    valid = _valid_inputs(tmp_path)
    argv, inputs = _commands(tmp_path, index)[command]
    for damaged in inputs:
        for data in list(FIXED.values()) + list(FIXED_GZ.values()):
            for name, good in valid.items():
                _place(tmp_path, name, good)
            _place(tmp_path, damaged, data)
            rc, lines = _run(argv)
            _check(rc, lines, damaged, command)


@pytest.mark.parametrize("command", COMMANDS)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_damaged_inputs_succeed_or_are_one_clear_line(command: str, tmp_path_factory: pytest.TempPathFactory,
                                                      index: Path, data: st.DataObject) -> None:
    root = tmp_path_factory.mktemp("cli")
    valid = _valid_inputs(root)
    argv, inputs = _commands(root, index)[command]
    damaged = data.draw(st.sampled_from(inputs))
    for name, good in valid.items():
        _place(root, name, good)
    _place(root, damaged, data.draw(mutated(valid[damaged] or json.dumps({"query_id": "q"}).encode())))
    rc, lines = _run(argv)
    _check(rc, lines, damaged, command)


@pytest.mark.parametrize("command", sorted(_before_the_model(Path("/"))))
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_heavy_commands_stop_at_a_damaged_input(command: str, tmp_path_factory: pytest.TempPathFactory,
                                                data: st.DataObject) -> None:
    root = tmp_path_factory.mktemp("heavy")
    valid = _valid_inputs(root)
    argv, inputs = _before_the_model(root)[command]
    damaged = data.draw(st.sampled_from(inputs))
    for name, good in valid.items():
        _place(root, name, good)
    bad = data.draw(st.sampled_from([*FIXED.values(), *FIXED_GZ.values()]) | mutated(valid[damaged]))
    _place(root, damaged, bad)
    rc, lines = _run(argv)
    assert rc == 2, (command, damaged, lines)
    assert len(lines) == 1, (command, damaged, lines)
    # Stopped at the damaged file, or (a mutation that left it valid) at the missing model.
    assert damaged in lines[0] or "no-model" in lines[0], (command, damaged, lines)


def _eval_args(root: Path) -> list[str]:
    valid = _valid_inputs(root)
    for name, good in valid.items():
        _place(root, name, good)
    return _commands(root)["eval"][0]


def _with(argv: list[str], root: Path, name: str, data: bytes) -> list[str]:
    """`argv`, after one of its input files has been replaced by `data`."""
    _place(root, name, data)
    return argv


def _model_dir(root: Path, config: bytes) -> Path:
    """A folder given as a model: its config.json holds `config` and there are no weights."""
    model = root / "model"
    model.mkdir()
    (model / "config.json").write_bytes(config)
    return model


def _linked_manifest(root: Path) -> Path:
    """An index folder whose manifest.json is a symbolic link: a build ends by replacing it, so it is refused first."""
    index = root / "index"
    index.mkdir()
    (index / "manifest.json").symlink_to(_place(root, "elsewhere.json", b"{}"))
    return index


SUBPROCESS_CASES: dict[str, tuple[Callable[[Path], list[str]], str]] = {
    "eval --baseline 1": (lambda r: _eval_args(r) + ["--baseline", "1"], "citator eval: --baseline must be a finite"),
    "eval --baseline nan": (lambda r: _eval_args(r) + ["--baseline", "nan"], "citator eval: --baseline must be a finite"),
    "eval --json DIR": (lambda r: _eval_args(r) + ["--json", str(r)], "is a directory"),
    "queries nested 100k deep": (lambda r: _with(_eval_args(r), r, "queries.jsonl", FIXED["nested list 100k deep"]),
                                 "queries.jsonl line 1: malformed JSON: nested too deeply"),
    "results nested 100k deep": (lambda r: _with(_eval_args(r), r, "results.jsonl", FIXED["nested object 100k deep"]),
                                 "results.jsonl line 1: malformed JSON: nested too deeply"),
    "plain file named .gz": (lambda r: _eval_args(r)[:2] + [str(_place(r, "q.jsonl.gz", b'{"query_id": "q"}\n'))]
                             + _eval_args(r)[3:], "q.jsonl.gz line 1: not a valid gzip file"),
    "build --index-dir FILE": (lambda r: ["build", "--corpus", str(SAMPLES / "corpus.jsonl"), "--index-dir",
                                          str(_place(r, "FILE", b"x")), "--no-serve"], "FILE: is a file, not a directory"),
    "build --index-dir under a file": (lambda r: ["build", "--corpus", str(SAMPLES / "corpus.jsonl"), "--index-dir",
                                                  str(_place(r, "FILE", b"x") / "index"), "--no-serve"],
                                       "FILE is a file, not a directory"),
    "build --index-dir /dev/null": (lambda r: ["build", "--corpus", str(SAMPLES / "corpus.jsonl"), "--index-dir",
                                               "/dev/null", "--no-serve"], "/dev/null: is not a directory"),
    "build over a symlinked manifest": (lambda r: ["build", "--corpus", str(SAMPLES / "corpus.jsonl"), "--index-dir",
                                                   str(_linked_manifest(r)), "--no-serve"],
                                        "manifest.json: is a symbolic link"),
    "sharded build over a symlinked manifest": (lambda r: ["build", "--corpus", str(SAMPLES / "corpus.jsonl"),
                                                           "--index-dir", str(_linked_manifest(r)), "--no-serve",
                                                           "--shards", "3"], "manifest.json: is a symbolic link"),
    "build --model whose config.json is not JSON": (
        lambda r: ["build", "--corpus", str(SAMPLES / "corpus.jsonl"), "--index-dir", str(r / "index"), "--no-serve",
                   "--model", str(_model_dir(r, b"[" * 100_000))], "config.json: not valid JSON (nested too deeply"),
    "build --model whose config.json is a list": (
        lambda r: ["build", "--corpus", str(SAMPLES / "corpus.jsonl"), "--index-dir", str(r / "index"), "--no-serve",
                   "--model", str(_model_dir(r, b"[]"))], "config.json: a JSON list, not an object"),
    "build --model without weights": (
        lambda r: ["build", "--corpus", str(SAMPLES / "corpus.jsonl"), "--index-dir", str(r / "index"), "--no-serve",
                   "--model", str(_model_dir(r, b'{"model_type": "bert"}'))], "not a model citator can load"),
    "bench statutes --model without weights": (
        lambda r: ["bench", "statutes", "--corpus", str(STATUTES / "nrs_sections.jsonl"), "--suite",
                   str(STATUTES / "nrs_suite.jsonl"), "--out", str(r / "run"), "--provider", "embedding",
                   "--model", str(_model_dir(r, b'{"model_type": "bert"}'))], "not a model citator can load"),
    "rerank --out FILE": (lambda r: ["rerank", "--pool", "p", "--qrels", "q", "--model", "m", "--strategy", "bm25",
                                     "--out", str(_place(r, "FILE", b"x"))], "FILE: is a file, not a directory"),
    # The label store is checked as any output is (it is updated in place, so being read is its purpose).
    "review --db a symlink": (lambda r: ["review", "add-reviewer", "ann", "--db", str(_linked(r, "labels.sqlite"))],
                              "labels.sqlite: is a symbolic link"),
    "review --db a directory": (lambda r: ["review", "add-reviewer", "ann", "--db", str(r)], "is a directory"),
    "review --db /dev/null": (lambda r: ["review", "add-reviewer", "ann", "--db", "/dev/null"],
                              "/dev/null: is a character device"),
}


def _linked(root: Path, name: str) -> Path:
    (root / name).symlink_to(_place(root, "victim", b"precious"))
    return root / name


def test_a_reader_that_goes_away_or_a_full_disk_under_standard_output(tmp_path: Path) -> None:
    """`citator ... | head` whose reader has gone: exit 141 and nothing on stderr; standard output on a full disk
    (/dev/full): one line and exit 2. Never a traceback."""
    import os

    args = [sys.executable, "-m", "citator.cli.main", *_eval_args(tmp_path)]
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run(args, stdout=write, stderr=subprocess.PIPE, text=True, timeout=300)
    finally:
        os.close(write)
    assert done.returncode == 141 and done.stderr == "", done.stderr
    if os.path.exists("/dev/full"):
        with open("/dev/full", "w") as full:
            done = subprocess.run(args, stdout=full, stderr=subprocess.PIPE, text=True, timeout=300)
        assert done.returncode == 2 and done.stderr.strip().splitlines() == [
            "citator: cannot write the output (No space left on device)"], done.stderr


@pytest.mark.parametrize("case", sorted(SUBPROCESS_CASES))
def test_outside_testers_cases_through_a_real_process(case: str, tmp_path: Path) -> None:
    make, expected = SUBPROCESS_CASES[case]
    done = subprocess.run([sys.executable, "-m", "citator.cli.main", *make(tmp_path)], capture_output=True, text=True,
                          timeout=300)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and expected in lines[0], (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr
