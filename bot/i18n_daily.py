"""User-visible texts of the daily question: /daily, its settings and its buttons (ru, en; merged
into bot.i18n)."""

from __future__ import annotations

DAILY_TEXTS: dict[str, dict[str, str]] = {
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
}
