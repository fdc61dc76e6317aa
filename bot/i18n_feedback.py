"""User-visible texts of a question and its feedback: the header, score, verdict, covered and
missed points, misconceptions, the comparison with a previous attempt, the model answer and the
interview summary (ru, en; merged into bot.i18n)."""

from __future__ import annotations

FEEDBACK_TEXTS: dict[str, dict[str, str]] = {
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
}
