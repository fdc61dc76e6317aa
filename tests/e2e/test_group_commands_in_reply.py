"""A command sent as a reply to a round question is a command, never an answer.

The README: "a command for another bot, `/cmd@other_bot`, is left alone". Replying to the
question message with one used to store it as the sender's answer (with a ✍ reaction), because
the answer handler came before the unknown-command one. Now: another bot's command gets nothing,
an unknown one for this bot gets the unknown-command reply, a known one its own reply; none of
them is stored, and a plain reply still is.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from bot.storage.models import RoundAnswer
from tests.e2e.conftest import BotProcess, wait_text
from tests.e2e.test_group_rounds import WRITING, next_question, rows, setup_group
from tests.fake_telegram import WAIT, FakeTelegram

pytestmark = pytest.mark.e2e

GROUP = -100_300
ANSWER = "backward accumulates gradients into .grad, so zero_grad clears them between steps"
OTHER_WORDS = "please translate this whole paragraph into French for the study group"


async def processed(caplog: pytest.LogCaptureFixture, update_id: int) -> None:
    """Until aiogram has logged that it finished with the update (handled or not): a command
    left alone shows nothing else."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + WAIT
    needle = f"Update id={update_id} is "
    while not any(
        r.name == "aiogram.event" and r.getMessage().startswith(needle) for r in caplog.records
    ):
        assert loop.time() < deadline, f"update {update_id} was never processed"
        await asyncio.sleep(0.02)


def replies_to(fake: FakeTelegram, message: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        m for m in fake.bot_messages(GROUP) if m.get("reply_to_message_id") == message["message_id"]
    ]


async def test_commands_in_reply_to_a_question_are_not_answers(
    telegram: FakeTelegram, group_bot: BotProcess, db_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="aiogram.event")
    admin = setup_group(telegram, GROUP)
    bob, cy = telegram.user(11, first_name="Bob"), telegram.user(12, first_name="Cy")
    telegram.send_in_group(admin, GROUP, "/round junior 1 300")
    question = await next_question(telegram, db_url, GROUP, 0)
    reply_to = question["message_id"]

    other_bot = telegram.send_in_group(
        bob, GROUP, f"/frobnicate@some_other_bot {ANSWER}", reply_to=reply_to
    )
    unknown = telegram.send_in_group(bob, GROUP, f"/frobnicate {ANSWER}", reply_to=reply_to)
    mine = telegram.send_in_group(bob, GROUP, "/top@mock_interview_bot", reply_to=reply_to)
    answer = telegram.send_in_group(cy, GROUP, ANSWER, reply_to=reply_to)
    for update in telegram.updates[-4:]:
        await processed(caplog, update["update_id"])

    # A plain reply is still an answer.
    await telegram.wait_for(lambda s: s.reactions.get((GROUP, answer["message_id"])) == WRITING)
    # None of the commands was taken as Bob's answer (the ✍ is sent inside the handler).
    for command in (other_bot, unknown, mine):
        assert (GROUP, command["message_id"]) not in telegram.reactions, command["text"]
    stored = await rows(db_url, RoundAnswer)
    assert [(a.user_id, a.text) for a in stored] == [(cy["id"], ANSWER)]
    # This bot's commands get their own replies; another bot's, none.
    await telegram.wait_for(lambda s: replies_to(s, unknown))
    assert "I don't know that command" in replies_to(telegram, unknown)[0]["text"]
    await wait_text(telegram, GROUP, "No graded answers yet")  # /top, before any round ended
    assert replies_to(telegram, other_bot) == []


async def test_an_answer_edited_into_another_bots_command_is_kept(
    telegram: FakeTelegram, group_bot: BotProcess, db_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="aiogram.event")
    admin = setup_group(telegram, GROUP)
    cy = telegram.user(12, first_name="Cy")
    telegram.send_in_group(admin, GROUP, "/round junior 1 300")
    question = await next_question(telegram, db_url, GROUP, 0)
    answer = telegram.send_in_group(cy, GROUP, ANSWER, reply_to=question["message_id"])
    await telegram.wait_for(lambda s: s.reactions.get((GROUP, answer["message_id"])) == WRITING)

    telegram.edit_text(cy, answer, f"/frobnicate@some_other_bot {OTHER_WORDS}")
    await processed(caplog, telegram.updates[-1]["update_id"])

    stored = await rows(db_url, RoundAnswer)
    assert [(a.user_id, a.text) for a in stored] == [(cy["id"], ANSWER)]
