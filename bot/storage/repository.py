"""Queries over one AsyncSession. Repositories never commit: the service owns the transaction."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from sqlalchemy import ColumnElement, and_, func, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from bot.content.schema import Language, Level
from bot.storage.models import Answer, AskedQuestion, Interview, User
from bot.storage.results import rowcount
from bot.storage.statuses import ASK_MOVES, AnswerStatus, AskStatus, InterviewStatus, sources


class UserRepo:
    def __init__(self, session: AsyncSession):
        self.session = session

    async def get(self, user_id: int) -> User | None:
        return await self.session.get(User, user_id)

    async def get_or_create(
        self, user_id: int, language: Language, first_name: str | None
    ) -> tuple[User, bool]:
        user = await self.get(user_id)
        if user is not None:
            return user, False
        user = User(id=user_id, language=language, level=Level.junior, first_name=first_name)
        self.session.add(user)
        await self.session.flush()
        return user, True


class InterviewRepo:
    def __init__(self, session: AsyncSession):
        self.session = session

    async def get(self, interview_id: int) -> Interview | None:
        return await self.session.get(Interview, interview_id)

    async def started_by(self, user_id: int, message_id: int) -> Interview | None:
        stmt = select(Interview).where(
            Interview.user_id == user_id, Interview.started_by == message_id
        )
        return await self.session.scalar(stmt.limit(1))

    async def active_for(self, user_id: int) -> Interview | None:
        stmt = (
            select(Interview)
            .where(Interview.user_id == user_id, Interview.status == InterviewStatus.active)
            .order_by(Interview.id.desc())
            .limit(1)
        )
        return await self.session.scalar(stmt)

    async def finishing(self, user_id: int) -> Sequence[Interview]:
        stmt = select(Interview).where(
            Interview.user_id == user_id, Interview.status == InterviewStatus.finishing
        )
        return (await self.session.scalars(stmt.order_by(Interview.id))).all()


# A daily send not recorded this long after it began is taken as delivered and cut off (a kill
# between Telegram's answer and the record); recording normally takes milliseconds.
UNRECORDED_AFTER = timedelta(seconds=30)


def unrecorded_daily() -> ColumnElement[bool]:
    """A daily question (no interview) whose send began (its ask is made just before) and whose
    message id was not recorded: in flight, or the process died after Telegram took it."""
    return and_(
        AskedQuestion.message_id.is_(None),
        AskedQuestion.interview_id.is_(None),
        AskedQuestion.send_attempts > 0,
    )


class AskedRepo:
    def __init__(self, session: AsyncSession):
        self.session = session

    async def get(self, ask_id: int) -> AskedQuestion | None:
        return await self.session.get(AskedQuestion, ask_id)

    async def by_message(self, chat_id: int, message_id: int) -> AskedQuestion | None:
        """The question whose message this is. Failing that, the one daily question of the chat
        whose message id was never recorded (a kill between sending and recording) that the
        message's id fits: above the messages of the questions asked before it, below those
        asked after it (ids grow in a chat). None when no such question, or several, fit."""
        stmt = select(AskedQuestion).where(
            AskedQuestion.chat_id == chat_id, AskedQuestion.message_id == message_id
        )
        exact = await self.session.scalar(stmt)
        if exact is not None:
            return exact
        unrecorded = (
            await self.session.scalars(
                select(AskedQuestion)
                .where(
                    AskedQuestion.chat_id == chat_id,
                    unrecorded_daily(),
                    # One answered already: a reply to its message is more likely to something
                    # else (its feedback) than a second answer to it.
                    AskedQuestion.status.in_((AskStatus.open, AskStatus.grading)),
                )
                .order_by(AskedQuestion.id.desc())
                .limit(3)
            )
        ).all()
        fits = [ask for ask in unrecorded if await self._fits(ask, message_id)]
        return fits[0] if len(fits) == 1 else None

    async def _fits(self, ask: AskedQuestion, message_id: int) -> bool:
        """Whether `message_id` lies between the messages of the asks made before and after."""
        known = (AskedQuestion.chat_id == ask.chat_id, AskedQuestion.message_id > 0)
        before = await self.session.scalar(
            select(func.max(AskedQuestion.message_id)).where(*known, AskedQuestion.id < ask.id)
        )
        after = await self.session.scalar(
            select(func.min(AskedQuestion.message_id)).where(*known, AskedQuestion.id > ask.id)
        )
        return (before is None or before < message_id) and (after is None or message_id < after)

    async def latest_with_status(
        self, user_id: int, chat_id: int, statuses: tuple[AskStatus, ...]
    ) -> AskedQuestion | None:
        stmt = (
            select(AskedQuestion)
            .where(
                AskedQuestion.user_id == user_id,
                AskedQuestion.chat_id == chat_id,
                AskedQuestion.status.in_(statuses),
            )
            .order_by(AskedQuestion.id.desc())
            .limit(1)
        )
        return await self.session.scalar(stmt)

    async def latest_shown_open(
        self, user_id: int, chat_id: int, before_message: int | None, now: datetime
    ) -> AskedQuestion | None:
        """The newest open question whose message reached the chat before `before_message`
        (message ids grow in a chat): the one a person writing that message had seen."""
        stmt = select(AskedQuestion).where(
            AskedQuestion.user_id == user_id,
            AskedQuestion.chat_id == chat_id,
            AskedQuestion.status == AskStatus.open,
            # A daily question whose send began may have arrived though its id was never
            # recorded (a kill in between): it is never sent again, so it stays answerable;
            # but not while its send may still be in flight (the person has not seen it yet).
            or_(
                AskedQuestion.message_id.is_not(None),
                and_(unrecorded_daily(), AskedQuestion.asked_at <= now - UNRECORDED_AFTER),
            ),
        )
        if before_message is not None:
            # A failed send is stored as a negative placeholder id and stays answerable; so is
            # a question sent again after a kill, whose first copy the person may have seen.
            stmt = stmt.where(
                or_(
                    AskedQuestion.message_id < before_message,
                    AskedQuestion.send_attempts > 1,
                    AskedQuestion.message_id.is_(None),  # only unrecorded daily ones, above
                )
            )
        return await self.session.scalar(stmt.order_by(AskedQuestion.id.desc()).limit(1))

    async def claim(self, ask_id: int) -> bool:
        """open -> grading, atomically: only one of two racing answers wins."""
        result = await self.session.execute(
            update(AskedQuestion)
            .where(
                AskedQuestion.id == ask_id,
                AskedQuestion.status.in_(sources(ASK_MOVES, AskStatus.grading)),
            )
            .values(status=AskStatus.grading)
        )
        return rowcount(result) == 1

    async def close_open(self, interview_id: int, status: AskStatus) -> None:
        await self.session.execute(
            update(AskedQuestion)
            .where(
                AskedQuestion.interview_id == interview_id,
                AskedQuestion.status.in_(sources(ASK_MOVES, status)),  # open, for closed/skipped
            )
            .values(status=status)
        )

    async def unsent(self, user_id: int) -> Sequence[AskedQuestion]:
        """Interview questions owed to the chat. A daily question without a message id is the
        daily scheduler's, being sent or sent unrecorded: sending it here would duplicate it."""
        stmt = select(AskedQuestion).where(
            AskedQuestion.user_id == user_id,
            AskedQuestion.status == AskStatus.open,
            AskedQuestion.message_id.is_(None),
            AskedQuestion.interview_id.is_not(None),
        )
        return (await self.session.scalars(stmt.order_by(AskedQuestion.id))).all()

    async def for_interview(self, interview_id: int) -> Sequence[AskedQuestion]:
        stmt = select(AskedQuestion).where(AskedQuestion.interview_id == interview_id)
        return (await self.session.scalars(stmt.order_by(AskedQuestion.position))).all()

    async def count_send(self, ask_id: int) -> None:
        """One more send of the question's message begun (see AskedQuestion.send_attempts)."""
        await self.session.execute(
            update(AskedQuestion)
            .where(AskedQuestion.id == ask_id)
            .values(send_attempts=AskedQuestion.send_attempts + 1)
        )


