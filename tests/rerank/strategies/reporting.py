"""Shared by the test strategies that try a way out of the sandbox: record each attempt, report, answer like bm25."""

import json
import sys


def attempt(name, action, report):
    """report[name]: what `action` returned ("started" if nothing), or how it was refused."""
    try:
        report[name] = action() or "started"
    except (OSError, RuntimeError) as exc:
        report[name] = f"refused: {type(exc).__name__}: {exc}"


def report_and_answer(query, report):
    """The findings on stderr (`REPORT {...}`), then the pool's first ten ids as the result."""
    sys.stderr.write("REPORT " + json.dumps(report) + "\n")
    sys.stderr.flush()
    sys.stdout.write(json.dumps({"type": "result", "ids": [c["id"] for c in query["candidates"]][:10]}) + "\n")
    sys.stdout.flush()
    return 0
