"""Prepacked bf16 linear layers (bot/scoring/packed_linear.py) against autocast's plain ones, in
one run: the model work of grading `content/eval`'s answers one at a time and 64 at a time, on
one torch thread as the bot runs it, rounds alternating so that the machine's noise falls on
both. Prints the figures, their ratio and how far apart the two paths' vectors are.

    .venv/bin/python benchmarks/prepacked_linear.py [--model bundled] [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np
import torch

from bot.config import DEFAULT_MODEL, Settings
from bot.evaluation.datasets import load_bank_eval
from bot.scoring import packed_linear
from bot.scoring.encoder import Encoder
from bot.scoring.text import split_units


def _units(answer: str) -> list[str]:
    """What the grader sends the model for one answer: its units and the whole answer."""
    return [*split_units(answer), answer]


def _single(encoder: Encoder, answers: list[str]) -> list[float]:
    took = []
    for answer in answers:
        started = time.perf_counter()
        encoder.encode(_units(answer))
        took.append(1000 * (time.perf_counter() - started))
    return took


def _batched(encoder: Encoder, answers: list[str], size: int) -> float:
    started = time.perf_counter()
    for first in range(0, len(answers), size):
        encoder.encode([u for a in answers[first : first + size] for u in _units(a)])
    return len(answers) / (time.perf_counter() - started)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=DEFAULT_MODEL)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    if not packed_linear.supported(require_amx=False):
        print("oneDNN cannot multiply prepacked bf16 weights on this CPU: nothing to compare")
        return 1
    torch.set_num_threads(1)
    settings = Settings()
    answers = [s.answer for s in load_bank_eval(settings.content_dir.parent / "eval").samples]
    encoders = {
        name: Encoder(args.model, "cpu", precision="bf16", pack_weights=pack)
        for name, pack in (("plain", False), ("packed", True))
    }
    amx = getattr(torch.cpu, "_is_amx_tile_supported", lambda: False)()
    print(f"model {args.model}, bf16, one torch thread, AMX {'yes' if amx else 'no'}")
    single: dict[str, list[float]] = {name: [] for name in encoders}
    rates: dict[str, list[float]] = {name: [] for name in encoders}
    for encoder in encoders.values():
        _single(encoder, answers[:10])  # first calls allocate
    for _ in range(args.rounds):
        for name, encoder in encoders.items():
            single[name] += _single(encoder, answers[:80])
            rates[name].append(_batched(encoder, answers, 64))
    for name in encoders:
        print(
            f"{name:>6}: one answer p50 {statistics.median(single[name]):5.1f} ms, "
            f"64 at a time {statistics.median(rates[name]):5.1f} answers/s"
        )
    speedup = statistics.median(single["plain"]) / statistics.median(single["packed"])
    gain = statistics.median(rates["packed"]) / statistics.median(rates["plain"])
    print(f"packed / plain: one answer {speedup:.2f}x faster, 64 at a time {gain:.2f}x")
    units = [u for a in answers[:120] for u in _units(a)]
    cosines = np.sum(encoders["packed"].encode(units) * encoders["plain"].encode(units), axis=1)
    print(f"vectors of {len(units)} texts: lowest cosine packed vs plain {cosines.min():.7f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
