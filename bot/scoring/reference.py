"""Grades an answer against a reference answer alone (no key points, no pitfalls).

Used for a user's own questions and for external data sets such as Mohler et al. (2011).
The raw signal is the mean of two question-demoted similarities (see docs/grading.md):
- word alignment: how much of the reference's content the answer's words cover;
- sentence similarity of the two texts with the question's words removed.
It is mapped to 0-10 between two anchors measured on the question bank with the loaded model,
so the scale means the same under any model: 0 = what an unrelated sentence gets (another
question's key point), 10 = what a model answer gets against its own key points.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from bot.content.schema import Question
from bot.scoring.alignment import coverage, question_words
from bot.scoring.encoder import Encoder
from bot.scoring.grade_result import GradeResult, PointResult, verdict_for
from bot.scoring.text import detect_language, is_dont_know, normalize, split_units, words
from bot.scoring.token_pieces import TokenVectors
from bot.verdicts import Verdict

_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")


def demote(text: str, demoted: set[str]) -> str:
    """The text without the question's words; the text itself if nothing would remain."""
    kept = [w for w in text.split() if re.sub(r"\W", "", w.lower())[:6] not in demoted]
    return " ".join(kept) if kept else text


def reference_sentences(reference: str) -> list[str]:
    parts = [normalize(p) for p in _SENTENCE.split(reference)]
    return [p for p in parts if len(words(p)) >= 2] or [normalize(reference)]


@dataclass(frozen=True)
class ReferenceOptions:
    """Switches for `eval --ablation`."""

    alignment_weight: float = 0.5  # the rest goes to the sentence cosine
    demote: bool = True  # drop the question's words from both texts


