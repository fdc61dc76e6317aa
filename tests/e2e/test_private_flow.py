"""The whole 1:1 flow through aiogram, HTTP and the fake Bot API, in both languages."""

from __future__ import annotations

import asyncio
import csv
import io
import json
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import func, select

from bot.content.loader import QuestionBank
from bot.i18n import t
from bot.metrics import REGISTRY
from bot.scoring.service import ScoringService
from bot.services.interviews import MAX_COUNT
from bot.storage.engine import create_engine
from bot.storage.models import Answer, Interview, ReceivedUpdate
from tests.e2e.conftest import BotProcess, find_question, question_messages, wait_text
from tests.e2e.daily_helpers import subscription
from tests.fake_telegram import DROP, WAIT, FakeTelegram, Fault, parse_html

pytestmark = pytest.mark.e2e

LANG = {
    "en": {
        "score": "Score: ",
        "model": "Model answer",
        "summary": "Average score",
        "hello": "Hi, Ann",
    },
    "ru": {
        "score": "Оценка: ",
        "model": "Эталонный ответ",
        "summary": "Средняя оценка",
        "hello": "Привет, Ann",
    },
}


async def count_answers(db_url: str) -> int:
    engine = create_engine(db_url)
    async with engine.connect() as conn:
        value = await conn.scalar(select(func.count()).select_from(Answer))
    await engine.dispose()
    return int(value or 0)


@pytest.mark.parametrize("lang", ["en", "ru"])
async def test_start_shows_greeting_levels_and_sets_commands(
    telegram: FakeTelegram, bot: BotProcess, lang: str
) -> None:
    user = telegram.user(100, language_code=lang)
    telegram.send_text(user, "/start")
    greeting = await wait_text(telegram, 100, LANG[lang]["hello"])
    buttons = [
        b["callback_data"] for row in greeting["reply_markup"]["inline_keyboard"] for b in row
    ]
    assert buttons == ["lvl:junior", "lvl:middle", "lvl:senior"]
    assert {"", "ru"} <= set(telegram.commands)
    assert [c["command"] for c in telegram.commands["ru"]] == [
        "start",
        "interview",
        "skip",
        "stop",
        "daily",
        "review",
        "progress",
        "report",
        "settings",
        "export",
        "forget",
        "help",
    ]
    assert telegram.commands["ru"][1]["description"] == "Начать собеседование"
    group_menu = telegram.commands["all_group_chats:ru"]
    assert [c["command"] for c in group_menu] == [
        "round",
        "quiz",
        "top",
        "feedback",
        "settings",
        "help",
    ]
    assert telegram.commands["all_group_chats:"][0]["description"] == "Start a mock-interview round"
    telegram.send_text(user, "/help")
    await wait_text(telegram, 100, "/interview [junior|middle|senior] [N]")


@pytest.mark.parametrize("lang", ["en", "ru"])
async def test_two_question_interview(
    telegram: FakeTelegram, bot: BotProcess, bank: QuestionBank, db_url: str, lang: str
) -> None:
    words = LANG[lang]
    user = telegram.user(200, language_code=lang)
    telegram.send_text(user, "/interview junior 2")
    first = (await telegram.wait_for(lambda s: question_messages(s, 200)))[0]
    question = find_question(bank, first)
    assert question.level == "junior"
    assert first["reply_markup"]["inline_keyboard"][0][0]["callback_data"].startswith("skip:")

    count = len(telegram.bot_messages(200))
    telegram.send_text(user, question.answer.get(lang))  # the model answer is a strong answer
    feedback = await wait_text(telegram, 200, words["score"], after=count)
    score = float(feedback["text"].split(words["score"])[1].split("/10")[0])
    assert score >= 7.0
    assert "✅" in feedback["text"]
    model = await wait_text(telegram, 200, words["model"], after=count)
    assert "<blockquote expandable>" in model["html"]

    second = await telegram.wait_for(lambda s: question_messages(s, 200)[1:])
    assert find_question(bank, second[0]).id != question.id
    count = len(telegram.bot_messages(200))
    telegram.send_text(
        user, "не знаю" if lang == "ru" else "I don't know", reply_to=second[0]["message_id"]
    )
    zero = await wait_text(telegram, 200, words["score"], after=count)
    assert f"{words['score']}0/10" in zero["text"]
    summary = await wait_text(telegram, 200, words["summary"], after=count)
    assert "/10" in summary["text"]
    assert await count_answers(db_url) == 2


