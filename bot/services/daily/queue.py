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
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy.ext.asyncio import AsyncSession

from bot.clock import aware
from bot.content.schema import Language, Level, Question
from bot.services.daily.base import DailyBase
from bot.services.daily.choice import choose_daily_question
from bot.services.reviews import due_for_users
from bot.services.schedule import local_date, next_due, parse_time
from bot.storage.daily_deliveries import Claimed, DailyAsk, DeliveryRepo, DueMove, DueRow
from bot.storage.models import DailyDelivery, DailySubscription
from bot.storage.statuses import DeliveryStatus

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

    @property
    def claim(self) -> Claimed:
        return Claimed(self.delivery_id, self.token)


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
                rows = DeliveryRepo(session)
                subs = await rows.due_subscriptions(now, batch)
                owed: list[DueRow] = []
                moves: list[DueMove] = []
                for sub in subs:
                    due = aware(sub.next_due_at)
                    if due is None:  # not reached: only subscriptions with a due time are read
                        continue
                    days, next_at = self._owed(sub, due, now)
                    owed += days
                    moves.append(DueMove(sub.user_id, sub.next_due_at, next_at))
                if owed:
                    written += await rows.add_due(owed)
                await rows.advance_subscriptions(moves)
            if len(subs) < batch:
                return written

    def _owed(
        self, sub: DailySubscription, due: datetime, now: datetime
    ) -> tuple[list[DueRow], datetime]:
        """The days a subscription due at `due` owes by `now` (the last month at most), and its
        next due time."""
        at = parse_time(sub.local_time)
        weekdays = bool(sub.weekdays_only)
        # Down for over a month: skip to the last month, so that the latest due time (maybe
        # still within the grace window) gets its row, not the oldest.
        floor = now - timedelta(days=MAX_MISSED_ROWS + 1)
        if due < floor:
            due = next_due(floor, at, sub.timezone, weekdays)
        owed: list[DueRow] = []
        while due <= now:  # at most a month and a day of due times
            late = now - due > self.grace
            owed.append(
                DueRow(
                    user_id=sub.user_id,
                    chat_id=sub.chat_id,
                    local_date=local_date(due, sub.timezone),
                    due_at=due,
                    status=DeliveryStatus.failed if late else DeliveryStatus.pending,
                    reason=REASON_MISSED if late else None,
                )
            )
            due = next_due(due, at, sub.timezone, weekdays)
        return owed[-MAX_MISSED_ROWS:], due

    async def expire(self) -> int:
        """Settle rows nobody will finish: past the grace window, or left by a dead process."""
        now = self.now()
        async with self.sessions() as session, session.begin():
            rows = DeliveryRepo(session)
            missed = await rows.fail_missed(now - self.grace, REASON_MISSED)
            await rows.unclaim_stale(now - CLAIMED_STALE)
            arrived, interrupted = await rows.settle_stale_sending(
                now - SENDING_STALE, REASON_ARRIVED, REASON_INTERRUPTED
            )
            return missed + arrived + interrupted

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
                rows = DeliveryRepo(session)
                ids = await rows.pending_ids(now, now - self.grace, limit)
                if not ids:
                    return []
                if not await rows.claim(ids, token, now):
                    continue  # all taken by another process meanwhile
                return await self._prepare(session, await rows.claimed_by(token), token)
        return []

    async def _prepare(
        self, session: AsyncSession, rows: Sequence[DailyDelivery], token: str
    ) -> list[DailyJob]:
        """Pick each claimed delivery's question (batched queries) and store the choice."""
        user_ids = sorted({r.user_id for r in rows})
        history = await DeliveryRepo(session).choice_history(user_ids)
        due = await due_for_users(session, user_ids, self.now())
        jobs: list[DailyJob] = []
        for row in rows:
            user = history.users.get(row.user_id)
            sub = history.subscriptions.get(row.user_id)
            level = (sub.level if sub else None) or (user.level if user else Level.junior)
            counts = history.sent_counts[row.user_id]
            question = choose_daily_question(
                self.bank.by_level(level), counts, history.seen[row.user_id],
                history.best[row.user_id], self.rng, due[row.user_id],
            )  # fmt: skip
            if question is None:
                row.status, row.reason = DeliveryStatus.failed, f"no questions for level {level}"
                continue
            row.question_id = question.id
            due[row.user_id].pop(question.id, None)  # two days in one batch: not twice
            counts[question.id] = counts.get(question.id, 0) + 1
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
        async with self.sessions() as session, session.begin():
            rows = DeliveryRepo(session)
            results = [await rows.start_sending(job.claim, now) for job in jobs]
            # The ask exists before the request goes out, with no message id yet: a kill after
            # Telegram took the message but before record() leaves the question answerable
            # (AskedRepo), not an answer graded against an older one.
            await rows.add_asks(
                [
                    DailyAsk(job.claim, job.user_id, job.chat_id, job.question.id)
                    for job, ok in zip(jobs, results, strict=True)
                    if ok
                ],
                now,
            )
        return results

    async def release(self, jobs: Sequence[DailyJob]) -> None:
        """Claimed but never tried (shutting down): back to pending for the next process."""
        async with self.sessions() as session, session.begin():
            await DeliveryRepo(session).release([job.claim for job in jobs])

    async def status_counts(self) -> dict[str, int]:
        async with self.sessions() as session:
            return await DeliveryRepo(session).status_counts()
