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
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

import numpy as np

from bot.content.schema import Question
from bot.scoring.encoder import Encoder
from bot.scoring.pitfall_head import PitfallHead, load_head, said_logits
from bot.scoring.pitfalls import (
    PitfallHit,
    by_head,
    by_rule,
    candidate_count,
    distinct_stems,
    unit_features,
)
from bot.scoring.relevance import ANOTHER_QUESTION_CAP, BankProfile, Neighbour
from bot.scoring.relevance_net.judge import RelevanceReader, answered_instead, read_other
from bot.scoring.stance.judge import Candidate, PairModel, candidates, read_all, verdicts
from bot.scoring.text import (
    admits_not_knowing,
    detect_language,
    is_dont_know,
    is_hedged,
    named_terms,
    normalize,
    overlap,
    reports_belief,
    split_units,
    stems,
    words,
)

# Thresholds on cosine similarity for all-MiniLM-L6-v2; see README for how they were chosen.
POINT_FLOOR = 0.30  # below this a sentence gives a key point no credit
POINT_FULL = 0.62  # at or above this a sentence gives full credit
POINT_COVERED = 0.50  # credit needed to list a point as covered
TERM_BONUS = 0.18  # an identifier of the point appearing in the answer
HOLISTIC_FLOOR = 0.25
HOLISTIC_FULL = 0.75
PITFALL_PENALTY = 0.15
OFF_TOPIC_RELEVANCE = 0.28
OFF_TOPIC_CAP = 1.0
OFF_TOPIC_OVERLAP = 0.12  # share of the answer's word stems found in the question's texts
COVERAGE_WEIGHT = 0.7
# Where "unrelated" lands after calibration: all-MiniLM-L6-v2's own English-English level, so the
# thresholds above keep their meaning with any model (one whose cosines all sit near 0.8, like E5,
# is stretched onto the same scale).
UNRELATED_TARGET = 0.192
GENERIC_CAP = 3.0  # an answer that names none of the question's identifiers
ADMITS_CAP = 1.5  # a short answer (24 words or fewer) that says it does not know or never used it


@dataclass(frozen=True)
class GraderOptions:
    """Switches for each part of the method; `eval --ablation` turns them off one at a time."""

    calibration: bool = True  # per-language-pair rescaling of cosines
    terms: bool = True  # identifier bonus for key points
    clauses: bool = True  # contrastive clauses as extra units
    polarity: bool = True  # negation / rejection check before flagging a pitfall
    coverage_weight: float = COVERAGE_WEIGHT  # 1.0: key points only; 0.0: model answer only
    off_topic_gate: bool = True
    generic_cap: bool = True
    admits_cap: bool = True  # ADMITS_CAP
    # Encode the whole answer as well as its sentences (about 2x the model work, +0.02 Spearman);
    # off: its vector is the length-weighted mean of the sentences' (docs/grading.md).
    encode_whole: bool = True
    # Encode each answer once and pool its sentences' and clauses' vectors from its tokens,
    # instead of encoding every unit as its own text (docs/grading.md, "Speed").
    one_pass: bool = False
    # The fitted pitfall head of the model (bot/scoring/heads/), where one exists; off: the fixed
    # rule (threshold, polarity, closer-to-correction).
    head: bool = True
    # The stance model (bot/scoring/stance/), where one was trained on this embedding model:
    # it decides which misconceptions are stated instead of the head.
    stance: bool = True
    # Tell an answer to another bank question (Neighbour.answered) and cap it.
    neighbour: bool = True
    # The relevance model (bot/scoring/relevance_net/), where one was trained on this embedding
    # model: with the vector rule, tells an answer to another question (relevance_net/judge.py).
    relevance: bool = True


@dataclass(frozen=True)
class PointResult:
    id: str
    covered: bool
    credit: float
    evidence: str | None


