"""Training pairs for the stance model, from content/stance and the bank.

Per pitfall and language, the claim is paired with:
- the written examples, with their labels (asserts / rejects / neither);
- the pitfall's own correction (rejects) and the question's key points (neither: a correct
  statement on the subject is not an assertion of the misconception);
- the corrections written for it (rejects): the fact stated plainly in the claim's terms, and
  the claim given as others' belief (content/stance/corrections);
- hard negatives (neither): sentences that assert *another* pitfall, of the same question where
  it has one and of another question, so that "sounds wrong" is not read as "asserts this";
- sentences of real labelled answers (content/stance/answers.jsonl): how candidates actually
  write, which the written examples only imitate. Their assertions and rejections are few next
  to the neutral sentences, so each counts ANSWER_REPEAT times.
"""

from __future__ import annotations

import random
from collections.abc import Collection
from dataclasses import dataclass

from bot.content.loader import QuestionBank
from bot.content.schema import LANGUAGES
from bot.content.stance import LABELS, AnswerSentence, StanceFile

ASSERTS, REJECTS, NEITHER = (LABELS.index(label) for label in LABELS)
ANSWER_REPEAT = 3


@dataclass(frozen=True)
class Pair:
    claim: str
    text: str
    label: int  # index into LABELS
    pitfall: str  # "question/pitfall"
    lang: str
    source: str  # written | correction | plain | reported | key-point | other-pitfall | answer

    @property
    def left(self) -> str:
        return self.claim

    @property
    def right(self) -> str:
        return self.text


def pitfall_keys(bank: QuestionBank, stance: dict[str, StanceFile]) -> list[str]:
    """ "question/pitfall" for every pitfall that has stance examples, in bank order."""
    written = {f"{f.question}/{p.id}" for f in stance.values() for p in f.pitfalls}
    keys = [f"{q.id}/{p.id}" for q in bank for p in q.pitfalls]
    return [k for k in keys if k in written]


def holdout_split(keys: list[str], share: float, seed: int) -> tuple[list[str], list[str]]:
    """(kept, held out): `share` of the pitfalls, drawn with `seed`."""
    rng = random.Random(seed)
    held = set(rng.sample(keys, round(len(keys) * share))) if share > 0 else set()
    return [k for k in keys if k not in held], [k for k in keys if k in held]


def build_pairs(
    bank: QuestionBank,
    stance: dict[str, StanceFile],
    keys: Collection[str],
    seed: int = 0,
    negatives: int = 1,
) -> list[Pair]:
    """Pairs for the pitfalls in `keys` only: the hard negatives are drawn from them too, so a
    held-out pitfall's sentences never reach training."""
    rng = random.Random(seed)
    wanted = set(keys)
    asserted: dict[tuple[str, str], list[tuple[str, str]]] = {}  # (key, lang) -> (question, text)
    for file in stance.values():
        for p in file.pitfalls:
            key = f"{file.question}/{p.id}"
            if key in wanted:
                for lang in LANGUAGES:
                    asserted[key, lang] = [(file.question, t) for t in p.asserts.get(lang)]
    pairs: list[Pair] = []
    for question in bank:
        written = {p.id: p for p in stance[question.id].pitfalls} if question.id in stance else {}
        for pitfall in question.pitfalls:
            key = f"{question.id}/{pitfall.id}"
            if key not in wanted or pitfall.id not in written:
                continue
            examples = written[pitfall.id]
            for lang in LANGUAGES:
                claim = pitfall.claim.get(lang)
                found: list[tuple[str, int, str]] = [
                    (text, label_index, "written")
                    for label_index, label in enumerate(LABELS)
                    for text in examples.examples(label).get(lang)
                ]
                found.append((pitfall.correction.get(lang), REJECTS, "correction"))
                found += [(t, REJECTS, "plain") for t in examples.plain.get(lang)]
                found += [(t, REJECTS, "reported") for t in examples.reported.get(lang)]
                found += [(k.text(lang), NEITHER, "key-point") for k in question.key_points]
                own = [k for k in asserted if k[0] != key and k[1] == lang]
                near = [k for k in own if k[0].startswith(f"{question.id}/")]
                far = [k for k in own if not k[0].startswith(f"{question.id}/")]
                for _ in examples.asserts.get(lang):
                    for pool in (near or far, far)[:negatives]:
                        if pool:
                            _, text = rng.choice(asserted[rng.choice(pool)])
                            found.append((text, NEITHER, "other-pitfall"))
                pairs += [Pair(claim, t, label, key, lang, source) for t, label, source in found]
    rng.shuffle(pairs)
    return pairs


def answer_pairs(
    bank: QuestionBank, rows: list[AnswerSentence], keys: Collection[str], seed: int = 0
) -> list[Pair]:
    """Pairs from real answers' sentences, for the pitfalls in `keys` only."""
    wanted = set(keys)
    pairs: list[Pair] = []
    for row in rows:
        key = f"{row.question}/{row.pitfall}"
        if key not in wanted:
            continue
        claim = bank.questions[row.question].pitfall(row.pitfall).claim.get(row.lang)
        label = LABELS.index(row.label)
        repeat = ANSWER_REPEAT if label in (ASSERTS, REJECTS) else 1
        pairs += [Pair(claim, row.text, label, key, row.lang, "answer")] * repeat
    random.Random(seed).shuffle(pairs)
    return pairs
