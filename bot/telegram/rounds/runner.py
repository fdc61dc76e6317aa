"""Moves group rounds forward: closes due questions, grades, and sends what each group is owed.

One pump per group at a time (a lock per chat), so the ticker and a handler never send the same
item twice; groups run independently of each other.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import defaultdict
from datetime import timedelta
from typing import Any

from aiogram import Bot
from aiogram.exceptions import (
    TelegramAPIError,
    TelegramBadRequest,
    TelegramForbiddenError,
    TelegramMigrateToChat,
)
from aiogram.types import InputPollOption, Message, ReactionTypeEmoji, ReplyParameters
from aiogram.utils.formatting import Italic, Text

from bot.clock import utcnow
from bot.content.schema import Language
from bot.i18n import t
from bot.services.quiz import QUESTION_LIMIT, explanation, option_text
from bot.services.rounds import RoundService
from bot.services.rounds.items import (
    GroupItem,
    LeaderboardItem,
    PrivateFeedbackItem,
    ResultsItem,
    RoundQuestionItem,
)
from bot.services.text_clip import clip
from bot.storage.leases import Leases, new_holder
from bot.telegram.limits.groups import GroupBudget
from bot.telegram.rendering import render_feedback
from bot.telegram.rounds.keyboards import next_keyboard
from bot.telegram.rounds.rendering import (
    render_leaderboard,
    render_results,
    render_round_question,
)

log = logging.getLogger(__name__)

ACK_REACTION = "✍"
# How long a replica moving a group's round keeps it without renewing (renewed before every
# send); a replica that died mid-round is taken over by the ticker elsewhere after this.
ROUND_LEASE = timedelta(seconds=15)


class RoundRunner:
    def __init__(self, bot: Bot, rounds: RoundService, leases: Leases, limiter: GroupBudget):
        """`leases`: the database's (built once, bot/app.py): a group's round is moved by one
        replica at a time, the one holding its `round:<chat id>` lease."""
        self.bot = bot
        self.rounds = rounds
        self.leases = leases
        self.limiter = limiter
        self.holder = new_holder()  # of the per-group round leases
        self._locks: defaultdict[int, asyncio.Lock] = defaultdict(asyncio.Lock)
        self._tasks: set[asyncio.Task[None]] = set()
        # Old ids of groups that became supergroups whose new chat was told (see _migrated).
        self._told_migrated: set[int] = set()

    # --- moving rounds forward ---------------------------------------------------------------

    def lock(self, chat_id: int) -> asyncio.Lock:
        """Held while the group's round changes shape (start + announcement, or a pump)."""
        return self._locks[chat_id]

    def kick(self, chat_id: int) -> None:
        """Pump the group in the background unless a pump is already at work there."""
        if self._locks[chat_id].locked():
            return  # the running pump, or the next tick, picks the new work up
        task = asyncio.create_task(self._safe_pump(chat_id))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _safe_pump(self, chat_id: int) -> None:
        try:
            await self.pump(chat_id)
        except Exception:  # one group's failure must not stop the others; the ticker retries
            log.exception("round step failed in chat %s", chat_id)

    async def _lease(self, chat_id: int) -> bool:
        """Whether this replica may move the group's round now (taken or renewed)."""
        return await self.leases.take(f"round:{chat_id}", self.holder, ROUND_LEASE, utcnow())

    async def pump(self, chat_id: int) -> None:
        async with self._locks[chat_id]:
            try:
                await self._pump(chat_id)
            finally:  # the next kick, on any replica, may go on at once
                await self.leases.release(f"round:{chat_id}", self.holder)

    async def _pump(self, chat_id: int) -> None:
        while True:
            # Another replica is moving this round: it (or the ticker, once its lease
            # lapses) does what is due.
            if not await self._lease(chat_id):
                return
            await self.rounds.expire(chat_id)
            await self.rounds.grade_closed(chat_id)
            items = await self.rounds.outbox(chat_id)
            if not items:
                return
            group = await self.rounds.group(chat_id)
            lang = group.language if group else "en"
            for item in items:
                if not await self._lease(chat_id):  # renewed before each send
                    return
                try:
                    message = await self._send(item, lang)
                except TelegramForbiddenError:
                    log.info("bot is no longer in chat %s; ending its round", chat_id)
                    await self.rounds.bot_removed(chat_id)
                    return
                except TelegramMigrateToChat as exc:
                    await self._migrated(chat_id, exc)
                    return
                poll = message.poll if message is not None else None
                await self.rounds.mark_sent(
                    item,
                    message.message_id if message is not None else None,
                    poll.id if poll is not None else None,
                )

    async def _migrated(self, chat_id: int, exc: TelegramMigrateToChat) -> None:
        """The group became a supergroup: this chat id is gone for good, and every later send
        would fail the same way. Its question messages stay behind in the old chat, where nobody
        can reply any more, so a running round ends as if the bot had been removed, and the new
        chat is told why. Without a round, an update from the old chat (a command sent just
        before the upgrade) is lost, so the new chat is told to send it again, once: further
        updates from the old chat add nothing."""
        new_chat = exc.migrate_to_chat_id
        first = chat_id not in self._told_migrated
        self._told_migrated.add(chat_id)  # before any await: concurrent handlers tell it once
        ended = await self.rounds.bot_removed(chat_id)
        log.info("chat %s became supergroup %s (round ended: %s)", chat_id, new_chat, ended)
        if not (ended or first):
            return
        group = await self.rounds.group(chat_id)
        lang = group.language if group else "en"
        key = "round_chat_migrated" if ended else "group_chat_migrated"
        await self.note(new_chat, Text(t(lang, key)).as_html())

    async def _send_text(self, chat_id: int, body: Text, **extra: Any) -> Message:
        """A round message as HTML; refused with a 400 (nearly always its entities), once
        more as plain text: the same words unformatted beat results the group never sees."""
        try:
            return await self.bot.send_message(chat_id, body.as_html(), **extra)
        except TelegramBadRequest as exc:
            log.warning("Telegram rejected a round message in chat %s (%s); sending it as "
                        "plain text", chat_id, exc.message)  # fmt: skip
            # No second slot from the limiter: the refused message was never posted.
            return await self.bot.send_message(chat_id, body.render()[0], parse_mode=None, **extra)

    async def _send(self, item: GroupItem, lang: Language) -> Message | None:
        if isinstance(item, PrivateFeedbackItem):
            return await self._send_private(item)
        await self.limiter.acquire(item.chat_id)
        try:
            if isinstance(item, RoundQuestionItem) and item.options:
                message = await self._send_poll(item, lang)
            elif isinstance(item, RoundQuestionItem):
                message = await self._send_text(
                    item.chat_id,
                    render_round_question(item, lang),
                    reply_markup=next_keyboard(lang, item.round_question_id),
                )
            elif isinstance(item, ResultsItem):
                await self._drop_keyboard(
                    item.chat_id, item.question_message_id, quiz=item.correct_option is not None
                )
                reply = None
                if item.question_message_id and item.question_message_id > 0:
                    reply = ReplyParameters(
                        message_id=item.question_message_id, allow_sending_without_reply=True
                    )
                message = await self._send_text(
                    item.chat_id,
                    render_results(item, lang, self.rounds.question),
                    reply_parameters=reply,
                )
            elif isinstance(item, LeaderboardItem):
                message = await self._send_text(item.chat_id, render_leaderboard(item, lang))
            else:  # pragma: no cover - GroupItem is a closed union
                raise TypeError(type(item))
        except TelegramBadRequest:
            # Refused as plain text too, or a poll: the same request would be refused at every
            # tick, so the item counts as done and the round goes on rather than stalling.
            log.exception("Telegram rejected %s in chat %s", type(item).__name__, item.chat_id)
            return None
        return message

    async def _send_private(self, item: PrivateFeedbackItem) -> Message | None:
        """Detailed feedback in the participant's private chat (opted in from the group)."""
        header = Text(
            t(item.language, "round_private_header"),
            "\n",
            Italic(item.question.question.get(item.language)),
        )
        last = None
        try:
            await self.bot.send_message(item.user_id, header.as_html())
            for part in render_feedback(item.feedback, item.language):
                last = await self.bot.send_message(item.user_id, part.as_html())
        except (TelegramBadRequest, TelegramForbiddenError) as exc:
            # Never started the bot privately, or blocked it: the group result stands.
            log.info("no private feedback for user %s: %s", item.user_id, exc)
            return None
        return last

    async def _send_poll(self, item: RoundQuestionItem, lang: Language) -> Message:
        """A quiz poll: non-anonymous, so each vote arrives as a poll_answer update."""
        options = [
            option_text(self.rounds.question(qid) or item.question, lang) for qid in item.options
        ]
        header = f"{item.position}/{item.total} · {item.question.question.get(lang)}"
        return await self.bot.send_poll(
            item.chat_id,
            question=clip(header, QUESTION_LIMIT),
            # Plain text: the bot's default parse mode (HTML) would make "x < 0" unsendable.
            options=[InputPollOption(text=text, text_parse_mode=None) for text in options],
            type="quiz",
            is_anonymous=False,
            correct_option_id=item.correct_option,
            explanation=explanation(item.question, lang),
            open_period=min(max(item.seconds, 5), 600),
            question_parse_mode=None,
            explanation_parse_mode=None,
            reply_markup=next_keyboard(lang, item.round_question_id),
        )

    async def _drop_keyboard(
        self, chat_id: int, message_id: int | None, quiz: bool = False
    ) -> None:
        """The question is closed: its "Next" button goes."""
        if not message_id or message_id < 0:
            return
        if quiz:  # votes after the close would not count: close the poll itself too
            with contextlib.suppress(TelegramAPIError):
                await self.bot.stop_poll(chat_id, message_id)
            return
        with contextlib.suppress(TelegramAPIError):
            await self.bot.edit_message_reply_markup(
                chat_id=chat_id, message_id=message_id, reply_markup=None
            )

    # --- quiet acknowledgements and notes ----------------------------------------------------

    async def react(self, chat_id: int, message_id: int) -> bool:
        """✍ on an accepted answer; silence where reactions are not allowed."""
        try:
            await self.bot.set_message_reaction(
                chat_id, message_id, [ReactionTypeEmoji(emoji=ACK_REACTION)]
            )
            return True
        except (TelegramBadRequest, TelegramForbiddenError) as exc:
            log.debug("no reaction in chat %s: %s", chat_id, exc)
            return False
        except TelegramMigrateToChat as exc:  # a reply sent just before the upgrade
            await self._migrated(chat_id, exc)
            return False

    async def note(self, chat_id: int, text: str, reply_to: int | None = None) -> bool:
        """A short reply that never delays a round: skipped when the group's budget is tight."""
        if not await self.limiter.try_acquire(chat_id):
            log.info("group %s is near its message limit; note skipped", chat_id)
            return False
        reply = ReplyParameters(message_id=reply_to, allow_sending_without_reply=True)
        try:
            await self.bot.send_message(chat_id, text, reply_parameters=reply if reply_to else None)
            return True
        except (TelegramBadRequest, TelegramForbiddenError):
            log.info("could not send a note to chat %s", chat_id, exc_info=True)
            return False
        except TelegramMigrateToChat as exc:  # an update sent just before the upgrade
            await self._migrated(chat_id, exc)
            return False

    async def announce(self, chat_id: int, text: str) -> None:
        """A round message outside the outbox (the round's start): waits for a slot."""
        await self.limiter.acquire(chat_id)
        try:
            await self.bot.send_message(chat_id, text)
        except (TelegramBadRequest, TelegramForbiddenError):
            log.info("could not announce in chat %s", chat_id, exc_info=True)
        except TelegramMigrateToChat as exc:  # e.g. /round sent just before the upgrade
            await self._migrated(chat_id, exc)

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
