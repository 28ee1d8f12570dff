"""Contrastive fine-tuning of the query side of an encoder against its frozen passage vectors.

The document tower stays as the base encoder built it, so the index needs no second set of passage vectors and
each training step encodes only short queries. That makes the full corpus affordable as negatives: every
query is scored against every document (MaxP over its passages), so in-batch negatives, mined hard negatives
and the opposite-stance documents of the same proposition are all in the softmax, the last ones up-weighted.
"""

from __future__ import annotations

import contextlib
import json
import math
import random
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from tqdm import tqdm

from citator.engines.passages import document_of_passage
from citator.errors import ConfigError

if TYPE_CHECKING:
    import torch
    from transformers import PreTrainedModel

    from citator.models.transformer_encoder import TransformerEncoder


@dataclass(frozen=True)
class QueryExample:
    """A query with its stance, the document indices it should find, and documents it must rank below them."""

    text: str
    stance: str
    positives: tuple[int, ...]
    opposite: tuple[int, ...] = ()


@dataclass(frozen=True)
class FinetuneConfig:
    # Epochs and learning rate as chosen on CaseFacts dev (docs/stance.md); `citator train` takes its defaults here.
    epochs: int = 3
    batch_size: int = 32
    learning_rate: float = 5e-5
    warmup_fraction: float = 0.1
    temperature: float = 0.05
    query_max_length: int = 64
    opposite_weight: float = 5.0
    # Embeddings and the lowest layers stay frozen: half the backward pass, and little to gain from moving them.
    frozen_layers: int = 2
    seed: int = 13
    # Weight of a second, query-to-query InfoNCE: queries citing the same document pull together (batches are
    # drawn as pairs of such queries where there are any). It serves the proposition memory, which matches new
    # queries against training ones; 0 turns it off.
    pair_weight: float = 0.5
    # The forward pass's precision: "fp32", "bf16" (autocast; master weights stay fp32) or "auto" = bf16 on a GPU
    # and on a CPU with bf16 units (AMX or AVX-512 BF16), fp32 elsewhere. See resolve_precision.
    precision: str = "auto"

    def __post_init__(self) -> None:
        from citator.errors import ConfigError

        checks = {"epochs": self.epochs >= 1, "batch_size": self.batch_size >= 1,
                  "learning_rate": math.isfinite(self.learning_rate) and self.learning_rate > 0,
                  "warmup_fraction": 0 <= self.warmup_fraction <= 1,
                  "temperature": math.isfinite(self.temperature) and self.temperature > 0,
                  "query_max_length": self.query_max_length >= 1,
                  "opposite_weight": math.isfinite(self.opposite_weight) and self.opposite_weight > 0,
                  "frozen_layers": self.frozen_layers >= 0,
                  "pair_weight": math.isfinite(self.pair_weight) and self.pair_weight >= 0,
                  "precision": self.precision in PRECISIONS}
        bad = [name for name, ok in checks.items() if not ok]
        if bad:
            raise ConfigError("fine-tuning settings out of range: "
                              + ", ".join(f"{name}={getattr(self, name)!r}" for name in bad)
                              + " (epochs, batch size and query length at least 1, learning rate, temperature and"
                              " opposite weight positive, warmup fraction in [0, 1], precision one of "
                              + ", ".join(PRECISIONS) + ")")


PRECISIONS = ("auto", "fp32", "bf16")
CPU_BF16_FLAGS = ("amx_bf16", "avx512_bf16")


def cpu_has_bf16_units(cpuinfo: str | None = None) -> bool:
    """Whether this CPU multiplies bf16 natively (AMX or AVX-512 BF16, from /proc/cpuinfo's flags). Elsewhere
    torch emulates bf16 and autocast would be slower than fp32; where /proc/cpuinfo cannot be read, False."""
    if cpuinfo is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return False
    flags = {f for line in cpuinfo.splitlines() if line.startswith("flags") for f in line.split(":", 1)[-1].split()}
    return any(f in flags for f in CPU_BF16_FLAGS)


def training_device() -> str:
    """Where fine-tuning runs: the GPU when there is one."""
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def resolve_precision(requested: str, device: str) -> str:
    """The precision "auto" stands for on `device` ("cuda" or "cpu"); "fp32" and "bf16" stand for themselves.
    On a CPU "auto" needs both the bf16 units and torch's kernels for them.

    bf16 autocast fine-tunes MiniLM 1.3-1.9x as fast per step on a CPU with AMX
    (the finetune_precision probe, docs/probes.md), which keeps `citator train` within 30 minutes on a
    slow hour of the 2-core machine. The encoder it makes is not the fp32 one, so the artifacts' manifest records
    which precision trained them.
    """
    if requested != "auto":
        return requested
    if device.startswith("cuda"):
        return "bf16"
    return "bf16" if cpu_has_bf16_units() and torch_has_cpu_bf16() else "fp32"


