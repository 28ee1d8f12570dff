"""Locust users for benchmarks/brief_load.py: each asks the `citator ui` page for a proposition's brief.

Read by `locust -f`; the propositions file, think time, where to write the raw timings and the page's metadata
filters ("KEY OP VALUE" lines, each asked as `f=`; with BRIEF_ALTERNATE=1 every other brief) come from the
environment (BRIEF_PROPOSITIONS, BRIEF_WAIT, BRIEF_TIMINGS, BRIEF_FILTERS, BRIEF_ALTERNATE). A response counts
only if it is a whole brief.
"""

from __future__ import annotations

import json
import os
import random
from urllib.parse import urlencode

from locust import HttpUser, events, task
from locust.user.wait_time import between, constant

TEXTS = [line for line in open(os.environ["BRIEF_PROPOSITIONS"], encoding="utf-8").read().splitlines() if line]
LOW, HIGH = (float(x) for x in os.environ.get("BRIEF_WAIT", "0.5,1.5").split(","))
FILTERS = [line for line in os.environ.get("BRIEF_FILTERS", "").splitlines() if line.strip()]
# With BRIEF_ALTERNATE=1 each user asks with and without FILTERS in turn: both kinds under the same load.
ALTERNATE = os.environ.get("BRIEF_ALTERNATE") == "1"
TIMINGS: list[dict[str, object]] = []


class Reader(HttpUser):
    """A person who reads a brief for a moment (BRIEF_WAIT seconds) and asks the next one."""

    wait_time = between(LOW, HIGH) if HIGH > 0 else constant(0)

    filtered = True

    @task
    def brief(self) -> None:
        text = random.choice(TEXTS)
        if ALTERNATE:
            self.filtered = not self.filtered
        filters = FILTERS if self.filtered else []
        asked = urlencode({"q": text, "f": filters}, doseq=True)
        name = "brief filtered" if filters else "brief"
        with self.client.get("/?" + asked, name=name, catch_response=True) as response:
            body = response.text or ""
            if response.status_code != 200:
                response.failure(f"HTTP {response.status_code}")
            elif not ('id="supported"' in body and 'id="refuted"' in body or 'id="relevant"' in body) \
                    or body.count('class="hit"') < 2:
                response.failure("not a brief (two stance columns, or the one relevant list)")


@events.request.add_listener
def record(request_type, name, response_time, response_length, exception, **kwargs) -> None:  # type: ignore[no-untyped-def]
    TIMINGS.append({"ms": response_time, "ok": exception is None, "name": name})


@events.quitting.add_listener
def dump(environment, **kwargs) -> None:  # type: ignore[no-untyped-def]
    with open(os.environ["BRIEF_TIMINGS"], "w", encoding="utf-8") as handle:
        json.dump(TIMINGS, handle)
