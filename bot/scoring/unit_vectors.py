"""Each answer's unit vectors (its sentences, clauses and the whole answer), by one of two
methods: every unit encoded as its own text, or the answer encoded once and each unit's vector
pooled from its tokens (docs/grading.md, "Speed")."""

from __future__ import annotations

import numpy as np

from bot.scoring.encoder import Encoder
from bot.scoring.text import words


def encode_units(
    encoder: Encoder,
    answers: list[tuple[str, list[str]]],
    one_pass: bool = False,
    encode_whole: bool = True,
) -> list[np.ndarray]:
    """Each answer's unit vectors, (units, d):
    - `one_pass`: the whole answer goes through the model once; a sentence's or clause's vector
      is the mean of its tokens' contextual vectors;
    - else every unit is encoded on its own (the whole answer too, unless `encode_whole` is off:
      then the length-weighted mean of its sentences')."""
    if one_pass:
        return encode_units_pooled(encoder, answers)
    # The whole answer (the last unit of a multi-sentence answer) is the longest text to
    # encode; without `encode_whole`, its vector is the length-weighted mean of its parts'.
    derived = [
        not encode_whole and len(units) > 1 and units[-1] == whole for whole, units in answers
    ]
    to_encode = [
        u
        for (_, units), skip in zip(answers, derived, strict=True)
        for u in (units[:-1] if skip else units)
    ]
    vectors = encoder.encode(to_encode)
    result, start = [], 0
    for (_, units), skip in zip(answers, derived, strict=True):
        count = len(units) - 1 if skip else len(units)
        vectors_of_units = vectors[start : start + count]
        start += count
        if skip:
            weights = np.array([len(words(u)) for u in units[:-1]], dtype=np.float32)
            whole = weights @ vectors_of_units
            whole /= max(float(np.linalg.norm(whole)), 1e-9)
            vectors_of_units = np.vstack([vectors_of_units, whole[None, :]])
        result.append(vectors_of_units)
    return result


def encode_units_pooled(encoder: Encoder, answers: list[tuple[str, list[str]]]) -> list[np.ndarray]:
    dimension = encoder.dimension
    texts = [text for text, units in answers if units]
    spans: list[list[tuple[int, int]]] = []
    for text, units in answers:
        if units:
            found = [(text.find(u), len(u)) for u in units]
            spans.append([(at, at + n) if at >= 0 else (0, len(text)) for at, n in found])
    encoded = iter(encoder.encode_spans(texts, spans))
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
