"""Where shard work runs: worker objects in this process, or Ray actors on a cluster (the optional `ray` extra).

Both run the same worker classes; a pool only says which worker runs which call. Ray restarts an actor whose
process dies (it reloads its shard from the shard's files) and retries the call it was running.
"""

from __future__ import annotations

import os
import re
import socket
import stat
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

from citator.errors import CitatorError, ConfigError

# How often Ray restarts a dead shard actor, and retries the call it died in, before the shard counts as lost.
RESTARTS = 3
# The environment variable that names the Ray cluster searches use when no address is given.
RAY_ENV = "CITATOR_RAY"


class ShardUnavailable(CitatorError):
    """A shard's worker is gone and could not be brought back: an answer without it would be incomplete."""


def _check_open(workers: Sequence[Any]) -> None:
    if not workers:
        raise ShardUnavailable("this sharded index was closed: open it again to search it")


class LocalPool:
    """Workers in this process, called one after another."""

    def __init__(self, workers: Sequence[Any]) -> None:
        self.workers = list(workers)

    def run(self, calls: Sequence[tuple[int, str, tuple[Any, ...]]]) -> list[Any]:
        """Each (worker, method, args) call's result, in order."""
        _check_open(self.workers)
        return [getattr(self.workers[w], method)(*args) for w, method, args in calls]

    def close(self) -> None:
        self.workers = []


class RayPool:
    """One Ray actor per worker; calls to different actors run at once. With `restarts`, Ray restarts an actor
    whose process dies and retries the call it was in (a shard searcher reloads its shard from its files)."""

    def __init__(self, cls: type, init_args: Sequence[tuple[Any, ...]], names: Sequence[str],
                 num_cpus: float = 1, num_gpus: float = 0, restarts: int = RESTARTS) -> None:
        import ray
        from ray.actor import ActorClass, ActorHandle

        self.names = list(names)
        actor: ActorClass[Any] = ray.remote(cls).options(max_restarts=restarts, max_task_retries=restarts, num_cpus=num_cpus,
                                        num_gpus=num_gpus, scheduling_strategy="SPREAD")
        # An actor class's remote() starts an actor and hands back its handle (the stub allows a class too).
        self.workers = [cast(ActorHandle[Any], actor.remote(*args)) for args in init_args]

    def run(self, calls: Sequence[tuple[int, str, tuple[Any, ...]]]) -> list[Any]:
        import ray
        from ray.exceptions import RayActorError, RayError, RayTaskError

        _check_open(self.workers)
        refs = [getattr(self.workers[w], method).remote(*args) for w, method, args in calls]
        out = []
        for (w, _, _), ref in zip(calls, refs):
            try:
                out.append(ray.get(ref))
            except RayTaskError as exc:
                cause = exc.cause if isinstance(exc.cause, BaseException) else exc
                if isinstance(cause, CitatorError):
                    raise cause from None
                raise ShardUnavailable(f"{self.names[w]}: {type(cause).__name__}: {_first_line(cause)}") from None
            except RayActorError as exc:
                raise ShardUnavailable(f"{self.names[w]}: its worker died and could not be restarted ({_cause(exc)}); "
                                       "no partial answer is given") from None
            except RayError as exc:  # an object lost with its node, out of memory, the cluster gone
                raise ShardUnavailable(f"{self.names[w]}: {type(exc).__name__}: {_first_line(exc)}; no partial "
                                       "answer is given") from None
        return out

    def close(self) -> None:
        import ray

        for handle in self.workers:
            ray.kill(handle, no_restart=True)
        self.workers = []


def share_of_cpus(node_cpus: Sequence[float], workers: int) -> float:
    """The largest share of a CPU, 1 or 1/m, with which `workers` actors can all be placed at once on nodes of
    `node_cpus` CPUs (0 where the cluster has no CPUs to count: actors are then placed by Ray alone)."""
    cpus = [int(c) for c in node_cpus if c >= 1]
    if not cpus:
        return 0.0
    per_cpu = 1
    while sum(c * per_cpu for c in cpus) < workers:
        per_cpu += 1
    return 1.0 / per_cpu


def _first_line(exc: BaseException) -> str:
    lines = [line.strip() for line in re.sub(r"\x1b\[[0-9;]*m", "", str(exc)).splitlines() if line.strip()]
    return lines[0] if lines else type(exc).__name__


def _cause(exc: BaseException) -> str:
    """The citator error that stopped an actor's restart where Ray's message carries one, else its first line."""
    found = re.findall(r"citator\.errors\.\w+: ([^\n]+)", re.sub(r"\x1b\[[0-9;]*m", "", str(exc)))
    return found[-1].strip() if found else _first_line(exc)


def connect(address: str) -> None:
    """Join the Ray cluster at `address` ("auto": the one this machine belongs to; "local": a new one in this
    process, on this machine's cores), once per process."""
    try:
        import ray
    except ImportError:
        raise ConfigError("--ray needs Ray: pip install 'citator[ray]'") from None
    if ray.is_initialized():
        return
    if address not in ("local", "auto"):
        _reachable(address)
    if address == "local" and "RAY_TMPDIR" not in os.environ:
        # A cluster of our own keeps its sockets and logs in a folder of this user's (Ray's default, /tmp/ray, is
        # whoever's used it first): another user's earlier cluster must not stop this one.
        os.environ["RAY_TMPDIR"] = _private_dir(Path("/tmp") / f"citator-ray-{os.getuid()}")  # short: socket paths
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # Ray's usage report is a network call: never made
    try:
        ray.init(address=None if address == "local" else address, include_dashboard=False, log_to_driver=False,
                 configure_logging=False)
    except Exception as exc:  # noqa: BLE001 - whatever Ray raises, the user gets one line
        raise ConfigError(f"{_named(address)}: cannot join a Ray cluster ({_first_line(exc)})") from None


def _private_dir(path: Path) -> str:
    """`path`, made 0700 if absent; a fresh folder instead if it is not this user's own directory."""
    try:
        path.mkdir(mode=0o700)
    except FileExistsError:
        st = os.lstat(path)
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or stat.S_IMODE(st.st_mode) & 0o077:
            return tempfile.mkdtemp(prefix="citator-ray-")
    except OSError:
        return tempfile.mkdtemp(prefix="citator-ray-")
    return str(path)


def _reachable(address: str, timeout: float = 5.0) -> None:
    """Refuse at once an address where nothing listens: Ray itself retries a missing cluster for minutes."""
    host, _, port = address.removeprefix("ray://").rpartition(":")
    try:
        socket.create_connection((host or "127.0.0.1", int(port)), timeout=timeout).close()
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{_named(address)}: no Ray cluster answers there ({type(exc).__name__}: {exc}); give "
                          "'local', 'auto' or a cluster's HOST:PORT") from None


def _named(address: str) -> str:
    """How the user gave `address`: the option, or the environment variable when that is where it came from."""
    return f"${RAY_ENV}={address}" if os.environ.get(RAY_ENV) == address else f"--ray {address}"


def ray_address(given: str | None) -> str | None:
    """The Ray cluster to use: the one given, else $CITATOR_RAY, else none (workers in this process)."""
    return given or os.environ.get(RAY_ENV) or None
