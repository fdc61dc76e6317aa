"""Answers in private chats: stored, then graded; graded again when a crash or a failure left
them ungraded. Part of InterviewService."""

from __future__ import annotations

import logging
from datetime import timedelta
from enum import StrEnum

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.clock import Clock, aware, utcnow
from bot.content.loader import QuestionBank
from bot.content.schema import Language
from bot.scoring.service import ScoringService
from bot.scoring.text import detect_language
from bot.services.answer_policy import accept
from bot.services.grades import stored_fields
from bot.services.interview_states import advance, move_answer, move_ask
from bot.services.reviews import record_review
from bot.storage.models import Answer, AskedQuestion
from bot.storage.repository import Repo
from bot.storage.statuses import AnswerStatus, AskStatus
from bot.verdicts import Verdict

log = logging.getLogger(__name__)


class AnswerOutcome(StrEnum):
    graded = "graded"
    no_question = "no_question"
    too_short = "too_short"
    busy = "busy"  # the question is being graded (a second answer raced the first)
    already_answered = "already_answered"
    skipped = "skipped"
    duplicate = "duplicate"  # the same Telegram message delivered again after a restart
    not_yet_asked = "not_yet_asked"  # written before the next question reached the chat
    grade_later = "grade_later"  # stored, but grading failed: it is graded again later


class InterviewAnswers:
    sessions: async_sessionmaker[AsyncSession]
    bank: QuestionBank
    scoring: ScoringService
    clock: Clock

    async def submit(
        self,
        user_id: int,
        chat_id: int,
        text: str,
        message_id: int | None = None,
        reply_to: int | None = None,
        language: Language | None = None,
    ) -> tuple[AnswerOutcome, int | None]:
        """Store the answer and grade it. Returns the outcome and the answer id when stored."""
        verdict = accept(text)
        text = verdict.text
        async with self.sessions() as session, session.begin():
            repo = Repo(session)
            same = (
                None if message_id is None else await repo.answers.by_message(user_id, message_id)
            )
            if same is not None and same.status != AnswerStatus.pending:
                return AnswerOutcome.duplicate, None
            if same is None:
                stored = await self._store(repo, user_id, chat_id, text, verdict.too_short,
                                           message_id, reply_to, language)  # fmt: skip
                if isinstance(stored, AnswerOutcome):
                    return stored, None
                answer_id = stored
            else:
                # Stored by a replica that died before grading it (this update was taken over
                # from it): graded here now, not after the periodic retry. Should that replica
                # only have stalled, grade_pending stores one of the two grades.
                answer_id = same.id
        # Committed before grading: a crash from here on is recovered by grade_pending().
        try:
            await self.grade_pending(answer_id)
        except Exception:  # the model's process or the embedding server failed: try later
            log.exception("grading answer %s failed; it stays stored for a retry", answer_id)
            return AnswerOutcome.grade_later, answer_id
        return AnswerOutcome.graded, answer_id

    async def _store(
        self,
        repo: Repo,
        user_id: int,
        chat_id: int,
        text: str,
        too_short: bool,
        message_id: int | None,
        reply_to: int | None,
        language: Language | None,
    ) -> AnswerOutcome | int:
        """Store the answer to the question it answers: its id, or why it was not stored."""
        ask: AskedQuestion | None = None
        if reply_to is not None:
            target = await repo.asked.by_message(chat_id, reply_to)
            if target is not None and target.user_id == user_id:
                if target.status == AskStatus.grading:
                    return AnswerOutcome.busy
                if target.status != AskStatus.open:
                    return AnswerOutcome.already_answered
                ask = target
        if ask is None:
            # Only a question the person could see when writing: never one whose message
            # is still unsent (it would then never be sent) or arrived after this message.
            ask = await repo.asked.latest_shown_open(user_id, chat_id, message_id, self.clock())
        if ask is None:
            grading = await repo.asked.latest_with_status(user_id, chat_id, (AskStatus.grading,))
            if grading is not None:
                return AnswerOutcome.busy
            pending = await repo.asked.latest_with_status(user_id, chat_id, (AskStatus.open,))
            return AnswerOutcome.not_yet_asked if pending else AnswerOutcome.no_question
        if too_short:
            return AnswerOutcome.too_short
        if not await repo.asked.claim(ask.id):
            return AnswerOutcome.busy
        answer = Answer(
            asked_id=ask.id,
            user_id=user_id,
            question_id=ask.question_id,
            message_id=message_id,
            text=text,
            language=language or detect_language(text),
        )
        repo.session.add(answer)
        await repo.session.flush()
        return answer.id

    async def grade_pending(self, answer_id: int) -> None:
        async with self.sessions() as session:
            answer = await session.get(Answer, answer_id)
            if answer is None or answer.status != AnswerStatus.pending:
                return
            question = self.bank.get(answer.question_id)
            text, language = answer.text, answer.language
        if question is None:  # the question left the bank; close the answer ungraded
            result_fields: dict[str, object] = {"score": 0.0, "verdict": Verdict.retired}
        else:
            result = await self.scoring.grade(question, text, language)
            result_fields = stored_fields(result)
        async with self.sessions() as session, session.begin():
            # Locked (PostgreSQL): two replicas grading the same answer (a takeover beside a
            # restart's recovery) store one grade; the other sees it graded and stops.
            answer = await session.get(Answer, answer_id, with_for_update=True)
            if answer is None or answer.status != AnswerStatus.pending:
                return
            for key, value in result_fields.items():
                setattr(answer, key, value)
            now = self.clock()
            move_answer(answer, AnswerStatus.graded, now)
            if question is not None:
                await record_review(session, answer.user_id, answer.question_id, answer.score, now)
            ask = await session.get(AskedQuestion, answer.asked_id)
            if ask is not None:
                move_ask(ask, AskStatus.answered)
                await advance(session, ask.interview_id, now)

    async def recover(self) -> list[int]:
        """After a restart: grade answers stored but not graded; return users owed messages."""
        await self.grade_stored()
        async with self.sessions() as session:
            return await Repo(session).answers.users_with_pending_work()

    async def grade_stored(self, older_than: timedelta | None = None) -> list[int]:
        """Grade the answers stored (at least `older_than` ago) and still ungraded: left by a
        crash, or their grading failed. Return the users whose answers were graded; one that
        fails again is logged and left for the next call."""
        # Stored with the wall clock (the column's default), so compared with it.
        stored_before = utcnow() - (older_than or timedelta(0))
        async with self.sessions() as session:
            pending = [
                (a.id, a.user_id)
                for a in await Repo(session).answers.with_status(AnswerStatus.pending)
                if aware(a.created_at) <= stored_before
            ]
        graded: set[int] = set()
        for answer_id, user_id in pending:
            try:
                await self.grade_pending(answer_id)
            except Exception:
                log.exception("grading stored answer %s failed again", answer_id)
                continue
            graded.add(user_id)
        return sorted(graded)
