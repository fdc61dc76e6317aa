"""Grading a closed question's answers, concurrently (the scoring service batches them), then
marking its results owed."""

from __future__ import annotations

import asyncio
import logging

from sqlalchemy import select, update

from bot.priority import bulk_work
from bot.services.grades import stored_fields
from bot.services.reviews import record_review
from bot.services.rounds.base import RoundsBase
from bot.services.rounds.states import answer_moving_to, question_moving_to
from bot.storage.models import RoundAnswer, RoundQuestion
from bot.storage.results import rowcount
from bot.storage.statuses import RoundAnswerStatus, RoundQuestionStatus
from bot.verdicts import Verdict

log = logging.getLogger(__name__)

GRADE_PASSES = 3  # answers that slip in while a question closes get another pass
ROUND_ANSWER_FIELDS = ("score", "verdict", "covered", "pitfalls")  # no missed, no evidence


class GradingMixin(RoundsBase):
    async def grade_closed(self, chat_id: int) -> None:
        """Grade the answers of closed questions, then mark the results owed."""
        async with self.sessions() as session:
            closing = (
                await session.scalars(
                    select(RoundQuestion).where(
                        RoundQuestion.chat_id == chat_id,
                        RoundQuestion.status == RoundQuestionStatus.grading,
                    )
                )
            ).all()
            work: list[tuple[int, list[int]]] = []
            for rq in closing:
                pending = await session.scalars(
                    select(RoundAnswer.id).where(
                        RoundAnswer.round_question_id == rq.id,
                        RoundAnswer.status == RoundAnswerStatus.pending,
                    )
                )
                work.append((rq.id, list(pending)))
        # A group's batch waits behind answers of people in private chats (bot/priority.py).
        with bulk_work():
            for rq_id, answer_ids in work:
                await self._grade_question(rq_id, answer_ids)

    async def _grade_question(self, rq_id: int, answer_ids: list[int]) -> None:
        """Grade, then mark the question graded only if no answer is left pending: an answer
        that slipped in while the question was closing is graded on the next pass, not lost."""
        for _ in range(GRADE_PASSES):
            # Concurrent calls let the scoring service batch them.
            await asyncio.gather(*(self._grade(answer_id) for answer_id in answer_ids))
            pending = select(RoundAnswer.id).where(
                RoundAnswer.round_question_id == rq_id,
                RoundAnswer.status == RoundAnswerStatus.pending,
            )
            async with self.sessions() as session, session.begin():
                result = await session.execute(
                    update(RoundQuestion)
                    .where(
                        RoundQuestion.id == rq_id,
                        question_moving_to(RoundQuestionStatus.graded),
                        ~pending.exists(),
                    )
                    .values(status=RoundQuestionStatus.graded)
                )
                if rowcount(result):
                    return
                answer_ids = list(await session.scalars(pending))
            if not answer_ids:  # graded and marked by another pass meanwhile
                return
        log.warning(
            "round question %s still has pending answers after %s passes", rq_id, GRADE_PASSES
        )

    async def _grade(self, answer_id: int) -> None:
        async with self.sessions() as session:
            answer = await session.get(RoundAnswer, answer_id)
            rq = await session.get(RoundQuestion, answer.round_question_id) if answer else None
            if answer is None or rq is None or answer.status != RoundAnswerStatus.pending:
                return
            question = self.bank.get(rq.question_id)
            text, language, user_id = answer.text, answer.language, answer.user_id
        fields: dict[str, object]
        if question is None:  # the question left the bank: close the answer ungraded
            fields = {"score": 0.0, "verdict": Verdict.retired, "covered": [], "pitfalls": []}
        else:
            result = await self.scoring.grade(question, text, language)
            fields = stored_fields(result, ROUND_ANSWER_FIELDS)
        async with self.sessions() as session, session.begin():
            # Only the text that was graded: an answer replaced meanwhile stays pending.
            now = self.clock()
            updated = await session.execute(
                update(RoundAnswer)
                .where(
                    RoundAnswer.id == answer_id,
                    answer_moving_to(RoundAnswerStatus.graded),
                    RoundAnswer.text == text,
                )
                .values(status=RoundAnswerStatus.graded, graded_at=now, **fields)
            )
            # A participant's answer is a review of the question for them (a quiz vote is not:
            # picking among four options is recognition, not recall).
            if rowcount(updated) and question is not None:
                await record_review(session, user_id, question.id, result.score, now)