def torch_has_cpu_bf16() -> bool:
    """Whether this torch build has oneDNN's bf16 kernels for this CPU."""
    import torch

    return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())


def finetune_query_encoder(
    base_dir: Path, examples: Sequence[QueryExample], passage_vectors: np.ndarray, starts: np.ndarray, out_dir: Path,
    config: FinetuneConfig = FinetuneConfig(), progress: bool = True, query_prefixes: dict[str, str] | None = None,
) -> dict[str, float]:
    """Train a copy of `base_dir` so queries land near their documents' passages; save it to `out_dir`.

    Queries are formatted exactly as the encoder will format them at search time (Qwen3: its instruction;
    others: `query_prefixes`, which are then saved with the model).
    """
    import torch

    from citator.models.load import load_encoder
    from citator.models.transformer_encoder import TransformerEncoder

    torch.manual_seed(config.seed)
    rng = random.Random(config.seed)
    device = training_device()
    # Loaded on the CPU, in fp32, then moved: loaded straight onto a GPU its weights would come rounded to bf16.
    encoder = load_encoder(base_dir, device="cpu")
    if not isinstance(encoder, TransformerEncoder):
        raise ConfigError(f"{base_dir}: fine-tuning needs a transformers encoder, not {encoder.model_id}")
    if query_prefixes and not encoder.instructed:
        encoder.query_prefixes = dict(query_prefixes)
    model = encoder.model
    # Full fine-tuning keeps fp32 master weights; in bf16 the forward pass runs under autocast.
    model.float().to(device).train()
    encoder.device = device
    _freeze_bottom(model, config.frozen_layers)
    target = _Target.of(passage_vectors, starts, config, device)
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=config.learning_rate,
                                  weight_decay=0.01)
    steps = config.epochs * math.ceil(len(examples) / config.batch_size)
    warmup = max(1, int(steps * config.warmup_fraction))
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min(1.0, (s + 1) / warmup) * max(0.0, (steps - s) / max(1, steps - warmup))
    )
    losses: list[float] = []
    bar = tqdm(total=steps, desc="fine-tune", disable=not progress)
    for _ in range(config.epochs):
        if config.pair_weight > 0:
            order = paired_order(examples, rng)
        else:
            order = list(examples)
            rng.shuffle(order)
        for start in range(0, len(order), config.batch_size):
            loss = _batch_loss(encoder, order[start : start + config.batch_size], target, config)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
            losses.append(loss.item())
            bar.update(1)
            bar.set_postfix(loss=f"{sum(losses[-20:]) / len(losses[-20:]):.3f}")
    bar.close()
    _save(encoder, base_dir, out_dir, query_prefixes)
    tenth = max(1, len(losses) // 10)
    return {"steps": float(len(losses)), "loss_first_tenth": sum(losses[:tenth]) / tenth,
            "loss_last_tenth": sum(losses[-tenth:]) / tenth}


@dataclass(frozen=True)
class _Target:
    """What a fine-tuning batch is scored against: the frozen passage vectors, each passage's document, the number
    of documents, the log-weight of an opposite-stance document, the device and the forward pass's precision."""

    passages: torch.Tensor
    doc_of_passage: torch.Tensor
    n_docs: int
    log_opposite: float
    device: str
    bf16: bool

    @classmethod
    def of(cls, passage_vectors: np.ndarray, starts: np.ndarray, config: FinetuneConfig, device: str) -> _Target:
        import torch

        passages = torch.from_numpy(np.asarray(passage_vectors, dtype=np.float32)).to(device)
        doc_of_passage = torch.from_numpy(document_of_passage(starts, len(passages))).to(device)
        return cls(passages, doc_of_passage, len(starts), math.log(config.opposite_weight), device,
                   resolve_precision(config.precision, device) == "bf16")


def _batch_loss(encoder: TransformerEncoder, batch: Sequence[QueryExample], target: _Target,
                config: FinetuneConfig) -> torch.Tensor:
    """The batch's loss: multi-positive InfoNCE over documents (a document scores as its best passage), opposite-
    stance documents weighted up, plus the pair loss."""
    import torch
    import torch.nn.functional as F

    tokens = encoder.tokenizer([encoder.format_query(e.text, e.stance) for e in batch], padding=True, truncation=True,
                               max_length=config.query_max_length, return_tensors="pt").to(target.device)
    autocast = torch.autocast(target.device, dtype=torch.bfloat16) if target.bf16 else contextlib.nullcontext()
    with autocast:
        hidden = encoder.model(**tokens).last_hidden_state
    queries = F.normalize(encoder.pool(hidden, tokens["attention_mask"]).float(), p=2, dim=-1)
    sims = queries @ target.passages.T  # (b, n_passages)
    doc_logits = torch.full((len(batch), target.n_docs), -1e4, device=target.device).scatter_reduce(
        1, target.doc_of_passage.expand(len(batch), -1), sims, reduce="amax", include_self=False
    ) / config.temperature
    positive = torch.zeros_like(doc_logits, dtype=torch.bool)
    for i, e in enumerate(batch):
        positive[i, list(e.positives)] = True
        if e.opposite:
            doc_logits[i, list(e.opposite)] += target.log_opposite
    # Multi-positive InfoNCE: -log of the probability mass on the relevant documents.
    loss = (torch.logsumexp(doc_logits, 1) - torch.logsumexp(doc_logits.masked_fill(~positive, -1e9), 1)).mean()
    if config.pair_weight > 0:
        loss = loss + config.pair_weight * _pair_loss(queries, batch, config.temperature)
    return loss


def _save(encoder: TransformerEncoder, base_dir: Path, out_dir: Path, query_prefixes: dict[str, str] | None) -> None:
    """The fine-tuned encoder into `out_dir`: its weights and tokenizer, its learned query prefixes, and the base's
    sentence-transformers files (pooling, maximum length)."""
    from citator.models.transformer_encoder import QUERY_FORMAT_FILE

    encoder.model.eval()
    out_dir.mkdir(parents=True, exist_ok=True)
    encoder.model.save_pretrained(out_dir)
    encoder.tokenizer.save_pretrained(out_dir)
    if query_prefixes and not encoder.instructed:
        (out_dir / QUERY_FORMAT_FILE).write_text(json.dumps({"query_prefixes": query_prefixes}, indent=2))
    for extra in ("1_Pooling", "sentence_bert_config.json", "modules.json", "config_sentence_transformers.json"):
        src = Path(base_dir) / extra
        if src.is_dir():
            shutil.copytree(src, out_dir / extra, dirs_exist_ok=True)
        elif src.is_file():
            shutil.copy(src, out_dir / extra)


def paired_order(examples: Sequence[QueryExample], rng: random.Random) -> list[QueryExample]:
    """A shuffled epoch in which queries sharing a document come two by two (each query once)."""
    by_doc: dict[int, list[int]] = {}
    for i, e in enumerate(examples):
        for d in e.positives:
            by_doc.setdefault(d, []).append(i)
    used: set[int] = set()
    units: list[list[int]] = []
    doc_order = sorted(by_doc)
    rng.shuffle(doc_order)
    for d in doc_order:
        free = [i for i in by_doc[d] if i not in used]
        rng.shuffle(free)
        while len(free) >= 2:
            pair = [free.pop(), free.pop()]
            used.update(pair)
            units.append(pair)
    units += [[i] for i in range(len(examples)) if i not in used]
    rng.shuffle(units)
    return [examples[i] for unit in units for i in unit]


def _pair_loss(queries: torch.Tensor, batch: Sequence[QueryExample], temperature: float) -> torch.Tensor:
    """Multi-positive InfoNCE among the batch's queries: those citing a common document are each other's positives."""
    import torch

    docs = [set(e.positives) for e in batch]
    same = torch.tensor([[i != j and bool(docs[i] & docs[j]) for j in range(len(batch))] for i in range(len(batch))],
                        device=queries.device)
    has = same.any(1)
    if not has.any():
        return queries.sum() * 0.0
    eye = torch.eye(len(batch), dtype=torch.bool, device=queries.device)
    logits = (queries @ queries.T / temperature).masked_fill(eye, -1e4)
    return (torch.logsumexp(logits, 1) - torch.logsumexp(logits.masked_fill(~same, -1e9), 1))[has].mean()


def _freeze_bottom(model: PreTrainedModel, layers: int) -> None:
    """Freeze the input embeddings and the first `layers` transformer layers (BERT- and Qwen3-style models)."""
    model.get_input_embeddings().weight.requires_grad_(False)
    stack = getattr(getattr(model, "encoder", None), "layer", None) or getattr(model, "layers", None) or []
    for layer in list(stack)[:layers]:
        for p in layer.parameters():
            p.requires_grad_(False)
