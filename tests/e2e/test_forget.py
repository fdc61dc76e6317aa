"""/forget deletes everything of one person: after the confirmation no table holds their id, in
any column or in any stored update; Cancel deletes nothing. Every kind of data the bot keeps is
first made through the bot itself: profile and settings, the daily question and its delivery,
an interview (answers and review cards), a group round and a quiz answered in a group chat, the
private-feedback choice for rounds; another person's rows stay exactly as they were, but for an
update of theirs quoting what the bot wrote about the forgotten person."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import Select, and_, func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.content.loader import QuestionBank
from bot.scoring.service import ScoringService
from bot.storage.engine import create_engine
from bot.storage.models import (
    Answer,
    AskedQuestion,
    Base,
    DailyDelivery,
    Interview,
    ReceivedUpdate,
    Round,
    RoundAnswer,
    RoundQuestion,
)
from tests.e2e.conftest import BotProcess, find_question, question_messages, wait_text
from tests.e2e.daily_helpers import Clock, DailyBot, daily_messages
from tests.fake_telegram import WAIT, FakeTelegram

pytestmark = pytest.mark.e2e

UID = 987_654_321  # digits that nothing else in the database contains
OTHER = 123_456_789
GROUP = -100_246_802
# Every table that can hold a person's id: a user_id column, the profile itself, a round's
# starter, and the updates Telegram sent. The test must give the forgotten person rows in each.
PERSONAL = {t.name for t in Base.metadata.sorted_tables if "user_id" in t.c} | {
    "users",
    "rounds",
    "received_updates",
}


async def traces(db_url: str, needle: int | str) -> list[str]:
    """Every table's rows, as text, that contain the id (or name)."""
    engine = create_engine(db_url)
    found = []
    async with engine.connect() as conn:
        for table in Base.metadata.sorted_tables:
            for row in (await conn.execute(select(table))).all():
                if str(needle) in repr(tuple(row)):
                    found.append(f"{table.name}: {tuple(row)}")
    await engine.dispose()
    return found


async def practise(telegram: FakeTelegram, bank: QuestionBank, uid: int, lang: str) -> None:
    """An answered interview question and a daily subscription."""
    user = telegram.user(uid, language_code=lang)
    telegram.send_text(user, "/daily 09:30 Europe/Moscow")
    telegram.send_text(user, "/interview junior 1")
    first = (await telegram.wait_for(lambda s: question_messages(s, uid)))[0]
    count = len(telegram.bot_messages(uid))
    telegram.send_text(user, find_question(bank, first).answer.get(lang), first["message_id"])
    await wait_text(telegram, uid, "Score: " if lang == "en" else "Оценка: ", after=count)


@pytest.mark.parametrize("lang", ["en", "ru"])
async def test_forget_leaves_nothing_and_cancel_keeps_everything(
    telegram: FakeTelegram, bot: BotProcess, bank: QuestionBank, db_url: str, lang: str
) -> None:
    await practise(telegram, bank, UID, lang)
    await practise(telegram, bank, OTHER, lang)
    user = telegram.user(UID, language_code=lang)

    count = len(telegram.bot_messages(UID))
    telegram.send_text(user, "/forget")
    ask = await wait_text(telegram, UID, "/export", after=count)
    buttons = [b["callback_data"] for row in ask["reply_markup"]["inline_keyboard"] for b in row]
    assert len(buttons) == 2
    telegram.press(user, ask, buttons[1])  # Cancel
    kept = "Nothing was deleted" if lang == "en" else "Ничего не удалено"
    await telegram.wait_for(lambda s: kept in s.messages[(UID, ask["message_id"])]["text"])
    assert await traces(db_url, UID)  # all still there

    count = len(telegram.bot_messages(UID))
    telegram.send_text(user, "/forget")
    ask = await wait_text(telegram, UID, "/export", after=count)
    telegram.press(user, ask, ask["reply_markup"]["inline_keyboard"][0][0]["callback_data"])
    done = "everything the bot kept" if lang == "en" else "всё, что бот о вас хранил"
    await telegram.wait_for(lambda s: done in s.messages[(UID, ask["message_id"])]["text"])
    assert await traces(db_url, UID) == []
    assert await traces(db_url, OTHER)  # the other person keeps theirs

    count = len(telegram.bot_messages(UID))
    telegram.send_text(user, "/export")
    await wait_text(telegram, UID, "/interview", after=count)  # "no answers yet"
    assert not telegram.sent(UID, "sendDocument")


