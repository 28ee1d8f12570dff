"""The engines of stance retrieval: BM25, dense and late-interaction indexes, the proposition memory, fusion and
learned rankers, the index directory and the search service's wire format. Deliberately empty of imports: a
module here loads only what it uses (run.sh's client must not pay for numpy or the encoders)."""
