"""How a `python -m bot` command reports a failure: one line on stderr, exit status 2."""

from __future__ import annotations

import sys


def fail(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return 2
