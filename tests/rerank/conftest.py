"""Shared fixtures: the tiny random Qwen3 behind the LLM seam, the fixture pool and runners with short limits."""

from __future__ import annotations

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
    return Limits(cpu_seconds=0.6, response_timeout_s=2.0, max_message_bytes=64 * 1024, max_requests=40, exit_grace_s=1.0)


@pytest.fixture(scope="session")
def script():  # noqa: ANN201
    """script(name, *args): strategy command for a test script ("python" becomes the sandbox's interpreter)."""

    def command(name: str, *args: str) -> list[str]:
        return ["python", str(SCRIPTS / name), *args]

    return command
