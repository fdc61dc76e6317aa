"""Sends due daily questions: a loop that claims small batches and sends them under the global
rate limit. All state is in the database (bot/services/daily.py); this side only talks to
Telegram and records each outcome."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass, field
from datetime import timedelta

from aiogram import Bot, Dispatcher
from aiogram.exceptions import TelegramAPIError, TelegramBadRequest, TelegramForbiddenError
from aiogram.utils.formatting import Bold, Italic, Text, as_list
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.config import Settings
from bot.content.loader import QuestionBank
from bot.i18n import t
from bot.services.daily import Clock, DailyJob, DailyService
from bot.storage.engine import create_session_factory
from bot.storage.models import utcnow

log = logging.getLogger(__name__)


def render_daily_question(job: DailyJob) -> Text:
    lang = job.language
    return as_list(
        Bold(t(lang, "daily_header", level=job.level)),
        job.question.question.get(lang),
        Italic(t(lang, "answer_hint")),
    )


class DailyScheduler:
    """Every `tick` seconds: settle stale rows, create due ones, then claim and send batches
    (the next batch is claimed while the current one is being sent)."""

    def __init__(self, bot: Bot, daily: DailyService, tick: float, batch: int = 25):
        self.bot = bot
        self.daily = daily
        self.tick = tick
        self.batch = max(1, batch)
        self._stopping = asyncio.Event()
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._loop(), name="daily-scheduler")

    def wake(self) -> None:
        """Run a pass now (tests that move the clock; a new subscription due at once)."""
        self._wake.set()

    async def close(self, timeout: float = 20.0) -> None:
        """Stop claiming, finish the messages in flight, hand unsent claims back."""
        self._stopping.set()
        self._wake.set()
        if self._task is None:
            return
        try:
            await asyncio.wait_for(asyncio.shield(self._task), timeout)
        except TimeoutError:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        except asyncio.CancelledError:
            self._task.cancel()
            raise

    async def _loop(self) -> None:
        while not self._stopping.is_set():
            try:
                await self.run_once()
            except Exception:  # the database or Telegram hiccuped; the next tick retries
                log.exception("daily scheduler pass failed")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self.tick)
            self._wake.clear()

    async def run_once(self) -> int:
        """One pass; returns how many deliveries it settled (sent or failed)."""
        await self.daily.expire()
        await self.daily.materialize()
        done = 0
        upcoming: asyncio.Task[list[DailyJob]] | None = asyncio.create_task(
            self.daily.claim(self.batch)
        )
        try:
            while upcoming is not None:
                jobs = await upcoming
                upcoming = None
                if not jobs:
                    break
                if self._stopping.is_set():
                    await self.daily.release(jobs)
                    break
                upcoming = asyncio.create_task(self.daily.claim(self.batch))
                await asyncio.gather(*(self._deliver(job) for job in jobs))
                done += len(jobs)
        finally:
            if upcoming is not None:  # stopped with a batch claimed but not started
                with contextlib.suppress(Exception):
                    await self.daily.release(await upcoming)
        return done

    async def _deliver(self, job: DailyJob) -> None:
        if not await self.daily.start_sending(job):
            return  # another process took it back after our claim went stale
        try:
            message = await self.bot.send_message(job.chat_id, render_daily_question(job).as_html())
        except TelegramForbiddenError as exc:
            log.info("user %s blocked the bot; daily questions stopped", job.user_id)
            await self.daily.mark_failed(job, f"blocked: {exc.message}", deactivate=True)
        except TelegramBadRequest as exc:
            gone = "chat not found" in exc.message.lower()
            await self.daily.mark_failed(job, f"rejected: {exc.message}", deactivate=gone)
        except TelegramAPIError as exc:  # retries (429, 5xx, network) already exhausted
            log.warning("daily question for user %s failed: %s", job.user_id, exc)
            await self.daily.mark_failed(job, f"error: {type(exc).__name__}: {exc.message}")
        except Exception as exc:
            log.exception("daily question for user %s failed", job.user_id)
            await self.daily.mark_failed(job, f"error: {type(exc).__name__}")
        else:
            await self.daily.mark_sent(job, message.message_id)


@dataclass
class Daily:
    service: DailyService
    scheduler: DailyScheduler
    _started: bool = field(default=False, init=False)

    def start(self) -> None:
        self.scheduler.start()
        self._started = True

    async def close(self) -> None:
        if self._started:
            await self.scheduler.close()


def attach_daily(
    dp: Dispatcher,
    bot: Bot,
    engine: AsyncEngine,
    bank: QuestionBank,
    settings: Settings,
    clock: Clock | None = None,
) -> Daily:
    """The daily service for handlers (`daily` in handler kwargs) and its scheduler."""
    service = DailyService(
        create_session_factory(engine),
        bank,
        clock=clock or utcnow,
        grace=timedelta(hours=settings.daily_grace_hours),
    )
    batch = max(1, min(100, round(settings.send_rate)))  # about a second of sending
    scheduler = DailyScheduler(bot, service, settings.daily_tick_seconds, batch)
    dp["daily"] = service
    dp["daily_scheduler"] = scheduler
    return Daily(service, scheduler)