@pytest.fixture
async def clocked_bot(
    telegram: FakeTelegram, db_url: str, scoring: ScoringService
) -> AsyncIterator[DailyBot]:
    """The bot with the daily schedule on a clock the test moves (rounds keep the real one)."""
    process = DailyBot(telegram, db_url, scoring, Clock(datetime(2026, 6, 10, 5, 0, tzinfo=UTC)))
    await process.start(telegram)
    yield process
    await process.stop()


@pytest.fixture
async def db(db_url: str) -> AsyncIterator[AsyncEngine]:
    engine = create_engine(db_url)
    yield engine
    await engine.dispose()


async def until(db: AsyncEngine, query: Select[Any], what: str) -> None:
    """Until the query's first value is truthy: the bot records some things a moment after
    Telegram accepted the message they belong to."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + WAIT
    while True:
        async with db.connect() as conn:
            if (await conn.execute(query)).scalar():
                return
        assert loop.time() < deadline, f"never: {what}"
        await asyncio.sleep(0.05)


def settled() -> Select[Any]:
    """True once nothing is owed: every message sent and recorded, every update handled."""
    owed = [
        select(Interview.id).where(Interview.status != "finished"),
        select(Answer.id).where(Answer.status != "delivered"),
        select(DailyDelivery.id).where(DailyDelivery.status != "sent"),
        select(Round.id).where(Round.status != "finished"),
        select(RoundAnswer.id).where(
            (RoundAnswer.status != "graded") | (RoundAnswer.private_feedback == "owed")
        ),
        select(ReceivedUpdate.update_id).where(ReceivedUpdate.handled_at.is_(None)),
    ]
    return select(and_(*(~query.exists() for query in owed)))


def buttons(message: dict[str, Any]) -> list[tuple[str, str]]:
    rows = message["reply_markup"]["inline_keyboard"]
    return [(b["text"], b.get("callback_data", "")) for row in rows for b in row]


async def reply(
    telegram: FakeTelegram, user: dict[str, Any], text: str, needle: str, chat_id: int | None = None
) -> dict[str, Any]:
    """Sends `text` (in a private chat, or in a group), returns the bot's reply with `needle`."""
    chat = chat_id or user["id"]
    count = len(telegram.bot_messages(chat))
    if chat_id is None:
        telegram.send_text(user, text)
    else:
        telegram.send_in_group(user, chat_id, text)
    return await wait_text(telegram, chat, needle, after=count)


async def private_practice(
    telegram: FakeTelegram, bank: QuestionBank, user: dict[str, Any], questions: int
) -> None:
    """An interview: the first question answered, any others skipped, up to its summary."""
    uid = user["id"]
    asked = len(question_messages(telegram, uid))
    count = len(telegram.bot_messages(uid))
    telegram.send_text(user, f"/interview junior {questions}")
    for index in range(questions):
        message = (
            await telegram.wait_for(lambda s, n=asked + index: question_messages(s, uid)[n:])
        )[0]
        if index == 0:
            telegram.send_text(user, find_question(bank, message).answer.en, message["message_id"])
        else:
            telegram.send_text(user, "/skip")
    await wait_text(telegram, uid, "Interview finished", after=count)


