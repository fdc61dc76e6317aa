"""The operators' HTTP endpoints, served on the webhook's port in webhook mode, and on
METRICS_PORT in polling mode when it is set:

- `GET /livez`: this replica itself, the process answering and its database reachable (200, else
  503). What a load balancer and a container health check should ask: a blip of a service every
  replica shares (Redis, the embedding server) must not take them all out of rotation at once.
- `GET /healthz`: the same, plus Redis and the embedding service when configured: for people and
  monitoring, to see which backend is down.
- `GET /readyz`: /livez, and this replica's grader loaded with the whole bank's vectors. What
  the load balancer routes by: a replica still computing the bank's vectors would keep people
  waiting. A shared service (the embedding server) is left out for /livez's reason.
- `GET /metrics`: Prometheus."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from datetime import UTC, timedelta

from aiohttp import ClientError, ClientSession, web
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from redis.asyncio import Redis
from redis.exceptions import RedisError
from sqlalchemy import func, select, text
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.clock import utcnow
from bot.metrics import (
    DAILY_DELIVERIES,
    FAILED_UPDATES,
    OPEN_ROUNDS,
    OUTBOX_AGE,
    READY,
    REGISTRY,
)
from bot.storage.models import Answer, DailyDelivery, ReceivedUpdate, Round
from bot.storage.statuses import RUNNING_ROUND_STATUSES, AnswerStatus, DeliveryStatus

log = logging.getLogger(__name__)

HEALTH_PATH, LIVE_PATH, READY_PATH, METRICS_PATH = "/healthz", "/livez", "/readyz", "/metrics"
# Each /healthz probe's limit: a backend that hangs is reported as down (503), and the probes
# run side by side, so the answer comes within this, under the 3 s the health checks allow.
PROBE_TIMEOUT = 2.0


async def _refresh_from_database(engine: AsyncEngine) -> None:
    async with engine.connect() as conn:
        counts = dict(
            (
                await conn.execute(
                    select(DailyDelivery.status, func.count()).group_by(DailyDelivery.status)
                )
            ).all()
        )
        rounds = await conn.scalar(
            select(func.count()).select_from(Round).where(Round.status.in_(RUNNING_ROUND_STATUSES))
        )
        failed = await conn.scalar(
            select(func.count())
            .select_from(ReceivedUpdate)
            .where(ReceivedUpdate.failed_at >= utcnow() - timedelta(days=1))
        )
        oldest = await conn.scalar(
            select(func.min(Answer.graded_at)).where(Answer.status == AnswerStatus.graded)
        )
    for status in DeliveryStatus:
        DAILY_DELIVERIES.labels(status.value).set(int(counts.get(status, 0)))
    OPEN_ROUNDS.set(int(rounds or 0))
    FAILED_UPDATES.set(int(failed or 0))
    if oldest is not None and oldest.tzinfo is None:  # SQLite hands back naive UTC
        oldest = oldest.replace(tzinfo=UTC)
    OUTBOX_AGE.set(max(0.0, (utcnow() - oldest).total_seconds()) if oldest else 0.0)


async def exposition(engine: AsyncEngine, ready: Callable[[], bool] | None = None) -> bytes:
    """The text format Prometheus scrapes. What the database holds (daily deliveries by
    status, running rounds, the outbox's oldest feedback) is read now, so every replica reports
    the same; `ready`: this replica's readiness (None: always ready)."""
    await _refresh_from_database(engine)
    READY.set(1 if ready is None or ready() else 0)
    return generate_latest(REGISTRY)


class NotReady(Exception):
    """The grader is still loading the model or the bank's vectors."""


async def _check(probe: Awaitable[object], timeout: float) -> str:
    try:
        async with asyncio.timeout(timeout):
            await probe
    except NotReady:
        return "loading"
    except (SQLAlchemyError, RedisError, ClientError, OSError, TimeoutError) as exc:
        return f"error: {type(exc).__name__}"
    return "ok"


async def _select_one(engine: AsyncEngine) -> None:
    async with engine.connect() as conn:
        await conn.execute(text("SELECT 1"))


async def _get_ok(url: str) -> None:
    async with ClientSession() as client, client.get(url) as reply:  # _check bounds the time
        reply.raise_for_status()


async def _grader_ready(ready: Callable[[], bool] | None) -> None:
    if ready is not None and not ready():
        raise NotReady


def ops_app(
    engine: AsyncEngine,
    redis: Redis | None = None,
    embeddings_url: str | None = None,
    client_max_size: int = 1 << 20,
    probe_timeout: float = PROBE_TIMEOUT,
    ready: Callable[[], bool] | None = None,
) -> web.Application:
    """`redis`, `embeddings_url`: checked by /healthz too when configured. `probe_timeout`:
    how long each check may take before it counts as failed. `ready`: whether this replica's
    grader has loaded the whole bank (/readyz); None: always."""

    async def answer(probes: dict[str, Awaitable[object]]) -> web.Response:
        results = await asyncio.gather(*(_check(p, probe_timeout) for p in probes.values()))
        report = dict(zip(probes, results, strict=True))
        healthy = all(value == "ok" for value in report.values())
        return web.json_response(report, status=200 if healthy else 503)

    async def health(request: web.Request) -> web.Response:
        probes: dict[str, Awaitable[object]] = {"database": _select_one(engine)}
        if redis is not None:
            probes["redis"] = redis.ping()
        if embeddings_url:
            probes["embeddings"] = _get_ok(f"{embeddings_url.rstrip('/')}/health")
        return await answer(probes)

    async def live(request: web.Request) -> web.Response:
        return await answer({"database": _select_one(engine)})

    async def readiness(request: web.Request) -> web.Response:
        return await answer({"database": _select_one(engine), "grader": _grader_ready(ready)})

    async def metrics(request: web.Request) -> web.Response:
        try:
            body = await exposition(engine, ready)
        except (SQLAlchemyError, OSError):
            log.exception("metrics: the database did not answer")
            return web.Response(status=503, text="database unavailable")
        return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE_LATEST})

    app = web.Application(client_max_size=client_max_size)
    app.router.add_get(HEALTH_PATH, health)
    app.router.add_get(LIVE_PATH, live)
    app.router.add_get(READY_PATH, readiness)
    app.router.add_get(METRICS_PATH, metrics)
    return app


class OpsServer:
    """The endpoints on their own port (polling mode)."""

    def __init__(
        self,
        engine: AsyncEngine,
        host: str,
        port: int,
        redis: Redis | None = None,
        embeddings_url: str | None = None,
        ready: Callable[[], bool] | None = None,
    ):
        self.runner = web.AppRunner(
            ops_app(engine, redis, embeddings_url, ready=ready), access_log=None
        )
        self.host, self.port = host, port

    async def start(self) -> None:
        await self.runner.setup()
        await web.TCPSite(self.runner, self.host, self.port).start()
        log.info("health and metrics on %s:%s", self.host, self.port)

    async def close(self) -> None:
        await self.runner.cleanup()
