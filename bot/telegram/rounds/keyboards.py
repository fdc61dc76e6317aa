"""The round question's "Next" button and its payload (far below Telegram's 64 bytes)."""

from __future__ import annotations

from aiogram.types import InlineKeyboardMarkup
from aiogram.utils.keyboard import InlineKeyboardBuilder

from bot.i18n import t
from bot.telegram.callbacks import RoundNextCallback


def next_keyboard(lang: str, round_question_id: int) -> InlineKeyboardMarkup:
    builder = InlineKeyboardBuilder()
    builder.button(
        text=t(lang, "btn.round_next"), callback_data=RoundNextCallback(q=round_question_id)
    )
    return builder.as_markup()
