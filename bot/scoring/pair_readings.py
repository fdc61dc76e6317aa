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
from bot.scoring.stance.flag_model import CandidateReading, features
from bot.scoring.stance.judge import (
    Candidate,
    PairModel,
    candidates,
    head_flag,
    read_all,
    verdicts,
)
from bot.scoring.stance.model import ASSERTS, REJECTS
from bot.scoring.text import split_units

# Per answer: its sentences read, their candidates, P(asserts) of each, their claim
# similarities, and what was read of each candidate (for the flag model).
StanceReading = tuple[list[str], list[Candidate], np.ndarray, np.ndarray, list[CandidateReading]]


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
    head: PitfallHead, model: PairModel, analyses: list[Analysis], clauses: bool, flags: bool = True
) -> None:
    """The stance model's verdicts on every answer (bot/scoring/stance/judge.py); `flags`: with
    its flag model, where one was fitted."""
    for a, (chosen, found, asserts, claim_sims, read) in zip(
        analyses, stance_readings(head, model, analyses, model.head_floor, clauses), strict=True
    ):
        judged = verdicts(
            model,
            a.question,
            chosen,
            found,
            asserts,
            head.flag_at,
            claim_sims,
            read if flags else None,
        )
        a.stance, a.stance_doubted = judged.said, judged.doubted
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
    rows, sims, others = [], [], []
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
        points = a.point_sims[index]
        best_point = points.max(axis=1) if points.shape[1] else np.zeros(len(index))
        others.append((raw[index], said, a.fix_sims[index], best_point))
    result: list[StanceReading] = []
    for (chosen, found), probabilities, claim_sims, (raw, said, fix_sims, best_point) in zip(
        rows, read_all(model, rows), sims, others, strict=True
    ):
        read = [
            CandidateReading(
                float(p[ASSERTS]),
                float(p[REJECTS]),
                float(raw[c.sentence, c.pitfall]),
                float(said[c.sentence, c.pitfall]),
                float(claim_sims[c.sentence, c.pitfall]),
                float(fix_sims[c.sentence, c.pitfall]),
                float(best_point[c.sentence]),
            )
            for c, p in zip(found, probabilities, strict=True)
        ]
        result.append((chosen, found, probabilities[:, ASSERTS], claim_sims, read))
    return result


def flag_rows(
    head: PitfallHead, model: PairModel, analyses: list[Analysis], clauses: bool
) -> list[list[tuple[str, np.ndarray, bool]]]:
    """For fitting the flag model: per answer, per pitfall with candidates, (its id, the flag
    model's features, whether the head's own flag stands there without it)."""
    result = []
    for a, (_, found, asserts, _, read) in zip(
        analyses, stance_readings(head, model, analyses, model.head_floor, clauses), strict=True
    ):
        rows = []
        for j, pitfall in enumerate(a.question.pitfalls):
            mine = [(c, float(p)) for c, p in zip(found, asserts, strict=True) if c.pitfall == j]
            if not mine:
                continue
            own = head_flag(mine, head.flag_at, model.veto)
            readings = [r for c, r in zip(found, read, strict=True) if c.pitfall == j]
            rows.append((pitfall.id, features(readings), own is not None))
        result.append(rows)
    return result
