"""`citator bench statutes`: pools, controls, grading, metrics and report for one run directory."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import citator
from citator.statutes import prompt
from citator.statutes.grading import Grading, grade_chat, grades_rows, score_similarity
from citator.statutes.arms import build_index, describe, retrieval_version
from citator.statutes.hybrid import HybridIndex
from citator.statutes.keyword import KeywordIndex
from citator.statutes.labels import calibration, consensus, human_metrics
from citator.statutes.metrics import QueryScore, paired, score_order, summarize
from citator.statutes.passages import MAX_PASSAGE_BYTES, PASSAGE_VERSION
from citator.statutes.pool import POOL_SIZE, Pool, build_pools
from citator.statutes.receipts import Budget, ReceiptStore
from citator.statutes.vectors import check_cache_dir
from citator.data.atomic import command_inputs, output_dir, run_directory, write_json_atomic, write_jsonl_atomic
from citator.data.citations import CitationResolver
from citator.data.jsonl import read_json
from citator.data.hashing import sha256_file
from citator.data.statutes import (StatuteSection, SuiteQuery, read_labels, read_sections, read_suite,
                                   snapshot_manifest)
from citator.errors import ReceiptError
from citator.statutes.providers.base import ChatProvider, Provider, SimilarityProvider

PROVIDERS = ("none", "local", "openai", "embedding")
ORDER_NOTE = ("queries in suite-file order; candidates in keyword rank order (ties by corpus order); "
              f"chat requests in batches of {prompt.BATCH_SIZE} in that order")


@dataclass(frozen=True)
class RunConfig:
    """Everything one run depends on besides the provider object."""

    corpus: Path
    suite: Path
    out: Path
    labels: Path | None = None
    resend_attempted: bool = False
    budget: Budget = field(default_factory=Budget)
    retrieval: str = "keyword"  # the pool's retrieval arm: "keyword" (primary) or "hybrid"
    index_dir: Path | None = None  # hybrid: where its vectors are cached (default RUN_DIR/hybrid-index)


def _fingerprint(config: RunConfig, provider: Provider | None, corpus: dict[str, Any]) -> dict[str, Any]:
    """What a resumed run must share with the first one, or its receipts belong to something else."""
    arm = describe(config.retrieval)
    return {
        **({"retrieval": arm} if arm else {}),
        "corpus_sha256": corpus["sha256"],
        "suite_sha256": sha256_file(config.suite),
        "provider": provider.describe() if provider else {"provider": "none"},
        "prompt_version": prompt.PROMPT_VERSION if isinstance(provider, ChatProvider) else None,
        "retrieval_version": retrieval_version(config.retrieval),
        "passage_version": PASSAGE_VERSION,
        "pool_size": POOL_SIZE,
    }


def _check_resume(out: Path, fingerprint: dict[str, Any]) -> None:
    path = out / "manifest.json"
    if path.is_file():
        manifest = read_json(path)
        previous = manifest.get("fingerprint") if isinstance(manifest, dict) else None
        if previous != fingerprint:
            if not isinstance(previous, dict):
                raise ReceiptError(f"{path}: no fingerprint of the run's inputs (damaged or not a run directory); "
                                   "use a fresh --out directory")
            changed = sorted(k for k in fingerprint if previous.get(k) != fingerprint[k])
            raise ReceiptError(f"{out} holds a run with other inputs ({', '.join(changed)} differ); "
                               "use a fresh --out directory")


def _rerank(pool: Pool, grading: Grading) -> list[str]:
    """Graded candidates by P(useful), then expected grade, then keyword rank; ungraded ones after, in keyword order."""
    qid = pool.query.query_id
    graded, ungraded = [], []
    for item in pool.items:
        key = (qid, item.doc_id)
        if key in grading.distributions:
            d = grading.distributions[key]
            graded.append(((-d.p_useful, -d.expected, item.keyword_rank), item.doc_id))
        elif key in grading.scores:
            graded.append(((-grading.scores[key], 0.0, item.keyword_rank), item.doc_id))
        else:
            ungraded.append(item.doc_id)
    return [d for _, d in sorted(graded)] + ungraded


def _outside(pool: Pool, reranked: Sequence[str], grading: Grading | None) -> dict[str, Any]:
    qid = pool.query.query_id

    def model(doc_id: str) -> dict[str, Any]:
        row: dict[str, Any] = {"doc_id": doc_id}
        if grading and (qid, doc_id) in grading.distributions:
            row["p_useful"] = round(grading.distributions[(qid, doc_id)].p_useful, 6)
        if grading and (qid, doc_id) in grading.scores:
            row["similarity"] = round(grading.scores[(qid, doc_id)], 6)
        return row

    return {
        "query_id": qid, "split": pool.query.split, "text": pool.query.text, "keyword_fallback": pool.fallback,
        "keyword_top": [{"doc_id": i.doc_id, "score": round(i.keyword_score, 6)} for i in pool.items[:5]],
        "reranked_top": [model(d) for d in reranked[:5]] if grading else None,
        "note": "not auto-judged: nothing relevant is in the corpus; inspect the top scores",
    }


def run_statutes(config: RunConfig, provider: Provider | None,
                 on_sent: Callable[[int], None] | None = None) -> dict[str, Any]:
    """Run the benchmark into `config.out` (resuming from its receipts) and return metrics.json's content."""
    out = output_dir(config.out, make=False)
    if config.retrieval == "hybrid":
        check_cache_dir(config.index_dir or out / "hybrid-index")
    sections = read_sections(config.corpus)
    suite = read_suite(config.suite, {s.doc_id for s in sections})
    corpus = snapshot_manifest(config.corpus, sections)
    fingerprint = _fingerprint(config, provider, corpus)
    _check_resume(out, fingerprint)
    output_dir(out)
    # One run at a time in a run directory: two would each spend the budget and interleave their receipts.
    with run_directory(out):
        _check_resume(out, fingerprint)  # again, now that no other run can write here
        return _run_in(out, config, provider, on_sent, sections, suite, corpus, fingerprint)


