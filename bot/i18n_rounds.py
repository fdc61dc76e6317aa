"""User-visible texts of group chats: mock-interview rounds, quizzes, the leaderboard and the
group settings (ru, en; merged into bot.i18n)."""

from __future__ import annotations

ROUND_TEXTS: dict[str, dict[str, str]] = {
    "group_howto": {
        "ru": "Привет! Я провожу тренировочные собеседования по ML прямо в группе.\n\nАдминистратор запускает раунд: /round [junior|middle|senior] [N] [секунды] (по умолчанию 5 вопросов по 120 с). Чтобы ответить, сделайте reply на сообщение с вопросом — права администратора мне не нужны. Засчитывается ваш последний ответ до дедлайна. После каждого вопроса — оценки всех участников, в конце — таблица. /top — общий рейтинг группы, /settings — настройки.",
        "en": "Hi! I run mock ML interviews right here in the group.\n\nAn admin starts a round: /round [junior|middle|senior] [N] [seconds] (default: 5 questions, 120 s each). To answer, reply to the question message — I need no admin rights. Your latest reply before the deadline counts. After each question everyone's scores are posted, and a leaderboard at the end. /top shows the group's all-time leaderboard, /settings the group settings.",
    },
    "round_usage": {
        "ru": "Формат: /round [junior|middle|senior] [N] [секунды] — N от 1 до {max} (по умолчанию 5), секунды от {min} до {max_seconds} (по умолчанию 120). /round stop — закончить раунд.",
        "en": "Usage: /round [junior|middle|senior] [N] [seconds] — N from 1 to {max} (default 5), seconds from {min} to {max_seconds} (default 120). /round stop ends the round.",
    },
    "round_admins_only": {
        "ru": "Запускать и останавливать раунды могут только администраторы группы.",
        "en": "Only the group's admins can start or stop a round.",
    },
    "round_started": {
        "ru": "Раунд начался: {count:вопрос|вопроса|вопросов}, уровень {level}, по {seconds} с на вопрос. Отвечайте reply на сообщение с вопросом; у каждого один ответ — засчитывается последний до дедлайна.",
        "en": "Round started: {count:question|questions}, level {level}, {seconds} s each. Reply to the question message; one answer per person — your latest reply before the deadline counts.",
    },
    "round_running": {
        "ru": "Раунд уже идёт. Администратор может закончить его: /round stop",
        "en": "A round is already running. An admin can end it with /round stop",
    },
    "round_none": {
        "ru": "Сейчас раунд не идёт. Начать: /round",
        "en": "No round is running. Start one: /round",
    },
    "round_stopping": {
        "ru": "Раунд заканчивается: это последний вопрос.",
        "en": "Ending the round: this is the last question.",
    },
    "round_question_header": {
        "ru": "Раунд · вопрос {position}/{total} · {level}",
        "en": "Round · question {position}/{total} · {level}",
    },
    "round_question_hint": {
        "ru": "Ответьте reply на это сообщение в течение {seconds} с. Один ответ на человека, засчитывается последний.",
        "en": "Reply to this message within {seconds} s. One answer per person; your latest reply counts.",
    },
    "btn.round_next": {"ru": "Дальше ⏭", "en": "Next ⏭"},
    "round_results_header": {
        "ru": "Итоги · вопрос {position}/{total}",
        "en": "Results · question {position}/{total}",
    },
    "round_no_answers": {"ru": "Ответов не было.", "en": "No answers to this question."},
    "round_no_answer": {"ru": "нет ответа", "en": "no answer"},
    "round_best_covered": {
        "ru": "Лучший ответ раскрыл:",
        "en": "The best answer covered:",
    },
    "round_pitfalls": {
        "ru": "Ошибки участников:",
        "en": "Pitfalls participants fell into:",
    },
    "round_leaderboard": {
        "ru": "Раунд завершён — итоговая таблица ({questions:вопрос|вопроса|вопросов}):",
        "en": "Round finished — leaderboard ({questions:question|questions}):",
    },
    "round_leaderboard_empty": {
        "ru": "Ни одного ответа в этом раунде.",
        "en": "No answers in this round.",
    },
    "round_top_title": {"ru": "Общий рейтинг группы:", "en": "The group's all-time leaderboard:"},
    "round_top_empty": {
        "ru": "Оценённых ответов пока нет. Начать раунд: /round",
        "en": "No graded answers yet. Start a round: /round",
    },
    "round_answers_count": {
        "ru": "{count:ответ|ответа|ответов}",
        "en": "{count:answer|answers}",
    },
    "round_more": {
        "ru": "… и ещё {count:участник|участника|участников}",
        "en": "… and {count:other|others}",
    },
    "round_chat_migrated": {
        "ru": "Группа стала супергруппой, поэтому текущий раунд завершён. Начать новый: /round",
        "en": "This group became a supergroup, so the current round has ended. Start a new one: /round",
    },
    "group_chat_migrated": {
        "ru": "Группа стала супергруппой. Если вы отправили мне команду перед этим, повторите её здесь.",
        "en": "This group became a supergroup. If you sent me a command just before that, send it again here.",
    },
    "round_reply_not_question": {
        "ru": "Чтобы ответить, сделайте reply на сообщение с вопросом текущего раунда.",
        "en": "To answer, reply to the question message of the current round.",
    },
    "round_closed": {
        "ru": "Этот вопрос уже закрыт — ответы после дедлайна не оцениваются.",
        "en": "This question is closed — answers after the deadline are not graded.",
    },
    "round_too_short": {
        "ru": "Слишком коротко для оценки — ответьте парой предложений (новый reply заменит этот).",
        "en": "Too short to grade — answer in a sentence or two (a new reply replaces this one).",
    },
    "round_not_text": {
        "ru": "Оцениваются только текстовые ответы — ответьте текстом.",
        "en": "Only text answers are graded — reply with text.",
    },
    "round_next_pressed": {"ru": "Закрываю вопрос…", "en": "Closing the question…"},
    "round_next_admins": {
        "ru": "Переходить дальше могут только администраторы.",
        "en": "Only admins can move on.",
    },
    "group_private_only": {
        "ru": "Личные собеседования идут в личном чате — напишите мне туда. В группе: /round, /top, /help.",
        "en": "Personal interviews run in a private chat — message me there. In the group: /round, /top, /help.",
    },
    "group_settings": {
        "ru": "Настройки группы. Уровень: {level}. Язык: {lang}. Запускать раунды могут: {who}.\nИзменить: /settings level junior|middle|senior, /settings lang ru|en, /settings everyone on|off",
        "en": "Group settings. Level: {level}. Language: {lang}. Who can start rounds: {who}.\nChange: /settings level junior|middle|senior, /settings lang ru|en, /settings everyone on|off",
    },
    "group_who.admins": {"ru": "администраторы", "en": "admins"},
    "group_who.everyone": {"ru": "все участники", "en": "everyone"},
    "group_settings_admins": {
        "ru": "Менять настройки группы могут только администраторы.",
        "en": "Only the group's admins can change its settings.",
    },
    "quiz_started": {
        "ru": "Квиз начался: {count:опрос|опроса|опросов}, уровень {level}, по {seconds} с. Голосуйте в каждом опросе; верный ответ — 10 очков в общий рейтинг.",
        "en": "Quiz started: {count:poll|polls}, level {level}, {seconds} s each. Vote in each poll; a right answer scores 10 towards the leaderboard.",
    },
    "quiz_usage": {
        "ru": "Формат: /quiz [junior|middle|senior] [N] [секунды] — N от 1 до {max}, секунды от {min} до 600.",
        "en": "Usage: /quiz [junior|middle|senior] [N] [seconds] — N from 1 to {max}, seconds from {min} to 600.",
    },
    "quiz_right_answer": {"ru": "Верный ответ:", "en": "The right answer:"},
    "round_private_header": {
        "ru": "Подробный разбор вашего ответа в групповом раунде:",
        "en": "Detailed feedback on your answer in the group round:",
    },
    "feedback_on": {
        "ru": "{name}, после каждого вопроса пришлю вам подробный разбор в личные сообщения. Если вы ещё не писали мне, откройте личный чат и нажмите «Start». Отключить: /feedback off",
        "en": "{name}, after each question I'll send you detailed feedback in private. If you haven't yet, open a private chat with me and press Start. To stop: /feedback off",
    },
    "feedback_off": {
        "ru": "{name}, подробный разбор в личных сообщениях отключён.",
        "en": "{name}, no more detailed feedback in private.",
    },
    "feedback_usage": {
        "ru": "Формат: /feedback on|off — подробный разбор ваших ответов в личных сообщениях.",
        "en": "Usage: /feedback on|off — detailed feedback on your answers, in private.",
    },
    # --- daily questions ---------------------------------------------------------------------
}
