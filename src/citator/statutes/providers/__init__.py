"""Graders for the statute benchmark behind one `Provider` seam: HTTP chat, local LLM, embedding similarity."""

from citator.statutes.providers.base import ChatProvider, Exchange, Provider, SimilarityProvider, chat_payload
from citator.statutes.providers.grades import GradeDistribution, InvalidResponse, parse_chat_grades

__all__ = [
    "ChatProvider",
    "Exchange",
    "GradeDistribution",
    "InvalidResponse",
    "Provider",
    "SimilarityProvider",
    "chat_payload",
    "parse_chat_grades",
]
