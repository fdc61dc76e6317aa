"""Daily questions: subscriptions, the delivery queue (due rows, atomic claims, outcomes) and
streaks. Framework-free; the Telegram side (bot/telegram/daily_scheduler.py) only sends.

    base           shared state (sessions, bank, clock, grace)
    subscriptions  subscribe, unsubscribe, change, view
    queue          materialize, expire, claim, prepare, start_sending, release, record
    streaks        consecutive answered days
    choice         which question a subscriber gets
    service        DailyService, composed of the above, and deactivate

Their queries are bot/storage/daily_deliveries.py and daily_subscriptions.py.
"""

from bot.services.daily.queue import (
    REASON_ARRIVED,
    REASON_BLOCKED,
    REASON_INTERRUPTED,
    REASON_MISSED,
    DailyJob,
    DeliveryOutcome,
)
from bot.services.daily.service import DailyService
from bot.services.daily.streaks import daily_streak_for_ask, streak
from bot.services.daily.subscriptions import SubscriptionView

__all__ = [
    "REASON_ARRIVED",
    "REASON_BLOCKED",
    "REASON_INTERRUPTED",
    "REASON_MISSED",
    "DailyJob",
    "DailyService",
    "DeliveryOutcome",
    "SubscriptionView",
    "daily_streak_for_ask",
    "streak",
]
