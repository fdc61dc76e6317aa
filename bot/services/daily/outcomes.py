"""Settling the daily queue's sends: a sent delivery's question gets its message id (a reply
finds it), a failed one's question goes (it never reached the user), a blocked user's
subscription stops. Part of DailyService."""

from __future__ import annotations

from collections.abc import Sequence

from bot.services.daily.base import DailyBase
from bot.services.daily.queue import DailyJob, DeliveryOutcome
from bot.storage.daily_deliveries import DailyAsk, DeliveryRepo
from bot.storage.daily_subscriptions import SubscriptionRepo


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
        sent = [(o.job, o.message_id) for o in outcomes if o.message_id is not None]
        async with self.sessions() as session, session.begin():
            rows = DeliveryRepo(session)
            if sent:
                # Settle the deliveries before reading them back: this first write takes
                # SQLite's lock, and on PostgreSQL waits for a /forget that deleted a row to
                # commit, so the rows read next stay until this commits.
                await rows.mark_sent([(job.claim, mid) for job, mid in sent], now)
                asks = await rows.asks_of([job.claim for job, _ in sent])
                await rows.set_message_ids(
                    [
                        (aid, mid)
                        for job, mid in sent
                        if (aid := asks.get(job.delivery_id)) is not None
                    ]
                )
                # A delivery started without an ask (before asks were made at start_sending)
                # gets one now; one whose row is gone was forgotten (/forget).
                await rows.add_asks(
                    [
                        DailyAsk(job.claim, job.user_id, job.chat_id, job.question.id, mid)
                        for job, mid in sent
                        if job.delivery_id in asks and asks[job.delivery_id] is None
                    ],
                    now,
                )
            for outcome in outcomes:
                if outcome.message_id is not None:
                    continue
                reason = (outcome.reason or "error: unknown")[:200]
                # Never sent: never answerable, never owed. An ask already answered stays.
                await rows.fail(outcome.job.claim, reason)
                if outcome.deactivate:
                    await SubscriptionRepo(session).stop(
                        outcome.job.user_id, reason, now, only_active=False
                    )
