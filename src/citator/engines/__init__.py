"""Retrieval engines every product shares: BM25 (`lexical`), dense vectors (`dense`), passages and fusion."""
