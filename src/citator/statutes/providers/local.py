"""The local grader: a transformers causal LM answering OpenAI-shaped chat requests in-process."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any, cast

from citator.errors import ProviderError
from citator.models.transformers_llm import TransformersLLM
from citator.models.fingerprint import model_fingerprint
from citator.statutes.providers.base import ChatProvider, Exchange
from citator.statutes.providers.chat_request import RequestRejected, error_body, parse_chat_request

MAX_TOKENS_CAP = 512


def _context_window(config: Any) -> int:
    """The model's context length in tokens, from its config."""
    for name in ("max_position_embeddings", "n_positions", "max_sequence_length"):
        value = getattr(config, name, None)
        if isinstance(value, int) and value > 0:
            return value
    raise ProviderError("the model config names no context length (max_position_embeddings)")


def _cut_at_stop(texts: list[str], stop: tuple[str, ...]) -> tuple[int, int] | None:
    """(tokens kept, characters kept) when a stop sequence appears in the joined token texts; None otherwise."""
    joined = "".join(texts)
    found = [joined.find(s) for s in stop if s in joined]
    if not found:
        return None
    cut = min(found)
    pos = 0
    for n, text in enumerate(texts):
        if pos >= cut:
            return n, cut
        pos += len(text)
    return len(texts), cut


class LocalChatModel:
    """Greedy chat completions with per-token top log-probabilities over a local model directory."""

    def __init__(self, model_dir: str | Path, *, device: str | None = None, max_tokens_cap: int = MAX_TOKENS_CAP,
                 max_context_tokens: int | None = None) -> None:
        self.llm = TransformersLLM(model_dir, device=device)
        self.model_id = self.llm.model_id
        self.max_tokens_cap = max_tokens_cap
        window = _context_window(self.llm.model.config)
        if max_context_tokens is not None and max_context_tokens < 1:
            raise ProviderError(f"the context limit must be a positive number of tokens, got {max_context_tokens}")
        self.context_tokens = min(window, max_context_tokens) if max_context_tokens else window
        # One model, one generation at a time: a server may call from several threads.
        self._lock = threading.Lock()

    def chat_completion(self, payload: Mapping[str, Any]) -> dict[str, Any]:
        """Serve one OpenAI chat-completions body; raise RequestRejected for requests it cannot honour."""
        import torch

        request = parse_chat_request(payload, max_tokens_cap=self.max_tokens_cap)
        tok = self.llm.tokenizer
        input_ids = self.llm.prompt_ids([{"role": role, "content": text} for role, text in request.messages])
        # Refused before any model work: prompt and completion must fit the context window together.
        if len(input_ids) + request.max_tokens > self.context_tokens:
            raise RequestRejected(
                f"This model's maximum context length is {self.context_tokens} tokens. However, you requested "
                f"{len(input_ids) + request.max_tokens} tokens ({len(input_ids)} in the messages, "
                f"{request.max_tokens} in the completion). Please reduce the length of the messages or completion.",
                "messages", "context_length_exceeded")
        stop_kwargs: dict[str, Any] = {"stop_strings": list(request.stop), "tokenizer": tok} if request.stop else {}
        with self._lock, torch.inference_mode():
            tensor = torch.tensor([input_ids], device=self.llm.device)
            out = self.llm.model.generate(
                tensor, attention_mask=torch.ones_like(tensor), max_new_tokens=request.max_tokens, do_sample=False,
                output_logits=True, return_dict_in_generate=True,
                pad_token_id=tok.pad_token_id or tok.eos_token_id, **stop_kwargs,
            )
        new = out.sequences[0, len(input_ids):].tolist()
        special = set(tok.all_special_ids)
        kept: list[int] = []
        finish = "length"
        for token_id in new:
            if token_id in special:
                finish = "stop"
                break
            kept.append(token_id)
        # One sequence decodes to one string (the stub's other answer, a list, is a batch's).
        content = cast(str, tok.decode(kept, skip_special_tokens=True))
        texts = [cast(str, tok.decode([t])) for t in kept]
        cut = _cut_at_stop(texts, request.stop) if request.stop else None
        if cut is not None:
            # The stop sequence and what follows it are not returned (OpenAI's rule); the token that holds the
            # sequence's start keeps only its text before it.
            n, chars = cut
            kept, content, finish = kept[:n], "".join(texts)[:chars], "stop"
            texts = texts[:n]
            if texts:
                texts[-1] = texts[-1][: max(0, chars - sum(len(t) for t in texts[:-1]))]
        entries = []
        if request.logprobs:
            for step, (token_id, text) in enumerate(zip(kept, texts)):
                logp = torch.log_softmax(out.logits[step][0].float(), dim=-1)
                alts = []
                if request.top_logprobs:
                    values, ids = torch.topk(logp, request.top_logprobs)
                    for v, i in zip(values.tolist(), ids.tolist()):
                        token = cast(str, tok.decode([i]))
                        alts.append({"token": token, "logprob": float(v), "bytes": list(token.encode())})
                entries.append({"token": text, "logprob": float(logp[token_id]), "bytes": list(text.encode()),
                                "top_logprobs": alts})
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": request.model or self.model_id,
            "system_fingerprint": None,
            "choices": [{
                "index": 0,
                "message": {"role": "assistant", "content": content, "refusal": None},
                "finish_reason": finish,
                "logprobs": {"content": entries, "refusal": None} if request.logprobs else None,
            }],
            "usage": {"prompt_tokens": len(input_ids), "completion_tokens": len(new),
                      "total_tokens": len(input_ids) + len(new)},
        }


class LocalProvider(ChatProvider):
    """Grades with a local model directory in this process; metered like any other chat provider."""

    name = "local"

    def __init__(self, model_dir: str | Path, *, device: str | None = None) -> None:
        if not (Path(model_dir) / "config.json").is_file():
            raise ProviderError(f"{model_dir}: not a model directory (no config.json); give --model DIR")
        self.backend = LocalChatModel(model_dir, device=device)
        self.model = self.backend.model_id
        self.version = f"sha256:{model_fingerprint(model_dir)[:16]}"

    def describe(self) -> dict[str, Any]:
        return {"provider": self.name, "model": self.model, "version": self.version}

    def send(self, payload: Mapping[str, Any]) -> Exchange:
        try:
            return Exchange(200, self.backend.chat_completion(payload))
        except RequestRejected as exc:
            return Exchange(400, {"error": error_body(str(exc), exc.param, exc.code)}, str(exc))

