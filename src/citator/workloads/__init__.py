"""The three workloads end to end: stance retrieval, metered reranking harness, statute benchmark."""
