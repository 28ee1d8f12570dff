"""`make demo`'s install is everything the README's commands need, and pip shows its progress."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _recipe(makefile: str, target: str) -> str:
    match = re.search(rf"^{re.escape(target)}:.*\n((?:\t.*\n)+)", makefile, re.M)
    assert match, target
    return match.group(1)


def test_make_demo_installs_what_every_readme_command_imports() -> None:
    makefile = (REPO / "Makefile").read_text()
    extras = set(re.search(r'-e "\.\[([^\]]*)\]"', _recipe(makefile, "$(VENV)/.installed")).group(1).split(","))
    declared = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    installed = {req.split(">")[0].split("=")[0].split("[")[0] for extra in extras for req in declared[extra]}
    # The README's workloads: the search service and providers (httpx, FastAPI/uvicorn), the review app (Jinja2,
    # python-multipart) and the statutes report's plots (matplotlib).
    assert {"fastapi", "uvicorn", "httpx", "jinja2", "python-multipart", "matplotlib"} <= installed


def test_pip_shows_its_progress() -> None:
    makefile = (REPO / "Makefile").read_text()
    line = next(ln for ln in makefile.splitlines() if ln.startswith("PIP_INSTALL"))
    assert not re.search(r"\s-q+\b|--quiet", line), line


def test_make_demo_says_how_long_its_long_steps_take_before_they_start() -> None:
    makefile = (REPO / "Makefile").read_text()
    for target in ("$(VENV)/.installed", "$(VENV)/.installed-test"):
        first, second = _recipe(makefile, target).splitlines()[:2]
        assert first.startswith("\t@echo ") and "$(INSTALL_TAKES)" in first and "$(PIP_INSTALL)" in second
    assert re.search(r"^INSTALL_TAKES := about \d", makefile, re.M)
    # The index build announces itself (with citator.demo.BUILD_TAKES) before it starts: tests/test_wheel_install.py.
