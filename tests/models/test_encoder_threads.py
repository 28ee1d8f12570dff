"""One encoder, many threads (a served index answers from a thread pool): each text gets its own vector."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np


def test_threads_sharing_an_encoder_get_what_one_thread_gets(minilm_dir: Path) -> None:
    from citator.models.load import load_encoder

    encoder = load_encoder(minilm_dir, device="cpu")
    # Texts of very different widths: a call padding or cutting to another call's width would show.
    texts = [("land grant " * n).strip() for n in (1, 3, 40, 2, 90, 5, 60, 1)]
    alone = {t: encoder.encode_queries([t], ["all"])[0] for t in texts}
    with ThreadPoolExecutor(max_workers=8) as pool:
        got = list(pool.map(lambda t: (t, encoder.encode_queries([t], ["all"])[0]), texts * 40))
    wrong = [t[:20] for t, v in got if not np.allclose(v, alone[t], atol=1e-5)]
    assert wrong == []
