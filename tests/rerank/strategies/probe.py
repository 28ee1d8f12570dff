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
    listing = sorted(os.listdir(cwd))
    with open("scratch.txt", "w") as f:
        f.write("writable")
    import socket

    try:
        socket.create_connection(("1.1.1.1", 53), timeout=0.5).close()
        network = "reachable"
    except OSError as exc:
        network = f"{type(exc).__name__}: {exc}"
    report = {
        "network": network,
        "groups": os.getgroups(),
        "uid": os.getuid(),
        "cwd": cwd,
        "cwd_listing": listing,
        "cuda": os.environ.get("CUDA_VISIBLE_DEVICES"),
        "home": os.environ.get("HOME"),
    }
    def prompt(pad):
        return [{"role": "user", "content": "Is this relevant? " + query["query"] + " word" * pad}]

    # Pad the prompt to about budget - 30 tokens, so the exact-fit call needs only a few output tokens.
    pad = 0
    n = ask({"type": "count", "messages": prompt(pad)})["input_tokens"]
    for _ in range(5):
        pad = max(0, pad + (budget - 30) - n)
        n = ask({"type": "count", "messages": prompt(pad)})["input_tokens"]
    msgs = prompt(pad)
    report["pad"] = pad
    report["count"] = n
    # One token too many: input + w * max_new = budget + something > budget.
    over = (budget - n) // w + 1
    report["over"] = ask({"type": "generate", "messages": msgs, "max_new_tokens": over})
    exact = (budget - n) // w
    report["exact_max_new"] = exact
    first = ask({"type": "generate", "messages": msgs, "max_new_tokens": exact, "logprob_tokens": ["yes", "no", "Maybe not"],
                 "candidate_ids": [query["candidates"][0]["id"]]})
    report["first"] = {k: v for k, v in first.items() if k != "text"}
    report["after"] = ask({"type": "generate", "messages": msgs, "max_new_tokens": 1})
    report["after"].pop("text", None)
    sys.stderr.write("REPORT " + json.dumps(report) + "\n")
    send({"type": "result", "ids": [c["id"] for c in query["candidates"]][:10]})
    return 0


if __name__ == "__main__":
    sys.exit(main())
