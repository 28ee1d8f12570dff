"""Where a build finds artifacts it was not given: one rule, and no reach into a source tree."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from citator.stance.retrieve.model import ENV_VAR, default_artifacts

REPO = Path(__file__).resolve().parents[3]


def test_the_package_looks_only_at_the_environment_variable(monkeypatch, tmp_path: Path) -> None:  # noqa: ANN001
    monkeypatch.delenv(ENV_VAR, raising=False)
    assert default_artifacts() is None  # even in a checkout that has an artifacts/ folder
    monkeypatch.setenv(ENV_VAR, "")
    assert default_artifacts() is None
    monkeypatch.setenv(ENV_VAR, str(tmp_path))
    assert default_artifacts() == tmp_path


@pytest.mark.parametrize("setting", [None, ""])
def test_build_sh_offers_the_artifacts_beside_it(tmp_path: Path, setting: str | None) -> None:
    # A copy of the scripts with an artifacts/ folder beside them, whose manifest is not a real one: a build that
    # takes it up says so and stops; one told CITATOR_ARTIFACTS="" builds without it.
    code = tmp_path / "code"
    code.mkdir()
    for name in ("build.sh", "scripts"):
        (shutil.copytree if (REPO / name).is_dir() else shutil.copy2)(REPO / name, code / name)
    (code / "artifacts").mkdir()
    (code / "artifacts" / "manifest.json").write_text(json.dumps({"format": "something else"}))
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"doc_id": f"d{i}", "title": "", "text": f"text {i}"}) + "\n"
                              for i in range(12)))
    env = {k: v for k, v in os.environ.items() if k != ENV_VAR}
    env["CITATOR_PYTHON"] = sys.executable
    if setting is not None:
        env[ENV_VAR] = setting
    done = subprocess.run([str(code / "build.sh"), "--corpus", str(corpus), "--index-dir", str(tmp_path / "index"),
                           "--no-serve"], capture_output=True, text=True, env=env, timeout=600)
    if setting is None:
        assert done.returncode == 2 and f"{code / 'artifacts' / 'manifest.json'}: format" in done.stderr, done.stderr
    else:
        assert done.returncode == 0 and "artifacts none" in done.stderr, done.stderr
