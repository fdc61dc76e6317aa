"""Training pairs for the relevance model, from labelled answers and the bank.

Every answer to a question is a positive pair with that question, whatever its quality: a wrong
or vague answer is still an answer to it, and grading it is the grader's job. Negatives: the
same answer with one of its question's nearest neighbours (the hard case: a fluent answer to a
neighbouring question), sometimes with a far question, and the labelled off-topic answers with
their own question (and, as positives, with the question they do answer). The bank's model
answers add a positive and a neighbour negative each.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from bot.content.schema import Question
from bot.scoring.relevance_net.model import ANSWERS, OTHER, question_side

OFF_TOPIC = "offtopic"
NO_ANSWER = "dontknow"
NEIGHBOURS = 3  # a negative comes from one of the question's nearest questions
FAR_SHARE = 1 / 3  # and, for this share of answers, one more from any other question


class LabelledAnswer(Protocol):
    @property
    def question_id(self) -> str | None: ...

    @property
    def answer(self) -> str: ...

    @property
    def lang(self) -> str: ...

    @property
    def kind(self) -> str | None: ...

    @property
    def answers_question(self) -> str | None: ...


@dataclass(frozen=True)
class RelevancePair:
    left: str  # the question's side (question_side)
    right: str  # the answer
    label: int  # OTHER or ANSWERS


def nearest_questions(ids: Sequence[str], vectors: np.ndarray) -> dict[str, list[str]]:
    """Every question's other questions, nearest first, by the cosine of their (normalised)
    vectors."""
    sims = vectors @ vectors.T
    np.fill_diagonal(sims, -np.inf)
    order = np.argsort(-sims, axis=1)
    return {qid: [ids[j] for j in order[i][: len(ids) - 1]] for i, qid in enumerate(ids)}


def build_pairs(
    questions: dict[str, Question],
    answers: Iterable[LabelledAnswer],
    nearest: dict[str, list[str]],
    seed: int = 0,
) -> list[RelevancePair]:
    rng = random.Random(seed)
    ids = sorted(questions)
    pairs: list[RelevancePair] = []

    def negatives(question: Question, text: str, lang: str, far: bool) -> None:
        close = nearest[question.id][:NEIGHBOURS]
        other = questions[rng.choice(close)]
        pairs.append(RelevancePair(question_side(other, lang), text, OTHER))
        rest = [q for q in ids if q != question.id and q not in close]
        if far and rest:
            pairs.append(
                RelevancePair(question_side(questions[rng.choice(rest)], lang), text, OTHER)
            )

    for row in answers:
        question = questions.get(row.question_id or "")
        if question is None or row.kind == NO_ANSWER:
            continue
        side = question_side(question, row.lang)
        if row.kind == OFF_TOPIC:
            pairs.append(RelevancePair(side, row.answer, OTHER))
            # It does answer the question it was written for: a positive there, so that the
            # model learns the pair, not "this answer's style reads as off-topic".
            meant = questions.get(row.answers_question or "")
            if meant is not None and meant.id != question.id:
                pairs.append(RelevancePair(question_side(meant, row.lang), row.answer, ANSWERS))
            continue
        pairs.append(RelevancePair(side, row.answer, ANSWERS))
        negatives(question, row.answer, row.lang, rng.random() < FAR_SHARE)
    for qid in ids:
        question = questions[qid]
        for lang in ("ru", "en"):
            text = question.answer.get(lang)
            pairs.append(RelevancePair(question_side(question, lang), text, ANSWERS))
            negatives(question, text, lang, far=False)
    return pairs
