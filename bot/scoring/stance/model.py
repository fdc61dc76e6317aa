"""The stance model: does a clause of an answer assert a documented misconception, reject it, or
neither? A pair classifier over (claim, clause), fine-tuned here from the bot's own encoder.

The network is the encoder's first `layers` transformer layers (a cross-encoder reads both texts
at once, so it sees "not", "myth", "contrary to" in relation to the claim), a LoRA adapter on
their linear layers, and a linear head over the mean of the token vectors. The committed
artefact (bot/scoring/stance/weights/) is the adapter and the head, a few MB, with their
checksums; the base weights come from the installed model package, never from a hub.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from bot.content.stance import LABELS

log = logging.getLogger(__name__)

WEIGHTS_DIR = Path(__file__).with_name("weights")
CONFIG_FILE = "stance.json"
ADAPTER_FILE = "adapter_model.safetensors"
HEAD_FILE = "head.safetensors"
ASSERTS = LABELS.index("asserts")


class StanceModelError(Exception):
    """The artefact is missing a file, or a file is not the one its checksum names."""


@dataclass(frozen=True)
class StanceConfig:
    base: str = "multilingual-e5-small"  # resolved like EMBEDDING_MODEL (bot/scoring/encoder)
    layers: int = 6  # the base's first layers that the model keeps
    max_length: int = 128  # tokens of a (claim, clause) pair
    lora_rank: int = 8
    lora_alpha: int = 16
    # The pitfall head's near misses at `head_floor` or more are said to hold the misconception
    # at P(asserts) `flag_at` (bot/scoring/stance/judge.py); both chosen on the tuning sets by
    # `python -m bot train stance-thresholds` (docs/stance-model.md).
    flag_at: float = 0.8
    head_floor: float = 0.2
    labels: tuple[str, ...] = LABELS
    sha256: dict[str, str] = field(default_factory=dict)
    trained: dict[str, Any] = field(default_factory=dict)  # data sizes, seed, time, machine

    def save(self, directory: Path) -> None:
        data = asdict(self) | {"labels": list(self.labels)}
        (directory / CONFIG_FILE).write_text(
            json.dumps(data, indent=2, ensure_ascii=False) + "\n", "utf-8"
        )

    @classmethod
    def load(cls, directory: Path) -> StanceConfig:
        data = json.loads((directory / CONFIG_FILE).read_text("utf-8"))
        data["labels"] = tuple(data["labels"])
        return cls(**data)


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def verify(directory: Path, config: StanceConfig) -> None:
    for name in (ADAPTER_FILE, HEAD_FILE):
        path = directory / name
        if not path.is_file():
            raise StanceModelError(f"{path} is missing: run `python -m bot train stance`")
        expected = config.sha256.get(name)
        if expected is None or sha256_of(path) != expected:
            raise StanceModelError(f"{path} does not match its checksum in {CONFIG_FILE}")


def build_network(config: StanceConfig, model_cache_dir: Path | None = None) -> Any:
    """The base encoder cut to `config.layers` layers, with a fresh head: (base, head)."""
    import torch
    from transformers import AutoModel

    from bot.scoring.encoder import resolve_model_path

    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the base is a local folder; never the hub
    base = AutoModel.from_pretrained(resolve_model_path(config.base, model_cache_dir))
    base.encoder.layer = base.encoder.layer[: config.layers]
    base.config.num_hidden_layers = config.layers
    base.pooler = None  # unused: the head reads the mean of the token vectors
    head = torch.nn.Linear(base.config.hidden_size, len(config.labels))
    return base, head


def pooled_logits(base: Any, head: Any, batch: dict[str, Any]) -> Any:
    """Logits of a tokenized batch of pairs: the head over the mean of the tokens' vectors."""
    hidden = base(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"])
    mask = batch["attention_mask"].unsqueeze(-1).to(hidden.last_hidden_state.dtype)
    mean = (hidden.last_hidden_state * mask).sum(1) / mask.sum(1).clamp(min=1.0)
    return head(mean)


class StanceModel:
    """Loaded once in the grading process; `probabilities` is called from its worker thread."""

    def __init__(
        self,
        directory: Path = WEIGHTS_DIR,
        model_cache_dir: Path | None = None,
        device: str = "cpu",
        precision: str = "fp32",
    ):
        """`precision` bf16 (a CPU that multiplies bf16 natively, as the encoder decides):
        matrix products under bf16 autocast, 2.8x faster on such a CPU; P(asserts) within 0.008
        of fp32's on 1,200 pairs, no decision changed."""
        from peft import PeftModel
        from safetensors.torch import load_file
        from transformers import AutoTokenizer

        from bot.scoring.encoder import resolve_model_path

        self.config = StanceConfig.load(directory)
        verify(directory, self.config)
        base, head = build_network(self.config, model_cache_dir)
        # Merged once: inference then costs what the plain layers cost.
        self._base = PeftModel.from_pretrained(base, str(directory)).merge_and_unload()
        head.load_state_dict(load_file(str(directory / HEAD_FILE)))
        self._head = head
        self.device = device
        self.precision = precision if device == "cpu" else "fp32"
        self._base.to(device).eval()
        self._head.to(device).eval()
        self._tokenizer = AutoTokenizer.from_pretrained(
            resolve_model_path(self.config.base, model_cache_dir)
        )
        log.info(
            "stance model loaded (%d layers, %s, %s)", self.config.layers, device, self.precision
        )

    @property
    def flag_at(self) -> float:
        return self.config.flag_at

    @property
    def head_floor(self) -> float:
        return self.config.head_floor

    def probabilities(self, pairs: Sequence[tuple[str, str]], batch_size: int = 64) -> np.ndarray:
        """(pairs, labels) probabilities for (claim, sentence) pairs."""
        import torch

        context = (
            torch.autocast("cpu", dtype=torch.bfloat16)
            if self.precision == "bf16"
            else contextlib.nullcontext()
        )
        with context:
            return read_pairs(
                self._base, self._head, self._tokenizer, pairs, self.config, self.device, batch_size
            )


def read_pairs(
    base: Any,
    head: Any,
    tokenizer: Any,
    pairs: Sequence[tuple[str, str]],
    config: StanceConfig,
    device: str = "cpu",
    batch_size: int = 64,
) -> np.ndarray:
    """(pairs, labels) probabilities, in batches of similar length (less padding)."""
    import torch

    result = np.zeros((len(pairs), len(config.labels)), dtype=np.float32)
    order = sorted(range(len(pairs)), key=lambda i: len(pairs[i][0]) + len(pairs[i][1]))
    with torch.inference_mode():
        for start in range(0, len(order), batch_size):
            chunk = order[start : start + batch_size]
            batch = tokenizer(
                [pairs[i][0] for i in chunk],
                [pairs[i][1] for i in chunk],
                truncation="only_second",
                max_length=config.max_length,
                padding=True,
                return_tensors="pt",
            ).to(device)
            logits = pooled_logits(base, head, batch)
            result[chunk] = torch.softmax(logits.float(), -1).cpu().numpy()
    return result


def load_stance_model(
    embedding_model: str,
    directory: Path = WEIGHTS_DIR,
    model_cache_dir: Path | None = None,
    device: str = "cpu",
    precision: str = "fp32",
) -> StanceModel | None:
    """The committed stance model when it was trained from `embedding_model` (the grader's
    shortlist and thresholds were chosen with that model), else None: the grader then uses the
    embedding model's pitfall head."""
    if not (directory / CONFIG_FILE).is_file():
        return None
    if StanceConfig.load(directory).base != embedding_model:
        return None
    return StanceModel(directory, model_cache_dir, device, precision)
