"""Shared fixtures: the bank, one loaded model for the whole run, migrated databases."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

os.environ["HF_HUB_OFFLINE"] = "1"  # no test may reach the Hugging Face hub
os.environ["TRANSFORMERS_OFFLINE"] = "1"

from bot.content.loader import QuestionBank, load_bank
from bot.scoring.service import ScoringService
from bot.storage.engine import create_engine, create_session_factory
from bot.storage.migrations import upgrade


@pytest.fixture(scope="session")
def bank() -> QuestionBank:
    return load_bank()


@pytest.fixture(scope="session")
def scoring(bank: QuestionBank) -> Iterator[ScoringService]:
    service = ScoringService(bank, "bundled", "cpu")
    service._load(warm=False)
    yield service
    service.close()


@pytest.fixture(scope="session")
def grader(scoring: ScoringService):
    return scoring._load(warm=False)


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
