"""`/progress`: the figures (levels, topic mastery from each question's latest score, streak,
latest answers), the caption-sized text in both languages, and the chart as a real PNG."""

from __future__ import annotations

import io
import logging
import warnings
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta, timezone

import pytest
from matplotlib import font_manager
from matplotlib.ft2font import FT2Font
from PIL import Image, ImageStat

from bot.content.loader import QuestionBank
from bot.content.schema import Level, Question
from bot.i18n import LANGS, TEXTS, t, topic_name
from bot.services.history import HistoryRow
from bot.services.progress import (
    LevelProgress,
    ProgressSummary,
    RecentAnswer,
    TopicProgress,
    load_progress,
    summarize,
)
from bot.services.progress_chart import moving_average, render_progress_chart
from bot.storage.models import (
    Answer,
    AskedQuestion,
    GroupChat,
    Round,
    RoundAnswer,
    RoundQuestion,
    User,
)
from bot.telegram.progress_rendering import CAPTION_LIMIT, render_progress_text
from bot.telegram.text_limits import utf16_len

TODAY = date(2026, 11, 29)
NOON = datetime(2026, 11, 29, 12, tzinfo=UTC)


@pytest.fixture
def small(bank: QuestionBank) -> QuestionBank:
    """Four questions with levels and topics fixed here, so that the bank's edits change nothing.
    Built from a real question (the schema asks for key points and pitfalls)."""
    base = next(iter(bank))

    def q(qid: str, level: str, *topics: str) -> Question:
        return base.model_copy(update={"id": qid, "level": Level(level), "topics": topics})

    questions = [
        q("a", "junior", "tensors", "basics"),
        q("b", "junior", "tensors"),
        q("c", "middle", "autograd"),
        q("d", "senior", "gpu"),
    ]
    return QuestionBank(questions={x.id: x for x in questions}, content_hash="test")


def row(qid: str, score: float | None, when: datetime, question: str = "") -> HistoryRow:
    return HistoryRow(
        when=when, where="private", question_id=qid, question=question or f"question {qid}",
        level="", score=score, verdict=None, answer="…",
    )  # fmt: skip


def days_ago(n: int, hour: int = 12) -> datetime:
    return datetime(TODAY.year, TODAY.month, TODAY.day, hour, tzinfo=UTC) - timedelta(days=n)


def test_latest_score_per_question_sets_topic_mastery(small: QuestionBank) -> None:
    rows = [
        row("a", 2.0, days_ago(3)),
        row("a", 8.0, days_ago(2)),  # a's latest: counts for tensors and basics
        row("b", 4.0, days_ago(1)),
        row("c", 9.0, days_ago(5)),
        row("c", 3.0, days_ago(4)),  # c's latest
    ]
    s = summarize(list(reversed(rows)), small, TODAY)  # order of the input does not matter
    assert s.topics == (
        TopicProgress("autograd", 3.0, answered=1, total=1),
        TopicProgress("tensors", 6.0, answered=2, total=2),  # (8 + 4) / 2
        TopicProgress("basics", 8.0, answered=1, total=1),
    )  # weakest first; gpu has no answer, so no mastery
    assert s.levels == (
        LevelProgress("junior", answered=2, total=2),
        LevelProgress("middle", answered=1, total=1),
        LevelProgress("senior", answered=0, total=1),
    )  # distinct questions: a's two answers count once
    assert s.points == tuple((r.when, r.score) for r in sorted(rows, key=lambda r: r.when))
    assert s.total_answers == 5 and not s.is_empty


def test_ungraded_and_retired_answers_are_left_out(small: QuestionBank) -> None:
    s = summarize(
        [row("a", None, days_ago(0)), row("gone", 9.0, days_ago(0)), row("b", 5.0, days_ago(3))],
        small,
        TODAY,
    )
    assert s.total_answers == 1 and [r.question_id for r in s.recent] == ["b"]
    assert [p.topic for p in s.topics] == ["tensors"]
    assert s.streak == 0  # the only graded answer is three days old


def test_quiz_votes_are_left_out(small: QuestionBank) -> None:
    vote = replace(row("a", 0.0, days_ago(0)), where="quiz")  # a wrong click after a real 9
    s = summarize([row("a", 9.0, days_ago(1)), vote], small, TODAY)
    assert s.points == ((days_ago(1), 9.0),) and s.total_answers == 1
    assert [(p.topic, p.mastery) for p in s.topics] == [("basics", 9.0), ("tensors", 9.0)]