def _run_in(out: Path, config: RunConfig, provider: Provider | None, on_sent: Callable[[int], None] | None,
            sections: Sequence[StatuteSection], suite: Sequence[SuiteQuery], corpus: dict[str, Any],
            fingerprint: dict[str, Any]) -> dict[str, Any]:
    from citator.statutes.report import write_report

    manifest = _run_manifest(config, suite, corpus, fingerprint)
    write_json_atomic(out / "manifest.json", manifest)

    index = build_index(config.retrieval, sections, config.index_dir or out / "hybrid-index")
    pools = build_pools(index, suite)
    write_jsonl_atomic(out / "pool.jsonl", (i.to_json() for p in pools if p.query.kind == "ranking" for i in p.items))
    write_jsonl_atomic(out / "control_pools.jsonl",
                       (i.to_json() for p in pools if p.query.kind == "outside_corpus" for i in p.items))

    grading: Grading | None = None
    if isinstance(provider, ChatProvider):
        grading = grade_chat(pools, provider, ReceiptStore(out / "receipts"), config.budget,
                             resend_attempted=config.resend_attempted, on_sent=on_sent)
    elif isinstance(provider, SimilarityProvider):
        grading = score_similarity(pools, provider, out / "similarity.jsonl")

    keyword_scores: list[QueryScore] = []
    reranked_scores: list[QueryScore] = []
    orders: dict[str, dict[str, list[str]]] = {"keyword": {}, "reranked": {}}
    per_query: list[dict[str, Any]] = []
    outside: list[dict[str, Any]] = []
    for pool in pools:
        q = pool.query
        keyword = pool.doc_ids
        reranked = _rerank(pool, grading) if grading else keyword
        orders["keyword"][q.query_id], orders["reranked"][q.query_id] = keyword, reranked
        if q.kind == "outside_corpus":
            outside.append(_outside(pool, reranked, grading))
            continue
        k = score_order(q.query_id, q.split, q.family, q.kind, keyword, q.nominated, keyword)
        r = score_order(q.query_id, q.split, q.family, q.kind, reranked, q.nominated, keyword)
        keyword_scores.append(k)
        reranked_scores.append(r)
        per_query.append({"query_id": q.query_id, "split": q.split, "family": q.family, "kind": q.kind,
                          "keyword_fallback": pool.fallback, "keyword": _values(k),
                          "reranked": _values(r) if grading else None, "keyword_top10": keyword[:10],
                          "reranked_top10": reranked[:10] if grading else None})

    cited, citations, cited_rows = _exact_citations(suite, sections, grading is not None)
    keyword_scores += cited
    reranked_scores += cited
    per_query += cited_rows

    secondary, fell_back = _secondary(index, pools)
    failures = [f.to_json() for f in grading.failures] if grading else []
    write_jsonl_atomic(out / "failures.jsonl", failures)
    usage = _usage(grading, manifest["budget"])
    write_json_atomic(out / "usage.json", usage)
    if grading is not None and grading.distributions:
        write_jsonl_atomic(out / "grades.jsonl", grades_rows(pools, grading))

    metrics: dict[str, Any] = {
        "suite_version": manifest["suite"]["version"],
        "provider": fingerprint["provider"],
        "prompt_version": fingerprint["prompt_version"],
        "retrieval_version": fingerprint["retrieval_version"],
        "passage_version": PASSAGE_VERSION,
        "provider_requests": usage["provider_requests"],
        "usage": {k: v for k, v in usage.items() if k != "budget"},
        "by_split": summarize(keyword_scores),
        "reranked_by_split": summarize(reranked_scores) if grading else None,
        "paired": paired(keyword_scores, reranked_scores) if grading else None,
        "paired_method": "paired bootstrap over query families, percentile 95%, 10000 replicates, seed 20260920",
        "secondary_baseline": {"name": "all-terms match over heading+text, filled by most-terms match",
                               "by_split": summarize(secondary), "fallback_queries": fell_back},
        "keyword_fallback_queries": sorted(p.query.query_id for p in pools if p.fallback),
        "controls": {"exact_citation": citations, "outside_corpus": outside},
        "grading": _grading_summary(pools, grading),
        "failures": _count_failures(failures),
        "per_query": per_query,
        "human_labels": _human(config, pools, orders, grading) if config.labels else None,
    }
    write_json_atomic(out / "metrics.json", metrics)
    write_report(out, manifest, metrics)
    return metrics


