"""/forget deletes everything of one person: after the confirmation no table holds their id, in
any column or in any stored update; Cancel deletes nothing."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from bot.content.loader import QuestionBank
from bot.storage.engine import create_engine
from bot.storage.models import Base
from tests.e2e.conftest import BotProcess, find_question, question_messages, wait_text
from tests.fake_telegram import FakeTelegram

pytestmark = pytest.mark.e2e

UID = 987_654_321  # digits that nothing else in the database contains
OTHER = 123_456_789


async def traces(db_url: str, needle: int) -> list[str]:
    """Every table's rows, as text, that contain the id."""
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