async def group_round(
    telegram: FakeTelegram, bank: QuestionBank, db: AsyncEngine, starter: dict[str, Any]
) -> None:
    """A one-question round started by `starter`: both people answer by reply, `starter`
    moves on, both get their detailed feedback in private."""
    zed, olga = telegram.user(UID, first_name="Zoltan"), telegram.user(OTHER, first_name="Olga")
    await reply(telegram, starter, "/round junior 1 60", "Round started: 1 question", GROUP)
    message = (
        await telegram.wait_for(
            lambda s: [m for m in s.bot_messages(GROUP) if m["text"].startswith("Round · question")]
        )
    )[0]
    recorded = select(RoundQuestion.id).where(
        RoundQuestion.chat_id == GROUP, RoundQuestion.message_id == message["message_id"]
    )
    await until(db, recorded, "the round's question recorded")
    question = find_question(bank, message)
    count = {uid: len(telegram.bot_messages(uid)) for uid in (UID, OTHER)}
    for user, text in ((zed, question.answer.en), (olga, question.key_points[0].en)):
        answer = telegram.send_in_group(user, GROUP, text, reply_to=message["message_id"])
        await telegram.wait_for(lambda s, key=(GROUP, answer["message_id"]): s.reactions.get(key))
    telegram.press(starter, message, buttons(message)[0][1])  # "Next"
    results = await wait_text(telegram, GROUP, "Results · question 1/1")
    assert "Zoltan — " in results["text"] and "Olga — " in results["text"]
    for uid in (UID, OTHER):
        await wait_text(telegram, uid, "Detailed feedback on your answer", after=count[uid])
    await wait_text(telegram, GROUP, "Round finished — leaderboard")


async def group_quiz(telegram: FakeTelegram, db: AsyncEngine, starter: dict[str, Any]) -> None:
    """A one-poll quiz started by `starter`: both people vote, `starter` moves on."""
    zed, olga = telegram.user(UID, first_name="Zoltan"), telegram.user(OTHER, first_name="Olga")
    count = len(telegram.bot_messages(GROUP))
    await reply(telegram, starter, "/quiz junior 1 30", "Quiz started: 1 poll", GROUP)
    [poll_id] = await telegram.wait_for(lambda s: list(s.polls))
    rq = select(RoundQuestion.id).where(RoundQuestion.poll_id == poll_id).scalar_subquery()
    await until(db, select(rq), "the poll recorded")
    for user in (zed, olga):
        telegram.answer_poll(user, poll_id, [0])
    votes = select(func.count()).select_from(RoundAnswer).where(RoundAnswer.round_question_id == rq)
    await until(db, select(votes.scalar_subquery() == 2), "both votes stored")
    poll = next(m for m in telegram.bot_messages(GROUP) if m.get("poll", {}).get("id") == poll_id)
    telegram.press(starter, poll, buttons(poll)[0][1])
    await wait_text(telegram, GROUP, "Results · question 1/1", after=count)
    await wait_text(telegram, GROUP, "Round finished — leaderboard", after=count)