class AnswerRepo:
    def __init__(self, session: AsyncSession):
        self.session = session

    async def get(self, answer_id: int) -> Answer | None:
        return await self.session.get(Answer, answer_id)

    async def by_message(self, user_id: int, message_id: int) -> Answer | None:
        stmt = select(Answer).where(Answer.user_id == user_id, Answer.message_id == message_id)
        return await self.session.scalar(stmt.limit(1))

    async def with_status(
        self, status: AnswerStatus, user_id: int | None = None
    ) -> Sequence[Answer]:
        stmt = select(Answer).where(Answer.status == status)
        if user_id is not None:
            stmt = stmt.where(Answer.user_id == user_id)
        return (await self.session.scalars(stmt.order_by(Answer.id))).all()

    async def for_asks(self, ask_ids: Sequence[int]) -> dict[int, Answer]:
        if not ask_ids:
            return {}
        rows = await self.session.scalars(select(Answer).where(Answer.asked_id.in_(ask_ids)))
        return {a.asked_id: a for a in rows}

    async def previous_graded(self, answer: Answer) -> Answer | None:
        """The user's latest graded answer to the same question before `answer`, if any."""
        stmt = (
            select(Answer)
            .where(
                Answer.user_id == answer.user_id,
                Answer.question_id == answer.question_id,
                Answer.id < answer.id,
                Answer.status.in_((AnswerStatus.graded, AnswerStatus.delivered)),
                Answer.score.is_not(None),
            )
            .order_by(Answer.id.desc())
            .limit(1)
        )
        return await self.session.scalar(stmt)

    async def answered_question_ids(self, user_id: int) -> dict[str, int]:
        """question id -> how many times the user answered it."""
        stmt = (
            select(Answer.question_id, func.count())
            .where(Answer.user_id == user_id)
            .group_by(Answer.question_id)
        )
        return {qid: int(n) for qid, n in (await self.session.execute(stmt)).all()}

    async def mark_parts_sent(self, answer_id: int, parts: int) -> None:
        """The first `parts` parts of a graded answer's feedback went out."""
        await self.session.execute(
            update(Answer)
            .where(Answer.id == answer_id, Answer.status == AnswerStatus.graded)
            .values(parts_sent=parts)
        )

    async def users_with_pending_work(self) -> list[int]:
        owed = (AnswerStatus.pending, AnswerStatus.graded)
        answers = select(Answer.user_id).where(Answer.status.in_(owed))
        asks = select(AskedQuestion.user_id).where(  # as in AskedRepo.unsent
            AskedQuestion.status == AskStatus.open,
            AskedQuestion.message_id.is_(None),
            AskedQuestion.interview_id.is_not(None),
        )
        interviews = select(Interview.user_id).where(Interview.status == InterviewStatus.finishing)
        stmt = answers.union(asks, interviews)
        return sorted({int(u) for u in (await self.session.scalars(stmt)).all()})


class Repo:
    """Facade: repo.users, repo.interviews, repo.asked, repo.answers over one session."""

    def __init__(self, session: AsyncSession):
        self.session = session
        self.users = UserRepo(session)
        self.interviews = InterviewRepo(session)
        self.asked = AskedRepo(session)
        self.answers = AnswerRepo(session)
