"""Group mock-interview rounds: start, answers, deadlines, grading, results and leaderboards.

Framework-free: the Telegram side parses updates, calls this service and sends the items of
`outbox()`. All state (deadlines included) lives in the database, so after a restart the ticker
picks up every round where it stopped. Time comes from an injected clock.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import TypeVar

from sqlalchemy import func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.clock import Clock, aware, utcnow
from bot.content.loader import QuestionBank
from bot.content.schema import Level
from bot.scoring.service import ScoringService
from bot.scoring.text import detect_language, is_dont_know, words
from bot.services.question_choice import choose_questions
from bot.services.quiz import QUIZ_SECONDS, build_options, quiz_questions
from bot.services.rounds_items import (
    GroupItem,
    LeaderboardItem,
    PrivateFeedbackItem,
    ResultsItem,
    RoundQuestionItem,
    ScoreLine,
    Standing,
)
from bot.storage.models import (
    GroupChat,
    Round,
    RoundAnswer,
    RoundFeedbackOptIn,
    RoundQuestion,
    User,
)

log = logging.getLogger(__name__)

T = TypeVar("T")

DEFAULT_QUESTIONS = 5
MAX_QUESTIONS = 20
DEFAULT_SECONDS = 120
MIN_SECONDS = 10
MAX_SECONDS = 1800
MIN_ANSWER_WORDS = 3
MAX_ANSWER_CHARS = 4096
# A reply sent just before the deadline reaches the bot a moment later: questions close this long
# after their deadline, and a reply counts if Telegram stamped it before the deadline.
LATE_GRACE = timedelta(seconds=2)
# After a restart, a question whose deadline passed while the bot was down stays open this long,
# so that replies sent before the deadline and waiting in Telegram's queue are read first.
RESTART_GRACE = timedelta(seconds=10)
GRADE_PASSES = 3  # answers that slip in while a question closes get another pass


class RoundUsageError(ValueError):
    """The arguments do not fit `/round [junior|middle|senior] [N] [seconds]`."""


@dataclass(frozen=True)
class RoundArgs:
    level: str | None = None
    count: int | None = None
    seconds: int | None = None
    stop: bool = False


def parse_round_args(args: str | None, min_seconds: int = MIN_SECONDS) -> RoundArgs:
    """`stop`, or `[level] [N] [seconds]`: the first number is N, the second the seconds."""
    tokens = (args or "").lower().split()
    if tokens == ["stop"]:
        return RoundArgs(stop=True)
    level: str | None = None
    numbers: list[int] = []
    for token in tokens:
        if token in Level.__members__ and level is None:
            level = token
        elif token.isdigit() and len(numbers) < 2:
            numbers.append(int(token))
        else:
            raise RoundUsageError(token)
    count = numbers[0] if numbers else None
    seconds = numbers[1] if len(numbers) > 1 else None
    if count is not None and not 1 <= count <= MAX_QUESTIONS:
        raise RoundUsageError(str(count))
    if seconds is not None and not min_seconds <= seconds <= MAX_SECONDS:
        raise RoundUsageError(str(seconds))
    return RoundArgs(level, count, seconds)


class StartOutcome(StrEnum):
    started = "started"
    already_running = "already_running"
    no_questions = "no_questions"


@dataclass(frozen=True)
class StartResult:
    outcome: StartOutcome
    round_id: int | None = None
    level: str | None = None
    count: int = 0
    seconds: int = 0


class AnswerOutcome(StrEnum):
    accepted = "accepted"
    replaced = "replaced"  # a later reply or an edit took the place of the earlier answer
    duplicate = "duplicate"  # the same update delivered again
    not_a_question = "not_a_question"  # a reply to a message that is no round question
    closed = "closed"  # the question is closed or its deadline has passed
    too_short = "too_short"


@dataclass(frozen=True)
class AnswerResult:
    outcome: AnswerOutcome
    complete: bool = False  # everyone who answered before has answered: close early


@dataclass(frozen=True)
class GroupView:
    id: int
    language: str
    level: str
    allow_everyone: bool
    active: bool


def ranks(values: Sequence[float]) -> list[int]:
    """Competition ranking of values sorted best first: 9, 9, 7 -> 1, 1, 3."""
    out: list[int] = []
    for index, value in enumerate(values):
        out.append(out[-1] if index and value == values[index - 1] else index + 1)
    return out


class RoundService:
    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        bank: QuestionBank,
        scoring: ScoringService,
        clock: Clock = utcnow,
        rng: random.Random | None = None,
        min_seconds: int = MIN_SECONDS,
    ):
        self.sessions = sessions
        self.bank = bank
        self.scoring = scoring
        self.clock = clock
        self.rng = rng or random.Random()
        self.min_seconds = min_seconds
        self.started_at = clock()

    def _closes_at(self, deadline: datetime) -> datetime:
        """When a question with this deadline stops taking replies (see LATE_GRACE)."""
        closes = deadline + LATE_GRACE
        if deadline < self.started_at:  # it expired while no process was running
            closes = max(closes, self.started_at + RESTART_GRACE)
        return closes

    # --- groups ------------------------------------------------------------------------------

    async def ensure_group(
        self, chat_id: int, title: str | None = None, language: str = "en"
    ) -> GroupView:
        return await _once_more_on_conflict(lambda: self._ensure_group(chat_id, title, language))

    async def _ensure_group(self, chat_id: int, title: str | None, language: str) -> GroupView:
        async with self.sessions() as session, session.begin():
            group = await session.get(GroupChat, chat_id)
            if group is None:
                group = GroupChat(id=chat_id, title=title, language=language, level="junior")
                session.add(group)
                await session.flush()
            elif not group.active:
                group.active = True
            if title and group.title != title:
                group.title = title
            return _view(group)

    async def group(self, chat_id: int) -> GroupView | None:
        async with self.sessions() as session:
            group = await session.get(GroupChat, chat_id)
            return _view(group) if group else None

    async def update_group(
        self,
        chat_id: int,
        *,
        level: str | None = None,
        language: str | None = None,
        allow_everyone: bool | None = None,
    ) -> GroupView:
        return await _once_more_on_conflict(
            lambda: self._update_group(chat_id, level, language, allow_everyone)
        )

    async def _update_group(
        self,
        chat_id: int,
        level: str | None,
        language: str | None,
        allow_everyone: bool | None,
    ) -> GroupView:
        async with self.sessions() as session, session.begin():
            group = await session.get(GroupChat, chat_id)
            if group is None:
                group = GroupChat(id=chat_id, language=language or "en", level="junior")
                session.add(group)
            if level is not None:
                group.level = Level(level).value
            if language is not None:
                group.language = language
            if allow_everyone is not None:
                group.allow_everyone = allow_everyone
            await session.flush()
            return _view(group)

    async def bot_removed(self, chat_id: int) -> bool:
        """The bot left or was removed: end the round without owing the group any message."""
        async with self.sessions() as session, session.begin():
            group = await session.get(GroupChat, chat_id)
            if group is not None:
                group.active = False
            rounds = (
                await session.scalars(
                    select(Round).where(
                        Round.chat_id == chat_id, Round.status.in_(("active", "finishing"))
                    )
                )
            ).all()
            for round_ in rounds:
                round_.status, round_.finished_at = "stopped", self.clock()
                await session.execute(
                    update(RoundQuestion)
                    .where(RoundQuestion.round_id == round_.id, RoundQuestion.status != "done")
                    .values(status="done", closed_at=self.clock())
                )
            return bool(rounds)

    # --- rounds ------------------------------------------------------------------------------

    async def active_round(self, chat_id: int) -> int | None:
        async with self.sessions() as session:
            round_ = await _active(session, chat_id)
            return round_.id if round_ else None

    async def start(
        self,
        chat_id: int,
        started_by: int | None,
        level: str | None = None,
        count: int | None = None,
        seconds: int | None = None,
        kind: str = "round",
    ) -> StartResult:
        """A round of free-text questions, or (kind="quiz") of quiz polls."""
        return await _once_more_on_conflict(
            lambda: self._start(chat_id, started_by, level, count, seconds, kind)
        )

    async def _start(
        self,
        chat_id: int,
        started_by: int | None,
        level: str | None,
        count: int | None,
        seconds: int | None,
        kind: str = "round",
    ) -> StartResult:
        async with self.sessions() as session, session.begin():
            group = await session.get(GroupChat, chat_id)
            if group is None:
                group = GroupChat(id=chat_id, language="en", level="junior")
                session.add(group)
                await session.flush()
            if await _running(session, chat_id) is not None:
                return StartResult(StartOutcome.already_running)
            chosen = Level(level or group.level).value
            wanted = max(1, min(count or DEFAULT_QUESTIONS, MAX_QUESTIONS))
            quiz = kind == "quiz"
            per_question = seconds or (QUIZ_SECONDS if quiz else DEFAULT_SECONDS)
            asked = await _asked_in_group(session, chat_id)
            pool = quiz_questions(self.bank, chosen) if quiz else self.bank.by_level(chosen)
            questions = choose_questions(pool, asked, wanted, self.rng)
            if not questions:
                return StartResult(StartOutcome.no_questions, level=chosen)
            round_ = Round(
                chat_id=chat_id,
                kind="quiz" if quiz else "round",
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
            return StartResult(
                StartOutcome.started, round_.id, chosen, len(questions), per_question
            )

    def _ask(self, session: AsyncSession, round_: Round) -> None:
        question_id = round_.question_ids[round_.position]
        rq = RoundQuestion(
            round_id=round_.id,
            chat_id=round_.chat_id,
            position=round_.position,
            question_id=question_id,
        )
        question = self.bank.get(question_id)
        if round_.kind == "quiz" and question is not None:
            rq.options, rq.correct_option = build_options(question, self.bank, self.rng)
        session.add(rq)

    async def stop(self, chat_id: int) -> bool:
        """`/round stop`: the current question is the last; its answers still get results."""
        async with self.sessions() as session, session.begin():
            round_ = await _active(session, chat_id)
            if round_ is None:
                return False
            current = await session.scalar(
                select(RoundQuestion).where(
                    RoundQuestion.round_id == round_.id, RoundQuestion.position == round_.position
                )
            )
            if current is not None and current.message_id is None:
                await session.delete(current)  # never posted: nobody could answer it
                round_.question_ids = list(round_.question_ids[: round_.position])
                round_.status, round_.finished_at = "finishing", self.clock()
                return True
            round_.question_ids = list(round_.question_ids[: round_.position + 1])
            if current is not None and current.status == "open":
                current.status, current.closed_at = "grading", self.clock()
            return True

    async def close_current(self, chat_id: int, round_question_id: int | None = None) -> bool:
        """Close the open question now ("Next" pressed, or everyone has answered)."""
        async with self.sessions() as session, session.begin():
            stmt = (
                update(RoundQuestion)
                .where(
                    RoundQuestion.chat_id == chat_id,
                    RoundQuestion.status == "open",
                    RoundQuestion.message_id.is_not(None),
                )
                .values(status="grading", closed_at=self.clock())
            )
            if round_question_id is not None:
                stmt = stmt.where(RoundQuestion.id == round_question_id)
            result = await session.execute(stmt)
            return result.rowcount > 0  # type: ignore[attr-defined]

    async def expire(self, chat_id: int | None = None) -> list[int]:
        """Close questions whose deadline has passed; returns their chats."""
        now = self.clock()
        closed: list[int] = []
        async with self.sessions() as session, session.begin():
            stmt = select(RoundQuestion).where(
                RoundQuestion.status == "open", RoundQuestion.message_id.is_not(None)
            )
            if chat_id is not None:
                stmt = stmt.where(RoundQuestion.chat_id == chat_id)
            for rq in (await session.scalars(stmt)).all():
                deadline = aware(rq.deadline)
                if deadline is not None and self._closes_at(deadline) <= now:
                    result = await session.execute(
                        update(RoundQuestion)
                        .where(RoundQuestion.id == rq.id, RoundQuestion.status == "open")
                        .values(status="grading", closed_at=now)
                    )
                    if result.rowcount:  # type: ignore[attr-defined]
                        closed.append(rq.chat_id)
        return closed

    async def due(self) -> list[int]:
        """Chats with round work to do now: expired deadlines, grading, messages owed."""
        now = self.clock()
        async with self.sessions() as session:
            rows = (
                await session.execute(
                    select(RoundQuestion.chat_id, RoundQuestion.status, RoundQuestion.deadline)
                    .join(Round, Round.id == RoundQuestion.round_id)
                    .where(Round.status == "active", RoundQuestion.status != "done")
                )
            ).all()
            finishing = (
                await session.scalars(select(Round.chat_id).where(Round.status == "finishing"))
            ).all()
            owed = (
                await session.scalars(
                    select(RoundQuestion.chat_id)
                    .join(RoundAnswer, RoundAnswer.round_question_id == RoundQuestion.id)
                    .where(RoundAnswer.private_feedback == "owed")
                )
            ).all()
        chats = set(finishing) | set(owed)
        for chat_id, status, deadline in rows:
            when = aware(deadline)
            if status != "open" or when is None or self._closes_at(when) <= now:
                chats.add(chat_id)
        return sorted(chats)

    # --- answers -----------------------------------------------------------------------------

    async def question_state(self, chat_id: int, message_id: int) -> str | None:
        """ "open", "closed", or None when the message is no round question."""
        async with self.sessions() as session:
            rq = await session.scalar(
                select(RoundQuestion).where(
                    RoundQuestion.chat_id == chat_id, RoundQuestion.message_id == message_id
                )
            )
        if rq is None:
            return None
        deadline = aware(rq.deadline)
        expired = deadline is not None and self.clock() >= deadline
        return "open" if rq.status == "open" and not expired else "closed"

    async def submit(
        self,
        chat_id: int,
        user_id: int,
        name: str,
        reply_to: int | None,
        text: str,
        message_id: int | None = None,
        language: str | None = None,
        edited: bool = False,
        sent_at: datetime | None = None,
    ) -> AnswerResult:
        """Store (or replace) a participant's answer. Grading happens when the question closes.
        `sent_at`: when Telegram received the message (or the edit); lateness is judged by it."""
        return await _once_more_on_conflict(
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
        language: str | None,
        edited: bool,
        sent_at: datetime | None,
    ) -> AnswerResult:
        if reply_to is None:
            return AnswerResult(AnswerOutcome.not_a_question)
        text = text[:MAX_ANSWER_CHARS]
        now = self.clock()
        async with self.sessions() as session, session.begin():
            # FOR UPDATE (PostgreSQL; SQLite has one writer anyway): closing the question waits
            # for this answer to commit, so grading that follows the close sees it.
            rq = await session.scalar(
                select(RoundQuestion)
                .where(RoundQuestion.chat_id == chat_id, RoundQuestion.message_id == reply_to)
                .with_for_update()
            )
            if rq is None or rq.options is not None:  # a quiz poll is answered by voting
                return AnswerResult(AnswerOutcome.not_a_question)
            deadline = aware(rq.deadline)
            sent = min(aware(sent_at) or now, now)  # a clock ahead of ours gains nothing
            if rq.status != "open" or (deadline is not None and sent >= deadline):
                return AnswerResult(AnswerOutcome.closed)
            if not is_dont_know(text) and len(words(text)) < MIN_ANSWER_WORDS:
                return AnswerResult(AnswerOutcome.too_short)
            existing = await session.scalar(
                select(RoundAnswer).where(
                    RoundAnswer.round_question_id == rq.id, RoundAnswer.user_id == user_id
                )
            )
            if existing is not None:
                # Updates run concurrently, so the check is part of the UPDATE itself: a message
                # older than the stored one (or the same one delivered again, or the original of
                # an edit already applied) changes nothing; an edit always replaces.
                stmt = update(RoundAnswer).where(RoundAnswer.id == existing.id)
                if not edited and message_id is not None:
                    stmt = stmt.where(
                        (RoundAnswer.message_id.is_(None)) | (RoundAnswer.message_id < message_id)
                    )
                result = await session.execute(
                    stmt.values(
                        text=text,
                        message_id=message_id,
                        language=language or detect_language(text),
                        name=name[:128] or str(user_id),
                        answered_at=now,
                    )
                )
                if not result.rowcount:  # type: ignore[attr-defined]
                    return AnswerResult(AnswerOutcome.duplicate)
                outcome = AnswerOutcome.replaced
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
                outcome = AnswerOutcome.accepted
            await session.flush()
            complete = await _everyone_answered(session, rq)
        return AnswerResult(outcome, complete)

    async def poll_answer(
        self, poll_id: str, user_id: int, name: str, option_ids: Sequence[int]
    ) -> tuple[int | None, AnswerResult]:
        """A vote in a quiz poll: 10 points when right, 0 when wrong; a retracted vote is dropped.

        Returns the group's chat id (None when the poll is no open quiz question) and the result.
        """
        return await _once_more_on_conflict(
            lambda: self._poll_answer(poll_id, user_id, name, option_ids)
        )

    async def _poll_answer(
        self, poll_id: str, user_id: int, name: str, option_ids: Sequence[int]
    ) -> tuple[int | None, AnswerResult]:
        now = self.clock()
        async with self.sessions() as session, session.begin():
            rq = await session.scalar(select(RoundQuestion).where(RoundQuestion.poll_id == poll_id))
            if rq is None or rq.options is None:
                return None, AnswerResult(AnswerOutcome.not_a_question)
            deadline = aware(rq.deadline)
            if rq.status != "open" or (deadline is not None and now >= deadline):
                return rq.chat_id, AnswerResult(AnswerOutcome.closed)
            existing = await session.scalar(
                select(RoundAnswer).where(
                    RoundAnswer.round_question_id == rq.id, RoundAnswer.user_id == user_id
                )
            )
            if not option_ids:
                if existing is not None:
                    await session.delete(existing)
                return rq.chat_id, AnswerResult(AnswerOutcome.replaced)
            choice = int(option_ids[0])
            right = choice == rq.correct_option
            fields = {
                "text": str(rq.options[choice]) if 0 <= choice < len(rq.options) else "?",
                "name": name[:128] or str(user_id),
                "score": 10.0 if right else 0.0,
                "verdict": "correct" if right else "wrong",
                "status": "graded",  # nothing to grade: the poll knows the right option
                "answered_at": now,
                "graded_at": now,
            }
            if existing is None:
                session.add(
                    RoundAnswer(round_question_id=rq.id, user_id=user_id, language="en", **fields)
                )
                outcome = AnswerOutcome.accepted
            else:
                for key, value in fields.items():
                    setattr(existing, key, value)
                outcome = AnswerOutcome.replaced
            await session.flush()
            return rq.chat_id, AnswerResult(outcome, await _everyone_answered(session, rq))

    async def grade_closed(self, chat_id: int) -> None:
        """Grade the answers of closed questions, then mark the results owed."""
        async with self.sessions() as session:
            closing = (
                await session.scalars(
                    select(RoundQuestion).where(
                        RoundQuestion.chat_id == chat_id, RoundQuestion.status == "grading"
                    )
                )
            ).all()
            work: list[tuple[int, list[int]]] = []
            for rq in closing:
                pending = await session.scalars(
                    select(RoundAnswer.id).where(
                        RoundAnswer.round_question_id == rq.id, RoundAnswer.status == "pending"
                    )
                )
                work.append((rq.id, list(pending)))
        for rq_id, answer_ids in work:
            await self._grade_question(rq_id, answer_ids)

    async def _grade_question(self, rq_id: int, answer_ids: list[int]) -> None:
        """Grade, then mark the question graded only if no answer is left pending: an answer
        that slipped in while the question was closing is graded on the next pass, not lost."""
        for _ in range(GRADE_PASSES):
            # Concurrent calls let the scoring service batch them.
            await asyncio.gather(*(self._grade(answer_id) for answer_id in answer_ids))
            pending = select(RoundAnswer.id).where(
                RoundAnswer.round_question_id == rq_id, RoundAnswer.status == "pending"
            )
            async with self.sessions() as session, session.begin():
                result = await session.execute(
                    update(RoundQuestion)
                    .where(
                        RoundQuestion.id == rq_id,
                        RoundQuestion.status == "grading",
                        ~pending.exists(),
                    )
                    .values(status="graded")
                )
                if result.rowcount:  # type: ignore[attr-defined]
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
            if answer is None or rq is None or answer.status != "pending":
                return
            question = self.bank.get(rq.question_id)
            text, language = answer.text, answer.language
        fields: dict[str, object]
        if question is None:  # the question left the bank: close the answer ungraded
            fields = {"score": 0.0, "verdict": "retired", "covered": [], "pitfalls": []}
        else:
            result = await self.scoring.grade(question, text, language)
            fields = {
                "score": result.score,
                "verdict": result.verdict,
                "covered": result.covered,
                "pitfalls": [p.id for p in result.pitfalls],
            }
        async with self.sessions() as session, session.begin():
            # Only the text that was graded: an answer replaced meanwhile stays pending.
            await session.execute(
                update(RoundAnswer)
                .where(
                    RoundAnswer.id == answer_id,
                    RoundAnswer.status == "pending",
                    RoundAnswer.text == text,
                )
                .values(status="graded", graded_at=self.clock(), **fields)
            )

    # --- what the group is owed --------------------------------------------------------------

    async def outbox(self, chat_id: int) -> list[GroupItem]:
        items: list[GroupItem] = []
        async with self.sessions() as session:
            rounds = (
                await session.scalars(
                    select(Round)
                    .where(Round.chat_id == chat_id, Round.status.in_(("active", "finishing")))
                    .order_by(Round.id)
                )
            ).all()
            for round_ in rounds:
                rqs = (
                    await session.scalars(
                        select(RoundQuestion)
                        .where(RoundQuestion.round_id == round_.id)
                        .order_by(RoundQuestion.position)
                    )
                ).all()
                for rq in rqs:
                    if rq.status == "graded":
                        items.append(await self._results(session, round_, rq))
                    elif rq.status == "open" and rq.message_id is None:
                        question = self.bank.get(rq.question_id)
                        if question is not None:
                            items.append(
                                RoundQuestionItem(
                                    rq.id,
                                    round_.id,
                                    chat_id,
                                    question,
                                    rq.position + 1,
                                    len(round_.question_ids),
                                    round_.seconds,
                                    tuple(rq.options or ()),
                                    rq.correct_option,
                                )
                            )
                if round_.status == "finishing":
                    standings = await _standings(session, chat_id, round_.id)
                    items.append(
                        LeaderboardItem(round_.id, chat_id, len(round_.question_ids), standings)
                    )
            items.extend(await self._private_feedback(session, chat_id))
        return items

    async def _private_feedback(
        self, session: AsyncSession, chat_id: int
    ) -> list[PrivateFeedbackItem]:
        rows = (
            await session.execute(
                select(RoundAnswer, RoundQuestion.question_id, User.language)
                .join(RoundQuestion, RoundQuestion.id == RoundAnswer.round_question_id)
                .outerjoin(User, User.id == RoundAnswer.user_id)
                .where(RoundQuestion.chat_id == chat_id, RoundAnswer.private_feedback == "owed")
                .order_by(RoundAnswer.id)
            )
        ).all()
        items = []
        for answer, question_id, language in rows:
            question = self.bank.get(question_id)
            if question is None:
                continue
            covered = list(answer.covered or [])
            items.append(
                PrivateFeedbackItem(
                    answer_id=answer.id,
                    chat_id=chat_id,
                    user_id=answer.user_id,
                    language=language or "en",
                    question=question,
                    score=answer.score or 0.0,
                    verdict=answer.verdict or "no-answer",
                    covered=covered,
                    missed=[k.id for k in question.key_points if k.id not in covered],
                    pitfalls=list(answer.pitfalls or []),
                )
            )
        return items

    async def set_private_feedback(self, user_id: int, enabled: bool) -> None:
        """Opt in to (or out of) detailed feedback in private on one's group answers."""

        async def write() -> None:
            async with self.sessions() as session, session.begin():
                row = await session.get(RoundFeedbackOptIn, user_id)
                if row is None:
                    session.add(RoundFeedbackOptIn(user_id=user_id, enabled=enabled))
                else:
                    row.enabled, row.updated_at = enabled, self.clock()

        await _once_more_on_conflict(write)

    async def _results(
        self, session: AsyncSession, round_: Round, rq: RoundQuestion
    ) -> ResultsItem:
        question = self.bank.get(rq.question_id)
        answers = (
            await session.scalars(select(RoundAnswer).where(RoundAnswer.round_question_id == rq.id))
        ).all()
        answered = sorted(
            answers, key=lambda a: (-(a.score or 0.0), aware(a.answered_at) or self.clock())
        )
        scores = [round(a.score or 0.0, 1) for a in answered]
        lines = [
            ScoreLine(a.user_id, a.name, score, rank)
            for a, score, rank in zip(answered, scores, ranks(scores), strict=True)
        ]
        seen = {a.user_id for a in answered}
        for user_id, name in (await _participants(session, round_.id, rq.position)).items():
            if user_id not in seen:
                lines.append(ScoreLine(user_id, name, None, None))
        pitfalls: Counter[str] = Counter()
        for answer in answered:
            pitfalls.update(set(answer.pitfalls or []))
        best = list(answered[0].covered or []) if answered else []
        right = None
        if rq.options is not None and rq.correct_option is not None:
            right = rq.options[rq.correct_option]
        return ResultsItem(
            round_question_id=rq.id,
            chat_id=rq.chat_id,
            question=question,
            position=rq.position + 1,
            total=len(round_.question_ids),
            lines=lines,
            best_covered=best,
            pitfalls=dict(pitfalls),
            question_message_id=rq.message_id,
            correct_option=right,
        )

    async def mark_sent(
        self, item: GroupItem, message_id: int | None, poll_id: str | None = None
    ) -> None:
        now = self.clock()
        async with self.sessions() as session, session.begin():
            if isinstance(item, RoundQuestionItem):
                rq = await session.get(RoundQuestion, item.round_question_id)
                if rq is not None and rq.message_id is None:
                    # A placeholder id keeps a refused send from being retried forever.
                    rq.message_id = message_id if message_id is not None else -rq.id
                    rq.poll_id = poll_id
                    rq.deadline = now + timedelta(seconds=item.seconds)
                    if message_id is None:
                        rq.status = "grading"  # nobody can reply to a message never posted
            elif isinstance(item, ResultsItem):
                rq = await session.get(RoundQuestion, item.round_question_id)
                if rq is None or rq.status != "graded":
                    return
                rq.status = "done"
                if rq.options is None:  # quiz votes need no detailed feedback
                    opted = select(RoundFeedbackOptIn.user_id).where(RoundFeedbackOptIn.enabled)
                    await session.execute(
                        update(RoundAnswer)
                        .where(
                            RoundAnswer.round_question_id == rq.id,
                            RoundAnswer.status == "graded",
                            RoundAnswer.user_id.in_(opted),
                        )
                        .values(private_feedback="owed")
                    )
                round_ = await session.get(Round, rq.round_id)
                if round_ is None or round_.status != "active":
                    return
                round_.position = rq.position + 1
                if round_.position < len(round_.question_ids):
                    self._ask(session, round_)
                else:
                    round_.status = "finishing"
            elif isinstance(item, PrivateFeedbackItem):
                answer = await session.get(RoundAnswer, item.answer_id)
                if answer is not None and answer.private_feedback == "owed":
                    answer.private_feedback = "sent" if message_id is not None else "failed"
            else:
                round_ = await session.get(Round, item.round_id)
                if round_ is not None and round_.status == "finishing":
                    round_.status, round_.finished_at = "finished", now

    async def leaderboard(self, chat_id: int) -> list[Standing]:
        """The group's all-time leaderboard over every graded round answer."""
        async with self.sessions() as session:
            return await _standings(session, chat_id, None)


