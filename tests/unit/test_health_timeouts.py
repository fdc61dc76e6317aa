"""/healthz answers 503 when a backend hangs instead of hanging with it: each probe has a
timeout (a parameter here, so the test is quick)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from aiohttp.test_utils import TestClient, TestServer

from bot.ops_server import ops_app


async def _forever() -> None:
    await asyncio.Event().wait()


class HungEngine:
    """engine.connect() never gets a connection (a stuck pool or network)."""

    @asynccontextmanager
    async def connect(self) -> AsyncIterator[Any]:
        await _forever()
        yield None


class WorkingEngine:
    @asynccontextmanager
    async def connect(self) -> AsyncIterator[Any]:
        class Conn:
            async def execute(self, statement: object) -> None:
                return None

        yield Conn()


class HungRedis:
    async def ping(self) -> bool:
        await _forever()
        return True


class WorkingRedis:
    async def ping(self) -> bool:
        return True


async def _health(engine: object, redis: object) -> tuple[int, dict[str, str]]:
    app = ops_app(engine, redis, probe_timeout=0.1)  # type: ignore[arg-type]
    async with TestClient(TestServer(app)) as client, asyncio.timeout(10):
        reply = await client.get("/healthz")
        return reply.status, await reply.json()


async def test_a_hung_database_makes_healthz_503() -> None:
    status, report = await _health(HungEngine(), WorkingRedis())
    assert status == 503
    assert report == {"database": "error: TimeoutError", "redis": "ok"}


async def test_a_hung_redis_makes_healthz_503() -> None:
    status, report = await _health(WorkingEngine(), HungRedis())
    assert status == 503
    assert report == {"database": "ok", "redis": "error: TimeoutError"}


async def test_healthy_backends_answer_200() -> None:
    assert await _health(WorkingEngine(), WorkingRedis()) == (
        200,
        {"database": "ok", "redis": "ok"},
    )


async def _live(engine: object, redis: object, embeddings_url: str | None = None):
    app = ops_app(engine, redis, embeddings_url, probe_timeout=0.1)  # type: ignore[arg-type]
    async with TestClient(TestServer(app)) as client, asyncio.timeout(10):
        reply = await client.get("/livez")
        return reply.status, await reply.json()


async def test_livez_asks_only_the_replicas_own_database() -> None:
    """The load balancer's and the container's check: a shared Redis or embedding server that
    is down (here: hung, and a port nothing listens on) leaves every replica in rotation."""
    status, report = await _live(WorkingEngine(), HungRedis(), "http://127.0.0.1:9")
    assert (status, report) == (200, {"database": "ok"})


async def test_livez_fails_when_the_replica_cannot_reach_its_database() -> None:
    assert await _live(HungEngine(), WorkingRedis()) == (503, {"database": "error: TimeoutError"})


async def test_readyz_waits_for_the_grader_and_livez_does_not() -> None:
    loaded = False
    app = ops_app(WorkingEngine(), WorkingRedis(), ready=lambda: loaded)  # type: ignore[arg-type]
    async with TestClient(TestServer(app)) as client, asyncio.timeout(10):
        reply = await client.get("/readyz")
        assert reply.status == 503 and await reply.json() == {
            "database": "ok",
            "grader": "loading",
        }
        assert (await client.get("/livez")).status == 200  # alive while loading
        loaded = True
        reply = await client.get("/readyz")
        assert reply.status == 200 and (await reply.json())["grader"] == "ok"


async def test_a_scoring_service_is_ready_once_started_and_its_bank_warmed(bank) -> None:
    from bot.scoring.host_config import HostConfig
    from bot.scoring.service import ScoringService

    service = ScoringService(bank, HostConfig("bundled", "cpu"), worker="thread")
    assert not service.ready()
    try:
        await service.start(warm=True)
        await service.warmed()
        assert service.ready()
    finally:
        service.close()
