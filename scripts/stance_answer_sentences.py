"""Writes content/stance/answers.jsonl: sentences of real labelled answers as stance training
examples from the sets in ANSWER_SOURCES (bot/content/stance.py): content/eval and
content/heldout, and the spent blind sets that the stance thresholds are not chosen on. Never a
threshold set nor a blind set not read yet.

- asserts: per answer labelled with a pitfall, the one sentence that states it: the sentence
  with the highest P(asserts) + sigmoid(head logit) for that pitfall under the stance model and
  pitfall head of the day (an answer is labelled, its sentences are not);
- rejects: per answer labelled as rejecting a pitfall, the one sentence that speaks of it,
  chosen the same way (the sentence a flag would quote, wrongly);
- neither: sentences of those answers and of answers with no misconception, against the
  question's other pitfalls. Kept: every such pair the stance model gives P(asserts) >= HARD,
  and a seeded SHARE of the others.

Run once, with the first stance model (commit 89142ed): `.venv/bin/python
scripts/stance_answer_sentences.py`. Rerunning it with a later model selects other sentences, so
a later run names the sets it adds and keeps every other set's rows as they are:
`.venv/bin/python scripts/stance_answer_sentences.py blind2 blind3 blind4 blind5 blind6` (on
2026-12-03 at 330ef7d, with the stance model and head of that commit). On 2026-12-06 (at
7d06cef's model and head) every source was read again, with the rejects rows and blind7, blind9
and blind11 new: `.venv/bin/python scripts/stance_answer_sentences.py eval heldout blind2 blind3
blind4 blind5 blind6 blind7 blind9 blind11`. The twelfth attempt (2026-12-06, at 4e243a0's
model and head) added the spent blind12: `.venv/bin/python scripts/stance_answer_sentences.py
blind12`. The twenty-third (2026-12-07, at 7c82409's model and head) added the spent blind22,
blind23 and blind24: `.venv/bin/python scripts/stance_answer_sentences.py blind22 blind23
blind24`. The twenty-fifth (2026-12-07, at 88302b2's model and head) added the spent blind25 and
blind26: `.venv/bin/python scripts/stance_answer_sentences.py blind25 blind26`.
"""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

HARD = 0.05
SHARE = 0.15
SETS = ("eval", "heldout")
OUT = Path(__file__).resolve().parent.parent / "content" / "stance" / "answers.jsonl"


def select(readings: list[dict[str, Any]], seed: int = 0) -> Iterator[dict[str, str]]:
    """readings: per answer, its sample, question id, pitfall ids, sentences, the head's raw
    logits and the stance model's P(asserts), both (sentences, pitfalls)."""
    rng = random.Random(seed)
    for r in readings:
        if not r["sentences"]:
            continue
        sample, asserts, raw = r["sample"], r["asserts"], r["raw"]
        row = {"question": r["question"], "lang": sample.lang, "source": r["set"]}
        for j, pitfall in enumerate(r["pitfalls"]):
            if pitfall in (sample.pitfall, sample.rejects):
                i = int(np.argmax(asserts[:, j] + 1 / (1 + np.exp(-raw[:, j]))))
                label = "asserts" if pitfall == sample.pitfall else "rejects"
                yield row | {"pitfall": pitfall, "label": label, "text": r["sentences"][i]}
            else:
                for i, sentence in enumerate(r["sentences"]):
                    if asserts[i, j] >= HARD or rng.random() < SHARE:
                        yield row | {"pitfall": pitfall, "label": "neither", "text": sentence}


def readings(sets: tuple[str, ...] = SETS) -> list[dict[str, Any]]:
    from bot.config import load_settings
    from bot.content.loader import load_bank
    from bot.evaluation.datasets import load_bank_eval
    from bot.scoring.pitfalls import candidate_count
    from bot.scoring.service import ScoringService
    from bot.scoring.stance.model import ASSERTS
    from bot.scoring.text import detect_language, split_units

    settings = load_settings()
    bank = load_bank(settings.content_dir)
    service = ScoringService.from_settings(settings, bank)
    grader = service.warm_grader()
    assert grader.head is not None and grader.stance is not None
    result: list[dict[str, Any]] = []
    for name in sets:
        samples = load_bank_eval(settings.content_dir.parent / name, name).samples
        jobs = [(bank.questions[str(s.question_id)], s.answer, s.lang) for s in samples]
        prepared = grader._prepare(jobs)
        vectors = grader._unit_vectors([(text, units) for _, text, _, units in prepared])
        for sample, (question, text, lang, units), v in zip(
            samples, prepared, vectors, strict=True
        ):
            record: dict[str, Any] = {
                "set": name,
                "sample": sample,
                "question": question.id,
                "pitfalls": [p.id for p in question.pitfalls],
                "sentences": [],
            }
            result.append(record)
            if not units:
                continue
            a = grader._analyse(question, text, lang, units, v)
            whole = set(split_units(a.text, clauses=False))
            index = [i for i, u in enumerate(a.units[: candidate_count(a.units)]) if u in whole]
            sentences = [a.units[i] for i in index]
            pairs = [
                (p.claim.get(detect_language(s)), s) for s in sentences for p in question.pitfalls
            ]
            probabilities = grader.stance.probabilities(pairs)[:, ASSERTS] if pairs else []
            record |= {
                "sentences": sentences,
                "raw": grader.head.logits(a.matrix)[index],
                "asserts": np.reshape(probabilities, (len(sentences), len(question.pitfalls))),
            }
    service.close()
    return result


def main(sets: tuple[str, ...] = SETS) -> None:
    from bot.content.stance import ANSWER_SOURCES

    assert all(name in ANSWER_SOURCES for name in sets), f"only {ANSWER_SOURCES}"
    kept = []
    if OUT.exists():
        kept = [
            r
            for r in map(json.loads, OUT.read_text("utf-8").splitlines())
            if r["source"] not in sets
        ]
    rows = kept + list(select(readings(sets)))
    OUT.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    print(f"{len(rows)} sentences ({len(rows) - len(kept)} from {', '.join(sets)}) -> {OUT}")


if __name__ == "__main__":
    main(tuple(sys.argv[1:]) or SETS)
