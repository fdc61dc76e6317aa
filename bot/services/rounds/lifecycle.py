"""A round's life: start, stop, closing questions (now, or at their deadline), and which groups
have round work due. All state, deadlines included, is in the database."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum

from bot.clock import aware
from bot.content.schema import Level
from bot.services.question_choice import choose_questions
from bot.services.quiz import QUIZ_SECONDS, quiz_questions
from bot.services.rounds.args import DEFAULT_QUESTIONS, DEFAULT_SECONDS, MAX_QUESTIONS
from bot.services.rounds.base import RoundsBase, once_more_on_conflict
from bot.services.rounds.states import move_question, move_round
from bot.storage import rounds_queries as queries
from bot.storage.models import GroupChat, Round
from bot.storage.round_moves import close_posted, close_question
from bot.storage.statuses import RoundKind, RoundQuestionStatus, RoundStatus

# A reply sent just before the deadline reaches the bot a moment later: questions close this long
# after their deadline, and a reply counts if Telegram stamped it before the deadline.
LATE_GRACE = timedelta(seconds=2)
# After a restart, a question whose deadline passed while the bot was down stays open this long,
# so that replies sent before the deadline and waiting in Telegram's queue are read first.
RESTART_GRACE = timedelta(seconds=10)


class StartOutcome(StrEnum):
    started = "started"
    already_running = "already_running"
    no_questions = "no_questions"


@dataclass(frozen=True)
class RoundStart:
    outcome: StartOutcome
    round_id: int | None = None
    level: Level | None = None
    count: int = 0
    seconds: int = 0


class LifecycleMixin(RoundsBase):
    def _closes_at(self, deadline: datetime) -> datetime:
        """When a question with this deadline stops taking replies (see LATE_GRACE)."""
        closes = deadline + LATE_GRACE
        if deadline < self.started_at:  # it expired while no process was running
            closes = max(closes, self.started_at + RESTART_GRACE)
        return closes

    async def active_round(self, chat_id: int) -> int | None:
        async with self.sessions() as session:
            round_ = await queries.active_round(session, chat_id)
            return round_.id if round_ else None

    async def start(
        self,
        chat_id: int,
        started_by: int | None,
        level: Level | None = None,
        count: int | None = None,
        seconds: int | None = None,
        kind: RoundKind = RoundKind.round,
    ) -> RoundStart:
        """A round of free-text questions, or (kind="quiz") of quiz polls."""
        return await once_more_on_conflict(
            lambda: self._start(chat_id, started_by, level, count, seconds, kind)
        )

    async def _start(
        self,
        chat_id: int,
        started_by: int | None,
        level: Level | None,
        count: int | None,
        seconds: int | None,
        kind: RoundKind = RoundKind.round,
    ) -> RoundStart:
        async with self.sessions() as session, session.begin():
            group = await session.get(GroupChat, chat_id)
            if group is None:
                group = GroupChat(id=chat_id, language="en", level=Level.junior)
                session.add(group)
                await session.flush()
            if await queries.running_round(session, chat_id) is not None:
                return RoundStart(StartOutcome.already_running)
            chosen = Level(level or group.level)
            wanted = max(1, min(count or DEFAULT_QUESTIONS, MAX_QUESTIONS))
            quiz = kind == RoundKind.quiz
            per_question = seconds or (QUIZ_SECONDS if quiz else DEFAULT_SECONDS)
            asked = await queries.asked_in_group(session, chat_id)
            pool = quiz_questions(self.bank, chosen) if quiz else self.bank.by_level(chosen)
            questions = choose_questions(pool, asked, wanted, self.rng)
            if not questions:
                return RoundStart(StartOutcome.no_questions, level=chosen)
            round_ = Round(
                chat_id=chat_id,
                kind=RoundKind.quiz if quiz else RoundKind.round,
                level=chosen,
                question_ids=[q.id for q in questions],
                position=0,
                seconds=per_question,
                started_by=started_by,
                started_at=self.clock(),
            )
            session.add(round_)
            await session.flush()
            self._ask(session, round_)
            self.scoring.prepare(round_.question_ids)  # on a cold start, their vectors come first
            return RoundStart(StartOutcome.started, round_.id, chosen, len(questions), per_question)

    async def stop(self, chat_id: int) -> bool:
        """`/round stop`: the current question is the last; its answers still get results."""
        async with self.sessions() as session, session.begin():
            round_ = await queries.active_round(session, chat_id)
            if round_ is None:
                return False
            current = await queries.question_at(session, round_.id, round_.position)
            if current is not None and current.message_id is None:
                await session.delete(current)  # never posted: nobody could answer it
                round_.question_ids = list(round_.question_ids[: round_.position])
                move_round(round_, RoundStatus.finishing, self.clock())
                return True
            round_.question_ids = list(round_.question_ids[: round_.position + 1])
            if current is not None and current.status == RoundQuestionStatus.open:
                move_question(current, RoundQuestionStatus.grading, self.clock())
            return True

    async def close_current(self, chat_id: int, round_question_id: int | None = None) -> bool:
        """Close the open question now ("Next" pressed, or everyone has answered)."""
        async with self.sessions() as session, session.begin():
            return await close_posted(session, chat_id, self.clock(), round_question_id) > 0

    async def expire(self, chat_id: int | None = None) -> list[int]:
        """Close questions whose deadline has passed; returns their chats."""
        now = self.clock()
        closed: list[int] = []
        async with self.sessions() as session, session.begin():
            posted = await queries.questions_with_status(
                session, chat_id, RoundQuestionStatus.open, posted=True
            )
            for rq in posted:
                deadline = aware(rq.deadline)
                due = deadline is not None and self._closes_at(deadline) <= now
                if due and await close_question(session, rq.id, now):
                    closed.append(rq.chat_id)
        return closed

    async def due(self) -> list[int]:
        """Chats with round work to do now: expired deadlines, grading, messages owed."""
        now = self.clock()
        async with self.sessions() as session:
            work = await queries.round_work(session)
        chats = set(work.owed)
        for chat_id, status, deadline in work.questions:
            when = aware(deadline)
            if status != RoundQuestionStatus.open or when is None or self._closes_at(when) <= now:
                chats.add(chat_id)
        return sorted(chats)
