"""The daily delivery queue: due rows, atomic claims, sending, outcomes.

Every delivery is a row, unique per (user, local date), so no process and no restart can make a
second one for the same day. A row moves pending -> claimed -> sending -> sent | failed, each
step a conditional UPDATE checked by rowcount (on PostgreSQL the claim also skips locked rows):
- claimed rows whose process died before trying are put back to pending (never attempted);
- sending rows whose process died mid-request are failed with the reason: Telegram cannot say
  whether the message arrived, and a duplicate is worse than a recorded miss. Their asks, made
  when sending began, stay answerable (an answer proves the message arrived: then sent).
The clock is injected everywhere, so tests move time instead of waiting for it.
"""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from sqlalchemy import bindparam, func, insert, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession

from bot.clock import aware
from bot.content.schema import Language, Level, Question
from bot.services.daily.base import ASKS, DELIVERIES, SUBSCRIPTIONS, DailyBase
from bot.services.daily.choice import choose_daily_question
from bot.services.reviews import due_for_users
from bot.services.schedule import local_date, next_due, parse_time
from bot.storage.models import Answer, AskedQuestion, DailyDelivery, DailySubscription, User
from bot.storage.results import rowcount
from bot.storage.statuses import AskStatus, DeliveryStatus

CLAIMED_STALE = timedelta(minutes=2)  # claimed, never tried: safe to put back
SENDING_STALE = timedelta(minutes=15)  # tried, outcome unknown: recorded as failed
MAX_MISSED_ROWS = 31  # a bot down for longer records the last month of misses only

REASON_MISSED = "missed: the bot was not running within the grace window"
REASON_INTERRUPTED = "interrupted: the process stopped mid-send; not resent to avoid a duplicate"
REASON_BLOCKED = "blocked: the user blocked the bot"
REASON_ARRIVED = "interrupted mid-send, but the question was answered: it arrived"


@dataclass(frozen=True)
class DailyJob:
    delivery_id: int
    token: str
    user_id: int
    chat_id: int
    question: Question
    language: Language
    level: Level
    local_date: str


@dataclass(frozen=True)
class DeliveryOutcome:
    """How one send ended: a message id (sent), or the reason it failed."""

    job: DailyJob
    message_id: int | None = None
    reason: str | None = None
    deactivate: bool = False  # the user blocked the bot: stop the subscription