def _run_manifest(config: RunConfig, suite: Sequence[SuiteQuery], corpus: dict[str, Any],
                  fingerprint: dict[str, Any]) -> dict[str, Any]:
    """The run's manifest.json: its fingerprint, corpus and suite, the prompt's batching, the budget and the order."""
    return {
        "fingerprint": fingerprint, "corpus": corpus,
        "suite": {"file": config.suite.name, "sha256": fingerprint["suite_sha256"],
                  "version": f"{config.suite.stem}@{fingerprint['suite_sha256'][:12]}", "queries": len(suite),
                  "splits": sorted({q.split for q in suite})},
        "passage_max_bytes": MAX_PASSAGE_BYTES, "batch_size": prompt.BATCH_SIZE,
        "budget": {"max_requests": config.budget.max_requests, "max_input_tokens": config.budget.max_input_tokens},
        "order": ORDER_NOTE.replace("keyword rank", f"{config.retrieval} rank"), "citator_version": citator.__version__,
    }


def _exact_citations(suite: Sequence[SuiteQuery], sections: Sequence[StatuteSection], graded: bool
                     ) -> tuple[list[QueryScore], list[dict[str, Any]], list[dict[str, Any]]]:
    """The exact-citation controls, answered by direct lookup (no provider is consulted): their scores (the same
    for both orders), the controls' rows and their per-query rows."""
    resolver = CitationResolver(s.doc_id for s in sections)
    scores, citations, rows = [], [], []
    for q in suite:
        if q.kind != "exact_citation":
            continue
        res = resolver.resolve(q.text)
        s = score_order(q.query_id, q.split, q.family, q.kind, list(res.doc_ids), q.nominated, res.doc_ids)
        scores.append(s)
        citations.append({"query_id": q.query_id, "split": q.split, "text": q.text, "resolved": list(res.doc_ids),
                          "message": res.message, "targets_found": s.coverage, "provider_calls": 0})
        rows.append({"query_id": q.query_id, "split": q.split, "family": q.family, "kind": q.kind,
                     "keyword": _values(s), "reranked": _values(s) if graded else None,
                     "keyword_top10": list(res.doc_ids)[:10], "reranked_top10": None})
    return scores, citations, rows


def _usage(grading: Grading | None, budget: dict[str, Any]) -> dict[str, Any]:
    """usage.json: the requests and tokens the provider was charged and reported, against the budget."""
    ledger = grading.ledger if grading else None
    return {
        "provider_requests": ledger.attempts if ledger else 0,
        "input_tokens_charged": ledger.input_tokens if ledger else 0,
        "reported_input_tokens": ledger.reported_input_tokens if ledger else 0,
        "reported_output_tokens": ledger.reported_output_tokens if ledger else 0,
        "usage_above_preflight_bound": grading.preflight_exceeded if grading else 0,
        "budget": budget,
    }


