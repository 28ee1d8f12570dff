"""A brief as a terminal table, Markdown or JSON: the three forms `citator brief --format` prints."""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable, Sequence

from citator.data.escape import json_line, markdown_text
from citator.errors import one_line
from citator.stance.brief.evidence import Span, split_marked
from citator.stance.brief.records import FLAG_WORDS, Brief, Hit

FORMATS = ("table", "markdown", "json")
# Words of the evidence passage a table or Markdown row shows (the window with the most matched terms).
EXCERPT_WORDS = 60
WIDTH = 100
_WORD = re.compile(r"\S+")


def excerpt(text: str, marks: Sequence[Span], words: int = EXCERPT_WORDS) -> tuple[str, tuple[Span, ...], bool, bool]:
    """The `words`-word window of `text` holding the most marks (the earliest such window), its marks shifted
    into it, and whether text was cut before / after it."""
    spans = [m.span() for m in _WORD.finditer(text)]
    if len(spans) <= words:
        return text, tuple(marks), False, False
    starts = [s for s, _ in spans]
    best, best_count = 0, -1
    for first in range(0, len(spans) - words + 1):
        lo, hi = spans[first][0], spans[first + words - 1][1]
        count = sum(lo <= m.start and m.end <= hi for m in marks)
        if count > best_count:
            best, best_count = first, count
    lo, hi = starts[best], spans[best + words - 1][1]
    inside = tuple(Span(m.start - lo, m.end - lo) for m in marks if lo <= m.start and m.end <= hi)
    return text[lo:hi], inside, best > 0, best + words < len(spans)


def _as_is(text: str) -> str:
    return text


def marked(text: str, marks: Sequence[Span], before: str, after: str, escape: Callable[[str], str] = _as_is) -> str:
    return "".join(f"{before}{escape(piece)}{after}" if on else escape(piece) for piece, on in split_marked(text, marks))


def _evidence(hit: Hit, before: str, after: str, escape: Callable[[str], str] = _as_is) -> str:
    text, marks, cut_before, cut_after = excerpt(hit.evidence.text, hit.evidence.marks)
    body = marked(text, marks, before, after, escape)
    # A passage from a dissent or a concurrence is no statement of what the court held: it says so first.
    opinion = hit.evidence.separate_opinion
    said = escape(f"[from the {opinion}, not the holding] ") if opinion else ""
    return said + ("… " if cut_before else "") + body + (" …" if cut_after else "")


def _signals(hit: Hit) -> str:
    """Why it ranked, in raw scores: the fused score the ranking sorted by, then each signal's score and rank. (Not on
    the authority's own line: a fused score has no scale a reader can act on; its rank does.)"""
    families: dict[str, list[str]] = {}
    for s in hit.signals:
        families.setdefault(s.family, []).append(f"{s.name} {s.score:.3f} (#{s.rank})")
    parts = [f"{family}: {', '.join(names)}" for family, names in families.items()] or ["none recorded"]
    return "; ".join([f"fused {hit.score:.4f}", *parts])


def _cited(hit: Hit) -> list[str]:
    """The hit's short citation, decision date, court and opinion address, where its metadata has them."""
    meta = hit.metadata
    parts = [hit.citation] if hit.citation else []
    parts += [f"decided {meta['date']}"] if "date" in meta else []
    parts += [str(meta[key]) for key in ("court", "url") if key in meta]
    return parts


def _memory(hit: Hit) -> list[str]:
    if hit.memory is None:
        return ["no trained memory"]
    if not hit.memory:
        return ["no training proposition cites it"]
    return [f"{m.stance} by \"{m.text}\" ({m.proposition_id}, similarity {m.similarity:.2f})" for m in hit.memory]


def caution(hit: Hit) -> str | None:
    """A flagged hit's warning in words, with its reasons: 'RED FLAG: no longer good law: overruled by Citizens
    United v. Federal Election Commission (2008.08-205): "..."' (None for a hit with no flag)."""
    if hit.flag is None:
        return None
    reasons = "; ".join(f'{c.treated} by {c.title} ({c.doc_id}): "{c.passage}"' if c.passage
                        else f"{c.treated} by {c.title} ({c.doc_id})" for c in hit.reasons)
    return f"{hit.flag.upper()} FLAG: {FLAG_WORDS[hit.flag]}" + (f": {reasons}" if reasons else "")


