"""Inline keyboards of the private chat (the group round's "Next" lives with the rounds)."""

from __future__ import annotations

from collections.abc import Callable

from aiogram.filters.callback_data import CallbackData
from aiogram.types import InlineKeyboardMarkup
from aiogram.utils.keyboard import InlineKeyboardBuilder

from bot.content.schema import LANGUAGES, Language, Level
from bot.i18n import t
from bot.telegram.callbacks import (
    LATER_ID_LIMIT,
    DailyAction,
    DailyCallback,
    ForgetCallback,
    LanguageCallback,
    LaterCallback,
    LearningAction,
    LearningCallback,
    LevelCallback,
    SkipCallback,
)


def _mark(selected: bool) -> str:
    return "• " if selected else ""


def _add_levels(
    builder: InlineKeyboardBuilder, current: Level | None, payload: Callable[[Level], CallbackData]
) -> None:
    for level in Level:
        text = _mark(level == current) + level.value
        builder.button(text=text, callback_data=payload(level))


def level_keyboard(current: Level | None = None) -> InlineKeyboardMarkup:
    builder = InlineKeyboardBuilder()
    _add_levels(builder, current, lambda level: LevelCallback(level=level))
    builder.adjust(3)
    return builder.as_markup()


def settings_keyboard(lang: Language, level: Level) -> InlineKeyboardMarkup:
    builder = InlineKeyboardBuilder()
    _add_levels(builder, level, lambda value: LevelCallback(level=value))
    for code in LANGUAGES:
        builder.button(
            text=_mark(code == lang) + t(lang, f"btn.lang.{code}"),
            callback_data=LanguageCallback(lang=code),
        )
    builder.adjust(3, 2)
    return builder.as_markup()


def forget_keyboard(lang: str) -> InlineKeyboardMarkup:
    builder = InlineKeyboardBuilder()
    builder.button(text=t(lang, "btn.forget.yes"), callback_data=ForgetCallback(confirm=True))
    builder.button(text=t(lang, "btn.forget.no"), callback_data=ForgetCallback(confirm=False))
    builder.adjust(1)
    return builder.as_markup()


def question_keyboard(lang: str, ask_id: int) -> InlineKeyboardMarkup:
    builder = InlineKeyboardBuilder()
    builder.button(text=t(lang, "btn.skip"), callback_data=SkipCallback(ask=ask_id))
    return builder.as_markup()


def later_keyboard(lang: str, question_id: str) -> InlineKeyboardMarkup | None:
    """Under feedback that says the answer fits another question: ask that one later."""
    if len(question_id) > LATER_ID_LIMIT:
        return None
    builder = InlineKeyboardBuilder()
    builder.button(text=t(lang, "btn.later"), callback_data=LaterCallback(q=question_id))
    return builder.as_markup()


def daily_keyboard(lang: str, weekdays_only: bool) -> InlineKeyboardMarkup:
    builder = InlineKeyboardBuilder()
    weekdays = "btn.daily.weekdays_on" if weekdays_only else "btn.daily.weekdays_off"
    for action, key in (
        (DailyAction.time, "btn.daily.time"),
        (DailyAction.level, "btn.daily.level"),
        (DailyAction.weekdays, weekdays),
        (DailyAction.off, "btn.daily.off"),
    ):
        builder.button(text=t(lang, key), callback_data=DailyCallback(action=action))
    builder.adjust(2, 2)
    return builder.as_markup()


def daily_level_keyboard(current: Level) -> InlineKeyboardMarkup:
    builder = InlineKeyboardBuilder()
    _add_levels(
        builder, current, lambda level: DailyCallback(action=DailyAction.set_level, value=level)
    )
    builder.adjust(3)
    return builder.as_markup()


def learning_keyboard(lang: str, *actions: LearningAction) -> InlineKeyboardMarkup:
    """Buttons that run a learning-loop command: under a summary, or instead of an empty one."""
    keys = {
        LearningAction.interview: "btn.interview_new",
        LearningAction.progress: "btn.progress",
        LearningAction.report: "btn.report",
    }
    builder = InlineKeyboardBuilder()
    for action in actions:
        builder.button(text=t(lang, keys[action]), callback_data=LearningCallback(action=action))
    builder.adjust(len(actions))
    return builder.as_markup()
