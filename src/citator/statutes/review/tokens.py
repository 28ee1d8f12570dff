"""Reviewer tokens and session secrets: random, shown once, stored only as a sha256."""

from __future__ import annotations

import hashlib
import secrets


def new_secret() -> str:
    """A 192-bit URL-safe random string."""
    return secrets.token_urlsafe(24)


def secret_hash(secret: str) -> str:
    """Stored form of a token or session id (they are random, so a fast hash is enough)."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()
