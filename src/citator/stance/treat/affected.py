"""Which documents' treatment rows a change to the corpus can alter, so that an update reads only those again.

A document's rows depend on its own title and text, and on the rest of the corpus only through the titles,
citations and dates of the cases it names, and through which words the corpus writes mostly in lower case and
which surnames follow "Justice" (names.WordCounts). So a document whose text holds neither all the words of one of
the sets a changed document's name needs to be found (CaseNames.needed_words), nor the page of its citation, nor a
one-word name whose standing the change turned, gets from extraction the rows it had: they are kept. Every other document,
and each new or edited one, is read again. Words present are no name found, so the test over-approximates and
never misses: tests/stance/treat/test_affected.py compares tables so made with whole extractions.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from citator.data.records import Document
from citator.stance.treat.matcher import CaseNames
from citator.stance.treat.names import WordCounts, spellings, written_words
from citator.stance.treat.reporters import citations_in
from citator.stance.treat.table import TreatmentTable

Read = Callable[[Document], "str | None"]


@dataclass(frozen=True)
class Earlier:
    """The corpus before a change and its table as the index stored it (a user's rows merged in)."""

    docs: Sequence[Document]
    table: TreatmentTable


def again(docs: Sequence[Document], earlier: Earlier, words: WordCounts, names: CaseNames, citation: Read,
          date: Read) -> set[str]:
    """The doc ids of `docs` (the corpus after the change, whose words `words` counts and whose titles `names`
    holds, made with those counts) to extract again, and those of documents the change removed: their earlier
    rows are void."""
    before = {d.doc_id: d for d in earlier.docs}
    now = {d.doc_id: d for d in docs}

    def same(a: Document, b: Document) -> bool:
        return (a.title, a.text, citation(a), date(a)) == (b.title, b.text, citation(b), date(b))

    changed = {i for i in before.keys() | now.keys() if i not in before or i not in now or not same(before[i], now[i])}
    old = words.copy()  # the earlier corpus's counts: these, less the changed documents' texts now, plus before
    for i in changed:
        if i in now:
            old.add(now[i].text, -1)
        if i in before:
            old.add(before[i].text)
    turned = (old.common() ^ names.common) | (old.justices() ^ names.justices)
    # Whether a word is common or a justice's counts only where it could name a case alone ("Stone").
    needs = [frozenset({w}) for w in turned if names.names_alone(w)]
    for doc in [before[i] for i in changed if i in before] + [now[i] for i in changed if i in now]:
        needs.extend(CaseNames.needed_words(doc.title))
        needs.extend(frozenset({hit.key[2]}) for hit in citations_in(citation(doc) or "")[:1])  # a citing text's page
    holds = _Holds(needs)
    return changed | {d.doc_id for d in docs if d.doc_id not in changed and holds.any_of(written_words(d.text))}


class _Holds:
    """Whether a text's words (`names.written_words`) hold every word of one of the sets `needs`. Each set is filed
    under its longest word, the likeliest to be rare, so that a text is first met with those words alone."""

    def __init__(self, needs: Iterable[frozenset[str]]) -> None:
        self._spelt: dict[str, frozenset[str]] = {}
        self._by: dict[str, list[frozenset[str]]] = {}
        for need in needs:
            if need:
                anchor = max(sorted(need), key=len)
                self._by.setdefault(anchor, []).append(need)
                for word in need:
                    self._spelt.setdefault(word, spellings(word))
        self._anchors: dict[str, str] = {s: a for a in self._by for s in self._spelt[a]}
        self._anchor_set = frozenset(self._anchors)  # set & set walks the smaller of the two

    def any_of(self, written: set[str]) -> bool:
        for spelling in written & self._anchor_set:
            for need in self._by[self._anchors[spelling]]:
                if all(not self._spelt[w].isdisjoint(written) for w in need):
                    return True
        return False
