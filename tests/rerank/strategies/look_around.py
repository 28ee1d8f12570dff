"""Looks for what other users left in the shared temp folders and for the judgments, leaves a file behind, reports
on stderr what it saw, then answers like bm25.

argv: a judgments file to read, then, each after "at:" (so that the runner does not take them for the
strategy's own files), a file another user left under /tmp and a path under /tmp to write.
"""

import json
import sys

from reporting import attempt, report_and_answer


def read(path):
    with open(path, "rb") as f:
        return "read" if f.read() else "empty"


def leave(path):
    with open(path, "w") as f:
        f.write("left behind by a strategy\n")
    return "written"


def main():
    query = json.loads(sys.stdin.readline())
    report = {}
    attempt("judgments", lambda: read(sys.argv[1]), report)
    attempt("host_tmp_file", lambda: read(sys.argv[2][3:]), report)
    attempt("leave", lambda: leave(sys.argv[3][3:]), report)
    return report_and_answer(query, report)


if __name__ == "__main__":
    sys.exit(main())
