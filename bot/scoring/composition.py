"""How one answer's grade is composed from what the grader measured: key-point coverage,
overall similarity, the misconceptions said, and the caps (generic, "I don't know", off topic,
an answer to another question). See docs/grading.md for how each number was chosen."""

from __future__ import annotations

from collections.abc import Collection, Sequence

import numpy as np

from bot.content.schema import Question
from bot.scoring.analysis import Analysis, QuestionVectors
from bot.scoring.grade_result import GradeResult, PointResult, verdict_for
from bot.scoring.options import GraderOptions
from bot.scoring.pitfall_head import PitfallHead
from bot.scoring.pitfalls import PitfallHit, by_head, by_rule
from bot.scoring.relevance import ANOTHER_QUESTION_CAP
from bot.scoring.relevance_net.judge import RelevanceReader, answered_instead
from bot.scoring.score_model import ScoreModel
from bot.scoring.text import (
    admits_not_knowing,
    guesses_and_admits,
    is_hedged,
    named_terms,
    opens_with_admission,
    overlap,
    reports_belief,
)
from bot.verdicts import Verdict

# Thresholds on calibrated cosine similarity (on all-MiniLM-L6-v2's scale: grader.py,
# UNRELATED_TARGET); docs/grading.md says how they were chosen.
POINT_FLOOR = 0.30  # below this a sentence gives a key point no credit
POINT_FULL = 0.62  # at or above this a sentence gives full credit
POINT_COVERED = 0.50  # credit needed to list a point as covered
TERM_BONUS = 0.18  # an identifier of the point appearing in the answer
HOLISTIC_FLOOR = 0.25
HOLISTIC_FULL = 0.75
PITFALL_PENALTY = 0.15
# A unit this close to a flagged misconception's claim, and closer to it than to the correction,
# earns no key-point credit (compose).
LEANS_TO_CLAIM = 0.50
OFF_TOPIC_RELEVANCE = 0.28
OFF_TOPIC_CAP = 1.0
OFF_TOPIC_OVERLAP = 0.12  # share of the answer's word stems found in the question's texts
GENERIC_CAP = 3.0  # an answer that names none of the question's identifiers
# A short answer (24 words or fewer) that says it does not know or never used it; or one of up to
# 80 words that opens so, says so twice, or says so once while guessing throughout (text.py).
ADMITS_CAP = 1.5


def with_stance(
    head_said: list[PitfallHit],
    head_checks: list[PitfallHit],
    stance_said: list[PitfallHit],
    read: Collection[str],
    vetoed: Collection[tuple[str, str]] = (),
    doubted: Sequence[PitfallHit] = (),
) -> tuple[list[PitfallHit], list[PitfallHit]]:
    """The stance model's verdicts over the head's: its flags (with their probability), then
    the head's flags on a clause it did not read (`read`: the sentences it judged); a hint
    only for a pitfall not said, a sentence not accused and a sentence the model did not veto
    for that pitfall. A head flag on a sentence it read and vetoed stays dropped; so does one
    on a clause of a sentence it read and vetoed for that pitfall (`vetoed`: sentence, pitfall
    id), since the clause says no more than its sentence (on the four threshold sets it dropped
    7 clause flags, 6 of them wrong: docs/grading.md). A hint falls the same way: "model.eval()
    does not turn off gradients", read as not asserting "eval disables gradients", is no
    misconception worth checking. `doubted`: the stance model's own hints (Verdicts.doubted),
    first, by the same rules; a head hint for the same pitfall then gives way."""
    stance_ids = {s.id for s in stance_said}

    def in_vetoed(h: PitfallHit) -> bool:
        return any(h.evidence in s and (s, h.id) in vetoed for s in read)

    said = stance_said + [
        h
        for h in head_said
        if h.id not in stance_ids and h.evidence not in read and not in_vetoed(h)
    ]
    accused = {h.evidence for h in said}
    flagged = {h.id for h in said}
    checks = [
        h for h in doubted if h.id not in flagged and h.evidence not in accused and not in_vetoed(h)
    ]
    hinted = {h.id for h in checks}
    checks += [
        h
        for h in head_checks
        if h.id not in flagged | hinted and h.evidence not in accused and not in_vetoed(h)
    ]
    return said, checks


def ramp(value: float, low: float, high: float) -> float:
    return float(min(max((value - low) / (high - low), 0.0), 1.0))  # scalars: no np.clip


