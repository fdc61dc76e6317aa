"""A text on one line, cut to a limit: for poll options, buttons, titles and list lines."""

from __future__ import annotations


def clip(text: str, limit: int) -> str:
    """On one line (a question's line breaks and code indents), cut to `limit` with "…"."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