def _values(s: QueryScore) -> dict[str, float]:
    return {"hit@1": s.values[0], "hit@5": s.values[1], "hit@10": s.values[2], "rr": round(s.values[3], 6),
            "coverage": round(s.coverage, 6)}


def _secondary(index: KeywordIndex | HybridIndex, pools: Sequence[Pool]) -> tuple[list[QueryScore], list[str]]:
    scores, fell_back = [], []
    for pool in pools:
        q = pool.query
        if q.kind != "ranking":
            continue
        found, fallback = index.all_terms(q.text, POOL_SIZE)
        ids = [index.sections[i].doc_id for i in found]
        if fallback:
            fell_back.append(q.query_id)
        scores.append(score_order(q.query_id, q.split, q.family, q.kind, ids, q.nominated, ids))
    return scores, fell_back


def _grading_summary(pools: Sequence[Pool], grading: Grading | None) -> dict[str, Any] | None:
    if grading is None:
        return None
    total = sum(len(p.items) for p in pools)
    graded = len(grading.distributions) + len(grading.scores)
    sources: dict[str, int] = {}
    for d in grading.distributions.values():
        sources[d.source] = sources.get(d.source, 0) + 1
    return {"candidates": total, "graded": graded, "ungraded": total - graded, "sources": dict(sorted(sources.items())),
            "requests": {"ranking": grading.ranking_requests, "ranking_completed": grading.ranking_completed}}


def _count_failures(failures: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for f in failures:
        counts[f["stage"]] = counts.get(f["stage"], 0) + 1
    return dict(sorted(counts.items()))


def _human(config: RunConfig, pools: Sequence[Pool], orders: Mapping[str, Mapping[str, Sequence[str]]],
           grading: Grading | None) -> dict[str, Any]:
    assert config.labels is not None
    items = {(i.query_id, i.doc_id): i for p in pools if p.query.kind == "ranking" for i in p.items}
    labels = consensus(read_labels(config.labels), items)
    dists = grading.distributions if grading else {}
    present = {k: v for k, v in orders.items() if k == "keyword" or grading}
    return {
        "file": config.labels.name, "sha256": sha256_file(config.labels),
        "labels_used": labels.used, "labels_stale": labels.stale, "labels_incomplete": labels.incomplete,
        "labels_not_in_pool": labels.not_in_pool,
        "consensus": "lower median of complete, hash-matching reviewer grades; unknown never counts as 0",
        "section": human_metrics([p for p in pools if p.query.kind == "ranking"], present, labels.section),
        "calibration_passage": calibration([p for p in pools if p.query.kind == "ranking"], dists, labels.passage),
        "calibration_section": calibration([p for p in pools if p.query.kind == "ranking"], dists, labels.section),
    }


def statute_benchmark(corpus: str | Path, suite: str | Path, out: str | Path, provider: Provider | str | None = None,
                      *, retrieval: str = "keyword", labels: str | Path | None = None,
                      index_dir: str | Path | None = None) -> dict[str, Any]:
    """`citator bench statutes` from Python: run (or resume) the benchmark into `out` and return its metrics.

    `provider`: None (pools and keyword order only), "embedding" (the bundled MiniLM's similarity, no requests) or
    a `Provider` object (`citator.statutes.providers`); `retrieval`: "keyword" (the primary arm) or "hybrid"."""
    from citator.data.arguments import path_argument
    from citator.errors import ConfigError

    if retrieval not in ("keyword", "hybrid"):
        raise ConfigError(f'retrieval must be "keyword" or "hybrid", got {retrieval!r}')
    if provider == "embedding":
        from citator.statutes.providers.embedding import EmbeddingProvider

        provider = EmbeddingProvider()
    elif provider is not None and not isinstance(provider, Provider):
        raise ConfigError(f'provider must be None, "embedding" or a Provider, got {provider!r}')
    corpus, suite, out = (path_argument(p, name, ConfigError) for p, name in
                          ((corpus, "corpus"), (suite, "suite"), (out, "out")))
    labels, index_dir = (None if p is None else path_argument(p, name, ConfigError)
                         for p, name in ((labels, "labels"), (index_dir, "index_dir")))
    config = RunConfig(corpus, suite, out, labels, retrieval=retrieval, index_dir=index_dir)
    # As on the command line: no file the run reads (a suite kept in `out`, say) is replaced by what it writes.
    with command_inputs([str(p) for p in (corpus, suite, labels) if p is not None]):
        return run_statutes(config, provider)
