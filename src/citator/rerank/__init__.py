"""Metered LLM reranking: token ledger, strategy protocol, trusted runner, strategy SDK, built-in strategies.

Deliberately empty of imports: strategy processes import `citator.rerank.strategy` and must stay light
(no torch, no transformers). Import `citator.rerank.runner` for the runner.
"""
