"""Lexical document-side expansion: documents followed by the training propositions that cite them."""

from __future__ import annotations

import numpy as np

from citator.stance.retrieve.expansion import build_expanded_index, expanded_texts
from citator.engines.lexical import LexicalIndex
from citator.stance.retrieve.memory import MemoryEntry, PropositionMemory

TITLES = ["Fletcher v. Peck", "Martin v. Hunter's Lessee", "Gibbons v. Ogden"]
TEXTS = ["A state legislature voided a land grant it had made.",
         "A state court refused to follow a federal appellate ruling.",
         "A state granted a monopoly over steamboat navigation."]
ENTRIES = [
    MemoryEntry("p1", "supported", "Lawmakers cannot revoke property conveyances they earlier approved.", ("d0",), ("",)),
    MemoryEntry("p2", "refuted", "Commerce among the states excludes ferry licensing.", ("d2",), ("",)),
    MemoryEntry("p3", "supported", "Congress may regulate interstate ferries.", ("d2",), ("",)),
]


def memory() -> tuple[PropositionMemory, tuple[np.ndarray, np.ndarray]]:
    mem = PropositionMemory(ENTRIES, np.eye(3, dtype=np.float32))
    return mem, mem.link(["d0", "d1", "d2"], TITLES)


def test_each_document_is_followed_by_the_propositions_linked_to_it() -> None:
    mem, links = memory()
    texts = expanded_texts(TITLES, TEXTS, mem, links)
    assert texts[0] == "\n".join([TITLES[0], TEXTS[0], ENTRIES[0].text])
    assert texts[1] == "\n".join([TITLES[1], TEXTS[1]])  # cited by nothing: unchanged
    assert texts[2].splitlines()[2:] == [ENTRIES[1].text, ENTRIES[2].text]


def test_a_proposition_worded_like_earlier_ones_finds_their_document_only_when_expanded() -> None:
    mem, links = memory()
    query = ["Can lawmakers revoke property conveyances?"]
    plain = LexicalIndex.build([f"{t}\n{x}" for t, x in zip(TITLES, TEXTS)]).score_all(query)[0]
    expanded = build_expanded_index(TITLES, TEXTS, mem, links).score_all(query)[0]
    assert plain.max() == 0.0  # none of its words is in any summary
    assert int(np.argmax(expanded)) == 0 and expanded[0] > 0 and expanded[1] == expanded[2] == 0.0
