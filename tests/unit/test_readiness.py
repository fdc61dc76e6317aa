"""The readiness estimate (`/report`): frequency-weighted latest scores per topic and level
against the 7/10 bar, what to practise next, and the report as Telegram renders it."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from bot.content.loader import QuestionBank
from bot.content.schema import KeyPoint, Level, Pitfall, Question, Text
from bot.services.history import HistoryRow
from bot.services.readiness import (
    Standing,
    TopicReadiness,
    latest_scores,
    load_readiness,
    readiness,
    weight,
)
from bot.storage.models import Answer, AskedQuestion, User
from bot.telegram.report_rendering import render_readiness_line, render_report
from bot.telegram.text_limits import TELEGRAM_TEXT_LIMIT, visible_length

T0 = datetime(2026, 11, 1, 9, tzinfo=UTC)


def question(
    qid: str,
    level: str = "junior",
    frequency: str = "sometimes",
    topics: tuple[str, ...] = ("autograd",),
    follow_ups: tuple[str, ...] = (),
    text: str | None = None,
) -> Question:
    return Question(
        id=qid,
        level=Level(level),
        frequency=frequency,
        topics=topics,
        question=Text(ru=text or f"Вопрос {qid}?", en=text or f"Question {qid}?"),
        answer=Text(ru="ответ", en="answer"),
        key_points=tuple(KeyPoint(id=f"k{i}", ru="пункт", en="point") for i in range(3)),
        pitfalls=(Pitfall(id="p", claim=Text(ru="а", en="a"), correction=Text(ru="б", en="b")),),
        follow_ups=follow_ups,
    )


def bank_of(*questions: Question) -> QuestionBank:
    # Built directly: unlike load_bank, it does not check follow-ups, so a test can name a
    # question that is not in the bank.
    return QuestionBank({q.id: q for q in questions}, content_hash="test")


def row(qid: str, score: float | None, minutes: int = 0) -> HistoryRow:
    return HistoryRow(
        when=T0 + timedelta(minutes=minutes), where="private", question_id=qid, question="",
        level="", score=score, verdict=None, answer="…",
    )  # fmt: skip


def topic(report_topics: tuple[TopicReadiness, ...], name: str) -> TopicReadiness:
    return next(tr for tr in report_topics if tr.topic == name)


# --- the estimate ------------------------------------------------------------------------------


def test_latest_graded_score_wins_over_an_older_better_one() -> None:
    rows = [row("a", 3.0, minutes=10), row("a", 10.0, minutes=0), row("a", None, minutes=20)]
    rows += [row("b", None), row("c", 6.5, minutes=5), row("c", 8.0, minutes=5)]
    # Ungraded answers are skipped, whatever their time; on a tie the later row wins.
    assert latest_scores(rows) == {"a": 3.0, "c": 8.0}
    bank = bank_of(question("a"))
    assert topic(readiness(bank, latest_scores(rows), "junior").topics, "autograd").status == (
        Standing.below
    )


def test_a_quiz_vote_is_no_score() -> None:
    # Even with the 10 or 0 a vote is stored with: picking an option is recognition, not recall.
    rows = [row("a", 9.0), replace(row("a", 0.0, minutes=5), where="quiz")]
    rows += [replace(row("b", 10.0, minutes=5), where="quiz")]
    assert latest_scores(rows) == {"a": 9.0}


def test_frequency_weights_an_always_question_above_a_sometimes_one() -> None:
    bank = bank_of(question("always", frequency="always"), question("sometimes"))
    # 3 · 10 / (3 + 1) = 7.5: ready; 1 · 10 / (3 + 1) = 2.5: below.
    heavy = topic(readiness(bank, {"always": 10.0}, "junior").topics, "autograd")
    light = topic(readiness(bank, {"sometimes": 10.0}, "junior").topics, "autograd")
    assert heavy.levels[0].score == pytest.approx(7.5) and heavy.status == Standing.ready
    assert light.levels[0].score == pytest.approx(2.5) and light.status == Standing.below
    often = bank_of(question("often", frequency="often"), question("sometimes"))
    assert topic(readiness(often, {"often": 9.0}, "junior").topics, "autograd").levels[
        0
    ].score == pytest.approx(6.0)  # 2 · 9 / 3


def test_an_unanswered_question_counts_as_zero() -> None:
    bank = bank_of(question("a"), question("b"))
    level = topic(readiness(bank, {"a": 10.0}, "junior").topics, "autograd").levels[0]
    assert (level.score, level.answered, level.total) == (5.0, 1, 2)
    assert not level.passed


def test_ready_at_junior_but_not_middle_reads_ready_for_junior() -> None:
    bank = bank_of(question("j"), question("m", "middle"), question("s", "senior"))
    tr = topic(readiness(bank, {"j": 8.0, "m": 4.0, "s": 10.0}, "senior").topics, "autograd")
    assert (tr.status, tr.level) == (Standing.ready, Level.junior)
    assert [(lr.level, lr.score) for lr in tr.levels] == [
        (Level.junior, 8.0),
        (Level.middle, 4.0),
        (Level.senior, 10.0),  # passed, but Middle below it did not: it does not count
    ]
    assert (tr.answered, tr.total) == (3, 3)


def test_the_lowest_present_level_failing_is_below_its_bar() -> None:
    bank = bank_of(
        question("j", topics=("autograd",)),
        question("m", "middle", topics=("autograd",)),
        question("dm", "middle", topics=("distributed",)),
        question("ds", "senior", topics=("distributed",)),
    )
    report = readiness(bank, {"j": 6.9, "m": 10.0, "dm": 2.0, "ds": 10.0}, "senior")
    autograd, distributed = topic(report.topics, "autograd"), topic(report.topics, "distributed")
    assert (autograd.status, autograd.level) == (Standing.below, Level.junior)
    # No junior question in the topic: its lowest level is Middle, and that is the bar missed.
    assert (distributed.status, distributed.level) == (Standing.below, Level.middle)
    assert [lr.level for lr in distributed.levels] == [Level.middle, Level.senior]


def test_levels_without_questions_are_skipped_not_failed() -> None:
    bank = bank_of(question("j"), question("s", "senior"))
    tr = topic(readiness(bank, {"j": 7.0, "s": 7.0}, "junior").topics, "autograd")
    assert (tr.status, tr.level) == (Standing.ready, Level.senior)


def test_a_topic_without_answers_is_untried_not_below() -> None:
    bank = bank_of(question("a", topics=("autograd",)), question("t", topics=("tensors",)))
    report = readiness(bank, {"t": 0.0}, "junior")
    untried = topic(report.topics, "autograd")
    assert (untried.status, untried.level, untried.answered) == (Standing.untried, None, 0)
    assert topic(report.topics, "tensors").status == Standing.below  # answered, scored 0
    assert (report.answered, report.total) == (1, 2)
    assert [tr.topic for tr in report.topics] == ["autograd", "tensors"]


def test_practise_next_order_and_follow_ups() -> None:
    bank = bank_of(
        question("a-always", frequency="always", follow_ups=("b-often", "gone", "c-senior")),
        question("b-often", frequency="often"),
        question("b-tie", "middle", frequency="often"),
        question("c-senior", "senior", frequency="always"),
        question("d-done", frequency="always"),
        question("e-sometimes"),
    )
    latest = {"a-always": 6.0, "d-done": 10.0, "e-sometimes": 2.0}
    report = readiness(bank, latest, "middle")
    # priorities: a-always 3·4 = 12; b-often and b-tie 2·10 = 20 (the tie: junior first);
    # e-sometimes 1·8 = 8; d-done 0 is left out; c-senior is above the user's level.
    assert [(p.question.id, p.priority, p.score) for p in report.practice] == [
        ("b-often", 20.0, None),
        ("b-tie", 20.0, None),
        ("a-always", 12.0, 6.0),
    ]
    # Follow-ups: unknown ids skipped; they may be above the user's level.
    assert [f.id for f in report.practice[2].follow_ups] == ["b-often", "c-senior"]


def test_tie_on_priority_and_level_goes_by_id() -> None:
    bank = bank_of(*(question(qid) for qid in ("d", "b", "c", "a")))
    assert [p.question.id for p in readiness(bank, {}, "junior").practice] == ["a", "b", "c"]


def test_practise_next_is_capped_at_the_users_level() -> None:
    bank = bank_of(
        question("j"),
        question("m", "middle", frequency="always"),
        question("s", "senior", frequency="always"),
    )
    ids = lambda level: [p.question.id for p in readiness(bank, {}, level).practice]  # noqa: E731
    assert ids("junior") == ["j"]
    assert ids("middle") == ["m", "j"]
    assert ids(Level.senior) == ["m", "s", "j"]


async def test_load_readiness_reads_the_users_history(sessions, bank: QuestionBank) -> None:
    async with sessions() as session, session.begin():
        session.add_all([User(id=1), User(id=2)])
        await session.flush()
        asked = [AskedQuestion(user_id=u, chat_id=u, question_id="zero-grad") for u in (1, 1, 2)]
        session.add_all(asked)
        await session.flush()
        session.add_all(
            [
                Answer(asked_id=asked[0].id, user_id=1, question_id="zero-grad", text="old",
                       language="en", score=9.0, created_at=T0),
                Answer(asked_id=asked[1].id, user_id=1, question_id="zero-grad", text="new",
                       language="en", score=2.0, created_at=T0 + timedelta(days=1)),
                Answer(asked_id=asked[2].id, user_id=2, question_id="zero-grad", text="other",
                       language="en", score=10.0, created_at=T0 + timedelta(days=2)),
            ]
        )  # fmt: skip
    report = await load_readiness(sessions, bank, 1, "en", "junior")
    assert report.answered == 1
    # The level's score is the latest 2.0, weighted among the bank's junior autograd questions
    # (the others unanswered, so 0).
    junior = topic(report.topics, "autograd").levels[0]
    peers = [
        q for q in bank.questions.values() if "autograd" in q.topics and q.level == Level.junior
    ]
    expected = 2.0 * weight(bank.questions["zero-grad"]) / sum(weight(q) for q in peers)
    assert (junior.level, junior.answered, junior.total) == (Level.junior, 1, len(peers))
    assert junior.score == pytest.approx(expected)


# --- the message -------------------------------------------------------------------------------


def _mixed_report() -> tuple[QuestionBank, dict[str, float]]:
    bank = bank_of(
        question("aj", topics=("autograd",), follow_ups=("am",)),
        question("am", "middle", topics=("autograd",)),
        question("as", "senior", topics=("autograd",)),
        question("dm", "middle", frequency="always", topics=("distributed",)),
        question("gm", "middle", topics=("gpu",)),
        question("mm", "middle", topics=("memory",)),
        question("tj", topics=("tensors",)),
    )
    return bank, {"aj": 9.0, "am": 8.0, "as": 4.16, "dm": 3.0, "gm": 1.0, "mm": 6.99}


@pytest.mark.parametrize(
    ("lang", "expected"),
    [
        (
            "ru",
            [
                "Готовность по темам",
                "Вопросов с оценкой: 6 из 7. Ваш уровень: Middle.",
                "✅ autograd и градиенты: готовы к уровню Middle; Senior пока 4.1/10",
                "❌ работа с GPU: ниже планки Middle (1/10)",
                "❌ распределённое обучение: ниже планки Middle (3/10)",
                "❌ расход памяти: ниже планки Middle (6.9/10)",  # rounded down: never 7
                "⏳ Ещё не пробовали: тензоры",
                "Что потренировать дальше",
                "1. Вопрос dm?\n    Middle, последняя оценка 3/10",
                "Как считается:",
            ],
        ),
        (
            "en",
            [
                "Readiness by topic",
                "Questions with a score: 6 of 7. Your level: Middle.",
                "✅ autograd and gradients: ready for Middle; Senior so far 4.1/10",
                "❌ distributed training: below the Middle bar (3/10)",
                "❌ memory use: below the Middle bar (6.9/10)",
                "❌ working with GPUs: below the Middle bar (1/10)",
                "⏳ Not tried yet: tensors",
                "Practise next",
                "2. Question tj?\n    Junior, not answered yet",
                "3. Question gm?\n    Middle, last score 1/10",
                "How it is computed:",
            ],
        ),
    ],
)
def test_report_in_both_languages(lang: str, expected: list[str]) -> None:
    bank, latest = _mixed_report()
    text = render_report(readiness(bank, latest, "middle"), lang).as_kwargs()["text"]
    position = -1
    for piece in expected:  # in this order: ready, below, untried, practice, how
        found = text.find(piece)
        assert found > position, (piece, text)
        position = found


def test_report_lists_the_follow_ups_of_a_question_to_practise() -> None:
    bank = bank_of(question("aj", frequency="always", follow_ups=("am",)), question("am", "middle"))
    text = render_report(readiness(bank, {}, "junior"), "en").as_kwargs()["text"]
    assert "1. Question aj?\n    Junior, not answered yet\n    ↳ Question am?" in text
    assert "No graded answers yet" in text and "Not tried yet" not in text


def test_report_when_everything_at_the_users_level_is_perfect() -> None:
    bank = bank_of(question("a"), question("m", "middle"))
    text = render_report(readiness(bank, {"a": 10.0}, "junior"), "ru").as_kwargs()["text"]
    assert "Все вопросы вашего уровня уже на 10/10" in text
    assert "autograd и градиенты: готовы к уровню Junior; Middle пока 0/10" in text


@pytest.mark.parametrize(
    ("lang", "expected"),
    [
        (
            "en",
            "Readiness: 1 topic ready for Middle, 2 topics below the Junior bar, 3 topics below "
            "the Middle bar. Details: /report",
        ),
        (
            "ru",
            "Готовность: готовы к уровню Middle — 1 тема, ниже планки Junior — 2 темы, ниже "
            "планки Middle — 3 темы. Подробнее: /report",
        ),
    ],
)
def test_readiness_line_counts_topics_by_level(lang: str, expected: str) -> None:
    bank, latest = _mixed_report()
    bank = bank_of(*bank, question("cj", topics=("cv",)), question("dj", topics=("data",)))
    latest = latest | {"cj": 1.0, "dj": 5.0}  # tensors stays untried: not in the line
    assert render_readiness_line(readiness(bank, latest, "middle"), lang) == expected


def test_readiness_line_plural_forms_and_no_answers() -> None:
    topics = ("cv", "data", "gpu", "layers", "memory")
    bank = bank_of(*(question(f"q{i}", topics=(name,)) for i, name in enumerate(topics)))
    five = readiness(bank, {f"q{i}": 9.0 for i in range(5)}, "junior")
    assert render_readiness_line(five, "ru") == (
        "Готовность: готовы к уровню Junior — 5 тем. Подробнее: /report"
    )
    assert render_readiness_line(five, "en").startswith("Readiness: 5 topics ready for Junior.")
    none = readiness(bank, {}, "junior")
    assert render_readiness_line(none, "en") == "Readiness: no graded answers yet. Details: /report"
    assert "оценённых ответов пока нет" in render_readiness_line(none, "ru")


def test_question_and_topic_texts_are_escaped() -> None:
    bank = bank_of(
        question("a", frequency="always", text="Is <b>& a tag?", topics=("<i>x&y",)),
    )
    node = render_report(readiness(bank, {"a": 2.0}, "junior"), "en")
    kwargs = node.as_kwargs()
    assert "Is <b>& a tag?" in kwargs["text"]  # plain text; formatting goes in entities
    assert all(e.type in {"bold", "italic"} for e in kwargs["entities"])
    html = node.as_html()
    assert "Is &lt;b&gt;&amp; a tag?" in html and "&lt;i&gt;x&amp;y" in html
    assert "<b>&" not in html and "<i>x" not in html


@pytest.mark.parametrize("lang", ["ru", "en"])
@pytest.mark.parametrize("score", [1.0, 8.0])
def test_the_full_bank_fits_in_one_message(bank: QuestionBank, lang: str, score: float) -> None:
    # Every question answered (badly: all 22 topics below; well: ready lines with the next
    # level), at the top level so that practise-next picks from the whole bank.
    report = readiness(bank, dict.fromkeys(bank.questions, score), "senior")
    assert len(report.topics) >= 20 and len(report.practice) == 3
    node = render_report(report, lang)
    assert visible_length(node) <= TELEGRAM_TEXT_LIMIT
    # And with nothing answered: the practise-next picks carry the most follow-ups.
    assert visible_length(render_report(readiness(bank, {}, "senior"), lang)) <= TELEGRAM_TEXT_LIMIT
