"""/daily: subscribe at a local time, show and change the subscription; a private chat whose
user blocked the bot (my_chat_member: kicked) stops its daily questions at once."""

from __future__ import annotations

from aiogram import F, Router
from aiogram.enums import ChatMemberStatus, ChatType
from aiogram.exceptions import TelegramBadRequest
from aiogram.filters import Command, CommandObject
from aiogram.types import CallbackQuery, ChatMemberUpdated, InlineKeyboardMarkup, Message
from aiogram.utils.formatting import Text

from bot.content.schema import Language
from bot.i18n import t
from bot.services.daily import DailyService, SubscriptionView
from bot.services.interviews import UserView
from bot.services.schedule import ScheduleError, format_local, parse_time, parse_timezone
from bot.telegram.callbacks import DailyAction, DailyCallback
from bot.telegram.keyboards import daily_keyboard, daily_level_keyboard


def _next_due(view: SubscriptionView, lang: Language) -> str:
    assert view.next_due_at is not None
    return format_local(view.next_due_at, view.timezone, t(lang, "weekdays").split())


def _view_text(view: SubscriptionView | None, lang: Language) -> Text:
    if view is None:
        return Text(t(lang, "daily_none"))
    if not view.active:
        return Text(t(lang, "daily_paused", time=view.local_time, tz=view.timezone))
    weekdays = t(lang, "daily_weekdays_suffix") if view.weekdays_only else ""
    lines = [
        t(lang, "daily_status", time=view.local_time, tz=view.timezone, level=view.level,
          weekdays=weekdays),
    ]  # fmt: skip
    if view.next_due_at is not None:
        when = _next_due(view, lang)
        lines.append(t(lang, "daily_next", when=when))
    lines.append(t(lang, "daily_streak", streak=view.streak))
    return Text("\n".join(lines))


def _keyboard(view: SubscriptionView | None, lang: Language) -> InlineKeyboardMarkup | None:
    if view is None or not view.active:
        return None
    return daily_keyboard(lang, view.weekdays_only)


async def _show(message: Message, view: SubscriptionView | None, lang: Language) -> None:
    await message.answer(_view_text(view, lang).as_html(), reply_markup=_keyboard(view, lang))


def build_daily_router() -> Router:
    router = Router(name="daily")
    router.message.filter(F.chat.type == ChatType.PRIVATE)
    router.callback_query.filter(F.message.chat.type == ChatType.PRIVATE)
    router.my_chat_member.filter(F.chat.type == ChatType.PRIVATE)

    @router.message(Command("daily"))
    async def daily_command(
        message: Message,
        command: CommandObject,
        daily: DailyService,
        user: UserView,
        lang: Language,
    ) -> None:
        args = (command.args or "").split()
        if not args:
            await _show(message, await daily.view(user.id), lang)
            return
        if args[0].lower() in ("off", "stop", "выкл"):
            done = await daily.unsubscribe(user.id)
            await message.answer(Text(t(lang, "daily_off" if done else "daily_off_none")).as_html())
            return
        try:
            at = parse_time(args[0])
        except ScheduleError:
            await message.answer(
                Text(t(lang, "daily_bad_time", value=args[0][:40]), "\n", t(lang, "daily_usage"))
                .as_html()
            )  # fmt: skip
            return
        tz_text = " ".join(args[1:])
        tz: str | None = None
        if tz_text:
            try:
                tz = parse_timezone(tz_text)
            except ScheduleError:
                await message.answer(Text(t(lang, "daily_bad_tz", value=tz_text[:60])).as_html())
                return
        view = await daily.subscribe(user.id, message.chat.id, at, tz)
        lines = [t(lang, "daily_subscribed", time=view.local_time, tz=view.timezone)]
        if view.next_due_at is not None:
            lines.append(t(lang, "daily_next", when=_next_due(view, lang)))
        if not view.timezone_given:
            lines.append(t(lang, "daily_tz_hint", time=view.local_time))
        await message.answer(Text("\n".join(lines)).as_html(), reply_markup=_keyboard(view, lang))

    @router.callback_query(DailyCallback.filter())
    async def daily_button(
        query: CallbackQuery, callback_data: DailyCallback, daily: DailyService, lang: Language
    ) -> None:
        user_id = query.from_user.id
        action, level = callback_data.action, callback_data.value
        view = await daily.view(user_id)
        needs_level = action is DailyAction.set_level
        if view is None or not view.active or needs_level != (level is not None):
            await query.answer(t(lang, "outdated_button"))
            return
        if action is DailyAction.time:
            await query.answer()
            if query.message is not None:
                await query.message.answer(Text(t(lang, "daily_time_hint")).as_html())
            return
        if action is DailyAction.level:
            await query.answer()
            if query.message is not None:
                await query.message.answer(
                    Text(t(lang, "daily_pick_level")).as_html(),
                    reply_markup=daily_level_keyboard(view.level),
                )
            return
        if level is not None:  # set_level
            view = await daily.update(user_id, level=level)
        elif action is DailyAction.weekdays:
            view = await daily.update(user_id, weekdays_only=not view.weekdays_only)
        else:
            await daily.unsubscribe(user_id)
            view = await daily.view(user_id)
        await query.answer()
        if isinstance(query.message, Message):  # not an inaccessible (too old) message
            try:
                await query.message.edit_text(
                    _view_text(view, lang).as_html(), reply_markup=_keyboard(view, lang)
                )
            except TelegramBadRequest:  # e.g. the level picker message: send a fresh view
                await query.message.answer(
                    _view_text(view, lang).as_html(), reply_markup=_keyboard(view, lang)
                )

    @router.my_chat_member()
    async def blocked(event: ChatMemberUpdated, daily: DailyService) -> None:
        if event.new_chat_member.status == ChatMemberStatus.KICKED:
            await daily.deactivate(event.from_user.id)

    return router
