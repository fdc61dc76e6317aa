"""The learning loop in a private chat: /review (spaced repetition), /progress, /report."""

from __future__ import annotations

import asyncio
import contextlib

from aiogram import Bot, F, Router
from aiogram.enums import ChatType
from aiogram.exceptions import TelegramBadRequest
from aiogram.filters import Command, CommandObject
from aiogram.types import BufferedInputFile, CallbackQuery, Message
from aiogram.utils.formatting import Text

from bot.clock import Clock
from bot.content.schema import Language
from bot.i18n import t
from bot.services.commands import UsageError, parse_review_args
from bot.services.interviews import MAX_COUNT, InterviewService, ReviewNotDue, UserView
from bot.services.progress_chart import render_progress_chart
from bot.services.progress_service import ProgressService
from bot.services.text_clip import clip
from bot.telegram.callbacks import LaterCallback, LearningAction, LearningCallback
from bot.telegram.delivery import Delivery
from bot.telegram.keyboards import learning_keyboard
from bot.telegram.learning_rendering import not_due_text, started_text
from bot.telegram.progress_rendering import render_progress_text
from bot.telegram.report_rendering import render_report

CHART_FILE = "progress.png"
TOAST_QUOTE = 120  # an alert holds at most 200 characters


async def send_progress(
    bot: Bot, chat_id: int, progress: ProgressService, user: UserView, lang: Language
) -> None:
    summary = await progress.progress(user.id, lang)
    if summary.is_empty:
        await bot.send_message(
            chat_id,
            Text(t(lang, "progress.empty")).as_html(),
            reply_markup=learning_keyboard(lang, LearningAction.interview),
        )
        return
    # matplotlib takes tens of milliseconds: drawn in a worker thread, never on the event loop.
    png = await asyncio.to_thread(render_progress_chart, summary, lang)
    await bot.send_photo(
        chat_id,
        BufferedInputFile(png, filename=CHART_FILE),
        caption=Text(render_progress_text(summary, lang)).as_html(),
        reply_markup=learning_keyboard(lang, LearningAction.report),
    )


async def send_report(
    bot: Bot, chat_id: int, progress: ProgressService, user: UserView, lang: Language
) -> None:
    report = await progress.readiness(user.id, lang, user.level)
    markup = None if report.answered else learning_keyboard(lang, LearningAction.interview)
    await bot.send_message(chat_id, render_report(report, lang).as_html(), reply_markup=markup)


async def start_interview(
    bot: Bot,
    chat_id: int,
    interviews: InterviewService,
    delivery: Delivery,
    user: UserView,
    lang: Language,
    message_id: int | None,
) -> bool:
    """The "start an interview" button: /interview at the user's level. False: no questions.

    `message_id` is the button's message, playing the part of /interview's command message: a
    second press of it (a double tap, or the update handled again after a restart) finds the
    interview the first press started and resumes it instead of replacing it."""
    started = await interviews.start(user.id, chat_id, message_id=message_id)
    if started is None:
        await bot.send_message(chat_id, Text(t(lang, "no_questions", level=user.level)).as_html())
        return False
    if not started.replayed:  # the first press announces; a repeat only resumes
        await bot.send_message(chat_id, Text(started_text(started, lang)).as_html())
    await delivery.flush(user.id, lang)
    return True


def build_learning_router() -> Router:
    router = Router(name="learning")
    router.message.filter(F.chat.type == ChatType.PRIVATE)
    router.callback_query.filter(F.message.chat.type == ChatType.PRIVATE)

    @router.message(Command("review"))
    async def review(
        message: Message,
        command: CommandObject,
        interviews: InterviewService,
        delivery: Delivery,
        clock: Clock,
        user: UserView,
        lang: Language,
    ) -> None:
        try:
            count = parse_review_args(command.args)
        except UsageError:
            await message.answer(Text(t(lang, "review.usage", max=MAX_COUNT)).as_html())
            return
        started = await interviews.start_review(user.id, message.chat.id, count, message.message_id)
        if isinstance(started, ReviewNotDue):
            lines = [not_due_text(started, clock(), lang), t(lang, "review.offer_new")]
            await message.answer(
                Text("\n".join(lines)).as_html(),
                reply_markup=learning_keyboard(lang, LearningAction.interview),
            )
            return
        if not started.replayed:  # handled again after a restart: resume, do not announce
            await message.answer(Text(started_text(started, lang)).as_html())
        await delivery.flush(user.id, lang)

    @router.message(Command("progress"))
    async def progress_command(
        message: Message, bot: Bot, progress: ProgressService, user: UserView, lang: Language
    ) -> None:
        await send_progress(bot, message.chat.id, progress, user, lang)

    @router.message(Command("report"))
    async def report_command(
        message: Message, bot: Bot, progress: ProgressService, user: UserView, lang: Language
    ) -> None:
        await send_report(bot, message.chat.id, progress, user, lang)

    @router.callback_query(LaterCallback.filter())
    async def later(
        query: CallbackQuery,
        callback_data: LaterCallback,
        interviews: InterviewService,
        user: UserView,
        lang: Language,
    ) -> None:
        filed = await interviews.review_later(user.id, callback_data.q)
        if filed is None:  # the question left the bank since
            await query.answer(t(lang, "outdated_button"), show_alert=True)
            return
        quoted = clip(filed.question.question.get(lang), TOAST_QUOTE)
        text = t(lang, "later.added", question=quoted) if filed.added else t(lang, "later.already")
        await query.answer(text, show_alert=True)
        if isinstance(query.message, Message):  # the button is spent
            with contextlib.suppress(TelegramBadRequest):
                await query.message.edit_reply_markup(reply_markup=None)

    @router.callback_query(LearningCallback.filter())
    async def button(
        query: CallbackQuery,
        callback_data: LearningCallback,
        bot: Bot,
        interviews: InterviewService,
        progress: ProgressService,
        delivery: Delivery,
        user: UserView,
        lang: Language,
    ) -> None:
        await query.answer()
        chat_id = query.message.chat.id if query.message else query.from_user.id
        if callback_data.action is LearningAction.progress:
            await send_progress(bot, chat_id, progress, user, lang)
        elif callback_data.action is LearningAction.report:
            await send_report(bot, chat_id, progress, user, lang)
        else:
            message_id = query.message.message_id if query.message else None
            started = await start_interview(
                bot, chat_id, interviews, delivery, user, lang, message_id
            )
            if started and isinstance(query.message, Message):  # not inaccessible (too old)
                # The button is spent: pressed again it would only find the same interview.
                with contextlib.suppress(TelegramBadRequest):  # e.g. already removed
                    await query.message.edit_reply_markup(reply_markup=None)

    return router
