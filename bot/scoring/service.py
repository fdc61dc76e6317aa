"""Runs the model in one worker thread so grading never blocks the event loop."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

from bot.content.loader import QuestionBank
from bot.content.schema import Question
from bot.scoring.encoder import Encoder
from bot.scoring.grader import Grader, GradeResult


class ScoringService:
    def __init__(self, bank: QuestionBank, model: str, device: str):
        self.bank = bank
        self._model = model
        self._device = device
        # One thread: the model is not shared between threads, and torch uses the cores itself.
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="grader")
        self._grader: Grader | None = None

    def _load(self, warm: bool) -> Grader:
        if self._grader is None:
            self._grader = Grader(Encoder(self._model, self._device), list(self.bank))
            if warm:
                self._grader.warm(list(self.bank))
        return self._grader

    async def start(self, warm: bool = True) -> None:
        """Load the model (and the bank's vectors) in the worker thread."""
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self._executor, self._load, warm)

    async def grade(self, question: Question, answer: str, lang: str | None = None) -> GradeResult:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, self._grade_sync, question, answer, lang)

    def _grade_sync(self, question: Question, answer: str, lang: str | None) -> GradeResult:
        return self._load(warm=False).grade(question, answer, lang)

    def grade_blocking(
        self, question: Question, answer: str, lang: str | None = None
    ) -> GradeResult:
        """For the CLI, where there is no event loop to protect."""
        return self._executor.submit(self._grade_sync, question, answer, lang).result()

    def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)