async def test_restart_mid_interview_grades_the_right_question(
    telegram: FakeTelegram, bot: BotProcess, bank: QuestionBank, db_url: str
) -> None:
    user = telegram.user(300)
    telegram.send_text(user, "/interview middle 2")
    first = (await telegram.wait_for(lambda s: question_messages(s, 300)))[0]
    question = find_question(bank, first)
    await bot.stop()  # the process dies with the interview open

    count = len(telegram.bot_messages(300))
    telegram.send_text(user, question.answer.en)  # sent while the bot is down
    await bot.start(telegram)
    await wait_text(telegram, 300, "Score: ", after=count)
    # Long feedback is split in two messages; the model answer may be in the second.
    await wait_text(telegram, 300, question.answer.en.strip()[:60], after=count)
    # Killed before it recorded the first question as sent, the bot sends it again on restart
    # (the answer written to the first copy counts); the next question is a different one.
    nxt = await telegram.wait_for(
        lambda s: [m for m in question_messages(s, 300) if find_question(bank, m) != question],
    )
    assert find_question(bank, nxt[0]).id != question.id
    assert await count_answers(db_url) == 1


async def first_reply(
    telegram: FakeTelegram, chat_id: int, after: int, count: int = 1
) -> list[str]:
    """The texts of the first `count` bot messages after index `after`."""
    messages = await telegram.wait_for(
        lambda s: (lambda ms: ms if len(ms) >= count else None)(s.bot_messages(chat_id)[after:])
    )
    return [m["text"] for m in messages[:count]]


@pytest.mark.parametrize("lang", ["en", "ru"])
async def test_bad_input_gets_clear_replies(
    telegram: FakeTelegram, bot: BotProcess, lang: str
) -> None:
    """Each kind of bad input gets its own short reply, exactly as bot/i18n.py words it, in
    the user's language."""
    user = telegram.user(400, language_code=lang)

    def said(key: str, **values: object) -> str:
        return t(lang, key, **values)

    for send, key, values in (
        (lambda: telegram.send_text(user, "what is autograd?"), "no_question", {}),
        (lambda: telegram.send_text(user, "/interview expert 999"), "interview_usage",
         {"max": MAX_COUNT}),
        (lambda: telegram.send_text(user, "/frobnicate"), "unknown_command", {}),
        (lambda: telegram.send_sticker(user), "not_text", {}),
        (lambda: telegram.send_photo(user), "not_text", {}),
        (lambda: telegram.send_voice(user), "not_text", {}),
    ):  # fmt: skip
        count = len(telegram.bot_messages(400))
        send()
        assert await first_reply(telegram, 400, count) == [said(key, **values)]

    telegram.send_text(user, "/interview junior 1")
    question = (await telegram.wait_for(lambda s: question_messages(s, 400)))[0]
    count = len(telegram.bot_messages(400))
    telegram.send_text(user, "autograd")
    assert await first_reply(telegram, 400, count) == [said("too_short")]

    count = len(telegram.bot_messages(400))
    hostile = "<b>bold</b> & <script>x</script> a<b & c>d " + "backward accumulates .grad " * 200
    answer = telegram.send_text(user, hostile[:4096])
    feedback = await wait_text(telegram, 400, LANG[lang]["score"], after=count)
    assert "<script>" not in feedback["html"]
    await wait_text(telegram, 400, LANG[lang]["summary"], after=count)  # the interview is over
    count = len(telegram.bot_messages(400))
    telegram.edit_text(user, answer, "changed my mind")
    assert await first_reply(telegram, 400, count) == [said("edited")]
    # The question's own skip button is now out of date.
    callback = question["reply_markup"]["inline_keyboard"][0][0]["callback_data"]
    telegram.press(user, question, callback)
    # Forged or stale payloads, including integers past any database column and a 40-digit one
    # that once raised OverflowError in the driver and left the press unanswered.
    forged = (
        "lvl:expert", "garbage", "skip:abc", "lang:de", "skip:" + "9" * 40, "skip:0",
        f"skip:{2**31}", "dly:zz:", "dly:lvl:", "dly:off:senior", "rnext:" + "9" * 40,
    )  # fmt: skip
    for data in forged:
        telegram.press(user, question, data)
    total = len(forged) + 1
    await telegram.wait_for(lambda s: len(s.sent(method="answerCallbackQuery")) >= total)
    texts = [p.get("text") for p in telegram.sent(method="answerCallbackQuery")]
    assert texts == [said("outdated_button")] * total


