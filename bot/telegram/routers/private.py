"""1:1 chat: commands, settings buttons, and answers."""

from __future__ import annotations

from functools import partial

from aiogram import Bot, F, Router
from aiogram.enums import ChatType
from aiogram.filters import Command, CommandObject, CommandStart
from aiogram.types import BufferedInputFile, CallbackQuery, Message, Update
from aiogram.utils.chat_action import ChatActionSender
from aiogram.utils.formatting import Bold, Text, as_list

from bot.content.schema import Language
from bot.i18n import t
from bot.services.commands import UsageError, parse_interview_args
from bot.services.history_service import HistoryService
from bot.services.interviews import MAX_COUNT, AnswerOutcome, InterviewService, UserView
from bot.telegram.callbacks import ForgetCallback, LanguageCallback, LevelCallback, SkipCallback
from bot.telegram.delivery import Delivery
from bot.telegram.keyboards import forget_keyboard, level_keyboard, settings_keyboard
from bot.telegram.learning_rendering import started_text

EXPORT_FILE = "mock-interview-answers.csv"
TYPING_AFTER = 1.0  # seconds of grading before the chat shows "typing…"

REPLIES = {
    AnswerOutcome.no_question: "no_question",
    AnswerOutcome.too_short: "too_short",
    AnswerOutcome.busy: "busy",
    AnswerOutcome.already_answered: "already_answered",
    AnswerOutcome.not_yet_asked: "not_yet_asked",
    AnswerOutcome.grade_later: "grading_failed",
}


async def _say(message: Message, lang: Language, key: str, /, **values: object) -> None:
    await message.answer(Text(t(lang, key, **values)).as_html())


