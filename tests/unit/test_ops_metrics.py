"""What /metrics tells an operator about this replica: whether it is ready (as /readyz), and
how long the oldest feedback has been waiting to go out (from the database)."""

from __future__ import annotations

import asyncio
import random
from datetime import timedelta
from typing import Any

from aiohttp.test_utils import TestClient, TestServer
from sqlalchemy import select

from bot.clock import utcnow
from bot.content.loader import QuestionBank
from bot.ops_server import ops_app
from bot.services.interviews import InterviewService
from bot.storage.engine import create_engine, create_session_factory
from bot.storage.models import Answer, AskedQuestion
from bot.storage.statuses import AnswerStatus
from bot.verdicts import Verdict


def sample(text: str, name: str) -> float:
    [line] = [line for line in text.splitlines() if line.startswith(name + " ")]
    return float(line.split()[1])


async def test_metrics_report_readiness_and_the_oldest_owed_feedback(
    db_url: str, bank: QuestionBank, scoring: Any
) -> None:
    engine = create_engine(db_url)
    sessions = create_session_factory(engine)
    interviews = InterviewService(sessions, bank, scoring, random.Random(2))
    await interviews.ensure_user(9, "en")
    await interviews.start(9, 9, "junior", 1)
    loaded = False
    app = ops_app(engine, ready=lambda: loaded)
    try:
        async with TestClient(TestServer(app)) as client, asyncio.timeout(30):
            metrics = await (await client.get("/metrics")).text()
            assert sample(metrics, "bot_ready") == 0
            assert sample(metrics, "bot_outbox_oldest_seconds") == 0  # nothing graded yet
            async with sessions() as session, session.begin():
                ask = (await session.scalars(select(AskedQuestion))).one()
                session.add(
                    Answer(
                        asked_id=ask.id, user_id=9, question_id=ask.question_id, text="x",
                        language="en", status=AnswerStatus.graded, score=1.0,
                        verdict=Verdict.weak, graded_at=utcnow() - timedelta(seconds=90),
                    )
                )  # fmt: skip
            loaded = True
            metrics = await (await client.get("/metrics")).text()
            assert sample(metrics, "bot_ready") == 1
            assert 90 <= sample(metrics, "bot_outbox_oldest_seconds") < 600
    finally:
        await engine.dispose()
