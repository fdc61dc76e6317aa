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
