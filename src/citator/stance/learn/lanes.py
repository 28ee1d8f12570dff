"""Independent CPU-bound jobs in worker processes of one thread each, side by side.

On 2 cores, two single-thread fine-tunings side by side ran 1.16 steps/s against 0.93 for one fine-tuning on both
threads (the finetune_threads probe, docs/probes.md): the per-step work that does not spread over threads
(tokenising, the optimiser, small kernels) overlaps instead of waiting.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
import time
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection, wait
from typing import Any, TypeVar, cast

T = TypeVar("T")


def balanced_lanes(costs: Sequence[float], lanes: int) -> list[list[int]]:
    """Job indices per lane: the costliest job first, each onto the least loaded lane (ties: the first lane)."""
    load = [0.0] * lanes
    out: list[list[int]] = [[] for _ in range(lanes)]
    for i in sorted(range(len(costs)), key=lambda j: (-costs[j], j)):
        lane = min(range(lanes), key=lambda k: (load[k], k))
        out[lane].append(i)
        load[lane] += costs[i]
    return [lane for lane in out if lane]


EXIT_GRACE_SECONDS = 60.0  # how long lanes that sent their results may take, all together, to exit


def _exit_with_parent() -> None:
    """End this process as soon as its parent is gone, even by SIGKILL (the parent's sentinel pipe closes)."""
    parent = multiprocessing.parent_process()
    if parent is None:
        return

    def watch() -> None:
        parent.join()
        os._exit(1)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


def _lane(conn: Connection, jobs: Sequence[Callable[[], Any]]) -> None:
    _exit_with_parent()
    import torch

    torch.set_num_threads(1)
    try:
        conn.send(("done", [job() for job in jobs]))
    except BaseException as exc:  # noqa: BLE001 - whatever ends a lane is reported to the caller
        conn.send(("failed", f"{type(exc).__name__}: {exc}"))


class LaneError(RuntimeError):
    """A job in a lane raised; the message is that exception's."""


def run_in_lanes(jobs: Sequence[Callable[[], T]], costs: Sequence[float], lanes: int = 2) -> list[T]:
    """Each job's result, in `jobs`' order, from `lanes` fresh processes (spawned, one torch thread each), every
    lane running its share of the jobs (balanced by `costs`) one after another. Jobs must be picklable
    (module-level functions, partials of them).

    The first failure raises LaneError at once, and the other lanes are stopped, as they are when this process
    is interrupted or exits (daemon processes); a lane also ends itself when this process dies by SIGKILL. Lanes
    that delivered their results are left to exit on their own (stopping one in its shutdown leaks what its
    finalisers would have released, such as tqdm's semaphore).
    """
    plan = balanced_lanes(costs, lanes)
    context = multiprocessing.get_context("spawn")
    procs, conns = [], []
    results: list[T | None] = [None] * len(jobs)
    finished = False
    try:
        for lane in plan:
            parent, child = context.Pipe(duplex=False)
            proc = context.Process(target=_lane, args=(child, [jobs[i] for i in lane]), daemon=True)
            proc.start()
            child.close()
            procs.append(proc)
            conns.append(parent)
        waiting = dict(zip(conns, plan))
        while waiting:
            for ready in wait(list(waiting)):
                conn = cast(Connection, ready)  # wait() hands back the very connections it was given
                lane = waiting.pop(conn)
                try:
                    status, value = conn.recv()
                except EOFError:
                    raise LaneError("a lane's process died without a result") from None
                if status != "done":
                    raise LaneError(value)
                for i, result in zip(lane, value):
                    results[i] = result
        finished = True
    finally:
        deadline = time.monotonic() + EXIT_GRACE_SECONDS
        try:
            for proc in procs if finished else ():
                proc.join(max(0.0, deadline - time.monotonic()))
        finally:  # also when interrupted while waiting: the interrupt goes on once every lane is stopped
            for proc in procs:
                if proc.is_alive():
                    proc.terminate()
                proc.join()
    return cast(list[T], results)  # every job's result is in by now
