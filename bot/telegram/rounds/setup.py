"""Wires group rounds into a running bot: the runner and the deadline ticker around the round
service (built with the others in bot/app.py, `build_services`)."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field

from aiogram import Bot, Dispatcher
from redis.asyncio import Redis

from bot.config import Settings
from bot.services.rounds import RoundService
from bot.storage.leases import Leases
from bot.telegram.limits.groups import GroupBudget, GroupLimiter
from bot.telegram.limits.shared import RedisGroupLimiter
from bot.telegram.rounds.runner import RoundRunner
from bot.telegram.rounds.ticker import run_ticker


@dataclass
class Rounds:
    service: RoundService
    runner: RoundRunner
    tick: float
    _ticker: asyncio.Task[None] | None = field(default=None, init=False)

    def start_ticker(self) -> None:
        """Resumes every round from the database, then keeps deadlines."""
        self._ticker = asyncio.create_task(run_ticker(self.service, self.runner, self.tick))

    async def close(self) -> None:
        if self._ticker is not None:
            self._ticker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._ticker
        await self.runner.close()


def attach_rounds(
    dp: Dispatcher,
    bot: Bot,
    service: RoundService,
    leases: Leases,
    settings: Settings,
    redis: Redis | None = None,
) -> Rounds:
    """`leases`: who moves each group's round (one replica at a time); `redis`: count each
    group's messages across replicas (REDIS_URL)."""
    per_minute = settings.group_messages_per_minute
    limiter: GroupBudget = (
        GroupLimiter(per_minute) if redis is None else RedisGroupLimiter(redis, per_minute)
    )
    runner = RoundRunner(bot, service, leases, limiter)
    dp["rounds"] = service
    dp["runner"] = runner
    return Rounds(service, runner, settings.round_tick)
