"""User-visible texts of /progress: the text and the chart labels (ru, en; merged into bot.i18n)."""

from __future__ import annotations

PROGRESS_TEXTS: dict[str, dict[str, str]] = {
    "progress.empty": {
        "ru": "Оценённых ответов пока нет, так что показывать нечего. Начните с /interview.",
        "en": "No graded answers yet, so there is nothing to show. Start with /interview.",
    },
    "progress.title": {
        "ru": "Ваш прогресс: {count:оценённый ответ|оценённых ответа|оценённых ответов}",
        "en": "Your progress: {count:graded answer|graded answers}",
    },
    "progress.levels": {
        "ru": "Отвечено вопросов по уровням:",
        "en": "Questions answered, by level:",
    },
    "progress.level_line": {
        "ru": "{level}: {answered}/{total}",
        "en": "{level}: {answered}/{total}",
    },
    "progress.weakest": {
        "ru": "Слабые темы (средняя последняя оценка по вопросам темы):",
        "en": "Weakest topics (mean latest score over the topic's questions):",
    },
    "progress.topic_line": {
        "ru": "• {topic}: {mastery}/10, вопросов {answered} из {total}",
        "en": "• {topic}: {mastery}/10, {answered} of {total} questions",
    },
    "progress.streak": {
        "ru": "🔥 Серия: {days:день|дня|дней} подряд с ответами",
        "en": "🔥 Streak: {days:day|days} in a row with answers",
    },
    "progress.no_streak": {
        "ru": "Серии пока нет: ответьте сегодня, чтобы её начать.",
        "en": "No streak yet: answer a question today to start one.",
    },
    "progress.recent": {"ru": "Последние ответы:", "en": "Latest answers:"},
    "progress.recent_line": {
        "ru": "{score}/10 — {question}",
        "en": "{score}/10 — {question}",
    },
    # The chart (bot/services/progress_chart.py)
    "progress.chart.scores": {"ru": "Оценки ответов", "en": "Your scores"},
    "progress.chart.score_axis": {"ru": "оценка", "en": "score"},
    "progress.chart.answer": {"ru": "ответ", "en": "an answer"},
    "progress.chart.average": {
        "ru": "среднее последних {n:ответа|ответов|ответов}",
        "en": "mean of the last {n:answer|answers}",
    },
    "progress.chart.topics": {
        "ru": "Темы: средняя последняя оценка (слабые сверху)",
        "en": "Topics: mean latest score (weakest on top)",
    },
    "progress.chart_file": {"ru": "График: {path}", "en": "Chart: {path}"},
}
