"""Model seams: text encoders and LLM backends, each backend in its own file."""

from citator.models.llm import Generation, LLMBackend

__all__ = ["Generation", "LLMBackend"]
