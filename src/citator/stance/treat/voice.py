"""Which sentences of a document speak for the court: only there is a treatment the decision's own.

The parts come from `citator.stance.read.parts` (facts, question, holding, concurrence, dissent). A treatment
counts in the holding, or in a text with no parts at all; never in the facts (what lower courts and parties did),
the question, or a separate opinion. One repair: a summary's line break with no stop before it ("... overruled
Frank v. Maryland\\nJustice Clark dissented") joins two sentences into one that the parts give to the dissent; such
a sentence is cut at its line breaks, and a piece that reports no separate opinion, standing after the court's
words, stays the court's.
"""

from __future__ import annotations

import re

from citator.stance.read.parts import COURT, label_parts, sentences

_SEPARATE = re.compile(r"\b(?:dissent|concur)", re.I)


def court_sentences(text: str) -> list[tuple[int, int]]:
    """The spans of `text`'s sentences that speak for the court, in text order."""
    out: list[tuple[int, int]] = []
    after_court = False
    for part in label_parts(text):
        for a, b in sentences(text, part.start, part.end):
            if part.kind in COURT:
                out.extend(_lines(text, a, b))
                after_court = True
                continue
            if part.kind in ("concurrence", "dissent") and after_court:
                for x, y in _lines(text, a, b):
                    if _SEPARATE.search(text, x, y):
                        break
                    out.append((x, y))
            after_court = False
    return out


def _lines(text: str, a: int, b: int) -> list[tuple[int, int]]:
    """[a, b) cut at its line breaks, blank pieces left out."""
    out, at = [], a
    for m in re.finditer(r"\n+", text[a:b]):
        out.append((at, a + m.start()))
        at = a + m.end()
    out.append((at, b))
    return [(x, y) for x, y in out if text[x:y].strip()]
