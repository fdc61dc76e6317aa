"""Tells a person that their message could not be handled (its handler raised on every try), in
their language, so that nothing they sent is dropped without a word."""

from __future__ import annotations

import logging

from aiogram import Bot
from aiogram.dispatcher.middlewares.user_context import UserContextMiddleware
from aiogram.exceptions import TelegramAPIError
from aiogram.types import ReplyParameters, Update
from aiogram.utils.formatting import Text
from sqlalchemy.exc import SQLAlchemyError

from bot.content.schema import Language
from bot.i18n import t
from bot.services.interviews import InterviewService, language_from_code

log = logging.getLogger(__name__)

# Updates a person waits on a reply to. Others (a quiz vote, the bot added to or removed from a
# chat) have no one to tell, or no chat the bot may write to.
NOTIFIED = {"message", "edited_message", "callback_query"}


class FailureNotice:
    def __init__(self, bot: Bot, interviews: InterviewService | None = None):
        self.bot = bot
        self.interviews = interviews

    async def __call__(self, update: Update) -> None:
        if update.event_type not in NOTIFIED:
            return
        context = UserContextMiddleware.resolve_event_context(update)
        if context.chat is None or context.user is None or context.user.is_bot:
            return
        lang = await self._language(context.user.id, context.user.language_code)
        message = update.message or update.edited_message
        reply = (
            ReplyParameters(message_id=message.message_id, allow_sending_without_reply=True)
            if message is not None and context.chat.type != "private"
            else None  # in a group, say whose message it was
        )
        try:
            await self.bot.send_message(
                context.chat.id, Text(t(lang, "update_failed")).as_html(), reply_parameters=reply
            )
        except TelegramAPIError as exc:  # blocked, chat gone: the failure is recorded anyway
            log.warning("could not send the failure notice to chat %s: %s", context.chat.id, exc)

    async def _language(self, user_id: int, code: str | None) -> Language:
        """The language the person chose (/settings), else their Telegram app's."""
        if self.interviews is not None:
            try:
                user = await self.interviews.user(user_id)
            except SQLAlchemyError:  # the database may be why the update failed
                user = None
            if user is not None:
                return user.language
        return language_from_code(code)
