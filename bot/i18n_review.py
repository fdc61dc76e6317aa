"""User-visible texts of /review and spaced repetition (ru, en; merged into bot.i18n)."""

from __future__ import annotations

REVIEW_TEXTS: dict[str, dict[str, str]] = {}
