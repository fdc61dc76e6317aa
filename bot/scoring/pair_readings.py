"""The pair models' readings of analysed answers, each model in one call for all of them: the
stance model's P(asserts) for the pitfall head's candidate sentences (bot/scoring/stance/), and
the relevance model's P(other) (bot/scoring/relevance_net/)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from bot.content.schema import Question
from bot.scoring.analysis import Analysis
from bot.scoring.pitfall_head import PitfallHead, said_logits
from bot.scoring.pitfalls import candidate_count
from bot.scoring.relevance_net.judge import RelevanceReader, read_other, reads_nearest
from bot.scoring.stance.judge import Candidate, PairModel, candidates, read_all, verdicts
from bot.scoring.text import split_units

# Per answer: its sentences read, their candidates, P(asserts) of each, their claim similarities.
StanceReading = tuple[list[str], list[Candidate], np.ndarray, np.ndarray]


def read_relevance(
    model: RelevanceReader,
    analyses: list[Analysis],
    questions: Mapping[str, Question],
    nearest_lean: float | None = None,
) -> None:
    """The relevance model's P(other) of every answer with its own question and, where the
    answer sits `nearest_lean` (default: the model's) or more closer to another bank question,
    with that one too; all in one call."""
    lean = model.nearest_lean if nearest_lean is None else nearest_lean
    nearest = [a for a in analyses if a.neighbour is not None and reads_nearest(a.neighbour, lean)]
    readings = read_other(
        model,
        [(a.question, a.text, a.language) for a in analyses]
        + [
            (questions[a.neighbour.by_whole], a.text, a.language)
            for a in nearest
            if a.neighbour is not None
        ],
    )
    for a, other_p in zip(analyses, readings, strict=False):
        a.other_p = other_p
    for a, nearest_p in zip(nearest, readings[len(analyses) :], strict=True):
        a.nearest_p = nearest_p


def read_stance(
    head: PitfallHead, model: PairModel, analyses: list[Analysis], clauses: bool
) -> None:
    """The stance model's verdicts on every answer (bot/scoring/stance/judge.py)."""
    for a, (chosen, found, asserts, claim_sims) in zip(
        analyses, stance_readings(head, model, analyses, model.head_floor, clauses), strict=True
    ):
        a.stance = verdicts(model, a.question, chosen, found, asserts, head.flag_at, claim_sims)
        a.stance_read = tuple(chosen)
        a.stance_vetoed = frozenset(
            (chosen[c.sentence], a.question.pitfalls[c.pitfall].id)
            for c, p in zip(found, asserts, strict=True)
            if p < model.veto
        )


def stance_readings(
    head: PitfallHead, model: PairModel, analyses: list[Analysis], floor: float, clauses: bool
) -> list[StanceReading]:
    """Per answer: its sentences, the head's candidate sentences per pitfall at `floor` or
    more, the stance model's P(asserts) for each (all answers in one call), and the
    sentences' claim similarities. `clauses`: the answers' units include clauses, which are
    not read (sentences only)."""
    rows, sims = [], []
    for a in analyses:
        assert a.matrix is not None
        # Sentences only (not clauses, not the whole of a multi-sentence answer).
        sentences = set(split_units(a.text, clauses=False))
        index = [
            i
            for i, u in enumerate(a.units[: candidate_count(a.units)])
            if not clauses or u in sentences
        ]
        raw = head.logits(a.matrix)
        said = said_logits(a.matrix, raw)[index]
        chosen = [a.units[i] for i in index]
        rows.append((chosen, candidates(a.question, chosen, raw[index], said, floor)))
        sims.append(a.claim_sims[index])
    return [
        (chosen, found, asserts, claim_sims)
        for (chosen, found), asserts, claim_sims in zip(
            rows, read_all(model, rows), sims, strict=True
        )
    ]
