"""A strategy that spends at random through the real runner never gets past the budget."""

from __future__ import annotations

import json

from citator.rerank.runner import Runner


def test_random_spending_never_exceeds_the_budget(tiny_llm, pool, short_limits, script) -> None:  # noqa: ANN001
    runner = Runner(tiny_llm, script("random_spender.py"), short_limits)
    for q in pool:
        o = runner.run_query(q)
        assert o.failure is None, (o.failure, o.stderr_tail)
        report = json.loads(o.stderr_tail.strip().splitlines()[-1])
        assert 0 <= o.weighted_tokens <= 2048
        assert o.weighted_tokens == sum(c.weighted for c in o.calls if not c.refused)
        assert report["left"] == 2048 - o.weighted_tokens
        refused = [c for c in o.calls if c.refused]
        assert len(refused) == report["refusals"]
        assert all(c.reserved > c.left_after for c in refused)
        spent = 0
        for c in o.calls:
            if not c.refused:
                assert c.reserved <= 2048 - spent  # reserved in full before the call
                spent += c.weighted
                assert c.left_after == 2048 - spent
