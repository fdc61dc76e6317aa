"""User-visible texts of /report: the readiness report (ru, en; merged into bot.i18n)."""

from __future__ import annotations

REPORT_TEXTS: dict[str, dict[str, str]] = {}
