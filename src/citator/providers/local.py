"""The local grader: a transformers causal LM answering OpenAI-shaped chat requests in-process."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from citator.errors import ProviderError
from citator.models.transformers_llm import TransformersLLM
from citator.providers.base import ChatProvider, Exchange, model_digest


class RequestRejected(ValueError):
    """A chat request this backend will not serve (bad shape, sampling asked for)."""


def _messages(payload: Mapping[str, Any]) -> list[dict[str, str]]:
    messages = payload.get("messages")
    if not isinstance(messages, list) or not messages:
        raise RequestRejected("messages must be a non-empty list")
    out = []
    for m in messages:
        if not (isinstance(m, dict) and m.get("role") in ("system", "user", "assistant")
                and isinstance(m.get("content"), str)):
            raise RequestRejected("each message needs a role (system/user/assistant) and string content")
        out.append({"role": m["role"], "content": m["content"]})
    return out


class LocalChatModel:
    """Greedy chat completions with per-token top log-probabilities over a local model directory."""

    def __init__(self, model_dir: str | Path, *, device: str | None = None, max_tokens_cap: int = 512) -> None:
        self.llm = TransformersLLM(model_dir, device=device)
        self.model_id = self.llm.model_id
        self.max_tokens_cap = max_tokens_cap
        # One model, one generation at a time: a server may call from several threads.
        self._lock = threading.Lock()

    def chat_completion(self, payload: Mapping[str, Any]) -> dict[str, Any]:
        """Serve one OpenAI chat-completions body; raise RequestRejected for requests it cannot honour."""
        import torch

        messages = _messages(payload)
        max_tokens = payload.get("max_tokens", payload.get("max_completion_tokens", 64))
        if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or not 1 <= max_tokens <= self.max_tokens_cap:
            raise RequestRejected(f"max_tokens must be an integer in 1..{self.max_tokens_cap}")
        temperature = payload.get("temperature", 0)
        if temperature not in (0, 0.0, None):
            raise RequestRejected("only greedy decoding is served: temperature must be 0")
        want_logprobs = bool(payload.get("logprobs", False))
        top = payload.get("top_logprobs", 0) or 0
        if isinstance(top, bool) or not isinstance(top, int) or not 0 <= top <= 20:
            raise RequestRejected("top_logprobs must be an integer in 0..20")
        tok = self.llm.tokenizer
        rendered = tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=True, enable_thinking=False)
        input_ids = tok(rendered, add_special_tokens=False)["input_ids"]
        with self._lock, torch.inference_mode():
            tensor = torch.tensor([input_ids], device=self.llm.device)
            out = self.llm.model.generate(
                tensor, attention_mask=torch.ones_like(tensor), max_new_tokens=max_tokens, do_sample=False,
                output_logits=True, return_dict_in_generate=True,
                pad_token_id=tok.pad_token_id or tok.eos_token_id,
            )
        new = out.sequences[0, len(input_ids):].tolist()
        special = set(tok.all_special_ids)
        entries, kept = [], []
        finish = "length"
        for step, token_id in enumerate(new):
            if token_id in special:
                finish = "stop"
                break
            kept.append(token_id)
            if want_logprobs:
                logp = torch.log_softmax(out.logits[step][0].float(), dim=-1)
                text = tok.decode([token_id])
                alts = []
                if top:
                    values, ids = torch.topk(logp, top)
                    alts = [{"token": tok.decode([i]), "logprob": float(v), "bytes": list(tok.decode([i]).encode())}
                            for v, i in zip(values.tolist(), ids.tolist())]
                entries.append({"token": text, "logprob": float(logp[token_id]), "bytes": list(text.encode()),
                                "top_logprobs": alts})
        content = tok.decode(kept, skip_special_tokens=True)
        digest = hashlib.sha256(repr((input_ids, new)).encode()).hexdigest()[:24]
        return {
            "id": f"chatcmpl-{digest}",
            "object": "chat.completion",
            "created": 0,
            "model": str(payload.get("model") or self.model_id),
            "choices": [{
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": finish,
                "logprobs": {"content": entries} if want_logprobs else None,
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
        self.version = f"sha256:{model_digest(model_dir)[:16]}"

    def describe(self) -> dict[str, Any]:
        return {"provider": self.name, "model": self.model, "version": self.version}

    def send(self, payload: Mapping[str, Any]) -> Exchange:
        try:
            return Exchange(200, self.backend.chat_completion(payload))
        except RequestRejected as exc:
            return Exchange(400, {"error": {"message": str(exc)}}, str(exc))

