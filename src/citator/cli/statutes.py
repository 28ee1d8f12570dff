"""`citator bench statutes` (the statute relevance benchmark) and `citator provider-serve`."""

from __future__ import annotations

import argparse
import weakref
import sys
import tempfile
from typing import TYPE_CHECKING, Any
from pathlib import Path

from citator.cli.arguments import COUNT, PORT, SECONDS, add_server_arguments, whole
from citator.cli.demo_model import note_machinery_only
from citator.data.escape import json_line
from citator.errors import ConfigError, one_line

if TYPE_CHECKING:
    from citator.statutes.providers.base import Provider


# Each `citator` parser's `bench` group, by the parser's commands: created once, other workloads may add theirs to it.
_BENCH: weakref.WeakKeyDictionary[argparse._SubParsersAction, argparse._SubParsersAction] = weakref.WeakKeyDictionary()


def _bench_group(sub: argparse._SubParsersAction) -> argparse._SubParsersAction:
    """The `bench` command group of these commands, created once; other workloads may add their own to it."""
    if sub not in _BENCH:
        bench = sub.add_parser("bench", help="run a workload benchmark (see `citator bench -h`)")
        _BENCH[sub] = bench.add_subparsers(dest="bench_command", metavar="WORKLOAD", required=True)
    return _BENCH[sub]


