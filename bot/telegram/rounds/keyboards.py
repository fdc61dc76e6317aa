"""The round question's "Next" button and its payload (far below Telegram's 64 bytes)."""

from __future__ import annotations

from aiogram.filters.callback_data import CallbackData
from aiogram.types import InlineKeyboardMarkup
from aiogram.utils.keyboard import InlineKeyboardBuilder

from bot.i18n import t


class RoundNextCallback(CallbackData, prefix="rnext"):
    q: int  # round question id


def next_keyboard(lang: str, round_question_id: int) -> InlineKeyboardMarkup:
    builder = InlineKeyboardBuilder()
    builder.button(
        text=t(lang, "btn.round_next"), callback_data=RoundNextCallback(q=round_question_id)
    )
    return builder.as_markup()
