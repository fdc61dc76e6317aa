"""Inline-button payloads, all in one place; each packs to far fewer than Telegram's 64 bytes.

Every field is bounded (levels and languages are enums, ids fit the database column), so forged
or stale data fails `Callback.filter()` and falls through to the "outdated button" toast instead
of reaching a handler or the database driver.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

from aiogram.filters.callback_data import CallbackData
from pydantic import Field

from bot.content.schema import Language, Level

LATER_ID_LIMIT = 56  # 64 bytes less "later:" and a margin

# A row id: primary keys are INTEGER columns, which PostgreSQL stores in 32 bits.
RowId = Annotated[int, Field(ge=1, le=2**31 - 1)]


class LevelCallback(CallbackData, prefix="lvl"):
    level: Level


class LanguageCallback(CallbackData, prefix="lang"):
    lang: Language


class ForgetCallback(CallbackData, prefix="forget"):
    confirm: bool  # True: delete everything; False: keep it


class LearningAction(StrEnum):
    interview = "int"  # start an interview at the user's level
    progress = "prog"  # send /progress
    report = "rep"  # send /report


class LearningCallback(CallbackData, prefix="learn"):
    action: LearningAction


class SkipCallback(CallbackData, prefix="skip"):
    ask: RowId


class DailyAction(StrEnum):
    time = "time"  # how to change the time
    level = "level"  # show the level picker
    set_level = "lvl"  # a level picked (with `value`)
    weekdays = "wd"  # toggle weekdays only
    off = "off"


class DailyCallback(CallbackData, prefix="dly"):
    action: DailyAction
    value: Level | None = None  # with set_level only


class LaterCallback(CallbackData, prefix="later"):
    """ "Ask me that question later": a bank question id, bounded so that the payload stays
    under Telegram's 64 bytes (the button is left out for a longer id)."""

    q: Annotated[str, Field(pattern=r"^[a-z0-9]+(-[a-z0-9]+)*$", max_length=LATER_ID_LIMIT)]


class RoundNextCallback(CallbackData, prefix="rnext"):
    q: RowId  # round question id
