"""Which Python a strategy runs under, and the light bootstrap that starts a built-in strategy.

As root, strategies run as `nobody`, who may not be able to run the runner's own interpreter (a pyenv
under /root, say). We probe candidates once, as that user, and use the first that can import the SDK.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from functools import cache
from pathlib import Path

from citator.rerank import no_processes
from citator.rerank.errors import RerankError
from citator.rerank.sandbox import SandboxUser

# The directory that holds the `citator` package; strategies get it as PYTHONPATH.
PACKAGE_PARENT = str(Path(__file__).resolve().parents[2])

# Registers `citator` as a bare package (its __init__, which loads the data and metric layers, is skipped)
# so that a built-in strategy pays only for the interpreter, json and the SDK: see docs/protocol.md.
BOOTSTRAP = (
    "import sys,types\n"
    "m=types.ModuleType('citator');m.__path__=[sys.argv[1]+'/citator'];sys.modules['citator']=m\n"
    "from citator.rerank.strategies.__main__ import main\n"
    "sys.exit(main(sys.argv[2:]))\n"
)


def strategy_env(work_dir: Path, python: str) -> dict[str, str]:
    """The whole environment of a strategy process: nothing inherited, no GPU visible."""
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(work_dir),
        "TMPDIR": str(work_dir),
        "PYTHONPATH": PACKAGE_PARENT,
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONUNBUFFERED": "1",
        "PYTHONHASHSEED": "0",
        "CUDA_VISIBLE_DEVICES": "",
        # One core's worth: a strategy's threads all count against its CPU second.
        "OMP_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "LANG": "C.UTF-8",
        "HF_HUB_OFFLINE": "1",
        "CITATOR_STRATEGY_PYTHON": python,
    }


def builtin_argv(name: str, python: str) -> list[str]:
    """Command line of a built-in strategy (`citator rerank-strategy NAME` without the CLI's imports)."""
    return [python, "-S", "-c", BOOTSTRAP, PACKAGE_PARENT, name]


@cache
def strategy_python(user: SandboxUser | None, preferred: str | None = None) -> str:
    """The first interpreter that `user` can run and that imports citator.rerank.strategy."""
    candidates = [preferred] if preferred else [sys.executable, "/usr/bin/python3", shutil.which("python3")]
    tried = []
    for py in dict.fromkeys(c for c in candidates if c):
        probe = [py, "-S", "-c", BOOTSTRAP.split("from")[0] + "import citator.rerank.strategy\n", PACKAGE_PARENT]
        try:
            done = subprocess.run(
                probe,
                env={"PATH": "/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE": "1"},
                cwd="/",
                user=user.uid if user else None,
                group=user.gid if user else None,
                extra_groups=[] if user else None,
                capture_output=True,
                timeout=30,
                # As a strategy runs: an interpreter that is a wrapper starting another process fails here, not in
                # every query.
                preexec_fn=no_processes.apply if no_processes.available() else None,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            tried.append(f"{py}: {exc}")
            continue
        if done.returncode == 0:
            return py
        tried.append(f"{py}: {done.stderr.decode(errors='replace').strip().splitlines()[-1:]}")
    who = user.name if user else f"uid {os.geteuid()}"
    raise RerankError(
        f"no Python interpreter that {who} can run imports citator from {PACKAGE_PARENT} ({'; '.join(tried)}); "
        "make the interpreter and the code world-readable, or pass --strategy-python"
    )