def test_nothing_graded_is_empty(small: QuestionBank) -> None:
    s = summarize([row("a", None, days_ago(0))], small, TODAY)
    assert s.is_empty and s.points == () and s.topics == () and s.recent == () and s.streak == 0
    assert [p.answered for p in s.levels] == [0, 0, 0]
    assert [p.total for p in s.levels] == [2, 1, 1]
    assert summarize([], small, TODAY).is_empty


@pytest.mark.parametrize(
    ("ago", "streak"),
    [
        ((0, 1, 2), 3),  # ending today
        ((1, 2, 3), 3),  # ending yesterday: today is not over yet
        ((0, 0, 1, 3), 2),  # two answers on one day count once; a gap ends it
        ((2, 3, 4), 0),  # nothing yesterday or today: broken
        ((), 0),
    ],
)
def test_streak(small: QuestionBank, ago: tuple[int, ...], streak: int) -> None:
    assert summarize([row("a", 5.0, days_ago(n)) for n in ago], small, TODAY).streak == streak


def test_streak_counts_utc_days(small: QuestionBank) -> None:
    moscow = timezone(timedelta(hours=3))
    # 01:00 in Moscow on the 29th is 22:00 UTC on the 28th: yesterday, so today still counts.
    late = datetime(2026, 11, 29, 1, tzinfo=moscow)
    assert summarize([row("a", 5.0, late)], small, TODAY).streak == 1
    assert summarize([row("a", 5.0, late)], small, TODAY + timedelta(days=1)).streak == 0


def test_recent_are_the_last_five_newest_first(small: QuestionBank) -> None:
    rows = [row("abcd"[i % 4], float(i), days_ago(10 - i), f"q{i}") for i in range(8)]
    recent = summarize(rows, small, TODAY).recent
    assert [(r.question, r.score) for r in recent] == [(f"q{i}", float(i)) for i in (7, 6, 5, 4, 3)]
    assert recent[0].question_id == "d" and recent[0].when == days_ago(3)


async def test_load_progress_reads_private_and_group_answers(sessions, bank: QuestionBank) -> None:
    async with sessions() as session, session.begin():
        session.add_all([User(id=1, language="ru"), GroupChat(id=-100)])
        await session.flush()
        asked = AskedQuestion(user_id=1, chat_id=1, question_id="zero-grad")
        rnd = Round(chat_id=-100, level="junior", question_ids=["autograd"], seconds=60)
        session.add_all([asked, rnd])
        await session.flush()
        rq = RoundQuestion(round_id=rnd.id, chat_id=-100, position=0, question_id="autograd")
        session.add(rq)
        await session.flush()
        session.add_all(
            [
                Answer(asked_id=asked.id, user_id=1, question_id="zero-grad", text="…",
                       language="ru", score=6.5, created_at=NOON - timedelta(days=1)),
                RoundAnswer(round_question_id=rq.id, user_id=1, name="Ann", text="…",
                            language="ru", score=4.0, answered_at=NOON),
            ]
        )  # fmt: skip
    s = await load_progress(sessions, bank, 1, "ru", TODAY)
    assert s.points == ((NOON - timedelta(days=1), 6.5), (NOON, 4.0))
    assert s.streak == 2
    assert s.recent[0].question == bank.questions["autograd"].question.ru
    assert (await load_progress(sessions, bank, 2, "en", TODAY)).is_empty


def summary(small: QuestionBank) -> ProgressSummary:
    rows = [row("abcd"[i % 4], (i * 3.7) % 10, days_ago(6 - i)) for i in range(7)]
    return summarize(rows, small, TODAY)


def test_text_in_both_languages(small: QuestionBank) -> None:
    s = summary(small)
    ru, en = render_progress_text(s, "ru"), render_progress_text(s, "en")
    assert ru.startswith("Ваш прогресс: 7 оценённых ответов\n")
    assert en.startswith("Your progress: 7 graded answers\n")
    assert "Junior: 2/2" in ru and "Senior: 1/1" in en
    assert "🔥 Серия: 7 дней подряд" in ru and "🔥 Streak: 7 days in a row" in en
    # The weakest topics (d: gpu 1.1, c: autograd 2.2) by name in the user's language
    assert "• работа с GPU: 1.1/10, вопросов 1 из 1\n• autograd и градиенты: 2.2/10" in ru
    assert "• working with GPUs: 1.1/10, 1 of 1 questions\n• autograd and gradients: 2.2/10" in en
    latest = s.recent[0]
    assert f"{latest.score:.1f}/10 — {latest.question}" in en
    for text in (ru, en):
        assert utf16_len(text) <= CAPTION_LIMIT


