"""Prometheus metrics (prometheus-client): defined once here (no imports of the bot's own, so
any layer may count), updated where things happen, served by bot/ops_server.py."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

REGISTRY = CollectorRegistry()
SECONDS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)

UPDATES = Counter(
    "bot_updates_total",
    "Updates handled, by type and outcome (ok; failed: the handler raised on every try)",
    ["type", "outcome"], registry=REGISTRY,
)  # fmt: skip
UPDATE_RETRIES = Counter(
    "bot_update_retries_total", "Handler runs that raised and were tried again, by update type",
    ["type"], registry=REGISTRY,
)  # fmt: skip
FAILED_UPDATES = Gauge(
    "bot_failed_updates_24h", "Updates given up on in the last 24 hours (all replicas)",
    registry=REGISTRY,
)  # fmt: skip
HANDLER_SECONDS = Histogram(
    "bot_handler_seconds", "Time from taking an update to its handler's end",
    ["type"], buckets=SECONDS, registry=REGISTRY,
)  # fmt: skip
GRADING_SECONDS = Histogram(
    "bot_grading_batch_seconds", "Time to grade one micro-batch of answers",
    buckets=SECONDS, registry=REGISTRY,
)  # fmt: skip
GRADING_BATCH = Histogram(
    "bot_grading_batch_size", "Answers graded in one model pass",
    buckets=(1, 2, 4, 8, 16, 32, 64, 128, 256, 1024), registry=REGISTRY,
)  # fmt: skip
GRADING_QUEUE = Gauge("bot_grading_queue_depth", "Answers waiting for the model", registry=REGISTRY)
TELEGRAM_REQUESTS = Counter(
    "bot_telegram_requests_total",
    "Bot API requests (each attempt), by method and outcome (ok, 429, 403, 4xx, 5xx, network)",
    ["method", "outcome"], registry=REGISTRY,
)  # fmt: skip
DAILY_DELIVERIES = Gauge(
    "bot_daily_deliveries", "Daily deliveries in the database, by status", ["status"],
    registry=REGISTRY,
)  # fmt: skip
OPEN_ROUNDS = Gauge("bot_open_rounds", "Group rounds running", registry=REGISTRY)
READY = Gauge(
    "bot_ready", "1 once this replica can grade now (what /readyz says), else 0",
    registry=REGISTRY,
)  # fmt: skip
TAKEOVERS = Counter(
    "bot_update_takeovers_total",
    "Stored updates this replica took over from one that died or stopped", registry=REGISTRY,
)  # fmt: skip
OUTBOX_AGE = Gauge(
    "bot_outbox_oldest_seconds",
    "Age of the oldest graded answer whose feedback has not gone out (all replicas); 0: none",
    registry=REGISTRY,
)  # fmt: skip
