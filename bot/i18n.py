"""User-visible texts in Russian and English. Plain text: renderers escape and format them."""

from __future__ import annotations

import string

from bot.i18n_progress import PROGRESS_TEXTS
from bot.i18n_report import REPORT_TEXTS
from bot.i18n_review import REVIEW_TEXTS

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
    "another_question": {
        "ru": "🔀 Похоже, это ответ на другой вопрос банка: «{question}». Поэтому оценка не выше 1,5: перечитайте вопрос выше.",
        "en": "🔀 This reads like an answer to another question of the bank: «{question}». So the score is at most 1.5: re-read the question above.",
    },
    "then_now": {
        "ru": "🔁 Вы уже отвечали на этот вопрос{when}: было {then}/10, сейчас {now}/10.",
        "en": "🔁 You answered this question before{when}: {then}/10 then, {now}/10 now.",
    },
    "then_now.new_points": {"ru": "Теперь раскрыто:", "en": "Covered now, not then:"},
    "then_now.gone": {"ru": "✔️ Этой ошибки больше нет:", "en": "✔️ Gone since then:"},
    "then_now.still": {"ru": "⚠️ Ошибка осталась:", "en": "⚠️ Still there:"},
    "worth_checking": {
        "ru": "Проверьте себя: ваш ответ похож на распространённую ошибку",
        "en": "Worth checking: part of your answer sounds like a common misconception",
    },
    "documented_pitfalls": {
        "ru": "Типичные ошибки на этом вопросе:",
        "en": "Common pitfalls on this question:",
    },
    "your_words": {"ru": "ваши слова", "en": "your words"},
    "model_answer": {
        "ru": "Эталонный ответ (нажмите, чтобы раскрыть):",
        "en": "Model answer (tap to expand):",
    },
    "model_answer_plain": {"ru": "Эталонный ответ:", "en": "Model answer:"},
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
    "daily_header": {"ru": "Вопрос дня · {level}", "en": "Daily question · {level}"},
    "daily_streak": {
        "ru": "🔥 Серия: {streak:день|дня|дней} подряд",
        "en": "🔥 Streak: {streak:day|days} in a row",
    },
    "daily_usage": {
        "ru": (
            "Формат: /daily ЧЧ:ММ [часовой пояс], например /daily 09:30 Europe/Moscow или "
            "/daily 09:30 +3. /daily off — отписаться."
        ),
        "en": (
            "Usage: /daily HH:MM [timezone], e.g. /daily 09:30 Europe/Moscow or /daily 09:30 -5. "
            "/daily off unsubscribes."
        ),
    },
    "daily_bad_time": {
        "ru": "Не понимаю время «{value}». Нужно ЧЧ:ММ, например 09:30.",
        "en": "I can't read the time “{value}”. Use HH:MM, e.g. 09:30.",
    },
    "daily_bad_tz": {
        "ru": (
            "Не знаю часовой пояс «{value}». Укажите название IANA (Europe/Moscow) "
            "или смещение от UTC (+3, UTC+03:00, -5)."
        ),
        "en": (
            "I don't know the timezone “{value}”. Use an IANA name (Europe/Moscow) "
            "or a UTC offset (+3, UTC+03:00, -5)."
        ),
    },
    "daily_none": {
        "ru": "Вопрос дня не включён. Подписаться: /daily ЧЧ:ММ [часовой пояс], например /daily 09:30 +3",
        "en": "You have no daily question. Subscribe: /daily HH:MM [timezone], e.g. /daily 09:30 -5",
    },
    "daily_status": {
        "ru": "Вопрос дня: в {time} ({tz}), уровень {level}{weekdays}.",
        "en": "Daily question: at {time} ({tz}), level {level}{weekdays}.",
    },
    "daily_weekdays_suffix": {"ru": ", только по будням", "en": ", weekdays only"},
    "daily_next": {"ru": "Следующий: {when}", "en": "Next: {when}"},
    "weekdays": {"ru": "пн вт ср чт пт сб вс", "en": "Mon Tue Wed Thu Fri Sat Sun"},
    "daily_paused": {
        "ru": "Вопрос дня выключен (было: {time}, {tz}). Включить снова: /daily {time}",
        "en": "Daily questions are off (it was {time}, {tz}). Turn them back on: /daily {time}",
    },
    "daily_subscribed": {
        "ru": "Готово! Вопрос будет приходить каждый день в {time} ({tz}).",
        "en": "Done! A question will arrive every day at {time} ({tz}).",
    },
    "daily_tz_hint": {
        "ru": "Часовой пояс: UTC. Чтобы указать свой: /daily {time} Europe/Moscow или /daily {time} +3",
        "en": "Timezone: UTC. To set yours: /daily {time} Europe/Berlin or /daily {time} -5",
    },
    "daily_off": {
        "ru": "Вопрос дня выключен. Включить снова: /daily ЧЧ:ММ",
        "en": "Daily questions are off. Turn them back on: /daily HH:MM",
    },
    "daily_off_none": {
        "ru": "Вопрос дня и так выключен.",
        "en": "Daily questions are already off.",
    },
    "daily_time_hint": {
        "ru": "Отправьте новое время: /daily ЧЧ:ММ [часовой пояс], например /daily 08:00 +3",
        "en": "Send the new time: /daily HH:MM [timezone], e.g. /daily 08:00 -5",
    },
    "daily_pick_level": {"ru": "Уровень вопроса дня:", "en": "Level of the daily question:"},
    "btn.daily.time": {"ru": "🕘 Время", "en": "🕘 Time"},
    "btn.daily.level": {"ru": "📶 Уровень", "en": "📶 Level"},
    "btn.daily.weekdays_on": {"ru": "Только будни: да", "en": "Weekdays only: on"},
    "btn.daily.weekdays_off": {"ru": "Только будни: нет", "en": "Weekdays only: off"},
    "btn.daily.off": {"ru": "🔕 Выключить", "en": "🔕 Turn off"},
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

# The learning loop's texts live beside this file, one module per feature.
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
        return super().format_field(value, format_spec)


def topic_name(lang: str, topic: str) -> str:
    """A question topic as users read it; a topic without a name (another bank) shows its id."""
    entry = TEXTS.get(f"topic.{topic}")
    return entry[lang] if entry is not None and lang in entry else topic


def t(lang: str, key: str, /, **values: object) -> str:
    # Positional-only: a placeholder may itself be named `lang` or `key` ({lang} in group_settings).
    entry = TEXTS[key]
    text = entry.get(lang) or entry["en"]
    return _Formatter(lang).format(text, **values) if values else text
