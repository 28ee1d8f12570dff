"""Workload 1 end to end: build an index (and start its server), then answer a query file within the contract."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import replace
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from citator.data import read_queries, validate_results, write_results
from citator.data.filters import parse_filters
from citator.data.atomic import check_output, open_append, owning
from citator.data.queries import cut_for_search
from citator.data.records import ResultLine
from citator.errors import CitatorError, ConfigError, IndexDirError, ResultsError
from citator.stance.retrieve.index_files import load_doc_ids, verify_digests
from citator.stance.retrieve.layout import (
    DOC_IDS, MANIFEST, PID_NAME, READY_NAME, SERVER_LOG, Manifest, open_folder,
)
from citator.stance.retrieve.service_protocol import search_via_service, service_dir

if TYPE_CHECKING:  # run.sh's client path imports no numpy, and builds no index
    from citator.stance.retrieve.index_dir import BuildOptions
    from citator.stance.shards.build import Sharding


def _serves(pid: int, index_dir: Path) -> bool:
    """Is process `pid` a `citator serve` of `index_dir`? Its --index-dir may be relative (a server started by hand):
    it is resolved against the process's own working directory."""
    args = [a.decode(errors="surrogateescape") for a in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")]
    if "serve" not in args:
        return False
    given = [v for a, v in zip(args, args[1:]) if a == "--index-dir"]
    given += [a.split("=", 1)[1] for a in args if a.startswith("--index-dir=")]
    cwd = os.readlink(f"/proc/{pid}/cwd")
    target = index_dir.resolve()
    return any((Path(cwd) / g).resolve() == target for g in given)


def stop_server(index_dir: Path, wait: float = 10.0) -> bool:
    """Stop a server recorded in the index dir, if one is alive; True if one was stopped."""
    pid_file = service_dir(index_dir) / PID_NAME
    try:
        pid = int(pid_file.read_text().strip())
        # A pid file can outlive its process (a reboot): signal only our own server of this index.
        if not _serves(pid, index_dir):
            return False
        os.kill(pid, signal.SIGTERM)
    except (OSError, ValueError):
        return False
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except OSError:
            return True
        time.sleep(0.05)
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGKILL)
    return True


def start_server(index_dir: Path, timeout: float = 300.0, ray: str | None = None) -> int:
    """Start `citator serve` detached (its own session, logs in the index dir); wait until it is ready. `ray`: the
    Ray cluster a sharded index's server runs its shards on ("local" is the builder's own, gone with it: the
    server then starts one of its own)."""
    directory = service_dir(index_dir)
    directory.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(FileNotFoundError):
        (directory / READY_NAME).unlink()
    with owning(directory):
        log = open_append(directory / SERVER_LOG)
    proc = subprocess.Popen(
        [sys.executable, "-m", "citator.cli.main", "serve", "--index-dir", str(index_dir.absolute()),
         *(["--ray", ray] if ray else [])],
        stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True, close_fds=True,
    )
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise CitatorError(f"search server exited with code {proc.returncode}; see {directory / SERVER_LOG}")
        ready = directory / READY_NAME
        if ready.is_file() and json.loads(ready.read_text()).get("pid") == proc.pid:
            return proc.pid
        time.sleep(0.1)
    proc.kill()
    raise CitatorError(f"search server not ready after {timeout:.0f} s; see {directory / SERVER_LOG}")


