"""The README runs as written: every fenced shell and Python block, in order, in a fresh copy of the repository
with nothing but what the repository and `make demo` provide, and each output block is what its commands print.

The copy holds the repository's files (git's tracked and unignored ones, as a clone would) and no data or model
from anywhere else; the one thing it is lent is this environment's installed dependencies, through a .venv of its
own that imports citator from the copy, so that the README's `make demo` finds the install done. The blocks run
in one shell, as a user pastes them into a terminal: variables carry over, Python blocks run with `.venv/bin/python`.
The first block's `make test` is the command running this test, and is not run again.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

import pytest

import citator

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
RUNNABLE = ("sh", "python")
_FENCE = re.compile(r"^```(\w*)\n(.*?)^```\n", re.S | re.M)
_MARK = "@@@ citator README block {} @@@"
# What the README's output shows is a run as root; an ordinary user's run says this one thing more (and the README
# says so in its text): rerank's strategies then run as the user's own account, not as `nobody`.
NOT_ROOT = "citator rerank: not root, so strategies run as this runner's own user"


@dataclass(frozen=True)
class Block:
    lang: str
    text: str
    line: int  # where it starts in the README


def _blocks() -> list[Block]:
    readme = README.read_text(encoding="utf-8")
    return [Block(m[1], m[2], readme.count("\n", 0, m.start()) + 1) for m in _FENCE.finditer(readme)]


def _python_blocks() -> list[str]:
    return [b.text for b in _blocks() if b.lang == "python"]


def test_every_block_is_a_command_or_what_one_printed() -> None:
    blocks = _blocks()
    assert blocks and {b.lang for b in blocks} <= {*RUNNABLE, "text"}, {b.lang for b in blocks}
    assert blocks[0].lang == "sh" and [line.split("#")[0].strip() for line in blocks[0].text.splitlines()] == [
        "make demo", "make test"]
    for before, block in zip(blocks, blocks[1:]):
        if block.lang == "text":
            assert before.lang in RUNNABLE, f"README line {block.line}: output follows no command"
    # What runs needs only the repository and make demo: the project's shared data is for second commands in prose.
    for block in blocks:
        if block.lang in RUNNABLE:
            assert "../shared" not in block.text and "/work/" not in block.text, f"README line {block.line}"


def test_the_python_example_uses_only_public_names() -> None:
    for example in _python_blocks():
        tree = ast.parse(example)
        imports = [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))]
        assert all(isinstance(n, ast.Import) and [a.name for a in n.names] == ["citator"] for n in imports)
        used = {n.attr for n in ast.walk(tree)
                if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "citator"}
        assert used and used <= set(citator.__all__), used - set(citator.__all__)


def _script(blocks: list[Block]) -> str:
    """One bash script of the runnable blocks, each announced by a marker line in the output."""
    parts = ["set -euo pipefail"]
    for i, block in enumerate(blocks):
        if block.lang not in RUNNABLE:
            continue
        parts.append(f"echo '{_MARK.format(i)}'")
        if block.lang == "python":
            assert "CITATOR_README_PY" not in block.text
            parts.append(f".venv/bin/python - <<'CITATOR_README_PY'\n{block.text}CITATOR_README_PY")
        else:
            parts.append("\n".join(line for line in block.text.splitlines()
                                   if line.split("#")[0].strip() != "make test"))
    return "\n".join(parts) + "\n"


def _normal(text: str) -> list[str]:
    """Lines as compared: numbers (timings, scores, counts) and runs of spaces do not count."""
    lines = [re.sub(r"\s+", " ", re.sub(r"\d+", "0", line)).strip() for line in text.rstrip("\n").splitlines()
             if not (os.geteuid() != 0 and line.startswith(NOT_ROOT))]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def _matches(expected: list[str], got: list[str]) -> bool:
    """`expected` line by line, where a line `...` stands for any number of lines."""
    if not expected:
        return not got
    if expected[0] == "...":
        return any(_matches(expected[1:], got[i:]) for i in range(len(got) + 1))
    return bool(got) and expected[0] == got[0] and _matches(expected[1:], got[1:])


def _fresh_copy(target: Path) -> None:
    """The repository's files as a clone holds them, and a .venv of the copy's own that make finds installed."""
    listed = subprocess.run(["git", "-C", str(REPO), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = REPO / name
        if source.is_file() or source.is_symlink():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name, follow_symlinks=False)
    # The venv borrows this environment's installed dependencies by a .pth line (no install, and nothing written into
    # the shared .venv) and imports citator from the copy, with the `citator` command pip would have written.
    venv = target / ".venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=300)
    site = Path(subprocess.run([str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()"
                                "['purelib'])"], capture_output=True, text=True, check=True).stdout.strip())
    (site / "citator-readme-test.pth").write_text(f"{target / 'src'}\n{sysconfig.get_paths()['purelib']}\n")
    command = venv / "bin" / "citator"
    command.write_text(f"#!{venv / 'bin' / 'python'}\nimport sys\nfrom citator.cli.main import entry\n"
                       "sys.exit(entry())\n")
    command.chmod(0o755)
    (venv / ".installed").touch()


def _stop_servers(root: Path) -> None:
    for manifest in root.glob("*/manifest.json"):
        subprocess.run([str(root / ".venv" / "bin" / "citator"), "stop", "--index-dir", str(manifest.parent)],
                       capture_output=True, timeout=120)


@pytest.mark.slow
def test_every_block_runs_as_written_in_a_fresh_copy(tmp_path: Path) -> None:
    if shutil.which("git") is None:
        pytest.fail("the copy is made of what git lists: run the test in a git checkout")
    clone = tmp_path / "citator"
    clone.mkdir()
    _fresh_copy(clone)
    stale = subprocess.run(["make", "-q", ".venv/.installed"], cwd=clone, capture_output=True)
    assert stale.returncode == 0, "make would install again in the copy: its .venv is not what make expects"
    blocks = _blocks()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CITATOR_", "PYTHON", "PYTEST", "VIRTUAL_ENV"))}
    env["PYTHONUNBUFFERED"] = "1"  # stdout and stderr interleave as on a terminal
    try:
        done = subprocess.run(["bash", "-c", _script(blocks)], cwd=clone, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, timeout=3600)
    finally:
        _stop_servers(clone)
    printed = {int(m[1]): m[2] for m in re.finditer(r"^@@@ citator README block (\d+) @@@\n(.*?)(?=^@@@ |\Z)",
                                                    done.stdout, re.S | re.M)}
    last = max(printed, default=None)
    assert done.returncode == 0, (f"README block at line {blocks[last].line if last is not None else '?'} failed "
                                  f"(exit {done.returncode}):\n{done.stdout[-4000:]}")
    assert sorted(printed) == [i for i, b in enumerate(blocks) if b.lang in RUNNABLE]
    for i, block in enumerate(blocks[:-1]):
        shown = blocks[i + 1]
        if block.lang in RUNNABLE and shown.lang == "text":
            assert _matches(_normal(shown.text), _normal(printed[i])), (
                f"README line {shown.line}: the block shows\n{shown.text}\nbut the commands printed\n{printed[i]}")


def test_output_is_compared_line_by_line_but_for_numbers_and_spacing() -> None:
    shown = _normal("built idx: 300 documents, 44.4 s\n[    0.2s] 3 shards\n...\ndone\n")
    assert _matches(shown, _normal("built idx: 300 documents, 164.7 s\n[  162.2s] 3 shards\ndone\n"))
    assert _matches(shown, _normal("built idx: 3 documents, 1.5 s\n[ 1.0s] 3 shards\nwrote a\nwrote b\ndone\n"))
    assert not _matches(shown, _normal("built idx3: 300 documents, 44.4 s\n[    0.2s] 3 shards\ndone\n"))
    assert not _matches(shown, _normal("built idx: 300 documents, 44.4 s\n[    0.2s] 3 shards\ndone\nmore\n"))
    assert not _matches(_normal("a\nb\n"), _normal("a\n\nb\n"))  # a blank line counts
