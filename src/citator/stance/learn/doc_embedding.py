"""Fit the learned document vectors: a softmax over the whole corpus, one class per document.

The query vectors are fixed (the fine-tuned encoder's encodings of the training queries); only one offset per
document is learned, pulled back to zero by an L2 penalty: documents move only as far as the training queries
pull them (their own) or push them (the others').
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from tqdm import tqdm


def fit_document_deltas(
    query_vectors: np.ndarray, positives: Sequence[Sequence[int]], base: np.ndarray, l2: float = 3.0,
    temperature: float = 0.05, steps: int = 60, learning_rate: float = 0.02, progress: bool = True,
) -> tuple[np.ndarray, dict[str, float]]:
    """Offsets (n_docs, dim) such that normalise(base + offset) ranks each query's documents first."""
    import torch
    import torch.nn.functional as F

    keep = [i for i, p in enumerate(positives) if len(p)]
    if not keep:
        return np.zeros_like(base, dtype=np.float32), {"steps": 0.0}
    x = torch.from_numpy(np.asarray(query_vectors, dtype=np.float32)[keep])
    target = torch.zeros((len(keep), len(base)), dtype=torch.bool)
    for row, i in enumerate(keep):
        target[row, list(positives[i])] = True
    start = torch.from_numpy(np.asarray(base, dtype=np.float32))
    delta = torch.zeros_like(start, requires_grad=True)
    optimizer = torch.optim.Adam([delta], lr=learning_rate)
    losses = []
    for _ in tqdm(range(steps), desc="document vectors", disable=not progress):
        logits = x @ F.normalize(start + delta, dim=1).T / temperature
        nll = (torch.logsumexp(logits, 1) - torch.logsumexp(logits.masked_fill(~target, -1e9), 1)).mean()
        loss = nll + l2 * (delta**2).sum(1).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(nll.item())
    return delta.detach().numpy(), {"steps": float(steps), "nll_first": losses[0], "nll_last": losses[-1]}
