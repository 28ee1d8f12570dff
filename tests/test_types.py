"""The type checker passes over src/citator, as pyproject.toml's [tool.mypy] configures it (every function typed,
no `type: ignore` without its error code), and every remaining `type: ignore` says on its line why it is there."""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_mypy_passes_over_the_package() -> None:
    done = subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml")],
                          cwd=ROOT, capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
    assert "Success: no issues found" in done.stdout


def test_each_remaining_ignore_names_its_error_and_says_why() -> None:
    ignores = [(path, number, line) for path in sorted((ROOT / "src" / "citator").rglob("*.py"))
               for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
               if "type: ignore" in line]
    explained = re.compile(r"# type: ignore\[[a-z-]+(, ?[a-z-]+)*\]  # \S")
    unexplained = [f"{path.relative_to(ROOT)}:{number}: {line.strip()}" for path, number, line in ignores
                   if not explained.search(line)]
    assert not unexplained, "\n".join(unexplained)
