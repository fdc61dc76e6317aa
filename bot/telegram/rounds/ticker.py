"""The deadline ticker: every tick, groups with due round work get pumped.

It reads deadlines from the database, so after a restart the first tick resumes every round.
"""

from __future__ import annotations

import asyncio
import logging

from bot.services.rounds import RoundService
from bot.telegram.rounds.runner import RoundRunner

log = logging.getLogger(__name__)


async def run_ticker(rounds: RoundService, runner: RoundRunner, interval: float) -> None:
    while True:
        try:
            for chat_id in await rounds.due():
                runner.kick(chat_id)
        except Exception:  # a database hiccup must not end the ticker
            log.exception("round ticker step failed")
        await asyncio.sleep(interval)