@dataclass(frozen=True)
class GradeResult:
    question_id: str
    language: str
    score: float
    verdict: str
    points: list[PointResult] = field(default_factory=list)
    pitfalls: list[PitfallHit] = field(default_factory=list)
    # Close to a documented misconception, but not close enough to say so: shown as worth
    # checking, with no penalty.
    checks: list[PitfallHit] = field(default_factory=list)
    similarity: float = 0.0
    relevance: float = 0.0
    # The bank question this answer reads like an answer to, instead of its own.
    answers_question: str | None = None

    @property
    def covered(self) -> list[str]:
        return [p.id for p in self.points if p.covered]

    @property
    def missed(self) -> list[str]:
        return [p.id for p in self.points if not p.covered]

    def to_json(self) -> dict[str, object]:
        return {
            "question_id": self.question_id,
            "score": self.score,
            "verdict": self.verdict,
            "covered": self.covered,
            "missed": self.missed,
            "pitfalls": [asdict(p) for p in self.pitfalls],
            "worth_checking": [asdict(p) for p in self.checks],
            "language": self.language,
            "similarity": round(self.similarity, 3),
            "relevance": round(self.relevance, 3),
            "answers_question": self.answers_question,
            "evidence": {p.id: p.evidence for p in self.points if p.covered},
        }


def verdict_for(score: float) -> str:
    if score >= 8.5:
        return "excellent"
    if score >= 7.0:
        return "good"
    if score >= 4.0:
        return "partial"
    if score > 0:
        return "weak"
    return "no-answer"


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


def _with_stance(
    head_said: list[PitfallHit], head_checks: list[PitfallHit], stance_said: list[PitfallHit]
) -> tuple[list[PitfallHit], list[PitfallHit]]:
    """The stance model's verdicts over the head's: its flags (with their probability), then
    the head's flags on a clause it did not read; a hint only for a pitfall not said and a
    sentence not accused."""
    said = stance_said + [h for h in head_said if h.id not in {s.id for s in stance_said}]
    accused = {h.evidence for h in said}
    flagged = {h.id for h in said}
    checks = [h for h in head_checks if h.id not in flagged and h.evidence not in accused]
    return said, checks


def _ramp(value: float, low: float, high: float) -> float:
    return float(min(max((value - low) / (high - low), 0.0), 1.0))  # scalars: no np.clip


_Prepared = tuple[Question, str, str, list[str]]  # question, normalised text, language, units


@dataclass(frozen=True)
class _QuestionVectors:
    points: np.ndarray  # (2, k, d): languages x key points
    claims: np.ndarray  # (2, p, d)
    corrections: np.ndarray  # (2, p, d)
    context: np.ndarray  # (4, d): model answer ru/en, question ru/en
    vocabulary: frozenset[str]  # word stems of every text of the question
    # per pitfall: stems only the claim uses, stems only the correction uses
    pitfall_stems: tuple[tuple[frozenset[str], frozenset[str]], ...]