# --- helpers over one session --------------------------------------------------------------------


async def _once_more_on_conflict(action: Callable[[], Awaitable[T]]) -> T:
    """Two first updates from one group can race to create its row; the loser reads it."""
    try:
        return await action()
    except IntegrityError:
        return await action()


def _view(group: GroupChat) -> GroupView:
    return GroupView(group.id, group.language, group.level, group.allow_everyone, group.active)


async def _active(session: AsyncSession, chat_id: int) -> Round | None:
    return await session.scalar(
        select(Round).where(Round.chat_id == chat_id, Round.status == "active").limit(1)
    )


async def _running(session: AsyncSession, chat_id: int) -> Round | None:
    """A round still in progress, its leaderboard included."""
    return await session.scalar(
        select(Round)
        .where(Round.chat_id == chat_id, Round.status.in_(("active", "finishing")))
        .limit(1)
    )


async def _asked_in_group(session: AsyncSession, chat_id: int) -> dict[str, int]:
    rows = await session.execute(
        select(RoundQuestion.question_id, func.count())
        .where(RoundQuestion.chat_id == chat_id)
        .group_by(RoundQuestion.question_id)
    )
    return {qid: int(n) for qid, n in rows.all()}


async def _participants(session: AsyncSession, round_id: int, before: int) -> dict[int, str]:
    """Who answered any question of the round before position `before`: user id -> name."""
    rows = await session.execute(
        select(RoundAnswer.user_id, RoundAnswer.name)
        .join(RoundQuestion, RoundQuestion.id == RoundAnswer.round_question_id)
        .where(RoundQuestion.round_id == round_id, RoundQuestion.position < before)
        .order_by(RoundAnswer.id)
    )
    return {int(user_id): name for user_id, name in rows.all()}