async def test_forget_deletes_every_kind_of_data_and_only_theirs(
    telegram: FakeTelegram, clocked_bot: DailyBot, bank: QuestionBank, db_url: str, db: AsyncEngine
) -> None:
    zed, olga = telegram.user(UID, first_name="Zoltan"), telegram.user(OTHER, first_name="Olga")
    people = (zed, olga)

    # Private chats: the profile, a daily question delivered and answered, an interview with an
    # answer and a skip (review cards both), the progress chart.
    for user in people:
        await reply(telegram, user, "/start", f"Hi, {user['first_name']}!")
        await reply(telegram, user, "/daily 09:30 Europe/Moscow", "Done!")
    clocked_bot.clock.set(2026, 6, 10, 6, 30)  # 09:30 in Moscow
    for user in people:
        uid = user["id"]
        daily = (await telegram.wait_for(lambda s, u=uid: daily_messages(s, u)))[0]
        # Sent by the scheduler, not in reply to this person: an answer that came before the
        # message's id was recorded would be told the question is not asked yet.
        recorded = select(AskedQuestion.id).where(
            AskedQuestion.chat_id == uid, AskedQuestion.message_id == daily["message_id"]
        )
        await until(db, recorded, "the daily question's message recorded")
        count = len(telegram.bot_messages(uid))
        telegram.send_text(user, find_question(bank, daily).answer.en, daily["message_id"])
        await wait_text(telegram, uid, "Streak: 1 day in a row", after=count)
    await private_practice(telegram, bank, zed, 2)
    await private_practice(telegram, bank, olga, 1)
    telegram.send_text(zed, "/progress")
    await telegram.wait_for(lambda s: s.sent(UID, "sendPhoto"))

    # A group: both want detailed feedback in private; Zoltan starts a round, Olga a quiz, both
    # take part in each.
    telegram.group(GROUP, members={UID: "creator", OTHER: "administrator"})
    telegram.add_bot(zed, GROUP)
    await wait_text(telegram, GROUP, "mock ML interviews right here")
    for user in people:
        needle = f"{user['first_name']}, after each question I'll send you detailed feedback"
        await reply(telegram, user, "/feedback on", needle, GROUP)
    await group_round(telegram, bank, db, starter=zed)
    # Olga replies to the results: her update quotes the bot's message with Zoltan's name and
    # score. It is hers, but what it quotes is what the bot wrote about him.
    results = next(m for m in telegram.bot_messages(GROUP) if m["text"].startswith("Results"))
    telegram.send_in_group(olga, GROUP, "well played, everyone", reply_to=results["message_id"])
    quoting = telegram.updates[-1]["update_id"]
    await group_quiz(telegram, db, starter=olga)

    # Settings: Russian and senior, where Telegram says English and the default is junior.
    view = await reply(telegram, zed, "/settings", "Settings. Level: junior. Language: English.")
    count = len(telegram.bot_messages(UID))
    telegram.press(zed, view, "lang:ru")
    await wait_text(telegram, UID, "Настройки. Уровень: junior", after=count)
    telegram.press(zed, view, "lvl:senior")
    await wait_text(telegram, UID, "Уровень: senior", after=count)

    await until(db, settled(), "every message sent and recorded, every update handled")
    held = await traces(db_url, UID)
    assert {row.split(":")[0] for row in held} >= PERSONAL, held
    assert await traces(db_url, "Zoltan")
    olga_before = await traces(db_url, OTHER)
    assert {row.split(":")[0] for row in olga_before} >= PERSONAL, olga_before

    ask = await reply(telegram, zed, "/forget", "/export")
    telegram.press(zed, ask, buttons(ask)[0][1])
    done = "всё, что бот о вас хранил"
    await telegram.wait_for(lambda s: done in s.messages[(UID, ask["message_id"])]["text"])

    assert await traces(db_url, UID) == []
    assert await traces(db_url, "Zoltan") == []  # the name went with the id
    # Olga's rows, each exactly as it was, but for her reply quoting Zoltan's results: it keeps
    # only its number, enough to recognise a repeated delivery.
    assert await traces(db_url, OTHER) == [
        row for row in olga_before if not row.startswith(f"received_updates: ({quoting}, ")
    ]
    async with db.connect() as conn:
        kept = await conn.scalar(
            select(ReceivedUpdate.payload).where(ReceivedUpdate.update_id == quoting)
        )
        rounds = (await conn.execute(select(Round.kind, Round.started_by).order_by(Round.id))).all()
    assert kept is not None and json.loads(kept) == {"update_id": quoting}
    assert [tuple(r) for r in rounds] == [("round", None), ("quiz", OTHER)]  # the group's history

    # A new person to the bot: English as Telegram says, the default level, nothing recorded.
    hello = await reply(telegram, zed, "/start", "Hi, Zoltan!")
    assert [text for text, _ in buttons(hello)] == ["• junior", "middle", "senior"]
    await reply(telegram, zed, "/progress", "No graded answers yet")
    await reply(telegram, zed, "/review", "Nothing to review yet")
    await reply(telegram, zed, "/daily", "You have no daily question")
    await reply(telegram, zed, "/export", "No answers yet")
    top = await reply(telegram, zed, "/top", "The group's all-time leaderboard:", GROUP)
    assert "Olga" in top["text"] and "Zoltan" not in top["text"]
    await private_practice(telegram, bank, zed, 1)  # and practises again as anyone would
