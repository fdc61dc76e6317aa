"""Quiz polls built from the bank: the right short answer plus distractors from the same topics."""

from __future__ import annotations

import random

from bot.content.loader import QuestionBank
from bot.content.schema import Language, Level, Question
from bot.services.text_clip import clip

OPTIONS = 4
OPTION_LIMIT = 100  # Telegram: 1-100 characters per poll option
QUESTION_LIMIT = 300  # Telegram: 1-300 characters per poll question
EXPLANATION_LIMIT = 200  # Telegram: quiz explanation, 0-200 characters
QUIZ_SECONDS = 30


def quiz_questions(bank: QuestionBank, level: Level) -> list[Question]:
    return [q for q in bank.by_level(level) if q.short_answer is not None]


def build_options(
    question: Question, bank: QuestionBank, rng: random.Random
) -> tuple[list[str], int]:
    """Question ids whose short answers are the options, shuffled, and the right one's index.

    Distractors are other questions' short answers, those sharing the most topics first: they
    sound plausible, yet each is the right answer to a different question.
    """
    topics = set(question.topics)
    others = [q for q in bank if q.id != question.id and q.short_answer is not None]
    rng.shuffle(others)
    others.sort(key=lambda q: -len(topics & set(q.topics)))
    ids = [question.id] + [q.id for q in others[: OPTIONS - 1]]
    rng.shuffle(ids)
    return ids, ids.index(question.id)


def option_text(question: Question, lang: Language) -> str:
    assert question.short_answer is not None
    return clip(question.short_answer.get(lang), OPTION_LIMIT)


def explanation(question: Question, lang: Language) -> str:
    """Shown by Telegram after a wrong answer: the right short answer, within 200 characters."""
    return clip(f"✅ {option_text(question, lang)}", EXPLANATION_LIMIT)
