"""User-visible texts of /review and spaced repetition (ru, en; merged into bot.i18n)."""

from __future__ import annotations

REVIEW_TEXTS: dict[str, dict[str, str]] = {
    "review.started": {
        "ru": "Повторение: {count:вопрос|вопроса|вопросов}, сначала самые просроченные.",
        "en": "Review: {count:question|questions} due, most overdue first.",
    },
    "review.not_due": {
        "ru": "Сейчас повторять нечего. Следующий вопрос подойдёт к повторению {when}.",
        "en": "Nothing is due for review right now. The next question is due {when}.",
    },
    "review.none_yet": {
        "ru": (
            "Повторять пока нечего: вопрос попадает в повторение, когда вы на него ответите "
            "или пропустите его."
        ),
        "en": ("Nothing to review yet: a question joins your reviews once you answer or skip it."),
    },
    "review.offer_new": {
        "ru": "А пока — собеседование из новых вопросов?",
        "en": "Meanwhile, an interview of new questions?",
    },
    "review.usage": {
        "ru": "Формат: /review [N] — повторить до N вопросов, чей срок подошёл (N от 1 до {max}).",
        "en": "Usage: /review [N] — review up to N questions that are due (N from 1 to {max}).",
    },
    "summary_reviews_due": {
        "ru": "К повторению в ближайшие сутки: {count:вопрос|вопроса|вопросов} — /review",
        "en": "Due for review within a day: {count:question|questions} — /review",
    },
    # relative times for "due {when}"
    "when.minutes": {"ru": "через {n:минуту|минуты|минут}", "en": "in {n:minute|minutes}"},
    "when.hours": {"ru": "через {n:час|часа|часов}", "en": "in {n:hour|hours}"},
    "when.days": {"ru": "через {n:день|дня|дней}", "en": "in {n:day|days}"},
    "btn.interview_new": {"ru": "Собеседование", "en": "Start an interview"},
    "btn.progress": {"ru": "Мой прогресс", "en": "My progress"},
    "btn.report": {"ru": "Готовность", "en": "Readiness"},
    "cmd.review": {"ru": "Повторить вопросы, срок которых подошёл", "en": "Review what is due"},
    "cmd.progress": {"ru": "Мой прогресс: график и итоги", "en": "My progress: chart and totals"},
    "cmd.report": {"ru": "Готовность по темам", "en": "Readiness by topic"},
}
