"""The argument parser of every citator command: a mistake on the command line is one line naming the command it
was given to and what to do (`run.sh: unknown option --topk; did you mean --top-k?`), exit 2, never a usage block.

argparse finds the mistakes; this class only words them. A subcommand's parser is made by its parent with the
parent's class, so `citator brief`, `citator review serve` and build.sh (the `build` parser renamed) all answer
through `error` here, each under its own `prog`.
"""

from __future__ import annotations

import argparse
import difflib
import re
import sys
from collections.abc import Iterable, Sequence
from typing import Any, NoReturn

from citator.errors import one_line

_ARGUMENT = re.compile(r"argument (?P<name>[^:]+): (?P<message>.*)", re.S)
_CHOICE = re.compile(r"invalid choice: (?P<value>'.*') \(choose from .*\)", re.S)
_TYPED = re.compile(r"invalid (?P<type>\w+) value: (?P<value>'.*')", re.S)
_REQUIRED = "the following arguments are required: "
_ONE_OF = re.compile(r"one of the arguments (?P<names>.*) is required")
_AMBIGUOUS = re.compile(r"ambiguous option: (?P<option>\S+) could match (?P<matches>.*)")
_NEGATIVE_NUMBER = re.compile(r"^-\d+$|^-\d*\.\d+$")
_TYPE_WORDS = {"int": "a whole number", "float": "a number"}


class CitatorParser(argparse.ArgumentParser):
    """argparse, with every error worded as one line that says what to do, and unknown options named with the
    closest option the command has."""

    def parse_known_args(self, args: Sequence[str] | None = None,  # type: ignore[override]  # one signature for typeshed's overloads
                         namespace: argparse.Namespace | None = None) -> tuple[argparse.Namespace, list[str]]:
        given = list(sys.argv[1:] if args is None else args)
        # An unknown option explains most other complaints (`--querries` makes `--queries` "required"): it comes first.
        if unknown := self._unknown_options(given):
            self.exit(2, f"{self.prog}: {one_line(self._unknown(unknown[0]))}\n")
        parsed, extras = super().parse_known_args(given, namespace)
        assert parsed is not None  # argparse returns None only when told to exit on error, and this parser exits
        if extras:  # a subcommand's parser reports its own leftovers, before its parent sees them
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        return parsed, extras

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {one_line(self._worded(message))}\n")

    def _worded(self, message: str) -> str:
        if message.startswith("unrecognized arguments: "):
            word = message.split(": ", 1)[1].split(" ", 1)[0]
            return f"unexpected argument {word!r}; {self._see('for what it takes')}"
        if message.startswith(_REQUIRED):
            return self._required(message[len(_REQUIRED):].split(", "))
        if found := _ONE_OF.fullmatch(message):
            return f"give one of {', '.join(found['names'].split())}"
        if found := _AMBIGUOUS.fullmatch(message):
            matches = found["matches"].split(", ")
            return f"{found['option']} could be {_either(matches)}: give the whole name"
        if found := _ARGUMENT.fullmatch(message):
            return self._argument(found["name"], found["message"])
        return f"{message}; {self._see('for what it takes')}"

    def _argument(self, name: str, message: str) -> str:
        """A problem with one argument's value, argparse's or one of citator.cli.arguments' types."""
        action = self._action(name)
        if found := _CHOICE.fullmatch(message):
            value = found["value"][1:-1]
            choices = [str(c) for c in (action.choices or ())] if action is not None else []
            if isinstance(action, argparse._SubParsersAction):
                kind = str(action.metavar or "command").lower()
                return f"unknown {kind} {value!r}" + (_suggestion(value, choices) or f"; {self._see('for the list')}")
            return f"{name} must be one of {', '.join(choices)}, got {value!r}{_suggestion(value, choices)}"
        if found := _TYPED.fullmatch(message):
            return f"{name} must be {_TYPE_WORDS.get(found['type'], found['type'])}, got {found['value']}"
        if message.startswith("expected "):
            shown = (action.metavar or action.dest.upper()) if action is not None else "VALUE"
            return f"{name} needs a value: {name} {shown}"
        if message.startswith("not allowed with argument "):
            return f"{name} and {message.rsplit(' ', 1)[1]} cannot be given together: give one of them"
        if message.startswith("ignored explicit argument "):
            return f"{name} takes no value, got {message.rsplit(' ', 1)[1]}"
        return f"{name} {message}"

    def _required(self, names: list[str]) -> str:
        shown = []
        for name in names:
            action = self._action(name)
            if isinstance(action, argparse._SubParsersAction):
                return f"give a {name.lower()}: {', '.join(action.choices)} ({self._see('for what each does')})"
            if action is not None and action.option_strings:
                shown.append(f"{name} {action.metavar or action.dest.upper()}")
            else:  # a positional argument: what it is
                shown.append(f"{name} ({action.help})" if action is not None and action.help else name)
        verb = "is" if len(names) == 1 else "are"
        return f"{_both(names)} {verb} required: give {' '.join(shown)}"

    def _unknown(self, option: str) -> str:
        name = option.split("=", 1)[0]
        known = [s for s in self._option_string_actions if s.startswith("--")]
        hint = _suggestion(name, known)
        return f"unknown option {name}" + (hint or f"; {self._see('for its options')}")

    def _unknown_options(self, given: Sequence[str]) -> list[str]:
        """The options in `given` this parser does not have (nor abbreviates), as argparse tells options from values.
        A parser of subcommands looks only before its subcommand: what follows is the subcommand's."""
        unknown = []
        for word in given:
            if word == "--":
                break
            if not word.startswith("-") or word == "-" or " " in word or _NEGATIVE_NUMBER.match(word):
                if self._subparsers is not None:
                    break
                continue
            name = word.split("=", 1)[0]
            if name in self._option_string_actions:
                continue
            known = self._option_string_actions
            if name.startswith("--") and self.allow_abbrev and any(s.startswith(name) for s in known):
                continue
            unknown.append(word)
        return unknown

    def _action(self, name: str) -> argparse.Action | None:
        for action in self._actions:
            if name in action.option_strings or name in (action.metavar, action.dest) or \
                    name == "/".join(action.option_strings):
                return action
        return None

    def _see(self, what: str) -> str:
        return f"see {self.prog} --help {what}"


def _suggestion(word: str, candidates: Iterable[Any]) -> str:
    close = difflib.get_close_matches(word, [str(c) for c in candidates], n=1, cutoff=0.6)
    return f"; did you mean {close[0]}?" if close else ""


def _both(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def _either(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"
