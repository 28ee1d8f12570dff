"""deployment.json may set only attention (sdpa|eager) and cpu_threads (1-16)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from citator.errors import ConfigError
from citator.rerank.deployment import Deployment, load_deployment


@pytest.mark.parametrize(
    "obj, expected",
    [
        ({}, Deployment("sdpa", None)),
        ({"attention": "eager"}, Deployment("eager", None)),
        ({"attention": "sdpa", "cpu_threads": 1}, Deployment("sdpa", 1)),
        ({"cpu_threads": 16}, Deployment("sdpa", 16)),
    ],
)
def test_valid_files(tmp_path: Path, obj: dict, expected: Deployment) -> None:
    path = tmp_path / "deployment.json"
    path.write_text(json.dumps(obj))
    assert load_deployment(path) == expected


@pytest.mark.parametrize(
    "obj, message",
    [
        ({"attention": "flash_attention_2"}, "attention"),
        ({"attention": None}, "attention"),
        ({"cpu_threads": 0}, "cpu_threads"),
        ({"cpu_threads": 17}, "cpu_threads"),
        ({"cpu_threads": 2.0}, "cpu_threads"),
        ({"cpu_threads": True}, "cpu_threads"),
        ({"cpu_threads": "4"}, "cpu_threads"),
        ({"dtype": "float16"}, "unknown key"),
        ({"attention": "sdpa", "max_new_tokens": 10}, "unknown key"),
        ([], "JSON object"),
    ],
)
def test_invalid_files_are_rejected_with_the_reason(tmp_path: Path, obj: object, message: str) -> None:
    path = tmp_path / "deployment.json"
    path.write_text(json.dumps(obj))
    with pytest.raises(ConfigError, match=message):
        load_deployment(path)


def test_malformed_or_missing_file(tmp_path: Path) -> None:
    bad = tmp_path / "deployment.json"
    bad.write_text("{attention: sdpa}")
    with pytest.raises(ConfigError, match="not valid JSON"):
        load_deployment(bad)
    with pytest.raises(ConfigError, match="not found"):
        load_deployment(tmp_path / "missing.json")
    assert load_deployment(None) == Deployment()
