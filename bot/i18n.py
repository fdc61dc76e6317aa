"""User-visible texts in Russian and English. Plain text: renderers escape and format them."""

from __future__ import annotations

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
            "/settings — уровень и язык\n"
            "/help — эта справка\n\n"
            "Отвечайте обычным сообщением или ответом (reply) на сообщение с вопросом."
        ),
        "en": (
            "/interview [junior|middle|senior] [N] — an interview of N questions (default 5)\n"
            "/skip — skip the question\n"
            "/stop — end the interview\n"
            "/settings — level and language\n"
            "/help — this help\n\n"
            "Answer with a plain message or a reply to the question message."
        ),
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
        "ru": "Начинаем собеседование: {count} вопр., уровень {level}. /skip — пропустить, /stop — закончить.",
        "en": "Starting the interview: {count} question(s), level {level}. /skip to skip, /stop to end.",
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
    "question_header": {
        "ru": "Вопрос {position}/{total} · {level}",
        "en": "Question {position}/{total} · {level}",
    },
    "question_header_single": {"ru": "Вопрос · {level}", "en": "Question · {level}"},
    "answer_hint": {
        "ru": "Ответьте сообщением или reply на этот вопрос.",
        "en": "Answer with a message or a reply to this question.",
    },
    "score": {"ru": "Оценка: {score}/10", "en": "Score: {score}/10"},
    "verdict.excellent": {"ru": "отлично", "en": "excellent"},
    "verdict.good": {"ru": "хорошо", "en": "good"},
    "verdict.partial": {"ru": "частично", "en": "partial"},
    "verdict.weak": {"ru": "слабо", "en": "weak"},
    "verdict.no-answer": {"ru": "нет ответа", "en": "no answer"},
    "verdict.off-topic": {"ru": "не по теме", "en": "off topic"},
    "verdict.retired": {"ru": "вопрос снят", "en": "question retired"},
    "covered": {"ru": "Раскрыто:", "en": "Covered:"},
    "missed": {"ru": "Пропущено:", "en": "Missed:"},
    "fell_into": {"ru": "Ошибки в ответе:", "en": "Misconceptions in your answer:"},
    "documented_pitfalls": {
        "ru": "Типичные ошибки на этом вопросе:",
        "en": "Common pitfalls on this question:",
    },
    "your_words": {"ru": "ваши слова", "en": "your words"},
    "model_answer": {
        "ru": "Эталонный ответ (нажмите, чтобы раскрыть):",
        "en": "Model answer (tap to expand):",
    },
    "summary_title": {"ru": "Собеседование завершено", "en": "Interview finished"},
    "summary_average": {"ru": "Средняя оценка: {score}/10", "en": "Average score: {score}/10"},
    "summary_no_answers": {
        "ru": "Ни одного ответа — оценки нет.",
        "en": "No answers, so no score.",
    },
    "summary_counts": {
        "ru": "Отвечено: {answered} из {total}, пропущено: {skipped}.",
        "en": "Answered: {answered} of {total}, skipped: {skipped}.",
    },
    "summary_weakest": {"ru": "Стоит подтянуть: {topics}", "en": "Worth revisiting: {topics}"},
    "summary_strong": {
        "ru": "Слабых тем не видно — так держать!",
        "en": "No weak topics showed up. Well done!",
    },
    "summary_next": {"ru": "Ещё раз: /interview", "en": "Again: /interview"},
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
    "outdated_button": {"ru": "Эта кнопка устарела.", "en": "This button is out of date."},
    "grading_failed": {
        "ru": "Не удалось оценить ответ, он сохранён и будет оценён позже.",
        "en": "Grading failed; your answer is saved and will be graded later.",
    },
    "group_unsupported": {
        "ru": "В группах я пока не провожу собеседования — напишите мне в личные сообщения.",
        "en": "I don't run interviews in groups yet — message me privately.",
    },
    "cmd.start": {"ru": "Начало и выбор уровня", "en": "Start and pick a level"},
    "cmd.interview": {"ru": "Начать собеседование", "en": "Start an interview"},
    "cmd.skip": {"ru": "Пропустить вопрос", "en": "Skip the question"},
    "cmd.stop": {"ru": "Закончить собеседование", "en": "End the interview"},
    "cmd.settings": {"ru": "Уровень и язык", "en": "Level and language"},
    "cmd.help": {"ru": "Справка", "en": "Help"},
    "btn.skip": {"ru": "Пропустить ⏭", "en": "Skip ⏭"},
    "btn.lang.ru": {"ru": "Русский", "en": "Русский"},
    "btn.lang.en": {"ru": "English", "en": "English"},
    "topic_sep": {"ru": ", ", "en": ", "},
}

COMMANDS = ("start", "interview", "skip", "stop", "settings", "help")


def t(lang: str, key: str, **values: object) -> str:
    entry = TEXTS[key]
    text = entry.get(lang) or entry["en"]
    return text.format(**values) if values else text
