"""Group rounds end to end: the real Dispatcher over HTTP against the fake Bot API's groups."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest
from sqlalchemy import select

from bot.content.loader import QuestionBank
from bot.content.schema import Question
from bot.storage.engine import create_engine, create_session_factory
from bot.storage.models import GroupChat, Round, RoundAnswer, RoundQuestion
from tests.e2e.conftest import BotProcess, find_question, wait_text
from tests.fake_telegram import WAIT, FakeTelegram

pytestmark = pytest.mark.e2e

GROUP, SECOND = -100_100, -100_200
SCORE_LINE = re.compile(r"^(?:🥇|🥈|🥉|\d+\.) (.+) — ([\d.]+)/10$")
WRITING = [{"type": "emoji", "emoji": "✍"}]


def round_questions(fake: FakeTelegram, chat_id: int) -> list[dict[str, Any]]:
    return [m for m in fake.bot_messages(chat_id) if m["text"].startswith("Round · question")]


async def next_question(
    fake: FakeTelegram, db_url: str, chat_id: int, index: int
) -> dict[str, Any]:
    """The round's question message once the bot has recorded it: the bot stores the message
    id a moment after Telegram accepted the message, and until then a reply to it would not
    be recognised. No person replies that fast; a test can."""
    message = (await fake.wait_for(lambda s: round_questions(s, chat_id)[index:]))[0]
    await question_recorded(db_url, chat_id, message["message_id"])
    return message


async def question_recorded(db_url: str, chat_id: int, message_id: int) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + WAIT
    while not [
        q for q in await rows(db_url, RoundQuestion)
        if q.chat_id == chat_id and q.message_id == message_id
    ]:  # fmt: skip
        assert loop.time() < deadline, f"question message {message_id} never recorded"
        await asyncio.sleep(0.05)


def scores(message: dict[str, Any]) -> list[tuple[str, float]]:
    found = [SCORE_LINE.match(line) for line in message["text"].splitlines()]
    return [(m.group(1), float(m.group(2))) for m in found if m]


def assert_ranked(ranked: list[tuple[str, float]], strong: str, zero: str) -> None:
    """Everyone listed once, best first; the model answer scores high, "I don't know" zero."""
    assert sorted(name for name, _ in ranked) == ["Bob", "Cy <3>", "Dan"]
    values = [value for _, value in ranked]
    assert values == sorted(values, reverse=True)
    assert dict(ranked)[strong] >= 7.0
    assert ranked[-1] == (zero, 0.0)


def partial(question: Question) -> str:
    return question.key_points[0].en  # one key point of several: a middling answer


async def rows(db_url: str, model: Any) -> list[Any]:
    engine = create_engine(db_url)
    async with create_session_factory(engine)() as session:
        result = (await session.scalars(select(model))).all()
    await engine.dispose()
    return list(result)


async def wait_answers(db_url: str, count: int, timeout: float = WAIT) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while len(await rows(db_url, RoundAnswer)) < count:
        assert loop.time() < deadline, f"fewer than {count} answers stored"
        await asyncio.sleep(0.1)


async def wait_round_status(db_url: str, status: str, timeout: float = WAIT) -> Round:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        [round_] = await rows(db_url, Round)
        if round_.status == status:
            return round_
        assert loop.time() < deadline, f"the round is {round_.status}, not {status}"
        await asyncio.sleep(0.1)


def setup_group(fake: FakeTelegram, chat_id: int, admin_id: int = 10) -> dict[str, Any]:
    admin = fake.user(admin_id, first_name="Alice")
    fake.group(chat_id, members={admin_id: "creator"})
    fake.add_bot(admin, chat_id)
    return admin


async def test_two_question_round_ranks_everyone(
    telegram: FakeTelegram, group_bot: BotProcess, bank: QuestionBank, db_url: str
) -> None:
    admin = setup_group(telegram, GROUP)
    bob = telegram.user(11, first_name="Bob")
    cy = telegram.user(12, first_name="Cy <3>")
    dan = telegram.user(13, first_name="Dan")
    await wait_text(telegram, GROUP, "mock ML interviews right here")
    telegram.send_in_group(bob, GROUP, "/feedback on")  # Bob wants details in private
    await wait_text(telegram, GROUP, "Bob, after each question I'll send you detailed feedback")

    telegram.send_in_group(admin, GROUP, "/round junior 2 60")
    await wait_text(telegram, GROUP, "Round started: 2 questions, level junior, 60 s each")
    first = await next_question(telegram, db_url, GROUP, 0)
    question = find_question(bank, first)
    assert question.level == "junior"
    next_data = first["reply_markup"]["inline_keyboard"][0][0]["callback_data"]
    assert next_data.startswith("rnext:")

    answers = [
        telegram.send_in_group(bob, GROUP, question.answer.en, reply_to=first["message_id"]),
        telegram.send_in_group(cy, GROUP, partial(question), reply_to=first["message_id"]),
        telegram.send_in_group(dan, GROUP, "I don't know", reply_to=first["message_id"]),
    ]
    for answer in answers:  # acknowledged quietly, with a reaction and no message
        key = (GROUP, answer["message_id"])
        await telegram.wait_for(lambda s, key=key: s.reactions.get(key) == WRITING)
    telegram.press(bob, first, next_data)  # not an admin
    await telegram.wait_for(
        lambda s: any(
            p.get("text") == "Only admins can move on." for p in s.sent(None, "answerCallbackQuery")
        )
    )
    assert not [m for m in telegram.bot_messages(GROUP) if "Results" in m["text"]]
    telegram.press(admin, first, next_data)
    results1 = await wait_text(telegram, GROUP, "Results · question 1/2")
    ranked1 = scores(results1)
    assert_ranked(ranked1, strong="Bob", zero="Dan")
    assert "Cy &lt;3&gt;" in results1["html"]
    assert "<blockquote expandable>" in results1["html"]
    assert "The best answer covered:" in results1["text"]
    assert "reply_markup" not in telegram.messages[(GROUP, first["message_id"])]
    await wait_text(telegram, 11, "Detailed feedback on your answer in the group round")
    private = await wait_text(telegram, 11, "Score: ")
    assert "✅" in private["text"]
    assert telegram.bot_messages(12) == []  # Cy did not opt in

    second = await next_question(telegram, db_url, GROUP, 1)
    question2 = find_question(bank, second)
    assert question2.id != question.id and second["text"].startswith("Round · question 2/2")
    telegram.send_in_group(dan, GROUP, question2.answer.en, reply_to=second["message_id"])
    telegram.send_in_group(cy, GROUP, partial(question2), reply_to=second["message_id"])
    # The last of those who answered before: the question closes without waiting 60 s.
    telegram.send_in_group(bob, GROUP, "I don't know", reply_to=second["message_id"])
    results2 = await wait_text(telegram, GROUP, "Results · question 2/2")
    ranked2 = scores(results2)
    assert_ranked(ranked2, strong="Dan", zero="Bob")

    board = await wait_text(telegram, GROUP, "Round finished — leaderboard (2 questions)")
    totals: dict[str, float] = {}
    for name, value in ranked1 + ranked2:
        totals[name] = round(totals.get(name, 0.0) + value, 1)
    lines = [line for line in board["text"].splitlines() if "/20 · " in line]
    assert len(lines) == 3
    expected = sorted(totals, key=lambda n: -totals[n])
    assert [next(n for n in totals if f" {n} — " in line) for line in lines] == expected

    count = len(telegram.bot_messages(GROUP))
    telegram.send_in_group(dan, GROUP, "/top")
    top = await wait_text(telegram, GROUP, "The group's all-time leaderboard:", after=count)
    assert expected[0] in top["text"].splitlines()[1]
    await wait_round_status(db_url, "finished")
    assert len(await rows(db_url, RoundAnswer)) == 6


async def test_restart_mid_round_resumes_the_deadline(
    telegram: FakeTelegram, group_bot: BotProcess, bank: QuestionBank, db_url: str
) -> None:
    admin = setup_group(telegram, GROUP)
    bob, cy = telegram.user(11, first_name="Bob"), telegram.user(12, first_name="Cy")
    telegram.send_in_group(admin, GROUP, "/round junior 2 12")
    first = await next_question(telegram, db_url, GROUP, 0)
    question = find_question(bank, first)
    answer = telegram.send_in_group(bob, GROUP, question.answer.en, reply_to=first["message_id"])
    await telegram.wait_for(lambda s: s.reactions.get((GROUP, answer["message_id"])))

    await group_bot.stop()  # killed mid-question; the deadline is only in the database
    telegram.send_in_group(cy, GROUP, partial(question), reply_to=first["message_id"])
    await group_bot.start(telegram)
    # Nobody presses "Next": the restarted ticker closes the question at its deadline.
    results = await wait_text(telegram, GROUP, "Results · question 1/2")
    # Both count: the answer stored before the kill and the one sent during the outage. (Not
    # their order: some model answers trip their own documented pitfalls and score below one
    # key point, e.g. create-tensor 7.0 vs 9.7 — a grader issue for issue 11, not this test's.)
    assert sorted(name for name, _ in scores(results)) == ["Bob", "Cy"], (question.id, results)

    second = await next_question(telegram, db_url, GROUP, 1)
    # Killed after the bot recorded the question as posted (next_question waits for that): a
    # kill between Telegram taking it and the record posts it again, as any unconfirmed send.
    await group_bot.stop()
    await group_bot.start(telegram)
    for user in (cy, bob):
        telegram.send_in_group(user, GROUP, "I don't know at all", reply_to=second["message_id"])
    await wait_text(telegram, GROUP, "Round finished — leaderboard")
    assert len(round_questions(telegram, GROUP)) == 2  # no question was posted twice
    assert len([m for m in telegram.bot_messages(GROUP) if "Results" in m["text"]]) == 2
    assert len(await rows(db_url, RoundAnswer)) == 4


async def test_two_groups_run_rounds_at_once(
    telegram: FakeTelegram, group_bot: BotProcess, bank: QuestionBank, db_url: str
) -> None:
    chats = (GROUP, SECOND)
    admins = [setup_group(telegram, GROUP, 10), setup_group(telegram, SECOND, 20)]
    players = [telegram.user(11, first_name="Bob"), telegram.user(21, first_name="Eve")]
    for chat_id, admin in zip(chats, admins, strict=True):
        telegram.send_in_group(admin, chat_id, "/round middle 1 60")
    questions = [await next_question(telegram, db_url, chat_id, 0) for chat_id in chats]
    # The same message id can exist in both chats; each answer belongs to its own group.
    for chat_id, player, message in zip(chats, players, questions, strict=True):
        text = find_question(bank, message).answer.en
        answer = telegram.send_in_group(player, chat_id, text, reply_to=message["message_id"])
        key = (chat_id, answer["message_id"])
        await telegram.wait_for(lambda s, key=key: s.reactions.get(key) == WRITING)
    for admin, message in zip(admins, questions, strict=True):
        telegram.press(
            admin, message, message["reply_markup"]["inline_keyboard"][0][0]["callback_data"]
        )
    both = [await wait_text(telegram, chat_id, "Results · question 1/1") for chat_id in chats]
    assert [name for name, _ in scores(both[0])] == ["Bob"]
    assert [name for name, _ in scores(both[1])] == ["Eve"]
    for chat_id in chats:
        await wait_text(telegram, chat_id, "Round finished — leaderboard")


async def test_bad_input_in_a_group(
    telegram: FakeTelegram, group_bot: BotProcess, bank: QuestionBank, db_url: str
) -> None:
    admin = setup_group(telegram, GROUP)
    bob, cy = telegram.user(11, first_name="Bob"), telegram.user(12, first_name="Cy")
    await wait_text(telegram, GROUP, "mock ML interviews right here")
    telegram.send_in_group(bob, GROUP, "/round")
    await wait_text(telegram, GROUP, "Only the group's admins can start or stop a round.")
    telegram.send_in_group(admin, GROUP, "/round expert 99")
    await wait_text(telegram, GROUP, "Usage: /round [junior|middle|senior] [N] [seconds]")
    telegram.send_in_group(admin, GROUP, "/round junior 2 120")
    announce = await wait_text(telegram, GROUP, "Round started")
    question_message = await next_question(telegram, db_url, GROUP, 0)
    question = find_question(bank, question_message)
    telegram.send_in_group(admin, GROUP, "/round senior")
    await wait_text(telegram, GROUP, "A round is already running")

    qid = question_message["message_id"]
    telegram.send_in_group(
        bob, GROUP, "my answer to the announcement", reply_to=announce["message_id"]
    )
    await wait_text(telegram, GROUP, "reply to the question message of the current round")
    telegram.sticker_in_group(bob, GROUP, reply_to=qid)
    await wait_text(telegram, GROUP, "Only text answers are graded")
    telegram.send_in_group(bob, GROUP, "autograd", reply_to=qid)
    await wait_text(telegram, GROUP, "Too short to grade")
    # Members talking among themselves (a reply to a member) get no reply at all.
    chatter = telegram.send_in_group(cy, GROUP, "see you at the meetup tonight folks")
    telegram.send_in_group(bob, GROUP, "sure thing see you there", reply_to=chatter["message_id"])

    telegram.send_in_group(bob, GROUP, "I don't know this one", reply_to=qid)
    final = telegram.send_in_group(bob, GROUP, "it is something about tensors", reply_to=qid)
    telegram.edit_text(bob, final, question.answer.en)  # an edit before the deadline counts
    hostile = "<b>bold</b> & <script>x</script> " + "backward accumulates .grad " * 300
    telegram.chats[GROUP].reactions_allowed = False  # the group turned reactions off
    long_one = telegram.send_in_group(cy, GROUP, hostile, reply_to=qid)
    await telegram.wait_for(
        lambda s: any(
            int(p["message_id"]) == long_one["message_id"]
            for p in s.sent(GROUP, "setMessageReaction")
        )
    )
    assert (GROUP, long_one["message_id"]) not in telegram.reactions  # silence, not an error

    telegram.send_in_group(admin, GROUP, "/round stop")
    await wait_text(telegram, GROUP, "Ending the round")
    results = await wait_text(telegram, GROUP, "Results · question 1/1")
    assert [name for name, _ in scores(results)] == ["Bob", "Cy"]
    assert "<script>" not in results["html"]
    await wait_text(telegram, GROUP, "Round finished — leaderboard (1 question)")
    answers = await rows(db_url, RoundAnswer)
    assert len(answers) == 2
    bob_answer = next(a for a in answers if a.user_id == 11)
    assert bob_answer.text == question.answer.en
    assert max(len(a.text) for a in answers) == 4096

    telegram.send_in_group(cy, GROUP, "a late answer to the old question", reply_to=qid)
    await wait_text(telegram, GROUP, "This question is closed")
    texts = [m["text"] for m in telegram.bot_messages(GROUP)]
    assert not any("meetup" in t or "see you" in t for t in texts)
    assert len(round_questions(telegram, GROUP)) == 1


async def test_removed_bot_ends_the_round_and_readding_explains(
    telegram: FakeTelegram, group_bot: BotProcess, db_url: str
) -> None:
    admin = setup_group(telegram, GROUP)
    telegram.send_in_group(admin, GROUP, "/round junior 3 2")
    await next_question(telegram, db_url, GROUP, 0)
    telegram.remove_bot(admin, GROUP)
    await telegram.wait_for(lambda s: not s.chats[GROUP].bot_in_chat)
    await asyncio.sleep(3)  # past the deadline: nothing more is sent there
    await wait_round_status(db_url, "stopped")
    assert len(round_questions(telegram, GROUP)) == 1
    assert not telegram.sent(GROUP)[-1]["text"].startswith("Results")
    telegram.add_bot(admin, GROUP)
    count = len(telegram.bot_messages(GROUP))
    await wait_text(telegram, GROUP, "mock ML interviews right here", after=count)


async def test_a_403_from_the_group_ends_the_round(
    telegram: FakeTelegram, group_bot: BotProcess, db_url: str
) -> None:
    """The bot lost the group and no my_chat_member update told it: the refused send itself
    ends the round, and nothing more is tried there."""
    admin = setup_group(telegram, GROUP)
    telegram.send_in_group(admin, GROUP, "/round junior 3 2")
    await next_question(telegram, db_url, GROUP, 0)
    telegram.chats[GROUP].bot_in_chat = False  # every send there answers 403 from now on
    await wait_round_status(db_url, "stopped")
    assert "Results · question 1/3" in telegram.sent(GROUP)[-1]["text"]  # the refused send
    tries = len(telegram.sent(GROUP))
    await asyncio.sleep(2)  # ten ticks
    assert len(telegram.sent(GROUP)) == tries
    assert {q.status for q in await rows(db_url, RoundQuestion)} == {"done"}
    [group] = await rows(db_url, GroupChat)
    assert not group.active


async def test_a_group_upgraded_to_a_supergroup_ends_the_round(
    telegram: FakeTelegram, group_bot: BotProcess, db_url: str
) -> None:
    """Telegram answers a send to the old id with migrate_to_chat_id (aiogram raises
    TelegramMigrateToChat, neither a 400 nor a 403): the round ends instead of being retried
    every tick, and the new supergroup is told so and can start another."""
    basic, upgraded = -4_100_100, -1_004_100_100
    admin = telegram.user(10, first_name="Alice")
    telegram.group(basic, members={10: "creator"}, kind="group")
    telegram.add_bot(admin, basic)
    telegram.send_in_group(admin, basic, "/round junior 3 2")
    await next_question(telegram, db_url, basic, 0)
    telegram.upgrade_group(admin, basic, upgraded)
    await wait_text(telegram, upgraded, "This group became a supergroup")
    await wait_round_status(db_url, "stopped")
    tries = len(telegram.sent(basic))
    await asyncio.sleep(2)  # ten ticks
    assert len(telegram.sent(basic)) == tries
    assert len(round_questions(telegram, basic)) == 1
    telegram.send_in_group(admin, upgraded, "/round junior 1 60")
    await wait_text(telegram, upgraded, "Round started: 1 question")
    await telegram.wait_for(lambda s: round_questions(s, upgraded))


async def test_thirty_participants_stay_within_the_group_limit(
    telegram: FakeTelegram, group_bot: BotProcess, bank: QuestionBank, db_url: str
) -> None:
    admin = setup_group(telegram, GROUP)
    telegram.send_in_group(admin, GROUP, "/round junior 1 120")
    message = await next_question(telegram, db_url, GROUP, 0)
    question = find_question(bank, message)
    for index in range(30):
        user = telegram.user(1000 + index, first_name=f"P{index:02d}")
        text = question.answer.en if index % 2 else "I don't know"
        telegram.send_in_group(user, GROUP, text, reply_to=message["message_id"])
    await telegram.wait_for(lambda s: len(s.reactions) >= 30)
    telegram.press(
        admin, message, message["reply_markup"]["inline_keyboard"][0][0]["callback_data"]
    )
    results = await wait_text(telegram, GROUP, "Results · question 1/1")
    assert len(scores(results)) == 30
    await wait_text(telegram, GROUP, "Round finished — leaderboard")
    # 30 answers cost no message each: how-to, announcement, question, results, leaderboard.
    assert len(telegram.sent(GROUP)) == 5


async def test_quiz_round_with_polls(
    telegram: FakeTelegram, group_bot: BotProcess, bank: QuestionBank, db_url: str
) -> None:
    admin = setup_group(telegram, GROUP)
    bob, cy = telegram.user(11, first_name="Bob"), telegram.user(12, first_name="Cy")
    telegram.send_in_group(bob, GROUP, "/quiz")
    await wait_text(telegram, GROUP, "Only the group's admins")
    telegram.send_in_group(admin, GROUP, "/quiz expert")
    await wait_text(telegram, GROUP, "Usage: /quiz")
    telegram.send_in_group(admin, GROUP, "/quiz middle 2 30")
    await wait_text(telegram, GROUP, "Quiz started: 2 polls, level middle, 30 s each")

    for number in (1, 2):
        sent = await telegram.wait_for(lambda s, n=number: s.sent(GROUP, "sendPoll")[n - 1 :])
        params = sent[0]
        assert params["type"] == "quiz" and params["is_anonymous"] in (False, "false")
        assert len(params["explanation"]) <= 200
        poll_id = sorted(telegram.polls)[number - 1]
        poll = telegram.polls[poll_id]
        right = int(params["correct_option_id"])
        question = next(q for q in bank if q.question.en in poll["question"])
        assert poll["options"][right]["text"] == question.short_answer.en
        wrong = (right + 1) % len(poll["options"])
        # Bob is right both times, Cy only the second time; Cy's vote closes poll 2 early.
        telegram.answer_poll(bob, poll_id, [right])
        if number == 1:
            message = next(
                m for m in telegram.bot_messages(GROUP) if m.get("poll", {}).get("id") == poll_id
            )
            telegram.answer_poll(cy, poll_id, [wrong])
            await wait_answers(db_url, 2)  # both votes stored before the admin moves on
            telegram.press(
                admin, message, message["reply_markup"]["inline_keyboard"][0][0]["callback_data"]
            )
        else:
            telegram.answer_poll(cy, poll_id, [right])
        results = await wait_text(telegram, GROUP, f"Results · question {number}/2")
        assert "The right answer:" in results["text"]
        assert question.short_answer.en in results["text"]
        assert telegram.polls[poll_id]["is_closed"]
        if number == 1:
            assert scores(results) == [("Bob", 10.0), ("Cy", 0.0)]
        else:  # a tie: both ranked first, in the order they voted
            assert sorted(scores(results)) == [("Bob", 10.0), ("Cy", 10.0)]
            assert results["text"].count("🥇") == 2
    board = await wait_text(telegram, GROUP, "Round finished — leaderboard (2 questions)")
    assert "Bob — 20/20" in board["text"] and "Cy — 10/20" in board["text"]
    round_ = await wait_round_status(db_url, "finished")
    assert round_.kind == "quiz"
