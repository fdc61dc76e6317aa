"""Sends what the outbox says a user is owed, in order, then marks each item sent."""

from __future__ import annotations

import asyncio
import logging
from collections import defaultdict
from contextlib import nullcontext
from datetime import timedelta

from aiogram import Bot
from aiogram.exceptions import TelegramAPIError, TelegramBadRequest, TelegramForbiddenError
from aiogram.types import ReplyParameters

from bot.clock import utcnow
from bot.content.schema import Language
from bot.priority import Priority, working_at
from bot.services.interviews import InterviewService
from bot.services.outbox import FeedbackItem, OutboxItem, QuestionItem
from bot.storage.leases import Leases, new_holder
from bot.telegram.callbacks import LearningAction
from bot.telegram.keyboards import later_keyboard, learning_keyboard, question_keyboard
from bot.telegram.rendering import render_feedback, render_question, render_summary

log = logging.getLogger(__name__)

# A flush holds the user's outbox lease for OUTBOX_LEASE and renews it every LEASE_RENEWAL while
# it runs (a send waiting out a 429 included): a replica killed mid-flush frees its users within
# OUTBOX_LEASE, not after the longest flush one could imagine.
OUTBOX_LEASE = timedelta(seconds=5)
LEASE_RENEWAL = timedelta(seconds=1.5)


class Delivery:
    def __init__(
        self,
        bot: Bot,
        interviews: InterviewService,
        leases: Leases | None = None,
        lease: timedelta = OUTBOX_LEASE,
        renewal: timedelta = LEASE_RENEWAL,
    ):
        """`leases`: other processes may flush the same user (webhook replicas), so a flush
        also holds the user's `outbox:<id>` lease in the database, renewed while it runs; None:
        this process is the only one that flushes (polling), the in-process lock suffices."""
        self.bot = bot
        self.interviews = interviews
        self.leases = leases
        self.lease = lease
        self.renewal = renewal
        self.holder = new_holder()
        self._locks: defaultdict[int, asyncio.Lock] = defaultdict(asyncio.Lock)

    async def flush(self, user_id: int, lang: Language | None = None) -> None:
        """Send everything owed to the user. One flush per user at a time: no double sends."""
        if lang is None:
            user = await self.interviews.user(user_id)
            lang = user.language if user else "en"
        async with self._locks[user_id]:
            leases = self.leases
            if leases is None:
                await self._flush(user_id, lang)
                return
            name = f"outbox:{user_id}"
            # Wait for a flush on another replica: it may have read the outbox before this
            # replica's new item, so skipping would leave that item unsent.
            while not await leases.take(name, self.holder, self.lease, utcnow()):
                await asyncio.sleep(0.05)
            heartbeat = asyncio.create_task(self._renew(leases, name))
            try:
                await self._flush(user_id, lang)
            finally:
                heartbeat.cancel()
                await leases.release(name, self.holder)

    async def _renew(self, leases: Leases, name: str) -> None:
        """Keep the lease while the flush runs; a replica that dies stops renewing it."""
        while True:
            await asyncio.sleep(self.renewal.total_seconds())
            if not await leases.take(name, self.holder, self.lease, utcnow()):
                log.warning("lost the lease %s mid-flush (this replica stalled)", name)
                return

    async def _flush(self, user_id: int, lang: Language) -> None:
        replied = False
        for item in await self.interviews.outbox(user_id):
            # Under load the send budget goes to others' feedback before this next question:
            # the user reads their feedback first anyway.
            follow_up = replied and isinstance(item, QuestionItem)
            with working_at(Priority.follow_up) if follow_up else nullcontext():
                message_id = await self._send(item, lang)
            await self.interviews.mark_sent(item, message_id)
            replied = replied or isinstance(item, FeedbackItem)

    async def _send(self, item: OutboxItem, lang: Language) -> int | None:
        try:
            if isinstance(item, QuestionItem):
                await self.interviews.begin_send(item)
                message = await self.bot.send_message(
                    item.chat_id,
                    render_question(item, lang).as_html(),
                    reply_markup=question_keyboard(lang, item.ask_id),
                )
                return message.message_id
            if isinstance(item, FeedbackItem):
                last = None
                parts = render_feedback(item, lang)
                later = (
                    later_keyboard(lang, item.answered_instead.id)
                    if item.answered_instead is not None
                    else None
                )
                for index, part in enumerate(parts):
                    if index < item.parts_sent:  # went out before a kill cut the flush short
                        continue
                    reply = item.reply_to if index == 0 and item.reply_to else None
                    last = await self.bot.send_message(
                        item.chat_id,
                        part.as_html(),
                        reply_parameters=_reply(reply),
                        reply_markup=later if index == len(parts) - 1 else None,
                    )
                    if index < len(parts) - 1:  # the last one: mark_sent, just after
                        await self.interviews.mark_part_sent(item, index + 1)
                return last.message_id if last else None
            message = await self.bot.send_message(
                item.chat_id,
                render_summary(item, lang).as_html(),
                reply_markup=learning_keyboard(
                    lang, LearningAction.progress, LearningAction.report
                ),
            )
            return message.message_id
        except TelegramForbiddenError:
            log.info("chat %s blocked the bot; dropping %s", item.chat_id, type(item).__name__)
            return None
        except TelegramBadRequest:
            log.exception("Telegram rejected %s for chat %s", type(item).__name__, item.chat_id)
            return None
        except TelegramAPIError:
            log.exception("could not send %s to chat %s", type(item).__name__, item.chat_id)
            raise


def _reply(message_id: int | None) -> ReplyParameters | None:
    if message_id is None:
        return None
    return ReplyParameters(message_id=message_id, allow_sending_without_reply=True)
