"""The stance model: does a clause of an answer assert a documented misconception, reject it, or
neither? A pair classifier over (claim, clause), fine-tuned here from the bot's own encoder
(bot/scoring/pairnet). Its artefact is bot/scoring/stance/weights/.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from bot.content.stance import LABELS
from bot.scoring.pairnet.network import (
    ADAPTER_FILE,
    HEAD_FILE,
    PairNet,
    PairNetConfig,
    PairNetError,
)
from bot.scoring.stance.flag_model import FlagModel, load_flag_model

__all__ = ["ADAPTER_FILE", "ASSERTS", "HEAD_FILE", "REJECTS", "StanceConfig", "StanceModel"]

WEIGHTS_DIR = Path(__file__).with_name("weights")
ASSERTS = LABELS.index("asserts")
REJECTS = LABELS.index("rejects")
TRAIN_COMMAND = "python -m bot train stance"
StanceModelError = PairNetError


@dataclass(frozen=True)
class StanceConfig(PairNetConfig):
    config_file: ClassVar[str] = "stance.json"
    labels: tuple[str, ...] = LABELS
    # The pitfall head's near misses at `head_floor` or more are said to hold the misconception
    # at P(asserts) `flag_at` (bot/scoring/stance/judge.py); both chosen on the tuning sets by
    # `python -m bot train stance-thresholds` (docs/stance-model.md).
    flag_at: float = 0.8
    head_floor: float = 0.2
    # The head's own "you said this" stands only where the pair model gives its sentence at least
    # this P(asserts): the head, reading similarity, flags rejections and model answers that the
    # pair model reads as not asserting (0: the head's flags always stand).
    veto: float = 0.0


class StanceModel(PairNet):
    """Loaded once in the grading process; `probabilities` is called from its worker thread."""

    config_class = StanceConfig
    weights_dir = WEIGHTS_DIR
    train_command = TRAIN_COMMAND
    config: StanceConfig

    def __init__(
        self,
        directory: Path | None = None,
        model_cache_dir: Path | None = None,
        device: str = "cpu",
        precision: str = "fp32",
    ):
        super().__init__(directory, model_cache_dir, device, precision)
        # Fitted on the readings of this adapter: it goes with it (and is refitted after it).
        self._flags = load_flag_model(directory or WEIGHTS_DIR, self.config.sha256[ADAPTER_FILE])

    @property
    def flags(self) -> FlagModel | None:
        return self._flags

    @property
    def flag_at(self) -> float:
        return self.config.flag_at

    @property
    def head_floor(self) -> float:
        return self.config.head_floor

    @property
    def veto(self) -> float:
        return self.config.veto


# The committed stance model when it was trained from the given embedding model, else None (the
# grader then uses the embedding model's pitfall head).
load_stance_model = StanceModel.trained_from
