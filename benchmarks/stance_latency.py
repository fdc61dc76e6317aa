"""One answer at a time, warm, one torch thread (as the bot's grading process runs it): the
grader with neither pair model, with the stance model, with the stance and relevance models and
the formula's score, and with all of them and the fitted score (the bot's grader), one after
another in each round, in one process.

    .venv/bin/python benchmarks/stance_latency.py [--answers 80] [--rounds 2]

Prints p50 and p95 per grader and round (docs/grading.md, "Grader v3").
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import torch

from bot.config import Settings
from bot.content.loader import load_bank
from bot.evaluation.datasets import load_bank_eval
from bot.scoring.grader import Grader
from bot.scoring.options import GraderOptions
from bot.scoring.service import ScoringService


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--answers", type=int, default=80)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    settings = Settings()
    bank = load_bank()
    service = ScoringService.from_settings(settings, bank)
    full = service.warm_grader()
    if full.stance is None or full.relevance is None:
        raise SystemExit("no stance or relevance model for this EMBEDDING_MODEL")
    torch.set_num_threads(1)
    without = Grader(full.encoder, list(bank), GraderOptions(stance=False, relevance=False))
    with_stance = Grader(full.encoder, list(bank), GraderOptions(relevance=False), full.stance)
    formula = Grader(
        full.encoder, list(bank), GraderOptions(fitted_score=False), full.stance, full.relevance
    )
    for grader in (without, with_stance, formula):
        grader.warm(list(bank))
    root = settings.content_dir.parent
    samples = load_bank_eval(Path(root / "eval")).samples[: args.answers]
    for round_ in range(1, args.rounds + 1):
        graders = (
            ("head only", without),
            ("head + stance model", with_stance),
            ("head + stance + relevance models, formula score", formula),
            ("head + stance + relevance models, fitted score", full),
        )
        for name, grader in graders:
            took = []
            for s in samples:
                started = time.perf_counter()
                grader.grade(bank.questions[str(s.question_id)], s.answer, s.lang)
                took.append(time.perf_counter() - started)
            p95 = sorted(took)[int(0.95 * len(took))]
            print(
                f"round {round_}, {name}: p50 {1000 * statistics.median(took):.0f} ms, "
                f"p95 {1000 * p95:.0f} ms"
            )
    service.close()


if __name__ == "__main__":
    main()
