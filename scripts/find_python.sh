#!/usr/bin/env bash
# Prints the Python that `make` builds .venv from: the first Python >= 3.11 that every user can run, else python3.
# The contract runs run.sh as an unprivileged user, and a venv's interpreter is a link to its base install: one
# under a private home (pyenv in /root, say) leaves that user without a Python.
set -u
for py in python3 python3.11 python3.12 python3.13 /usr/bin/python3 /usr/local/bin/python3; do
    command -v "$py" >/dev/null 2>&1 || continue
    if "$py" - <<'PY' 2>/dev/null; then exit 0; fi
import os
import stat
import sys

if sys.version_info < (3, 11):
    sys.exit(1)


def everyone_can(path: str, need: int) -> bool:
    """True when every user may reach `path` (search on each directory above it) and has `need` on it."""
    path = os.path.realpath(path)
    parent = os.path.dirname(path)
    while parent != os.path.dirname(parent):
        if not os.stat(parent).st_mode & stat.S_IXOTH:
            return False
        parent = os.path.dirname(parent)
    return bool(os.stat(path).st_mode & need == need)


stdlib = os.path.dirname(os.__file__)
ok = (everyone_can(sys.executable, stat.S_IROTH | stat.S_IXOTH) and everyone_can(stdlib, stat.S_IROTH | stat.S_IXOTH)
      and everyone_can(os.__file__, stat.S_IROTH))
if not ok:
    sys.exit(1)
print(sys.executable)
PY
done
echo python3
