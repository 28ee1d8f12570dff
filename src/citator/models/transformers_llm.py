"""LLMBackend over a local transformers causal LM directory (Qwen3 chat template, thinking disabled)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import cast

from citator.errors import ConfigError
from citator.models.chat_prompt import ChatPrompt
from citator.models.directory import loading, read_config
from citator.models.llm import Generation, LLMBackend, Message


class TransformersLLM(LLMBackend):
    """Loads `model_dir` offline; never downloads anything."""

    def __init__(
        self, model_dir: str | Path, *, attention: str = "sdpa", cpu_threads: int | None = None, device: str | None = None
    ) -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        path = Path(model_dir)
        read_config(path)
        if attention not in ("sdpa", "eager"):
            raise ConfigError(f'attention must be "sdpa" or "eager", got {attention!r}')
        if cpu_threads is not None:
            torch.set_num_threads(cpu_threads)
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        dtype = torch.bfloat16 if self.device.startswith("cuda") else torch.float32
        with loading(path):
            self.tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
            self.model = AutoModelForCausalLM.from_pretrained(
                path, local_files_only=True, dtype=dtype, attn_implementation=attention
            ).to(self.device)  # type: ignore[arg-type]  # `to` takes a device: transformers' wrapper hides that
        self.model.eval()
        self.model_id = _model_id(path)
        self.chat_prompt = ChatPrompt(self.tokenizer)

    def prompt_ids(self, messages: Sequence[Message]) -> list[int]:
        """The input ids of `messages` under the chat template; message text never becomes a control token."""
        return self.chat_prompt.ids(messages)

    def count(self, messages: Sequence[Message]) -> int:
        return len(self.prompt_ids(messages))

    def first_token_ids(self, strings: Sequence[str]) -> tuple[list[int], tuple[str, ...]]:
        """The first token id of each string, and which strings span several tokens."""
        ids, multi = [], []
        for s in strings:
            toks = self.tokenizer(s, add_special_tokens=False)["input_ids"]
            if not toks:
                raise ValueError(f"logprob token {s!r} encodes to no tokens")
            ids.append(toks[0])
            if len(toks) > 1:
                multi.append(s)
        return ids, tuple(multi)

    def generate(
        self, messages: Sequence[Message], max_new_tokens: int, logprob_tokens: Sequence[str] = ()
    ) -> Generation:
        import torch

        input_ids = self.prompt_ids(messages)
        tensor = torch.tensor([input_ids], device=self.device)
        with torch.inference_mode():
            out = self.model.generate(
                tensor,
                attention_mask=torch.ones_like(tensor),
                max_new_tokens=max_new_tokens,
                do_sample=False,
                output_logits=bool(logprob_tokens),
                return_dict_in_generate=True,
                pad_token_id=self.tokenizer.pad_token_id or self.tokenizer.eos_token_id,
            )
        new_tokens = out.sequences[0, len(input_ids):].tolist()
        logprobs: dict[str, float] = {}
        multi: tuple[str, ...] = ()
        if logprob_tokens:
            ids, multi = self.first_token_ids(logprob_tokens)
            first = torch.log_softmax(out.logits[0][0].float(), dim=-1)
            logprobs = {s: float(first[i]) for s, i in zip(logprob_tokens, ids)}
        text = cast(str, self.tokenizer.decode(new_tokens, skip_special_tokens=True))  # one sequence: one string
        return Generation(text, len(input_ids), len(new_tokens), logprobs, multi)


def _model_id(path: Path) -> str:
    return f"{path.name}:{read_config(path).get('model_type', 'unknown')}"
