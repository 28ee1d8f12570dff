"""`citator` entry point: every module in citator.cli with a `register(subparsers)` adds its commands."""

from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
import sys
from collections.abc import Sequence

import citator
import citator.cli
from citator.errors import CitatorError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="citator", description="Find, rerank and evaluate legal authority for a proposition."
    )
    parser.add_argument("--version", action="version", version=f"citator {citator.__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for info in sorted(pkgutil.iter_modules(citator.cli.__path__), key=lambda m: m.name):
        if info.name == "main":
            continue
        module = importlib.import_module(f"citator.cli.{info.name}")
        register = getattr(module, "register", None)
        if register is not None:
            register(sub)
    return parser


def _name_script(parser: argparse.ArgumentParser, argv: Sequence[str], script: str) -> None:
    """Usage and errors of the command a contract script runs name the script (`build.sh`), not `citator build`."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) and argv and argv[0] in action.choices:
            action.choices[argv[0]].prog = script


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    # Set by build.sh and run.sh for this process only: the servers it starts must not inherit it.
    script = os.environ.pop("CITATOR_SCRIPT", None)
    if script:
        _name_script(parser, argv, script)
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except CitatorError as exc:
        print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
