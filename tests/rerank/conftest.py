"""Shared fixtures: the tiny random Qwen3 behind the LLM seam, the fixture pool and runners with short limits."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

HERE = Path(__file__).parent
POOL = HERE / "fixtures" / "pool.jsonl"
QRELS = HERE / "fixtures" / "qrels.json"
SCRIPTS = HERE / "strategies"


@pytest.fixture(scope="session")
def tiny_llm(tiny_qwen3_causal_dir: Path):  # noqa: ANN201
    from citator.models.transformers_llm import TransformersLLM

    return TransformersLLM(tiny_qwen3_causal_dir, cpu_threads=1)


@pytest.fixture(scope="session")
def pool():  # noqa: ANN201
    from citator.rerank.pool import read_pool

    return read_pool(POOL)


@pytest.fixture(scope="session")
def short_limits():  # noqa: ANN201
    from citator.rerank.limits import Limits

    # Short waits keep the failure tests fast; the CPU limit stays well above interpreter start-up.
    return Limits(cpu_seconds=0.6, response_timeout_s=2.0, max_message_bytes=64 * 1024, max_requests=40, exit_grace_s=1.0,
                  max_counted_chars=500_000)


def reachable_dir(prefix: str) -> Path:
    """A new directory under the system temp dir that every user can read (the strategy's user is `nobody` as
    root): the checkout itself may sit under a private home."""
    path = Path(tempfile.mkdtemp(prefix=prefix))
    os.chmod(path, 0o755)
    return path


@pytest.fixture
def reachable_tmp() -> Iterator[Path]:
    """Like tmp_path, but readable by the strategy's user (pytest's own temp root is private to the runner's)."""
    path = reachable_dir("citator-test-")
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="session")
def scripts_dir() -> Iterator[Path]:
    """A copy of tests/rerank/strategies that the strategy's user can read."""
    root = reachable_dir("citator-test-strategies-")
    try:
        shutil.copytree(SCRIPTS, root / "strategies", ignore=shutil.ignore_patterns("__pycache__"))
        for dirpath, _, names in os.walk(root):
            os.chmod(dirpath, 0o755)
            for name in names:
                os.chmod(os.path.join(dirpath, name), 0o644)
        yield root / "strategies"
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def script(scripts_dir: Path):  # noqa: ANN201
    """script(name, *args): strategy command for a test script ("python" becomes the sandbox's interpreter)."""

    def command(name: str, *args: str) -> list[str]:
        return ["python", str(scripts_dir / name), *args]

    return command
