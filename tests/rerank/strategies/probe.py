"""Reports its sandbox (uid, cwd, environment) and exercises the reservation rule; findings go to stderr."""

import json
import os
import sys


def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def ask(obj):
    send(obj)
    return json.loads(sys.stdin.readline())


def main():
    query = json.loads(sys.stdin.readline())
    budget = query["budgets"]["weighted_tokens"]
    w = query["budgets"]["output_weight"]
    cwd = os.getcwd()
    with open("scratch.txt", "w") as f:
        f.write("writable")
    report = {
        "uid": os.getuid(),
        "cwd": cwd,
        "cwd_listing": sorted(os.listdir(cwd)),
        "cuda": os.environ.get("CUDA_VISIBLE_DEVICES"),
        "home": os.environ.get("HOME"),
    }
    msgs = [{"role": "user", "content": "Is this relevant? " + query["query"]}]
    n = ask({"type": "count", "messages": msgs})["input_tokens"]
    report["count"] = n
    # One token too many: input + w * max_new = budget + something > budget.
    over = (budget - n) // w + 1
    report["over"] = ask({"type": "generate", "messages": msgs, "max_new_tokens": over})
    exact = (budget - n) // w
    report["exact_max_new"] = exact
    first = ask({"type": "generate", "messages": msgs, "max_new_tokens": exact, "logprob_tokens": ["yes", "no", "Maybe not"],
                 "candidate_ids": [query["candidates"][0]["id"]]})
    report["first"] = first
    report["after"] = ask({"type": "generate", "messages": msgs, "max_new_tokens": 1})
    sys.stderr.write("REPORT " + json.dumps(report) + "\n")
    send({"type": "result", "ids": [c["id"] for c in query["candidates"]][:10]})
    return 0


if __name__ == "__main__":
    sys.exit(main())
