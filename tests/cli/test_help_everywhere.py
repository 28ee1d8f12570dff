"""Every option of every `citator` command says what it does; the contract scripts name themselves."""

from __future__ import annotations

import argparse
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from citator.cli.main import build_parser

REPO = Path(__file__).resolve().parents[2]


def _parsers(parser: argparse.ArgumentParser, path: str) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _parsers(sub, f"{path} {name}")


def _undocumented(parser: argparse.ArgumentParser) -> list[str]:
    missing = []
    for action in parser._actions:
        name = "/".join(action.option_strings) or action.dest
        if isinstance(action, argparse._SubParsersAction):
            helped = {a.dest for a in action._choices_actions if a.help}
            missing += [f"command {c}" for c in action.choices if c not in helped]
        elif not action.help or action.help == argparse.SUPPRESS:
            missing.append(name)
    return missing


def test_every_option_of_every_command_has_help() -> None:
    gaps = {path: missing for path, parser in _parsers(build_parser(), "citator") if (missing := _undocumented(parser))}
    assert gaps == {}


def test_the_walk_sees_the_whole_tree() -> None:
    paths = {path for path, _ in _parsers(build_parser(), "citator")}
    assert {"citator build", "citator search", "citator bench statutes", "citator provider-serve"} <= paths


@pytest.mark.parametrize(("script", "command"), [("build.sh", "build"), ("run.sh", "search")])
def test_contract_scripts_name_themselves_in_their_usage(script: str, command: str) -> None:
    done = subprocess.run(["bash", str(REPO / script), "--help"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"usage: {script} ")
    assert f"citator {command}" not in done.stdout
