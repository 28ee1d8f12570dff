"""`python -m citator.rerank.strategies NAME`: serve one query with a built-in strategy over stdin/stdout."""

from __future__ import annotations

import sys


def main(argv: list[str]) -> int:
    from citator.rerank.strategies import STRATEGIES

    if len(argv) != 1 or argv[0] not in STRATEGIES:
        sys.stderr.write(f"usage: rerank-strategy NAME  (NAME one of {', '.join(STRATEGIES)})\n")
        return 2
    import importlib

    from citator.rerank.strategy import serve

    module = importlib.import_module(STRATEGIES[argv[0]])
    return serve(module.rank)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
