"""A cross-encoder over a pair of texts: the base encoder's first `layers` transformer layers, a
LoRA adapter on their linear layers, and a linear head over the mean of the token vectors.

A cross-encoder reads both texts at once, so it sees "not", "myth", "contrary to" in relation to a
claim, or what an answer talks about in relation to the question. The committed artefact is the
adapter and the head, a few MB, with their checksums in a config file; the base weights come from
the installed model package, never from a hub.
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
from typing import Any, ClassVar, Self

import numpy as np

log = logging.getLogger(__name__)

ADAPTER_FILE = "adapter_model.safetensors"
HEAD_FILE = "head.safetensors"


class PairNetError(Exception):
    """The artefact is missing a file, or a file is not the one its checksum names."""


@dataclass(frozen=True)
class PairNetConfig:
    """What a pair classifier is: its base, size and labels, its files' checksums and how it was
    trained. Subclasses add the thresholds their users read."""

    config_file: ClassVar[str] = "pairnet.json"
    base: str = "multilingual-e5-small"  # resolved like EMBEDDING_MODEL (bot/scoring/encoder)
    layers: int = 6  # the base's first layers that the model keeps
    max_length: int = 128  # tokens of a pair
    lora_rank: int = 8
    lora_alpha: int = 16
    labels: tuple[str, ...] = ()
    sha256: dict[str, str] = field(default_factory=dict)
    trained: dict[str, Any] = field(default_factory=dict)  # data sizes, seed, time, machine

    def save(self, directory: Path) -> None:
        data = asdict(self) | {"labels": list(self.labels)}
        (directory / self.config_file).write_text(
            json.dumps(data, indent=2, ensure_ascii=False) + "\n", "utf-8"
        )

    @classmethod
    def load(cls, directory: Path) -> Self:
        data = json.loads((directory / cls.config_file).read_text("utf-8"))
        data["labels"] = tuple(data["labels"])
        return cls(**data)


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def verify(directory: Path, config: PairNetConfig, command: str) -> None:
    for name in (ADAPTER_FILE, HEAD_FILE):
        path = directory / name
        if not path.is_file():
            raise PairNetError(f"{path} is missing: run `{command}`")
        expected = config.sha256.get(name)
        if expected is None or sha256_of(path) != expected:
            raise PairNetError(f"{path} does not match its checksum in {config.config_file}")


def build_network(config: PairNetConfig, model_cache_dir: Path | None = None) -> Any:
    """The base encoder cut to `config.layers` layers, with a fresh head: (base, head)."""
    import torch
    from transformers import AutoModel

    from bot.scoring.model_names import resolve_model_path

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


def read_pairs(
    base: Any,
    head: Any,
    tokenizer: Any,
    pairs: Sequence[tuple[str, str]],
    config: PairNetConfig,
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


class PairNet:
    """A trained pair classifier, loaded once in the grading process; `probabilities` is called
    from its worker thread. A subclass names its config, its committed folder and the command
    that trains it."""

    config_class: ClassVar[type[PairNetConfig]] = PairNetConfig
    weights_dir: ClassVar[Path]
    train_command: ClassVar[str]

    def __init__(
        self,
        directory: Path | None = None,
        model_cache_dir: Path | None = None,
        device: str = "cpu",
        precision: str = "fp32",
    ):
        """`directory`: the artefact (default: the committed one). `precision` bf16 (a CPU that
        multiplies bf16 natively, as the encoder decides): matrix products under bf16 autocast,
        2.8x faster on such a CPU; the stance model's P(asserts) stayed within 0.008 of fp32's
        on 1,200 pairs."""
        from peft import PeftModel
        from safetensors.torch import load_file
        from transformers import AutoTokenizer

        from bot.scoring.model_names import resolve_model_path

        directory = directory or self.weights_dir
        config = self.config_class.load(directory)
        verify(directory, config, self.train_command)
        self.config = config
        base, head = build_network(config, model_cache_dir)
        # Merged once: inference then costs what the plain layers cost.
        self._base = PeftModel.from_pretrained(base, str(directory)).merge_and_unload()
        head.load_state_dict(load_file(str(directory / HEAD_FILE)))
        self._head = head
        self.device = device
        self.precision = precision if device == "cpu" else "fp32"
        self._base.to(device).eval()
        self._head.to(device).eval()
        self.packed = False
        if self.precision == "bf16":
            from bot.scoring.packed_linear import prepare_bf16_linear_layers

            # The base's linear layers as the encoder's: bf16 once, prepacked where AMX is.
            self.packed = prepare_bf16_linear_layers(self._base)
        self._tokenizer = AutoTokenizer.from_pretrained(
            resolve_model_path(config.base, model_cache_dir)
        )
        log.info(
            "%s loaded (%d layers, %s, %s%s)",
            config.config_file,
            config.layers,
            device,
            self.precision,
            ", linear layers prepacked" if self.packed else "",
        )

    @classmethod
    def trained_from(
        cls,
        embedding_model: str,
        directory: Path | None = None,
        model_cache_dir: Path | None = None,
        device: str = "cpu",
        precision: str = "fp32",
    ) -> Self | None:
        """The artefact when it was trained from `embedding_model` (the grader's thresholds were
        chosen with that model), else None: the grader then goes without it."""
        directory = directory or cls.weights_dir
        if not (directory / cls.config_class.config_file).is_file():
            return None
        if cls.config_class.load(directory).base != embedding_model:
            return None
        return cls(directory, model_cache_dir, device, precision)

    def probabilities(self, pairs: Sequence[tuple[str, str]], batch_size: int = 64) -> np.ndarray:
        """(pairs, labels) probabilities."""
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
