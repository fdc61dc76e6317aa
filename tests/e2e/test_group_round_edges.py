"""Group rounds at their edges: a group upgraded to a supergroup while updates from the old chat
are still on their way, a round message Telegram refuses with a 400, who may start a round
("everyone on", anonymous admins), and a media caption that is a command."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from bot.content.loader import QuestionBank
from bot.storage.models import Round
from tests.e2e.conftest import BotProcess, find_question, wait_text
from tests.e2e.test_group_commands_in_reply import processed
from tests.e2e.test_group_rounds import (
    WRITING,
    next_question,
    rows,
    scores,
    setup_group,
    wait_round_status,
)
from tests.fake_telegram import FakeTelegram, Fault

pytestmark = pytest.mark.e2e

GROUP = -100_400
BASIC, UPGRADED = -4_100_400, -1_004_100_400
# Telegram's senders for a message an admin posts anonymously, and one posted as a channel.
ANONYMOUS = {
    "id": 1087968824,
    "is_bot": True,
    "first_name": "Group",
    "username": "GroupAnonymousBot",
}
CHANNEL_BOT = {"id": 136817688, "is_bot": True, "first_name": "Channel", "username": "Channel_Bot"}
PHOTO = [{"file_id": "AgACAgIAAxk", "file_unique_id": "AQAD", "width": 90, "height": 90}]
MIGRATED_ROUND = "This group became a supergroup, so the current round has ended"
MIGRATED_COMMAND = "This group became a supergroup. If you sent me a command just before"


def handler_errors(caplog: pytest.LogCaptureFixture) -> list[str]:
    """Updates whose handler raised (the update queue logs each one with its traceback)."""
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]


def basic_group(fake: FakeTelegram) -> dict[str, Any]:
    admin = fake.user(10, first_name="Alice")
    fake.group(BASIC, members={10: "creator"}, kind="group")
    fake.add_bot(admin, BASIC)
    return admin


# --- 1. a group upgraded to a supergroup, seen from a handler --------------------------------


async def test_replies_sent_just_before_an_upgrade_end_the_round(
    telegram: FakeTelegram,
    group_bot: BotProcess,
    bank: QuestionBank,
    db_url: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Answers sent in the old chat reach the bot after the upgrade: the ✍ for the first is
    refused with migrate_to_chat_id. The round ends, the new chat is told once, and no handler
    raises."""
    caplog.set_level(logging.INFO, logger="aiogram.event")
    admin = basic_group(telegram)
    bob, cy = telegram.user(11, first_name="Bob"), telegram.user(12, first_name="Cy")
    telegram.send_in_group(admin, BASIC, "/round junior 2 300")  # nothing due for 300 s
    question = await next_question(telegram, db_url, BASIC, 0)
    answer = find_question(bank, question).answer.en
    telegram.upgrade_group(admin, BASIC, UPGRADED)
    for user in (bob, cy):
        telegram.send_in_group(user, BASIC, answer, reply_to=question["message_id"])
    for update in telegram.updates[-2:]:
        await processed(caplog, update["update_id"])

    await wait_text(telegram, UPGRADED, MIGRATED_ROUND)
    await wait_round_status(db_url, "stopped")
    assert handler_errors(caplog) == []
    told = [m for m in telegram.bot_messages(UPGRADED) if "supergroup" in m["text"]]
    assert len(told) == 1  # the second reply adds nothing


