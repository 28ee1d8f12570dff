"""Which Python a strategy runs under, the environment it gets, and the light bootstrap of a built-in strategy.

As root, strategies run as `nobody`, who may not be able to run the runner's own interpreter (a pyenv or a venv
under a private home, say). We probe candidates once per run, as that user and under the syscall filter, and use
the first that imports the SDK from the run's own directory (runtime.py); when none does, the runner's interpreter
is laid out inside that directory and used instead.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from citator.rerank import syscall_filter
from citator.rerank.errors import RerankError
from citator.rerank.namespaces import Confinement
from citator.rerank.runtime import StrategyRuntime
from citator.rerank.account import SandboxUser

# Starts a built-in strategy with nothing but the interpreter, json and the SDK: see docs/protocol.md.
BOOTSTRAP = "import sys\nfrom citator.rerank.strategies.__main__ import main\nsys.exit(main(sys.argv[1:]))\n"
_PROBE = "import citator.rerank.strategy\n"


def strategy_env(work_dir: Path, python: str, code: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The whole environment of a strategy process: nothing inherited, no GPU visible."""
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(work_dir),
        "TMPDIR": str(work_dir),
        "PYTHONPATH": str(code),
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
        **(extra or {}),
    }


def builtin_argv(name: str, python: str) -> list[str]:
    """Command line of a built-in strategy (`citator rerank-strategy NAME` without the CLI's imports)."""
    return [python, "-S", "-c", BOOTSTRAP, name]


def system_candidates() -> list[str]:
    """Interpreters tried before a private copy is made: the runner's own, then the system's."""
    return [c for c in (sys.executable, "/usr/bin/python3", shutil.which("python3")) if c]


def run_as(
    user: SandboxUser | None, argv: list[str], env: dict[str, str], confinement: Confinement | None = None
) -> subprocess.CompletedProcess[bytes]:
    """Run a short check as `user` (or ourselves), in `/`, under the syscall filter, as a strategy would run
    (inside `confinement`, which then switches to `user` itself)."""
    switch = user is not None and confinement is None
    filtered = syscall_filter.available()

    def confine() -> None:
        if confinement is not None:
            confinement.enter()
        # An interpreter that is a wrapper starting another process fails here, not in every query.
        if filtered:
            syscall_filter.apply()

    return subprocess.run(
        argv,
        env=env,
        cwd="/",
        user=user.uid if switch and user else None,
        group=user.gid if switch and user else None,
        extra_groups=[] if switch else None,
        capture_output=True,
        timeout=30,
        preexec_fn=confine,
    )


def strategy_python(
    user: SandboxUser | None, runtime: StrategyRuntime, preferred: str | None = None,
    confinement: Callable[[str], Confinement | None] = lambda py: None,
) -> tuple[str, dict[str, str]]:
    """The first interpreter that `user` can run, inside `confinement(interpreter)` as its strategies will, and that
    imports the SDK from `runtime`, with the environment it needs. Without `preferred`, a private copy of the
    runner's interpreter is the last resort."""
    tried: list[str] = []
    for py in dict.fromkeys([preferred] if preferred else system_candidates()):
        if _probe(user, runtime, py, {}, tried, confinement(py)):
            return py, {}
    if preferred is None:
        py, extra = runtime.private_python()
        if _probe(user, runtime, py, extra, tried, confinement(py)):
            return py, extra
    who = user.name if user else f"uid {os.geteuid()}"
    raise RerankError(
        f"no Python interpreter that {who} can run imports the strategy SDK from {runtime.code} "
        f"({'; '.join(tried)}); the run's directory must be reachable by that user (every directory above it "
        "searchable by others: set TMPDIR to one that is, such as /tmp), or pass --strategy-python with an "
        "interpreter that user can run"
    )


def _probe(user: SandboxUser | None, runtime: StrategyRuntime, py: str, extra: dict[str, str],
           tried: list[str], confinement: Confinement | None) -> bool:
    env = {"PATH": "/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": str(runtime.code), **extra}
    try:
        done = run_as(user, [py, "-S", "-c", _PROBE], env, confinement)
    except (OSError, subprocess.TimeoutExpired) as exc:
        tried.append(f"{py}: {exc}")
        return False
    if done.returncode == 0:
        return True
    tried.append(f"{py}: {done.stderr.decode(errors='replace').strip().splitlines()[-1:]}")
    return False
