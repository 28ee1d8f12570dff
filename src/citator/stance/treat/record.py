"""One treatment: what a citing decision itself says about an earlier one, and the passage that says so."""

from __future__ import annotations

from dataclasses import dataclass

TREATMENTS: tuple[str, ...] = ("overrules", "abrogates", "limits", "questions", "follows", "distinguishes")
# A red flag: the cited case is no longer good law. A yellow flag: it is limited or its authority is doubted.
RED: frozenset[str] = frozenset({"overrules", "abrogates"})
YELLOW: frozenset[str] = frozenset({"limits", "questions"})
# How the cited case was found in the citing text; "user" for a row from a user's own table.
FOUND_BY: tuple[str, ...] = ("citation", "name", "user")


@dataclass(frozen=True)
class Treatment:
    """`citing_doc_id` treats `cited_doc_id` as `treatment`, in `passage`.

    `start`/`end`: the passage's characters in the citing document's text (None for a user's row, whose passage is
    free text). `cited_as`: the words of the passage that name the cited case (a case name or a reporter citation,
    as `found_by` says).
    """

    citing_doc_id: str
    cited_doc_id: str
    treatment: str
    passage: str
    start: int | None
    end: int | None
    found_by: str
    cited_as: str

    @property
    def key(self) -> tuple[str, str, str]:
        """What makes a row one row: a citing case treats a cited case one way once."""
        return (self.citing_doc_id, self.cited_doc_id, self.treatment)


def flag(treatment: str) -> str | None:
    """"red" (no longer good law), "yellow" (limited or questioned) or None (followed, distinguished)."""
    return "red" if treatment in RED else "yellow" if treatment in YELLOW else None