def no_answer(question: Question, language: str) -> GradeResult:
    return GradeResult(
        question_id=question.id,
        language=language,
        score=0.0,
        verdict=Verdict.no_answer,
        points=[PointResult(k.id, False, 0.0, None) for k in question.key_points],
    )


def compose(
    analysis: Analysis,
    qv: QuestionVectors,
    context_sims: np.ndarray,
    head: PitfallHead | None,
    relevance_model: RelevanceReader | None,
    opts: GraderOptions,
    score_model: ScoreModel | None = None,
) -> GradeResult:
    """The grade of one analysed answer. `context_sims`: the whole answer's calibrated cosines
    with the model answer ru/en and the question ru/en; `head`, `relevance_model`: the pitfall
    head and the relevance model, where there are; `score_model`: the fitted score, where there
    is one (else the formula). How the answer compares with every bank question, and the
    relevance model's readings, are on the analysis."""
    question, text, language, units = (
        analysis.question,
        analysis.text,
        analysis.language,
        analysis.units,
    )
    point_sims, claim_sims, fix_sims = (
        analysis.point_sims,
        analysis.claim_sims,
        analysis.fix_sims,
    )
    if head is not None and analysis.matrix is not None:
        pitfalls, checks = by_head(head, question, units, analysis.matrix)
        if analysis.stance is not None:
            pitfalls, checks = with_stance(
                pitfalls,
                checks,
                analysis.stance,
                analysis.stance_read,
                analysis.stance_vetoed,
                analysis.stance_doubted,
            )
    else:
        pitfalls, checks = by_rule(question, units, claim_sims, fix_sims, opts.polarity), []
    # Any unit holding a wrong statement (its sentence, the whole answer) is excluded.
    wrong_units = [i for i, u in enumerate(units) if any(p.evidence in u for p in pitfalls)]
    # So is one that reports a belief ("many think X"): it is about X, not a statement of
    # the key point; its "but actually Y" clause is a unit of its own and still counts.
    whole = len(units) - 1 if len(units) > 1 and units[-1] == text else None
    wrong_units += [i for i, u in enumerate(units) if i != whole and reports_belief(u)]
    # So is one that reads closer to a flagged misconception's claim than to its correction, and
    # close to the claim: it restates the wrong belief in other words ("I take each batch's
    # (pred == y).mean()" beside the flagged "then I average them"), and was shown as covering
    # the very point the misconception contradicts (docs/grading.md, seventeenth attempt). Only
    # where a stance model read the answer: with the pitfall head alone (the bundled MiniLM) a
    # false flag then took the credit of a strong answer's every sentence near the claim.
    flagged = {h.id for h in pitfalls} if analysis.stance is not None else set()
    leaning = [j for j, p in enumerate(question.pitfalls) if p.id in flagged]
    wrong_units += [
        i
        for i in range(len(units))
        if i != whole
        and any(
            claim_sims[i, j] >= LEANS_TO_CLAIM and claim_sims[i, j] > fix_sims[i, j]
            for j in leaning
        )
    ]

    # Best sentence per key point, over both languages of the point. A sentence that states
    # a misconception earns no credit, however close its words are to a key point.
    point_sims[wrong_units, :] = -1.0
    points: list[PointResult] = []
    credits: list[float] = []
    named = named_terms(text, {t for k in question.key_points for t in k.terms})
    for index, point in enumerate(question.key_points):
        best_unit = int(np.argmax(point_sims[:, index]))
        sim = float(point_sims[best_unit, index])
        if opts.terms and any(term in named for term in point.terms):
            sim += TERM_BONUS
        credit = ramp(sim, POINT_FLOOR, POINT_FULL)
        covered = credit >= ramp(POINT_COVERED, POINT_FLOOR, POINT_FULL)
        credits.append(credit * point.weight)
        # A clause of a sentence flagged as a misconception may still earn credit (measured:
        # docs/grading.md), but is not quoted as "your words" under a covered point; nor is
        # one the user is asked to check (a hint): the same words under ✅ and under ⚠️.
        quoted = covered and not any(units[best_unit] in p.evidence for p in (*pitfalls, *checks))
        points.append(
            PointResult(point.id, covered, round(credit, 3), units[best_unit] if quoted else None)
        )
    coverage = sum(credits) / sum(k.weight for k in question.key_points)

    similarity = float(max(context_sims[0], context_sims[1]))
    # A sentence close to one of the question's documented wrong claims is on the subject,
    # however far it is from the correct texts: "eval() turns off gradients" is not off topic.
    relevance = max(
        float(np.max(context_sims)),
        float(np.max(point_sims)),
        float(np.max(claim_sims, initial=-1.0)),
    )
    holistic = ramp(similarity, HOLISTIC_FLOOR, HOLISTIC_FULL)

    raw = opts.coverage_weight * coverage + (1 - opts.coverage_weight) * holistic
    raw -= PITFALL_PENALTY * len(pitfalls)
    score = round(10 * float(np.clip(raw, 0.0, 1.0)), 1)
    has_terms = bool(named)
    short_admission = admits_not_knowing(text)
    admits = short_admission or opens_with_admission(text) or guesses_and_admits(text)
    if not has_terms and (is_hedged(text) or (admits if opts.admits_cap else short_admission)):
        # "no idea, I only used keras", "не особо знаю, честно", "it's about speed maybe…
        # I'd have to look it up, sorry": an admission naming nothing of the question is no
        # answer, not an answer to whichever question its few words happen to sit closest to.
        return no_answer(question, language)
    lexical = overlap(text, set(qv.vocabulary))
    neighbour = analysis.neighbour
    # With or without a score model: `train score` reads them from a grader that has none.
    features = (
        score,
        coverage,
        sum(p.covered for p in points) / len(points),
        max((p.credit for p in points), default=0.0),
        similarity,
        relevance,
        float(len(pitfalls)),
        max((p.probability or 0.0 for p in pitfalls), default=0.0),
        float(len(checks)),
        analysis.other_p or 0.0,
        analysis.nearest_p or 0.0,  # not read: the answer does not lean to another question
        -1.0 if neighbour is None else neighbour.whole_margin,
        float(has_terms),
        float(len(named)),
        lexical,
        float(language == "ru"),
    )
    if score_model is not None:
        score = round(float(score_model.score(np.asarray(features))), 1)
    ceiling = 10.0  # the lowest cap that applies
    off_topic = (
        opts.off_topic_gate
        and not has_terms
        and (relevance < OFF_TOPIC_RELEVANCE or lexical < OFF_TOPIC_OVERLAP)
    )
    if not has_terms and opts.generic_cap:
        # Names nothing concrete the question is about: "it is flexible and pythonic".
        ceiling = min(ceiling, GENERIC_CAP)
    if opts.admits_cap and admits:
        # Naming one API and then "I don't know the rest" is not knowledge of the subject;
        # one short sentence can sit close to every key point of a question. In
        # content/eval and content/heldout every answer of 30 words or fewer that says so
        # has a human grade of 0 or 1; the limit is 24, as a longer answer can hold a lot
        # besides "I don't know X" (tests/unit/test_text.py).
        ceiling = min(ceiling, ADMITS_CAP)
    if off_topic:
        ceiling = min(ceiling, OFF_TOPIC_CAP)
        points = [PointResult(p.id, False, 0.0, None) for p in points]
        pitfalls, checks = [], []
    # Also behind the off-topic gate: the feedback can name the question answered instead.
    other = None
    model = relevance_model
    # Not where it says one of this question's own misconceptions: that is on the subject,
    # however close its words sit to another question ("pick the best epoch on the test set"
    # beside "why does a model fail on new data?").
    if neighbour is not None and not pitfalls:
        other = (
            neighbour.answered()
            if model is None
            else answered_instead(
                neighbour,
                analysis.other_p,
                model.other_at,
                model.lean,
                model.veto,
                analysis.nearest_p,
                model.nearest_at,
                model.nearest_lean,
            )
        )
    if other is not None:
        # Its misconceptions would be judged against the wrong question's claims, and its
        # words quoted under this question's key points would say it answered them.
        ceiling = min(ceiling, ANOTHER_QUESTION_CAP)
        pitfalls, checks = [], []
        points = [PointResult(p.id, False, 0.0, None) for p in points]
    score = min(score, ceiling)
    return GradeResult(
        question_id=question.id,
        language=language,
        score=score,
        verdict=(
            Verdict.off_topic
            if off_topic or other is not None
            else Verdict.weak
            if pitfalls and score == 0  # it said something, and it was wrong
            else verdict_for(score)
        ),
        points=points,
        pitfalls=pitfalls,
        checks=checks,
        similarity=similarity,
        relevance=relevance,
        answers_question=other,
        features=features,
        ceiling=ceiling,
    )
