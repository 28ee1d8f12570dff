"""Stance retrieval: the index and its search (`retrieve`), training (`learn`), a sharded index (`shards`),
the research surface (`brief`) and the build/search/serve workload (`workload`)."""
