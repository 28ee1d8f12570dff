"""The parts of a court document: facts, question, holding, and the separate opinions (concurrence, dissent).

A stance is read against what the court *held*, never against what a dissent argued: a dissent states the
opposite of the holding in the holding's own words, so a reader (or a person skimming an evidence passage) that
took it for the holding would read the case backwards. This module finds the parts by what the text itself says:

- Case summaries in the Oyez form ("Facts of the case: ...", "Question: ...", "Conclusion: ...") have their three
  parts by heading; inside the conclusion, a sentence that reports a dissent or a concurrence ("Justice X, joined
  by ..., dissented", "In a concurring opinion, ...") opens that opinion's part, and the sentences after it that
  go on describing it ("She argued ...", "The dissent ...") stay in it, until a sentence speaks for the Court again.
- Full opinions mark separate opinions with a heading line ("JUSTICE SCALIA, dissenting.", "Justice Thomas,
  concurring in the judgment.", a line saying only "Dissenting opinion" before a paragraph): everything from such
  a line to the next belongs to that opinion; the text before the first one is the court's.
- Anything else is one part of kind "text": nothing is claimed that the text does not show.

Pure functions over text; spans are characters of the document's text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

KINDS = ("facts", "question", "holding", "concurrence", "dissent", "text")
# The parts that speak for the court: where a stance is read and an evidence passage is taken from.
COURT = ("holding", "text")

_HEADINGS = (("facts", re.compile(r"Facts of the case:\s*")), ("question", re.compile(r"Question:\s*")),
             ("holding", re.compile(r"Conclusion:\s*")))
# A separate opinion's heading line in a full opinion: "JUSTICE SCALIA, dissenting.", or a line that says only
# "Dissenting opinion" (when it heads a paragraph: `_heads_text`).
_OPINION_HEADING = re.compile(
    r"^[ \t]*(?:MR\.\s+|Mr\.\s+)?(?:CHIEF\s+|Chief\s+)?(?:JUSTICE|Justice)\s+[A-Z][\w.'\- ]{1,40},?\s+"
    r"(?:with\s+whom\s+[^\n]{0,200}?\s+)?(?P<kind>dissenting|concurring)\b[^\n]*$|"
    r"^[ \t]*(?P<alone>Dissenting|Concurring|DISSENTING|CONCURRING)\s+(?:opinion|Opinion|OPINION)[ \t]*[.:]?[ \t]*$",
    re.M)
_DISSENT = re.compile(r"\bdissent", re.I)
_CONCUR = re.compile(r"\bconcur(?:s|red|ring|rences?)\b", re.I)
# A sentence that speaks for the court, though it may name the vote or a dissenter in passing.
_COURT_VOICE = re.compile(
    r"^(?:(?:Yes|No)\b[.,;]?\s*)?(?:In an? [\w\s-]{0,40}?(?:decision|opinion|ruling|vote|judgment)\b|"
    r"(?:The|A)\s+(?:Supreme\s+)?Court\b|The majority\b|Writing for\b|With Justice\b[^.]{0,80}\bmajority)", re.I)
# Sentence ends: a stop, then space and a capital or a quote; not after an initial ("John G. Roberts"), a "v." of a
# case name or a common abbreviation.
_SENTENCE_END = re.compile(r"[.!?][\"'”’)]?(\s+)(?=[\"'“‘(]?[A-Z0-9])")
_NOT_AN_END = re.compile(r"(?:\b[A-Z]|\bv|\bvs|\bU\.S|\bMr|\bMrs|\bMs|\bDr|\bJr|\bSr|\bInc|\bCo|\bCorp|\bLtd|\bNo|"
                         r"\bSt|\bArt|\bSec|\bCf|\be\.g|\bi\.e|\bet al|\bId|\bJ|\bJJ|\bApp|\bF|\bSupp)\.[\"'”’)]?$")


@dataclass(frozen=True)
class Part:
    """Characters [start, end) of a document's text, and what that stretch is."""

    kind: str
    start: int
    end: int


