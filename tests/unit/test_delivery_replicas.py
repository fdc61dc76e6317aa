"""Two replicas flush one person's outbox at the same moment: each item goes out once when the
flushes take turns through the `outbox:<user>` lease, and twice without it."""

from __future__ import annotations

import asyncio
import random
from types import SimpleNamespace
from typing import Any

import pytest

from bot.content.loader import QuestionBank
from bot.services.interviews import InterviewService
from bot.telegram.delivery import Delivery


class SlowBot:
    """Sends take a moment, as over the network: long enough for a second flush to read the
    outbox before the first has marked its item sent."""

    def __init__(self) -> None:
        self.sent: list[int] = []

    async def send_message(self, chat_id: int, text: str, **_: Any) -> SimpleNamespace:
        await asyncio.sleep(0.05)
        self.sent.append(chat_id)
        return SimpleNamespace(message_id=100 + len(self.sent))


@pytest.mark.parametrize("replicas", [True, False])
async def test_two_replicas_send_each_item_once(
    sessions, bank: QuestionBank, replicas: bool
) -> None:
    interviews = InterviewService(sessions, bank, None, random.Random(1))  # type: ignore[arg-type]
    await interviews.ensure_user(5, "en")
    await interviews.start(5, 5, "junior", 2)  # owes the first question
    bot = SlowBot()
    one, two = (Delivery(bot, interviews, replicas=replicas) for _ in range(2))  # type: ignore[arg-type]
    await asyncio.gather(one.flush(5, "en"), two.flush(5, "en"))
    if replicas:
        assert bot.sent == [5]
    else:
        assert bot.sent == [5, 5]  # what the lease prevents
