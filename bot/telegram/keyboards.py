"""Inline keyboards."""

from __future__ import annotations

from aiogram.types import InlineKeyboardMarkup
from aiogram.utils.keyboard import InlineKeyboardBuilder

from bot.content.schema import Level
from bot.i18n import t
from bot.telegram.callbacks import LanguageCallback, LevelCallback, SkipCallback


def level_keyboard(current: str | None = None) -> InlineKeyboardMarkup:
    builder = InlineKeyboardBuilder()
    for level in Level:
        mark = "• " if level.value == current else ""
        builder.button(text=f"{mark}{level.value}", callback_data=LevelCallback(level=level.value))
    builder.adjust(3)
    return builder.as_markup()


def settings_keyboard(lang: str, level: str) -> InlineKeyboardMarkup:
    builder = InlineKeyboardBuilder()
    for value in Level:
        mark = "• " if value.value == level else ""
        builder.button(text=f"{mark}{value.value}", callback_data=LevelCallback(level=value.value))
    for code in ("ru", "en"):
        mark = "• " if code == lang else ""
        builder.button(
            text=mark + t(lang, f"btn.lang.{code}"), callback_data=LanguageCallback(lang=code)
        )
    builder.adjust(3, 2)
    return builder.as_markup()


def question_keyboard(lang: str, ask_id: int) -> InlineKeyboardMarkup:
    builder = InlineKeyboardBuilder()
    builder.button(text=t(lang, "btn.skip"), callback_data=SkipCallback(ask=ask_id))
    return builder.as_markup()
