"""What the bot owes a user in a private chat, read from the database (feedback, the next
question, an interview's summary), and marking each item sent. Part of InterviewService."""

from __future__ import annotations

from dataclasses import replace

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.clock import Clock
from bot.content.loader import QuestionBank
from bot.content.schema import Level
from bot.services.daily import daily_streak_for_ask
from bot.services.grades import ANOTHER_QUESTION
from bot.services.interview_states import advance, move_answer, move_ask, move_interview
from bot.services.interview_summary import build_summary
from bot.services.outbox import FeedbackItem, OutboxItem, PreviousAttempt, QuestionItem
from bot.services.readiness import load_readiness
from bot.storage.models import Answer, AskedQuestion, Interview
from bot.storage.repository import Repo
from bot.storage.statuses import AnswerStatus, AskStatus, InterviewStatus
from bot.verdicts import Verdict


class InterviewOutbox:
    sessions: async_sessionmaker[AsyncSession]
    bank: QuestionBank
    clock: Clock

    async def outbox(self, user_id: int) -> list[OutboxItem]:
        await self._retire_gone(user_id)
        items: list[OutboxItem] = []
        async with self.sessions() as session:
            repo = Repo(session)
            for answer in await repo.answers.with_status(AnswerStatus.graded, user_id):
                ask = await repo.asked.get(answer.asked_id)
                question = self.bank.get(answer.question_id)
                if ask is None or question is None:
                    continue
                items.append(
                    FeedbackItem(
                        answer_id=answer.id,
                        chat_id=ask.chat_id,
                        reply_to=answer.message_id,
                        question=question,
                        score=answer.score or 0.0,
                        verdict=answer.verdict or Verdict.no_answer,
                        covered=list(answer.covered or []),
                        missed=list(answer.missed or []),
                        pitfalls=list(answer.pitfalls or []),
                        evidence=dict(answer.evidence or {}),
                        answered_instead=self.bank.get(
                            (answer.evidence or {}).get(ANOTHER_QUESTION, "")
                        ),
                        previous=_attempt(await repo.answers.previous_graded(answer)),
                        streak=(
                            await daily_streak_for_ask(session, ask.id)
                            if ask.interview_id is None
                            else None
                        ),
                        parts_sent=answer.parts_sent,
                    )
                )
            for ask in await repo.asked.unsent(user_id):
                question = self.bank.get(ask.question_id)
                if question is None:
                    continue
                total = None
                if ask.interview_id is not None:
                    interview = await repo.interviews.get(ask.interview_id)
                    total = len(interview.question_ids) if interview else None
                items.append(QuestionItem(ask.id, ask.chat_id, question, ask.position + 1, total))
            summaries = [
                await build_summary(session, self.bank, interview, self.clock())
                for interview in await repo.interviews.finishing(user_id)
            ]
            user = await repo.users.get(user_id)
        if summaries:
            # Read after this session is closed: a second connection taken while holding one
            # deadlocks the pool when many users finish at once.
            level = user.level if user else Level.junior
            # The summary's line shows counts only, no question text: any language will do.
            report = await load_readiness(self.sessions, self.bank, user_id, "en", level)
            items += [replace(summary, readiness=report) for summary in summaries]
        return items

    async def _retire_gone(self, user_id: int) -> None:
        """A question that left the bank (a content update between two runs) can be neither
        sent nor shown in feedback: an unsent one is closed and its interview moves on, and a
        graded answer to one is settled, so neither stays owed (and stalls the interview)."""
        async with self.sessions() as session, session.begin():
            repo = Repo(session)
            while gone := [
                a for a in await repo.asked.unsent(user_id) if self.bank.get(a.question_id) is None
            ]:  # the question asked next may be gone too
                for ask in gone:
                    move_ask(ask, AskStatus.closed)
                    ask.message_id = -ask.id  # never sent
                    await advance(session, ask.interview_id, self.clock())
                await session.flush()
            for answer in await repo.answers.with_status(AnswerStatus.graded, user_id):
                if self.bank.get(answer.question_id) is None:
                    move_answer(answer, AnswerStatus.delivered, self.clock())

    async def begin_send(self, item: QuestionItem) -> None:
        """Count a send of the question message before it goes out (see send_attempts)."""
        async with self.sessions() as session, session.begin():
            await Repo(session).asked.count_send(item.ask_id)

    async def mark_part_sent(self, item: FeedbackItem, parts: int) -> None:
        """The first `parts` parts of the feedback went out: in a transaction of its own, right
        after Telegram accepted the last of them, so a takeover does not send them again."""
        async with self.sessions() as session, session.begin():
            await Repo(session).answers.mark_parts_sent(item.answer_id, parts)

    async def mark_sent(self, item: OutboxItem, message_id: int | None) -> None:
        async with self.sessions() as session, session.begin():
            if isinstance(item, FeedbackItem):
                answer = await session.get(Answer, item.answer_id)
                if answer is not None and answer.status == AnswerStatus.graded:
                    move_answer(answer, AnswerStatus.delivered, self.clock())
            elif isinstance(item, QuestionItem):
                ask = await session.get(AskedQuestion, item.ask_id)
                if ask is not None and ask.message_id is None:
                    # A placeholder id keeps a failed send from being retried forever.
                    ask.message_id = message_id if message_id is not None else -item.ask_id
            else:
                interview = await session.get(Interview, item.interview_id)
                if interview is not None and interview.status == InterviewStatus.finishing:
                    move_interview(interview, InterviewStatus.finished, self.clock())


def _attempt(answer: Answer | None) -> PreviousAttempt | None:
    if answer is None or answer.score is None:
        return None
    return PreviousAttempt(
        score=answer.score,
        covered=list(answer.covered or []),
        pitfalls=list(answer.pitfalls or []),
        graded_at=answer.graded_at,
    )
