"""Past one machine: an index cut into shards, built and searched by workers in this process or on a Ray cluster.

Every shard is an index directory of its own over a contiguous part of the corpus, scored with the whole corpus's
BM25 statistics; a search encodes each query once, asks every shard for its signals' bounds and then for its best
candidates under the whole index's bounds, and fuses and ranks them as one index would (stance/shards/search.py).
"""
