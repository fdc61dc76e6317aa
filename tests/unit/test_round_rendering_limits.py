"""Round results and leaderboards always fit in one Telegram message (4096 UTF-16 units after
entity parsing): Telegram refuses a longer one, and the group would never see its results."""

from __future__ import annotations

import re

import pytest
from aiogram.utils.formatting import Text

from bot.content.loader import QuestionBank
from bot.content.schema import Question
from bot.i18n import t
from bot.services.rounds.items import LeaderboardItem, ResultsItem, ScoreLine, Standing
from bot.telegram.rounds.rendering import render_leaderboard, render_results, render_top
from tests.fake_telegram import parse_html, utf16_len

LIMIT = 4096
MORE = {"en": re.compile(r"^… and (\d+) others?$"), "ru": re.compile(r"^… и ещё (\d+) участник")}


def names(count: int, emoji: bool = False) -> list[str]:
    """Distinct 40-character names (the most a line shows), with characters HTML escapes; with
    `emoji`, mostly characters Telegram counts twice."""
    filler = "😀" if emoji else "y"
    return [f"P{i:03d} <&> " + filler * 31 for i in range(count)]


def visible(node: Text) -> str:
    """The text as Telegram shows it: the HTML parsed the way the fake Bot API parses it."""
    return parse_html(node.as_html())


def more_count(text: str, lang: str) -> int:
    found = [m for m in (MORE[lang].match(line) for line in text.splitlines()) if m]
    assert len(found) == 1, text[-300:]
    return int(found[0].group(1))


def longest_question(bank: QuestionBank, lang: str) -> Question:
    """The bank question with the most to say after the scores: its key points and pitfalls."""
    return max(
        bank,
        key=lambda q: (
            sum(len(k.text(lang)) for k in q.key_points)
            + sum(len(p.claim.get(lang)) + len(p.correction.get(lang)) for p in q.pitfalls)
        ),
    )


@pytest.mark.parametrize("emoji", [False, True])
@pytest.mark.parametrize("lang", ["en", "ru"])
def test_results_of_sixty_participants_fit_with_the_top_scorers(
    bank: QuestionBank, lang: str, emoji: bool
) -> None:
    question = longest_question(bank, lang)
    people = names(60, emoji)
    lines = [ScoreLine(i, name, round(10 - i * 0.1, 1), i + 1) for i, name in enumerate(people)]
    lines[50:] = [ScoreLine(i, people[i], None, None) for i in range(50, 60)]  # did not answer
    item = ResultsItem(
        round_question_id=1,
        chat_id=-1,
        question=question,
        position=1,
        total=5,
        lines=lines,
        best_covered=[k.id for k in question.key_points],
        pitfalls={p.id: 7 for p in question.pitfalls},
        question_message_id=10,
    )
    text = visible(render_results(item, lang))
    assert utf16_len(text) <= LIMIT
    shown = [line.name for line in item.lines if line.name in text]
    assert shown == [line.name for line in item.lines[: len(shown)]]  # the best ones
    assert len(shown) >= 10
    assert more_count(text, lang) == 60 - len(shown)
    assert t(lang, "round_results_header", position=1, total=5) in text


def test_a_small_round_keeps_everything(bank: QuestionBank) -> None:
    question = longest_question(bank, "en")
    item = ResultsItem(
        round_question_id=1,
        chat_id=-1,
        question=question,
        position=2,
        total=2,
        lines=[ScoreLine(1, "Ann & <Bo>", 9.0, 1), ScoreLine(2, "Cy", None, None)],
        best_covered=[question.key_points[0].id],
        pitfalls={question.pitfalls[0].id: 1},
        question_message_id=10,
    )
    text = visible(render_results(item, "en"))
    assert "🥇 Ann & <Bo> — 9/10" in text and "— Cy: no answer" in text
    assert "The best answer covered:" in text and "Pitfalls participants fell into:" in text
    assert "… and" not in text
    assert question.answer.en.split()[0] in text.split(t("en", "model_answer"))[-1]


@pytest.mark.parametrize("emoji", [False, True])
@pytest.mark.parametrize("lang", ["en", "ru"])
def test_leaderboard_of_sixty_long_names_fits(lang: str, emoji: bool) -> None:
    standings = [
        Standing(i, name, round(200 - i * 0.7, 1), 20, i + 1)
        for i, name in enumerate(names(60, emoji))
    ]
    text = visible(render_leaderboard(LeaderboardItem(1, -1, 20, standings), lang))
    assert utf16_len(text) <= LIMIT
    shown = [s.name for s in standings if s.name in text]
    assert shown == [s.name for s in standings[: len(shown)]] and len(shown) >= 10
    assert more_count(text, lang) == 60 - len(shown)


@pytest.mark.parametrize("lang", ["en", "ru"])
def test_all_time_leaderboard_of_a_big_group_fits(lang: str) -> None:
    standings = [
        Standing(i, name, round(5000 - i * 3.3, 1), 1000 - i, i + 1)
        for i, name in enumerate(names(300))
    ]
    text = visible(render_top(standings, lang))
    assert utf16_len(text) <= LIMIT
    shown = [s.name for s in standings if s.name in text]
    assert shown == [s.name for s in standings[: len(shown)]] and len(shown) >= 10
    assert more_count(text, lang) == 300 - len(shown)