async def count_interviews(db_url: str, user_id: int) -> int:
    engine = create_engine(db_url)
    async with engine.connect() as conn:
        value = await conn.scalar(
            select(func.count()).select_from(Interview).where(Interview.user_id == user_id)
        )
    await engine.dispose()
    return int(value or 0)


async def test_start_button_pressed_twice_starts_one_interview(
    telegram: FakeTelegram, bot: BotProcess, db_url: str
) -> None:
    """A double tap on "Start an interview" (two presses of the same message's button, as an
    update handled again after a kill is too) starts one interview and says so once; before,
    the second press replaced the first interview with another."""
    user = telegram.user(450)
    telegram.send_text(user, "/progress")  # no answers yet: a text with the start button
    offer = await wait_text(telegram, 450, t("en", "progress.empty"))
    telegram.press(user, offer, "learn:int")
    telegram.press(user, offer, "learn:int")
    # One person's updates run in order: once /help is answered, both presses are done.
    telegram.send_text(user, "/help")
    await wait_text(telegram, 450, "/interview [junior|middle|senior] [N]")

    texts = [m["text"] for m in telegram.bot_messages(450)]
    started = t("en", "interview_started", count=5, level="junior")
    assert sum(started in text for text in texts) == 1, texts
    assert not any(t("en", "interview_replaced") in text for text in texts), texts
    assert len(question_messages(telegram, 450)) == 1
    assert await count_interviews(db_url, 450) == 1
    assert len(telegram.sent(method="answerCallbackQuery")) == 2  # neither press left spinning
    # The spent button is taken off its message, so a later tap is not offered.
    assert "reply_markup" not in telegram.messages[(450, offer["message_id"])]


async def test_two_quick_answers_grade_once(
    telegram: FakeTelegram, bot: BotProcess, db_url: str
) -> None:
    user = telegram.user(500)
    telegram.send_text(user, "/interview senior 1")
    await telegram.wait_for(lambda s: question_messages(s, 500))
    count = len(telegram.bot_messages(500))
    telegram.send_text(user, "first answer about gradients and memory on the GPU")
    telegram.send_text(user, "second answer about gradients and memory on the GPU")
    await wait_text(telegram, 500, "Score: ", after=count)
    await wait_text(telegram, 500, "Interview finished", after=count)
    await asyncio.sleep(0.5)
    texts = [m["text"] for m in telegram.bot_messages(500)[count:]]
    assert sum("Score: " in t for t in texts) == 1
    assert any("already" in t or "no open question" in t for t in texts)
    assert await count_answers(db_url) == 1


async def test_rate_limit_is_waited_out(telegram: FakeTelegram, bot: BotProcess) -> None:
    user = telegram.user(600)
    telegram.faults.append(Fault("sendMessage", 429, "Too Many Requests: retry after 1", 1))
    telegram.send_text(user, "/help")
    await wait_text(telegram, 600, "/interview [junior|middle|senior] [N]")
    assert [m for m, _ in telegram.requests].count("sendMessage:fault") == 1


