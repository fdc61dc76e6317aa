"""Groups: interviews are 1:1 for now, so commands there point to the private chat."""

from __future__ import annotations

from aiogram import F, Router
from aiogram.enums import ChatType
from aiogram.types import Message
from aiogram.utils.formatting import Text

from bot.i18n import t


def build_group_router() -> Router:
    router = Router(name="group")
    router.message.filter(F.chat.type.in_({ChatType.GROUP, ChatType.SUPERGROUP}))

    @router.message(F.text.startswith("/"))
    async def command_in_group(message: Message, lang: str) -> None:
        await message.answer(Text(t(lang, "group_unsupported")).as_html())

    return router
