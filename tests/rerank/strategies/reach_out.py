"""Tries to reach past its pipe, reports on stderr what the sandbox refused, then answers like bm25.

argv: a Unix socket to connect to (a world-writable one, as a search server's was), and a judgments file to read.
- connect to that Unix socket and send a line (a strategy could make another process work for it, unmetered);
- socketpair(), an IPv4 socket and an abstract-namespace Unix socket (reachable without any file permission);
- read the judgments.
"""

import json
import socket
import sys

from reporting import attempt, report_and_answer


def unix_connect(path):
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.connect(path)
        s.sendall(b"hello from the strategy\n")
    return "connected"


def made(family, kind=socket.SOCK_STREAM):
    socket.socket(family, kind).close()
    return "made"


def pair():
    a, b = socket.socketpair()
    a.close()
    b.close()
    return "made"


def read(path):
    with open(path, encoding="utf-8") as f:
        f.read()
    return "read"


def main():
    query = json.loads(sys.stdin.readline())
    report = {}
    attempt("unix_connect", lambda: unix_connect(sys.argv[1]), report)
    attempt("socketpair", pair, report)
    attempt("inet", lambda: made(socket.AF_INET), report)
    attempt("udp", lambda: made(socket.AF_INET, socket.SOCK_DGRAM), report)
    attempt("netlink", lambda: made(socket.AF_NETLINK, socket.SOCK_RAW), report)
    attempt("judgments", lambda: read(sys.argv[2]), report)
    return report_and_answer(query, report)


if __name__ == "__main__":
    sys.exit(main())
