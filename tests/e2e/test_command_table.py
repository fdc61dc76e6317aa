"""Every command in the README, in every chat type it is meant for, gets a reply.

The table below mirrors the README's two command tables (private chat, group). Each row is sent
through the real Dispatcher and the fake Bot API, in a chat of its own, in English and in
Russian; the bot must answer in that chat, with the row's reply, in the chat's language, and
log no handler exception. `test_the_table_covers_every_command` keeps the table complete: a
command added to the menus (`bot.i18n.COMMANDS`, `GROUP_COMMANDS`) or to the README without a
row here fails it.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import re
import string
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from bot.i18n import COMMANDS, GROUP_COMMANDS, TEXTS
from bot.scoring.service import ScoringService
from bot.storage.migrations import upgrade
from tests.e2e.conftest import BotProcess
from tests.fake_telegram import WAIT, FakeTelegram

pytestmark = pytest.mark.e2e

README = Path(__file__).resolve().parents[2] / "README.md"
OPERATORS = {"en": 77, "ru": 78}  # ADMIN_IDS: /stats answers them
CYRILLIC = re.compile("[А-Яа-яЁё]")


@dataclass(frozen=True)
class Case:
    text: str  # what the user sends
    reply: str  # the i18n key of the reply the bot must send
    role: str = ""  # "" = a plain user in private, the creator in a group; operator | member
    before: str | None = None  # sent (and answered) first, in the same chat
    reply_lang: str | None = None  # when the reply's language is not the chat's

    @property
    def id(self) -> str:
        role = f" as {self.role}" if self.role else ""
        before = f" after {self.before}" if self.before else ""
        return f"{self.text}{role}{before}"


PRIVATE = [
    Case("/start", "greeting"),
    Case("/help", "help"),
    Case("/settings", "settings"),
    Case("/interview", "interview_started"),
    Case("/interview junior 2", "interview_started"),
    Case("/interview expert 999", "interview_usage"),  # bad arguments
    Case("/interview ²", "interview_usage"),  # isdigit() but not int(): once no reply at all
    Case("/skip", "no_question"),
    Case("/skip", "skipped", before="/interview junior 2"),
    Case("/stop", "stopped_none"),
    Case("/stop", "summary_title", before="/interview junior 2"),
    Case("/daily", "daily_none"),
    Case("/daily", "daily_status", before="/daily 09:30 Europe/Moscow"),
    Case("/daily 09:30 Europe/Moscow", "daily_subscribed"),
    Case("/daily 09:30", "daily_tz_hint"),
    Case("/daily off", "daily_off_none"),
    Case("/daily off", "daily_off", before="/daily 09:30"),
    Case("/daily 25:99 Mars/Base", "daily_bad_time"),
    Case("/daily 09:30 Mars/Base", "daily_bad_tz"),
    Case("/review", "review.none_yet"),
    # "not due yet" and "review started" need an answered question: test_learning_loop.py
    Case("/review lots", "review.usage"),
    Case("/review ①", "review.usage"),
    Case("/progress", "progress.empty"),
    Case("/report", "report.empty"),
    Case("/export", "export_empty"),
    Case(
        "/forget", "forget_confirm"
    ),  # the buttons and what they do: test_forget.py  # a document once there are answers: test_private_flow.py
    Case("/stats", "stats", role="operator"),
    Case("/stats", "unknown_command"),  # not an operator: as if the command did not exist
    Case("/frobnicate", "unknown_command"),
]

GROUP = [
    Case("/round", "round_started"),
    Case("/round junior 1 30", "round_started"),
    Case("/round junior 1 30", "round_admins_only", role="member"),
    Case("/round expert 99 1", "round_usage"),
    Case("/round junior ²", "round_usage"),
    Case("/round stop", "round_none"),
    Case("/round stop", "round_stopping", before="/round junior 2 60"),
    Case("/quiz", "quiz_started"),
    Case("/quiz junior 2 9999", "quiz_usage"),
    Case("/top", "round_top_empty"),
    Case("/feedback on", "feedback_on", role="member"),
    Case("/feedback off", "feedback_off", role="member"),
    Case("/feedback maybe", "feedback_usage", role="member"),
    Case("/settings", "group_settings", role="member"),
    Case("/settings lang ru", "group_settings", reply_lang="ru"),
    Case("/settings lang en", "group_settings", reply_lang="en"),
    Case("/settings lang ru", "group_settings_admins", role="member"),
    Case("/settings everyone on", "group_settings"),
    Case("/help", "group_howto", role="member"),
    Case("/start", "group_howto", role="member"),
    Case("/interview", "group_private_only", role="member"),  # private commands point there
    Case("/daily 09:30", "group_private_only", role="member"),
    Case("/frobnicate", "unknown_command", role="member"),
]


def fragment(lang: str, key: str) -> str:
    """The longest literal stretch of the reply's text (between {placeholders})."""
    parts = [literal for literal, *_ in string.Formatter().parse(TEXTS[key][lang])]
    return max((p.strip() for p in parts), key=len)[:40]