class ReferenceGrader:
    def __init__(
        self,
        encoder: Encoder,
        anchors_from: list[Question] | None = None,
        options: ReferenceOptions | None = None,
    ):
        self.encoder = encoder
        self.options = options or ReferenceOptions()
        self._anchors_from = anchors_from or []
        self._anchors: tuple[float, float] | None = None

    def similarity(self, question: str, reference: str, answer: str) -> float:
        """The raw signal in [-1, 1]: mean of word coverage and demoted sentence cosine."""
        demoted = self._demoted(question)
        tokens, vector = self._answer_views([answer], [demoted])[0]
        return self._combine(reference, demoted, tokens, vector)

    def _demoted(self, question: str) -> set[str]:
        return question_words(question) if self.options.demote else set()

    def _answer_views(
        self, answers: list[str], demoted: list[set[str]]
    ) -> list[tuple[TokenVectors | None, np.ndarray | None]]:
        """Token vectors and the demoted sentence vector of each answer, in two model passes."""
        weight = self.options.alignment_weight
        tokens: list[TokenVectors | None] = [None] * len(answers)
        vectors: list[np.ndarray | None] = [None] * len(answers)
        if weight > 0:
            tokens = list(self.encoder.encode_tokens(answers))
        if weight < 1:
            vectors = list(
                self.encoder.encode([demote(a, d) for a, d in zip(answers, demoted, strict=True)])
            )
        return list(zip(tokens, vectors, strict=True))

    def _combine(
        self,
        reference: str,
        demoted: set[str],
        tokens: TokenVectors | None,
        vector: np.ndarray | None,
    ) -> float:
        weight = self.options.alignment_weight
        aligned = cosine = 0.0
        if tokens is not None:
            (ref_tokens,) = self.encoder.encode_tokens([reference], remember=True)
            aligned = coverage(ref_tokens, tokens, demoted)
        if vector is not None:
            ref_vector = self.encoder.encode([demote(reference, demoted)], remember=True)[0]
            cosine = float(vector @ ref_vector)
        return weight * aligned + (1 - weight) * cosine

    def anchors(self) -> tuple[float, float]:
        """(unrelated, full credit) raw levels, measured on English bank texts."""
        if self._anchors is None:
            self._anchors = self._measure_anchors()
        return self._anchors

    def _measure_anchors(self) -> tuple[float, float]:
        """Unrelated: a key point against another question's key point (short texts, like most
        answers); full credit: a key point against its own question's model answer."""
        questions = self._anchors_from[:16]
        if len(questions) < 2:
            return 0.25, 0.70
        demoted = [self._demoted(q.question.en) for q in questions]
        answers = self._answer_views([q.answer.en for q in questions], demoted)
        others = [
            questions[(i + 1) % len(questions)].key_points[0].en for i in range(len(questions))
        ]
        unrelated_views = self._answer_views(others, demoted)
        full, unrelated = [], []
        for index, question in enumerate(questions):
            point = question.key_points[0].en
            full.append(self._combine(point, demoted[index], *answers[index]))
            unrelated.append(self._combine(point, demoted[index], *unrelated_views[index]))
        low, high = float(np.mean(unrelated)), float(np.mean(full))
        return low, max(high, low + 0.1)

    def grade(
        self,
        question: str,
        reference: str,
        answer: str,
        lang: str | None = None,
        question_id: str = "",
    ) -> GradeResult:
        return self.grade_many([(question, reference, answer, lang)], question_id)[0]

    def grade_many(
        self, jobs: list[tuple[str, str, str, str | None]], question_id: str = ""
    ) -> list[GradeResult]:
        """Grade (question, reference, answer, lang) jobs with one model pass per kind of input."""
        low, high = self.anchors()

        def scale(raw: float) -> float:
            return float(np.clip((raw - low) / (high - low), 0.0, 1.0))

        texts = [normalize(answer) for _, _, answer, _ in jobs]
        live = [i for i, t in enumerate(texts) if words(t) and not is_dont_know(t)]
        demoted = {i: self._demoted(jobs[i][0]) for i in live}
        views = dict(
            zip(
                live,
                self._answer_views([texts[i] for i in live], [demoted[i] for i in live]),
                strict=True,
            )
        )
        # Sentences to quote as evidence; a one-sentence answer needs no model pass for that.
        units = {i: split_units(texts[i], clauses=False) for i in live}
        units = {i: u[:-1] if len(u) > 2 else u[:1] for i, u in units.items()}
        quoted = [i for i in live if len(units[i]) > 1]
        quoted_set = set(quoted)
        unit_vectors = self.encoder.encode([u for i in quoted for u in units[i]])
        results, start = [], 0
        for index, (_, reference, _, lang) in enumerate(jobs):
            text = texts[index]
            language = lang or detect_language(text)
            sentences = reference_sentences(reference)
            if index not in views:
                results.append(
                    GradeResult(
                        question_id=question_id,
                        language=language,
                        score=0.0,
                        verdict=Verdict.no_answer,
                        points=[
                            PointResult(f"r{i + 1}", False, 0.0, None)
                            for i in range(len(sentences))
                        ],
                    )
                )
                continue
            own = None
            if index in quoted_set:
                own = unit_vectors[start : start + len(units[index])]
                start += len(units[index])
            words_out = demoted[index]
            raw = self._combine(reference, words_out, *views[index])
            score = round(10 * scale(raw), 1)
            sentence_vectors = self.encoder.encode(sentences, remember=True)
            points = []
            for number, sentence in enumerate(sentences):
                credit = (
                    scale(self._combine(sentence, words_out, *views[index]))
                    if len(sentences) > 1
                    else score / 10
                )
                best = 0 if own is None else int(np.argmax(own @ sentence_vectors[number]))
                covered = credit >= 0.5
                points.append(
                    PointResult(
                        f"r{number + 1}",
                        covered,
                        round(credit, 3),
                        units[index][best] if covered else None,
                    )
                )
            results.append(
                GradeResult(
                    question_id=question_id,
                    language=language,
                    score=score,
                    verdict=verdict_for(score) if score > 0 else Verdict.off_topic,
                    points=points,
                    similarity=raw,
                    relevance=raw,
                )
            )
        return results
