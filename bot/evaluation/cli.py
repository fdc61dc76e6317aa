"""`python -m bot eval`: the grader and a plain-cosine baseline on labelled answers."""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from pathlib import Path

from bot.config import Settings
from bot.content.loader import QuestionBank
from bot.evaluation.datasets import (
    NUMBERED_BLIND,
    Dataset,
    DatasetError,
    load_bank_eval,
    load_external,
)
from bot.evaluation.report import Figures, evaluate, table
from bot.evaluation.runner import grade_with, grade_with_cosine
from bot.scoring.grader import Grader
from bot.scoring.options import GraderOptions
from bot.scoring.reference import ReferenceGrader, ReferenceOptions
from bot.scoring.service import ScoringService

FULL = GraderOptions()
# Each row switches one part off (or keeps one signal alone), to show what it adds.
BANK_ABLATION: dict[str, GraderOptions] = {
    "-stance": replace(FULL, stance=False),  # the fitted head instead of the stance model
    "-flags": replace(FULL, stance_flags=False),  # P(asserts) at its threshold, not the trees
    "-head": replace(FULL, head=False, stance=False),  # the fixed pitfall rule
    "-terms": replace(FULL, terms=False),
    "-lang-calib": replace(FULL, calibration=False),
    "-polarity": replace(FULL, polarity=False),
    "-clauses": replace(FULL, clauses=False),
    "-offtopic": replace(FULL, off_topic_gate=False),
    "-neighbour": replace(FULL, neighbour=False),  # no "reads like an answer to another question"
    "-relevance": replace(FULL, relevance=False),  # the vector rule alone tells another question
    "-fitted-score": replace(FULL, fitted_score=False),  # the hand-set formula scores
    "-generic": replace(FULL, generic_cap=False),
    "-admits-cap": replace(FULL, admits_cap=False),
    "-whole-answer-pass": replace(FULL, encode_whole=False),
    "+one-pass": replace(FULL, one_pass=True),  # sentences pooled from one pass over the answer
    "points-only": replace(FULL, coverage_weight=1.0),
    "answer-only": replace(FULL, coverage_weight=0.0),
}
REFERENCE_ABLATION: dict[str, ReferenceOptions] = {
    "align-only": ReferenceOptions(alignment_weight=1.0),
    "cosine-only": ReferenceOptions(alignment_weight=0.0),
    "-demoting": ReferenceOptions(demote=False),
}


def _datasets(settings: Settings, args: argparse.Namespace) -> list[Dataset]:
    """The bank's sets: content/eval (the grader was tuned on it), content/heldout (written before
    any tuning; its figures were read while choosing marker words and the "said" target) and
    content/blind (written on 2026-12-01 before that day's changes, read only as totals), then
    external files."""
    datasets = []
    if not args.no_bank:
        root = settings.content_dir.parent
        datasets.append(load_bank_eval(root / "eval", "content/eval (tuning set)"))
        if (root / "heldout").is_dir():
            datasets.append(load_bank_eval(root / "heldout", "content/heldout (held out)"))
        if (root / "blind").is_dir() and not args.no_blind:
            datasets.append(load_bank_eval(root / "blind", "content/blind (tuning set)"))
        chosen = [f"blind{n}" for n in NUMBERED_BLIND if getattr(args, f"blind{n}", False)]
        if chosen:
            # Read once, for the published figure (content/<name>/README.md), alone; several
            # named together are read pooled, as one set, for steadier figures.
            read = [load_bank_eval(root / name, f"content/{name}") for name in chosen]
            label = " + ".join(f"content/{name}" for name in chosen)
            pooled = [s for d in read for s in d.samples]
            datasets = [Dataset(f"{label} (read once)", read[0].scale, pooled)]
    return datasets + [load_external(Path(f)) for f in args.files]


