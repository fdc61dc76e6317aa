"""Update middleware (who is the user, in which language); request middlewares: retries and
the count of requests by outcome."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from aiogram import BaseMiddleware, Bot
from aiogram.client.session.middlewares.base import (
    BaseRequestMiddleware,
    NextRequestMiddlewareType,
)
from aiogram.exceptions import (
    TelegramAPIError,
    TelegramForbiddenError,
    TelegramNetworkError,
    TelegramRetryAfter,
    TelegramServerError,
)
from aiogram.methods import Response, TelegramMethod
from aiogram.methods.base import TelegramType
from aiogram.types import TelegramObject, User
from sqlalchemy.exc import IntegrityError

from bot.metrics import TELEGRAM_REQUESTS
from bot.services.interviews import InterviewService

log = logging.getLogger(__name__)


class UserContextMiddleware(BaseMiddleware):
    """Registers the sender on first contact and passes `user` and `lang` to handlers."""

    def __init__(self, interviews: InterviewService):
        self.interviews = interviews

    async def __call__(
        self,
        handler: Callable[[TelegramObject, dict[str, Any]], Awaitable[Any]],
        event: TelegramObject,
        data: dict[str, Any],
    ) -> Any:
        sender: User | None = data.get("event_from_user")
        if sender is not None and not sender.is_bot:
            try:
                user = await self.interviews.ensure_user(
                    sender.id, sender.language_code, sender.first_name
                )
            except IntegrityError:
                # Two first updates from one person (common in groups) raced to create the
                # user; the other one won, so reading it now succeeds.
                user = await self.interviews.ensure_user(
                    sender.id, sender.language_code, sender.first_name
                )
            data["user"] = user
            data["lang"] = user.language
        else:
            data["lang"] = "en"
        return await handler(event, data)


class RetryMiddleware(BaseRequestMiddleware):
    """429: wait retry_after and send the same request again; 5xx and network errors: back off."""

    def __init__(
        self,
        max_attempts: int = 5,
        base_delay: float = 0.5,
        max_delay: float = 30.0,
        pause: Callable[[float], Awaitable[None]] | None = None,
    ):
        self.max_attempts = max_attempts
        self.base_delay = base_delay
        self.max_delay = max_delay
        # The send budget's pause: a 429 stops every sender (every replica, with Redis).
        self.pause = pause

    async def __call__(
        self,
        make_request: NextRequestMiddlewareType[TelegramType],
        bot: Bot,
        method: TelegramMethod[TelegramType],
    ) -> Response[TelegramType]:
        attempt = 0
        while True:
            attempt += 1
            try:
                return await make_request(bot, method)
            except TelegramRetryAfter as exc:
                if attempt >= self.max_attempts:
                    raise
                log.warning("429 on %s: waiting %ss", type(method).__name__, exc.retry_after)
                if self.pause is not None:
                    await self.pause(exc.retry_after)
                await asyncio.sleep(exc.retry_after)
            except (TelegramServerError, TelegramNetworkError) as exc:
                # getUpdates has its own backoff in the dispatcher's polling loop.
                if attempt >= self.max_attempts or type(method).__name__ == "GetUpdates":
                    raise
                delay = min(self.max_delay, self.base_delay * 2 ** (attempt - 1))
                log.warning("%s on %s: retry in %.1fs", exc, type(method).__name__, delay)
                await asyncio.sleep(delay)


class RequestMetricsMiddleware(BaseRequestMiddleware):
    """Counts every attempt of every Bot API request by method and outcome (bot/metrics.py)."""

    async def __call__(
        self,
        make_request: NextRequestMiddlewareType[TelegramType],
        bot: Bot,
        method: TelegramMethod[TelegramType],
    ) -> Response[TelegramType]:
        outcome = "ok"
        try:
            return await make_request(bot, method)
        except TelegramRetryAfter:
            outcome = "429"
            raise
        except TelegramForbiddenError:
            outcome = "403"
            raise
        except TelegramServerError:
            outcome = "5xx"
            raise
        except TelegramNetworkError:
            outcome = "network"
            raise
        except TelegramAPIError:
            outcome = "4xx"
            raise
        finally:
            TELEGRAM_REQUESTS.labels(type(method).__name__, outcome).inc()
