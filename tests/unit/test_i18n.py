"""Every text in both languages with the same placeholders, no unused texts, plural forms that
read naturally, and a name for every topic of the bank."""

from __future__ import annotations

import re
import string
from pathlib import Path

import pytest

from bot.content.loader import QuestionBank
from bot.i18n import COMMANDS, GROUP_COMMANDS, LANGS, TEXTS, plural, t, topic_name
from bot.services.outbox import SummaryItem
from bot.telegram.rendering import render_summary

BOT = Path(__file__).resolve().parents[2] / "bot"
VERDICTS = ("excellent", "good", "partial", "weak", "no-answer", "off-topic", "retired")


def fields(text: str) -> dict[str, str]:
    """Placeholder name -> its format spec ("вопрос|вопроса|вопросов" for plural forms)."""
    return {name: spec for _, name, spec, _ in string.Formatter().parse(text) if name is not None}


@pytest.mark.parametrize("key", sorted(TEXTS))
def test_every_text_in_both_languages_with_the_same_placeholders(key: str) -> None:
    entry = TEXTS[key]
    assert set(entry) == set(LANGS), key
    assert all(entry[lang].strip() for lang in LANGS), key
    ru, en = fields(entry["ru"]), fields(entry["en"])
    assert set(ru) == set(en), (key, set(ru) ^ set(en))
    for name in ru:  # a count that meets a noun does so in both languages
        assert ("|" in ru[name]) == ("|" in en[name]), (key, name)
        if "|" in ru[name]:
            assert len(ru[name].split("|")) == 3, (key, ru[name])  # one | few | many
            assert len(en[name].split("|")) == 2, (key, en[name])  # one | other
    for lang in LANGS:  # and it formats: no stray brace, no broken spec
        t(lang, key, **dict.fromkeys(ru, 2))


@pytest.mark.parametrize("lang", LANGS)
def test_no_count_is_left_with_an_abbreviated_or_bracketed_noun(lang: str) -> None:
    # "5 вопр.", "2 дн.", "опрос(ов)", "question(s)": plural forms read better.
    pattern = re.compile(r"\w\((?:s|ов|а|и|es)\)|\b(?:вопр|дн|шт|отв|подп)\.")
    offenders = {k: e[lang] for k, e in TEXTS.items() if pattern.search(e[lang])}
    assert not offenders, offenders


@pytest.mark.parametrize(
    ("n", "ru", "en"),
    [
        (1, "1 вопрос", "1 question"),
        (2, "2 вопроса", "2 questions"),
        (5, "5 вопросов", "5 questions"),
        (11, "11 вопросов", "11 questions"),
        (21, "21 вопрос", "21 questions"),
        (22, "22 вопроса", "22 questions"),
        (25, "25 вопросов", "25 questions"),
        (111, "111 вопросов", "111 questions"),
        (0, "0 вопросов", "0 questions"),
        (12, "12 вопросов", "12 questions"),
        (104, "104 вопроса", "104 questions"),
    ],
)
def test_plural_forms(n: int, ru: str, en: str) -> None:
    assert plural("ru", n, "вопрос|вопроса|вопросов") == ru
    assert plural("en", n, "question|questions") == en
    assert t("ru", "interview_started", count=n, level="junior").startswith(
        f"Начинаем собеседование: {ru}, "
    )
    assert t("en", "round_leaderboard", questions=n) == f"Round finished — leaderboard ({en}):"


def test_plural_forms_in_every_counted_text() -> None:
    assert t("ru", "daily_streak", streak=21) == "🔥 Серия: 21 день подряд"
    assert t("ru", "daily_streak", streak=3) == "🔥 Серия: 3 дня подряд"
    assert t("en", "daily_streak", streak=1) == "🔥 Streak: 1 day in a row"
    assert t("ru", "quiz_started", count=5, level="junior", seconds=30).startswith(
        "Квиз начался: 5 опросов,"
    )
    assert t("en", "quiz_started", count=1, level="junior", seconds=30).startswith(
        "Quiz started: 1 poll,"
    )
    assert t("ru", "round_answers_count", count=22) == "22 ответа"
    assert t("en", "round_answers_count", count=1) == "1 answer"
    assert (
        t("ru", "stats_hardest_line", id="x", average=3.0, answers=11) == "• x: 3.0/10 (11 ответов)"
    )


def _dynamic_keys(bank: QuestionBank) -> set[str]:
    """Keys the code builds at run time (f"cmd.{c}", f"{kind}_started", …)."""
    return (
        {f"cmd.{c}" for c in COMMANDS}
        | {f"gcmd.{c}" for c in GROUP_COMMANDS}
        | {f"btn.lang.{lang}" for lang in LANGS}
        | {f"verdict.{v}" for v in VERDICTS}
        | {f"{kind}_{what}" for kind in ("round", "quiz") for what in ("started", "usage")}
        | {f"topic.{topic}" for question in bank for topic in question.topics}
    )


def test_every_text_is_used(bank: QuestionBank) -> None:
    source = "\n".join(
        path.read_text("utf-8") for path in BOT.rglob("*.py") if path.name != "i18n.py"
    )
    dynamic = _dynamic_keys(bank)
    assert dynamic <= set(TEXTS), dynamic - set(TEXTS)  # every built key exists
    unused = [
        key
        for key in TEXTS
        if key not in dynamic and f'"{key}"' not in source and f"'{key}'" not in source
    ]
    assert not unused, unused


def test_every_topic_of_the_bank_has_a_name_in_both_languages(bank: QuestionBank) -> None:
    topics = {topic for question in bank for topic in question.topics}
    assert topics
    for topic in sorted(topics):
        names = {lang: topic_name(lang, topic) for lang in LANGS}
        assert f"topic.{topic}" in TEXTS, topic
        assert re.search("[а-яё]", names["ru"].lower()), (topic, names)  # Russian words
        assert names["ru"] != names["en"] or names["en"] != topic, (topic, names)
    assert topic_name("ru", "no-such-topic") == "no-such-topic"  # another bank: its id


def test_summary_names_weak_topics_in_the_users_language() -> None:
    item = SummaryItem(
        interview_id=1, chat_id=1, total=2, answered=2, skipped=0, average=3.0,
        weakest_topics=["basics", "tensors"],
    )  # fmt: skip
    assert "Стоит подтянуть: основы PyTorch, тензоры" in render_summary(item, "ru").as_html()
    assert "Worth revisiting: PyTorch basics, tensors" in render_summary(item, "en").as_html()
