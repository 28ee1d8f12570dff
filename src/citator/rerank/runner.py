"""The trusted runner: owns the model, counts tokens, keeps the ledger, and runs one fresh sandboxed
strategy process per query. Strategy misbehaviour never raises: it fails that query with a recorded reason."""

from __future__ import annotations

import os
import shlex
import shutil
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, cast

from citator.models.llm import LLMBackend
from citator.rerank import namespaces, syscall_filter
from citator.rerank.deployment import Deployment
from citator.rerank.errors import RerankError
from citator.rerank.interpreter import builtin_argv, run_as, strategy_env, strategy_python
from citator.rerank.ledger import Refused, TokenLedger
from citator.rerank.limits import Limits
from citator.rerank.outcome import Failure, QueryOutcome
from citator.rerank.pool import PoolQuery
from citator.rerank.protocol import (
    CountRequest,
    ProtocolViolation,
    ResultRequest,
    count_reply,
    encode,
    error_reply,
    generation_reply,
    parse_request,
    query_message,
    refused_reply,
)
from citator.rerank.runtime import StrategyRuntime
from citator.rerank.account import SandboxUser, sandbox_user
from citator.rerank.sandbox import Confining, StrategyProcess, network_isolation
from citator.rerank.strategies import STRATEGIES

STDERR_TAIL = 2000