class DeliveryQueueMixin(DailyBase):
    async def materialize(self, batch: int = 2000) -> int:
        """Turn due subscriptions into delivery rows; a due time further back than the grace
        window becomes a failed row with its reason. Returns the number of rows written."""
        now = self.now()
        written = 0
        while True:
            async with self.sessions() as session, session.begin():
                stmt = (
                    select(DailySubscription)
                    .where(
                        DailySubscription.active.is_(True),
                        DailySubscription.next_due_at <= now,
                    )
                    .order_by(DailySubscription.next_due_at)
                    .limit(batch)
                )
                if session.get_bind().dialect.name == "postgresql":
                    stmt = stmt.with_for_update(skip_locked=True)
                subs = (await session.scalars(stmt)).all()
                rows: list[dict[str, Any]] = []
                moves: list[dict[str, Any]] = []
                for sub in subs:
                    due = aware(sub.next_due_at)
                    if due is None:  # not reached: only subscriptions with a due time are read
                        continue
                    at = parse_time(sub.local_time)
                    weekdays = bool(sub.weekdays_only)
                    # Down for over a month: skip to the last month, so that the latest due
                    # time (maybe still within the grace window) gets its row, not the oldest.
                    floor = now - timedelta(days=MAX_MISSED_ROWS + 1)
                    if due < floor:
                        due = next_due(floor, at, sub.timezone, weekdays)
                    owed: list[dict[str, Any]] = []
                    while due <= now:  # at most a month and a day of due times
                        late = now - due > self.grace
                        owed.append(
                            {
                                "user_id": sub.user_id,
                                "chat_id": sub.chat_id,
                                "local_date": local_date(due, sub.timezone),
                                "due_at": due,
                                "status": DeliveryStatus.failed if late else DeliveryStatus.pending,
                                "reason": REASON_MISSED if late else None,
                            }
                        )
                        due = next_due(due, at, sub.timezone, weekdays)
                    rows += owed[-MAX_MISSED_ROWS:]
                    moves.append({"uid": sub.user_id, "old": sub.next_due_at, "new": due})
                if rows:
                    written += await _insert_ignoring_duplicates(session, rows)
                if moves:
                    # Conditional: a /daily change made meanwhile wins over this advance.
                    await session.execute(
                        update(SUBSCRIPTIONS)
                        .where(
                            SUBSCRIPTIONS.c.user_id == bindparam("uid"),
                            SUBSCRIPTIONS.c.next_due_at == bindparam("old"),
                        )
                        .values(next_due_at=bindparam("new")),
                        moves,
                    )
            if len(subs) < batch:
                return written

    async def expire(self) -> int:
        """Settle rows nobody will finish: past the grace window, or left by a dead process."""
        now = self.now()
        async with self.sessions() as session, session.begin():
            missed = await session.execute(
                update(DELIVERIES)
                .where(
                    DailyDelivery.status == DeliveryStatus.pending,
                    DailyDelivery.due_at < now - self.grace,
                )
                .values(status=DeliveryStatus.failed, reason=REASON_MISSED)
            )
            await session.execute(
                update(DELIVERIES)
                .where(
                    DailyDelivery.status == DeliveryStatus.claimed,
                    DailyDelivery.claimed_at < now - CLAIMED_STALE,
                )
                .values(status=DeliveryStatus.pending, claim_token=None, claimed_at=None)
            )
            stale = (
                DELIVERIES.c.status == DeliveryStatus.sending,
                DELIVERIES.c.claimed_at < now - SENDING_STALE,
            )
            # Its question was answered (or skipped): the message did arrive.
            taken_up = (
                select(ASKS.c.id)
                .where(ASKS.c.id == DELIVERIES.c.ask_id, ASKS.c.status != AskStatus.open)
                .exists()
            )
            arrived = await session.execute(
                update(DELIVERIES)
                .where(*stale, taken_up)
                .values(status=DeliveryStatus.sent, sent_at=DELIVERIES.c.claimed_at,
                        reason=REASON_ARRIVED)
            )  # fmt: skip
            # The rest: unknown. Their asks stay open and answerable (see AskedRepo).
            interrupted = await session.execute(
                update(DELIVERIES)
                .where(*stale)
                .values(status=DeliveryStatus.failed, reason=REASON_INTERRUPTED)
            )
            counts = (rowcount(missed), rowcount(arrived), rowcount(interrupted))
            return sum(counts)

    async def claim(self, limit: int, attempts: int = 5) -> list[DailyJob]:
        """Atomically take up to `limit` due pending deliveries for this process.

        Two steps in one transaction: pick candidate ids (on PostgreSQL locking them with
        SKIP LOCKED, so racing processes pick different rows), then a conditional UPDATE
        (status still pending) that marks them with this claim's token. A row another process
        got first is simply not updated; if it got all of them, pick again."""
        now = self.now()
        token = uuid.uuid4().hex
        for _ in range(attempts):
            async with self.sessions() as session, session.begin():
                due = (
                    select(DailyDelivery.id)
                    .where(
                        DailyDelivery.status == DeliveryStatus.pending,
                        DailyDelivery.due_at <= now,
                        DailyDelivery.due_at >= now - self.grace,
                    )
                    .order_by(DailyDelivery.due_at, DailyDelivery.id)
                    .limit(limit)
                )
                if session.get_bind().dialect.name == "postgresql":
                    due = due.with_for_update(skip_locked=True)
                ids = list((await session.scalars(due)).all())
                if not ids:
                    return []
                result = await session.execute(
                    update(DELIVERIES)
                    .where(
                        DailyDelivery.id.in_(ids), DailyDelivery.status == DeliveryStatus.pending
                    )
                    .values(status=DeliveryStatus.claimed, claim_token=token, claimed_at=now)
                    .execution_options(synchronize_session=False)
                )
                if not rowcount(result):
                    continue  # all taken by another process meanwhile
                rows = (
                    await session.scalars(
                        select(DailyDelivery)
                        .where(DailyDelivery.claim_token == token)
                        .order_by(DailyDelivery.due_at, DailyDelivery.id)
                    )
                ).all()
                return await self._prepare(session, rows, token)
        return []

    async def _prepare(
        self, session: AsyncSession, rows: Sequence[DailyDelivery], token: str
    ) -> list[DailyJob]:
        """Pick each claimed delivery's question (batched queries) and store the choice."""
        user_ids = sorted({r.user_id for r in rows})
        users = {u.id: u for u in await session.scalars(select(User).where(User.id.in_(user_ids)))}
        subs = {
            s.user_id: s
            for s in await session.scalars(
                select(DailySubscription).where(DailySubscription.user_id.in_(user_ids))
            )
        }
        best: defaultdict[int, dict[str, float]] = defaultdict(dict)
        for uid, qid, score in await session.execute(
            select(Answer.user_id, Answer.question_id, func.max(Answer.score))
            .where(Answer.user_id.in_(user_ids))
            .group_by(Answer.user_id, Answer.question_id)
        ):
            best[uid][qid] = float(score or 0.0)
        seen: defaultdict[int, set[str]] = defaultdict(set)
        for uid, qid in await session.execute(
            select(AskedQuestion.user_id, AskedQuestion.question_id)
            .where(AskedQuestion.user_id.in_(user_ids))
            .distinct()
        ):
            seen[uid].add(qid)
        counts: defaultdict[int, dict[str, int]] = defaultdict(dict)
        for uid, asked_id, n in await session.execute(
            select(DailyDelivery.user_id, DailyDelivery.question_id, func.count())
            .where(
                DailyDelivery.user_id.in_(user_ids),
                DailyDelivery.question_id.is_not(None),
                DailyDelivery.status != DeliveryStatus.failed,
            )
            .group_by(DailyDelivery.user_id, DailyDelivery.question_id)
        ):
            if asked_id is not None:  # filtered above; the column is nullable
                counts[uid][asked_id] = int(n)
        due = await due_for_users(session, user_ids, self.now())
        jobs: list[DailyJob] = []
        for row in rows:
            user, sub = users.get(row.user_id), subs.get(row.user_id)
            level = (sub.level if sub else None) or (user.level if user else Level.junior)
            question = choose_daily_question(
                self.bank.by_level(level), counts[row.user_id], seen[row.user_id],
                best[row.user_id], self.rng, due[row.user_id],
            )  # fmt: skip
            if question is None:
                row.status, row.reason = DeliveryStatus.failed, f"no questions for level {level}"
                continue
            row.question_id = question.id
            due[row.user_id].pop(question.id, None)  # two days in one batch: not twice
            counts[row.user_id][question.id] = counts[row.user_id].get(question.id, 0) + 1
            jobs.append(
                DailyJob(
                    delivery_id=row.id,
                    token=token,
                    user_id=row.user_id,
                    chat_id=row.chat_id,
                    question=question,
                    language=user.language if user else "en",
                    level=level,
                    local_date=row.local_date,
                )
            )
        return jobs

    async def start_sending(self, job: DailyJob) -> bool:
        """claimed -> sending just before the request; False: not ours any more, skip it."""
        return (await self.start_sending_many([job]))[0]

    async def start_sending_many(self, jobs: Sequence[DailyJob]) -> list[bool]:
        """start_sending for several jobs in one transaction (fewer SQLite write locks)."""
        now = self.now()
        results: list[bool] = []
        async with self.sessions() as session, session.begin():
            for job in jobs:
                result = await session.execute(
                    update(DELIVERIES)
                    .where(
                        DailyDelivery.id == job.delivery_id,
                        DailyDelivery.claim_token == job.token,
                        DailyDelivery.status == DeliveryStatus.claimed,
                    )
                    .values(status=DeliveryStatus.sending, claimed_at=now)
                )
                results.append(rowcount(result) == 1)
            started = [job for job, ok in zip(jobs, results, strict=True) if ok]
            if started:
                # The ask exists before the request goes out, with no message id yet: a kill
                # after Telegram took the message but before record() leaves the question
                # answerable (AskedRepo), not an answer graded against an older one.
                # send_attempts=1 marks the send as begun; interview_id None keeps it out of
                # the private outbox (it is this scheduler's to send, never resent).
                ask_ids = await session.scalars(
                    insert(ASKS).returning(ASKS.c.id, sort_by_parameter_order=True),
                    [
                        {
                            "user_id": job.user_id,
                            "chat_id": job.chat_id,
                            "question_id": job.question.id,
                            "interview_id": None,
                            "position": 0,
                            "message_id": None,
                            "send_attempts": 1,
                            "status": AskStatus.open,
                            "asked_at": now,
                        }
                        for job in started
                    ],
                )
                await session.execute(
                    update(DELIVERIES)
                    .where(DELIVERIES.c.id == bindparam("did"))
                    .values(ask_id=bindparam("aid")),
                    [
                        {"did": job.delivery_id, "aid": aid}
                        for job, aid in zip(started, ask_ids.all(), strict=True)
                    ],
                )
        return results

    async def release(self, jobs: Sequence[DailyJob]) -> None:
        """Claimed but never tried (shutting down): back to pending for the next process."""
        async with self.sessions() as session, session.begin():
            for job in jobs:
                await session.execute(
                    update(DELIVERIES)
                    .where(
                        DailyDelivery.id == job.delivery_id,
                        DailyDelivery.claim_token == job.token,
                        DailyDelivery.status == DeliveryStatus.claimed,
                    )
                    .values(status=DeliveryStatus.pending, claim_token=None, claimed_at=None)
                )

    async def status_counts(self) -> dict[str, int]:
        async with self.sessions() as session:
            rows = await session.execute(
                select(DailyDelivery.status, func.count()).group_by(DailyDelivery.status)
            )
            return {status: int(n) for status, n in rows}


async def _insert_ignoring_duplicates(session: AsyncSession, rows: list[dict[str, Any]]) -> int:
    """INSERT ... ON CONFLICT DO NOTHING on (user_id, local_date): one row per user and day."""
    keys = ["user_id", "local_date"]
    stmt: postgresql.Insert | sqlite.Insert
    if session.get_bind().dialect.name == "postgresql":
        stmt = postgresql.insert(DELIVERIES).on_conflict_do_nothing(index_elements=keys)
    else:
        stmt = sqlite.insert(DELIVERIES).on_conflict_do_nothing(index_elements=keys)
    written = 0
    for start in range(0, len(rows), 500):
        ids = await session.scalars(stmt.returning(DELIVERIES.c.id), rows[start : start + 500])
        written += len(ids.all())
    return written