async def test_dropped_connections_are_retried(telegram: FakeTelegram, bot: BotProcess) -> None:
    """A network failure (no HTTP answer at all), on polling and on sending: one reply arrives."""
    telegram.faults.append(Fault("getUpdates", DROP, "connection reset"))
    telegram.faults.append(Fault("sendMessage", DROP, "connection reset"))
    user = telegram.user(650)
    telegram.send_text(user, "/help")
    await wait_text(telegram, 650, "/interview [junior|middle|senior] [N]")
    faults = [m for m, _ in telegram.requests if m.endswith(":fault")]
    assert sorted(faults) == ["getUpdates:fault", "sendMessage:fault"]
    assert len(telegram.sent(650)) == 1  # the dropped request never reached the chat


async def update_handled(db_url: str, chat_id: int, message_id: int) -> bool:
    """Whether the inbox has marked the update carrying this message handled."""
    engine = create_engine(db_url)
    async with engine.connect() as conn:
        rows = (await conn.execute(select(ReceivedUpdate.payload, ReceivedUpdate.handled_at))).all()
    await engine.dispose()
    for payload, handled_at in rows:
        message = json.loads(payload).get("message") or {}
        if message.get("message_id") == message_id and message["chat"]["id"] == chat_id:
            return handled_at is not None
    raise AssertionError(f"message {message_id} of chat {chat_id} was never stored")


def refused_sends() -> float:
    """The bot's own count of sendMessage attempts Telegram answered with 403."""
    labels = {"method": "SendMessage", "outcome": "403"}
    return REGISTRY.get_sample_value("bot_telegram_requests_total", labels) or 0.0


async def test_blocked_user_does_not_break_the_bot(
    telegram: FakeTelegram, bot: BotProcess, db_url: str
) -> None:
    """The README's promises for a user who blocked the bot: the 403 is skipped without
    stopping anything else, and the my_chat_member update saying so turns their daily
    question off. The user writes /help and blocks the bot before the reply goes out."""
    blocked = telegram.user(700)
    at = (datetime.now(UTC) + timedelta(hours=12)).strftime("%H:%M")  # not due during the test
    telegram.send_text(blocked, f"/daily {at}")
    await wait_text(telegram, 700, t("en", "daily_subscribed", time=at, tz="UTC"))
    assert (sub := await subscription(db_url, 700)) is not None and sub.active
    attempts, refused = len(telegram.sent(700)), refused_sends()

    help_ = telegram.send_text(blocked, "/help")
    telegram.block_bot(blocked)  # from now on the fake answers sends to 700 with 403
    other = telegram.user(701)
    telegram.send_text(other, "/help")
    await wait_text(telegram, 701, "/interview [junior|middle|senior] [N]")

    # The failed update is finished (marked handled, so it is not replayed), not left pending.
    for _ in range(int(WAIT / 0.05)):
        if await update_handled(db_url, 700, help_["message_id"]):
            break
        await asyncio.sleep(0.05)
    assert await update_handled(db_url, 700, help_["message_id"])
    # The reply was tried once, refused by the fake with 403 (so never stored), not retried.
    assert len(telegram.sent(700)) == attempts + 1
    assert refused_sends() == refused + 1
    assert len(telegram.bot_messages(700)) == 1  # only the /daily reply from before
    # The my_chat_member update turned the daily question off, saying why.
    for _ in range(int(WAIT / 0.05)):
        if not (sub := await subscription(db_url, 700)) or not sub.active:
            break
        await asyncio.sleep(0.05)
    assert sub is not None and not sub.active and "blocked" in (sub.stopped_reason or "")

    # Unblocked (Telegram's "Restart" sends /start), the same person is served again, and the
    # refused /help is not delivered late.
    telegram.chats[700].blocked = False
    telegram.send_text(blocked, "/start")
    await wait_text(telegram, 700, t("en", "greeting", name="Ann"))
    assert not any("/help" in m["text"] for m in telegram.bot_messages(700))
    assert len(telegram.sent(700)) == attempts + 2


