"""`python -m bot practice`: the interview in a terminal, driven through its read/write hooks."""

from __future__ import annotations

from pathlib import Path

from bot.config import load_settings
from bot.content.loader import QuestionBank
from bot.practice import practice
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
