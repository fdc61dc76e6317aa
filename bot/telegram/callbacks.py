"""Inline-button payloads; each packs to far fewer than Telegram's 64 bytes."""

from __future__ import annotations

from aiogram.filters.callback_data import CallbackData


class LevelCallback(CallbackData, prefix="lvl"):
    level: str


class LanguageCallback(CallbackData, prefix="lang"):
    lang: str


class SkipCallback(CallbackData, prefix="skip"):
    ask: int
