"""Webhook mode: Telegram posts each update to WEBHOOK_URL.

An update is committed to the inbox before the 200 reply, then handled in the background, as in
polling: a process killed after the reply finds it in the inbox at its next start, and one killed
before the reply gets it again from Telegram, which retries until it has a 2xx. A request without
the secret Telegram was given (`X-Telegram-Bot-Api-Secret-Token`) gets 401 and is not read.
`/healthz` and `/metrics` are served on the same port (bot/ops_server.py).
"""

from __future__ import annotations

import asyncio
import hmac
import logging
from collections.abc import Callable
from urllib.parse import urlsplit

from aiogram import Bot, Dispatcher
from aiogram.types import Update
from aiohttp import web
from pydantic import ValidationError
from redis.asyncio import Redis
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.ops_server import ops_app
from bot.storage.inbox import UpdateInbox
from bot.telegram.receiver import PRUNE_EVERY, InboxReceiver
from bot.telegram.update_queue import FailurePolicy

log = logging.getLogger(__name__)

SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"
MAX_BODY = 1 << 20  # an update is a few KiB; Telegram's largest stay far below this


class WebhookReceiver(InboxReceiver):
    def __init__(
        self,
        dp: Dispatcher,
        bot: Bot,
        inbox: UpdateInbox,
        engine: AsyncEngine,
        url: str,
        secret: str,
        host: str,
        port: int,
        redis: Redis | None = None,
        embeddings_url: str | None = None,
        concurrency: int = 64,
        drain_timeout: float = 20.0,
        failures: FailurePolicy | None = None,
        ready: Callable[[], bool] | None = None,
    ):
        """`ready`: whether this replica can grade now (/readyz)."""
        super().__init__(dp, bot, inbox, concurrency, drain_timeout, failures)
        self.ready = ready
        self.engine = engine
        self.redis = redis
        self.embeddings_url = embeddings_url
        self.url = url
        self.path = urlsplit(url).path or "/"
        self.secret = secret
        self.host, self.port = host, port
        self.bound_port: int | None = None  # the port listened on (tests ask for port 0)

    def app(self) -> web.Application:
        app = ops_app(
            self.engine,
            self.redis,
            self.embeddings_url,
            client_max_size=MAX_BODY,
            ready=self.ready,
        )
        app.router.add_post(self.path, self._update)
        return app

    async def receive(self, allowed_updates: list[str]) -> None:
        runner = web.AppRunner(self.app(), access_log=None)
        await runner.setup()
        try:
            site = web.TCPSite(runner, self.host, self.port)
            await site.start()
            sockets = getattr(site._server, "sockets", None) or []
            self.bound_port = sockets[0].getsockname()[1] if sockets else self.port
            log.info("webhook listening on %s:%s%s", self.host, self.bound_port, self.path)
            # Listening first: Telegram may post as soon as it knows the URL. Every replica
            # sets the same URL; the last call wins and changes nothing.
            await self.bot.set_webhook(
                self.url, secret_token=self.secret, allowed_updates=allowed_updates
            )
            while True:
                await asyncio.sleep(PRUNE_EVERY)
                await self.prune()
        finally:
            await runner.cleanup()  # stops accepting first; the queue drains after this

    async def _update(self, request: web.Request) -> web.Response:
        given = request.headers.get(SECRET_HEADER, "")
        if not hmac.compare_digest(given.encode(), self.secret.encode()):
            return web.Response(status=401, text="wrong or missing secret token")
        try:
            update = Update.model_validate(await request.json(), context={"bot": self.bot})
        except (ValueError, ValidationError):
            return web.Response(status=400, text="not an update")
        try:
            await self.accept([update])
        except SQLAlchemyError:
            log.exception("could not store update %s; Telegram will retry", update.update_id)
            return web.Response(status=503, text="try again")
        return web.Response(status=200)