def sentences(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """The sentence spans of text[start:end], in characters of `text`, leading and trailing space left out."""
    end = len(text) if end is None else end
    out: list[tuple[int, int]] = []
    at = start
    for m in _SENTENCE_END.finditer(text, start, end):
        if _NOT_AN_END.search(text, max(start, m.start(1) - 8), m.start(1)):
            continue
        out.append((at, m.start(1)))
        at = m.end(1)
    out.append((at, end))
    return [(a + len(text[a:b]) - len(text[a:b].lstrip()), b - (len(text[a:b]) - len(text[a:b].rstrip())))
            for a, b in out if text[a:b].strip()]


def label_parts(text: str) -> tuple[Part, ...]:
    """The parts of `text`, in order, covering every non-blank stretch of it once."""
    if not text.strip():
        return ()
    sections = _oyez_sections(text)
    if sections:
        out: list[Part] = []
        for kind, start, end in sections:
            out.extend(_conclusion_parts(text, start, end) if kind == "holding" else [Part(kind, start, end)])
        return tuple(out)
    return _opinion_parts(text)


def court_spans(text: str) -> tuple[Part, ...]:
    """The parts that speak for the court (the holding, or unlabelled text): where a stance is read."""
    return tuple(p for p in label_parts(text) if p.kind in COURT)


def kind_at(parts: tuple[Part, ...], start: int, end: int) -> str:
    """The kind of the part that holds most of [start, end) ("text" when none does)."""
    best, kind = 0, "text"
    for p in parts:
        overlap = min(end, p.end) - max(start, p.start)
        if overlap > best:
            best, kind = overlap, p.kind
    return kind


def _oyez_sections(text: str) -> list[tuple[str, int, int]]:
    """The (kind, start, end) of each Oyez heading's section, in text order; [] unless the text opens with one."""
    found = []
    for kind, pattern in _HEADINGS:
        m = pattern.search(text)
        if m is not None:
            found.append((m.start(), m.end(), kind))
    found.sort()
    if not found or text[: found[0][0]].strip():
        return []
    out = []
    for i, (_, body, kind) in enumerate(found):
        end = found[i + 1][0] if i + 1 < len(found) else len(text)
        while end > body and text[end - 1].isspace():
            end -= 1
        if end > body:
            out.append((kind, body, end))
    return out


def _conclusion_parts(text: str, start: int, end: int) -> list[Part]:
    """A summary's conclusion cut into the holding and the separate opinions it reports."""
    out: list[Part] = []
    current = "holding"
    for a, b in sentences(text, start, end):
        sentence = text[a:b]
        current = _sentence_kind(sentence, current)
        if out and out[-1].kind == current:
            out[-1] = Part(current, out[-1].start, b)
        else:
            out.append(Part(current, a, b))
    return out


def _sentence_kind(sentence: str, previous: str) -> str:
    """A conclusion's sentence: the court's until a separate opinion is reported; Oyez reports those last, so the
    sentences after one describe it (or the next one it names) until one speaks for the court again."""
    voice = _COURT_VOICE.match(sentence)
    if voice is not None and not (_DISSENT.search(voice.group()) or _CONCUR.search(voice.group())):
        return "holding"
    if _DISSENT.search(sentence):
        return "dissent"
    if _CONCUR.search(sentence):
        return "concurrence"
    return previous


def _heads_text(text: str, m: re.Match[str]) -> bool:
    """Whether a line that says only "Dissenting opinion" heads an opinion: it opens the text or the court's text
    ends before it, and a paragraph follows; not a page's list of links ("Majority Opinion / Dissenting Opinion")."""
    following = next((line.strip() for line in text[m.end():].split("\n", 6)[1:] if line.strip()), "")
    court = text[:m.start()].rstrip()
    return (not court or court.endswith((".", '"', "”", ")"))) and (len(following) >= 60 or following.endswith((".", ":")))


def _opinion_parts(text: str) -> tuple[Part, ...]:
    """A full opinion cut at its separate opinions' headings; one "text" part when it has none."""
    heads = [m for m in _OPINION_HEADING.finditer(text) if not m.group("alone") or _heads_text(text, m)]
    cuts = [(0, "text")] + [(m.start(), "dissent" if (m.group("kind") or m.group("alone")).lower().startswith("dissent")
                             else "concurrence") for m in heads]
    out = []
    for i, (at, kind) in enumerate(cuts):
        end = cuts[i + 1][0] if i + 1 < len(cuts) else len(text)
        body = text[at:end]
        if body.strip():
            lead = len(body) - len(body.lstrip())
            out.append(Part(kind, at + lead, at + len(body.rstrip())))
    return tuple(out)