async def _everyone_answered(session: AsyncSession, rq: RoundQuestion) -> bool:
    before = set(await _participants(session, rq.round_id, rq.position))
    if not before:
        return False  # the first question waits for its deadline or "Next"
    now = set(
        (
            await session.scalars(
                select(RoundAnswer.user_id).where(RoundAnswer.round_question_id == rq.id)
            )
        ).all()
    )
    return before <= now


async def _standings(session: AsyncSession, chat_id: int, round_id: int | None) -> list[Standing]:
    stmt = (
        select(
            RoundAnswer.user_id,
            func.sum(RoundAnswer.score),
            func.count(RoundAnswer.id),
            func.max(RoundAnswer.id),
        )
        .join(RoundQuestion, RoundQuestion.id == RoundAnswer.round_question_id)
        .where(RoundQuestion.chat_id == chat_id, RoundAnswer.status == "graded")
        .group_by(RoundAnswer.user_id)
    )
    if round_id is not None:
        stmt = stmt.where(RoundQuestion.round_id == round_id)
    rows = (await session.execute(stmt)).all()
    latest_ids = [int(r[3]) for r in rows]
    names = dict(
        (
            await session.execute(
                select(RoundAnswer.user_id, RoundAnswer.name).where(RoundAnswer.id.in_(latest_ids))
            )
        ).all()
    )
    totals = sorted(
        ((round(float(total or 0.0), 1), int(count), int(user)) for user, total, count, _ in rows),
        key=lambda row: (-row[0], names.get(row[2], "").lower(), row[2]),
    )
    places = ranks([row[0] for row in totals])
    return [
        Standing(user, names.get(user, str(user)), total, count, rank)
        for (total, count, user), rank in zip(totals, places, strict=True)
    ]