def build(corpus: Path, index_dir: Path, options: BuildOptions | None = None, serve: bool = True,
          sharding: Sharding | None = None) -> Manifest:
    """Build the index atomically (`sharding`: in shards, citator.stance.shards.build), then replace the old server
    (if any) with a fresh one for it.

    Nothing that works is taken down before the new index is complete: a corpus or configuration that is refused,
    or a build that fails, leaves the old index and its running server answering. Between the manifest switch and
    the new server's start, run.sh sees the old server's fingerprint no longer match and searches in-process.
    A server that cannot start does not fail the build: run.sh then searches in-process. Without base passages in
    `options` (None: the defaults), those the model's training kept in its work folder are used where they fit.
    """
    # Imported here: run.sh's client path (search) stays free of numpy and the index's builders.
    from citator.stance.retrieve.index_dir import BuildOptions, build_index

    options = options if options is not None else BuildOptions()
    if sharding is not None:
        from citator.stance.shards.build import build_sharded

        manifest = build_sharded(corpus, index_dir, sharding, options)
    else:
        if options.artifacts is not None and options.passages is None:
            from citator.stance.retrieve.passage_store import model_passages

            found = model_passages(options.artifacts, corpus, options.encoder_path, options.config)
            options = replace(options, passages=found)
        manifest = build_index(corpus, index_dir, options)
    stop_server(index_dir)
    if serve:
        try:
            start_server(index_dir, ray=None if sharding is None else sharding.ray)
        except CitatorError as exc:
            print(f"warning: {exc}; run.sh will search in-process", file=sys.stderr)
    return manifest


# run.sh has 20 s in all; the server gets what is left of this much before run.sh gives up on it, which leaves a
# cold search (CaseFacts with artifacts: 4.5-8.2 s on 2 cores) the rest. A server that has not acknowledged the
# request within service_protocol.ACCEPT_SECONDS is given up on at once.
SERVER_WAIT_SECONDS = 11.0


def search(index_dir: Path, queries_path: Path, k: int = 10, use_server: bool = True, filters: Sequence[str] = ()
           ) -> tuple[list[ResultLine], str]:
    """Results for every query, from the live server when it answers correctly, else in-process; with `filters`
    ("KEY OP VALUE", ANDed), of the documents that meet them: k where at least k do (docs/metadata.md)."""
    parsed = parse_filters(filters)  # a malformed filter is refused before any work
    started = time.monotonic()
    queries = cut_for_search(read_queries(queries_path, lenient=True))
    folder = open_folder(index_dir)  # the one read of the manifest: an in-process search opens from it
    manifest = folder.manifest
    if k > manifest.n_docs:
        raise ConfigError(f"--top-k {k} is more than the {manifest.n_docs} documents {index_dir} holds: each query "
                          f"needs {k} distinct documents")
    wait = max(2.0, SERVER_WAIT_SECONDS - (time.monotonic() - started))
    results, how = (search_via_service(index_dir, manifest.fingerprint, queries, k, wait, [str(f) for f in parsed])
                    if use_server else (None, "--no-server"))
    # The ids every answer is checked against: the file as built (its sha256), read with every check.
    verify_digests(folder.data, {DOC_IDS: manifest.files[DOC_IDS]})
    doc_ids = set(load_doc_ids(folder.path(DOC_IDS), manifest.n_docs))
    problems = validate_results(results, doc_ids, queries, k, exact=not parsed) if results is not None else []
    if problems:
        # A server answer that breaks the output rules is no answer: the batch is searched here instead.
        results, how = None, "the server's answer broke the output rules"
    if results is None:
        from citator.stance.shards.search import open_searcher

        results = open_searcher(folder, cold=True).search(queries, k, filters=parsed)
        how = f"in-process, since {how}" if use_server else "in-process"
        problems = validate_results(results, doc_ids, queries, k, exact=not parsed)
    if problems:
        raise ResultsError("results", None, "refusing to write invalid output: " + "; ".join(problems[:5]))
    return results, how


def search_to_file(index_dir: Path, queries_path: Path, output: Path, k: int = 10, use_server: bool = True,
                   filters: Sequence[str] = ()) -> str:
    """Search, validate, then write the output atomically; nothing is written on any failure."""
    if k < 1:
        raise ConfigError(f"--top-k must be at least 1, got {k}")
    if not index_dir.is_dir():
        raise IndexDirError(f"{index_dir}: index directory not found; run build.sh first")
    # Checked before the search (no work is wasted on an output that will be refused) and again when written.
    inputs = [queries_path, index_dir / MANIFEST]
    check_output(output, inputs)
    results, how = search(index_dir, queries_path, k, use_server, filters)
    write_results(output, results, inputs)
    return how
