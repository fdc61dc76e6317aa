"""Round messages as Telegram HTML, built with aiogram's formatting nodes (they escape names)."""

from __future__ import annotations

from collections.abc import Callable

from aiogram.utils.formatting import Bold, ExpandableBlockQuote, Italic, Text, as_line, as_list

from bot.content.schema import Question
from bot.i18n import t
from bot.services.rounds.items import LeaderboardItem, ResultsItem, RoundQuestionItem, Standing
from bot.telegram.rendering import _fmt
from bot.telegram.text_limits import TELEGRAM_TEXT_LIMIT, clip, visible_length

MEDALS = {1: "🥇", 2: "🥈", 3: "🥉"}
NAME_LIMIT = 40
MAX_LINES = 60  # participants listed in one message; the rest are counted


def render_round_question(item: RoundQuestionItem, lang: str) -> Text:
    header = t(
        lang,
        "round_question_header",
        position=item.position,
        total=item.total,
        level=item.question.level.value,
    )
    return as_list(
        Bold(header),
        item.question.question.get(lang),
        Italic(t(lang, "round_question_hint", seconds=item.seconds)),
    )


def _place(rank: int | None) -> str:
    if rank is None:
        return "—"
    return MEDALS.get(rank, f"{rank}.")


def _name(name: str) -> str:
    return clip(name, NAME_LIMIT) or "?"


def render_results(
    item: ResultsItem, lang: str, bank_question: Callable[[str], Question | None] = lambda _: None
) -> Text:
    header = Bold(t(lang, "round_results_header", position=item.position, total=item.total))
    lines: list[Text | str] = []
    for line in item.lines[:MAX_LINES]:
        if line.score is None:
            lines.append(as_line("— ", _name(line.name), ": ", t(lang, "round_no_answer"), end=""))
        else:
            lines.append(
                as_line(
                    _place(line.rank),
                    " ",
                    _name(line.name),
                    " — ",
                    f"{_fmt(line.score)}/10",
                    end="",
                )
            )
    if len(item.lines) > MAX_LINES:
        lines.append(f"… +{len(item.lines) - MAX_LINES}")
    parts: list[Text | str] = [header]
    if item.question is not None:
        parts.append(Italic(clip(item.question.question.get(lang), 300)))
    parts.append(as_list(*lines) if lines else t(lang, "round_no_answers"))
    question = item.question
    right = bank_question(item.correct_option) if item.correct_option else None
    if right is not None and right.short_answer is not None:
        parts.append(as_list(Bold(t(lang, "quiz_right_answer")), right.short_answer.get(lang)))
    if question is not None and item.best_covered:
        covered = [
            as_line("✅ ", question.key_point(pid).text(lang), end="")
            for pid in item.best_covered
            if any(k.id == pid for k in question.key_points)
        ]
        if covered:
            parts.append(as_list(Bold(t(lang, "round_best_covered")), *covered))
    if question is not None and item.pitfalls:
        fell = []
        for pitfall in question.pitfalls:
            count = item.pitfalls.get(pitfall.id)
            if count:
                fell.append(
                    as_line(
                        "⚠️ ",
                        Italic(pitfall.claim.get(lang)),
                        f" ({count}) → ",
                        pitfall.correction.get(lang),
                        end="",
                    )
                )
        if fell:
            parts.append(as_list(Bold(t(lang, "round_pitfalls")), *fell))
    body = as_list(*parts, sep="\n\n")
    if question is None:
        return body
    # The model answer takes whatever room is left in Telegram's 4096 characters.
    title = Bold(t(lang, "model_answer"))
    room = TELEGRAM_TEXT_LIMIT - visible_length(body) - visible_length(title) - 8
    if room < 80:
        return body
    answer = clip(question.answer.get(lang).strip(), room)
    return as_list(body, as_list(title, ExpandableBlockQuote(answer)), sep="\n\n")


def _standing_lines(standings: list[Standing], out_of: int | None, lang: str) -> list[Text]:
    lines = []
    for row in standings[:MAX_LINES]:
        total = f"{_fmt(row.total)}/{out_of}" if out_of else _fmt(row.total)
        lines.append(
            as_line(
                _place(row.rank),
                " ",
                _name(row.name),
                " — ",
                total,
                " · ",
                t(lang, "round_answers_count", count=row.answers),
                end="",
            )
        )
    return lines


def render_leaderboard(item: LeaderboardItem, lang: str) -> Text:
    title = Bold(t(lang, "round_leaderboard", questions=item.questions))
    lines = _standing_lines(item.standings, item.questions * 10, lang)
    return as_list(title, *lines) if lines else as_list(title, t(lang, "round_leaderboard_empty"))


def render_top(standings: list[Standing], lang: str) -> Text:
    if not standings:
        return Text(t(lang, "round_top_empty"))
    return as_list(Bold(t(lang, "round_top_title")), *_standing_lines(standings, None, lang))
