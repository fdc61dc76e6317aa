"""Sends due daily questions: a loop that claims small batches and sends them under the global
rate limit. All state is in the database (bot/services/daily/); this side only talks to
Telegram and records each outcome."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from aiogram import Bot, Dispatcher
from aiogram.exceptions import TelegramAPIError, TelegramBadRequest, TelegramForbiddenError
from aiogram.utils.formatting import Bold, Italic, Text, as_list

from bot.config import Settings
from bot.i18n import t
from bot.services.daily import DailyJob, DailyService, DeliveryOutcome

log = logging.getLogger(__name__)
T = TypeVar("T")
R = TypeVar("R")


def render_daily_question(job: DailyJob) -> Text:
    lang = job.language
    return as_list(
        Bold(t(lang, "daily_header", level=job.level)),
        job.question.question.get(lang),
        Italic(t(lang, "answer_hint")),
    )


class Batcher(Generic[T, R]):
    """Gathers calls made within `delay` seconds into one `flush(items)` call (one database
    transaction instead of one per message: SQLite has a single writer)."""

    def __init__(self, flush: Callable[[list[T]], Awaitable[Sequence[R]]], delay: float = 0.01):
        self.flush = flush
        self.delay = delay
        self._items: list[tuple[T, asyncio.Future[R]]] = []
        self._flusher: asyncio.Task[None] | None = None

    async def submit(self, item: T) -> R:
        future: asyncio.Future[R] = asyncio.get_running_loop().create_future()
        self._items.append((item, future))
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.create_task(self._flush_soon())
        return await future

    async def _flush_soon(self) -> None:
        await asyncio.sleep(self.delay)
        while self._items:
            items, self._items = self._items, []
            try:
                results = await self.flush([item for item, _ in items])
            except Exception as exc:
                for _, future in items:
                    if not future.done():
                        future.set_exception(exc)
                continue
            for (_, future), result in zip(items, results, strict=True):
                if not future.done():
                    future.set_result(result)


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
        self._starts: Batcher[DailyJob, bool] = Batcher(daily.start_sending_many)
        self._outcomes: Batcher[DeliveryOutcome, None] = Batcher(self._record)

    async def _record(self, outcomes: list[DeliveryOutcome]) -> list[None]:
        # The messages are out already: a busy database must not turn them into "interrupted".
        for attempt in range(3):
            try:
                await self.daily.record(outcomes)
                break
            except Exception:
                if attempt == 2:
                    raise
                log.warning("recording %d daily outcomes failed; retrying", len(outcomes))
                await asyncio.sleep(0.5 * (attempt + 1))
        return [None] * len(outcomes)

    def start(self) -> None:
        self._task = asyncio.create_task(self._loop(), name="daily-scheduler")

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
        """One pass; returns how many deliveries it took on.

        A pipeline, not batch by batch: workers (as many as a batch) take jobs from a queue
        while the next batch is claimed as soon as the queue runs low, so the rate limit, not
        a batch's slowest message, sets the pace."""
        await self.daily.expire()
        await self.daily.materialize()
        queue: asyncio.Queue[DailyJob] = asyncio.Queue()
        workers = [asyncio.create_task(self._work(queue)) for _ in range(self.batch)]
        taken = 0
        try:
            while not self._stopping.is_set():
                if queue.qsize() >= self.batch // 2 + 1:
                    await asyncio.sleep(0.02)
                    continue
                jobs = await self.daily.claim(self.batch)
                if not jobs:
                    break
                taken += len(jobs)
                for job in jobs:
                    queue.put_nowait(job)
            if self._stopping.is_set():  # claimed but not started: hand back
                left = [queue.get_nowait() for _ in range(queue.qsize())]
                for _ in left:
                    queue.task_done()
                await self.daily.release(left)
                taken -= len(left)
            await queue.join()  # the messages in flight finish
        finally:
            for worker in workers:
                worker.cancel()
            await asyncio.gather(*workers, return_exceptions=True)
        return taken

    async def _work(self, queue: asyncio.Queue[DailyJob]) -> None:
        while True:
            job = await queue.get()
            try:
                await self._deliver(job)
            except Exception:  # recording the outcome failed; the row settles as stale
                log.exception("daily delivery %s failed", job.delivery_id)
            finally:
                queue.task_done()

    async def _deliver(self, job: DailyJob) -> None:
        if not await self._starts.submit(job):
            return  # another process took it back after our claim went stale
        await self._outcomes.submit(await self._send(job))

    async def _send(self, job: DailyJob) -> DeliveryOutcome:
        try:
            message = await self.bot.send_message(job.chat_id, render_daily_question(job).as_html())
        except TelegramForbiddenError as exc:
            log.info("user %s blocked the bot; daily questions stopped", job.user_id)
            return DeliveryOutcome(job, reason=f"blocked: {exc.message}", deactivate=True)
        except TelegramBadRequest as exc:
            gone = "chat not found" in exc.message.lower()
            return DeliveryOutcome(job, reason=f"rejected: {exc.message}", deactivate=gone)
        except TelegramAPIError as exc:  # retries (429, 5xx, network) already exhausted
            log.warning("daily question for user %s failed: %s", job.user_id, exc)
            return DeliveryOutcome(job, reason=f"error: {type(exc).__name__}: {exc.message}")
        except Exception as exc:
            log.exception("daily question for user %s failed", job.user_id)
            return DeliveryOutcome(job, reason=f"error: {type(exc).__name__}")
        return DeliveryOutcome(job, message_id=message.message_id)


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


def attach_daily(dp: Dispatcher, bot: Bot, service: DailyService, settings: Settings) -> Daily:
    """The daily service for handlers (`daily` in handler kwargs) and its scheduler."""
    batch = max(1, min(100, round(settings.send_rate)))  # about a second of sending
    scheduler = DailyScheduler(bot, service, settings.daily_tick_seconds, batch)
    dp["daily"] = service
    dp["daily_scheduler"] = scheduler
    return Daily(service, scheduler)
