"""User-visible texts of /progress: the text and the chart labels (ru, en; merged into bot.i18n)."""

from __future__ import annotations

PROGRESS_TEXTS: dict[str, dict[str, str]] = {}
