"""The graders `eval` compares: ours (bank questions or a reference answer) and plain cosine."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from bot.content.loader import QuestionBank
from bot.content.schema import Question
from bot.evaluation.datasets import Sample
from bot.evaluation.report import Grading
from bot.scoring.encoder import Encoder
from bot.scoring.grade_result import GradeResult
from bot.scoring.grader import Grader
from bot.scoring.pitfalls import PITFALL_THRESHOLD
from bot.scoring.reference import ReferenceGrader
from bot.scoring.text import normalize, split_units

CHUNK = 64  # answers per batch, as the bot's micro-batching queue would group them


def grade_bank_samples(
    grader: Grader, bank: QuestionBank, samples: list[Sample]
) -> Iterator[tuple[Sample, GradeResult]]:
    """Each sample of a bank question with its grade, graded CHUNK at a time."""
    for start in range(0, len(samples), CHUNK):
        chunk = samples[start : start + CHUNK]
        jobs: list[tuple[Question, str, str | None]] = [
            (bank.questions[str(s.question_id)], s.answer, s.lang) for s in chunk
        ]
        yield from zip(chunk, grader.grade_many(jobs), strict=True)


def grade_with(
    grader: Grader,
    reference: ReferenceGrader,
    bank: QuestionBank,
    samples: list[Sample],
    checks: bool = False,
) -> list[Grading]:
    """Bank samples through the grader in batches; external ones against their reference.

    `checks`: count the pitfalls shown as "worth checking" as flags too."""
    bank_samples = [s for s in samples if s.question_id is not None]
    graded = (g for _, g in grade_bank_samples(grader, bank, bank_samples))
    other = [s for s in samples if s.question_id is None]
    against_reference = (
        g
        for start in range(0, len(other), CHUNK)
        for g in reference.grade_many(
            [(s.question_text or "", s.reference or "", s.answer, s.lang)
             for s in other[start : start + CHUNK]]
        )
    )  # fmt: skip
    result: list[Grading] = []
    for sample in samples:
        g = next(graded) if sample.question_id is not None else next(against_reference)
        flags = {p.id for p in g.pitfalls}
        if checks and isinstance(g, GradeResult):
            flags |= {p.id for p in g.checks}
        result.append((g.score, flags))
    return result


def grade_with_cosine(encoder: Encoder, bank: QuestionBank, samples: list[Sample]) -> list[Grading]:
    """The baseline: cosine of the whole answer with the model answer (or reference), x10; a
    pitfall is flagged when any sentence's cosine with its wrong claim reaches the threshold."""
    external = [s for s in samples if s.question_id is None]
    if external:  # one model pass for all answers and references
        answers = encoder.encode([normalize(s.answer) for s in external])
        references = encoder.encode([s.reference or "" for s in external], remember=True)
        scores = iter(np.clip(np.sum(answers * references, axis=1), 0.0, 1.0))
    result: list[Grading] = []
    for sample in samples:
        if sample.question_id is None:
            result.append((round(10 * float(next(scores)), 1), set()))
            continue
        answer = normalize(sample.answer)
        if sample.question_id is not None:
            question = bank.questions[sample.question_id]
            reference = question.answer.get(sample.lang)
        else:
            question, reference = None, sample.reference or ""
        vectors = encoder.encode([answer, reference])
        score = round(10 * float(np.clip(vectors[0] @ vectors[1], 0.0, 1.0)), 1)
        flags: set[str] = set()
        if question is not None and question.pitfalls:
            unit_vectors = encoder.encode(split_units(answer))
            for pitfall in question.pitfalls:
                claims = encoder.encode([pitfall.claim.ru, pitfall.claim.en], remember=True)
                if float(np.max(unit_vectors @ claims.T)) >= PITFALL_THRESHOLD:
                    flags.add(pitfall.id)
        result.append((score, flags))
    return result
