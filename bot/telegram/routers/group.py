"""Groups and supergroups: mock-interview rounds, answered by replying to the question message.

Privacy mode stays on: the bot sees commands and replies to its own messages, nothing else.
Ordinary conversation between members never gets a reply.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import TypedDict

from aiogram import Bot, F, Router
from aiogram.enums import ChatType
from aiogram.exceptions import TelegramAPIError
from aiogram.filters import (
    JOIN_TRANSITION,
    LEAVE_TRANSITION,
    ChatMemberUpdatedFilter,
    Command,
    CommandObject,
)
from aiogram.types import CallbackQuery, Chat, ChatMemberUpdated, Message, PollAnswer
from aiogram.utils.formatting import Text

from bot.content.schema import LANGUAGES, Language, Level
from bot.i18n import t
from bot.services.rounds import (
    MAX_QUESTIONS,
    MAX_SECONDS,
    GroupView,
    QuestionState,
    RoundAnswerOutcome,
    RoundArgs,
    RoundService,
    RoundUsageError,
    StartOutcome,
    parse_round_args,
)
from bot.storage.statuses import RoundKind
from bot.telegram.callbacks import RoundNextCallback
from bot.telegram.rounds.rendering import render_top
from bot.telegram.rounds.runner import RoundRunner

GROUP_TYPES = {ChatType.GROUP, ChatType.SUPERGROUP}
QUIZ_MAX_SECONDS = 600  # Telegram's open_period limit for polls
POLL_ID_RETRIES = 5
POLL_ID_WAIT = 0.4
ADMIN_STATUSES = {"creator", "administrator"}
# A command may also be a media caption (Telegram marks it as one there too, and aiogram's Command
# reads captions); a message with neither text nor caption is no command.
COMMAND_TEXT = (F.text | F.caption).startswith("/")
NOT_A_COMMAND = ~COMMAND_TEXT
NOTES = {
    RoundAnswerOutcome.not_a_question: "round_reply_not_question",
    RoundAnswerOutcome.closed: "round_closed",
    RoundAnswerOutcome.too_short: "round_too_short",
}


async def may_manage(
    bot: Bot, chat: Chat, user_id: int, group: GroupView, message: Message | None = None
) -> bool:
    """Admins (or everyone, if the group allows it) may start, stop and move rounds on."""
    return group.allow_everyone or await is_admin(bot, chat, user_id, message)


async def is_admin(bot: Bot, chat: Chat, user_id: int, message: Message | None = None) -> bool:
    """An admin of the group; only admins change its settings ("everyone on" opens rounds,
    not the settings: else any member could switch the group's language or level)."""
    if message is not None and message.sender_chat is not None:
        return message.sender_chat.id == chat.id  # an anonymous admin posts as the group
    try:
        member = await bot.get_chat_member(chat.id, user_id)
    except TelegramAPIError:
        return False
    return member.status in ADMIN_STATUSES


def _text(lang: Language, key: str, /, **values: object) -> str:
    return Text(t(lang, key, **values)).as_html()


def build_group_router() -> Router:
    router = Router(name="group")
    router.message.filter(F.chat.type.in_(GROUP_TYPES))
    router.edited_message.filter(F.chat.type.in_(GROUP_TYPES))
    router.my_chat_member.filter(F.chat.type.in_(GROUP_TYPES))
    router.callback_query.filter(F.message.chat.type.in_(GROUP_TYPES))

    async def group_of(chat: Chat, rounds: RoundService, lang: Language) -> GroupView:
        return await rounds.ensure_group(chat.id, chat.title, lang)

    @router.my_chat_member(ChatMemberUpdatedFilter(JOIN_TRANSITION))
    async def added(
        event: ChatMemberUpdated, rounds: RoundService, runner: RoundRunner, lang: Language
    ) -> None:
        group = await group_of(event.chat, rounds, lang)
        await runner.announce(event.chat.id, _text(group.language, "group_howto"))

    @router.my_chat_member(ChatMemberUpdatedFilter(LEAVE_TRANSITION))
    async def removed(event: ChatMemberUpdated, rounds: RoundService) -> None:
        await rounds.bot_removed(event.chat.id)  # nothing can be sent there any more

    @router.message(Command("start", "help"))
    async def howto(
        message: Message, rounds: RoundService, runner: RoundRunner, lang: Language
    ) -> None:
        group = await group_of(message.chat, rounds, lang)
        await runner.note(message.chat.id, _text(group.language, "group_howto"))

    @router.message(Command("interview", "skip", "stop", "daily"))
    async def private_only(
        message: Message, rounds: RoundService, runner: RoundRunner, lang: Language
    ) -> None:
        group = await group_of(message.chat, rounds, lang)
        await runner.note(
            message.chat.id, _text(group.language, "group_private_only"), message.message_id
        )

    async def start(
        message: Message,
        bot: Bot,
        rounds: RoundService,
        runner: RoundRunner,
        group: GroupView,
        args: RoundArgs,
        kind: RoundKind,
    ) -> None:
        """Starts a round (kind "round") or a quiz (kind "quiz") if the sender may manage."""
        chat_id, glang = message.chat.id, group.language
        user_id = message.from_user.id if message.from_user else 0
        if not await may_manage(bot, message.chat, user_id, group, message):
            await runner.note(chat_id, _text(glang, "round_admins_only"), message.message_id)
            return
        if args.stop:
            if await rounds.stop(chat_id):
                await runner.note(chat_id, _text(glang, "round_stopping"))
                runner.kick(chat_id)
            else:
                await runner.note(chat_id, _text(glang, "round_none"), message.message_id)
            return
        # Holding the group's lock: the ticker cannot post question 1 before the announcement.
        async with runner.lock(chat_id):
            started = await rounds.start(
                chat_id, user_id, args.level, args.count, args.seconds, kind=kind
            )
            if started.outcome is StartOutcome.started:
                text = _text(
                    glang,
                    f"{kind}_started",
                    count=started.count,
                    level=started.level,
                    seconds=started.seconds,
                )
                await runner.announce(chat_id, text)
        if started.outcome is StartOutcome.already_running:
            await runner.note(chat_id, _text(glang, "round_running"), message.message_id)
        elif started.outcome is StartOutcome.no_questions:
            await runner.note(chat_id, _text(glang, "no_questions", level=started.level))
        else:
            runner.kick(chat_id)

    @router.message(Command("round", "quiz"))
    async def round_or_quiz(
        message: Message,
        command: CommandObject,
        bot: Bot,
        rounds: RoundService,
        runner: RoundRunner,
        lang: Language,
    ) -> None:
        kind = RoundKind(command.command)  # the commands are named after the kinds
        group = await group_of(message.chat, rounds, lang)
        try:
            args = parse_round_args(command.args, rounds.min_seconds)
            # A quiz's polls close by Telegram's open_period; /round stop ends a quiz too.
            if kind == RoundKind.quiz and (args.stop or (args.seconds or 0) > QUIZ_MAX_SECONDS):
                raise RoundUsageError(command.args or "")
        except RoundUsageError:
            usage = _text(
                group.language, f"{kind}_usage", max=MAX_QUESTIONS, min=rounds.min_seconds,
                max_seconds=MAX_SECONDS,
            )  # fmt: skip
            await runner.note(message.chat.id, usage, message.message_id)
            return
        await start(message, bot, rounds, runner, group, args, kind)

    @router.poll_answer()
    async def vote(answer: PollAnswer, rounds: RoundService, runner: RoundRunner) -> None:
        if answer.user is None:  # a vote on behalf of a chat: no participant to score
            return
        for attempt in range(POLL_ID_RETRIES):
            chat_id, result = await rounds.poll_answer(
                answer.poll_id, answer.user.id, answer.user.full_name, answer.option_ids
            )
            if chat_id is not None or attempt == POLL_ID_RETRIES - 1:
                break
            # A vote can arrive before the poll's id is stored (right after sendPoll returns).
            await asyncio.sleep(POLL_ID_WAIT)
        if chat_id is not None and result.complete and await rounds.close_current(chat_id):
            runner.kick(chat_id)

    @router.message(Command("feedback"))
    async def feedback(
        message: Message,
        command: CommandObject,
        rounds: RoundService,
        runner: RoundRunner,
        lang: Language,
    ) -> None:
        group = await group_of(message.chat, rounds, lang)
        choice = (command.args or "on").strip().lower()
        if message.from_user is None or choice not in ("on", "off"):
            await runner.note(
                message.chat.id, _text(group.language, "feedback_usage"), message.message_id
            )
            return
        await rounds.set_private_feedback(message.from_user.id, choice == "on")
        key = "feedback_on" if choice == "on" else "feedback_off"
        text = _text(group.language, key, name=message.from_user.full_name)
        await runner.note(message.chat.id, text, message.message_id)

    @router.message(Command("top"))
    async def top(
        message: Message, rounds: RoundService, runner: RoundRunner, lang: Language
    ) -> None:
        group = await group_of(message.chat, rounds, lang)
        standings = await rounds.leaderboard(message.chat.id)
        await runner.note(message.chat.id, render_top(standings, group.language).as_html())

    @router.message(Command("settings"))
    async def settings(
        message: Message,
        command: CommandObject,
        bot: Bot,
        rounds: RoundService,
        runner: RoundRunner,
        lang: Language,
    ) -> None:
        chat_id = message.chat.id
        group = await group_of(message.chat, rounds, lang)
        tokens = (command.args or "").lower().split()
        if tokens:
            user_id = message.from_user.id if message.from_user else 0
            if not await is_admin(bot, message.chat, user_id, message):
                await runner.note(
                    chat_id, _text(group.language, "group_settings_admins"), message.message_id
                )
                return
            change = _setting(tokens)  # unknown: the settings are shown with their usage
            if change is not None:
                group = await rounds.update_group(chat_id, **change)
        who = t(
            group.language, "group_who.everyone" if group.allow_everyone else "group_who.admins"
        )
        await runner.note(
            chat_id,
            _text(
                group.language, "group_settings", level=group.level, lang=group.language, who=who
            ),
            message.message_id,
        )

    @router.callback_query(RoundNextCallback.filter())
    async def next_(
        query: CallbackQuery,
        callback_data: RoundNextCallback,
        bot: Bot,
        rounds: RoundService,
        runner: RoundRunner,
        lang: Language,
    ) -> None:
        chat = query.message.chat  # type: ignore[union-attr]
        group = await group_of(chat, rounds, lang)
        if not await may_manage(bot, chat, query.from_user.id, group):
            await query.answer(t(group.language, "round_next_admins"))
            return
        closed = await rounds.close_current(chat.id, callback_data.q)
        await query.answer(t(group.language, "round_next_pressed" if closed else "outdated_button"))
        if closed:
            runner.kick(chat.id)

    # A command in reply to a question is no answer: one for this bot was taken above, one for
    # another bot (or unknown) goes on to unknown_command, which leaves other bots' alone.
    @router.message(F.reply_to_message, NOT_A_COMMAND)
    async def reply(
        message: Message, bot: Bot, rounds: RoundService, runner: RoundRunner, lang: Language
    ) -> None:
        await _answer(message, bot, rounds, runner, lang, edited=False)

    @router.edited_message(F.reply_to_message, NOT_A_COMMAND)
    async def edited(
        message: Message, bot: Bot, rounds: RoundService, runner: RoundRunner, lang: Language
    ) -> None:
        await _answer(message, bot, rounds, runner, lang, edited=True)

    @router.message(COMMAND_TEXT)
    async def unknown_command(
        message: Message, bot: Bot, rounds: RoundService, runner: RoundRunner, lang: Language
    ) -> None:
        command = (message.text or message.caption or "").split(maxsplit=1)[0]
        _, _, addressee = command.partition("@")
        if addressee and addressee.lower() != ((await bot.me()).username or "").lower():
            return  # another bot's command
        group = await group_of(message.chat, rounds, lang)
        await runner.note(
            message.chat.id, _text(group.language, "unknown_command"), message.message_id
        )

    return router


class GroupChange(TypedDict, total=False):
    """One `/settings` change: RoundService.update_group's keywords."""

    level: Level
    language: Language
    allow_everyone: bool


def _setting(tokens: list[str]) -> GroupChange | None:
    """`level junior`, `lang ru`, `everyone on|off`; None when it is none of those."""
    if len(tokens) != 2:
        return None
    key, value = tokens
    if key == "level" and value in Level.__members__:
        return {"level": Level(value)}
    if key in ("lang", "language") and value in LANGUAGES:
        return {"language": "ru" if value == "ru" else "en"}
    if key == "everyone" and value in ("on", "off"):
        return {"allow_everyone": value == "on"}
    return None


def _sent_at(message: Message, edited: bool) -> datetime | None:
    """When Telegram received the message, or its edit (aiogram gives `edit_date` as a Unix
    time); None, judged on arrival, when an edit carries no date."""
    if not edited:
        return message.date
    return None if message.edit_date is None else datetime.fromtimestamp(message.edit_date, UTC)


async def _answer(
    message: Message,
    bot: Bot,
    rounds: RoundService,
    runner: RoundRunner,
    lang: Language,
    edited: bool,
) -> None:
    target = message.reply_to_message
    if target is None or target.from_user is None or target.from_user.id != bot.id:
        return  # members talking to each other
    if message.from_user is None or message.from_user.is_bot:
        return
    chat_id = message.chat.id
    group = await rounds.ensure_group(chat_id, message.chat.title, lang)
    if message.text is None:
        state = await rounds.question_state(chat_id, target.message_id)
        keys: dict[QuestionState | None, str] = {
            QuestionState.open: "round_not_text",
            QuestionState.closed: "round_closed",
        }
        key = keys.get(state, "round_reply_not_question")
        await runner.note(chat_id, _text(group.language, key), message.message_id)
        return
    result = await rounds.submit(
        chat_id,
        message.from_user.id,
        message.from_user.full_name,
        target.message_id,
        message.text,
        message.message_id,
        edited=edited,
        sent_at=_sent_at(message, edited),
    )
    if result.outcome in (RoundAnswerOutcome.accepted, RoundAnswerOutcome.replaced):
        await runner.react(chat_id, message.message_id)
        if result.complete and await rounds.close_current(chat_id):
            runner.kick(chat_id)
    elif result.outcome in NOTES:
        await runner.note(chat_id, _text(group.language, NOTES[result.outcome]), message.message_id)
