"""User-visible texts in Russian and English. Plain text: renderers escape and format them."""

from __future__ import annotations

import string

from bot.i18n_daily import DAILY_TEXTS
from bot.i18n_feedback import FEEDBACK_TEXTS
from bot.i18n_progress import PROGRESS_TEXTS
from bot.i18n_report import REPORT_TEXTS
from bot.i18n_review import REVIEW_TEXTS
from bot.i18n_rounds import ROUND_TEXTS

LANGS = ("ru", "en")

TEXTS: dict[str, dict[str, str]] = {
    "greeting": {
        "ru": "Привет, {name}! Я провожу тренировочные технические собеседования по ML.",
        "en": "Hi, {name}! I run mock technical interviews for ML engineers.",
    },
    "about": {
        "ru": (
            "Я задаю вопрос вашего уровня, вы отвечаете своими словами, а я за секунду оцениваю "
            "ответ: какие ключевые пункты раскрыты, какие пропущены, в какую типичную ошибку вы "
            "попали, и показываю эталонный ответ. Сейчас в банке вопросы по PyTorch."
        ),
        "en": (
            "I ask a question at your level, you answer in your own words, and within a second I "
            "grade it: which key points you covered, which you missed, which common misconception "
            "you fell into, plus a model answer to compare with. The bank covers PyTorch for now."
        ),
    },
    "pick_level": {
        "ru": "Выберите уровень, затем отправьте /interview.",
        "en": "Pick your level, then send /interview.",
    },
    "help": {
        "ru": (
            "/interview [junior|middle|senior] [N] — собеседование из N вопросов (по умолчанию 5)\n"
            "/skip — пропустить вопрос\n"
            "/stop — закончить собеседование\n"
            "/daily ЧЧ:ММ [часовой пояс] — вопрос каждый день; /daily — настройки\n"
            "/review [N] — повторить вопросы, срок которых подошёл\n"
            "/progress — график ваших оценок и итоги по темам\n"
            "/report — готовность по темам и что тренировать дальше\n"
            "/settings — уровень и язык\n"
            "/export — все ваши ответы файлом CSV\n"
            "/forget — удалить все ваши данные\n"
            "/help — эта справка\n\n"
            "Отвечайте обычным сообщением или ответом (reply) на сообщение с вопросом. Вопросы, "
            "на которые вы ответили слабо или которые пропустили, вернутся раньше остальных."
        ),
        "en": (
            "/interview [junior|middle|senior] [N] — an interview of N questions (default 5)\n"
            "/skip — skip the question\n"
            "/stop — end the interview\n"
            "/daily HH:MM [timezone] — a question every day; /daily — its settings\n"
            "/review [N] — review the questions that are due\n"
            "/progress — a chart of your scores and totals by topic\n"
            "/report — readiness by topic and what to practise next\n"
            "/settings — level and language\n"
            "/export — all your answers as a CSV file\n"
            "/forget — delete all your data\n"
            "/help — this help\n\n"
            "Answer with a plain message or a reply to the question message. Questions you "
            "answered poorly or skipped come back sooner than the others."
        ),
    },
    "forget_confirm": {
        "ru": "Удалить всё, что бот о вас хранит: ответы и оценки, собеседования, вопрос дня, ответы в групповых раундах, уровень и язык? Это нельзя отменить. Сначала можно сохранить ответы командой /export.",
        "en": "Delete everything the bot keeps about you: answers and grades, interviews, the daily question, group-round answers, level and language? This cannot be undone. You can save your answers with /export first.",
    },
    "forget_done": {
        "ru": "Готово: всё, что бот о вас хранил, удалено. /start — начать заново.",
        "en": "Done: everything the bot kept about you is deleted. /start to begin again.",
    },
    "forget_kept": {
        "ru": "Ничего не удалено.",
        "en": "Nothing was deleted.",
    },
    "export_empty": {
        "ru": "Ответов пока нет — выгружать нечего. Начните с /interview.",
        "en": "No answers yet, so there is nothing to export. Start with /interview.",
    },
    "export_caption": {
        "ru": "Ваши ответы: {count:ответ|ответа|ответов} (дата UTC, где: личный чат или группа, вопрос, уровень, оценка, вердикт, текст).",
        "en": "Your answers: {count:answer|answers} (UTC date, where: private chat or group, question, level, score, verdict, text).",
    },
    "settings": {
        "ru": "Настройки. Уровень: {level}. Язык: русский.",
        "en": "Settings. Level: {level}. Language: English.",
    },
    "level_set": {
        "ru": "Уровень: {level}. Отправьте /interview, чтобы начать.",
        "en": "Level: {level}. Send /interview to begin.",
    },
    "language_set": {"ru": "Язык: русский.", "en": "Language: English."},
    "interview_started": {
        "ru": "Начинаем собеседование: {count:вопрос|вопроса|вопросов}, уровень {level}. /skip — пропустить, /stop — закончить.",
        "en": "Starting the interview: {count:question|questions}, level {level}. /skip to skip, /stop to end.",
    },
    "interview_replaced": {
        "ru": "Предыдущее собеседование закрыто.",
        "en": "Your previous interview was closed.",
    },
    "no_questions": {
        "ru": "Для уровня {level} пока нет вопросов.",
        "en": "There are no questions for level {level} yet.",
    },
    "interview_usage": {
        "ru": "Формат: /interview [junior|middle|senior] [N], где N от 1 до {max}. Например: /interview middle 3",
        "en": "Usage: /interview [junior|middle|senior] [N], N from 1 to {max}. Example: /interview middle 3",
    },
    "skipped": {"ru": "Вопрос пропущен.", "en": "Question skipped."},
    "stopped_none": {
        "ru": "Сейчас нет активного собеседования. Начать: /interview",
        "en": "No interview is running. Start one: /interview",
    },
    "no_question": {
        "ru": "Сейчас нет открытого вопроса. Начните собеседование: /interview",
        "en": "There is no open question right now. Start an interview: /interview",
    },
    "too_short": {
        "ru": "Слишком коротко для оценки — ответьте хотя бы парой предложений. Вопрос всё ещё открыт; /skip — пропустить.",
        "en": "Too short to grade — answer in a sentence or two. The question is still open; /skip to skip it.",
    },
    "busy": {
        "ru": "Уже оцениваю ваш предыдущий ответ на этот вопрос — это сообщение не засчитано.",
        "en": "I'm already grading your previous answer to this question, so this message was not counted.",
    },
    "not_yet_asked": {
        "ru": "Этот ответ пришёл раньше следующего вопроса, поэтому не засчитан: предыдущий ответ уже принят. Дождитесь вопроса и ответьте на него.",
        "en": "This message was written before the next question arrived, so it was not counted: your previous answer was already taken. Wait for the question and answer it.",
    },
    "already_answered": {
        "ru": "На этот вопрос вы уже ответили. Ответ засчитывается один раз.",
        "en": "You have already answered this question. Each answer is graded once.",
    },
    "not_text": {
        "ru": "Я оцениваю только текстовые ответы. Напишите ответ сообщением.",
        "en": "I can only grade text answers. Please type your answer as a message.",
    },
    "edited": {
        "ru": "Правки сообщений не переоцениваются. Если хотите дополнить ответ, отправьте новое сообщение на следующий вопрос.",
        "en": "Edits are not re-graded. To add something, send a new message for the next question.",
    },
    "unknown_command": {
        "ru": "Не знаю такой команды. Список команд: /help",
        "en": "I don't know that command. Commands: /help",
    },
    "stats": {
        "ru": (
            "📊 Пользователи: {users} (новых за 7 дней: {new_users_7d}), собеседований: "
            "{interviews}\n"
            "Ответов оценено: {answers_graded} (за сутки: {answers_graded_24h}), "
            "ждут оценки: {answers_pending}\n"
            "Средняя оценка за 7 дней: {average}\n"
            "Вопрос дня: {daily_subscribers:подписчик|подписчика|подписчиков}, отправлено за сутки "
            "{daily_sent_24h}, не доставлено {daily_failed_24h}\n"
            "Группы: {groups}, раундов сыграно {rounds_finished}, идёт сейчас {rounds_active}\n"
            "Сообщений не обработано за сутки (ошибка): {updates_failed_24h}"
        ),
        "en": (
            "📊 Users: {users} ({new_users_7d} new in 7 days), interviews: {interviews}\n"
            "Answers graded: {answers_graded} ({answers_graded_24h} in 24 h), "
            "waiting: {answers_pending}\n"
            "Average score, 7 days: {average}\n"
            "Daily question: {daily_subscribers:subscriber|subscribers}, {daily_sent_24h} sent in 24 h, "
            "{daily_failed_24h} failed\n"
            "Groups: {groups}, rounds played {rounds_finished}, running now {rounds_active}\n"
            "Messages that failed in 24 h (handler error): {updates_failed_24h}"
        ),
    },
    "stats_hardest": {
        "ru": "Самые трудные вопросы за 30 дней:",
        "en": "Hardest questions, last 30 days:",
    },
    "stats_hardest_line": {
        "ru": "• {id}: {average}/10 ({answers:ответ|ответа|ответов})",
        "en": "• {id}: {average}/10 ({answers:answer|answers})",
    },
    "outdated_button": {"ru": "Эта кнопка устарела.", "en": "This button is out of date."},
    "update_failed": {
        "ru": "Что-то пошло не так, и я не смог обработать это сообщение. Пожалуйста, попробуйте ещё раз.",
        "en": "Something went wrong and I could not handle that message. Please try again.",
    },
    "grading_failed": {
        "ru": "Не удалось оценить ответ сейчас. Он сохранён: оценка придёт сама, как только получится.",
        "en": "Grading failed for now. Your answer is saved: the grade will come by itself as soon as it can.",
    },
    "answer_not_saved": {
        "ru": "Не получилось принять ответ. Пришлите его, пожалуйста, ещё раз.",
        "en": "Couldn't take your answer just now. Please send it again.",
    },
    # --- group rounds (issue 3) ---
    "cmd.daily": {"ru": "Вопрос дня по расписанию", "en": "A question every day"},
    "cmd.start": {"ru": "Начало и выбор уровня", "en": "Start and pick a level"},
    "cmd.interview": {"ru": "Начать собеседование", "en": "Start an interview"},
    "cmd.skip": {"ru": "Пропустить вопрос", "en": "Skip the question"},
    "cmd.stop": {"ru": "Закончить собеседование", "en": "End the interview"},
    "cmd.settings": {"ru": "Уровень и язык", "en": "Level and language"},
    "cmd.export": {"ru": "Мои ответы файлом CSV", "en": "My answers as a CSV file"},
    "cmd.forget": {"ru": "Удалить мои данные", "en": "Delete my data"},
    "cmd.help": {"ru": "Справка", "en": "Help"},
    "gcmd.round": {"ru": "Раунд собеседования в группе", "en": "Start a mock-interview round"},
    "gcmd.quiz": {"ru": "Раунд-викторина", "en": "Start a quiz round"},
    "gcmd.top": {"ru": "Таблица лидеров", "en": "Leaderboard"},
    "gcmd.feedback": {
        "ru": "Подробный разбор ответов в личку (on/off)",
        "en": "Detailed feedback in private (on/off)",
    },
    "gcmd.settings": {"ru": "Настройки группы", "en": "Group settings"},
    "gcmd.help": {"ru": "Как играть", "en": "How to play"},
    "btn.skip": {"ru": "Пропустить ⏭", "en": "Skip ⏭"},
    "btn.later": {"ru": "📌 Задать тот вопрос позже", "en": "📌 Ask me that question later"},
    "later.added": {
        "ru": "Добавил в повторения: «{question}». Он придёт с /review.",
        "en": "Added to your reviews: «{question}». It comes with /review.",
    },
    "later.already": {
        "ru": "Этот вопрос уже ждёт вас в /review.",
        "en": "That question is already waiting in /review.",
    },
    "btn.forget.yes": {"ru": "Удалить всё", "en": "Delete everything"},
    "btn.forget.no": {"ru": "Отмена", "en": "Cancel"},
    "btn.lang.ru": {"ru": "Русский", "en": "Русский"},
    "btn.lang.en": {"ru": "English", "en": "English"},
    # --- question topics (content/*/*.yaml `topics:`), as users read them -----------------
    "topic.basics": {"ru": "основы PyTorch", "en": "PyTorch basics"},
    "topic.tensors": {"ru": "тензоры", "en": "tensors"},
    "topic.autograd": {"ru": "autograd и градиенты", "en": "autograd and gradients"},
    "topic.modules": {"ru": "модули (nn.Module)", "en": "modules (nn.Module)"},
    "topic.layers": {"ru": "слои нейросетей", "en": "network layers"},
    "topic.training": {"ru": "обучение моделей", "en": "model training"},
    "topic.optimization": {"ru": "оптимизация", "en": "optimization"},
    "topic.regularization": {"ru": "регуляризация", "en": "regularization"},
    "topic.data": {"ru": "загрузка данных", "en": "data loading"},
    "topic.gpu": {"ru": "работа с GPU", "en": "working with GPUs"},
    "topic.performance": {"ru": "производительность", "en": "performance"},
    "topic.memory": {"ru": "расход памяти", "en": "memory use"},
    "topic.distributed": {"ru": "распределённое обучение", "en": "distributed training"},
    "topic.compilation": {"ru": "компиляция моделей", "en": "model compilation"},
    "topic.deployment": {"ru": "развёртывание моделей", "en": "deployment"},
    "topic.debugging": {"ru": "отладка", "en": "debugging"},
    "topic.nlp": {"ru": "обработка текста (NLP)", "en": "NLP"},
    "topic.cv": {"ru": "компьютерное зрение", "en": "computer vision"},
    "topic.evaluation": {"ru": "оценка качества моделей", "en": "model evaluation"},
    "topic.production": {"ru": "PyTorch в продакшене", "en": "PyTorch in production"},
    "topic.ecosystem": {"ru": "экосистема PyTorch", "en": "the PyTorch ecosystem"},
    "topic.inference": {"ru": "инференс", "en": "inference"},
}

