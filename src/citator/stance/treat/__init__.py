"""Treatment flags: what later decisions in a corpus say about earlier ones (overrule, abrogate, limit, question,
follow, distinguish), found in the documents' own text, kept as a versioned table, and merged with a user's own.

    table = extract(documents)            # or read_table(path)
    table.of(doc_id)                      # what later documents say about doc_id ("cited by")
    table.flag(doc_id)                    # "red", "yellow" or None
"""

from citator.stance.treat.affected import Earlier
from citator.stance.treat.extract import extract
from citator.stance.treat.record import RED, TREATMENTS, YELLOW, Treatment, flag
from citator.stance.treat.store import FORMAT, read_table, read_user_table, write_table
from citator.stance.treat.table import TreatmentTable, merge

__all__ = ["Earlier", "FORMAT", "RED", "TREATMENTS", "YELLOW", "Treatment", "TreatmentTable", "extract", "flag", "merge",
           "read_table", "read_user_table", "write_table"]
