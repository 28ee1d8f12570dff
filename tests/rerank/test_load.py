"""Runner.load: deployment settings reach the model; load and warm-up are timed against their limits."""

from __future__ import annotations

from pathlib import Path

import pytest

from citator.rerank.deployment import Deployment
from citator.rerank.errors import RerankError
from citator.rerank.limits import Limits
from citator.rerank.runner import Runner


def test_deployment_reaches_the_model_and_times_are_recorded(tiny_qwen3_causal_dir: Path) -> None:
    import torch

    threads = torch.get_num_threads()
    try:
        runner = Runner.load(tiny_qwen3_causal_dir, Deployment("eager", 1), "bm25")
        assert runner.backend.model.config._attn_implementation == "eager"
        assert torch.get_num_threads() == 1
        assert runner.load_seconds is not None and runner.load_seconds > 0
        assert runner.warm_up_seconds is not None and runner.warm_up_seconds > 0
    finally:
        torch.set_num_threads(threads)


def test_a_load_over_its_limit_aborts(tiny_qwen3_causal_dir: Path) -> None:
    with pytest.raises(RerankError, match="model load took"):
        Runner.load(tiny_qwen3_causal_dir, Deployment(), "bm25", Limits(model_load_s=1e-6))


def test_an_empty_command_is_an_error(tiny_llm) -> None:  # noqa: ANN001
    with pytest.raises(RerankError):
        Runner(tiny_llm, [])


def test_cli_rejects_an_unknown_strategy_name(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    from citator.cli.main import main

    argv = ["rerank", "--pool", "p", "--qrels", "q", "--model", str(tmp_path), "--strategy", "listwise-magic",
            "--out", str(tmp_path / "run")]
    assert main(argv) == 2
    assert "unknown strategy 'listwise-magic'" in capsys.readouterr().err
