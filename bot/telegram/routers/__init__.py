"""All routers in one place; the catch-all comes last."""

from __future__ import annotations

from aiogram import Router

from bot.telegram.routers.admin import build_admin_router
from bot.telegram.routers.daily import build_daily_router
from bot.telegram.routers.fallback import build_fallback_router
from bot.telegram.routers.group import build_group_router
from bot.telegram.routers.learning import build_learning_router
from bot.telegram.routers.private import build_private_router


def build_routers() -> list[Router]:
    return [
        build_admin_router(),  # before private, like daily
        build_daily_router(),  # before private: its "unknown command" reply would catch /daily
        build_learning_router(),  # before private, for the same reason
        build_private_router(),
        build_group_router(),
        build_fallback_router(),
    ]
