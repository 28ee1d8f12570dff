"""The README's Python example runs as printed, in a fresh interpreter, using public names only."""

from __future__ import annotations

import ast
import json
import math
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from fixtures.suites import write_suite

import citator

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
STATUTES = Path(__file__).parent / "statutes" / "fixtures"


def _example() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## From Python\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(blocks) == 1, "the From Python section holds one runnable example"
    return blocks[0]


def test_the_example_uses_only_public_names() -> None:
    tree = ast.parse(_example())
    imports = [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))]
    assert all(isinstance(n, ast.Import) and [a.name for a in n.names] == ["citator"] for n in imports)
    used = {n.attr for n in ast.walk(tree)
            if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "citator"}
    assert used and used <= set(citator.__all__), used - set(citator.__all__)
    for name in citator.__all__:
        assert getattr(citator, name) is not None


def test_the_example_runs_as_printed(tmp_path: Path, tiny_qwen3_causal_dir: Path) -> None:
    # The files the example names, where it names them: a Qwen3 directory, a statute corpus and a dev suite.
    (tmp_path / "models").mkdir()
    os.symlink(tiny_qwen3_causal_dir, tmp_path / "models" / "Qwen3-0.6B")
    shutil.copy(STATUTES / "nrs_sections.jsonl", tmp_path / "sections.jsonl")
    write_suite(tmp_path / "suite-dev.jsonl", STATUTES / "nrs_suite.jsonl", ["nrs-dev-01", "nrs-dev-10", "nrs-exact-02"])
    done = subprocess.run([sys.executable, "-c", _example()], cwd=tmp_path, capture_output=True, text=True,
                          timeout=600, env={**os.environ, "PYTHONPATH": ""})
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    metrics = ast.literal_eval(lines[0])
    # q1: d1 (grade 1) then d2 (grade 2); q2: d3 at rank 2.
    q1 = (1 + 2 / math.log2(3)) / (2 + 1 / math.log2(3))
    assert metrics == pytest.approx({"ndcg@10": (q1 + 1 / math.log2(3)) / 2, "rr": 0.75})
    assert len(lines) == 7 and [int(line.split()[0]) for line in lines[1:4]] == [1, 2, 3]
    supported, trained = lines[4].rsplit(" ", 1)
    assert len(ast.literal_eval(supported)) == 3 and trained == "False"
    ids, spent = lines[5].rsplit(" ", 1)
    assert sorted(ast.literal_eval(ids)) == ["nrs-1", "nrs-2"] and 0 < int(spent) <= 2048
    assert lines[6] == "0 ['dev']"
    assert json.loads((tmp_path / "statute-run" / "metrics.json").read_text())["provider_requests"] == 0
    assert (tmp_path / "sample-index").is_dir()
