"""Builds the Bot and Dispatcher, wires middlewares and routers; start-up and shutdown."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from aiogram import Bot, Dispatcher
from aiogram.client.default import DefaultBotProperties
from aiogram.client.session.aiohttp import AiohttpSession
from aiogram.client.telegram import TelegramAPIServer
from aiogram.enums import ParseMode
from aiogram.types import BotCommand, BotCommandScopeAllGroupChats, BotCommandScopeDefault
from redis.asyncio import Redis
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from bot.clock import Clock, utcnow
from bot.config import Settings, require_token, require_webhook
from bot.content.loader import QuestionBank, load_bank
from bot.i18n import COMMANDS, GROUP_COMMANDS, t
from bot.leftover_tasks import settle_leftover_tasks
from bot.ops_server import OpsServer
from bot.priority import bulk_work
from bot.scoring.service import ScoringService
from bot.services.daily import DailyService
from bot.services.history_service import HistoryService
from bot.services.interviews import InterviewService
from bot.services.progress_service import ProgressService
from bot.services.rounds import RoundService
from bot.services.stats import StatsService
from bot.storage.engine import create_engine, create_session_factory
from bot.storage.inbox import UpdateInbox
from bot.storage.leases import Leases
from bot.storage.migrations import upgrade_async
from bot.telegram.daily_scheduler import attach_daily
from bot.telegram.delivery import Delivery
from bot.telegram.failure_notice import FailureNotice
from bot.telegram.limits.send_bucket import RateLimitMiddleware, TokenBucket
from bot.telegram.limits.shared import RedisTokenBucket
from bot.telegram.middlewares import (
    RequestMetricsMiddleware,
    RetryMiddleware,
    UserContextMiddleware,
)
from bot.telegram.polling import InboxPoller
from bot.telegram.receiver import InboxReceiver
from bot.telegram.rounds.setup import attach_rounds
from bot.telegram.routers import build_routers
from bot.telegram.update_queue import FailurePolicy
from bot.telegram.webhook import WebhookReceiver

log = logging.getLogger(__name__)
REGRADE_EVERY = 60.0  # seconds between retries of answers whose grading failed
LEFTOVER_TIMEOUT = 5.0  # seconds a task still running at the stop gets to finish


@dataclass
class Services:
    """The composition root's product: every domain service, built once (`build_services`),
    handed to the handlers (aiogram's workflow data), the schedulers and the CLI."""

    engine: AsyncEngine
    scoring: ScoringService
    interviews: InterviewService
    rounds: RoundService
    daily: DailyService
    stats: StatsService
    history: HistoryService  # /export, /forget
    progress: ProgressService  # /progress, /report
    leases: Leases  # delivery's outbox leases (webhook replicas), the rounds' group leases
    clock: Clock  # the one the services run on, for texts relative to now (/review)
    owns_scoring: bool = True

    async def close(self) -> None:
        if self.owns_scoring:
            self.scoring.close()
        await self.engine.dispose()


async def build_services(
    settings: Settings, scoring: ScoringService | None = None, clock: Clock = utcnow
) -> Services:
    """Bank, migrations, database and model: everything but Telegram. The one place where a
    domain service is constructed."""
    bank = load_bank(settings.content_dir)
    await upgrade_async(settings.database_url)
    engine = create_engine(settings.database_url)
    sessions = create_session_factory(engine)
    owns_scoring = scoring is None
    if scoring is None:
        scoring = ScoringService.from_settings(settings, bank, serving=True)
    # A service passed in may be loading already (`python -m bot run` prestarts it): this waits
    # for it, marks it ready and starts the cold bank's background warm-up.
    await scoring.start(warm=True)
    return Services(
        engine,
        scoring,
        InterviewService(sessions, bank, scoring, clock=clock),
        RoundService(sessions, bank, scoring, min_seconds=settings.round_min_seconds),
        DailyService(
            sessions, bank, clock=clock, grace=timedelta(hours=settings.daily_grace_hours)
        ),
        build_stats(engine),
        HistoryService(sessions, bank),
        build_progress(sessions, bank, clock),
        Leases(sessions),
        clock,
        owns_scoring,
    )


def build_progress(
    sessions: async_sessionmaker[AsyncSession], bank: QuestionBank, clock: Clock = utcnow
) -> ProgressService:
    """/progress and /report alone (`python -m bot progress` needs no model)."""
    return ProgressService(sessions, bank, clock=clock)


def build_stats(engine: AsyncEngine) -> StatsService:
    """The usage figures alone (`python -m bot stats` needs no model)."""
    return StatsService(create_session_factory(engine))


def build_bot(settings: Settings, redis: Redis | None = None) -> Bot:
    """`redis`: the send budget and 429 pauses shared with every replica (REDIS_URL)."""
    if settings.telegram_api_url:
        session = AiohttpSession(api=TelegramAPIServer.from_base(settings.telegram_api_url))
    else:
        session = AiohttpSession()
    bucket = (
        TokenBucket(settings.send_rate)
        if redis is None
        else RedisTokenBucket(redis, settings.send_rate)
    )
    session.middleware(RetryMiddleware(pause=bucket.pause))
    # Inside the retry loop: every attempt of every request takes a token of the global rate.
    session.middleware(RateLimitMiddleware(bucket))
    session.middleware(RequestMetricsMiddleware())  # innermost: counts every attempt
    return Bot(
        require_token(settings),
        session=session,
        default=DefaultBotProperties(parse_mode=ParseMode.HTML),
    )


def build_dispatcher(services: Services, delivery: Delivery, settings: Settings) -> Dispatcher:
    # Each handler names what it needs among these (aiogram's workflow data): a service of its
    # own, never one reached through another.
    dp = Dispatcher(
        interviews=services.interviews,
        history=services.history,
        progress=services.progress,
        clock=services.clock,
        delivery=delivery,
        stats=services.stats,
        admin_ids=frozenset(settings.admin_ids),
    )
    dp.update.outer_middleware(UserContextMiddleware(services.interviews))
    dp.include_routers(*build_routers())
    return dp


async def set_commands(bot: Bot) -> None:
    """The menu in private chats, and the group commands in groups, in both languages."""
    menus = (
        (BotCommandScopeAllGroupChats(), GROUP_COMMANDS, "gcmd"),
        (BotCommandScopeDefault(), COMMANDS, "cmd"),
    )
    for scope, names, prefix in menus:
        for lang in ("en", "ru"):
            commands = [BotCommand(command=c, description=t(lang, f"{prefix}.{c}")) for c in names]
            await bot.set_my_commands(
                commands, scope=scope, language_code=None if lang == "en" else lang
            )


def build_receiver(
    settings: Settings,
    dp: Dispatcher,
    bot: Bot,
    engine: AsyncEngine,
    redis: Redis | None,
    interviews: InterviewService | None = None,
    ready: Callable[[], bool] | None = None,
) -> InboxReceiver:
    inbox = UpdateInbox(create_session_factory(engine))
    failures = FailurePolicy(
        settings.update_attempts, settings.update_retry_delay, FailureNotice(bot, interviews)
    )
    if settings.bot_mode == "webhook":
        url, secret = require_webhook(settings)
        host, port = settings.webhook_host, settings.webhook_port
        return WebhookReceiver(
            dp, bot, inbox, engine, url, secret, host, port, redis, settings.embeddings_url,
            failures=failures, ready=ready,
        )  # fmt: skip
    return InboxPoller(dp, bot, inbox, settings.polling_timeout, failures=failures)


async def recover(interviews: InterviewService, delivery: Delivery) -> None:
    """Finish what a previous process left: ungraded answers, unsent feedback and questions."""
    await _deliver(delivery, await interviews.recover())


async def keep_grading(
    interviews: InterviewService, delivery: Delivery, every: float = REGRADE_EVERY
) -> None:
    """Grade again, and send the feedback of, answers whose grading failed (the grading
    process died, the embedding server was down): the user was told it would come."""
    while True:
        await asyncio.sleep(every)
        try:
            users = await interviews.grade_stored(older_than=timedelta(seconds=every))
        except SQLAlchemyError:  # the database is back at the next round
            log.exception("could not look for answers to grade again")
            continue
        await _deliver(delivery, users)


async def _deliver(delivery: Delivery, users: list[int]) -> None:
    for user_id in users:
        try:
            await delivery.flush(user_id)
        except Exception:  # one user's chat must not stop the others or the start-up
            log.exception("could not deliver pending messages to user %s", user_id)


async def run_bot(
    settings: Settings,
    handle_signals: bool = True,
    scoring: ScoringService | None = None,
    clock: Callable[[], datetime] | None = None,
) -> None:
    """Run until stopped. Tests pass their own `scoring` to share one loaded model, and a
    `clock` (aware UTC datetimes) to move the daily schedule without waiting."""
    redis = Redis.from_url(settings.redis_url) if settings.redis_url else None
    bot = build_bot(settings, redis)  # validates the token before the slow start-up
    services = await build_services(settings, scoring, clock or utcnow)
    # Webhook replicas may handle one person's updates side by side: their flushes take turns
    # through the database's leases; a polling bot is the only one that flushes.
    leases = services.leases if settings.bot_mode == "webhook" else None
    delivery = Delivery(bot, services.interviews, leases)
    dp = build_dispatcher(services, delivery, settings)
    rounds = attach_rounds(dp, bot, services.rounds, services.leases, settings, redis)
    daily = attach_daily(dp, bot, services.daily, settings)
    ops: OpsServer | None = None
    regrading: asyncio.Task[None] | None = None
    try:
        me = await bot.get_me()
        log.info("running as @%s", me.username)
        await set_commands(bot)
        await recover(services.interviews, delivery)
        with bulk_work():  # their tasks' sends wait behind replies to people who just wrote
            rounds.start_ticker()  # resumes group rounds left by a previous process
            daily.start()  # sends what fell due while the bot was down (within the grace window)
        regrading = asyncio.create_task(keep_grading(services.interviews, delivery, REGRADE_EVERY))
        receiver = build_receiver(
            settings, dp, bot, services.engine, redis, services.interviews, services.scoring.ready
        )
        if settings.bot_mode == "polling" and settings.metrics_port is not None:
            host, port = settings.metrics_host, settings.metrics_port
            ops = OpsServer(
                services.engine, host, port, redis, settings.embeddings_url, services.scoring.ready
            )
            await ops.start()
        if handle_signals:
            loop = asyncio.get_running_loop()
            for sig in (signal.SIGTERM, signal.SIGINT):
                loop.add_signal_handler(sig, receiver.stop)
        log.info("receiving updates by %s", settings.bot_mode)
        await receiver.run(dp.resolve_used_update_types())
    finally:
        if regrading is not None:
            regrading.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await regrading
        if ops is not None:
            await ops.close()
        await daily.close()  # finishes the daily messages in flight
        await rounds.close()
        await bot.session.close()
        await services.close()
        if redis is not None:
            await redis.aclose()


def run(settings: Settings, scoring: ScoringService | None = None) -> None:
    """`scoring`: a service already loading (the caller closes it)."""

    async def main() -> None:
        try:
            await run_bot(settings, scoring=scoring)
        finally:  # only here: in tests run_bot shares the loop with tasks that are not its own
            cancelled = await settle_leftover_tasks(LEFTOVER_TIMEOUT)
            if cancelled:
                log.warning("cancelled tasks still running at the stop: %s", ", ".join(cancelled))

    asyncio.run(main())
