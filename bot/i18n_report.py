"""User-visible texts of /report: the readiness report (ru, en; merged into bot.i18n)."""

from __future__ import annotations

REPORT_TEXTS: dict[str, dict[str, str]] = {
    "report.title": {"ru": "Готовность по темам", "en": "Readiness by topic"},
    "report.counts": {
        "ru": "Вопросов с оценкой: {answered} из {total}. Ваш уровень: {level}.",
        "en": "Questions with a score: {answered} of {total}. Your level: {level}.",
    },
    "report.ready": {
        "ru": "{topic}: готовы к уровню {level}",
        "en": "{topic}: ready for {level}",
    },
    # Appended to a ready line: how far the next level is.
    "report.next_level": {"ru": "; {level} пока {score}/10", "en": "; {level} so far {score}/10"},
    "report.below": {
        "ru": "{topic}: ниже планки {level} ({score}/10)",
        "en": "{topic}: below the {level} bar ({score}/10)",
    },
    "report.untried": {"ru": "Ещё не пробовали: {topics}", "en": "Not tried yet: {topics}"},
    "report.empty": {
        "ru": "Оценённых ответов пока нет, так что все темы ещё впереди. Начните с /interview.",
        "en": "No graded answers yet, so every topic is still untried. Start with /interview.",
    },
    "report.practice": {
        "ru": "Что потренировать дальше (↳ — вопросы, которые обычно задают следом):",
        "en": "Practise next (↳ the follow-ups interviewers usually ask after it):",
    },
    "report.last_score": {
        "ru": "{level}, последняя оценка {score}/10",
        "en": "{level}, last score {score}/10",
    },
    "report.unanswered": {"ru": "{level}, ещё без ответа", "en": "{level}, not answered yet"},
    "report.practice_none": {
        "ru": "Все вопросы вашего уровня уже на 10/10 — попробуйте уровень выше: /settings",
        "en": "Everything at your level already scored 10/10 — try the next level: /settings",
    },
    "report.how": {
        "ru": (
            "Как считается: для каждой темы и уровня — среднее ваших последних оценок, где "
            "вопросы, которые задают чаще, весят больше (почти всегда ×3, часто ×2, иногда ×1), "
            "а вопрос без ответа считается за 0; 7/10 на уровне и на всех уровнях ниже — "
            "значит, вы к нему готовы."
        ),
        "en": (
            "How it is computed: for each topic and level, the average of your latest scores, "
            "where questions asked more often weigh more (almost always ×3, often ×2, "
            "sometimes ×1) and an unanswered question counts as 0; 7/10 at a level and at every "
            "level below it means you are ready for it."
        ),
    },
    # The one-liner at the end of an interview: "{parts}" joins the pieces below with ", ".
    "report.line": {
        "ru": "Готовность: {parts}. Подробнее: /report",
        "en": "Readiness: {parts}. Details: /report",
    },
    "report.line_ready": {
        "ru": "готовы к уровню {level} — {count:тема|темы|тем}",
        "en": "{count:topic|topics} ready for {level}",
    },
    "report.line_below": {
        "ru": "ниже планки {level} — {count:тема|темы|тем}",
        "en": "{count:topic|topics} below the {level} bar",
    },
    "report.line_none": {
        "ru": "Готовность: оценённых ответов пока нет. Подробнее: /report",
        "en": "Readiness: no graded answers yet. Details: /report",
    },
}
