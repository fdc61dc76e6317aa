"""When a text answer is taken: the one rule for answers (group rounds apply it; interviews.py,
which takes interview and daily answers, still spells out the same rule and numbers).

An answer is clipped to MAX_ANSWER_CHARS, then needs MIN_ANSWER_WORDS words, unless its
substance is "I don't know" (punctuation alone counts as that): such an answer is taken as it is.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.scoring.text import is_dont_know, words

MIN_ANSWER_WORDS = 3
MAX_ANSWER_CHARS = 4096


@dataclass(frozen=True)
class Verdict:
    text: str  # the answer as it is stored: clipped to MAX_ANSWER_CHARS
    too_short: bool = False


def accept(text: str) -> Verdict:
    text = text[:MAX_ANSWER_CHARS]
    return Verdict(text, too_short=not is_dont_know(text) and len(words(text)) < MIN_ANSWER_WORDS)
