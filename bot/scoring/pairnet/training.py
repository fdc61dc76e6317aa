"""Fine-tunes a pair classifier: LoRA on the kept layers of the base encoder, and a linear head.

Fixed seed, length-bucketed batches (padding is most of the cost of short pairs on a CPU), a
progress bar and a log line every `log_every` steps. The embedding matrix (250k tokens, most of
the parameters) stays frozen, as does everything but the adapter and the head.
"""

from __future__ import annotations

import logging
import platform
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from bot.scoring.pairnet.network import (
    ADAPTER_FILE,
    HEAD_FILE,
    PairNetConfig,
    build_network,
    pooled_logits,
    read_pairs,
    sha256_of,
)

log = logging.getLogger(__name__)

LORA_TARGETS = ["query", "key", "value", "dense"]


class TextPair(Protocol):
    """A labelled pair: (claim, sentence) for the stance model, (question, answer) for the
    relevance model."""

    @property
    def left(self) -> str: ...

    @property
    def right(self) -> str: ...

    @property
    def label(self) -> int: ...


@dataclass(frozen=True)
class TrainOptions:
    epochs: float = 2.0
    batch_size: int = 32
    learning_rate: float = 5e-4
    seed: int = 0
    max_steps: int | None = None  # stop early: `--steps 20` times a run before a long one
    log_every: int = 20


@dataclass(frozen=True)
class TrainReport:
    steps: int
    seconds: float
    pairs: int
    final_loss: float


def _batches(pairs: Sequence[TextPair], size: int, rng: random.Random) -> list[list[int]]:
    """Shuffled, then sorted by length within windows of 50 batches: little padding, and every
    epoch a different order."""
    order = list(range(len(pairs)))
    rng.shuffle(order)
    window = size * 50
    batches: list[list[int]] = []
    for start in range(0, len(order), window):
        part = sorted(
            order[start : start + window], key=lambda i: len(pairs[i].left) + len(pairs[i].right)
        )
        batches += [part[i : i + size] for i in range(0, len(part), size)]
    rng.shuffle(batches)
    return batches


