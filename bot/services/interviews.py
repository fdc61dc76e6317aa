"""Mock interviews: start, answer, skip, stop, and the outbox of what to send next.

State lives in the database only: any process can pick up where another stopped.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.clock import Clock, utcnow
from bot.content.loader import QuestionBank
from bot.content.schema import Language, Level, Question
from bot.scoring.service import ScoringService
from bot.services.interview_answers import AnswerOutcome as AnswerOutcome  # its callers' import
from bot.services.interview_answers import InterviewAnswers
from bot.services.interview_outbox import InterviewOutbox
from bot.services.interview_states import (
    advance,
    ask_current,
    move_ask,
    move_interview,
)
from bot.services.question_choice import choose_questions
from bot.services.reviews import bring_forward, due_questions, next_due, record_review
from bot.storage.models import Interview, User
from bot.storage.repository import Repo
from bot.storage.statuses import AskStatus, InterviewStatus

DEFAULT_COUNT = 5
MAX_COUNT = 20


@dataclass(frozen=True)
class UserView:
    id: int
    language: Language
    level: Level
    is_new: bool = False


@dataclass(frozen=True)
class InterviewStart:
    interview_id: int
    level: Level
    count: int
    replaced: bool
    replayed: bool = False  # the same /interview message handled again after a restart
    review: bool = False  # /review: the questions due for spaced repetition


@dataclass(frozen=True)
class ReviewNotDue:
    """/review with nothing due: when the next review falls due (None: no reviews yet)."""

    next_due: datetime | None


@dataclass(frozen=True)
class LaterReview:
    """The "ask me that question later" button's outcome: the question (the toast quotes it;
    the handler has no bank of its own) and whether it was added (False: due already)."""

    question: Question
    added: bool


def language_from_code(code: str | None) -> Language:
    return "ru" if (code or "").lower().startswith("ru") else "en"


class InterviewService(InterviewAnswers, InterviewOutbox):
    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        bank: QuestionBank,
        scoring: ScoringService,
        rng: random.Random | None = None,
        clock: Clock = utcnow,
    ):
        self.sessions = sessions
        self.bank = bank
        self.scoring = scoring
        self.rng = rng or random.Random()
        self.clock = clock  # tests move it to bring spaced-repetition reviews due

    async def review_later(self, user_id: int, question_id: str) -> LaterReview | None:
        """Put a bank question into the user's reviews, due now (the "ask me that question later"
        button under an answer to another question). None: no such question in the bank."""
        question = self.bank.get(question_id)
        if question is None:
            return None
        async with self.sessions() as session, session.begin():
            added = await bring_forward(session, user_id, question_id, self.clock())
        return LaterReview(question, added)

    # --- users -------------------------------------------------------------------------------

    async def ensure_user(
        self, user_id: int, language_code: str | None, first_name: str | None = None
    ) -> UserView:
        async with self.sessions() as session, session.begin():
            user, created = await Repo(session).users.get_or_create(
                user_id, language_from_code(language_code), first_name
            )
            return UserView(user.id, user.language, user.level, created)

    async def user(self, user_id: int) -> UserView | None:
        async with self.sessions() as session:
            user = await session.get(User, user_id)
            return UserView(user.id, user.language, user.level) if user else None

    async def update_user(
        self, user_id: int, *, language: Language | None = None, level: Level | None = None
    ) -> UserView:
        async with self.sessions() as session, session.begin():
            user = await session.get(User, user_id)
            if user is None:
                user = User(id=user_id, language=language or "en", level=level or Level.junior)
                session.add(user)
            if language is not None:
                user.language = language
            if level is not None:
                user.level = Level(level)
            return UserView(user.id, user.language, user.level)

    # --- interviews --------------------------------------------------------------------------

    async def start(
        self,
        user_id: int,
        chat_id: int,
        level: Level | None = None,
        count: int | None = None,
        message_id: int | None = None,
    ) -> InterviewStart | None:
        """Start an interview; `message_id` is the command's, so handling it twice starts one."""
        async with self.sessions() as session, session.begin():
            repo = Repo(session)
            if (same := await self._replayed(repo, user_id, message_id)) is not None:
                return same
            user = await repo.users.get(user_id)
            chosen_level = Level(level or (user.level if user else Level.junior))
            wanted = max(1, min(count or DEFAULT_COUNT, MAX_COUNT))
            candidates = self.bank.by_level(chosen_level)
            answered = await repo.answers.answered_question_ids(user_id)
            due = await due_questions(
                session, user_id, self.clock(), among=[q.id for q in candidates]
            )
            questions = choose_questions(candidates, answered, wanted, self.rng, due)
            if not questions:
                return None  # the running interview, if any, goes on
            replaced = await self._replace_active(repo, user_id)
            interview = await self._create(
                session, user_id, chat_id, chosen_level, [q.id for q in questions], message_id
            )
            return InterviewStart(interview.id, chosen_level, len(questions), replaced)

    async def start_review(
        self, user_id: int, chat_id: int, count: int | None = None, message_id: int | None = None
    ) -> InterviewStart | ReviewNotDue:
        """An interview of the questions whose review is due, most overdue first, any level."""
        async with self.sessions() as session, session.begin():
            repo = Repo(session)
            if (same := await self._replayed(repo, user_id, message_id)) is not None:
                return same
            now = self.clock()
            due = [q for q in await due_questions(session, user_id, now) if self.bank.get(q)]
            if not due:
                return ReviewNotDue(await next_due(session, user_id, now))
            user = await repo.users.get(user_id)
            replaced = await self._replace_active(repo, user_id)
            chosen = due[: max(1, min(count or MAX_COUNT, MAX_COUNT))]
            level = user.level if user else Level.junior
            interview = await self._create(session, user_id, chat_id, level, chosen, message_id)
            return InterviewStart(interview.id, level, len(chosen), replaced, review=True)

    async def _replayed(
        self, repo: Repo, user_id: int, message_id: int | None
    ) -> InterviewStart | None:
        """The interview this command message started already (handled again after a restart)."""
        if message_id is None:
            return None
        same = await repo.interviews.started_by(user_id, message_id)
        if same is None:
            return None
        return InterviewStart(same.id, same.level, len(same.question_ids), False, replayed=True)

    async def _replace_active(self, repo: Repo, user_id: int) -> bool:
        """Stop the user's running interview, if any: a new one replaces it (no summary)."""
        return await self._end_active(repo, user_id, InterviewStatus.stopped)

    async def _end_active(self, repo: Repo, user_id: int, status: InterviewStatus) -> bool:
        interview = await repo.interviews.active_for(user_id)
        if interview is None:
            return False
        await repo.asked.close_open(interview.id, AskStatus.closed)
        move_interview(interview, status, self.clock())
        return True

    async def _create(
        self,
        session: AsyncSession,
        user_id: int,
        chat_id: int,
        level: Level,
        question_ids: list[str],
        message_id: int | None,
    ) -> Interview:
        interview = Interview(
            user_id=user_id,
            chat_id=chat_id,
            level=level,
            question_ids=question_ids,
            position=0,
            started_by=message_id,
        )
        session.add(interview)
        await session.flush()
        ask_current(session, interview)
        self.scoring.prepare(question_ids)  # on a cold start, their vectors come first
        return interview

    async def stop(self, user_id: int) -> bool:
        """End the running interview early; its summary is owed (finishing)."""
        async with self.sessions() as session, session.begin():
            return await self._end_active(Repo(session), user_id, InterviewStatus.finishing)

    async def skip(
        self,
        user_id: int,
        chat_id: int,
        ask_id: int | None = None,
        message_id: int | None = None,
    ) -> AnswerOutcome:
        """Skip the question of the button `ask_id`, or the one shown before the /skip
        message `message_id` (so /skip handled twice does not skip the next one too)."""
        async with self.sessions() as session, session.begin():
            repo = Repo(session)
            if ask_id is not None:
                ask = await repo.asked.get(ask_id)
                if ask is None or ask.user_id != user_id:
                    return AnswerOutcome.no_question
            else:
                ask = await repo.asked.latest_shown_open(user_id, chat_id, message_id, self.clock())
                if ask is None:
                    return AnswerOutcome.no_question
            if ask.status != AskStatus.open:
                return AnswerOutcome.already_answered
            move_ask(ask, AskStatus.skipped)
            if self.bank.get(ask.question_id) is not None:
                await record_review(session, user_id, ask.question_id, None, self.clock())
            await advance(session, ask.interview_id, self.clock())
            return AnswerOutcome.skipped
