"""How the grader tells an answer to another question, with the relevance model beside the
vector rule (bot/scoring/relevance.py).

The model reads each answer with its own question: P(other). Alone it tells too many real
answers (a short or partial one reads as "about something else"), so it works with the rule:

- the rule's call (the answer clearly closer to another bank question) stands unless the model
  is sure the answer is to its own question (P(other) below `veto`);
- the model's call (P(other) at `other_at` or more) stands when the answer is also closer to
  another bank question than to its own, by `lean` or more;
- the comparison: the answer read with the bank question it sits closest to. Where the model
  says it answers that one (P(other) there at `nearest_at` or less) and the answer is closer to
  it than to its own by `nearest_lean` or more, it answers that one. A fluent answer about
  LayerNorm given to the BatchNorm question reads as "an answer" to both, being on a related
  subject; read beside its real question, it is plainly that question's answer.

Either way the question named is the one the vector profile finds: right for 83 of 85 such
answers of content/blind2 and blind3. The numbers are chosen by
`python -m bot train relevance-thresholds` (docs/relevance-model.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np

from bot.content.schema import Question
from bot.scoring.relevance import Neighbour
from bot.scoring.relevance_net.model import OTHER, question_side


class RelevanceReader(Protocol):
    @property
    def other_at(self) -> float: ...

    @property
    def lean(self) -> float: ...

    @property
    def veto(self) -> float: ...

    @property
    def nearest_at(self) -> float: ...

    @property
    def nearest_lean(self) -> float: ...

    def probabilities(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray: ...


def read_other(model: RelevanceReader, jobs: Sequence[tuple[Question, str, str]]) -> list[float]:
    """P(other) of each (question, answer, language), in one call."""
    if not jobs:
        return []
    probabilities = model.probabilities([(question_side(q, lang), a) for q, a, lang in jobs])
    return [float(p) for p in probabilities[:, OTHER]]


def reads_nearest(neighbour: Neighbour | None, nearest_lean: float) -> bool:
    """Whether the answer is close enough to another bank question to be read with it too."""
    return neighbour is not None and neighbour.whole_margin >= nearest_lean


def answered_instead(
    neighbour: Neighbour,
    other_p: float | None,
    other_at: float,
    lean: float,
    veto: float,
    nearest_p: float | None = None,
    nearest_at: float = -1.0,
    nearest_lean: float = 1.0,
) -> str | None:
    """The bank question the answer reads like an answer to, instead of its own; None if none.
    `other_p` None: no model, the rule alone. `nearest_p`: P(other) of the answer read with the
    bank question it is closest to (`neighbour.by_whole`); None: not read."""
    by_rule = neighbour.answered()
    if other_p is None:
        return by_rule
    if by_rule is not None and other_p >= veto:
        return by_rule
    if other_p >= other_at and neighbour.whole_margin >= lean:
        return neighbour.by_whole
    if nearest_p is not None and nearest_p <= nearest_at and neighbour.whole_margin >= nearest_lean:
        return neighbour.by_whole
    return None
