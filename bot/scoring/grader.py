"""Grades a free-text answer against one bank question.

The grade combines three signals (see README, "How grading works"):
- key-point coverage: every answer sentence is compared with every key point (in both languages);
  a point is covered by its best-matching sentence, helped by the point's identifiers (`terms`);
- overall similarity of the whole answer to the model answer;
- pitfalls: a sentence close to a documented wrong claim is flagged unless its polarity is the
  opposite of the claim's ("eval() does NOT disable gradients") or it sits closer to the correction.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence

import numpy as np

from bot.content.schema import Question
from bot.scoring.analysis import Analysis, Prepared, QuestionVectors
from bot.scoring.composition import POINT_FLOOR, POINT_FULL, compose, no_answer
from bot.scoring.encoder import Encoder
from bot.scoring.grade_result import GradeResult
from bot.scoring.options import GraderOptions
from bot.scoring.pair_readings import flag_rows, read_relevance, read_stance, stance_readings
from bot.scoring.pitfall_head import PitfallHead, load_head
from bot.scoring.pitfalls import distinct_stems, unit_features
from bot.scoring.relevance import BankProfile, Neighbour
from bot.scoring.relevance_net.judge import RelevanceReader
from bot.scoring.score_model import ScoreModel, load_score_model
from bot.scoring.stance.judge import PairModel
from bot.scoring.text import (
    detect_language,
    is_dont_know,
    normalize,
    split_units,
    stems,
    words,
)
from bot.scoring.unit_vectors import encode_units

# Where "unrelated" lands after calibration: all-MiniLM-L6-v2's own English-English level, so the
# thresholds in composition.py keep their meaning with any model (one whose cosines all sit near
# 0.8, like E5, is stretched onto the same scale).
UNRELATED_TARGET = 0.192
# relevance_readings needs no similarities with the answer's own question's texts.
_NO_SIMS = (np.zeros((0, 0)), np.zeros((0, 0)), np.zeros((0, 0)))


def _question_texts(question: Question) -> list[str]:
    """Every text of a question, for its vocabulary: what is encoded, plus the identifiers."""
    return _reference_texts(question) + [t for k in question.key_points for t in k.terms]


def _reference_texts(question: Question) -> list[str]:
    """The texts of a question the grader encodes: its model answer and wording, key points,
    claims and corrections, in both languages."""
    texts = [question.answer.ru, question.answer.en, question.question.ru, question.question.en]
    texts += [t for k in question.key_points for t in (k.ru, k.en)]
    for pitfall in question.pitfalls:
        texts += [pitfall.claim.ru, pitfall.claim.en, pitfall.correction.ru, pitfall.correction.en]
    return texts


def bank_texts(questions: Iterable[Question]) -> set[str]:
    """Every text of these questions that the grader encodes (and the vector cache stores)."""
    return {text for question in questions for text in _reference_texts(question)}


class Grader:
    """Stateless apart from cached bank vectors; call from one worker thread.

    Similarities are calibrated per language pair: the model gives unrelated Russian texts a far
    higher cosine than unrelated English ones, so each raw cosine is rescaled so that "unrelated"
    (the mean similarity between key points of different bank questions) means the same for
    ru-ru, ru-en and en-en, and 1.0 stays 1.0.
    """

    def __init__(
        self,
        encoder: Encoder,
        calibration: list[Question] | None = None,
        options: GraderOptions | None = None,
        stance: PairModel | None = None,
        relevance: RelevanceReader | None = None,
    ):
        """`stance`: the stance model that decides which misconceptions an answer states; None:
        the model's pitfall head (or the fixed rule) does. `relevance`: the model that tells an
        answer to something other than its question; None: the vector rule alone does."""
        self.encoder = encoder
        self.options = options or GraderOptions()
        self._vectors: dict[str, QuestionVectors] = {}
        self._calibration = calibration or []
        self._bank = {q.id: q for q in self._calibration}
        self._baseline: np.ndarray | None = None  # (unit language, reference language)
        self._profile: BankProfile | None = None
        self.head: PitfallHead | None = load_head(encoder.name) if self.options.head else None
        self.stance = stance
        self.relevance = relevance if self.options.relevance else None
        # Fitted with both models' readings among its features: without either, the formula.
        models = self.head is not None and stance is not None and self.relevance is not None
        self.score_model: ScoreModel | None = (
            load_score_model(encoder.name) if models and self.options.fitted_score else None
        )

    def baseline(self) -> np.ndarray:
        if self._baseline is None:
            self._baseline = self._estimate_baseline()
        return self._baseline

    def _estimate_baseline(self) -> np.ndarray:
        owners = [i for i, q in enumerate(self._calibration) for _ in q.key_points]
        if len(set(owners)) < 2:
            return np.full((2, 2), 0.1, dtype=np.float32)
        ru = self.encoder.encode([k.ru for q in self._calibration for k in q.key_points], True)
        en = self.encoder.encode([k.en for q in self._calibration for k in q.key_points], True)
        owner = np.array(owners)
        different = owner[:, None] != owner[None, :]
        pairs = {(0, 0): ru @ ru.T, (0, 1): ru @ en.T, (1, 0): en @ ru.T, (1, 1): en @ en.T}
        table = np.zeros((2, 2), dtype=np.float32)
        for (a, b), sims in pairs.items():
            table[a, b] = float(np.mean(sims[different]))
        return table

    def _calibrate(
        self, sims: np.ndarray, unit_langs: np.ndarray, ref_langs: np.ndarray
    ) -> np.ndarray:
        """sims: (..., units, refs). Rescale each cosine by its language pair's baseline."""
        if not self.options.calibration:
            return sims
        table = self.baseline()
        base: np.ndarray = table[unit_langs[:, None], ref_langs[None, :]]
        target = UNRELATED_TARGET
        calibrated: np.ndarray = (sims - base) / (1.0 - base) * (1.0 - target) + target
        return calibrated

    def _encode_pair(self, items: list[tuple[str, str]]) -> np.ndarray:
        ru = self.encoder.encode([r for r, _ in items], remember=True)
        en = self.encoder.encode([e for _, e in items], remember=True)
        return np.stack([ru, en])

    def vectors(self, question: Question) -> QuestionVectors:
        cached = self._vectors.get(question.id)
        if cached is None:
            cached = QuestionVectors(
                points=self._encode_pair([(k.ru, k.en) for k in question.key_points]),
                claims=self._encode_pair([(p.claim.ru, p.claim.en) for p in question.pitfalls]),
                corrections=self._encode_pair(
                    [(p.correction.ru, p.correction.en) for p in question.pitfalls]
                ),
                context=self.encoder.encode(
                    [
                        question.answer.ru,
                        question.answer.en,
                        question.question.ru,
                        question.question.en,
                    ],
                    remember=True,
                ),
                vocabulary=frozenset(stems(" ".join(_question_texts(question)))),
                pitfall_stems=distinct_stems(question),
            )
            self._vectors[question.id] = cached
        return cached

    def _bank_profile(self) -> BankProfile | None:
        """The whole bank's stored vectors, once every question's are computed (a cold start
        computes them between grades): until then no answer is compared with the bank."""
        if self._profile is None and all(q.id in self._vectors for q in self._calibration):
            self._profile = BankProfile.build(self._calibration, self.vectors)
        return self._profile

    def neighbour(
        self, question: Question, vectors: np.ndarray, langs: np.ndarray
    ) -> Neighbour | None:
        """How the answer (its units' vectors, the whole answer last) compares with every bank
        question (bot/scoring/relevance.py); None before the bank's vectors are all there."""
        profile = self._bank_profile()
        if profile is None or question.id not in profile.ids or profile.count < 2:
            return None
        sims = self._calibrate(vectors @ profile.vectors.T, langs, profile.langs)
        return profile.compare(question.id, sims, (POINT_FLOOR, POINT_FULL))

    def warm(self, questions: list[Question], progress: bool = False) -> None:
        """Encode every question's reference texts now, in one call so that they batch by length;
        `progress`: a bar on stderr, counting texts."""
        texts = list(dict.fromkeys(t for q in questions for t in _reference_texts(q)))
        if progress:
            from tqdm import tqdm  # installed with sentence-transformers

            with tqdm(total=len(texts), desc="question bank", unit="text", mininterval=1.0) as bar:
                self.encoder.encode(texts, remember=True, progress=bar.update)
        else:
            self.encoder.encode(texts, remember=True)
        for question in questions:
            self.vectors(question)

    def grade(self, question: Question, answer: str, lang: str | None = None) -> GradeResult:
        return self.grade_many([(question, answer, lang)])[0]

    def grade_many(self, jobs: list[tuple[Question, str, str | None]]) -> list[GradeResult]:
        """Grade several answers; all their sentences go through the model in one pass."""
        # Questions whose vectors are not computed yet (a cold start): all of them in one call,
        # batched by length, rather than a few small calls per question.
        cold = {q.id: q for q, _, _ in jobs if q.id not in self._vectors}
        if len(cold) > 1:
            self.warm(list(cold.values()))
        prepared = self._prepare(jobs)
        vectors = self._unit_vectors([(text, units) for _, text, _, units in prepared])
        return self._finish(prepared, vectors)

    def seconds_without_model(self, jobs: Sequence[tuple[Question, str, str | None]]) -> float:
        """What grading `jobs` costs besides the model (splitting, similarities, pitfalls,
        caps): their vectors are computed first, untimed. For `bench`: the most answers a second
        one grading process can give, however fast the device."""
        vectors = self._unit_vectors([(t, u) for _, t, _, u in self._prepare(jobs)])
        started = time.perf_counter()
        self._finish(self._prepare(jobs), vectors)
        return time.perf_counter() - started

    def _prepare(self, jobs: Sequence[tuple[Question, str, str | None]]) -> list[Prepared]:
        prepared = []
        for question, answer, lang in jobs:
            text = normalize(answer)
            units = [] if is_dont_know(text) or not words(text) else self._units(text)
            prepared.append((question, text, lang or detect_language(text), units))
        return prepared

    def _finish(self, prepared: list[Prepared], vectors: list[np.ndarray]) -> list[GradeResult]:
        analyses = [
            self._analyse(question, text, language, units, unit_vectors) if units else None
            for (question, text, language, units), unit_vectors in zip(
                prepared, vectors, strict=True
            )
        ]
        if self.stance is not None and self.head is not None:
            read_stance(
                self.head,
                self.stance,
                [a for a in analyses if a is not None],
                self.options.clauses,
                self.options.stance_flags,
            )
        for a in analyses:
            if a is not None and self.options.neighbour:
                a.neighbour = self.neighbour(a.question, a.vectors, a.unit_langs)
        if self.relevance is not None:
            read_relevance(self.relevance, [a for a in analyses if a is not None], self._bank)
        return [
            self._grade_units(analysis) if analysis is not None else no_answer(question, language)
            for analysis, (question, _, language, _) in zip(analyses, prepared, strict=True)
        ]

    def _analyse(
        self, question: Question, text: str, language: str, units: list[str], vectors: np.ndarray
    ) -> Analysis:
        qv = self.vectors(question)
        unit_langs = np.array([0 if detect_language(u) == "ru" else 1 for u in units])
        point_sims, claim_sims, fix_sims = self._reference_sims(vectors, unit_langs, qv)
        matrix = (
            unit_features(question, units, qv.pitfall_stems, claim_sims, fix_sims, point_sims)
            if self.head is not None
            else None
        )
        return Analysis(
            question,
            text,
            language,
            units,
            vectors,
            unit_langs,
            point_sims,
            claim_sims,
            fix_sims,
            matrix,
        )

    def relevance_readings(
        self, jobs: Sequence[tuple[Question, str, str | None]], nearest_lean: float = 0.0
    ) -> list[tuple[Neighbour | None, float | None, float | None]]:
        """For choosing the relevance thresholds: per answer, how it compares with every bank
        question, the relevance model's P(other) with its own question and, where it is
        `nearest_lean` or more closer to another question, with that one (None: no units, no
        model, not read)."""
        prepared = self._prepare(jobs)
        vectors = self._unit_vectors([(text, units) for _, text, _, units in prepared])
        readings: list[tuple[Neighbour | None, float | None, float | None]] = []
        analyses = []
        for (question, text, language, units), unit_vectors in zip(prepared, vectors, strict=True):
            langs = np.array([0 if detect_language(u) == "ru" else 1 for u in units])
            analysis = Analysis(question, text, language, units, unit_vectors, langs, *_NO_SIMS)
            analysis.neighbour = self.neighbour(question, unit_vectors, langs) if units else None
            analyses.append(analysis)
        if self.relevance is not None:
            read_relevance(self.relevance, analyses, self._bank, nearest_lean)
        for a in analyses:
            readings.append((a.neighbour, a.other_p, a.nearest_p))
        return readings

    def pair_readings(
        self, jobs: Sequence[tuple[Question, str, str | None]], floor: float
    ) -> list[list[tuple[str, float, float, float]]]:
        """For choosing the stance thresholds: per answer, (pitfall id, the head's raw logit,
        its gated logit, the stance model's P(asserts)) of each candidate sentence at `floor`."""
        if self.stance is None or self.head is None:
            return [[] for _ in jobs]
        prepared, analyses = self._analyses(jobs)
        readings = iter(
            stance_readings(self.head, self.stance, analyses, floor, self.options.clauses)
        )
        result: list[list[tuple[str, float, float, float]]] = []
        for question, _, _, units in prepared:
            if not units:
                result.append([])
                continue
            _, found, asserts, _, _ = next(readings)
            result.append(
                [
                    (question.pitfalls[c.pitfall].id, c.logit, c.said, float(p))
                    for c, p in zip(found, asserts, strict=True)
                ]
            )
        return result

    def flag_rows(
        self, jobs: Sequence[tuple[Question, str, str | None]]
    ) -> list[list[tuple[str, np.ndarray, bool]]]:
        """For fitting the stance flag model: per answer, per pitfall the stance model read,
        (its id, the flag model's features, whether the head's own flag stands without it)."""
        if self.stance is None or self.head is None:
            return [[] for _ in jobs]
        prepared, analyses = self._analyses(jobs)
        rows = iter(flag_rows(self.head, self.stance, analyses, self.options.clauses))
        return [next(rows) if units else [] for _, _, _, units in prepared]

    def _analyses(
        self, jobs: Sequence[tuple[Question, str, str | None]]
    ) -> tuple[list[Prepared], list[Analysis]]:
        """The jobs prepared, and the analyses of those with something to read."""
        prepared = self._prepare(jobs)
        vectors = self._unit_vectors([(text, units) for _, text, _, units in prepared])
        analyses = [
            self._analyse(q, text, lang, units, v)
            for (q, text, lang, units), v in zip(prepared, vectors, strict=True)
            if units
        ]
        return prepared, analyses

    def _unit_vectors(self, answers: list[tuple[str, list[str]]]) -> list[np.ndarray]:
        """Each answer's unit vectors, (units, d), by the configured method (unit_vectors.py)."""
        return encode_units(self.encoder, answers, self.options.one_pass, self.options.encode_whole)

    def _sims(
        self, unit_vectors: np.ndarray, unit_langs: np.ndarray, refs: np.ndarray
    ) -> np.ndarray:
        """(units, n) calibrated cosines, the best of each reference's two languages."""
        per_lang = [
            self._calibrate(unit_vectors @ refs[lang].T, unit_langs, np.full(refs.shape[1], lang))
            for lang in (0, 1)
        ]
        best: np.ndarray = np.maximum(per_lang[0], per_lang[1])  # a ufunc: typed Any
        return best

    def _reference_sims(
        self, unit_vectors: np.ndarray, unit_langs: np.ndarray, qv: QuestionVectors
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Calibrated cosines of each unit with the key points, the claims and the corrections:
        (units, key points), (units, pitfalls), (units, pitfalls)."""
        return (
            self._sims(unit_vectors, unit_langs, qv.points),
            self._sims(unit_vectors, unit_langs, qv.claims),
            self._sims(unit_vectors, unit_langs, qv.corrections),
        )

    def pitfall_features(self, question: Question, answer: str) -> tuple[list[str], np.ndarray]:
        """For fitting the head: the answer's candidate sentences and their feature matrix."""
        text = normalize(answer)
        units = [] if is_dont_know(text) or not words(text) else self._units(text)
        if not units:
            return [], np.zeros((0, len(question.pitfalls), 0))
        vectors = self._unit_vectors([(text, units)])[0]
        langs = np.array([0 if detect_language(u) == "ru" else 1 for u in units])
        qv = self.vectors(question)
        point_sims, claim_sims, fix_sims = self._reference_sims(vectors, langs, qv)
        matrix = unit_features(question, units, qv.pitfall_stems, claim_sims, fix_sims, point_sims)
        return units[: len(matrix)], matrix

    def _units(self, text: str) -> list[str]:
        return split_units(text, clauses=self.options.clauses)

    def _grade_units(self, analysis: Analysis) -> GradeResult:
        qv = self.vectors(analysis.question)
        context_sims = self._calibrate(
            analysis.vectors[-1:] @ qv.context.T, analysis.unit_langs[-1:], np.array([0, 1, 0, 1])
        )[0]
        return compose(
            analysis, qv, context_sims, self.head, self.relevance, self.options, self.score_model
        )
