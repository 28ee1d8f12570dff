"""Independent CPU-bound jobs in worker processes of one thread each, side by side.

On 2 cores, two single-thread fine-tunings side by side ran 1.16 steps/s against 0.93 for one fine-tuning on both
threads (`benchmarks/experiments/finetune_threads.py`): the per-step work that does not spread over threads
(tokenising, the optimiser, small kernels) overlaps instead of waiting.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from contextlib import ExitStack
from typing import TypeVar

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


def _one_thread() -> None:
    import torch

    torch.set_num_threads(1)


def _run_lane(jobs: Sequence[Callable[[], T]]) -> list[T]:
    return [job() for job in jobs]


def run_in_lanes(jobs: Sequence[Callable[[], T]], costs: Sequence[float], lanes: int = 2) -> list[T]:
    """Each job's result, in `jobs`' order, from `lanes` fresh processes (spawned, one torch thread each), every
    lane running its share of the jobs (balanced by `costs`) one after another. A job's exception is raised here.
    Jobs must be picklable (module-level functions, partials of them)."""
    plan = balanced_lanes(costs, lanes)
    results: list[T | None] = [None] * len(jobs)
    context = multiprocessing.get_context("spawn")
    # One single-worker pool per lane: a shared pool's idle worker could take a second lane's jobs.
    with ExitStack() as stack:
        pools = [stack.enter_context(ProcessPoolExecutor(1, mp_context=context, initializer=_one_thread))
                 for _ in plan]
        futures = [pool.submit(_run_lane, [jobs[i] for i in lane]) for pool, lane in zip(pools, plan)]
        for lane, future in zip(plan, futures):
            for i, result in zip(lane, future.result()):
                results[i] = result
    return results  # type: ignore[return-value]
