"""A mistake on any command line is one line naming the command it was given to and what to do, exit 2: never
argparse's usage block. Checked over every registered command (walked from the parser, so a new command is checked
too), for each kind of mistake argparse can find, and through build.sh, run.sh and the installed entry point."""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from citator.cli.main import build_parser

REPO = Path(__file__).resolve().parents[2]


def _commands(parser: argparse.ArgumentParser, words: tuple[str, ...] = ()) -> Iterator[
        tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """(the words that name a command, its parser) for every command and group of commands."""
    yield words, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _commands(sub, (*words, name))


COMMANDS = dict(_commands(build_parser()))
LEAVES = {words: p for words, p in COMMANDS.items() if p._subparsers is None}
GROUPS = {words: p for words, p in COMMANDS.items() if p._subparsers is not None}


def _options(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    return [a for a in parser._actions if a.option_strings and a.dest not in ("help", "version")]


def _refusal(words: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """The one line `citator WORDS` is refused with (exit 2, nothing on stdout)."""
    with pytest.raises(SystemExit) as stopped:
        build_parser().parse_args(words)
    out, err = capsys.readouterr()
    assert stopped.value.code == 2 and out == "", (words, out, err)
    lines = err.splitlines()
    assert len(lines) == 1 and "usage:" not in err and "Traceback" not in err, (words, err)
    return lines[0]


def _valid(parser: argparse.ArgumentParser) -> list[str]:
    """Arguments that parse: every required option and positional given a value its type takes."""
    words: list[str] = []
    for action in parser._actions:
        needed = action.required or any(action in g._group_actions for g in parser._mutually_exclusive_groups
                                        if g.required and g._group_actions[0] is action)
        if isinstance(action, argparse._SubParsersAction) or not needed:
            continue
        value = "x" if action.type in (None, str, Path) else "2"
        value = str(next(iter(action.choices))) if action.choices else value
        words += ([action.option_strings[0]] if action.option_strings else []) + [value]
    return words


def _typo(option: str, parser: argparse.ArgumentParser) -> str | None:
    """`option` with a letter dropped (or, failing that, doubled), such that argparse does not take it for any
    option or an abbreviation of one."""
    known = parser._option_string_actions
    typos = [option[:i] + option[i + 1:] for i in range(len(option) - 1, 2, -1)] + [option + option[-1]]
    return next((t for t in typos if t[-1] != "-" and not any(k.startswith(t) for k in known)), None)


@pytest.mark.parametrize("words", sorted(LEAVES), ids=" ".join)
def test_a_mistyped_option_names_the_command_and_the_option_meant(words: tuple[str, ...],
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    parser = LEAVES[words]
    prog = " ".join(("citator", *words))
    checked = 0
    for action in _options(parser):
        option = max(action.option_strings, key=len)
        typo = _typo(option, parser)
        if typo is None:
            continue
        # Before or after the other arguments, with a value or none: the typo is what the line is about.
        for argv in ([*words, typo, "10"], [*words, *_valid(parser), typo], [*words, f"{typo}=10"]):
            line = _refusal(argv, capsys)
            assert line == f"{prog}: unknown option {typo}; did you mean {option}?", line
        checked += 1
    assert checked == len(_options(parser))
    assert _refusal([*words, "--zzzzzz"], capsys) == (
        f"{prog}: unknown option --zzzzzz; see {prog} --help for its options")


@pytest.mark.parametrize("words", sorted(LEAVES), ids=" ".join)
def test_every_bad_value_and_missing_argument_is_one_line(words: tuple[str, ...],
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    parser = LEAVES[words]
    prog = " ".join(("citator", *words))
    valid = _valid(parser)
    build_parser().parse_args([*words, *valid])  # the baseline parses
    for action in _options(parser):
        option = action.option_strings[-1]
        if action.choices:
            line = _refusal([*words, *valid, option, "html"], capsys)
            assert line.startswith(f"{prog}: {option} must be one of ") and line.endswith(", got 'html'"), line
        if action.type not in (None, str, Path):  # a number: not a word, NaN nor an infinity
            for bad in ("NaN", "inf", "ten", "1e999"):
                line = _refusal([*words, *valid, option, bad], capsys)
                assert line.startswith(f"{prog}: {option} must be a "), line
        if action.nargs is None and not isinstance(action, argparse._StoreConstAction):
            line = _refusal([*words, *valid, option], capsys)
            assert line.startswith(f"{prog}: {option} needs a value: {option} "), line
        if isinstance(action, argparse._StoreConstAction):
            assert _refusal([*words, *valid, f"{option}=yes"], capsys) == f"{prog}: {option} takes no value, got 'yes'"
    if valid:
        assert " required: give " in _refusal(list(words), capsys) or "give one of" in _refusal(list(words), capsys)
    line = _refusal([*words, *valid, "one", "two", "three"], capsys)
    assert line.startswith(f"{prog}: unexpected argument ") and line.endswith(f"see {prog} --help for what it takes")


@pytest.mark.parametrize("words", sorted(GROUPS), ids=lambda w: " ".join(w) or "citator")
def test_a_mistyped_command_is_named_with_the_one_meant(words: tuple[str, ...],
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    prog = " ".join(("citator", *words))
    names = [name for name in COMMANDS if name[:-1] == words and len(name) == len(words) + 1]
    for (name,) in (n[-1:] for n in names):
        typo = name[:-1] if len(name) > 3 else name + "x"
        if any(other[-1] == typo for other in names):
            continue
        line = _refusal([*words, typo], capsys)
        assert line.startswith(f"{prog}: unknown ") and f"{typo!r}; did you mean " in line, line
    assert _refusal([*words, "--zzzzzz"], capsys).startswith(f"{prog}: unknown option --zzzzzz; ")
    if words:  # a group without its subcommand (bare `citator` prints its help: the list of commands)
        assert _refusal(list(words), capsys).startswith(f"{prog}: give a ")


# Words a hurried user types: options of any command, typos of them, values that are not numbers.
_WORDS = sorted({s for p in COMMANDS.values() for a in _options(p) for s in a.option_strings}
                | {"--topk", "--querries", "--k", "NaN", "-1", "", "x", "--", "-", "=", "--format=html", "70000"})


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(words=st.sampled_from(sorted(COMMANDS)), argv=st.lists(st.sampled_from(_WORDS), max_size=6))
def test_any_command_line_parses_or_is_refused_in_one_line(words: tuple[str, ...], argv: list[str],
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    try:
        build_parser().parse_args([*words, *argv])
    except SystemExit as stopped:
        out, err = capsys.readouterr()
        assert stopped.code == 2 and out == ""
        assert len(err.splitlines()) == 1 and err.startswith("citator") and "usage:" not in err, err
    capsys.readouterr()


@pytest.mark.parametrize(("command", "expected"), [
    (["./run.sh", "--index-dir", "idx", "--queries", "q.jsonl", "--output", "r.jsonl", "--topk", "10"],
     "run.sh: unknown option --topk; did you mean --top-k?"),
    (["./run.sh", "--index-dir", "idx", "--querries", "q.jsonl", "--output", "r.jsonl"],
     "run.sh: unknown option --querries; did you mean --queries?"),
    (["./run.sh", "--index-dir", "idx", "--queries", "q.jsonl", "--output", "r.jsonl", "--top-k", "NaN"],
     "run.sh: --top-k must be a whole number of at least 1, got 'NaN'"),
    (["./build.sh", "--corpus", "c.jsonl", "--index-dir", "idx", "--shard", "3", "--sharts", "3"],
     "build.sh: unknown option --sharts; did you mean --shards?"),
    (["./build.sh", "--index-dir", "idx"], "build.sh: --corpus is required: give --corpus CORPUS"),
    ([sys.executable, "-m", "citator.cli.main", "brief", "--index-dir", "idx", "--k", "NaN", "law"],
     "citator brief: --k must be a whole number from 1 to 100, got 'NaN'"),
    ([sys.executable, "-m", "citator.cli.main", "brief", "--index-dir", "idx", "--format", "html", "law"],
     "citator brief: --format must be one of table, markdown, json, got 'html'"),
    ([sys.executable, "-m", "citator.cli.main", "ui", "--index-dir", "idx", "--port", "70000"],
     "citator ui: --port must be a whole number from 0 to 65535, got 70000"),
    ([sys.executable, "-m", "citator.cli.main", "serach"], "citator: unknown command 'serach'; did you mean search?"),
])
def test_the_scripts_and_the_entry_point_say_it_in_one_line(command: list[str], expected: str, tmp_path: Path) -> None:
    if command[0].startswith("./"):
        command = [str(REPO / command[0]), *command[1:]]
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", expected + "\n")


def test_the_briefs_bound_on_k_is_the_indexs() -> None:
    from citator.cli.arguments import BRIEF_K
    from citator.stance.brief.index import MAX_K

    assert BRIEF_K(str(MAX_K)) == MAX_K
    with pytest.raises(argparse.ArgumentTypeError):
        BRIEF_K(str(MAX_K + 1))
