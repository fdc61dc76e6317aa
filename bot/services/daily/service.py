"""The daily service: one class over subscriptions and the delivery queue."""

from __future__ import annotations

from bot.services.daily.outcomes import DeliveryOutcomesMixin
from bot.services.daily.queue import REASON_BLOCKED, DeliveryQueueMixin
from bot.services.daily.subscriptions import SubscriptionsMixin
from bot.storage.daily_deliveries import DeliveryRepo


class DailyService(SubscriptionsMixin, DeliveryQueueMixin, DeliveryOutcomesMixin):
    """Daily questions: subscriptions, and the queue that delivers them exactly once.

    Built with the sessions and the bank, and optionally a clock, the grace window and a random
    generator (see DailyBase)."""

    async def deactivate(self, user_id: int, reason: str = REASON_BLOCKED) -> bool:
        """The user blocked the bot: stop at once, and fail what was due but not yet tried."""
        async with self.sessions() as session, session.begin():
            await DeliveryRepo(session).fail_untried(user_id, reason)
        return await self.unsubscribe(user_id, reason)
