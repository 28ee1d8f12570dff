"""citator installed as a wheel, apart from any checkout: the CLI, the demo, a build and a search work."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow


def run(*args: str | Path, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, f"{args}: {done.stderr[-3000:]}"
    return done


def test_the_wheel_works_without_the_checkout(tmp_path: Path) -> None:
    # The wheel is built from a copy of what it is made of, so nothing is written into the checkout.
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE", "NOTICE"):
        shutil.copy2(REPO / name, source / name)
    shutil.copytree(REPO / "src", source / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    wheels = tmp_path / "wheels"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "CITATOR_"))}
    run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--disable-pip-version-check",
        "-q", "-w", wheels, source, cwd=tmp_path, env=env)
    wheel = next(wheels.glob("citator-*.whl"))
    shutil.rmtree(source)
    # The Qwen3 tokenizer ships (demo-model needs it) with the notice that names its licence.
    names = zipfile.ZipFile(wheel).namelist()
    assert "citator/models/qwen3-tokenizer/tokenizer.json.gz" in names
    assert "citator/models/qwen3-tokenizer/PROVENANCE.md" in names
    notice = next(n for n in names if n.endswith("/NOTICE"))
    assert "src/citator/models/qwen3-tokenizer/" in zipfile.ZipFile(wheel).read(notice).decode()

    # A fresh venv outside the checkout. Its dependencies are this environment's, put on its path by a .pth line
    # (a directory named there is not scanned for .pth files, so this checkout's editable install stays out); the
    # wheel itself is installed by pip, and `pip check` says whether what it declares is satisfied.
    venv = tmp_path / "venv"
    run(sys.executable, "-m", "venv", "--without-pip", venv, cwd=tmp_path, env=env)
    py = venv / "bin" / "python"
    site = Path(run(py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])", cwd=tmp_path,
                    env=env).stdout.strip())
    (site / "deps-of-the-test-environment.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    run(py, "-m", "pip", "install", "--no-deps", "--no-index", "--disable-pip-version-check", "-q", wheel,
        cwd=tmp_path, env=env)
    run(py, "-m", "pip", "check", cwd=tmp_path, env=env)

    work = tmp_path / "work"
    work.mkdir()
    where = run(py, "-c", "import citator; print(citator.__file__)", cwd=work, env=env).stdout.strip()
    assert Path(where).is_relative_to(venv), where
    citator = venv / "bin" / "citator"
    assert "rerank" in run(citator, "--help", cwd=work, env=env).stdout

    demo = run(py, "-m", "citator.demo", cwd=work, env=env)
    assert "overall" in demo.stdout and "NDCG@10" in demo.stdout
    # Its long step is announced, with how long it takes, before it starts.
    from citator.demo import BUILD_TAKES

    assert demo.stdout.splitlines()[0].startswith("citator demo: building a stance index") and BUILD_TAKES in demo.stdout

    sample = Path(where).parent / "samples" / "casefacts"
    corpus = work / "corpus.jsonl"
    corpus.write_text("".join((sample / "corpus.jsonl").read_text().splitlines(keepends=True)[:40]))
    # No artifacts anywhere: the package does not look for a checkout's artifacts/ folder.
    built = run(citator, "build", "--corpus", corpus, "--index-dir", work / "index", "--no-serve", cwd=work, env=env)
    assert "artifacts none" in built.stderr
    out = work / "results.jsonl"
    run(citator, "search", "--index-dir", work / "index", "--queries", sample / "queries.jsonl", "--output", out,
        "--top-k", "5", "--no-server", cwd=work, env=env)
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    queries = (sample / "queries.jsonl").read_text().splitlines()
    assert len(lines) == len(queries) and all(len(line["results"]) == 5 for line in lines)

    # The machinery-only Qwen3, from the package alone, and a rerank that says what it was ranked with.
    wrote = run(citator, "demo-model", "--out", work / "qwen3", cwd=work, env=env)
    assert "machinery-only Qwen3" in wrote.stderr and (work / "qwen3" / "tokenizer.json").is_file()
    fixtures = REPO / "tests" / "rerank" / "fixtures"
    ranked = run(citator, "rerank", "--pool", fixtures / "pool.jsonl", "--qrels", fixtures / "qrels.json", "--model",
                 work / "qwen3", "--strategy", "first-token", "--out", work / "rerank", "--limit", "1", "--quiet",
                 cwd=work, env=env)
    assert "machinery-only" in ranked.stderr and json.loads(ranked.stdout)["queries"] == 1
