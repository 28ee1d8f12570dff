"""What a pronoun or a plural noun in a treatment sentence stands for: "we abandon it today", "and it is
repudiated", "both decisions are overruled", "That decision is overruled." (after a sentence that names one case).

A reference is resolved only where a reader could not doubt it, and only for the Court's own act:
- what it may stand for: the decisions its sentence names before it (or, where the sentence names none, those the
  sentence before names), each named as what the sentence is about ("Ohio v. Roberts admitted ...", "the test of
  Grady v. Corbin was ..."), not as a word's object ("objected under X", "relying on X": "it" is the objection);
- how many: "it" and "that decision" one decision, "both" exactly two, "they" and "those decisions" two or more;
- nothing else it could stand for in between ("X construed the statute, and it is abrogated": the statute);
- who acts: "we" or the Court, in the present ("we overrule it", "we hold that it is overruled", "and it is
  overruled"), or a summary's Court ("The majority concluded ..., and overruled it"); never a party, a State,
  another decision, a time gone by ("it was overruled in 1943", "the Court later overruled it", "until it was
  overruled") or a question.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Protocol

from citator.stance.treat.cues import CONNECTIVE, NOUNS

# Before a `before` cue: its subject when that is no case name ("and it is repudiated", "Both decisions are").
SUBJECT = re.compile(
    r"(?<![\w'’])(?:(?P<one>it|that\s+(?:decision|case|holding|precedent))|"
    r"(?P<two>both(?:\s+of\s+(?:those|these|the|them))?(?:\s+(?:decisions|cases|precedents|holdings))?|"
    r"(?:the\s+)?two\s+(?:decisions|cases|precedents))|"
    r"(?P<all>they|(?:those|these|such)\s+(?:decisions|cases|precedents|holdings)))"
    r"\s*,?\s*(?:(?:therefore|thus|now|hereby|also|accordingly|likewise|too|both|each|today),?\s+)*$", re.I)
# After an `after` cue: its object ("we overrule it", "abandon them today", "overrules both").
# "both" and "them" are followed by no other noun ("the Court overruled both objections" overrules no case).
OBJECT = re.compile(r"\s+(?:(?P<one>it|that\s+decision|that\s+case)|(?P<two>both(?:\s+(?:decisions|cases))?)|"
                    r"(?P<all>them|those\s+(?:decisions|cases)))\b"
                    r"(?!['’]s|\s+(?:to|that|is|was|as|of)\b|\s+[a-z]+s\b)", re.I)

# What opens the clause of a `before` cue's reference: the sentence or clause itself, a connective, or the Court's
# own holding ("we make clear today that it is repudiated"); not "until", "since", "respondent says", "to say that".
_OPENS = re.compile(
    r"(?:^|[;:]\s*|,\s+and\s+|\b(?:we|the\s+Court|this\s+Court|the\s+majority)\s+(?:\w+\s+){0,3}?"
    r"(?:hold|holds|held|conclude[sd]?|make\s+clear|made\s+clear|decide[sd]?|rule[sd]?)\s+(?:today\s+)?that\s+|"
    rf"(?:,\s*so|{CONNECTIVE})\s*,?\s*)$", re.I)
# Who may act on a reference with an `after` cue: we, the Court, or nobody named after ", and" (the sentence's own).
_ACTOR = re.compile(r"(?:\b(?:we|the\s+(?:Supreme\s+)?Court|this\s+Court|the\s+majority|the\s+plurality)|^|,?\s+and)"
                    r"\s*(?:(?:now|today|hereby|therefore|thus|accordingly|also|largely|expressly|explicitly)\s+)*$",
                    re.I)
_COURT_SENTENCE = re.compile(r"^\s*(?:Conclusion:\s*(?:(?:Yes|No)\.\s*)?)?(?:In\s+an?\s+[^,]{0,60},\s*)?(?:we|the\s+"
                             r"(?:Supreme\s+)?Court|this\s+Court|the\s+majority|the\s+plurality)\b", re.I)
# A time gone by, a question or a condition in the reference's clause: history or no act.
_ANOTHER_TIME = re.compile(r"\b(?:later|subsequently|eventually|since|ago|afterwards?|then|once|previously|formerly|"
                           r"until|before|after|unless|if|when|having|\d{4}|years?|decades?|(?:has|have|had)\s+been)\b",
                           re.I)
# A case named as a word's object is what the sentence relies on, not what a later "it" stands for.
_OBJECT_LEAD = re.compile(
    r"\b(?:under|on|upon|in|with|from|to|by|against|for|at|about|like|than|cit(?:e|es|ed|ing)|invok\w*|"
    r"appl(?:y|ies|ied|ying)|follow(?:s|ed|ing)?|constru\w*|distinguish\w*|overrul\w*|overturn\w*|revers\w*|"
    r"affirm\w*|reli\w*|rely\w*|discuss\w*|read|reading|extend\w*|quot\w*)\s+(?:the\s+)?$", re.I)
# ... unless it names the rule's source: "the test of X", "the rule of A, reaffirmed in B,".
_RULE_LEAD = re.compile(rf"\b{NOUNS}[’'\"”]?\s+(?:\w+\s+){{0,3}}?(?:of|in|from)\s+(?:the\s+)?$|"
                        r",\s*(?:later\s+|also\s+)?(?:reaffirmed|extended|followed|adopted|reiterated)\s+(?:in|by)\s+$",
                        re.I)
# What else "it" or "they" may stand for, named between the case and the reference.
_THINGS = ("objection", "exception", "motion", "claim", "argument", "statute", "law", "provision", "regulation",
           "ordinance", "challenge", "judgment", "conviction", "sentence", "order", "petition", "request",
           "contention", "appeal", "suit", "complaint", "charge", "count", "practice", "program", "plan", "act",
           "amendment", "bill", "contract", "agreement", "scheme", "defense", "theory", "policy", "tax")
_PLURAL = {"defense": "defenses", "theory": "theories", "policy": "policies", "tax": "taxes"}
_THING = {number: re.compile(rf"\b(?:{'|'.join(words)})\b", re.I) for number, words in (
    ("one", _THINGS), ("many", tuple(_PLURAL.get(w, w + "s") for w in _THINGS)))}
_TITLE = re.compile(r"\bv\.\s")  # a case's title, named whether or not the corpus holds it
_LIST_GAP = re.compile(r"[\s,]*(?:and\s+|or\s+)?(?:the\s+)?$", re.I)


class Named(Protocol):
    """A case named in the text: where, and which decision (the records that report it)."""

    @property
    def start(self) -> int: ...

    @property
    def end(self) -> int: ...

    @property
    def doc_ids(self) -> tuple[str, ...]: ...


def opens_clause(lead: str, cue_text: str) -> bool:
    """Whether a `before` cue (`cue_text`) whose subject is a reference says the Court's act: the reference opens
    its clause (`lead`: the sentence up to it) and the cue is in the present ("it is overruled", "it should be and
    now is overruled", not "it was")."""
    return _OPENS.search(lead) is not None and _NOW.match(cue_text) is not None


# "is overruled", "are abandoned", and the formula "should be, and now is, overruled".
_NOW = re.compile(r"(?:is|are)\b|(?:should|must)\s+be,?\s+and\b", re.I)


def court_acts(before: str) -> bool:
    """Whether the Court is the actor of an `after` cue whose object is a reference (`before`: its sentence up to
    the cue): "we" or the Court names itself in the cue's clause, or no one does after ", and" in a sentence whose
    subject is the Court; and no time gone by is told there."""
    start = _CLAUSE_START.match(before)
    clause = before[start.end():] if start else before
    m = _ACTOR.search(clause)
    if m is None or _ANOTHER_TIME.search(clause):
        return False
    named = m.group().lstrip(", ").lower()
    return not (named.strip() == "" or named.startswith("and")) or _COURT_SENTENCE.match(before) is not None


def antecedents(match: re.Match[str], text: str, at: int, here: Sequence[Named], prior: Callable[[], Sequence[Named]]
                ) -> list[int]:
    """Indices into `here` (or, as negative `-1 - i`, into `prior()`) of the decisions the reference `match` (of
    `SUBJECT` or `OBJECT`), at `at` in `text`, stands for; `here`: the cases named in its sentence (those before `at`
    count), `prior()`: in the sentence before (read only when its own names none)."""
    named = [i for i, x in enumerate(here) if x.start < at]
    pool: Sequence[Named] = here
    if not named:
        pool = prior()
        named = list(range(len(pool)))
    last: dict[tuple[str, ...], int] = {}
    for i in named:
        last[pool[i].doc_ids] = i  # one decision named twice ("Booth ... Booth") is one antecedent
    picks = sorted(last.values())
    if match.group("one"):
        wanted = len(picks) == 1
    elif match.group("two"):  # two decisions named, one of them perhaps outside the corpus (no mention)
        wanted = len(picks) == 2 or (len(picks) == 1 and len(_TITLE.findall(text, pool[picks[0]].start, at)) == 2)
    else:
        wanted = len(picks) >= 2
    other = _THING["one" if match.group("one") else "many"].search(text, pool[picks[-1]].end, at) if picks else None
    if not wanted or not all(_about(text, pool, i) for i in picks) or other:
        return []
    return picks if pool is here else [-1 - i for i in picks]


def _about(text: str, pool: Sequence[Named], i: int) -> bool:
    """Whether case `i` of `pool` is named as what its sentence is about, not as a word's object; a case listed
    after another ("A and B") is read by the list's first."""
    while i > 0 and _LIST_GAP.fullmatch(text[pool[i - 1].end:pool[i].start]):
        i -= 1
    lead = text[max(0, pool[i].start - 60):pool[i].start]
    return not _OBJECT_LEAD.search(lead) or _RULE_LEAD.search(lead) is not None


# A clause starts after ", and", ";" or ":"; within it, a modal or an infinitive makes the act unasserted.
_CLAUSE_START = re.compile(r".*(?:,\s+and\s+|[;:]\s*)", re.S)
_UNASSERTED = re.compile(r"\b(?:would|should|could|might|may|must|will|to)\s+(?:\w+ly\s+)?$|"
                         r"\b(?:would|should|could|might|may|must|if|whether|unless)\b", re.I)


def asserted(before: str) -> bool:
    """Whether a verb whose object is a reference is asserted by its clause (`before`: the sentence up to the
    verb): "and we overrule it", not "in order to overturn it" or "the Court would have to ... overturn it"."""
    m = _CLAUSE_START.match(before)
    return _UNASSERTED.search(before[m.end():] if m else before) is None
