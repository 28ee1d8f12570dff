"""Built-in strategies through the full runner: within budget by construction, light on CPU, valid results."""

from __future__ import annotations

import pytest

from citator.rerank.local import LocalClient, query_info
from citator.rerank.runner import Runner
from citator.rerank.strategies import STRATEGIES, adaptive, first_token, pointwise
from citator.rerank.strategy import QueryInfo


@pytest.fixture(scope="module")
def outcomes(tiny_llm, pool):  # noqa: ANN001, ANN201
    out = {}
    for name in STRATEGIES:
        runner = Runner(tiny_llm, name)
        out[name] = [runner.run_query(q) for q in pool]
    return out


@pytest.mark.parametrize("name", sorted(STRATEGIES))
def test_strategy_succeeds_within_budget(outcomes, pool, name: str) -> None:  # noqa: ANN001
    for q, o in zip(pool, outcomes[name]):
        assert o.failure is None, (o.failure, o.stderr_tail)
        assert 1 <= len(o.ids) <= 10 and len(set(o.ids)) == len(o.ids)
        assert set(o.ids) <= q.ids()
        assert o.weighted_tokens <= 2048
        assert not any(c.refused for c in o.calls)  # fitted with exact counts, never refused
        assert o.strategy_cpu_seconds < 1.0


def test_bm25_returns_the_bm25_top_10_and_spends_nothing(outcomes, pool) -> None:  # noqa: ANN001
    for q, o in zip(pool, outcomes["bm25"]):
        assert list(o.ids) == [c.id for c in q.candidates[:10]]
        assert o.weighted_tokens == 0 and o.calls == ()


@pytest.mark.parametrize("name", ["first-token", "adaptive"])
def test_listwise_strategies_make_one_call_with_one_output_token(outcomes, name: str) -> None:  # noqa: ANN001
    for o in outcomes[name]:
        assert len(o.calls) == 1 and o.calls[0].max_new_tokens == 1
        assert len(o.candidates_seen) >= 10


def test_pointwise_judges_many_candidates_one_call_each(outcomes) -> None:  # noqa: ANN001
    for o in outcomes["pointwise"]:
        assert len(o.calls) == len(o.candidates_seen) >= 10
        assert o.weighted_tokens > 2048 * 0.9  # the budget is shared out, nearly all of it


def _long_query(q: QueryInfo, repeat: int) -> QueryInfo:
    from citator.rerank.strategy import Candidate

    cands = [Candidate(c.id, (c.text + " ") * repeat, c.rank, c.bm25_score) for c in q.candidates]
    return QueryInfo(q.query_id, q.query, cands, {})


@pytest.mark.parametrize("module", [first_token, adaptive, pointwise])
def test_long_passages_are_clipped_to_fill_but_never_exceed_the_budget(tiny_llm, pool, module) -> None:  # noqa: ANN001
    client = LocalClient(tiny_llm)
    ids = module.rank(_long_query(query_info(pool[1]), 4), client)
    assert len(ids) >= 10
    assert 2048 * 0.97 <= client.ledger.spent <= 2048
    assert not any(e.refused for e in client.ledger.entries)


def test_uniform_label_evidence_keeps_bm25_order(pool) -> None:  # noqa: ANN001
    q = query_info(pool[0])
    cands = sorted(q.candidates, key=lambda c: c.rank)
    z = [0.0] * len(cands)
    ids = adaptive.fuse(cands, z, [-3.0] * 20, adaptive.weights())
    assert ids[:10] == [c.id for c in cands[:10]]


def test_adaptive_weights_file_states_how_they_were_chosen() -> None:
    w = adaptive.weights()
    assert {"w_llm", "w_bm25", "w_rank", "note"} <= set(w)
    assert w.get("fitted_on") in (None, "dl19")


def test_adaptive_planner_gives_more_text_per_candidate_when_bm25_is_confident() -> None:
    flat = [10.0 - 0.01 * i for i in range(100)]
    steep = [30.0 - 2.0 * i for i in range(10)] + [5.0 - 0.01 * i for i in range(90)]
    assert adaptive.spread(steep) > adaptive.SPREAD_TERTILES[1]
    assert adaptive.plan(flat) == adaptive.MIN_CHARS[0]
    assert adaptive.plan(steep) == adaptive.MIN_CHARS[-1]
