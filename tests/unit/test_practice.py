"""`python -m bot practice`: the interview in a terminal, driven through its read/write hooks."""

from __future__ import annotations

from pathlib import Path

from bot.config import load_settings
from bot.content.loader import QuestionBank
from bot.i18n import t
from bot.practice import practice, show_progress
from bot.scoring.service import ScoringService


async def test_a_terminal_interview_grades_skips_and_summarises(
    tmp_path: Path, bank: QuestionBank, scoring: ScoringService
) -> None:
    settings = load_settings(database_url=f"sqlite+aiosqlite:///{tmp_path / 'practice.db'}")
    written: list[str] = []
    inputs: list[str] = []

    def read() -> str | None:
        # The first question is on screen by now: answer it with its own model answer.
        if not inputs:
            asked = next(q for q in bank if q.question.ru in "\n".join(written))
            inputs.extend([asked.answer.ru.replace("\n", " "), "/skip"])
        return inputs.pop(0) + "\n" if inputs else None

    code = await practice(settings, "ru", "junior", 2, read, written.append, scoring)

    out = "\n".join(written)
    assert code == 0
    assert "Вопрос 1/2 · junior" in out and "Вопрос 2/2 · junior" in out
    assert "reply" not in out  # no Telegram hint in a terminal
    score = float(out.split("Оценка: ")[1].split("/10")[0])
    assert score >= 7.0
    assert "✅" in out and "Эталонный ответ:" in out and "раскрыть" not in out
    assert "Собеседование завершено" in out
    assert "Отвечено: 1 из 2, пропущено: 1." in out
    # The summary's pointers name what works here, not the bot's Telegram commands.
    assert "Ещё раз: python -m bot practice" in out
    assert "— python -m bot practice --review" in out  # the skipped question is due soon
    assert "/interview" not in out and "/review" not in out and "/report" not in out


async def test_review_then_progress_in_the_terminal(
    tmp_path: Path, bank: QuestionBank, scoring: ScoringService
) -> None:
    """`practice --review` asks the skipped question once it is due; `progress` prints the
    totals and writes the chart to the path it prints."""
    settings = load_settings(database_url=f"sqlite+aiosqlite:///{tmp_path / 'practice.db'}")
    written: list[str] = []
    assert await practice(settings, "en", None, None, lambda: None, written.append, scoring,
                          review=True) == 0  # fmt: skip
    assert "Nothing to review yet" in written[-1]

    inputs = ["/skip"]
    await practice(settings, "en", "junior", 1, lambda: inputs.pop() if inputs else None,
                   written.append, scoring)  # fmt: skip
    skipped = next(q for q in bank if q.question.en in "\n".join(written))
    written.clear()
    await practice(settings, "en", None, None, lambda: None, written.append, scoring, review=True)
    assert "is due in 1 minute" in written[-1]  # FSRS's first learning step

    out = tmp_path / "chart" / "progress.png"
    written.clear()
    assert await show_progress(settings, "en", out, write=written.append) == 0
    # A skip is a review, not a graded answer; the hint names the terminal's command.
    assert written == [t("en", "progress.empty").replace("/interview", "python -m bot practice")]
    assert not out.exists()
    # A graded answer: the text and a chart file.
    inputs = [skipped.answer.en.replace("\n", " ")]
    await practice(settings, "en", "junior", 1, lambda: inputs.pop() if inputs else None,
                   written.append, scoring)  # fmt: skip
    written.clear()
    assert await show_progress(settings, "en", out, write=written.append) == 0
    assert written[0].startswith("Your progress: 1 graded answer")
    report = "\n".join(written[1:-1])  # the readiness report (what /report shows)
    assert "Practise next" in report, report
    assert "/report" not in report and "/interview" not in report
    assert written[-1] == f"Chart: {out.resolve()}" and out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