def command_of(text: str) -> str:
    return text.split()[0].lstrip("/")


# --- the table is complete ----------------------------------------------------------------------


def readme_commands(section: str) -> set[str]:
    """Commands in the first table after the heading line containing `section`."""
    lines = README.read_text("utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if section in line)
    commands: set[str] = set()
    in_table = False
    for line in lines[start + 1 :]:
        if line.startswith("|"):
            in_table = True
            cell = line.split("|")[1]
            commands.update(re.findall(r"`/([a-z_]+)", cell))
        elif in_table:
            break
    return commands


def test_the_table_covers_every_command() -> None:
    private = {command_of(c.text) for c in PRIVATE}
    group = {command_of(c.text) for c in GROUP}
    assert set(COMMANDS) <= private, set(COMMANDS) - private
    assert set(GROUP_COMMANDS) <= group, set(GROUP_COMMANDS) - group
    in_private_readme = readme_commands("In a private chat:")
    in_group_readme = readme_commands("| command (in a group) |")
    assert in_private_readme >= {"start", "interview", "stats"}  # the parser found the table
    assert in_group_readme >= {"round", "quiz", "top"}
    assert in_private_readme <= private, in_private_readme - private
    assert in_group_readme <= group, in_group_readme - group
    for case in PRIVATE + GROUP:  # every expected reply exists in both languages
        assert fragment("ru", case.reply) and fragment("en", case.reply), case.reply


# --- one bot per chat type ----------------------------------------------------------------------


class ErrorLog(logging.Handler):
    """ERROR records from any logger (aiogram.event's handler exceptions, the bot's own), and
    aiogram.event's "Update id=N is handled" lines, which say an update has been processed."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.errors: list[logging.LogRecord] = []
        self.processed: dict[int, bool] = {}  # update id -> handled

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno >= logging.ERROR:
            self.errors.append(record)
        elif record.name == "aiogram.event" and str(record.msg).startswith("Update id="):
            update_id, outcome = record.args[:2]  # type: ignore[index]
            self.processed[int(update_id)] = outcome == "handled"

    def report(self, since: int = 0) -> str:
        return "\n".join(self.format(r) for r in self.errors[since:])


@dataclass
class Env:
    telegram: FakeTelegram
    log: ErrorLog
    ids: itertools.count


@pytest_asyncio.fixture(scope="class", loop_scope="class")
async def env(
    scoring: ScoringService, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Env]:
    handler = ErrorLog()
    handler.setFormatter(logging.Formatter("%(name)s: %(message)s"))
    root, event = logging.getLogger(), logging.getLogger("aiogram.event")
    saved = event.level
    event.setLevel(logging.INFO)
    root.addHandler(handler)
    telegram = FakeTelegram()
    await telegram.start()
    db_url = f"sqlite+aiosqlite:///{tmp_path_factory.mktemp('commands') / 'bot.db'}"
    await asyncio.to_thread(upgrade, db_url)
    bot = BotProcess(telegram, db_url, scoring, admin_ids=tuple(OPERATORS.values()))
    try:
        await bot.start(telegram)
        yield Env(telegram, handler, itertools.count(1))
        assert not handler.errors, handler.report()  # nothing failed in the background either
    finally:
        await bot.stop()
        await telegram.stop()
        root.removeHandler(handler)
        event.setLevel(saved)


async def processed(env: Env, update_id: int) -> bool:
    """Whether a handler took the update, once the Dispatcher has finished with it."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + WAIT
    while update_id not in env.log.processed:
        assert loop.time() < deadline, f"update {update_id} was never processed"
        await asyncio.sleep(0.02)
    return env.log.processed[update_id]


def push(env: Env, user: dict[str, Any], chat_id: int, text: str) -> int:
    """Send `text` in the chat (private or group); the update's id."""
    if chat_id == user["id"]:
        env.telegram.send_text(user, text)
    else:
        env.telegram.send_in_group(user, chat_id, text)
    return env.telegram.updates[-1]["update_id"]


async def send(env: Env, user: dict[str, Any], chat_id: int, text: str) -> list[dict[str, Any]]:
    """Send `text` in the chat; the bot's messages there once the update is processed and it
    has said something (replies sent later by background work may follow)."""
    telegram = env.telegram
    before = len(telegram.bot_messages(chat_id))
    update_id = push(env, user, chat_id, text)
    assert await processed(env, update_id), f"no handler took {text!r}\n{env.log.report()}"
    try:
        return await telegram.wait_for(lambda s: s.bot_messages(chat_id)[before:], WAIT)
    except TimeoutError:
        raise AssertionError(f"no reply to {text!r}\n{env.log.report()}") from None


def check(env: Env, case: Case, replies: list[dict[str, Any]], lang: str, errors: int) -> None:
    texts = [m["text"] for m in replies]
    expected = fragment(lang, case.reply)
    assert any(expected in text for text in texts), (expected, texts)
    for text in texts:  # every reply in the chat's language
        if lang == "ru":
            assert CYRILLIC.search(text), text
        else:
            assert not CYRILLIC.search(text), text
    assert len(env.log.errors) == errors, env.log.report(errors)


@pytest.mark.asyncio(loop_scope="class")
class TestPrivate:
    @pytest.mark.parametrize("lang", ["en", "ru"])
    @pytest.mark.parametrize("case", PRIVATE, ids=[c.id for c in PRIVATE])
    async def test_command_gets_a_reply(self, env: Env, case: Case, lang: str) -> None:
        user_id = OPERATORS[lang] if case.role == "operator" else 1000 + next(env.ids)
        user = env.telegram.user(user_id, language_code=lang)
        if case.before:
            await send(env, user, user_id, case.before)
        errors = len(env.log.errors)
        replies = await send(env, user, user_id, case.text)
        check(env, case, replies, case.reply_lang or lang, errors)


@pytest.mark.asyncio(loop_scope="class")
class TestGroup:
    @pytest.mark.parametrize("lang", ["en", "ru"])
    @pytest.mark.parametrize("case", GROUP, ids=[c.id for c in GROUP])
    async def test_command_gets_a_reply(self, env: Env, case: Case, lang: str) -> None:
        index = next(env.ids)
        chat_id, admin_id, member_id = -100_000 - index, 2000 + 2 * index, 2001 + 2 * index
        admin = env.telegram.user(admin_id, language_code=lang, first_name="Alice")
        member = env.telegram.user(member_id, language_code=lang, first_name="Bob")
        env.telegram.group(chat_id, members={admin_id: "creator", member_id: "member"})
        env.telegram.add_bot(admin, chat_id)  # the group takes the language of who added it
        await env.telegram.wait_for(lambda s: s.bot_messages(chat_id), WAIT)  # its how-to
        if case.before:
            await send(env, admin, chat_id, case.before)
        errors = len(env.log.errors)
        replies = await send(env, member if case.role == "member" else admin, chat_id, case.text)
        check(env, case, replies, case.reply_lang or lang, errors)

    async def test_another_bots_command_gets_no_reply(self, env: Env) -> None:
        chat_id, admin_id = -99_999, 2999
        admin = env.telegram.user(admin_id, first_name="Alice")
        env.telegram.group(chat_id, members={admin_id: "creator"})
        env.telegram.add_bot(admin, chat_id)
        await env.telegram.wait_for(lambda s: s.bot_messages(chat_id), WAIT)
        before = len(env.telegram.bot_messages(chat_id))
        other = push(env, admin, chat_id, "/frobnicate@some_other_bot")
        mine = push(env, admin, chat_id, "/help@mock_interview_bot")
        await send(env, admin, chat_id, "/top")  # updates run concurrently: wait for all three
        assert await processed(env, other) and await processed(env, mine)
        await env.telegram.wait_for(lambda s: len(s.bot_messages(chat_id)) >= before + 2, WAIT)
        texts = [m["text"] for m in env.telegram.bot_messages(chat_id)[before:]]
        assert len(texts) == 2, texts  # /help for this bot and /top; nothing for the other bot
        assert any(fragment("en", "group_howto") in text for text in texts), texts
        assert any(fragment("en", "round_top_empty") in text for text in texts), texts
