"""The relevance model: a pair classifier over (the question, an answer) that says whether the
answer answers that question or something else: another bank question, or nothing asked.

The grader's vector rule (bot/scoring/relevance.py) tells a fluent answer to a neighbouring
question by its distance to every bank question; a question asked about dropout and answered
about batch norm shares words and key points with its own question, and the rule misses it. The
pair model reads the question and the answer together. Its artefact is
bot/scoring/relevance_net/weights/, trained by `python -m bot train relevance`
(docs/relevance-model.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from bot.content.schema import Question
from bot.scoring.pairnet.network import PairNet, PairNetConfig

WEIGHTS_DIR = Path(__file__).with_name("weights")
LABELS = ("other", "answers")
OTHER, ANSWERS = 0, 1
TRAIN_COMMAND = "python -m bot train relevance"


@dataclass(frozen=True)
class RelevanceConfig(PairNetConfig):
    config_file: ClassVar[str] = "relevance.json"
    labels: tuple[str, ...] = LABELS
    max_length: int = 192  # the question's side is about 60 tokens; the answer gets the rest
    # How the grader joins the model to its vector rule (bot/scoring/relevance_net/judge.py);
    # chosen by `python -m bot train relevance-thresholds` (docs/relevance-model.md).
    other_at: float = 0.9  # P(other) that tells, with the answer `lean` closer to another question
    lean: float = 0.1
    veto: float = 0.1  # P(other) below which the rule's call is dropped
    # The answer read with the bank question it is closest to: P(other) there at `nearest_at` or
    # less, and `nearest_lean` closer to it than to its own, tells. -1.0: off.
    nearest_at: float = -1.0
    nearest_lean: float = 1.0


def question_side(question: Question, lang: str) -> str:
    """What the model reads of a question: its wording and its short answer, in the answer's
    language (the short answer names what a right answer talks about)."""
    short = question.short_answer.get(lang) if question.short_answer is not None else ""
    return f"{question.question.get(lang)}\n{short}".strip()


class RelevanceModel(PairNet):
    """Loaded once in the grading process; `probabilities` is called from its worker thread."""

    config_class = RelevanceConfig
    weights_dir = WEIGHTS_DIR
    train_command = TRAIN_COMMAND
    config: RelevanceConfig

    @property
    def other_at(self) -> float:
        return self.config.other_at

    @property
    def lean(self) -> float:
        return self.config.lean

    @property
    def veto(self) -> float:
        return self.config.veto

    @property
    def nearest_at(self) -> float:
        return self.config.nearest_at

    @property
    def nearest_lean(self) -> float:
        return self.config.nearest_lean


# The committed relevance model when it was trained from the given embedding model, else None
# (the grader then has only its vector rule).
load_relevance_model = RelevanceModel.trained_from