class Runner:
    """Runs strategies against one loaded backend; `strategy` is a built-in name or a command line."""

    def __init__(
        self,
        backend: LLMBackend,
        strategy: str | Sequence[str],
        limits: Limits | None = None,
        *,
        user: str | None = "nobody",
        python: str | None = None,
        work_root: str | Path | None = None,
        isolate_network: bool = True,
    ) -> None:
        self.backend = backend
        self.limits = limits or Limits()
        self.user: SandboxUser | None = sandbox_user(user) if user else None
        if user is None and os.geteuid() == 0:
            raise RerankError("refusing to run strategies as root; pass user='nobody' (the default)")
        if self.user is None:
            # Said, not refused: without root there is no other user to switch to (summary.json: strategy_user null).
            print("citator rerank: not root, so strategies run as this runner's own user: one could signal the "
                  "runner or edit its files (run as root to run them as an unprivileged user of their own)",
                  file=sys.stderr)
        # Whether strategies run under the syscall filter (no processes, no sockets; the interpreter probe does too).
        self.single_process = syscall_filter.available()
        # The strategy's runtime, reachable by its user wherever the runner is installed (see runtime.py).
        self.runtime = StrategyRuntime(self.user, work_root)
        try:
            # Best effort: namespaces of its own (no network, private /tmp, judgments hidden) where the host allows
            # them; else, as root, at least a network namespace.
            self.confined = isolate_network and namespaces.available(self.user)
            self.isolation = network_isolation(self.user) if isolate_network and not self.confined else []
            self.hidden: tuple[str, ...] = ()
            self.argv: list[str] = []
            # Probed as the strategy will run: inside its namespaces, where a private /tmp may hide an interpreter.
            self.python, self.python_env = strategy_python(self.user, self.runtime, python,
                                                           lambda py: self._confinement([py]))
            self.use(strategy)
        except BaseException:
            self.runtime.close()
            raise
        self.load_seconds: float | None = None
        self.warm_up_seconds: float | None = None

    def __enter__(self) -> Runner:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        """Remove the run's directory (SDK copy, interpreter copy, work dirs); the runner runs no query after it."""
        self.runtime.close()

    @property
    def protections(self) -> dict[str, bool]:
        """Which of the sandbox's protections hold on this host (summary.json records them)."""
        return {
            "separate_user": self.user is not None,
            "network_namespace": self.confined or bool(self.isolation),
            "private_tmp": self.confined,
            "judgments_hidden": self.confined and bool(self.hidden),
            "no_processes": self.single_process,
            "no_sockets": self.single_process,
        }

    def hide(self, *paths: str | Path) -> None:
        """Keep `paths` (the judgments) out of every later strategy's view, where the host allows a mount namespace
        (protections()["judgments_hidden"]); can_read() tells whether they are out of view."""
        self.hidden = namespaces.confined_paths([*self.hidden, *paths])

    def confinement(self) -> namespaces.Confinement | None:
        """What the next strategy process sees, or None where the host allows no namespaces."""
        return self._confinement([self.python, *self.argv])

    def _confinement(self, argv: Sequence[str]) -> namespaces.Confinement | None:
        if not self.confined:
            return None
        keep: list[str] = [str(self.runtime.root)]
        links: list[tuple[str, str]] = []
        # The strategy's own program and files stay visible, and the links that lead to them (program_paths).
        for arg in argv:
            if os.path.isabs(arg) and os.path.exists(arg):
                folders, on_the_way = namespaces.program_paths(arg)
                keep += folders
                links += on_the_way
        return namespaces.Confinement(self.user, namespaces.confined_paths(keep), self.hidden,
                                      tuple(dict.fromkeys(links)))

    def can_read(self, path: str | Path) -> bool:
        """Whether the strategy's user can read `path` (the judgments, say), as a strategy process sees it."""
        done = run_as(self.user, [self.python, "-S", "-c", _READABLE, str(Path(path).absolute())],
                      dict(self.python_env), self.confinement())
        return done.returncode == 0

    def use(self, strategy: str | Sequence[str]) -> None:
        """Switch the strategy (built-in name or command line) for the following queries; the model stays loaded."""
        self.argv = self._argv(strategy)

    def _argv(self, strategy: str | Sequence[str]) -> list[str]:
        if isinstance(strategy, str) and strategy in STRATEGIES:
            return builtin_argv(strategy, self.python)
        argv = shlex.split(strategy) if isinstance(strategy, str) else list(strategy)
        if not argv:
            raise RerankError(f"unknown strategy {strategy!r}: use one of {', '.join(STRATEGIES)} or a command")
        # "python ..." means the interpreter the sandbox user can run (see interpreter.py).
        if argv[0] in ("python", "python3"):
            argv[0] = self.python
        # The strategy runs in its own work dir: paths given relative to ours must still find their files.
        argv = [os.path.abspath(a) if not a.startswith("-") and Path(a).exists() else a for a in argv]
        self._check_command(argv)
        return argv

    def _check_command(self, argv: list[str]) -> None:
        """Before the first query: the strategy's user can run its program and read the files it names."""
        files = [a for a in argv[1:] if os.path.isabs(a) and os.path.exists(a)]
        done = run_as(self.user, [self.python, "-S", "-c", _COMMAND_CHECK, argv[0], *files],
                      {"PATH": strategy_env(Path("/"), self.python, self.runtime.code)["PATH"], **self.python_env},
                      self._confinement([self.python, *argv]))
        problems = [ln for ln in done.stdout.decode(errors="replace").splitlines() if ln]
        if done.returncode != 0 or problems:
            who = self.user.name if self.user else f"uid {os.geteuid()}"
            detail = "; ".join(problems) or done.stderr.decode(errors="replace").strip()[-300:]
            raise RerankError(
                f"strategy command {shlex.join(argv)!r} cannot run as {who}: {detail} (the strategy's program and "
                "files must be readable by that user, with every directory above them searchable, e.g. under /tmp)"
            )

    @classmethod
    def load(
        cls, model_dir: str | Path, deployment: Deployment, strategy: str | Sequence[str], limits: Limits | None = None,
        **kwargs: Any,
    ) -> Runner:
        """Load the model from a local directory and warm it up, timing both against the limits. The sandbox and
        the strategy are set up and checked first: a strategy that cannot run costs no model load."""
        from citator.models.transformers_llm import TransformersLLM

        limits = limits or Limits()
        runner = cls(cast(LLMBackend, None), strategy, limits, **kwargs)
        try:
            _cap_device_memory(limits.device_memory_gib)
            t0 = time.monotonic()
            backend = TransformersLLM(model_dir, attention=deployment.attention, cpu_threads=deployment.cpu_threads)
            load_s = time.monotonic() - t0
            if load_s > limits.model_load_s:
                raise RerankError(f"model load took {load_s:.0f} s, limit {limits.model_load_s:.0f} s")
            t0 = time.monotonic()
            backend.warm_up()
            warm_s = time.monotonic() - t0
            if warm_s > limits.warm_up_s:
                raise RerankError(f"warm-up took {warm_s:.0f} s, limit {limits.warm_up_s:.0f} s")
        except BaseException:
            runner.close()
            raise
        runner.backend = backend
        runner.load_seconds, runner.warm_up_seconds = load_s, warm_s
        return runner

    def run_query(self, query: PoolQuery) -> QueryOutcome:
        """One query in a fresh strategy process; never raises for anything the strategy does."""
        limits = self.limits
        ledger = TokenLedger(limits.weighted_tokens, limits.output_weight)
        t0 = time.monotonic()
        talk = _Exchange()
        ids: tuple[str, ...] = ()
        failure: Failure | None = None
        work = self.runtime.work_dir()
        err_name = self.runtime.stderr_file()
        proc: StrategyProcess | None = None
        try:
            env = strategy_env(work, self.python, self.runtime.code, self.python_env)
            proc = StrategyProcess(self.argv, env, work, err_name, limits,
                                   Confining(self.user, self.isolation, self.single_process, self.confinement()))
            self.runtime.process = proc
            ids = self._converse(proc, query, ledger, talk)
            if not proc.wait(limits.exit_grace_s):
                talk.notes.append(f"strategy did not exit within {limits.exit_grace_s} s of its result; killed")
            proc.check_cpu(force_scan=True)
        except ProtocolViolation as v:
            failure = Failure(v.kind, v.reason)
        except Exception as exc:  # noqa: BLE001 - the runner goes on with the next query whatever happens
            failure = Failure("runner_error", f"{type(exc).__name__}: {exc}")
        finally:
            if proc is not None:
                try:
                    if failure is not None and proc.returncode is None:
                        proc.notify(encode(error_reply(failure.kind, failure.reason)))
                finally:
                    proc.close()  # whatever telling it failed with: no strategy outlives its query
                self.runtime.process = None
                if proc.cpu > limits.cpu_seconds and (failure is None or failure.kind != "cpu"):
                    failure = Failure("cpu", f"strategy used {proc.cpu:.2f} CPU s, limit {limits.cpu_seconds} s")
            shutil.rmtree(work, ignore_errors=True)
            stderr = _tail(err_name)
        return QueryOutcome(
            query_id=query.query_id,
            ids=() if failure else ids,
            failure=failure,
            budget=ledger.budget,
            weighted_tokens=ledger.spent,
            calls=tuple(ledger.entries),
            count_calls=talk.counts,
            candidates_seen=tuple(talk.seen),
            strategy_cpu_seconds=proc.cpu if proc else 0.0,
            wall_seconds=time.monotonic() - t0,
            model_seconds=talk.model_seconds,
            notes=tuple(talk.notes),
            stderr_tail=stderr,
        )

    def _converse(self, proc: StrategyProcess, query: PoolQuery, ledger: TokenLedger, talk: _Exchange
                  ) -> tuple[str, ...]:
        """The query sent, then the strategy's requests answered (counted, refused or generated within the ledger)
        until it sends its result: the ids it ranked. A request that breaks the protocol raises ProtocolViolation."""
        limits = self.limits
        proc.send(encode(query_message(query, limits)))
        pool_ids = query.ids()
        requests = 0
        while True:
            line = proc.read_line()
            requests += 1
            if requests > limits.max_requests:
                raise ProtocolViolation("too_many_requests", f"more than {limits.max_requests} requests")
            req = parse_request(line, pool_ids, limits)
            if isinstance(req, ResultRequest):
                return req.ids
            talk.counted += sum(len(m["content"]) for m in req.messages)
            if talk.counted > limits.max_counted_chars:
                raise ProtocolViolation("too_many_requests", f"more than {limits.max_counted_chars} characters "
                                        "of messages to count in one query")
            tm = time.monotonic()
            try:
                tokens = self.backend.count(req.messages)
            except Exception as exc:  # noqa: BLE001 - a prompt the tokenizer rejects fails the query only
                raise ProtocolViolation("backend_error", f"count failed: {exc!r}") from None
            if isinstance(req, CountRequest):
                talk.counts += 1
                talk.model_seconds += time.monotonic() - tm
                proc.send(encode(count_reply(tokens, ledger.left)))
                continue
            try:
                ledger.reserve(tokens, req.max_new_tokens)
            except Refused as r:
                talk.model_seconds += time.monotonic() - tm
                proc.send(encode(refused_reply(r.needed, r.left)))
                continue
            try:
                gen = self.backend.generate(req.messages, req.max_new_tokens, req.logprob_tokens)
            except Exception as exc:  # noqa: BLE001
                ledger.release()
                raise ProtocolViolation("backend_error", f"generate failed: {exc!r}") from None
            talk.model_seconds += time.monotonic() - tm
            entry = ledger.settle(gen.output_tokens)
            if gen.input_tokens != tokens:
                talk.notes.append(f"backend reported {gen.input_tokens} input tokens, counted {tokens}")
            talk.seen.update(dict.fromkeys(req.candidate_ids))
            proc.send(encode(generation_reply(gen.text, tokens, entry.output_tokens, entry.weighted, ledger.left,
                                              gen.logprobs, gen.multi_token)))


