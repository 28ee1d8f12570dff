"""Lookups from either side of a treatment, the flag, and a user's rows laid over extracted ones."""

from __future__ import annotations

from citator.stance.treat import Treatment, TreatmentTable, flag, merge


def row(citing: str, cited: str, treatment: str, found_by: str = "name") -> Treatment:
    span = (None, None) if found_by == "user" else (0, 4)
    return Treatment(citing, cited, treatment, "text", *span, found_by, cited)


def test_of_and_by_look_up_either_side_and_flags_follow_the_strongest_word() -> None:
    table = TreatmentTable((row("late", "old", "overrules"), row("mid", "old", "limits"), row("late", "mid", "follows"),
                            row("late", "old", "overrules")))
    assert len(table) == 3  # one row per (citing, cited, treatment)
    assert {r.citing_doc_id for r in table.of("old")} == {"late", "mid"}
    assert {r.cited_doc_id for r in table.by("late")} == {"old", "mid"}
    assert (table.flag("old"), table.flag("mid"), table.flag("late")) == ("red", None, None)
    assert TreatmentTable((row("mid", "old", "questions"),)).flag("old") == "yellow"
    assert (flag("abrogates"), flag("limits"), flag("distinguishes")) == ("red", "yellow", None)


def test_a_users_row_replaces_the_pair_and_adds_what_was_missed() -> None:
    table = TreatmentTable((row("late", "old", "overrules"), row("late", "old", "follows"),
                            row("mid", "old", "limits")))
    merged = merge(table, [row("late", "old", "distinguishes", "user"), row("new", "old", "questions", "user")])
    assert {(r.citing_doc_id, r.treatment) for r in merged.of("old")} == {
        ("late", "distinguishes"), ("mid", "limits"), ("new", "questions")}
    assert merged.flag("old") == "yellow"
