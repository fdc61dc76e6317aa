"""Operator commands in private chats, for the user ids in ADMIN_IDS only."""

from __future__ import annotations

from aiogram import F, Router
from aiogram.enums import ChatType
from aiogram.filters import Command
from aiogram.types import Message
from aiogram.utils.formatting import Text

from bot.content.schema import Language
from bot.i18n import t
from bot.services.stats import StatsService
from bot.telegram.stats_rendering import render_stats


def build_admin_router() -> Router:
    router = Router(name="admin")
    router.message.filter(F.chat.type == ChatType.PRIVATE)

    @router.message(Command("stats"))
    async def stats(
        message: Message, stats: StatsService, admin_ids: frozenset[int], lang: Language
    ) -> None:
        if message.from_user is None or message.from_user.id not in admin_ids:
            await message.answer(Text(t(lang, "unknown_command")).as_html())
            return
        await message.answer(render_stats(await stats.collect(), lang).as_html())

    return router
