"""The blinded review web app: reviewers grade sections and passages without seeing rank, scores or proposals."""

from citator.server.review.app import create_app

__all__ = ["create_app"]