# Each feature's texts live beside this file, one module per feature.
TEXTS.update(FEEDBACK_TEXTS)
TEXTS.update(ROUND_TEXTS)
TEXTS.update(DAILY_TEXTS)
TEXTS.update(PROGRESS_TEXTS)
TEXTS.update(REPORT_TEXTS)
TEXTS.update(REVIEW_TEXTS)

COMMANDS = (
    "start",
    "interview",
    "skip",
    "stop",
    "daily",
    "review",
    "progress",
    "report",
    "settings",
    "export",
    "forget",
    "help",
)
GROUP_COMMANDS = ("round", "quiz", "top", "feedback", "settings", "help")


def plural(lang: str, n: int, forms: str) -> str:
    """The count with its noun in the form the count needs: "21 вопрос", "22 вопроса",
    "25 вопросов", "1 question", "2 questions". `forms`: "one|few|many" for ru (1, 2-4, 5-20:
    вопрос|вопроса|вопросов), "one|other" for en (question|questions)."""
    options = forms.split("|")
    if lang == "ru" and len(options) == 3:
        if n % 10 == 1 and n % 100 != 11:
            form = options[0]
        elif 2 <= n % 10 <= 4 and not 12 <= n % 100 <= 14:
            form = options[1]
        else:
            form = options[2]
    else:
        form = options[0] if n == 1 else options[-1]
    return f"{n} {form}"


class _Formatter(string.Formatter):
    """str.format, plus plural forms in the format spec: "{count:вопрос|вопроса|вопросов}"."""

    def __init__(self, lang: str):
        self.lang = lang

    def format_field(self, value: object, format_spec: str) -> str:
        if "|" in format_spec:
            return plural(self.lang, int(value), format_spec)  # type: ignore[call-overload]
        return format(value, format_spec)  # string.Formatter's own, typed


def topic_name(lang: str, topic: str) -> str:
    """A question topic as users read it; a topic without a name (another bank) shows its id."""
    entry = TEXTS.get(f"topic.{topic}")
    return entry[lang] if entry is not None and lang in entry else topic


def t(lang: str, key: str, /, **values: object) -> str:
    # Positional-only: a placeholder may itself be named `lang` or `key` ({lang} in group_settings).
    entry = TEXTS[key]
    text = entry.get(lang) or entry["en"]
    return _Formatter(lang).format(text, **values) if values else text
