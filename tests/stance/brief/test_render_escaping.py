"""Every renderer of a brief escapes every field that came from data, for its medium (property tests).

Briefs are generated with hostile ids, titles, citations, propositions, evidence and memory texts
(fixtures/hostile.py: HTML, Markdown markup, cell and line breaks, CSI/OSC terminal sequences, C1 controls, bidi
overrides). Each form is read back the way its reader reads it: Markdown by a CommonMark parser with tables,
JSON by json.loads, the table line by line; what the reader sees must be the data as text, in the structure the
renderer meant.
"""

from __future__ import annotations

import json
import re

from hypothesis import given, settings
from markdown_it import MarkdownIt
from markdown_it.token import Token

from citator.data.escape import json_line, markdown_text
from citator.errors import UNSAFE_CHARS, one_line
from citator.stance.brief.records import ALIKE, UNRANKED, Brief, Hit
from citator.stance.brief.render import caution, excerpt, markdown, render, table
from fixtures.brief import hostile_briefs
from fixtures.hostile import hostile_strings

_MD = MarkdownIt("commonmark").enable("table").enable("strikethrough")
# The only HTML a Markdown brief holds is its own: line breaks in a cell and the id's code tag.
_OWN_HTML = {"<br>", "<code>", "</code>"}


def _flat(text: str) -> str:
    """A field as a terminal or Markdown reader must see it: white space runs one space, unsafe characters as
    escapes."""
    return one_line(re.sub(r"\s+", " ", text))


def _no_raw_controls(out: str) -> None:
    assert not UNSAFE_CHARS.search(out.replace("\n", "")), repr(out)


@settings(max_examples=150, deadline=None)
@given(hostile_briefs())
def test_json_reads_back_as_the_brief_and_carries_no_control_character(brief: Brief) -> None:
    out = render(brief, "json")
    assert "\n" not in out and not UNSAFE_CHARS.search(out)
    assert json.loads(out) == brief.to_json()


@settings(max_examples=150, deadline=None)
@given(hostile_briefs())
def test_a_table_has_its_own_lines_only(brief: Brief) -> None:
    out = table(brief)
    _no_raw_controls(out)
    lines = out.split("\n")
    assert lines[0] == f"Proposition: {_flat(brief.proposition).strip()}"
    titles = ["SUPPORTING AUTHORITY", "REFUTING AUTHORITY"] if brief.stance_ranked else [brief.heading]
    assert [line for line in lines if line in titles + [UNRANKED, ALIKE]] == titles
    # Every other line is a hit's header ("  1. ...") or indented under it: data never starts a line of its own.
    headers = [line for line in lines if re.match(r" {0,2}\d+\. ", line)]
    hits = [h for _, _, column in brief.columns() for h in column]
    assert len(headers) == len(hits)
    for line in lines[1:]:
        assert line in ("", "  (no documents)", *titles) or line in headers or line.startswith("     ")
    for header, hit in zip(headers, hits):
        assert header.endswith(one_line(" ".join(f"| {hit.doc_id}".split())))


def _cells(tokens: list[Token]) -> list[list[list[Token]]]:
    """The body rows of every table, each a list of its cells' inline tokens."""
    rows: list[list[list[Token]]] = []
    in_body = False
    for token in tokens:
        if token.type in ("tbody_open", "tbody_close"):
            in_body = token.type == "tbody_open"
        elif in_body and token.type == "tr_open":
            rows.append([])
        elif in_body and token.type == "inline":
            rows[-1].append(token.children or [])
    return rows


def _text(children: list[Token]) -> str:
    return "".join(c.content for c in children if c.type in ("text", "code_inline"))


def _between_code_tags(children: list[Token]) -> str:
    kinds = [(c.type, c.content) for c in children]
    start, end = kinds.index(("html_inline", "<code>")), kinds.index(("html_inline", "</code>"))
    return _text(children[start + 1:end])


def _evidence(hit: Hit) -> str:
    text, marks, before, after = excerpt(hit.evidence.text, hit.evidence.marks)
    pieces, at = [], 0
    for m in marks:
        pieces += [text[at:m.start], text[m.start:m.end]]
        at = m.end
    pieces.append(text[at:])
    opinion = hit.evidence.separate_opinion
    said = f"[from the {opinion}, not the holding] " if opinion else ""
    return (said + ("… " if before else "") + "".join(_flat(p) for p in pieces) + (" …" if after else "")).strip()


@settings(max_examples=150, deadline=None)
@given(hostile_briefs())
def test_markdown_parses_to_the_tables_it_means_with_every_field_as_text(brief: Brief) -> None:
    out = markdown(brief)
    _no_raw_controls(out)
    tokens = _MD.parse(out)
    # No HTML block, no HTML but the brief's own, no link, image or strikethrough: data never acts as markup.
    assert not [t for t in tokens if t.type == "html_block"]
    inline = [c for t in tokens if t.type == "inline" for c in t.children or []]
    assert {c.content for c in inline if c.type == "html_inline"} <= _OWN_HTML
    assert not [c for c in inline if c.type in ("link_open", "image", "s_open", "code_inline")]
    headings = [t for t in tokens if t.type == "heading_open"]
    columns = brief.columns()
    assert [h.tag for h in headings] == ["h3"] + ["h4"] * len(columns)
    assert [_text(tokens[tokens.index(h) + 1].children or []) for h in headings[1:]] == [c[1] for c in columns]
    heading = tokens[tokens.index(headings[0]) + 1].children or []
    assert _text(heading) == f"Proposition: {_flat(brief.proposition)}".strip()
    rows = _cells(tokens)
    hits = [h for _, _, column in columns for h in column]
    assert len(rows) == len(hits)
    for row, hit in zip(rows, hits):
        assert len(row) == 4
        rank, authority, evidence, why = row
        assert _text(rank) == str(hit.rank)
        assert _between_code_tags(authority) == _flat(hit.doc_id)
        # A flag and its reasons (hostile corpus text too) are the authority's last words, as text, in bold.
        warning = caution(hit)
        assert (warning is None) == (hit.flag is None)
        if warning is not None:
            kinds = [c.type for c in authority if c.content or c.type != "text"]
            assert _text(authority).endswith(_flat(warning).strip()) and kinds[-1] == "strong_close"
        assert _text(evidence).strip() == _evidence(hit)
        assert sum(c.type == "strong_open" for c in evidence) == len(excerpt(hit.evidence.text, hit.evidence.marks)[1])
        assert _text(why).startswith(f"signals: fused {hit.score:.4f}; lexical: bm25 1.500 (#1)")
        assert _text(why).count("cited by: ") == len([c for c in hit.cited_by if c not in hit.reasons])


@settings(max_examples=300, deadline=None)
@given(hostile_strings)
def test_one_markdown_text_is_one_text_token_of_itself(text: str) -> None:
    (paragraph,) = [t for t in _MD.parse("x " + markdown_text(text) + " x") if t.type == "inline"]
    assert [c.type for c in paragraph.children or []] == ["text"]
    assert (paragraph.children or [])[0].content == "x " + _flat(text) + " x"


@settings(max_examples=300, deadline=None)
@given(hostile_strings)
def test_a_json_line_is_the_value_and_no_terminal_acts_on_it(text: str) -> None:
    out = json_line({"id": text, "nested": [text]})
    assert not UNSAFE_CHARS.search(out) and json.loads(out) == {"id": text, "nested": [text]}
