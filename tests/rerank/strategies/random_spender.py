"""Spends at random (seeded by the query id) until refused five times: the ledger must still hold."""

import json
import random
import sys

from citator.rerank.strategy import BudgetRefused, Client


def main():
    client = Client()
    query = client.receive_query()
    rng = random.Random(query.query_id)
    refusals, calls = 0, 0
    while refusals < 5 and calls < 30:
        text = " ".join(rng.choice(query.candidates).text for _ in range(rng.randint(1, 6)))
        msgs = [{"role": "user", "content": text[: rng.randint(10, 4000)]}]
        try:
            reply = client.generate(msgs, rng.randint(1, 6))
            calls += 1
            assert reply.weighted_tokens == reply.input_tokens + 4 * reply.output_tokens
        except BudgetRefused as refused:
            assert refused.needed > refused.budget_left
            refusals += 1
    sys.stderr.write(json.dumps({"calls": calls, "refusals": refusals, "left": client.budget_left}) + "\n")
    client.submit([c.id for c in query.candidates[:10]])
    return 0


if __name__ == "__main__":
    sys.exit(main())