async def test_a_round_command_sent_just_before_an_upgrade_is_answered_in_the_new_chat(
    telegram: FakeTelegram, group_bot: BotProcess, db_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """No round runs: nothing ends, but the admin learns where to send /round again."""
    caplog.set_level(logging.INFO, logger="aiogram.event")
    admin = basic_group(telegram)
    await wait_text(telegram, BASIC, "mock ML interviews right here")
    telegram.upgrade_group(admin, BASIC, UPGRADED)
    command = telegram.send_in_group(admin, BASIC, "/round junior 1 60")
    await processed(caplog, telegram.updates[-1]["update_id"])

    await wait_text(telegram, UPGRADED, MIGRATED_COMMAND)
    assert handler_errors(caplog) == [], command
    assert await rows(db_url, Round) == []
    telegram.send_in_group(admin, UPGRADED, "/round junior 1 60")
    await wait_text(telegram, UPGRADED, "Round started: 1 question")


async def test_a_round_started_just_before_an_upgrade_ends_at_its_announcement(
    telegram: FakeTelegram, group_bot: BotProcess, db_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Everyone may start rounds, so the round starts without asking Telegram who the sender
    is; its announcement is the first send refused."""
    caplog.set_level(logging.INFO, logger="aiogram.event")
    admin = basic_group(telegram)
    bob = telegram.user(11, first_name="Bob")
    telegram.send_in_group(admin, BASIC, "/settings everyone on")
    await wait_text(telegram, BASIC, "Who can start rounds: everyone")
    telegram.upgrade_group(admin, BASIC, UPGRADED)
    telegram.send_in_group(bob, BASIC, "/round junior 1 60")
    await processed(caplog, telegram.updates[-1]["update_id"])

    await wait_text(telegram, UPGRADED, MIGRATED_ROUND)
    await wait_round_status(db_url, "stopped")
    assert handler_errors(caplog) == []


# --- 2. a round message refused with a 400 ---------------------------------------------------


async def test_results_and_leaderboard_refused_once_are_sent_again_as_plain_text(
    telegram: FakeTelegram, group_bot: BotProcess, bank: QuestionBank, db_url: str
) -> None:
    admin = setup_group(telegram, GROUP)
    bob = telegram.user(11, first_name="Bob")
    refused = "Bad Request: can't parse entities: Unsupported start tag at byte offset 12"
    telegram.faults += [
        Fault("sendMessage", 400, refused, text_contains="Results · question 1/1"),
        Fault("sendMessage", 400, refused, text_contains="Round finished"),
    ]
    telegram.send_in_group(admin, GROUP, "/round junior 1 60")
    question = await next_question(telegram, db_url, GROUP, 0)
    answer = find_question(bank, question).answer.en
    reply = telegram.send_in_group(bob, GROUP, answer, reply_to=question["message_id"])
    await telegram.wait_for(lambda s: s.reactions.get((GROUP, reply["message_id"])) == WRITING)
    telegram.press(
        admin, question, question["reply_markup"]["inline_keyboard"][0][0]["callback_data"]
    )

    results = await wait_text(telegram, GROUP, "Results · question 1/1")
    assert [name for name, _ in scores(results)] == ["Bob"]
    board = await wait_text(telegram, GROUP, "Round finished — leaderboard (1 question)")
    assert "Bob" in board["text"]
    # No markup this time: what Telegram refused. (The text itself may hold a "<": x[x < 0].)
    for title in ("Results · question 1/1", "Round finished"):
        (resent,) = [p for p in telegram.sent(GROUP) if title in p["text"]]
        assert "parse_mode" not in resent
    for message in (results, board):
        assert message["html"] == message["text"]
    assert len(telegram.sent(GROUP, "sendMessage:fault")) == 2
    await wait_round_status(db_url, "finished")


async def test_results_refused_twice_let_the_round_go_on(
    telegram: FakeTelegram, group_bot: BotProcess, db_url: str
) -> None:
    """A 400 is the same every time: after the plain retry the round moves on rather than
    trying the same message forever."""
    admin = setup_group(telegram, GROUP)
    telegram.faults += [
        Fault("sendMessage", 400, "Bad Request: chat write forbidden", text_contains=needle)
        for needle in ("Results · question 1/2", "Results · question 1/2")
    ]
    telegram.send_in_group(admin, GROUP, "/round junior 2 1")
    await next_question(telegram, db_url, GROUP, 0)
    await next_question(telegram, db_url, GROUP, 1)  # the round went on
    await wait_text(telegram, GROUP, "Results · question 2/2")
    await wait_text(telegram, GROUP, "Round finished — leaderboard (2 questions)")
    assert len(telegram.sent(GROUP, "sendMessage:fault")) == 2
    assert not [m for m in telegram.bot_messages(GROUP) if "question 1/2" in m["text"]
                and m["text"].startswith("Results")]  # fmt: skip


# --- 3. who may start a round ----------------------------------------------------------------


async def test_everyone_on_lets_a_member_start_a_round_but_not_change_settings(
    telegram: FakeTelegram, group_bot: BotProcess, db_url: str
) -> None:
    """The README: `/round` "only admins, unless the group allows everyone"; `/settings ...
    everyone on|off` is "whether everyone may start rounds" - starting rounds, nothing more."""
    admin = setup_group(telegram, GROUP)
    bob = telegram.user(11, first_name="Bob")
    telegram.send_in_group(bob, GROUP, "/round junior 1 60")
    await wait_text(telegram, GROUP, "Only the group's admins can start or stop a round.")

    telegram.send_in_group(admin, GROUP, "/settings everyone on")
    await wait_text(telegram, GROUP, "Who can start rounds: everyone")
    telegram.send_in_group(bob, GROUP, "/round junior 1 60")
    await wait_text(telegram, GROUP, "Round started: 1 question, level junior")
    [round_] = await rows(db_url, Round)
    assert round_.started_by == bob["id"]

    count = len(telegram.bot_messages(GROUP))
    telegram.send_in_group(bob, GROUP, "/settings lang ru")
    await wait_text(telegram, GROUP, "Only the group's admins can change its settings.", count)
    telegram.send_in_group(bob, GROUP, "/settings")  # looking is for everyone
    shown = await wait_text(telegram, GROUP, "Group settings. Level: junior. Language: en.", count)
    assert "Who can start rounds: everyone" in shown["text"]


async def test_an_anonymous_admin_manages_rounds_and_a_channel_does_not(
    telegram: FakeTelegram, group_bot: BotProcess, db_url: str
) -> None:
    """An admin posting anonymously sends as the group itself (sender_chat is the group, from
    is GroupAnonymousBot): an admin. A message posted as a channel is nobody's: not one."""
    setup_group(telegram, GROUP)
    group = {"id": GROUP, "type": "supergroup", "title": "ML study group"}
    channel = {"id": -100_999, "type": "channel", "title": "Some channel"}
    telegram.send_in_group(CHANNEL_BOT, GROUP, "/round junior 1 60", sender_chat=channel)
    await wait_text(telegram, GROUP, "Only the group's admins can start or stop a round.")
    telegram.send_in_group(ANONYMOUS, GROUP, "/settings level middle", sender_chat=group)
    await wait_text(telegram, GROUP, "Group settings. Level: middle.")
    telegram.send_in_group(ANONYMOUS, GROUP, "/round 1 60", sender_chat=group)
    await wait_text(telegram, GROUP, "Round started: 1 question, level middle")
    telegram.send_in_group(ANONYMOUS, GROUP, "/round stop", sender_chat=group)
    await wait_text(telegram, GROUP, "Ending the round")
    await wait_round_status(db_url, "finished")


# --- 4. a media caption that is a command ----------------------------------------------------


async def test_a_captioned_command_in_reply_to_a_question_is_a_command(
    telegram: FakeTelegram, group_bot: BotProcess, db_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="aiogram.event")
    admin = setup_group(telegram, GROUP)
    bob = telegram.user(11, first_name="Bob")
    telegram.send_in_group(admin, GROUP, "/round junior 1 300")
    question = await next_question(telegram, db_url, GROUP, 0)
    qid = question["message_id"]

    def photo(caption: str) -> dict[str, Any]:
        entity = [{"type": "bot_command", "offset": 0, "length": len(caption.split()[0])}]
        return telegram.send_in_group(
            bob, GROUP, reply_to=qid, photo=PHOTO, caption=caption, caption_entities=entity
        )

    count = len(telegram.bot_messages(GROUP))
    other_bot = photo("/frobnicate@some_other_bot look at this")
    await processed(caplog, telegram.updates[-1]["update_id"])
    assert telegram.bot_messages(GROUP)[count:] == [], other_bot  # another bot's: left alone
    photo("/frobnicate look at this")
    await wait_text(telegram, GROUP, "I don't know that command", count)
    telegram.send_in_group(bob, GROUP, reply_to=qid, photo=PHOTO)  # no caption: not an answer
    await wait_text(telegram, GROUP, "Only text answers are graded", count)
    texts = [m["text"] for m in telegram.bot_messages(GROUP)[count:]]
    assert len(texts) == 2, texts  # the unknown-command reply, then the one for the bare photo
