"""What a person is told when their answer cannot be graded, and that the promise holds: an
answer stored before grading failed is graded later without a restart; one that could not be
stored is asked for again."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy.exc import OperationalError

from bot.i18n import t
from bot.scoring.service import ScoringService
from bot.services.interviews import InterviewService
from tests.e2e.conftest import BotProcess, question_messages, wait_text
from tests.e2e.test_private_flow import LANG, count_answers
from tests.fake_telegram import FakeTelegram

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("lang", ["en", "ru"])
async def test_a_stored_answer_whose_grading_failed_gets_its_grade_later(
    telegram: FakeTelegram,
    db_url: str,
    scoring: ScoringService,
    monkeypatch: pytest.MonkeyPatch,
    lang: str,
) -> None:
    monkeypatch.setattr("bot.app.REGRADE_EVERY", 0.5)
    down = True
    grade = scoring.grade

    async def flaky_grade(*args: Any, **kwargs: Any) -> Any:
        if down:
            raise ConnectionError("embedding server unreachable")
        return await grade(*args, **kwargs)

    monkeypatch.setattr(scoring, "grade", flaky_grade)
    process = BotProcess(telegram, db_url, scoring)
    await process.start(telegram)
    try:
        user = telegram.user(810, language_code=lang)
        telegram.send_text(user, "/interview junior 1")
        await telegram.wait_for(lambda s: question_messages(s, 810) or None)
        telegram.send_text(user, "backward() accumulates gradients into .grad")
        await wait_text(telegram, 810, t(lang, "grading_failed"))
        assert await count_answers(db_url) == 1  # kept
        down = False  # the server is back: the grade comes without another message
        await wait_text(telegram, 810, LANG[lang]["score"])
        await wait_text(telegram, 810, LANG[lang]["summary"])
        assert await count_answers(db_url) == 1
    finally:
        await process.stop()


async def test_an_answer_that_could_not_be_stored_is_asked_for_again(
    telegram: FakeTelegram,
    db_url: str,
    scoring: ScoringService,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    submit = InterviewService.submit
    failures = iter([True])

    async def locked_once(self: InterviewService, *args: Any, **kwargs: Any) -> Any:
        if next(failures, False):
            raise OperationalError("INSERT INTO answers", {}, Exception("database is locked"))
        return await submit(self, *args, **kwargs)

    monkeypatch.setattr(InterviewService, "submit", locked_once)
    process = BotProcess(telegram, db_url, scoring)
    await process.start(telegram)
    try:
        user = telegram.user(811, language_code="ru")
        telegram.send_text(user, "/interview junior 1")
        await telegram.wait_for(lambda s: question_messages(s, 811) or None)
        telegram.send_text(user, "backward() накапливает градиенты в .grad")
        await wait_text(telegram, 811, t("ru", "answer_not_saved"))
        assert await count_answers(db_url) == 0
        assert not [m for m in telegram.bot_messages(811) if "сохранён" in m["text"]]
        telegram.send_text(user, "backward() накапливает градиенты в .grad")
        await wait_text(telegram, 811, LANG["ru"]["score"])
        assert await count_answers(db_url) == 1
    finally:
        await process.stop()
