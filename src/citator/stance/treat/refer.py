"""What a pronoun or a plural noun in a treatment sentence stands for: "we abandon it today", "and it is
repudiated", "both decisions are overruled", "That decision is overruled." (after a sentence that names one case).

A reference is resolved only where a reader could not doubt it: "it" and "that decision" to the one decision its
sentence names before it (or, where the sentence names none, the one its previous sentence names), "both" to the
last two decisions named, "those decisions" and "they" to every decision named. A sentence naming two decisions
gives "it" nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Protocol

# Before a `before` cue: its subject when that is no case name ("and it is repudiated", "Both decisions are").
SUBJECT = re.compile(
    r"(?:(?<![\w'’])(?P<one>it|that\s+(?:decision|case|holding|precedent))|"
    r"(?P<two>both(?:\s+(?:decisions|cases|precedents|holdings))?|(?:the\s+)?two\s+(?:decisions|cases|precedents))|"
    r"(?P<all>they|(?:those|these|such)\s+(?:decisions|cases|precedents|holdings)))"
    r"\s*,?\s*(?:(?:therefore|thus|now|hereby|also|accordingly|likewise|too|both|each|today),?\s+)*$", re.I)
# After an `after` cue: its object ("we overrule it", "abandon them today", "overrules both").
OBJECT = re.compile(r"\s+(?:(?P<one>it|that\s+decision|that\s+case)|(?P<two>both(?:\s+(?:decisions|cases))?)|"
                    r"(?P<all>them|those\s+(?:decisions|cases)))\b(?!['’]s|\s+(?:to|that|is|was|as|of)\b)", re.I)


class Named(Protocol):
    """A case named in the text: where, and which decision (the records that report it)."""

    @property
    def start(self) -> int: ...

    @property
    def doc_ids(self) -> tuple[str, ...]: ...


def antecedents(match: re.Match[str], here: Sequence[Named], before: int, prior: Callable[[], Sequence[Named]]
                ) -> list[int]:
    """Indices into `here` (or, as negative `-1 - i`, into `prior`) of the cases the reference `match` (of `SUBJECT`
    or `OBJECT`) stands for, given the cases named in its sentence (`here`, those starting before `before` count)
    and in the sentence before it (`prior()`, read only when its own names none)."""
    named = [i for i, x in enumerate(here) if x.start < before]
    pool: Sequence[Named] = here
    if not named:
        pool = prior()
        named = list(range(len(pool)))
    last: dict[tuple[str, ...], int] = {}
    for i in named:
        last[pool[i].doc_ids] = i  # one decision named twice ("Booth ... Booth") is one antecedent
    picks = sorted(last.values())
    if match.group("one"):
        picks = picks if len(picks) == 1 else []
    elif match.group("two"):
        picks = picks[-2:] if len(picks) >= 2 else []
    return picks if pool is here else [-1 - i for i in picks]


# A clause starts after ", and", ";" or ":"; within it, a modal or an infinitive makes the act unasserted.
_CLAUSE_START = re.compile(r".*(?:,\s+and\s+|[;:]\s*)", re.S)
_UNASSERTED = re.compile(r"\b(?:would|should|could|might|may|must|will|to)\s+(?:\w+ly\s+)?$|"
                         r"\b(?:would|should|could|might|may|must|if|whether|unless)\b", re.I)


def asserted(before: str) -> bool:
    """Whether a verb whose object is a reference is asserted by its clause (`before`: the sentence up to the
    verb): "and we overrule it", not "in order to overturn it" or "the Court would have to ... overturn it"."""
    m = _CLAUSE_START.match(before)
    return _UNASSERTED.search(before[m.end():] if m else before) is None