def _cited_by(hit: Hit) -> list[str]:
    """The treatments of the hit besides its flag's reasons ("cited by")."""
    return [f"{c.treated} by {c.title} ({c.doc_id})" for c in hit.cited_by if c not in hit.reasons]


def _plain(text: str) -> str:
    """One terminal line: runs of white space one space, anything else unprintable escaped (errors.one_line)."""
    return one_line(" ".join(text.split()))


def _narrowed(brief: Brief, text: Callable[[str], str]) -> list[str]:
    """The line that says a brief holds only the authority meeting its filters (none when it was not narrowed)."""
    return [text("Only documents that meet: " + " AND ".join(brief.filters))] if brief.filters else []


def table(brief: Brief) -> str:
    """Plain text for a terminal: per stance, each authority with its evidence and reasons."""
    # Corpus text reaches a terminal here: every field is made one printable line first (no escape sequences).
    lines = [f"Proposition: {_plain(brief.proposition)}", *_narrowed(brief, _plain), ""]
    wrap = lambda text, indent: textwrap.fill(_plain(text), WIDTH, initial_indent=indent,  # noqa: E731
                                              subsequent_indent=indent)
    for _, heading, hits in brief.columns():
        lines.append(heading.upper() if brief.stance_ranked else heading)
        if not hits:
            lines.append("  (no documents)")
        for hit in hits:
            header = f"{hit.title} | {hit.label} | {hit.doc_id}"
            lines.append(f"{hit.rank:>3}. {_plain(header)}")
            if _cited(hit):
                lines.append(wrap("cite: " + " | ".join(_cited(hit)), "     "))
            warning = caution(hit)
            if warning:
                lines.append(wrap(warning, "     "))
            lines.append(wrap(f"passage {hit.evidence.passage + 1} ({hit.evidence.signal} {hit.evidence.score:.3f}): "
                              + _evidence(hit, "*", "*"), "     "))
            lines.append(wrap("signals: " + _signals(hit), "     "))
            for reason in _memory(hit):
                lines.append(wrap("memory: " + reason, "     "))
            for treated in _cited_by(hit):
                lines.append(wrap("cited by: " + treated, "     "))
        lines.append("")
    return "\n".join(lines)


def markdown(brief: Brief) -> str:
    """A Markdown section per stance: a table of authorities, evidence (matched terms bold) and reasons."""
    out = [f"### Proposition: {markdown_text(brief.proposition)}", *_narrowed(brief, markdown_text), ""]
    for _, heading, hits in brief.columns():
        out += [f"#### {heading}", ""]
        if not hits:
            out += ["No documents.", ""]
            continue
        out += ["| # | Authority | Evidence | Why |", "|---|---|---|---|"]
        for hit in hits:
            # Every field from data through markdown_text; the id is shown as code by a tag (a code span would
            # show the escapes themselves).
            authority = (f"**{markdown_text(hit.title)}**<br>{markdown_text(hit.label)}<br>"
                         f"<code>{markdown_text(hit.doc_id)}</code>"
                         + "".join(f"<br>{markdown_text(part)}" for part in _cited(hit)))
            warning = caution(hit)
            if warning:
                authority += f"<br>**{markdown_text(warning)}**"
            why = "<br>".join(markdown_text(line) for line in ["signals: " + _signals(hit)]
                              + ["memory: " + r for r in _memory(hit)] + ["cited by: " + c for c in _cited_by(hit)])
            evidence = _evidence(hit, "**", "**", markdown_text)
            out.append(f"| {hit.rank} | {authority} | {evidence} | {why} |")
        out.append("")
    return "\n".join(out)


def render(brief: Brief, fmt: str) -> str:
    if fmt == "json":
        return json_line(brief.to_json())
    return markdown(brief) if fmt == "markdown" else table(brief)
