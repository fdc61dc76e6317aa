"""Settling the daily queue's sends: a sent delivery's question gets its message id (a reply
finds it), a failed one's question goes (it never reached the user), a blocked user's
subscription stops. Part of DailyService."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import bindparam, delete, insert, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from bot.services.daily.base import ASKS, DELIVERIES, SUBSCRIPTIONS, DailyBase
from bot.services.daily.queue import DailyJob, DeliveryOutcome
from bot.storage.models import DailyDelivery, DailySubscription
from bot.storage.results import rowcount
from bot.storage.statuses import AskStatus, DeliveryStatus


class DeliveryOutcomesMixin(DailyBase):
    async def mark_sent(self, job: DailyJob, message_id: int) -> None:
        await self.record([DeliveryOutcome(job, message_id=message_id)])

    async def record(self, outcomes: Sequence[DeliveryOutcome]) -> None:
        """Settle sent or failed deliveries in one transaction. A sent one's ask (made by
        start_sending) gets its message id, so a reply to it finds it; a failed one's ask is
        deleted, as the question never reached the user. The claim's token proves ownership,
        and overrides a stale "interrupted" verdict with the truth.

        An outcome of a user who confirmed /forget meanwhile finds no rows: they are gone with
        the user, asks included."""
        now = self.now()
        sent = [o for o in outcomes if o.message_id is not None]
        async with self.sessions() as session, session.begin():
            if sent:
                # Settle the deliveries before reading them back: this first write takes
                # SQLite's lock, and on PostgreSQL waits for a /forget that deleted a row to
                # commit, so the rows read next stay until this commits.
                await session.execute(
                    update(DELIVERIES)
                    .where(
                        DELIVERIES.c.id == bindparam("did"),
                        DELIVERIES.c.claim_token == bindparam("token"),
                    )
                    .values(
                        status=DeliveryStatus.sent,
                        message_id=bindparam("mid"),
                        sent_at=now,
                        reason=None,
                    ),
                    [
                        {"did": o.job.delivery_id, "token": o.job.token, "mid": o.message_id}
                        for o in sent
                    ],
                )
                tokens = {o.job.delivery_id: o.job.token for o in sent}
                asks = {
                    did: aid
                    for did, aid, token in await session.execute(
                        select(
                            DELIVERIES.c.id, DELIVERIES.c.ask_id, DELIVERIES.c.claim_token
                        ).where(DELIVERIES.c.id.in_(tokens))
                    )
                    if tokens[did] == token
                }
                linked = [o for o in sent if asks.get(o.job.delivery_id) is not None]
                unlinked = [
                    o for o in sent if o.job.delivery_id in asks and asks[o.job.delivery_id] is None
                ]
                if linked:
                    await session.execute(
                        update(ASKS)
                        .where(ASKS.c.id == bindparam("aid"), ASKS.c.message_id.is_(None))
                        .values(message_id=bindparam("mid")),
                        [{"aid": asks[o.job.delivery_id], "mid": o.message_id} for o in linked],
                    )
                # A delivery started without an ask (before asks were made at start_sending)
                # gets one now; one whose row is gone was forgotten (/forget).
                await self._ask_for(session, unlinked, now)
            for outcome in outcomes:
                if outcome.message_id is not None:
                    continue
                reason = (outcome.reason or "error: unknown")[:200]
                ask_id = await session.scalar(
                    select(DailyDelivery.ask_id).where(
                        DailyDelivery.id == outcome.job.delivery_id,
                        DailyDelivery.claim_token == outcome.job.token,
                    )
                )
                values: dict[str, Any] = {"status": DeliveryStatus.failed, "reason": reason}
                if ask_id is not None:
                    # Never sent: never answerable, never owed. One already answered stays.
                    dropped = await session.execute(
                        delete(ASKS).where(ASKS.c.id == ask_id, ASKS.c.status == AskStatus.open)
                    )
                    if rowcount(dropped):
                        values["ask_id"] = None
                await session.execute(
                    update(DELIVERIES)
                    .where(
                        DailyDelivery.id == outcome.job.delivery_id,
                        DailyDelivery.claim_token == outcome.job.token,
                    )
                    .values(**values)
                )
                if outcome.deactivate:
                    await session.execute(
                        update(SUBSCRIPTIONS)
                        .where(DailySubscription.user_id == outcome.job.user_id)
                        .values(active=False, stopped_reason=reason, updated_at=now)
                    )

    async def _ask_for(
        self, session: AsyncSession, sent: Sequence[DeliveryOutcome], now: datetime
    ) -> None:
        if not sent:
            return
        ask_ids = await session.scalars(
            insert(ASKS).returning(ASKS.c.id, sort_by_parameter_order=True),
            [
                {
                    "user_id": o.job.user_id,
                    "chat_id": o.job.chat_id,
                    "question_id": o.job.question.id,
                    "interview_id": None,
                    "position": 0,
                    "message_id": o.message_id,
                    "status": AskStatus.open,
                    "asked_at": now,
                }
                for o in sent
            ],
        )
        await session.execute(
            update(DELIVERIES)
            .where(
                DELIVERIES.c.id == bindparam("did"),
                DELIVERIES.c.claim_token == bindparam("token"),
            )
            .values(ask_id=bindparam("aid")),
            [
                {"did": o.job.delivery_id, "token": o.job.token, "aid": aid}
                for o, aid in zip(sent, ask_ids.all(), strict=True)
            ],
        )
