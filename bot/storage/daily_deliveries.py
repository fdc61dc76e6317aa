"""The daily delivery queue's rows: queries over one session. Like the other repositories it
never commits: the daily service owns each transaction (bot/services/daily/).

Every move of a row is a conditional UPDATE whose rowcount says whether this process won it;
the claim's token proves which process owns a row."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, cast

from sqlalchemy import Table, bindparam, delete, func, insert, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession

from bot.storage.models import Answer, AskedQuestion, DailyDelivery, DailySubscription, User
from bot.storage.results import rowcount
from bot.storage.statuses import AskStatus, DeliveryStatus

# Core tables for the hot UPDATEs: the ORM's bulk-update machinery costs milliseconds each.
DELIVERIES = cast(Table, DailyDelivery.__table__)
SUBSCRIPTIONS = cast(Table, DailySubscription.__table__)
ASKS = cast(Table, AskedQuestion.__table__)

INSERT_CHUNK = 500  # rows per INSERT ... RETURNING: within SQLite's bound-parameter limit


@dataclass(frozen=True)
class Claimed:
    """A delivery row as its claim names it: its id and the claim's token."""

    delivery_id: int
    token: str


@dataclass(frozen=True)
class DailyAsk:
    """A daily question put to a user: the ask row a reply is graded against."""

    delivery: Claimed
    user_id: int
    chat_id: int
    question_id: str
    message_id: int | None = None  # None: the send has begun, Telegram has not answered yet


@dataclass(frozen=True)
class DueRow:
    """One day owed to a subscriber: pending, or failed at once with its reason."""

    user_id: int
    chat_id: int
    local_date: str
    due_at: datetime
    status: DeliveryStatus
    reason: str | None


@dataclass(frozen=True)
class DueMove:
    """A subscription's next due time moved from `old` to `new` (only if still `old`)."""

    user_id: int
    old: datetime | None
    new: datetime


@dataclass
class ChoiceHistory:
    """What choosing the users' daily questions reads, per user id."""

    users: dict[int, User] = field(default_factory=dict)
    subscriptions: dict[int, DailySubscription] = field(default_factory=dict)
    best: defaultdict[int, dict[str, float]] = field(default_factory=lambda: defaultdict(dict))
    seen: defaultdict[int, set[str]] = field(default_factory=lambda: defaultdict(set))
    sent_counts: defaultdict[int, dict[str, int]] = field(default_factory=lambda: defaultdict(dict))