def build_private_router() -> Router:
    router = Router(name="private")
    router.message.filter(F.chat.type == ChatType.PRIVATE)
    router.callback_query.filter(F.message.chat.type == ChatType.PRIVATE)
    router.edited_message.filter(F.chat.type == ChatType.PRIVATE)  # groups have their own

    @router.message(CommandStart())
    async def start(message: Message, user: UserView, lang: Language) -> None:
        name = message.from_user.first_name if message.from_user else ""
        text = as_list(
            Bold(t(lang, "greeting", name=name)),
            t(lang, "about"),
            t(lang, "pick_level"),
            sep="\n\n",
        )
        await message.answer(text.as_html(), reply_markup=level_keyboard(user.level))

    @router.message(Command("help"))
    async def help_(message: Message, lang: Language) -> None:
        await _say(message, lang, "help")

    @router.message(Command("export"))
    async def export(
        message: Message, history: HistoryService, user: UserView, lang: Language
    ) -> None:
        exported = await history.export(user.id, lang)
        if exported is None:
            await _say(message, lang, "export_empty")
            return
        await message.answer_document(
            BufferedInputFile(exported.document, filename=EXPORT_FILE),
            caption=Text(t(lang, "export_caption", count=exported.rows)).as_html(),
        )

    @router.message(Command("forget"))
    async def forget(message: Message, lang: Language) -> None:
        await message.answer(
            Text(t(lang, "forget_confirm")).as_html(), reply_markup=forget_keyboard(lang)
        )

    @router.callback_query(ForgetCallback.filter())
    async def forget_answer(
        query: CallbackQuery,
        callback_data: ForgetCallback,
        history: HistoryService,
        event_update: Update,
        lang: Language,
    ) -> None:
        key = "forget_kept"
        if callback_data.confirm:
            await history.forget(query.from_user.id, event_update.update_id)
            key = "forget_done"
        await query.answer()
        if isinstance(query.message, Message):  # drop the buttons: the question is settled
            await query.message.edit_text(Text(t(lang, key)).as_html())

    @router.message(Command("settings"))
    async def settings(message: Message, user: UserView, lang: Language) -> None:
        await message.answer(
            Text(t(lang, "settings", level=user.level)).as_html(),
            reply_markup=settings_keyboard(lang, user.level),
        )

    @router.callback_query(LevelCallback.filter())
    async def pick_level(
        query: CallbackQuery,
        callback_data: LevelCallback,
        interviews: InterviewService,
        lang: Language,
    ) -> None:
        user = await interviews.update_user(query.from_user.id, level=callback_data.level)
        await query.answer(t(lang, "level_set", level=user.level)[:200])
        if query.message is not None:
            await query.message.answer(Text(t(lang, "level_set", level=user.level)).as_html())

    @router.callback_query(LanguageCallback.filter())
    async def pick_language(
        query: CallbackQuery,
        callback_data: LanguageCallback,
        interviews: InterviewService,
        lang: Language,
    ) -> None:
        user = await interviews.update_user(query.from_user.id, language=callback_data.lang)
        await query.answer(t(user.language, "language_set"))
        if query.message is not None:
            await query.message.answer(
                Text(t(user.language, "settings", level=user.level)).as_html(),
                reply_markup=settings_keyboard(user.language, user.level),
            )

    @router.message(Command("interview"))
    async def interview(
        message: Message,
        command: CommandObject,
        interviews: InterviewService,
        delivery: Delivery,
        user: UserView,
        lang: Language,
    ) -> None:
        try:
            level, count = parse_interview_args(command.args)
        except UsageError:
            await _say(message, lang, "interview_usage", max=MAX_COUNT)
            return
        started = await interviews.start(user.id, message.chat.id, level, count, message.message_id)
        if started is None:
            await _say(message, lang, "no_questions", level=level or user.level)
            return
        if started.replayed:  # handled again after a restart: resume, do not start over
            await delivery.flush(user.id, lang)
            return
        await message.answer(Text(started_text(started, lang)).as_html())
        await delivery.flush(user.id, lang)

    @router.message(Command("skip"))
    async def skip(
        message: Message,
        interviews: InterviewService,
        delivery: Delivery,
        user: UserView,
        lang: Language,
    ) -> None:
        outcome = await interviews.skip(user.id, message.chat.id, message_id=message.message_id)
        await _say(message, lang, "skipped" if outcome is AnswerOutcome.skipped else "no_question")
        await delivery.flush(user.id, lang)

    @router.callback_query(SkipCallback.filter())
    async def skip_button(
        query: CallbackQuery,
        callback_data: SkipCallback,
        interviews: InterviewService,
        delivery: Delivery,
        lang: Language,
    ) -> None:
        chat_id = query.message.chat.id if query.message else query.from_user.id
        outcome = await interviews.skip(query.from_user.id, chat_id, callback_data.ask)
        await query.answer(
            t(lang, "skipped" if outcome is AnswerOutcome.skipped else "outdated_button")
        )
        await delivery.flush(query.from_user.id, lang)

    @router.message(Command("stop"))
    async def stop(
        message: Message,
        interviews: InterviewService,
        delivery: Delivery,
        user: UserView,
        lang: Language,
    ) -> None:
        if not await interviews.stop(user.id):
            await _say(message, lang, "stopped_none")
            return
        await delivery.flush(user.id, lang)

    @router.message(F.text.startswith("/"))
    async def unknown_command(message: Message, lang: Language) -> None:
        await _say(message, lang, "unknown_command")

    @router.message(F.text)
    async def answer(
        message: Message,
        bot: Bot,
        interviews: InterviewService,
        delivery: Delivery,
        user: UserView,
        lang: Language,
    ) -> None:
        reply_to = message.reply_to_message.message_id if message.reply_to_message else None
        try:
            # "typing…" only when grading is slow: each action spends the global send budget.
            async with ChatActionSender.typing(
                bot=bot, chat_id=message.chat.id, initial_sleep=TYPING_AFTER
            ):
                submit = partial(
                    interviews.submit,
                    user.id, message.chat.id, message.text or "", message.message_id, reply_to,
                )  # fmt: skip
                outcome, _ = await submit()
                if outcome is AnswerOutcome.not_yet_asked:
                    # The question's send is in flight, here or on a replica that died after
                    # Telegram took it: once it is settled (recorded, or sent again), the
                    # message ids tell whether the person had seen it.
                    await delivery.flush(user.id, lang)
                    outcome, _ = await submit()
        except Exception:
            # Grading errors come back as AnswerOutcome.grade_later: this one came before the
            # answer was stored, so it is not kept.
            await _say(message, lang, "answer_not_saved")
            raise
        if outcome in REPLIES:
            await _say(message, lang, REPLIES[outcome])
        await delivery.flush(user.id, lang)

    @router.edited_message()
    async def edited(message: Message, lang: Language) -> None:
        await _say(message, lang, "edited")

    @router.message()
    async def not_text(message: Message, lang: Language) -> None:
        await _say(message, lang, "not_text")

    return router
