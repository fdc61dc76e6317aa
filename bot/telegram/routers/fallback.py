"""Catch-all: presses on buttons nobody handles (old, forged or malformed data)."""

from __future__ import annotations

from aiogram import Router
from aiogram.types import CallbackQuery

from bot.content.schema import Language
from bot.i18n import t


def build_fallback_router() -> Router:
    router = Router(name="fallback")

    @router.callback_query()
    async def outdated(query: CallbackQuery, lang: Language) -> None:
        await query.answer(t(lang, "outdated_button"))

    return router
