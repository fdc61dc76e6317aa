"""Answers to round questions: replies (free text, graded when the question closes) and quiz
votes (scored at once). The latest answer per participant wins."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from bot.clock import aware
from bot.content.schema import Language
from bot.scoring.text import detect_language
from bot.services.answer_policy import accept
from bot.services.rounds.base import RoundsBase, once_more_on_conflict
from bot.storage import rounds_queries as queries
from bot.storage.models import RoundAnswer
from bot.storage.round_moves import replace_answer
from bot.storage.statuses import RoundAnswerStatus, RoundQuestionStatus
from bot.verdicts import Verdict


class QuestionState(StrEnum):
    """The question a message replies to: still taking answers, or not."""

    open = "open"
    closed = "closed"


class RoundAnswerOutcome(StrEnum):
    accepted = "accepted"
    replaced = "replaced"  # a later reply or an edit took the place of the earlier answer
    duplicate = "duplicate"  # the same update delivered again
    not_a_question = "not_a_question"  # a reply to a message that is no round question
    closed = "closed"  # the question is closed or its deadline has passed
    too_short = "too_short"


@dataclass(frozen=True)
class AnswerResult:
    outcome: RoundAnswerOutcome
    complete: bool = False  # everyone who answered before has answered: close early


class AnswersMixin(RoundsBase):
    async def question_state(self, chat_id: int, message_id: int) -> QuestionState | None:
        """Open or closed; None when the message is no round question."""
        async with self.sessions() as session:
            rq = await queries.question_by_message(session, chat_id, message_id)
        if rq is None:
            return None
        deadline = aware(rq.deadline)
        expired = deadline is not None and self.clock() >= deadline
        if rq.status == RoundQuestionStatus.open and not expired:
            return QuestionState.open
        return QuestionState.closed

    async def submit(
        self,
        chat_id: int,
        user_id: int,
        name: str,
        reply_to: int | None,
        text: str,
        message_id: int | None = None,
        language: Language | None = None,
        edited: bool = False,
        sent_at: datetime | None = None,
    ) -> AnswerResult:
        """Store (or replace) a participant's answer. Grading happens when the question closes.
        `sent_at`: when Telegram received the message (or the edit); lateness is judged by it."""
        return await once_more_on_conflict(
            lambda: self._submit(
                chat_id, user_id, name, reply_to, text, message_id, language, edited, sent_at
            )
        )

    async def _submit(
        self,
        chat_id: int,
        user_id: int,
        name: str,
        reply_to: int | None,
        text: str,
        message_id: int | None,
        language: Language | None,
        edited: bool,
        sent_at: datetime | None,
    ) -> AnswerResult:
        if reply_to is None:
            return AnswerResult(RoundAnswerOutcome.not_a_question)
        verdict = accept(text)
        text = verdict.text
        now = self.clock()
        async with self.sessions() as session, session.begin():
            # FOR UPDATE (PostgreSQL; SQLite has one writer anyway): closing the question waits
            # for this answer to commit, so grading that follows the close sees it.
            rq = await queries.question_by_message(session, chat_id, reply_to, lock=True)
            if rq is None or rq.options is not None:  # a quiz poll is answered by voting
                return AnswerResult(RoundAnswerOutcome.not_a_question)
            deadline = aware(rq.deadline)
            sent = min(aware(sent_at) or now, now)  # a clock ahead of ours gains nothing
            if rq.status != RoundQuestionStatus.open or (deadline is not None and sent >= deadline):
                return AnswerResult(RoundAnswerOutcome.closed)
            if verdict.too_short:
                return AnswerResult(RoundAnswerOutcome.too_short)
            existing = await queries.answer_of(session, rq.id, user_id)
            if existing is not None:
                # A message older than the stored one (or the same one delivered again, or the
                # original of an edit already applied) changes nothing; an edit always replaces.
                replaced = await replace_answer(
                    session,
                    existing.id,
                    None if edited else message_id,
                    {
                        "text": text,
                        "message_id": message_id,
                        "language": language or detect_language(text),
                        "name": name[:128] or str(user_id),
                        "answered_at": now,
                    },
                )
                if not replaced:
                    return AnswerResult(RoundAnswerOutcome.duplicate)
                outcome = RoundAnswerOutcome.replaced
            else:
                session.add(
                    RoundAnswer(
                        round_question_id=rq.id,
                        user_id=user_id,
                        name=name[:128] or str(user_id),
                        message_id=message_id,
                        text=text,
                        language=language or detect_language(text),
                        answered_at=now,
                    )
                )
                outcome = RoundAnswerOutcome.accepted
            await session.flush()
            complete = await queries.everyone_answered(session, rq)
        return AnswerResult(outcome, complete)

    async def poll_answer(
        self, poll_id: str, user_id: int, name: str, option_ids: Sequence[int]
    ) -> tuple[int | None, AnswerResult]:
        """A vote in a quiz poll: 10 points when right, 0 when wrong; a retracted vote is dropped.

        Returns the group's chat id (None when the poll is no open quiz question) and the result.
        """
        return await once_more_on_conflict(
            lambda: self._poll_answer(poll_id, user_id, name, option_ids)
        )

    async def _poll_answer(
        self, poll_id: str, user_id: int, name: str, option_ids: Sequence[int]
    ) -> tuple[int | None, AnswerResult]:
        now = self.clock()
        async with self.sessions() as session, session.begin():
            rq = await queries.question_by_poll(session, poll_id)
            if rq is None or rq.options is None:
                return None, AnswerResult(RoundAnswerOutcome.not_a_question)
            deadline = aware(rq.deadline)
            if rq.status != RoundQuestionStatus.open or (deadline is not None and now >= deadline):
                return rq.chat_id, AnswerResult(RoundAnswerOutcome.closed)
            existing = await queries.answer_of(session, rq.id, user_id)
            if not option_ids:
                if existing is not None:
                    await session.delete(existing)
                return rq.chat_id, AnswerResult(RoundAnswerOutcome.replaced)
            choice = int(option_ids[0])
            right = choice == rq.correct_option
            fields = {
                "text": str(rq.options[choice]) if 0 <= choice < len(rq.options) else "?",
                "name": name[:128] or str(user_id),
                "score": 10.0 if right else 0.0,
                "verdict": Verdict.correct if right else Verdict.wrong,
                # Nothing to grade: the poll knows the right option.
                "status": RoundAnswerStatus.graded,
                "answered_at": now,
                "graded_at": now,
            }
            if existing is None:
                session.add(
                    RoundAnswer(round_question_id=rq.id, user_id=user_id, language="en", **fields)
                )
                outcome = RoundAnswerOutcome.accepted
            else:
                for key, value in fields.items():
                    setattr(existing, key, value)
                outcome = RoundAnswerOutcome.replaced
            await session.flush()
            return rq.chat_id, AnswerResult(outcome, await queries.everyone_answered(session, rq))
