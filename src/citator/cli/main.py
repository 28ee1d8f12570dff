"""`citator` entry point: every module in citator.cli with a `register(subparsers)` adds its commands."""

from __future__ import annotations

import argparse
import contextlib
import errno
import importlib
import os
import signal
import pkgutil
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import citator
import citator.cli
from citator.cli.parser import CitatorParser
from citator.data.atomic import command_inputs
from citator.errors import CitatorError, one_line


def build_parser() -> argparse.ArgumentParser:
    return _parser()[0]


def _parser() -> tuple[argparse.ArgumentParser, argparse._SubParsersAction]:
    """The `citator` parser and its commands."""
    parser = CitatorParser(
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
    return parser, sub


def _name_script(commands: argparse._SubParsersAction, argv: Sequence[str], script: str) -> None:
    """Usage and errors of the command a contract script runs name the script (`build.sh`), not `citator build`."""
    if argv and argv[0] in commands.choices:
        commands.choices[argv[0]].prog = script


def main(argv: Sequence[str] | None = None) -> int:
    parser, commands = _parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    # Set by build.sh and run.sh for this process only: the servers it starts must not inherit it.
    script = os.environ.pop("CITATOR_SCRIPT", None)
    if script:
        _name_script(commands, argv, script)
    try:
        args = parser.parse_args(argv)
    except SystemExit as stopped:  # a usage error (one line, cli/parser.py), --help or --version: already printed
        return stopped.code if isinstance(stopped.code, int) else 2
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        with command_inputs(_named_paths(args)):
            return int(args.func(args) or 0)
    except CitatorError as exc:
        print(f"{type(exc).__name__}: {one_line(str(exc))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


def entry(argv: Sequence[str] | None = None) -> int:
    """The `citator` command and `python -m citator.cli.main`: `main`, with a last-resort guard so that a bug still
    ends in one line (exit 70), never a traceback. Bad input never gets here: every reader raises its typed error.
    In-process callers (and the tests) call `main`, where such a bug surfaces as the exception it is."""
    try:
        code = main(argv)
        sys.stdout.flush()  # here, not at interpreter exit, where a failure could only be ignored noisily
        return code
    except BrokenPipeError:
        # The reader went away (`| head`): nothing more to write, and no one to tell.
        _silence_stdout()
        return 128 + signal.SIGPIPE
    except OSError as exc:
        if exc.errno not in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
            raise
        _silence_stdout()
        print(f"citator: cannot write the output ({exc.strerror})", file=sys.stderr)
        return 2
    except Exception as exc:  # noqa: BLE001 - the backstop
        print(f"citator: internal error ({type(exc).__name__}: {one_line(str(exc)[:300])}); please report it",
              file=sys.stderr)
        return INTERNAL_ERROR


def _silence_stdout() -> None:
    """Point standard output at /dev/null, so the interpreter's last flush of what is still buffered cannot fail."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


# Where commands take the paths they write (a file, or a run directory).
OUTPUT_DESTS = frozenset({"output", "out", "json_out"})
# Exit status of an error citator did not anticipate: bad input always ends in a typed error and exit 2 instead.
INTERNAL_ERROR = 70


def _named_paths(args: argparse.Namespace) -> list[str]:
    """Every file and directory the command line names outside its outputs: the command's inputs. No output may
    replace such a file, nor a file the command's readers open inside such a directory (data/atomic.py)."""
    return _named(args, os.path.exists)


def _named(args: argparse.Namespace, test: Callable[[str], bool]) -> list[str]:
    """Every path the command line names, outside the output arguments, that passes `test`."""
    found = []
    for dest, value in vars(args).items():
        if dest in OUTPUT_DESTS:
            continue
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, (str, Path)) and item and test(str(item)):
                found.append(str(item))
    return found


if __name__ == "__main__":
    sys.exit(entry())