def register(sub: argparse._SubParsersAction) -> None:
    p = _bench_group(sub).add_parser("statutes", help="statute relevance benchmark: keyword pool vs reranked order")
    p.add_argument("--corpus", required=True, type=Path, help="sections JSONL (doc_id, title, text, ...)")
    p.add_argument("--suite", required=True, type=Path, help="suite JSONL (query_id, text, split, family, kind, targets)")
    p.add_argument("--provider", required=True, choices=("none", "local", "openai", "embedding"),
                   help="grader: none (keyword order only), local (causal LM here), openai (HTTP), embedding")
    p.add_argument("--out", required=True, type=Path, help="run directory (re-running resumes from its receipts)")
    p.add_argument("--model", type=Path, help="local: model directory; embedding: encoder directory (default MiniLM)")
    p.add_argument("--base-url", help="openai: base URL, e.g. http://127.0.0.1:8000/v1")
    p.add_argument("--model-name", help="openai: model name")
    p.add_argument("--model-version", help="openai: pinned model version sent and checked (default: the name)")
    p.add_argument("--api-key-env", default="OPENAI_API_KEY", help="openai: environment variable holding the key")
    p.add_argument("--timeout", type=SECONDS, default=120.0, help="openai: seconds per request (no retries)")
    p.add_argument("--device", help="local: torch device (default cuda if available, else cpu)")
    labels = p.add_mutually_exclusive_group()
    labels.add_argument("--labels", type=Path, help="human labels JSONL (review export) for calibration")
    labels.add_argument("--label-store", type=Path, help="the review app's label store (SQLite) for calibration")
    p.add_argument("--resend-attempted", action="store_true",
                   help="re-send requests that were attempted but have no recorded outcome")
    p.add_argument("--max-requests", type=COUNT, default=272, help="attempted-request cap (at most 272)")
    p.add_argument("--max-input-tokens", type=COUNT, default=2_000_000, help="input-token cap (at most 2,000,000)")
    p.add_argument("--retrieval", choices=("keyword", "hybrid"), default="keyword",
                   help="pool retrieval arm: keyword (BM25, the primary baseline) or hybrid (BM25 + MiniLM, fused)")
    p.add_argument("--index-dir", type=Path,
                   help="hybrid: folder caching the corpus's MiniLM vectors (default RUN_DIR/hybrid-index)")
    p.set_defaults(func=run_bench_statutes)

    s = sub.add_parser(
        "provider-serve", help="serve a local model through an OpenAI-compatible chat API",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Serve a local causal LM at /v1/chat/completions and /v1/models (OpenAI's API and error envelope).",
        epilog=_SERVE_EPILOG)
    s.add_argument("--model", required=True, type=Path, help="local causal LM directory (loaded offline)")
    s.add_argument("--port", required=True, type=PORT, help="TCP port to listen on")
    add_server_arguments(s, "address to bind (default: %(default)s, this machine only)")
    s.add_argument("--served-name", help="model name clients must send (default: DIRNAME:model_type)")
    s.add_argument("--api-key-env", help="require this environment variable's value as the Bearer key")
    s.add_argument("--device", help="torch device (default: cuda if available, else cpu)")
    s.add_argument("--max-tokens-cap", type=COUNT, default=512,
                   help="largest max_tokens a request may ask for (default: %(default)s; absent means 64)")
    s.add_argument("--max-context-tokens", type=whole(2),
                   help="refuse a request whose prompt + max_tokens exceeds this many tokens "
                        "(default: the model's max_position_embeddings)")
    s.set_defaults(func=run_provider_serve)


_SERVE_EPILOG = """\
Request fields: served greedily, one choice, text only.
  honoured: messages (system, developer, user, assistant; string or text-part content), model, max_tokens /
    max_completion_tokens (default 64), stop (up to 4), logprobs, top_logprobs (0..20), seed (greedy decoding is
    deterministic), top_p (any value: greedy picks the top token), temperature 0 (absent means 0), n 1,
    response_format {"type": "text"}, user, metadata, store false.
  refused (400, code unsupported_value): temperature > 0, penalties, logit_bias, tools/functions, JSON mode,
    streaming, audio, prediction, reasoning_effort, moderation, prompt caching; unknown fields (code
    unknown_parameter); a prompt that does not fit the context window with its max_tokens (code
    context_length_exceeded), before any generation. Errors are OpenAI's {"error": {message, type, param, code}}.
"""


def _provider(args: argparse.Namespace) -> Provider | None:
    if args.provider == "none":
        return None
    if args.provider == "embedding":
        from citator.statutes.providers.embedding import EmbeddingProvider

        return EmbeddingProvider(args.model)
    if args.provider == "local":
        from citator.statutes.providers.local import LocalProvider

        if args.model is None:
            raise ConfigError("--provider local needs --model DIR")
        note_machinery_only(args.model)
        return LocalProvider(args.model, device=args.device)
    from citator.statutes.providers.openai_http import OpenAIHTTPProvider

    if not (args.base_url and args.model_name):
        raise ConfigError("--provider openai needs --base-url and --model-name")
    return OpenAIHTTPProvider(args.base_url, args.model_name, args.model_version, api_key_env=args.api_key_env,
                              timeout_s=args.timeout)


def _export_store(store_path: Path, target: Path) -> Path:
    """Export every label of a review store, stale ones included so the run counts them (a temp file: the
    export holds reviewer notes, which stay out of run directories)."""
    from citator.statutes.review.exchange import export_labels
    from citator.statutes.review.store import LabelStore

    if not store_path.is_file():
        raise ConfigError(f"--label-store {store_path}: no such file")
    with LabelStore(store_path) as store:
        export_labels(store, target, include_stale=True)
    return target


def run_bench_statutes(args: argparse.Namespace) -> int:
    from citator.statutes.receipts import MAX_INPUT_TOKENS, MAX_REQUESTS, Budget
    from citator.statutes.run import RunConfig, run_statutes
    from citator.data.atomic import output_dir

    output_dir(args.out, make=False)
    if args.index_dir is not None and args.retrieval != "hybrid":
        raise ConfigError("--index-dir is the hybrid arm's vector cache: give it with --retrieval hybrid")
    if not 0 < args.max_requests <= MAX_REQUESTS or not 0 < args.max_input_tokens <= MAX_INPUT_TOKENS:
        raise ConfigError(f"budgets may only be lowered: at most {MAX_REQUESTS} requests, {MAX_INPUT_TOKENS} tokens")
    # Before any model loads (a local provider takes seconds): the two input files are there to read.
    from citator.data.jsonl import require_file
    from citator.errors import StatuteError, SuiteError

    require_file(args.corpus, StatuteError)
    require_file(args.suite, SuiteError)
    before = _files(args.out)
    try:
        with tempfile.TemporaryDirectory(prefix="citator-labels-") as tmp:
            labels = args.labels
            if args.label_store is not None:
                labels = _export_store(args.label_store, Path(tmp) / "labels.jsonl")
            config = RunConfig(args.corpus, args.suite, args.out, labels, args.resend_attempted,
                               Budget(args.max_requests, args.max_input_tokens), args.retrieval, args.index_dir)
            metrics = run_statutes(config, _provider(args))
        _print_summary(metrics)
    finally:
        _print_written(args.out, before)
    requests = (metrics.get("grading") or {}).get("requests") or {}
    if requests.get("ranking", 0) > 0 and requests.get("ranking_completed", 0) == 0:
        print(f"every ranking request failed ({requests['ranking']} requests; see {args.out / 'failures.jsonl'}): "
              "the reranked order is the keyword order", file=sys.stderr)
        return 1
    return 0


def _print_summary(metrics: dict[str, Any]) -> None:
    for split, kinds in metrics["by_split"].items():
        for kind, row in kinds.items():
            rer = (metrics["reranked_by_split"] or {}).get(split, {}).get(kind)
            line = (f"{one_line(split):<8} {one_line(kind):<15} n={row['queries']:<3} keyword hit@5={row['hit@5']:.3f} "
                    f"rr={row['rr']:.3f}")
            if rer:
                line += f"  reranked hit@5={rer['hit@5']:.3f} rr={rer['rr']:.3f}"
            print(line + f"  coverage={row['coverage']:.3f}")
    print(f"provider requests: {metrics['provider_requests']}; failures: {json_line(metrics['failures'])}")


def _files(root: Path) -> dict[Path, tuple[int, int, int]]:
    """Every regular file under `root` with what changes when it is (atomically) rewritten."""
    if not root.is_dir():
        return {}
    found = {}
    for path in root.rglob("*"):
        try:
            st = path.lstat()
        except OSError:
            continue
        if path.is_file() and not path.is_symlink():
            found[path] = (st.st_ino, st.st_mtime_ns, st.st_size)
    return found


def _print_written(out: Path, before: dict[Path, tuple[int, int, int]]) -> None:
    """List what this command wrote under the run directory; receipts as one line per directory."""
    written = sorted(p for p, stamp in _files(out).items() if before.get(p) != stamp)
    receipts = [p for p in written if p.parent.name == "receipts"]
    for path in written:
        if path not in receipts and not path.name.startswith("."):  # the run's lock is no output
            print(f"wrote {path}")
    if receipts:
        print(f"wrote {len(receipts)} receipt file(s) in {receipts[0].parent}")


def run_provider_serve(args: argparse.Namespace) -> int:
    from citator.server.guard import allowed_hosts
    from citator.server.pages import address_of, listen
    from citator.server.provider_server import serve
    from citator.statutes.providers.local import LocalChatModel

    hosts = allowed_hosts(args.host, args.allow_host)
    sock = listen(args.host, args.port)  # a taken port is one line, before the model loads and any banner
    note_machinery_only(args.model)

    def load() -> LocalChatModel:
        return LocalChatModel(args.model, device=args.device, max_tokens_cap=args.max_tokens_cap,
                              max_context_tokens=args.max_context_tokens)

    serve(load, sock=sock, hosts=hosts, served_name=args.served_name, api_key_env=args.api_key_env,
          ready=lambda: print(f"serving {args.model} on {address_of(args.host, sock)}/v1", file=sys.stderr,
                              flush=True))
    return 0
