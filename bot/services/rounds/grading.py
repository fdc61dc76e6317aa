"""Grading a closed question's answers, concurrently (the scoring service batches them), then
marking its results owed."""

from __future__ import annotations

import asyncio
import logging

from bot.priority import bulk_work
from bot.services.grades import stored_fields
from bot.services.reviews import record_review
from bot.services.rounds.base import RoundsBase
from bot.storage import rounds_queries as queries
from bot.storage.models import RoundAnswer, RoundQuestion
from bot.storage.round_moves import mark_graded_if_complete, store_grade
from bot.storage.statuses import RoundAnswerStatus, RoundQuestionStatus
from bot.verdicts import Verdict

log = logging.getLogger(__name__)

GRADE_PASSES = 3  # answers that slip in while a question closes get another pass
ROUND_ANSWER_FIELDS = ("score", "verdict", "covered", "pitfalls")  # no missed, no evidence


class GradingMixin(RoundsBase):
    async def grade_closed(self, chat_id: int) -> None:
        """Grade the answers of closed questions, then mark the results owed."""
        async with self.sessions() as session:
            closing = await queries.questions_with_status(
                session, chat_id, RoundQuestionStatus.grading
            )
            work = [(rq.id, await queries.pending_answer_ids(session, rq.id)) for rq in closing]
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
            async with self.sessions() as session, session.begin():
                if await mark_graded_if_complete(session, rq_id):
                    return
                answer_ids = await queries.pending_answer_ids(session, rq_id)
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
            graded = await store_grade(session, answer_id, text, now, fields)
            # A participant's answer is a review of the question for them (a quiz vote is not:
            # picking among four options is recognition, not recall).
            if graded and question is not None:
                await record_review(session, user_id, question.id, result.score, now)
