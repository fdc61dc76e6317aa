"""The services handlers are given of their own (bot/app.py builds each once): a person's
history (/export, /forget) and progress (/progress, /report), as the functions behind them
compute it, without a handler borrowing InterviewService's database or bank."""

from __future__ import annotations

from datetime import UTC, date, datetime

from bot.content.loader import QuestionBank
from bot.services.history import history, history_csv
from bot.services.history_service import HistoryService
from bot.services.progress import load_progress
from bot.services.progress_service import ProgressService
from bot.services.readiness import load_readiness
from bot.storage.models import Answer, AskedQuestion, User

GRADED = datetime(2026, 11, 2, 9, tzinfo=UTC)


async def _one_graded_answer(sessions) -> None:
    async with sessions() as session, session.begin():
        session.add(User(id=1, language="en"))
        await session.flush()
        asked = AskedQuestion(user_id=1, chat_id=1, question_id="zero-grad")
        session.add(asked)
        await session.flush()
        session.add(
            Answer(asked_id=asked.id, user_id=1, question_id="zero-grad", text="clears grads",
                   language="en", score=6.5, verdict="partial", created_at=GRADED)
        )  # fmt: skip


async def test_history_service_exports_and_forgets(sessions, bank: QuestionBank) -> None:
    service = HistoryService(sessions, bank)
    assert await service.export(1, "en") is None  # nothing yet: nothing to export
    await _one_graded_answer(sessions)
    rows = await history(sessions, bank, 1, "en")
    exported = await service.export(1, "en")
    assert exported is not None
    assert (exported.document, exported.rows) == (history_csv(rows), 1)
    await service.forget(1)
    assert await service.history(1, "en") == []


async def test_progress_service_counts_today_by_its_clock(sessions, bank: QuestionBank) -> None:
    await _one_graded_answer(sessions)
    next_day = datetime(2026, 11, 3, 12, tzinfo=UTC)
    service = ProgressService(sessions, bank, clock=lambda: next_day)
    summary = await service.progress(1, "en")
    assert summary == await load_progress(sessions, bank, 1, "en", date(2026, 11, 3))
    assert summary.streak == 1  # answered yesterday, by the service's clock
    report = await service.readiness(1, "en", "junior")
    assert report == await load_readiness(sessions, bank, 1, "en", "junior")
