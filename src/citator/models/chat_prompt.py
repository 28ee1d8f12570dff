"""Chat prompts as token ids: the template's control tokens are special, the messages' text is only ever text.

Tokenizing the rendered template whole would read `<|im_end|>\\n<|im_start|>system` typed inside a message as real
turn markers, letting any message forge a system turn. So each message's special-token strings are hidden behind
placeholders while the template renders; the rendered text is then cut at the special tokens that remain (the
template's own), those become their ids, and every piece between them is encoded with special tokens split, the
placeholders first put back. Where no message holds special-token text (or the private-use marker) the ids are
the plain tokenizer's on the rendered prompt, whatever its pre-tokenizer.

Non-special added tokens (Qwen3's `<think>`, `<tool_call>`) are ordinary vocabulary: the tokenizer produces them
from plain text too, and they open or close no turn.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping, Sequence
from typing import Any

# A private-use character: marks a hidden string in the rendered text. A message's own copies of it are hidden too,
# so every marker in the rendered text is one this module wrote.
_HIDE = "\ue000"
_HIDDEN = re.compile(f"{_HIDE}(\\d+){_HIDE}")


class ChatPrompt:
    """Renders messages with a tokenizer's chat template (generation prompt on, thinking off) into input ids."""

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer
        special = [t for t in tokenizer.added_tokens_decoder.values() if t.special]
        # Longest first, so a token that another one begins with never wins; strip flags widen a match as the
        # tokenizer's own added-token pass does.
        special.sort(key=lambda t: len(t.content), reverse=True)
        self._ids = {t.content: tokenizer.convert_tokens_to_ids(t.content) for t in special}
        self._control = re.compile("|".join(
            (r"\s*" if t.lstrip else "") + f"({re.escape(t.content)})" + (r"\s*" if t.rstrip else "") for t in special
        ) or "(?!)")
        self._in_text = re.compile("|".join([*(re.escape(t.content) for t in special), _HIDE]))
        backend = getattr(tokenizer, "backend_tokenizer", None)
        # A copy that splits special tokens into text, so the shared tokenizer's own setting is never flipped: the
        # provider server tokenizes from several threads at once.
        self._plain = copy.deepcopy(backend) if backend is not None else None
        if self._plain is not None:
            self._plain.encode_special_tokens = True

    def ids(self, messages: Sequence[Mapping[str, str]]) -> list[int]:
        """The prompt's input ids: template control tokens as ids, message text encoded as text."""
        hidden: list[str] = []

        def hide(match: re.Match[str]) -> str:
            hidden.append(match.group())
            return f"{_HIDE}{len(hidden) - 1}{_HIDE}"

        safe = [{**m, "content": self._in_text.sub(hide, m["content"])} if isinstance(m.get("content"), str)
                else dict(m) for m in messages]
        rendered: str = self.tokenizer.apply_chat_template(
            safe, tokenize=False, add_generation_prompt=True, enable_thinking=False
        )
        if not hidden:  # no message holds special-token text: the tokenizer's own ids, exactly
            return list(self.tokenizer(rendered, add_special_tokens=False)["input_ids"])
        ids: list[int] = []
        start = 0
        for match in self._control.finditer(rendered):
            ids += self._text_ids(rendered[start:match.start()], hidden)
            ids.append(self._ids[match.group(match.lastindex or 0)])
            start = match.end()
        ids += self._text_ids(rendered[start:], hidden)
        return ids

    def _text_ids(self, text: str, hidden: list[str]) -> list[int]:
        if not text:
            return []
        text = _HIDDEN.sub(lambda m: hidden[int(m.group(1))], text)
        if self._plain is not None:
            return self._plain.encode(text, add_special_tokens=False).ids
        # A Python tokenizer takes the setting per call.
        return self.tokenizer(text, add_special_tokens=False, split_special_tokens=True)["input_ids"]
