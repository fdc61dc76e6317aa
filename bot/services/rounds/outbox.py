"""What a group is owed, read from the database (questions to post, results, the leaderboard,
private feedback), marking each item sent, and the group's all-time leaderboard."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from datetime import timedelta

from sqlalchemy.ext.asyncio import AsyncSession

from bot.clock import aware
from bot.content.schema import Question
from bot.services.outbox import FeedbackItem
from bot.services.rounds.base import RoundsBase, once_more_on_conflict
from bot.services.rounds.items import (
    GroupItem,
    LeaderboardItem,
    PrivateFeedbackItem,
    ResultsItem,
    RoundQuestionItem,
    ScoreLine,
    Standing,
)
from bot.services.rounds.states import (
    after_results,
    move_question,
    move_round,
)
from bot.storage import rounds_queries as queries
from bot.storage.models import Round, RoundAnswer, RoundFeedbackOptIn, RoundQuestion
from bot.storage.round_moves import owe_private_feedback, record_posted
from bot.storage.statuses import (
    PrivateFeedback,
    RoundQuestionStatus,
    RoundStatus,
)
from bot.verdicts import Verdict


def ranks(values: Sequence[float]) -> list[int]:
    """Competition ranking of values sorted best first: 9, 9, 7 -> 1, 1, 3."""
    out: list[int] = []
    for index, value in enumerate(values):
        out.append(out[-1] if index and value == values[index - 1] else index + 1)
    return out


async def standings(session: AsyncSession, chat_id: int, round_id: int | None) -> list[Standing]:
    """Totals of graded answers in the group (or one round), best first; ties share a place."""
    totals = sorted(
        await queries.graded_totals(session, chat_id, round_id),
        key=lambda row: (-round(row.total, 1), (row.name or "").lower(), row.user_id),
    )
    places = ranks([round(row.total, 1) for row in totals])
    return [
        Standing(
            row.user_id,
            row.name if row.name is not None else str(row.user_id),
            round(row.total, 1),
            row.answers,
            rank,
        )
        for row, rank in zip(totals, places, strict=True)
    ]


class OutboxMixin(RoundsBase):
    def question(self, question_id: str) -> Question | None:
        """A bank question, for what the items name by id only: a quiz question's options, the
        questions a results message mentions (None: no longer in the bank)."""
        return self.bank.get(question_id)

    async def outbox(self, chat_id: int) -> list[GroupItem]:
        items: list[GroupItem] = []
        async with self.sessions() as session:
            for round_ in await queries.running_rounds(session, chat_id):
                for rq in await queries.round_questions(session, round_.id):
                    if rq.status == RoundQuestionStatus.graded:
                        items.append(await self._results(session, round_, rq))
                    elif rq.status == RoundQuestionStatus.open and rq.message_id is None:
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
                if round_.status == RoundStatus.finishing:
                    board = await standings(session, chat_id, round_.id)
                    items.append(
                        LeaderboardItem(round_.id, chat_id, len(round_.question_ids), board)
                    )
            items.extend(await self._private_feedback(session, chat_id))
        return items

    async def _private_feedback(
        self, session: AsyncSession, chat_id: int
    ) -> list[PrivateFeedbackItem]:
        items = []
        for answer, question_id, language in await queries.owed_private_feedback(session, chat_id):
            question = self.bank.get(question_id)
            if question is None:
                continue
            covered = list(answer.covered or [])
            items.append(
                PrivateFeedbackItem(
                    FeedbackItem(
                        answer_id=answer.id,
                        chat_id=answer.user_id,  # the participant's private chat
                        reply_to=None,
                        question=question,
                        score=answer.score or 0.0,
                        verdict=answer.verdict or Verdict.no_answer,
                        covered=covered,
                        missed=[k.id for k in question.key_points if k.id not in covered],
                        pitfalls=list(answer.pitfalls or []),
                        evidence={},
                    ),
                    chat_id=chat_id,
                    language=language or "en",
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

        await once_more_on_conflict(write)

    async def _results(
        self, session: AsyncSession, round_: Round, rq: RoundQuestion
    ) -> ResultsItem:
        question = self.bank.get(rq.question_id)
        answers = await queries.answers_to(session, rq.id)
        answered = sorted(
            answers, key=lambda a: (-(a.score or 0.0), aware(a.answered_at) or self.clock())
        )
        scores = [round(a.score or 0.0, 1) for a in answered]
        lines = [
            ScoreLine(a.user_id, a.name, score, rank)
            for a, score, rank in zip(answered, scores, ranks(scores), strict=True)
        ]
        seen = {a.user_id for a in answered}
        for user_id, name in (await queries.participants(session, round_.id, rq.position)).items():
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
                deadline = now + timedelta(seconds=item.seconds)
                await record_posted(session, item.round_question_id, message_id, poll_id, deadline)
            elif isinstance(item, ResultsItem):
                rq = await session.get(RoundQuestion, item.round_question_id)
                if rq is None or rq.status != RoundQuestionStatus.graded:
                    return
                move_question(rq, RoundQuestionStatus.done, now)
                if rq.options is None:  # quiz votes need no detailed feedback
                    await owe_private_feedback(session, rq.id)
                # Sent: what follows is the round's to decide.
                round_ = await session.get(Round, rq.round_id)
                if round_ is not None and after_results(round_, rq, now):
                    self._ask(session, round_)
            elif isinstance(item, PrivateFeedbackItem):
                answer = await session.get(RoundAnswer, item.answer_id)
                if answer is not None and answer.private_feedback == PrivateFeedback.owed:
                    answer.private_feedback = (
                        PrivateFeedback.sent if message_id is not None else PrivateFeedback.failed
                    )
            else:
                round_ = await session.get(Round, item.round_id)
                if round_ is not None and round_.status == RoundStatus.finishing:
                    move_round(round_, RoundStatus.finished, now)

    async def leaderboard(self, chat_id: int) -> list[Standing]:
        """The group's all-time leaderboard over every graded round answer."""
        async with self.sessions() as session:
            return await standings(session, chat_id, None)
