"""Text that came from data, escaped for where it is written: a JSON line, a Markdown cell.

A terminal line is `errors.one_line`; an HTML page is Jinja2's autoescape. Each escape keeps every character
of the text recoverable (a reader of the JSON gets the text back exactly; Markdown renders it as the text), and
none lets the text act in its medium: no markup, no cell or line break, no terminal control sequence.
"""

from __future__ import annotations

import json
import re
from typing import Any

from citator.errors import UNSAFE_CHARS, one_line

# Characters Markdown (CommonMark with tables and strikethrough) reads as markup anywhere in a line.
_MARKUP = re.compile(r"([\\`*_\[\]|#~!])")
_SPACE = re.compile(r"\s+")


def json_line(obj: Any) -> str:
    """`obj` as one line of JSON, non-ASCII text kept readable, but every character a terminal would act on
    (UNSAFE_CHARS: C0 and C1 controls, DEL, line separators, bidi controls, lone surrogates) written as a
    `\\uXXXX` escape: `json.loads` gives back exactly `obj`'s text."""
    return UNSAFE_CHARS.sub(lambda m: f"\\u{ord(m.group()):04x}", json.dumps(obj, ensure_ascii=False))


def markdown_text(text: str) -> str:
    """`text` safe anywhere inside a Markdown table cell or heading: runs of white space one space (kept, not
    stripped: a marked term keeps its neighbours' spaces), other unsafe characters as visible escapes
    (one_line), `&`, `<` and `>` as entities (no HTML), and every markup character backslash-escaped (no
    emphasis, link, code span, heading or cell break)."""
    text = one_line(_SPACE.sub(" ", text))
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _MARKUP.sub(r"\\\1", text)