@dataclass
class _Exchange:
    """What one query's conversation with its strategy used: count calls, characters of messages counted, seconds in
    the model, the candidates the strategy put before it, and notes for the outcome."""

    counts: int = 0
    counted: int = 0
    model_seconds: float = 0.0
    seen: dict[str, None] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


# Run as the strategy's user with its program and the files its command line names (that exist for the runner):
# prints one line per thing that user cannot do.
_COMMAND_CHECK = """import os, sys
def which(p):
    if "/" in p:
        return p
    for d in os.environ["PATH"].split(":"):
        if os.path.isfile(os.path.join(d, p)):
            return os.path.join(d, p)
prog = which(sys.argv[1])
if prog is None or not os.path.isfile(prog):
    print("no program " + repr(sys.argv[1]))
elif not os.access(prog, os.X_OK):
    print("cannot run " + prog)
for a in sys.argv[2:]:
    if a.startswith("/") and not os.access(a, os.R_OK):
        print("cannot read " + a)
"""


# Readable means its content can be read: a hidden file reads as nothing, even to a user who may chmod it.
_READABLE = (
    "import sys\ntry:\n    f = open(sys.argv[1], 'rb')\nexcept OSError:\n    sys.exit(1)\n"
    "with f:\n    sys.exit(0 if f.read(1) else 1)\n"
)


def _tail(path: str | Path) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - STDERR_TAIL))
            return f.read().decode("utf-8", "replace")
    except OSError:
        return ""
    finally:
        try:
            os.unlink(path)
        except OSError:
            pass


def _cap_device_memory(gib: float) -> None:
    """On CUDA, make allocations past `gib` fail (out of memory) as they would on the reference hardware."""
    import torch

    if torch.cuda.is_available():
        total = torch.cuda.get_device_properties(0).total_memory
        torch.cuda.set_per_process_memory_fraction(min(1.0, gib * (1 << 30) / total), 0)