def _relevance_line(grader: Grader, bank: QuestionBank, dataset: Dataset, name: str = "") -> str:
    """How often an answer is told not to answer its question (verdict off-topic: far from
    everything, closer to another bank question, or so read by the relevance model): off-topic
    answers (and whether the question named is the one the writer meant) against every other
    kind."""
    samples = [s for s in dataset.samples if s.question_id is not None]
    if not any(s.kind == "offtopic" for s in samples):
        return ""
    graded = grader.grade_many(
        [(bank.questions[str(s.question_id)], s.answer, s.lang) for s in samples]
    )
    told = [(s, g) for s, g in zip(samples, graded, strict=True) if g.verdict == "off-topic"]
    off = [s for s in samples if s.kind == "offtopic"]
    on = [s for s in samples if s.kind not in ("offtopic", "dontknow")]
    right = [s for s, g in told if s.answers_question and g.answers_question == s.answers_question]
    return (
        f"{name or 'grader'}: not an answer to its question: "
        f"{sum(s.kind == 'offtopic' for s, _ in told)}/{len(off)} off-topic "
        f"answers told ({len(right)} naming the question meant), "
        f"{sum(s.kind not in ('offtopic', 'dontknow') for s, _ in told)}/{len(on)} others\n"
    )


def run_eval(settings: Settings, bank: QuestionBank, args: argparse.Namespace) -> int:
    try:
        datasets = _datasets(settings, args)
    except DatasetError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if not datasets:
        print("error: nothing to evaluate (--no-bank and no files)", file=sys.stderr)
        return 2
    if args.model:
        settings = settings.model_copy(update={"embedding_model": args.model})
    service = ScoringService.from_settings(settings, bank)
    grader = service.warm_grader()
    encoder = grader.encoder
    reference = service.reference_grader()
    print(f"model: {settings.embedding_model} on {encoder.device}\n")
    report: dict[str, dict[str, dict[str, Figures]]] = {}
    for dataset in datasets:
        results: dict[str, dict[str, Figures]] = {}
        started = time.perf_counter()
        results["grader"] = evaluate(dataset, lambda s: grade_with(grader, reference, bank, s))
        took = time.perf_counter() - started
        hints = grader.head is not None or grader.stance is not None
        if hints and any(s.pitfall for s in dataset.samples):
            results["+checks"] = evaluate(
                dataset, lambda s: grade_with(grader, reference, bank, s, checks=True)
            )
        if not args.no_baseline:
            results["cosine"] = evaluate(dataset, lambda s: grade_with_cosine(encoder, bank, s))
        if args.ablation or args.variants:
            wanted = set(args.variants.split(",")) if args.variants else None
            if any(s.question_id for s in dataset.samples):
                variants = [
                    (
                        name,
                        Grader(
                            encoder,
                            list(bank),
                            options,
                            grader.stance if options.stance else None,
                            grader.relevance if options.relevance else None,
                        ),
                        reference,
                    )
                    for name, options in BANK_ABLATION.items()
                    if wanted is None or name in wanted
                ]
                for _, variant, _ in variants:
                    # Every question's vectors, as the bot has them: without, no answer is
                    # compared with the whole bank (the rule for another question).
                    variant.warm(list(bank))
            else:
                variants = [
                    (name, grader, ReferenceGrader(encoder, list(bank), options))
                    for name, options in REFERENCE_ABLATION.items()
                    if wanted is None or name in wanted
                ]
            for name, g, r in variants:
                results[name] = evaluate(
                    dataset,
                    lambda s, g=g, r=r: grade_with(g, r, bank, s),  # type: ignore[misc]
                )
        print(table(dataset, results))
        print(_relevance_line(grader, bank, dataset), end="")
        for name, g, _ in variants if args.ablation or args.variants else []:
            if isinstance(g, Grader):
                print(_relevance_line(g, bank, dataset, name), end="")
        print()
        print(f"grader time: {took:.1f} s ({1000 * took / len(dataset.samples):.0f} ms/answer)\n")
        report[dataset.name] = results
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    d: {g: {s: f.as_dict() for s, f in r.items()} for g, r in v.items()}
                    for d, v in report.items()
                },
                indent=2,
                default=float,
            ),
            "utf-8",
        )
    service.close()
    return 0