async def test_settings_change_language_and_level(telegram: FakeTelegram, bot: BotProcess) -> None:
    user = telegram.user(800)
    telegram.send_text(user, "/settings")
    settings = await wait_text(telegram, 800, "Settings. Level: junior")
    telegram.press(user, settings, "lang:ru")
    await wait_text(telegram, 800, "Настройки. Уровень: junior")
    telegram.press(user, settings, "lvl:senior")
    await wait_text(telegram, 800, "Уровень: senior")
    telegram.send_text(user, "/interview 1")
    await wait_text(telegram, 800, "Вопрос 1/1 · senior")


async def test_stats_answers_admins_only(
    telegram: FakeTelegram, db_url: str, scoring: ScoringService, bank: QuestionBank
) -> None:
    process = BotProcess(telegram, db_url, scoring, admin_ids=(900,))
    await process.start(telegram)
    try:
        player = telegram.user(901)
        telegram.send_text(player, "/interview junior 1")
        asked = (await telegram.wait_for(lambda s: question_messages(s, 901)))[0]
        telegram.send_text(player, find_question(bank, asked).answer.en)
        await wait_text(telegram, 901, "Score: ")

        telegram.send_text(player, "/stats")  # not an admin: the command does not exist for them
        await wait_text(telegram, 901, "I don't know that command")

        telegram.send_text(telegram.user(900, language_code="ru"), "/stats")
        figures = await wait_text(telegram, 900, "Пользователи: 2")
        assert "Ответов оценено: 1 (за сутки: 1)" in figures["text"], figures["text"]
    finally:
        await process.stop()


async def test_a_slow_grade_shows_typing(
    telegram: FakeTelegram,
    bot: BotProcess,
    bank: QuestionBank,
    scoring: ScoringService,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Grading that takes longer than a moment shows "typing…" (a quick one spends no send
    budget on it): the grade here is held until the chat action arrives."""
    grade = scoring.grade

    async def slow(*args: object, **kwargs: object) -> object:
        await telegram.wait_for(lambda s: s.sent(210, "sendChatAction"))
        return await grade(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(scoring, "grade", slow)
    user = telegram.user(210, language_code="en")
    telegram.send_text(user, "/interview junior 1")
    first = (await telegram.wait_for(lambda s: question_messages(s, 210)))[0]
    count = len(telegram.bot_messages(210))
    telegram.send_text(user, find_question(bank, first).answer.en)
    await wait_text(telegram, 210, LANG["en"]["score"], after=count)
    assert telegram.sent(210, "sendChatAction")[0]["action"] == "typing"


@pytest.mark.parametrize("lang", ["en", "ru"])
async def test_export_sends_the_answers_as_csv(
    telegram: FakeTelegram, bot: BotProcess, bank: QuestionBank, lang: str
) -> None:
    """/export: a CSV document with every answer, the user's text exactly as written (commas,
    quotes, a line break and HTML-like text included), its score as the feedback showed it."""
    words = LANG[lang]
    user = telegram.user(220, language_code=lang)
    telegram.send_text(user, "/interview junior 1")
    first = (await telegram.wait_for(lambda s: question_messages(s, 220)))[0]
    question = find_question(bank, first)
    answer = question.answer.get(lang) + '\n<b>"x, y"</b> & done'
    count = len(telegram.bot_messages(220))
    telegram.send_text(user, answer)
    feedback = await wait_text(telegram, 220, words["score"], after=count)
    score = feedback["text"].split(words["score"])[1].split("/10")[0]
    await wait_text(telegram, 220, words["summary"], after=count)

    telegram.send_text(user, "/export")
    (sent,) = await telegram.wait_for(lambda s: s.sent(220, "sendDocument"))
    document = sent["document"]
    assert document["file_name"].endswith(".csv")
    assert ("1 answer" if lang == "en" else "1 ответ") in parse_html(sent["caption"])
    text = document["content"].decode("utf-8-sig")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert len(rows) == 1
    row = rows[0]
    assert row["question_id"] == question.id and row["level"] == "junior"
    assert row["question"] == question.question.get(lang) and row["where"] == "private"
    assert row["answer"] == normalize_newlines(answer)
    assert float(row["score"]) == float(score)
    assert row["date_utc"].endswith("+00:00")


def normalize_newlines(text: str) -> str:
    return text.replace("\r\n", "\n")
