"""A brief says when its evidence passage is from a dissent or a concurrence, not the holding (stance/read/parts.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from citator.stance.brief.index import StanceIndex
from citator.stance.brief.render import render

FILLER = ("Facts of the case: A farmer sold grain to a mill under a written agreement, and a storm destroyed the "
          "harvest before delivery. ")
DOCS = [
    {"doc_id": "dissent-case", "title": "Miller v. Mill Co.",
     "text": FILLER + "Question: Does a storm excuse a seller's delivery of grain? Conclusion: The Court held that "
             "the storm did not excuse delivery, and the seller owed damages. Justice Brandt dissented. He argued "
             "that an unforeseeable hurricane frustrates the whole purpose of a contract for grain and should "
             "excuse the farmer entirely, since no one could have foreseen such a hurricane."},
    {"doc_id": "holding-case", "title": "Ames v. Baker",
     "text": "Facts of the case: A tenant left before the lease ended. Question: May a landlord keep the deposit? "
             "Conclusion: The Court held that a landlord may keep a deposit only for proven damage."},
    {"doc_id": "plain-case", "title": "Cole v. Dunn",
     "text": "A city fined a newspaper for printing a letter. The court held that the fine violated the press "
             "clause of the First Amendment, because the letter was about a public official."},
]

# Unrelated documents: an index holds at least the contract's top-k of 10.
DOCS += [{"doc_id": f"other-{i}", "title": f"Case {i}", "text": f"A dispute number {i} about a fence between "
          f"neighbours and the costs of {topic}."} for i, topic in enumerate(["paint", "wood", "survey", "labour",
                                                                             "nails", "gates", "posts", "wire"])]


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> StanceIndex:
    work = tmp_path_factory.mktemp("evidence-part")
    corpus = work / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(d) + "\n" for d in DOCS))
    return StanceIndex.build(corpus, work / "index")


def test_a_passage_from_a_dissent_says_so_everywhere(index: StanceIndex) -> None:
    brief = index.brief("an unforeseeable hurricane frustrates the purpose of a grain contract", k=3)
    hit = next(h for h in brief.column("relevant") if h.doc_id == "dissent-case")
    assert hit.evidence.part == "dissent" and hit.evidence.separate_opinion == "dissent"
    assert "Brandt dissented" in hit.evidence.text or "hurricane" in hit.evidence.text
    assert "[from the dissent, not the holding]" in render(brief, "table")
    assert "\\[from the dissent, not the holding\\]" in render(brief, "markdown")
    got = json.loads(render(brief, "json"))
    assert next(h for h in got["relevant"] if h["doc_id"] == "dissent-case")["evidence"]["part"] == "dissent"


def test_a_passage_from_the_holding_or_plain_text_is_not_marked(index: StanceIndex) -> None:
    brief = index.brief("a landlord may keep a deposit for proven damage", k=3)
    hit = next(h for h in brief.column("relevant") if h.doc_id == "holding-case")
    assert hit.evidence.separate_opinion is None
    press = index.brief("a fine for printing a letter violated the press clause", k=3)
    plain = next(h for h in press.column("relevant") if h.doc_id == "plain-case")
    assert plain.evidence.part == "text" and plain.evidence.separate_opinion is None
    assert "not the holding" not in render(index.brief("a landlord may keep a deposit", k=2), "table")
