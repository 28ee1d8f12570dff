"""The account strategies run as: an unprivileged user when the runner is root, the runner's own otherwise."""

from __future__ import annotations

import os
import pwd
from dataclasses import dataclass


@dataclass(frozen=True)
class SandboxUser:
    """The unprivileged account strategies run as when the runner is root."""

    name: str
    uid: int
    gid: int


def sandbox_user(name: str = "nobody") -> SandboxUser | None:
    """`name`'s ids when running as root; None (run as ourselves, already unprivileged) otherwise."""
    if os.geteuid() != 0:
        return None
    entry = pwd.getpwnam(name)
    return SandboxUser(name, entry.pw_uid, entry.pw_gid)
