"""Brief latency: a cold `citator brief`, and the warm `citator ui` server under a real load generator (locust).

    .venv/bin/python -m pip install -c requirements/constraints.txt -e '.[load]'   # once: locust
    .venv/bin/python benchmarks/brief_load.py --index-dir IDX [--queries QUERIES] [--users 8] [--duration 300]
        [--filter "date>=1950-01-01" ... [--alternate]]

IDX is an index built by `citator build` (with `--artifacts` for the trained one). Propositions are the `dev`
texts of QUERIES (default: CaseFacts' queries in ../shared), never `test`. Each locust user asks the page for a
brief (both stances in one request), reads it for --wait seconds (uniform) and asks the next; --wait 0,0 makes
each user ask back to back. `--filter` (repeatable) asks every brief with those metadata filters (docs/metadata.md),
the page's `f=` parameter and `citator brief --filter`; with `--alternate`, every other brief, so that filtered and
unfiltered briefs are timed side by side under one load. Writes benchmarks/results/brief_load.json (or --out) and
prints a table.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from citator.data import read_queries, write_json_atomic

ROOT = Path(__file__).resolve().parents[1]
CITATOR = [sys.executable, "-m", "citator.cli.main"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, int(round(q / 100 * len(ordered) + 0.5)) - 1))]


def cold_briefs(index_dir: Path, texts: list[str], runs: int, filters: list[str]) -> list[float]:
    """Wall seconds of `citator brief` in a fresh process, one proposition each."""
    out = []
    asked = [arg for f in filters for arg in ("--filter", f)]
    for text in texts[:runs]:
        start = time.perf_counter()
        subprocess.run([*CITATOR, "brief", "--index-dir", str(index_dir), "--format", "json", *asked, text],
                       check=True, capture_output=True)
        out.append(time.perf_counter() - start)
    return out


def stats(timings: list[dict[str, object]], seconds: float) -> dict[str, object]:
    """Latency percentiles of the whole briefs among `timings`, and the errors, over `seconds` of load."""
    ms = [float(str(t["ms"])) for t in timings if t["ok"]]
    errors = sum(not t["ok"] for t in timings)
    return {"requests": len(timings), "errors": errors, "seconds": round(seconds, 1),
            "requests_per_s": round(len(timings) / seconds, 2) if seconds else None,
            "p50_ms": round(percentile(ms, 50), 1) if ms else None, "p95_ms": round(percentile(ms, 95), 1) if ms else None,
            "p99_ms": round(percentile(ms, 99), 1) if ms else None, "max_ms": round(max(ms), 1) if ms else None,
            "mean_ms": round(statistics.fmean(ms), 1) if ms else None}


def load(index_dir: Path, texts: list[str], users: int, duration: int, wait: str, work: Path, workers: int = 1,
         filters: tuple[str, ...] = (), alternate: bool = False) -> dict[str, dict[str, object]]:
    """Locust against a real `citator ui`: the stats of each kind of brief asked ("brief", "brief filtered")."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = (work / "ui.log").open("w")
    server = subprocess.Popen([*CITATOR, "ui", "--index-dir", str(index_dir), "--port", str(port),
                               "--workers", str(workers)], stdout=log,
                              stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 300
        while True:
            try:
                httpx.get(url + "/", timeout=2.0)
                break
            except httpx.TransportError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit(f"citator ui did not start: {(work / 'ui.log').read_text()}") from None
                time.sleep(0.2)
        (work / "propositions.txt").write_text("\n".join(texts) + "\n", encoding="utf-8")
        env = {**os.environ, "BRIEF_PROPOSITIONS": str(work / "propositions.txt"), "BRIEF_WAIT": wait,
               "BRIEF_TIMINGS": str(work / "timings.json"), "BRIEF_FILTERS": "\n".join(filters),
               "BRIEF_ALTERNATE": "1" if alternate else ""}
        started = time.monotonic()
        subprocess.run([sys.executable, "-m", "locust", "-f", str(ROOT / "benchmarks" / "brief_locustfile.py"),
                        "--headless", "--host", url, "--users", str(users), "--spawn-rate", str(users),
                        "--run-time", f"{duration}s", "--stop-timeout", "30", "--only-summary",
                        "--loglevel", "WARNING"], env=env, check=False)
        ran = time.monotonic() - started
        timings = json.loads((work / "timings.json").read_text())
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()
    names = sorted({str(t["name"]) for t in timings}) or ["brief"]
    return {name: stats([t for t in timings if t["name"] == name], ran) for name in names}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--index-dir", type=Path, required=True, help="index built by `citator build`")
    ap.add_argument("--queries", type=Path, default=ROOT.parent / "shared" / "data" / "stance" / "casefacts" /
                    "queries.jsonl", help="queries JSONL; its `dev` texts are the propositions asked")
    ap.add_argument("--users", type=int, default=8, help="concurrent locust users (default 8)")
    ap.add_argument("--duration", type=int, default=300, help="seconds of load (default 300)")
    ap.add_argument("--wait", default="0.5,1.5", help="each user's pause between briefs, LOW,HIGH seconds")
    ap.add_argument("--cold-runs", type=int, default=3, help="cold `citator brief` processes to time (default 3)")
    ap.add_argument("--workers", type=int, default=1, help="`citator ui --workers` (server processes, default 1)")
    ap.add_argument("--filter", action="append", default=[], help='a metadata filter every brief is asked with, '
                    '"KEY OP VALUE" (repeatable, ANDed)')
    ap.add_argument("--alternate", action="store_true", help="with --filter: each user asks with and without the "
                    "filters in turn, so both are timed under the same load in one run")
    ap.add_argument("--label", default="", help="what the index is (e.g. 'trained CaseFacts'), for the report")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "brief_load.json")
    args = ap.parse_args()
    if args.alternate and not args.filter:
        ap.error("--alternate alternates the --filter filters with none: give at least one --filter")
    texts = sorted({" ".join(q.text.split()) for q in read_queries(args.queries) if q.split == "dev"})
    if not texts:
        raise SystemExit(f"{args.queries}: no `dev` queries")
    random.Random(0).shuffle(texts)
    load_at_start = [round(x, 2) for x in os.getloadavg()]
    cold = cold_briefs(args.index_dir, texts, args.cold_runs, args.filter)
    with tempfile.TemporaryDirectory(prefix="brief-load-") as work:
        kinds = load(args.index_dir, texts, args.users, args.duration, args.wait, Path(work), args.workers,
                     tuple(args.filter), args.alternate and bool(args.filter))
    warm = kinds.get("brief") or kinds["brief filtered"]
    manifest = json.loads((args.index_dir / "manifest.json").read_text())
    report = {
        "command": "benchmarks/brief_load.py " + " ".join(sys.argv[1:]), "index": args.label or str(args.index_dir),
        "trained": manifest.get("artifacts") is not None, "n_docs": manifest["n_docs"],
        "n_passages": manifest["n_passages"], "propositions": len(texts), "users": args.users, "wait_s": args.wait,
        "ui_workers": args.workers, "filters": args.filter,
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}",
        "load_average_at_start": load_at_start, "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
        "cold_brief_s": [round(s, 2) for s in cold], "warm": warm, "warm_filtered": kinds.get("brief filtered"),
        "targets": {"p50_ms": 150, "p95_ms": 400, "cold_brief_s": 5, "errors": 0},
    }
    print(f"{'index':<36}{args.label or args.index_dir}")
    print(f"{'filters':<36}{' AND '.join(args.filter) or 'none'}")
    print(f"{'users x wait (s), ui workers':<36}{args.users} x {args.wait}, {warm['seconds']} s of load, "
          f"{args.workers} worker(s)")
    for name, kind in kinds.items():
        print(f"{name + ': requests (errors)':<36}{kind['requests']} ({kind['errors']}), {kind['requests_per_s']} /s")
        print(f"{name + ': p50 / p95 / p99 ms':<36}{kind['p50_ms']} / {kind['p95_ms']} / {kind['p99_ms']}")
    print(f"{'cold citator brief s':<36}{', '.join(f'{s:.2f}' for s in cold)}")
    print(f"{'load average start / end':<36}{report['load_average_at_start']} / {report['load_average_at_end']}")
    write_json_atomic(args.out, report)


if __name__ == "__main__":
    main()