def train(
    pairs: Sequence[TextPair],
    config: PairNetConfig,
    options: TrainOptions,
    out_dir: Path | None,
    model_cache_dir: Path | None = None,
    progress: bool = True,
) -> tuple[Any, TrainReport]:
    """Trains and, with `out_dir`, writes the adapter, the head and the config file there. Returns
    a predictor (left, right) pairs -> probabilities, and the report."""
    import torch
    from peft import LoraConfig, get_peft_model
    from safetensors.torch import save_file
    from transformers import AutoTokenizer

    from bot.scoring.model_names import resolve_model_path

    torch.manual_seed(options.seed)
    rng = random.Random(options.seed)
    base, head = build_network(config, model_cache_dir)
    lora = LoraConfig(
        r=config.lora_rank,
        lora_alpha=config.lora_alpha,
        lora_dropout=0.1,
        target_modules=LORA_TARGETS,
    )
    model = get_peft_model(base, lora)
    tokenizer = AutoTokenizer.from_pretrained(resolve_model_path(config.base, model_cache_dir))
    trainable = [p for p in model.parameters() if p.requires_grad] + list(head.parameters())
    optimizer = torch.optim.AdamW(trainable, lr=options.learning_rate, weight_decay=0.01)
    per_epoch = max(1, -(-len(pairs) // options.batch_size))
    total = max(1, round(per_epoch * options.epochs))
    if options.max_steps is not None:
        total = min(total, options.max_steps)
    warmup = max(1, total // 10)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min((s + 1) / warmup, max(0.0, (total - s) / (total - warmup + 1)))
    )
    model.train()
    head.train()
    bar = _bar(total, progress, config.config_file.removesuffix(".json"))
    started = time.perf_counter()
    step, loss_value = 0, float("nan")
    batches: list[list[int]] = []
    while step < total:
        if not batches:
            batches = _batches(pairs, options.batch_size, rng)
        chunk = [pairs[i] for i in batches.pop()]
        encoded = tokenizer(
            [p.left for p in chunk],
            [p.right for p in chunk],
            truncation="only_second",
            max_length=config.max_length,
            padding=True,
            return_tensors="pt",
        )
        labels = torch.tensor([p.label for p in chunk])
        loss = torch.nn.functional.cross_entropy(pooled_logits(model, head, encoded), labels)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(trainable, 1.0)
        optimizer.step()
        schedule.step()
        optimizer.zero_grad()
        step += 1
        value = float(loss.detach())
        loss_value = 0.9 * loss_value + 0.1 * value if step > 1 else value
        bar(1, loss_value)
        if step % options.log_every == 0 or step == total:
            elapsed = time.perf_counter() - started
            log.info(
                "step %d/%d loss %.4f %.1f s/step, about %.0f s left",
                step,
                total,
                loss_value,
                elapsed / step,
                elapsed / step * (total - step),
            )
    seconds = time.perf_counter() - started
    bar(0, loss_value, close=True)
    model.eval()
    head.eval()
    report = TrainReport(step, seconds, len(pairs), loss_value)
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
        model.save_pretrained(str(out_dir))
        # peft writes a model-card template beside the adapter; the card is under docs/.
        (out_dir / "README.md").unlink(missing_ok=True)
        save_file({k: v.contiguous() for k, v in head.state_dict().items()}, out_dir / HEAD_FILE)
        sums = {name: sha256_of(out_dir / name) for name in (ADAPTER_FILE, HEAD_FILE)}
        replace(config, sha256=sums).save(out_dir)

    def predict(items: Sequence[tuple[str, str]]) -> np.ndarray:
        return read_pairs(model, head, tokenizer, items, config)

    return predict, report


def print_speed(report: TrainReport, pairs: int, options: TrainOptions, timing: bool) -> None:
    """Seconds per step and, after a timing run (`--steps N`), what a full run would take."""
    per_step = report.seconds / report.steps
    print(f"{report.steps} steps in {report.seconds:.0f} s ({per_step:.2f} s/step)")
    if timing:
        per_epoch = -(-pairs // options.batch_size)
        minutes = per_step * per_epoch * options.epochs / 60
        full = f"a full run ({options.epochs:g} epochs, {per_epoch} steps each)"
        print(f"{full}: about {minutes:.0f} min")


def log_progress(path: Path | None) -> None:
    """Training's log lines at INFO and, with `path`, also into that file: beside the progress
    bar, a log to follow a run in the background."""
    progress = logging.getLogger(__name__)
    progress.setLevel(logging.INFO)
    if path is not None:
        handler = logging.FileHandler(path)
        handler.setFormatter(logging.Formatter("%(asctime)s %(message)s"))
        progress.addHandler(handler)


def _bar(total: int, enabled: bool, name: str) -> Callable[..., None]:
    if not enabled:
        return lambda *args, **kwargs: None
    from tqdm import tqdm

    bar = tqdm(total=total, desc=f"{name} model", unit="step", mininterval=2.0)

    def update(n: int, loss: float, close: bool = False) -> None:
        bar.update(n)
        bar.set_postfix(loss=f"{loss:.3f}", refresh=False)
        if close:
            bar.close()

    return update


def machine() -> str:
    """The CPU's model name (Linux) or architecture, and the threads torch used."""
    import torch

    name = platform.processor() or platform.machine()
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                name = line.split(":", 1)[1].strip()
                break
    return f"{name}, {torch.get_num_threads()} threads"


def classification(
    labels: np.ndarray, predicted: np.ndarray, names: Sequence[str]
) -> dict[str, Any]:
    """Per-class precision, recall and F1, and the confusion matrix (rows: true labels)."""
    from sklearn.metrics import confusion_matrix, precision_recall_fscore_support

    indices = list(range(len(names)))
    precision, recall, f1, support = precision_recall_fscore_support(
        labels, predicted, labels=indices, zero_division=0
    )
    return {
        "per_class": {
            name: {
                "precision": round(float(precision[i]), 3),
                "recall": round(float(recall[i]), 3),
                "f1": round(float(f1[i]), 3),
                "support": int(support[i]),
            }
            for i, name in enumerate(names)
        },
        "confusion": confusion_matrix(labels, predicted, labels=indices).tolist(),
        "accuracy": round(float(np.mean(labels == predicted)), 3) if len(labels) else 0.0,
    }