def test_text_without_streak_and_when_empty(small: QuestionBank) -> None:
    old = summarize([row("a", 5.0, days_ago(9))], small, TODAY)
    assert "Серии пока нет" in render_progress_text(old, "ru")
    assert "No streak yet" in render_progress_text(old, "en")
    empty = summarize([], small, TODAY)
    assert render_progress_text(empty, "en").startswith("No graded answers yet")
    assert render_progress_text(empty, "ru").startswith("Оценённых ответов пока нет")


def test_text_fits_a_caption_with_long_questions_and_topics(small: QuestionBank) -> None:
    # Astral characters (math letters, emoji) count two UTF-16 units each in Telegram's limit.
    long_question = "𝐱🙂 " * 200
    base = summary(small)
    s = ProgressSummary(
        points=base.points,
        levels=base.levels,
        topics=tuple(TopicProgress("🙂" * 120 + str(i), 1.0 + i, 1, 2) for i in range(10)),
        streak=3,
        recent=tuple(
            RecentAnswer(r.question_id, long_question + "\n" + long_question, r.score, r.when)
            for r in base.recent
        ),
        total_answers=base.total_answers,
    )
    for lang in LANGS:
        text = render_progress_text(s, lang)
        assert utf16_len(text) <= CAPTION_LIMIT, utf16_len(text)
        answers = [line for line in text.splitlines() if "/10 — " in line]
        # Clipped to one line each, and the oldest dropped to fit; the newest and the head stay.
        assert 1 <= len(answers) < len(s.recent)
        assert answers[0].startswith(f"{s.recent[0].score:.1f}/10 — 𝐱🙂 ") and answers[0][-1] == "…"
        assert text.startswith(t(lang, "progress.title", count=7))
        assert t(lang, "progress.streak", days=3) in text


def test_moving_average_uses_fewer_points_at_the_start() -> None:
    assert moving_average([2.0, 4.0, 6.0, 8.0, 10.0, 0.0], 5) == [2.0, 3.0, 4.0, 5.0, 6.0, 5.6]
    assert moving_average([]) == []


def _glyph_problems(
    caplog: pytest.LogCaptureFixture, caught: list[warnings.WarningMessage]
) -> list[str]:
    messages = [str(w.message) for w in caught] + [r.getMessage() for r in caplog.records]
    return [m for m in messages if "glyph" in m.lower() or "missing from font" in m.lower()]


@pytest.mark.parametrize("lang", ["ru", "en"])
def test_chart_is_a_full_size_non_blank_png(
    bank: QuestionBank, lang: str, caplog: pytest.LogCaptureFixture
) -> None:
    # The real bank's questions: the chart's ten weakest topics by their real names.
    questions = list(bank)
    rows = [
        row(q.id, (i * 3.7) % 10, NOON - timedelta(hours=7 * (len(questions) - i)))
        for i, q in enumerate(questions)
    ]
    s = summarize(rows, bank, TODAY)
    with caplog.at_level(logging.WARNING), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        png = render_progress_chart(s, lang)
    assert not _glyph_problems(caplog, caught)
    image = Image.open(io.BytesIO(png))
    assert image.format == "PNG"
    assert image.size == (1000, 700)
    rgb = image.convert("RGB")
    assert len(rgb.getcolors(maxcolors=1 << 20) or ()) > 50  # dots, line, bars, anti-aliased text
    assert ImageStat.Stat(rgb.convert("L")).var[0] > 100  # far from one flat colour


def test_the_charts_font_has_every_letter_of_its_labels(bank: QuestionBank) -> None:
    # Only ten topics are drawn at a time; this covers every topic name and chart label at once.
    font = FT2Font(font_manager.findfont(font_manager.FontProperties()))
    labels = [topic_name(lang, q_topic) for lang in LANGS for q in bank for q_topic in q.topics]
    labels += [
        t(lang, key, n=5) for lang in LANGS for key in TEXTS if key.startswith("progress.chart.")
    ]
    missing = {c for label in labels for c in label if ord(c) not in font.get_charmap()}
    assert not missing, (font.fname, missing)


def test_chart_of_a_single_answer(small: QuestionBank) -> None:
    png = render_progress_chart(summarize([row("a", 5.0, NOON)], small, TODAY), "en")
    assert Image.open(io.BytesIO(png)).size == (1000, 700)


def test_chart_refuses_an_empty_summary(small: QuestionBank) -> None:
    with pytest.raises(ValueError):
        render_progress_chart(summarize([], small, TODAY), "ru")
