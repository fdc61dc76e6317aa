"""Round messages as Telegram HTML, built with aiogram's formatting nodes (they escape names)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from aiogram.utils.formatting import Bold, ExpandableBlockQuote, Italic, Text, as_line, as_list

from bot.content.schema import Question
from bot.i18n import t
from bot.services.rounds.items import LeaderboardItem, ResultsItem, RoundQuestionItem, Standing
from bot.services.text_clip import clip
from bot.telegram.rendering import _fmt
from bot.telegram.text_limits import TELEGRAM_TEXT_LIMIT, utf16_len, visible_length

MEDALS = {1: "🥇", 2: "🥈", 3: "🥉"}
NAME_LIMIT = 40
MAX_LINES = 60  # participants listed in one message; the rest are counted
# Score lines a results message keeps before it gives up the pitfalls and key points for them:
# the scores are what the group waits for.
MIN_SCORE_LINES = 10
SECTION_BREAK = 2  # the "\n\n" between a message's sections


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


def _more(lang: str, count: int) -> str:
    return t(lang, "round_more", count=count)


def _shown(sizes: Sequence[int], total: int, room: int, lang: str) -> int:
    """How many of the first lines (their lengths in `sizes`, one line break each) fit in
    `room` UTF-16 units together with the line counting the `total` - shown left out."""
    shown = len(sizes)
    used = sum(sizes) + max(shown - 1, 0)
    while shown:
        left_out = total - shown
        if used + (1 + utf16_len(_more(lang, left_out)) if left_out else 0) <= room:
            return shown
        shown -= 1
        used -= sizes[shown] + (1 if shown else 0)
    return 0


def _fitted(lines: Sequence[Text], total: int, room: int, lang: str) -> list[Text | str]:
    """The best lines that fit in `room` (Telegram refuses a longer message outright, and the
    group would see nothing), then "… and K others" for the rest of the `total`."""
    shown = _shown([visible_length(line) for line in lines], total, room, lang)
    kept: list[Text | str] = list(lines[:shown])
    if shown < total:
        kept.append(_more(lang, total - shown))
    return kept


def _score_lines(item: ResultsItem, lang: str) -> list[Text]:
    lines = []
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
    return lines


def _right_answer(
    item: ResultsItem, lang: str, bank_question: Callable[[str], Question | None]
) -> Text | None:
    right = bank_question(item.correct_option) if item.correct_option else None
    if right is None or right.short_answer is None:
        return None
    return as_list(Bold(t(lang, "quiz_right_answer")), right.short_answer.get(lang))


def _explanations(item: ResultsItem, lang: str) -> list[Text]:
    """The key points the best answer covered, the pitfalls participants fell into."""
    question = item.question
    parts: list[Text] = []
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
    return parts


def render_results(
    item: ResultsItem, lang: str, bank_question: Callable[[str], Question | None] = lambda _: None
) -> Text:
    """Always within Telegram's 4096 characters (a longer message is refused and the group
    would see no results): as many score lines as fit, best first, the rest counted; the
    pitfalls, then the covered key points, given up when they would leave fewer than
    MIN_SCORE_LINES; the model answer only in the room that is left."""
    question = item.question
    before: list[Text] = [
        Bold(t(lang, "round_results_header", position=item.position, total=item.total))
    ]
    if question is not None:
        before.append(Italic(clip(question.question.get(lang), 300)))
    right = _right_answer(item, lang, bank_question)
    after = ([right] if right is not None else []) + _explanations(item, lang)
    droppable = len(after) - (right is not None)
    lines = _score_lines(item, lang)
    sizes = [visible_length(line) for line in lines]
    total = len(item.lines)
    while True:
        fixed = visible_length(as_list(*before, *after, sep="\n\n")) + SECTION_BREAK
        room = TELEGRAM_TEXT_LIMIT - fixed
        if not droppable or _shown(sizes, total, room, lang) >= min(MIN_SCORE_LINES, total):
            break
        after.pop()  # the pitfalls first, then the covered key points
        droppable -= 1
    scores: Text | str = (
        as_list(*_fitted(lines, total, room, lang)) if total else t(lang, "round_no_answers")
    )
    body = as_list(*before, scores, *after, sep="\n\n")
    if visible_length(body) > TELEGRAM_TEXT_LIMIT:  # only a pathological bank entry gets here
        body = as_list(*before, scores, sep="\n\n")
    if question is None:
        return body
    # The model answer takes whatever room is left in Telegram's 4096 characters.
    title = Bold(t(lang, "model_answer"))
    room = TELEGRAM_TEXT_LIMIT - visible_length(body) - visible_length(title) - 8
    if room < 80:
        return body
    answer = clip(question.answer.get(lang).strip(), room)
    full = as_list(body, as_list(title, ExpandableBlockQuote(answer)), sep="\n\n")
    # clip() counts characters, Telegram UTF-16 units: an answer with emoji may still overflow.
    return full if visible_length(full) <= TELEGRAM_TEXT_LIMIT else body


def _standing_lines(
    title: Text, standings: list[Standing], out_of: int | None, lang: str
) -> list[Text | str]:
    """The standings under `title` that fit in one message, best first; the rest counted."""
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
    room = TELEGRAM_TEXT_LIMIT - visible_length(title) - 1  # the title's line break
    return _fitted(lines, len(standings), room, lang)


def render_leaderboard(item: LeaderboardItem, lang: str) -> Text:
    title = Bold(t(lang, "round_leaderboard", questions=item.questions))
    if not item.standings:
        return as_list(title, t(lang, "round_leaderboard_empty"))
    return as_list(title, *_standing_lines(title, item.standings, item.questions * 10, lang))


def render_top(standings: list[Standing], lang: str) -> Text:
    if not standings:
        return Text(t(lang, "round_top_empty"))
    title = Bold(t(lang, "round_top_title"))
    return as_list(title, *_standing_lines(title, standings, None, lang))
