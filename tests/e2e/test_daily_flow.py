"""Daily questions end to end: /daily, delivery at each user's local minute, answers and streaks,
restarts mid-broadcast, 429 storms, 5xx and blocked users. The clock is injected: no test
waits for real minutes."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, time

import pytest

from bot.content.loader import QuestionBank
from bot.scoring.service import ScoringService
from tests.e2e.conftest import find_question, question_messages, wait_text
from tests.e2e.daily_helpers import (
    Clock,
    DailyBot,
    daily_counts,
    daily_messages,
    deliveries,
    subscribe_many,
    subscription,
)
from tests.fake_telegram import WAIT, FakeTelegram, Fault

pytestmark = pytest.mark.e2e


async def assert_each_sent_once(telegram: FakeTelegram, db_url: str, ids: list[int]) -> None:
    """Every subscriber got exactly one daily message, and every delivery row says sent."""
    assert daily_counts(telegram, ids) == dict.fromkeys(ids, 1)
    rows = await deliveries(db_url)
    assert len(rows) == len(ids) and {r.status for r in rows} == {"sent"}


async def settle(seconds: float = 0.4) -> None:
    """Let the scheduler (ticking every 0.05 s) run several passes."""
    await asyncio.sleep(seconds)


async def test_delivery_at_the_local_minute_in_several_timezones(
    telegram: FakeTelegram, db_url: str, scoring: ScoringService
) -> None:
    clock = Clock(datetime(2026, 6, 10, 0, 0, tzinfo=UTC))  # a Wednesday
    bot = DailyBot(telegram, db_url, scoring, clock)
    await bot.start(telegram)
    try:
        users = {
            1: ("/daily 09:00 Europe/Moscow", "Europe/Moscow", (6, 0)),
            2: ("/daily 9:00 america/new_york", "America/New_York", (13, 0)),
            3: ("/daily 09:00 UTC+05:30", "UTC+05:30", (3, 30)),
            4: ("/daily 09:00", "UTC", (9, 0)),
        }
        for uid, (command, tz, _) in users.items():
            telegram.send_text(telegram.user(uid), command)
            reply = await wait_text(telegram, uid, "Done!")
            assert f"({tz})" in reply["text"] and "Next: 2026-06-10 09:00 (Wed)" in reply["text"]
        hint = await wait_text(telegram, 4, "Timezone: UTC. To set yours")
        assert "/daily 09:00 Europe/Berlin" in hint["text"]
        # The weekday follows the user's language, not the process locale.
        telegram.send_text(telegram.user(5, language_code="ru"), "/daily 09:00 Europe/Moscow")
        reply = await wait_text(telegram, 5, "Готово!")
        assert "Следующий: 2026-06-10 09:00 (ср)" in reply["text"], reply["text"]

        chats = list(users)
        expected = {uid: 0 for uid in chats}
        for uid in sorted(chats, key=lambda u: users[u][2]):
            hour, minute = users[uid][2]
            clock.set(2026, 6, 10, hour, minute - 1 if minute else 59)
            if not minute:
                clock.advance(hours=-1)
            await settle()
            assert daily_counts(telegram, chats) == expected  # a minute early: nothing
            clock.set(2026, 6, 10, hour, minute)
            await telegram.wait_for(lambda s, u=uid: daily_messages(s, u))
            expected[uid] = 1
            await settle()
            assert daily_counts(telegram, chats) == expected
        clock.set(2026, 6, 10, 23, 0)
        await settle()
        assert daily_counts(telegram, chats) == expected  # once a day
        for uid in sorted(chats, key=lambda u: users[u][2]):  # the next day: the next one
            clock.set(2026, 6, 11, *users[uid][2])
            await telegram.wait_for(lambda s, u=uid: len(daily_messages(s, u)) == 2)
    finally:
        await bot.stop()
    assert {r.status for r in await deliveries(db_url)} == {"sent"}


async def test_answers_streak_and_reply_during_an_interview(
    telegram: FakeTelegram, db_url: str, scoring: ScoringService, bank: QuestionBank
) -> None:
    clock = Clock(datetime(2026, 6, 10, 7, 0, tzinfo=UTC))
    bot = DailyBot(telegram, db_url, scoring, clock)
    await bot.start(telegram)
    try:
        user = telegram.user(10)
        telegram.send_text(user, "/daily 08:00 +0")
        await wait_text(telegram, 10, "Done!")
        clock.set(2026, 6, 10, 8, 0)
        daily = (await telegram.wait_for(lambda s: daily_messages(s, 10)))[0]
        question = find_question(bank, daily)
        assert question.level == "junior"

        telegram.send_text(user, "/interview middle 2")
        await telegram.wait_for(lambda s: question_messages(s, 10))
        count = len(telegram.bot_messages(10))
        # A reply to the daily question grades it, though the interview's question is newer.
        telegram.send_text(user, question.answer.en, reply_to=daily["message_id"])
        feedback = await wait_text(telegram, 10, "Score: ", after=count)
        assert feedback["reply_to_message_id"] is not None
        await wait_text(telegram, 10, "Streak: 1 day in a row", after=count)
        score = float(feedback["text"].split("Score: ")[1].split("/10")[0])
        assert score >= 7.0

        count = len(telegram.bot_messages(10))
        telegram.send_text(user, "I don't know")  # plain text: the interview's open question
        await wait_text(telegram, 10, "Score: 0/10", after=count)
        nxt = await telegram.wait_for(lambda s: question_messages(s, 10)[1:])
        assert nxt and not any("Streak" in m["text"] for m in telegram.bot_messages(10)[count:])

        telegram.send_text(user, "/daily")
        view = await wait_text(telegram, 10, "Daily question: at 08:00 (UTC), level junior")
        assert "Streak: 1 day in" in view["text"] and "Next: 2026-06-11 08:00 (Thu)" in view["text"]
        buttons = [
            b["callback_data"] for row in view["reply_markup"]["inline_keyboard"] for b in row
        ]
        assert buttons == ["dly:time:", "dly:level:", "dly:wd:", "dly:off:"]
        telegram.press(user, view, "dly:wd:")
        await telegram.wait_for(
            lambda s: "weekdays only" in s.messages[(10, view["message_id"])]["text"]
        )
        telegram.press(user, view, "dly:level:")
        picker = await wait_text(telegram, 10, "Level of the daily question")
        telegram.press(user, picker, "dly:lvl:senior")
        await telegram.wait_for(
            lambda s: "level senior" in s.messages[(10, picker["message_id"])]["text"]
        )
        telegram.press(user, view, "dly:lvl:expert")
        await telegram.wait_for(
            lambda s: (
                "This button is out of date."
                in [p.get("text") for p in s.sent(method="answerCallbackQuery")]
            )
        )
        telegram.send_text(user, "/daily 25:00")
        await wait_text(telegram, 10, "I can't read the time “25:00”")
        telegram.send_text(user, "/daily 08:00 Mars/<b>Base</b>")
        bad = await wait_text(telegram, 10, "I don't know the timezone")
        assert "&lt;b&gt;" in bad["html"]
        telegram.send_text(user, "/daily off")
        await wait_text(telegram, 10, "Daily questions are off")
        clock.set(2026, 6, 11, 9, 0)
        await settle()
        assert len(daily_messages(telegram, 10)) == 1
    finally:
        await bot.stop()


async def test_restart_mid_broadcast_sends_the_rest_exactly_once(
    telegram: FakeTelegram, db_url: str, scoring: ScoringService, bank: QuestionBank
) -> None:
    clock = Clock(datetime(2026, 6, 10, 5, 0, tzinfo=UTC))
    ids = list(range(1000, 1040))
    await subscribe_many(db_url, bank, telegram, ids, time(9, 0), "Europe/Moscow", clock)
    bot = DailyBot(telegram, db_url, scoring, clock, send_rate=10)
    await bot.start(telegram)
    clock.set(2026, 6, 10, 6, 0)
    clock.advance(seconds=1)
    await telegram.wait_for(lambda s: sum(daily_counts(s, ids).values()) >= 8)
    await bot.stop()  # mid-broadcast: in-flight messages finish, unsent claims go back
    sent_before = sum(daily_counts(telegram, ids).values())
    assert 8 <= sent_before < len(ids)
    clock.advance(minutes=30)  # back within the grace window
    await bot.start(telegram)
    try:
        await telegram.wait_for(lambda s: sum(daily_counts(s, ids).values()) >= len(ids))
        await settle()
    finally:
        await bot.stop()
    await assert_each_sent_once(telegram, db_url, ids)


async def test_faults_429_5xx_and_blocked_users(
    telegram: FakeTelegram, db_url: str, scoring: ScoringService, bank: QuestionBank
) -> None:
    clock = Clock(datetime(2026, 6, 10, 8, 0, tzinfo=UTC))
    ids = list(range(2000, 2012))
    await subscribe_many(db_url, bank, telegram, ids, time(9, 0), "UTC", clock)
    telegram.chats[2003].blocked = True  # blocked earlier: the send gets 403
    for _ in range(3):  # a 429 storm
        telegram.faults.append(Fault("sendMessage", 429, "Too Many Requests: retry after 1", 1))
    telegram.faults.append(Fault("sendMessage", 502, "Bad Gateway"))
    telegram.faults.append(Fault("sendMessage", 500, "Internal Server Error"))
    bot = DailyBot(telegram, db_url, scoring, clock)
    await bot.start(telegram)
    try:
        telegram.block_bot(telegram.user(2007))  # blocks now: my_chat_member "kicked"
        for _ in range(int(WAIT / 0.1)):  # until the update is processed, however slowly
            if not (await subscription(db_url, 2007)).active:  # type: ignore[union-attr]
                break
            await asyncio.sleep(0.1)
        assert not (await subscription(db_url, 2007)).active  # type: ignore[union-attr]
        clock.set(2026, 6, 10, 9, 0)
        delivered = [u for u in ids if u not in (2003, 2007)]
        await telegram.wait_for(lambda s: all(daily_messages(s, u) for u in delivered))
        await settle(1.0)
    finally:
        await bot.stop()
    faults = [m for m, _ in telegram.requests if m == "sendMessage:fault"]
    assert len(faults) == 5
    assert daily_counts(telegram, ids) == {u: 0 if u in (2003, 2007) else 1 for u in ids}
    rows = {r.user_id: r for r in await deliveries(db_url)}
    assert rows[2003].status == "failed" and "blocked" in (rows[2003].reason or "")
    assert 2007 not in rows  # unsubscribed before it was due
    assert {r.status for u, r in rows.items() if u != 2003} == {"sent"}
    blocked = await subscription(db_url, 2003)
    assert (
        blocked is not None and not blocked.active and "blocked" in (blocked.stopped_reason or "")
    )


async def test_300_subscribers_each_get_exactly_one(
    telegram: FakeTelegram, db_url: str, scoring: ScoringService, bank: QuestionBank
) -> None:
    clock = Clock(datetime(2026, 6, 10, 8, 0, tzinfo=UTC))
    ids = list(range(5000, 5300))
    await subscribe_many(db_url, bank, telegram, ids, time(9, 0), "UTC", clock)
    telegram.global_rate = 50  # the fake enforces a flood limit above the bot's own rate
    bot = DailyBot(telegram, db_url, scoring, clock, send_rate=45)
    await bot.start(telegram)
    try:
        clock.set(2026, 6, 10, 9, 0)
        await telegram.wait_for(lambda s: sum(daily_counts(s, ids).values()) >= len(ids))
        await settle()
    finally:
        await bot.stop()
    await assert_each_sent_once(telegram, db_url, ids)
