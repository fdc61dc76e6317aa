"""How an analysed answer's grade is composed (bot/scoring/composition.py), on similarities set
by hand: no model."""

from __future__ import annotations

import numpy as np
import pytest

from bot.content.loader import QuestionBank
from bot.scoring.analysis import Analysis, QuestionVectors
from bot.scoring.composition import compose
from bot.scoring.grade_result import GradeResult
from bot.scoring.options import GraderOptions
from bot.scoring.text import stems

PER_BATCH = "I take argmax and compute each batch's accuracy as (pred == y).float().mean()."
AVERAGE = "Then I average those accuracies over the whole loader."


def graded(bank: QuestionBank, per_batch_claim: float, per_batch_fix: float) -> GradeResult:
    """accuracy-evaluation: the second sentence states the pitfall mean-of-batch-accuracies
    (the fixed rule flags it: claim cosine 0.8); the first reads as key point argmax-count
    (0.9) and as the claim and its correction at the cosines given."""
    question = bank.questions["accuracy-evaluation"]
    text = f"{PER_BATCH} {AVERAGE}"
    units = [PER_BATCH, AVERAGE, text]
    pitfall = [p.id for p in question.pitfalls].index("mean-of-batch-accuracies")
    point = [k.id for k in question.key_points].index("argmax-count")
    k, p = len(question.key_points), len(question.pitfalls)
    point_sims = np.full((3, k), 0.1)
    point_sims[0, point] = 0.9
    claim_sims = np.zeros((3, p))
    fix_sims = np.zeros((3, p))
    claim_sims[:, pitfall] = (per_batch_claim, 0.8, 0.7)
    fix_sims[:, pitfall] = (per_batch_fix, 0.3, 0.3)
    analysis = Analysis(
        question=question,
        text=text,
        language="en",
        units=units,
        vectors=np.zeros((3, 4)),
        unit_langs=np.ones(3, dtype=int),
        point_sims=point_sims,
        claim_sims=claim_sims,
        fix_sims=fix_sims,
        stance=[],  # a stance model read it (and said nothing the rule did not)
    )
    qv = QuestionVectors(
        points=np.zeros((2, k, 4)),
        claims=np.zeros((2, p, 4)),
        corrections=np.zeros((2, p, 4)),
        context=np.zeros((4, 4)),
        vocabulary=frozenset(stems(text)),
        pitfall_stems=tuple((frozenset(), frozenset()) for _ in range(p)),
    )
    options = GraderOptions(polarity=False, head=False, stance=False, relevance=False)
    return compose(analysis, qv, np.full(4, 0.6), None, None, options)


@pytest.mark.parametrize(
    ("claim", "fix", "credited"),
    [
        # Closer to the flagged claim than to its correction, and close to it: it restates the
        # misconception, so it earns no credit for the point the misconception contradicts.
        (0.6, 0.3, False),
        # Closer to the correction: a statement of the point, credited.
        (0.6, 0.7, True),
        # Far from the claim, however it compares with the correction: credited.
        (0.4, 0.2, True),
    ],
)
def test_a_sentence_leaning_to_a_flagged_claim_earns_no_key_point_credit(
    bank: QuestionBank, claim: float, fix: float, credited: bool
) -> None:
    result = graded(bank, claim, fix)
    assert [p.id for p in result.pitfalls] == ["mean-of-batch-accuracies"]
    point = next(p for p in result.points if p.id == "argmax-count")
    assert point.covered is credited
    assert (point.evidence == PER_BATCH) is credited
