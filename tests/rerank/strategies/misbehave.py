"""A strategy that behaves like bm25 except on query 47923, where it fails in the way argv[1] names.

Raw JSON on purpose (no SDK): the runner must cope with anything a program can write.
"""

import json
import sys
import time

TARGET = "47923"


def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def main(mode):
    query = json.loads(sys.stdin.readline())
    ids = [c["id"] for c in query["candidates"]][:10]
    if query["query_id"] != TARGET or mode == "none":
        send({"type": "result", "ids": ids})
        return 0
    if mode == "garbage":
        sys.stdout.write("this is not json\n")
        sys.stdout.flush()
        time.sleep(0.5)
    elif mode == "unknown_id":
        send({"type": "result", "ids": ids[:9] + ["not-in-pool"]})
    elif mode == "duplicate_ids":
        send({"type": "result", "ids": ids[:9] + ids[:1]})
    elif mode == "too_many_ids":
        send({"type": "result", "ids": [c["id"] for c in query["candidates"]][:11]})
    elif mode == "missing_result":
        return 0
    elif mode == "cpu":
        while True:
            pass
    elif mode == "slow":
        time.sleep(30)
        send({"type": "result", "ids": ids})
    elif mode == "crash":
        raise RuntimeError("strategy bug")
    elif mode == "oversize":
        send({"type": "count", "messages": [{"role": "user", "content": "x" * 200_000}]})
    elif mode == "bad_request":
        send({"type": "generate", "messages": [{"role": "user", "content": "hi"}], "max_new_tokens": 0})
    elif mode == "unknown_candidate":
        send({"type": "generate", "messages": [{"role": "user", "content": "hi"}], "max_new_tokens": 1,
              "candidate_ids": ["not-in-pool"]})
    elif mode == "too_many_requests":
        while True:
            send({"type": "count", "messages": [{"role": "user", "content": "hi"}]})
            sys.stdin.readline()
    elif mode == "surrogate_id":  # raw: json.dumps would escape it, a hostile program need not
        sys.stdout.write('{"type": "result", "ids": ["\\ud800"]}\n')
        sys.stdout.flush()
        time.sleep(30)  # the runner must end it, whatever telling it failed with
    elif mode == "terminal_codes_id":
        send({"type": "result", "ids": ["\r47923: 1999 tokens, 20 seen, 0.051 CPU s, 0.20 s, ok\x1b[K"]})
    elif mode == "deep_json":
        sys.stdout.write("[" * 50_000 + "\n")  # under the line limit, past the parser's nesting
        sys.stdout.flush()
    elif mode == "huge_number":
        sys.stdout.write('{"type": "generate", "messages": [{"role": "user", "content": "hi"}], "max_new_tokens": '
                         + "9" * 5000 + "}\n")
        sys.stdout.flush()
    elif mode == "role_list":
        send({"type": "count", "messages": [{"role": ["user"], "content": "hi"}]})
    elif mode == "surrogate_content":
        sys.stdout.write('{"type": "count", "messages": [{"role": "user", "content": "\\udfff"}]}\n')
        sys.stdout.flush()
    elif mode == "count_flood":  # 60 KB a count, under the line limit; the characters counted run out first
        while True:
            send({"type": "count", "messages": [{"role": "user", "content": "x " * 30_000}]})
            sys.stdin.readline()
    elif mode == "close_stdout":
        import os
        os.close(1)
    elif mode == "fork_cpu":
        import os
        if os.fork() == 0:
            while True:
                pass
        time.sleep(30)
    time.sleep(30)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