class DeliveryRepo:
    def __init__(self, session: AsyncSession):
        self.session = session

    def _postgres(self) -> bool:
        return self.session.get_bind().dialect.name == "postgresql"

    # --- making rows -------------------------------------------------------------------------

    async def due_subscriptions(self, now: datetime, limit: int) -> Sequence[DailySubscription]:
        """Active subscriptions due by `now`, oldest first; on PostgreSQL rows another process
        holds are skipped, so racing schedulers take different ones."""
        stmt = (
            select(DailySubscription)
            .where(DailySubscription.active.is_(True), DailySubscription.next_due_at <= now)
            .order_by(DailySubscription.next_due_at)
            .limit(limit)
        )
        if self._postgres():
            stmt = stmt.with_for_update(skip_locked=True)
        return (await self.session.scalars(stmt)).all()

    async def add_due(self, rows: Sequence[DueRow]) -> int:
        """INSERT ... ON CONFLICT DO NOTHING on (user_id, local_date): one row per user and day.
        Returns the number of rows written."""
        keys = ["user_id", "local_date"]
        stmt: postgresql.Insert | sqlite.Insert
        if self._postgres():
            stmt = postgresql.insert(DELIVERIES).on_conflict_do_nothing(index_elements=keys)
        else:
            stmt = sqlite.insert(DELIVERIES).on_conflict_do_nothing(index_elements=keys)
        values = [row.__dict__ for row in rows]
        written = 0
        for start in range(0, len(values), INSERT_CHUNK):
            chunk = values[start : start + INSERT_CHUNK]
            ids = await self.session.scalars(stmt.returning(DELIVERIES.c.id), chunk)
            written += len(ids.all())
        return written

    async def advance_subscriptions(self, moves: Sequence[DueMove]) -> None:
        # Conditional: a /daily change made meanwhile wins over this advance.
        if not moves:
            return
        await self.session.execute(
            update(SUBSCRIPTIONS)
            .where(
                SUBSCRIPTIONS.c.user_id == bindparam("uid"),
                SUBSCRIPTIONS.c.next_due_at == bindparam("old"),
            )
            .values(next_due_at=bindparam("new")),
            [{"uid": m.user_id, "old": m.old, "new": m.new} for m in moves],
        )

    # --- settling what nobody will finish ----------------------------------------------------

    async def fail_missed(self, due_before: datetime, reason: str) -> int:
        result = await self.session.execute(
            update(DELIVERIES)
            .where(
                DailyDelivery.status == DeliveryStatus.pending, DailyDelivery.due_at < due_before
            )
            .values(status=DeliveryStatus.failed, reason=reason)
        )
        return rowcount(result)

    async def unclaim_stale(self, claimed_before: datetime) -> int:
        """Claimed, never tried, by a process long gone: back to pending."""
        result = await self.session.execute(
            update(DELIVERIES)
            .where(
                DailyDelivery.status == DeliveryStatus.claimed,
                DailyDelivery.claimed_at < claimed_before,
            )
            .values(status=DeliveryStatus.pending, claim_token=None, claimed_at=None)
        )
        return rowcount(result)

    async def settle_stale_sending(
        self, started_before: datetime, arrived: str, interrupted: str
    ) -> tuple[int, int]:
        """Rows left mid-send: sent (reason `arrived`) where their question was answered or
        skipped, which proves the message came; failed (reason `interrupted`) otherwise.
        Returns both counts."""
        stale = (
            DELIVERIES.c.status == DeliveryStatus.sending,
            DELIVERIES.c.claimed_at < started_before,
        )
        taken_up = (
            select(ASKS.c.id)
            .where(ASKS.c.id == DELIVERIES.c.ask_id, ASKS.c.status != AskStatus.open)
            .exists()
        )
        came = await self.session.execute(
            update(DELIVERIES)
            .where(*stale, taken_up)
            .values(status=DeliveryStatus.sent, sent_at=DELIVERIES.c.claimed_at, reason=arrived)
        )
        # The rest: unknown. Their asks stay open and answerable (see AskedRepo).
        unknown = await self.session.execute(
            update(DELIVERIES)
            .where(*stale)
            .values(status=DeliveryStatus.failed, reason=interrupted)
        )
        return rowcount(came), rowcount(unknown)

    async def fail_untried(self, user_id: int, reason: str) -> None:
        """A user's pending and claimed rows: failed with `reason` (they blocked the bot)."""
        await self.session.execute(
            update(DELIVERIES)
            .where(
                DailyDelivery.user_id == user_id,
                DailyDelivery.status.in_((DeliveryStatus.pending, DeliveryStatus.claimed)),
            )
            .values(status=DeliveryStatus.failed, reason=reason)
        )

    # --- claiming ----------------------------------------------------------------------------

    async def pending_ids(self, now: datetime, earliest: datetime, limit: int) -> list[int]:
        """Pending rows due between `earliest` and `now`, oldest first; on PostgreSQL locked
        with SKIP LOCKED, so racing processes pick different rows."""
        stmt = (
            select(DailyDelivery.id)
            .where(
                DailyDelivery.status == DeliveryStatus.pending,
                DailyDelivery.due_at <= now,
                DailyDelivery.due_at >= earliest,
            )
            .order_by(DailyDelivery.due_at, DailyDelivery.id)
            .limit(limit)
        )
        if self._postgres():
            stmt = stmt.with_for_update(skip_locked=True)
        return list((await self.session.scalars(stmt)).all())

    async def claim(self, ids: Sequence[int], token: str, now: datetime) -> int:
        """Marks those of `ids` still pending with the claim's token; returns how many."""
        result = await self.session.execute(
            update(DELIVERIES)
            .where(DailyDelivery.id.in_(ids), DailyDelivery.status == DeliveryStatus.pending)
            .values(status=DeliveryStatus.claimed, claim_token=token, claimed_at=now)
            .execution_options(synchronize_session=False)
        )
        return rowcount(result)

    async def claimed_by(self, token: str) -> Sequence[DailyDelivery]:
        stmt = (
            select(DailyDelivery)
            .where(DailyDelivery.claim_token == token)
            .order_by(DailyDelivery.due_at, DailyDelivery.id)
        )
        return (await self.session.scalars(stmt)).all()

    async def choice_history(self, user_ids: Sequence[int]) -> ChoiceHistory:
        """The users, their subscriptions, best score and asks per question, and how often
        each question came as a daily one (batched: four queries for the whole claim)."""
        history = ChoiceHistory()
        session = self.session
        for user in await session.scalars(select(User).where(User.id.in_(user_ids))):
            history.users[user.id] = user
        for sub in await session.scalars(
            select(DailySubscription).where(DailySubscription.user_id.in_(user_ids))
        ):
            history.subscriptions[sub.user_id] = sub
        for uid, qid, score in await session.execute(
            select(Answer.user_id, Answer.question_id, func.max(Answer.score))
            .where(Answer.user_id.in_(user_ids))
            .group_by(Answer.user_id, Answer.question_id)
        ):
            history.best[uid][qid] = float(score or 0.0)
        for uid, qid in await session.execute(
            select(AskedQuestion.user_id, AskedQuestion.question_id)
            .where(AskedQuestion.user_id.in_(user_ids))
            .distinct()
        ):
            history.seen[uid].add(qid)
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
                history.sent_counts[uid][asked_id] = int(n)
        return history

    async def release(self, claims: Sequence[Claimed]) -> None:
        """Claimed but never tried: back to pending."""
        for claim in claims:
            await self.session.execute(
                update(DELIVERIES)
                .where(
                    DailyDelivery.id == claim.delivery_id,
                    DailyDelivery.claim_token == claim.token,
                    DailyDelivery.status == DeliveryStatus.claimed,
                )
                .values(status=DeliveryStatus.pending, claim_token=None, claimed_at=None)
            )

    # --- sending -----------------------------------------------------------------------------

    async def start_sending(self, claim: Claimed, now: datetime) -> bool:
        """claimed -> sending; False: the row is not this claim's any more."""
        result = await self.session.execute(
            update(DELIVERIES)
            .where(
                DailyDelivery.id == claim.delivery_id,
                DailyDelivery.claim_token == claim.token,
                DailyDelivery.status == DeliveryStatus.claimed,
            )
            .values(status=DeliveryStatus.sending, claimed_at=now)
        )
        return rowcount(result) == 1

    async def add_asks(self, asks: Sequence[DailyAsk], now: datetime) -> None:
        """Open an ask per delivery and link it to its row (checked by the claim's token).
        An ask without a message id has its send begun (send_attempts 1); interview_id None
        keeps it out of the private outbox: it is the scheduler's to send, never resent."""
        if not asks:
            return
        ask_ids = await self.session.scalars(
            insert(ASKS).returning(ASKS.c.id, sort_by_parameter_order=True),
            [
                {
                    "user_id": a.user_id,
                    "chat_id": a.chat_id,
                    "question_id": a.question_id,
                    "interview_id": None,
                    "position": 0,
                    "message_id": a.message_id,
                    "send_attempts": 1 if a.message_id is None else 0,
                    "status": AskStatus.open,
                    "asked_at": now,
                }
                for a in asks
            ],
        )
        await self.session.execute(
            update(DELIVERIES)
            .where(
                DELIVERIES.c.id == bindparam("did"),
                DELIVERIES.c.claim_token == bindparam("token"),
            )
            .values(ask_id=bindparam("aid")),
            [
                {"did": a.delivery.delivery_id, "token": a.delivery.token, "aid": aid}
                for a, aid in zip(asks, ask_ids.all(), strict=True)
            ],
        )

    # --- outcomes ----------------------------------------------------------------------------

    async def mark_sent(self, sent: Sequence[tuple[Claimed, int]], now: datetime) -> None:
        """Rows this claim still owns: sent, with Telegram's message id."""
        await self.session.execute(
            update(DELIVERIES)
            .where(
                DELIVERIES.c.id == bindparam("did"),
                DELIVERIES.c.claim_token == bindparam("token"),
            )
            .values(status=DeliveryStatus.sent, message_id=bindparam("mid"), sent_at=now,
                    reason=None),
            [{"did": c.delivery_id, "token": c.token, "mid": mid} for c, mid in sent],
        )  # fmt: skip

    async def asks_of(self, claims: Sequence[Claimed]) -> dict[int, int | None]:
        """Each row's ask id, by delivery id, for rows the claim still owns; a row that is gone
        (the user confirmed /forget) is absent."""
        tokens = {c.delivery_id: c.token for c in claims}
        rows = await self.session.execute(
            select(DELIVERIES.c.id, DELIVERIES.c.ask_id, DELIVERIES.c.claim_token).where(
                DELIVERIES.c.id.in_(tokens)
            )
        )
        return {did: aid for did, aid, token in rows if tokens[did] == token}

    async def set_message_ids(self, asks: Sequence[tuple[int, int]]) -> None:
        """(ask id, message id): an ask's message id, unless it already has one."""
        if asks:
            await self.session.execute(
                update(ASKS)
                .where(ASKS.c.id == bindparam("aid"), ASKS.c.message_id.is_(None))
                .values(message_id=bindparam("mid")),
                [{"aid": aid, "mid": mid} for aid, mid in asks],
            )

    async def fail(self, claim: Claimed, reason: str) -> None:
        """A row that never reached the user: failed, and its ask deleted unless it was already
        answered (then it stays, and so does the link)."""
        values: dict[str, Any] = {"status": DeliveryStatus.failed, "reason": reason}
        ask_id = await self.session.scalar(
            select(DailyDelivery.ask_id).where(
                DailyDelivery.id == claim.delivery_id, DailyDelivery.claim_token == claim.token
            )
        )
        if ask_id is not None:
            dropped = await self.session.execute(
                delete(ASKS).where(ASKS.c.id == ask_id, ASKS.c.status == AskStatus.open)
            )
            if rowcount(dropped):
                values["ask_id"] = None
        await self.session.execute(
            update(DELIVERIES)
            .where(DailyDelivery.id == claim.delivery_id, DailyDelivery.claim_token == claim.token)
            .values(**values)
        )

    async def status_counts(self) -> dict[str, int]:
        rows = await self.session.execute(
            select(DailyDelivery.status, func.count()).group_by(DailyDelivery.status)
        )
        return {status: int(n) for status, n in rows}