@dataclass
class _Analysis:
    """One answer between the model pass and its grade: units, their vectors and similarities,
    and (with a stance model) its pitfall verdicts."""

    question: Question
    text: str
    language: str
    units: list[str]
    vectors: np.ndarray
    unit_langs: np.ndarray
    point_sims: np.ndarray  # (units, key points)
    claim_sims: np.ndarray  # (units, pitfalls)
    fix_sims: np.ndarray  # (units, pitfalls)
    matrix: np.ndarray | None = None  # the pitfall head's features, where it has a head
    stance: list[PitfallHit] | None = None  # the pitfalls said, with the stance model
    other_p: float | None = None  # the relevance model's P(other), where it has one


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
        self._vectors: dict[str, _QuestionVectors] = {}
        self._calibration = calibration or []
        self._baseline: np.ndarray | None = None  # (unit language, reference language)
        self._profile: BankProfile | None = None
        self.head: PitfallHead | None = load_head(encoder.name) if self.options.head else None
        self.stance = stance
        self.relevance = relevance if self.options.relevance else None

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
        base = table[unit_langs[:, None], ref_langs[None, :]]
        target = UNRELATED_TARGET
        return (sims - base) / (1.0 - base) * (1.0 - target) + target

    def _encode_pair(self, items: list[tuple[str, str]]) -> np.ndarray:
        ru = self.encoder.encode([r for r, _ in items], remember=True)
        en = self.encoder.encode([e for _, e in items], remember=True)
        return np.stack([ru, en])

    def vectors(self, question: Question) -> _QuestionVectors:
        cached = self._vectors.get(question.id)
        if cached is None:
            cached = _QuestionVectors(
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

    def _prepare(self, jobs: Sequence[tuple[Question, str, str | None]]) -> list[_Prepared]:
        prepared = []
        for question, answer, lang in jobs:
            text = normalize(answer)
            units = [] if is_dont_know(text) or not words(text) else self._units(text)
            prepared.append((question, text, lang or detect_language(text), units))
        return prepared

    def _finish(self, prepared: list[_Prepared], vectors: list[np.ndarray]) -> list[GradeResult]:
        analyses = [
            self._analyse(question, text, language, units, unit_vectors) if units else None
            for (question, text, language, units), unit_vectors in zip(
                prepared, vectors, strict=True
            )
        ]
        if self.stance is not None:
            self._read_stance(self.stance, [a for a in analyses if a is not None])
        if self.relevance is not None:
            self._read_relevance(self.relevance, [a for a in analyses if a is not None])
        return [
            self._grade_units(analysis)
            if analysis is not None
            else self._no_answer(question, language)
            for analysis, (question, _, language, _) in zip(analyses, prepared, strict=True)
        ]

    def _analyse(
        self, question: Question, text: str, language: str, units: list[str], vectors: np.ndarray
    ) -> _Analysis:
        qv = self.vectors(question)
        unit_langs = np.array([0 if detect_language(u) == "ru" else 1 for u in units])
        point_sims, claim_sims, fix_sims = self._reference_sims(vectors, unit_langs, qv)
        matrix = (
            unit_features(question, units, qv.pitfall_stems, claim_sims, fix_sims, point_sims)
            if self.head is not None
            else None
        )
        return _Analysis(
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

    def _read_relevance(self, model: RelevanceReader, analyses: list[_Analysis]) -> None:
        """The relevance model's P(other) of every answer, in one call."""
        readings = read_other(model, [(a.question, a.text, a.language) for a in analyses])
        for a, other_p in zip(analyses, readings, strict=True):
            a.other_p = other_p

    def relevance_readings(
        self, jobs: Sequence[tuple[Question, str, str | None]]
    ) -> list[tuple[Neighbour | None, float | None]]:
        """For choosing the relevance thresholds: per answer, how it compares with every bank
        question and the relevance model's P(other) (None: no units, no model)."""
        prepared = self._prepare(jobs)
        vectors = self._unit_vectors([(text, units) for _, text, _, units in prepared])
        others: list[float | None] = [None] * len(prepared)
        if self.relevance is not None:
            others = list(
                read_other(self.relevance, [(q, text, lang) for q, text, lang, _ in prepared])
            )
        readings: list[tuple[Neighbour | None, float | None]] = []
        for (question, _, _, units), unit_vectors, other_p in zip(
            prepared, vectors, others, strict=True
        ):
            langs = np.array([0 if detect_language(u) == "ru" else 1 for u in units])
            neighbour = self.neighbour(question, unit_vectors, langs) if units else None
            readings.append((neighbour, other_p))
        return readings

    def _read_stance(self, model: PairModel, analyses: list[_Analysis]) -> None:
        """The stance model's verdicts on every answer (bot/scoring/stance/judge.py)."""
        if self.head is None:
            return
        for a, (chosen, found, asserts, claim_sims) in zip(
            analyses, self._readings(model, analyses, model.head_floor), strict=True
        ):
            a.stance = verdicts(
                model, a.question, chosen, found, asserts, self.head.flag_at, claim_sims
            )

    def _readings(
        self, model: PairModel, analyses: list[_Analysis], floor: float
    ) -> list[tuple[list[str], list[Candidate], np.ndarray, np.ndarray]]:
        """Per answer: its sentences, the head's candidate sentences per pitfall at `floor` or
        more, the stance model's P(asserts) for each (all answers in one call), and the
        sentences' claim similarities."""
        assert self.head is not None
        rows, sims = [], []
        for a in analyses:
            assert a.matrix is not None
            # Sentences only (not clauses, not the whole of a multi-sentence answer).
            sentences = set(split_units(a.text, clauses=False))
            index = [
                i
                for i, u in enumerate(a.units[: candidate_count(a.units)])
                if not self.options.clauses or u in sentences
            ]
            raw = self.head.logits(a.matrix)
            said = said_logits(a.matrix, raw)[index]
            chosen = [a.units[i] for i in index]
            rows.append((chosen, candidates(a.question, chosen, raw[index], said, floor)))
            sims.append(a.claim_sims[index])
        return [
            (chosen, found, asserts, claim_sims)
            for (chosen, found), asserts, claim_sims in zip(
                rows, read_all(model, rows), sims, strict=True
            )
        ]

    def pair_readings(
        self, jobs: Sequence[tuple[Question, str, str | None]], floor: float
    ) -> list[list[tuple[str, float, float, float]]]:
        """For choosing the stance thresholds: per answer, (pitfall id, the head's raw logit,
        its gated logit, the stance model's P(asserts)) of each candidate sentence at `floor`."""
        if self.stance is None or self.head is None:
            return [[] for _ in jobs]
        prepared = self._prepare(jobs)
        vectors = self._unit_vectors([(text, units) for _, text, _, units in prepared])
        analyses = [
            self._analyse(q, text, lang, units, v)
            for (q, text, lang, units), v in zip(prepared, vectors, strict=True)
            if units
        ]
        readings = iter(self._readings(self.stance, analyses, floor))
        result: list[list[tuple[str, float, float, float]]] = []
        for question, _, _, units in prepared:
            if not units:
                result.append([])
                continue
            _, found, asserts, _ = next(readings)
            result.append(
                [
                    (question.pitfalls[c.pitfall].id, c.logit, c.said, float(p))
                    for c, p in zip(found, asserts, strict=True)
                ]
            )
        return result

    def _unit_vectors(self, answers: list[tuple[str, list[str]]]) -> list[np.ndarray]:
        """Each answer's unit vectors, (units, d), by the configured method:
        - one pass (`one_pass`): the whole answer goes through the model once; a sentence's or
          clause's vector is the mean of its tokens' contextual vectors;
        - every unit encoded on its own (the whole answer too, unless `encode_whole` is off:
          then the length-weighted mean of its sentences')."""
        if self.options.one_pass:
            return self._pooled_unit_vectors(answers)
        # The whole answer (the last unit of a multi-sentence answer) is the longest text to
        # encode; without `encode_whole`, its vector is the length-weighted mean of its parts'.
        derived = [
            not self.options.encode_whole and len(units) > 1 and units[-1] == whole
            for whole, units in answers
        ]
        to_encode = [
            u
            for (_, units), skip in zip(answers, derived, strict=True)
            for u in (units[:-1] if skip else units)
        ]
        vectors = self.encoder.encode(to_encode)
        result, start = [], 0
        for (_, units), skip in zip(answers, derived, strict=True):
            count = len(units) - 1 if skip else len(units)
            unit_vectors = vectors[start : start + count]
            start += count
            if skip:
                weights = np.array([len(words(u)) for u in units[:-1]], dtype=np.float32)
                whole = weights @ unit_vectors
                whole /= max(float(np.linalg.norm(whole)), 1e-9)
                unit_vectors = np.vstack([unit_vectors, whole[None, :]])
            result.append(unit_vectors)
        return result

    def _pooled_unit_vectors(self, answers: list[tuple[str, list[str]]]) -> list[np.ndarray]:
        dimension = self.encoder.dimension
        texts = [text for text, units in answers if units]
        spans: list[list[tuple[int, int]]] = []
        for text, units in answers:
            if units:
                found = [(text.find(u), len(u)) for u in units]
                spans.append([(at, at + n) if at >= 0 else (0, len(text)) for at, n in found])
        encoded = iter(self.encoder.encode_spans(texts, spans))
        result = []
        for text, units in answers:
            if not units:
                result.append(np.zeros((0, dimension), dtype=np.float32))
                continue
            whole, pooled = next(encoded)
            # The whole answer's own vector wherever a unit is the whole text.
            rows = [whole if u == text else pooled[i] for i, u in enumerate(units)]
            result.append(np.stack(rows).astype(np.float32))
        return result

    def _sims(
        self, unit_vectors: np.ndarray, unit_langs: np.ndarray, refs: np.ndarray
    ) -> np.ndarray:
        """(units, n) calibrated cosines, the best of each reference's two languages."""
        per_lang = [
            self._calibrate(unit_vectors @ refs[lang].T, unit_langs, np.full(refs.shape[1], lang))
            for lang in (0, 1)
        ]
        return np.maximum(per_lang[0], per_lang[1])

    def _reference_sims(
        self, unit_vectors: np.ndarray, unit_langs: np.ndarray, qv: _QuestionVectors
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

    def _no_answer(self, question: Question, language: str) -> GradeResult:
        return GradeResult(
            question_id=question.id,
            language=language,
            score=0.0,
            verdict="no-answer",
            points=[PointResult(k.id, False, 0.0, None) for k in question.key_points],
        )

    def _grade_units(self, analysis: _Analysis) -> GradeResult:
        opts = self.options
        question, text, language, units = (
            analysis.question,
            analysis.text,
            analysis.language,
            analysis.units,
        )
        unit_vectors, unit_langs = analysis.vectors, analysis.unit_langs
        point_sims, claim_sims, fix_sims = (
            analysis.point_sims,
            analysis.claim_sims,
            analysis.fix_sims,
        )
        qv = self.vectors(question)
        if self.head is not None and analysis.matrix is not None:
            pitfalls, checks = by_head(self.head, question, units, analysis.matrix)
            if analysis.stance is not None:
                pitfalls, checks = _with_stance(pitfalls, checks, analysis.stance)
        else:
            pitfalls, checks = by_rule(question, units, claim_sims, fix_sims, opts.polarity), []
        # Any unit holding a wrong statement (its sentence, the whole answer) is excluded.
        wrong_units = [i for i, u in enumerate(units) if any(p.evidence in u for p in pitfalls)]
        # So is one that reports a belief ("many think X"): it is about X, not a statement of
        # the key point; its "but actually Y" clause is a unit of its own and still counts.
        whole = len(units) - 1 if len(units) > 1 and units[-1] == text else None
        wrong_units += [i for i, u in enumerate(units) if i != whole and reports_belief(u)]

        # Best sentence per key point, over both languages of the point. A sentence that states
        # a misconception earns no credit, however close its words are to a key point.
        point_sims[wrong_units, :] = -1.0
        points: list[PointResult] = []
        credits: list[float] = []
        named = named_terms(text, {t for k in question.key_points for t in k.terms})
        for index, point in enumerate(question.key_points):
            best_unit = int(np.argmax(point_sims[:, index]))
            sim = float(point_sims[best_unit, index])
            if opts.terms and any(term in named for term in point.terms):
                sim += TERM_BONUS
            credit = _ramp(sim, POINT_FLOOR, POINT_FULL)
            covered = credit >= _ramp(POINT_COVERED, POINT_FLOOR, POINT_FULL)
            credits.append(credit * point.weight)
            # A clause of a sentence flagged as a misconception may still earn credit (measured:
            # docs/grading.md), but is not quoted as "your words" under a covered point; nor is
            # one the user is asked to check (a hint): the same words under ✅ and under ⚠️.
            quoted = covered and not any(
                units[best_unit] in p.evidence for p in (*pitfalls, *checks)
            )
            points.append(
                PointResult(
                    point.id, covered, round(credit, 3), units[best_unit] if quoted else None
                )
            )
        coverage = sum(credits) / sum(k.weight for k in question.key_points)

        context_sims = self._calibrate(
            (unit_vectors[-1:] @ qv.context.T), unit_langs[-1:], np.array([0, 1, 0, 1])
        )[0]
        similarity = float(max(context_sims[0], context_sims[1]))
        # A sentence close to one of the question's documented wrong claims is on the subject,
        # however far it is from the correct texts: "eval() turns off gradients" is not off topic.
        relevance = max(
            float(np.max(context_sims)),
            float(np.max(point_sims)),
            float(np.max(claim_sims, initial=-1.0)),
        )
        holistic = _ramp(similarity, HOLISTIC_FLOOR, HOLISTIC_FULL)

        raw = opts.coverage_weight * coverage + (1 - opts.coverage_weight) * holistic
        raw -= PITFALL_PENALTY * len(pitfalls)
        score = round(10 * float(np.clip(raw, 0.0, 1.0)), 1)
        has_terms = bool(named)
        lexical = overlap(text, set(qv.vocabulary))
        off_topic = (
            opts.off_topic_gate
            and not has_terms
            and (relevance < OFF_TOPIC_RELEVANCE or lexical < OFF_TOPIC_OVERLAP)
        )
        if not has_terms and opts.generic_cap:
            # Names nothing concrete the question is about: "it is flexible and pythonic".
            score = min(score, GENERIC_CAP)
        if not has_terms and is_hedged(text):
            return self._no_answer(question, language)  # "no idea, I only used keras"
        if opts.admits_cap and admits_not_knowing(text):
            # Naming one API and then "I don't know the rest" is not knowledge of the subject;
            # one short sentence can sit close to every key point of a question. In
            # content/eval and content/heldout every answer of 30 words or fewer that says so
            # has a human grade of 0 or 1; the limit is 24, as a longer answer can hold a lot
            # besides "I don't know X" (tests/unit/test_text.py).
            score = min(score, ADMITS_CAP)
        if off_topic:
            score = min(score, OFF_TOPIC_CAP)
            points = [PointResult(p.id, False, 0.0, None) for p in points]
            pitfalls, checks = [], []
        other = None
        if opts.neighbour:  # also behind the off-topic gate: the feedback can name the question
            neighbour = self.neighbour(question, unit_vectors, unit_langs)
            if neighbour is not None:
                model = self.relevance
                other = (
                    answered_instead(
                        neighbour, analysis.other_p, model.other_at, model.lean, model.veto
                    )
                    if model is not None
                    else neighbour.answered()
                )
        if other is not None:
            # Its misconceptions would be judged against the wrong question's claims, and its
            # words quoted under this question's key points would say it answered them.
            score = min(score, ANOTHER_QUESTION_CAP)
            pitfalls, checks = [], []
            points = [PointResult(p.id, False, 0.0, None) for p in points]
        return GradeResult(
            question_id=question.id,
            language=language,
            score=score,
            verdict=(
                "off-topic"
                if off_topic or other is not None
                else "weak"
                if pitfalls and score == 0  # it said something, and it was wrong
                else verdict_for(score)
            ),
            points=points,
            pitfalls=pitfalls,
            checks=checks,
            similarity=similarity,
            relevance=relevance,
            answers_question=other,
        )
