"""Word-level alignment: how much of a reference the answer's words cover (BERTScore recall).

Every content word piece of the reference is matched with its most similar piece of the answer
(contextual vectors, cosine); the reference's coverage is the mean of those best matches. Words
of the question itself are left out of the reference ("question demoting"): repeating the
question earns nothing.
"""

from __future__ import annotations

import re

import numpy as np

from bot.scoring.token_pieces import WORDPIECE, PieceConvention, TokenVectors

_STOP_WORDS_TEXT = (
    "a an the of to in on at by for with from as is are was were be been being it its this that "
    "these those and or but if then than so such which what who whom how why when where there "
    "their they them we you your our i he she his her not do does did can could will would should "
    "may might must has have had also very just into onto about over under more most some any each "
    "и в во на с со к по о об от до из за для не но а или что как это то же ли бы"
)
STOP_WORDS = frozenset(_STOP_WORDS_TEXT.split())
_PUNCTUATION = re.compile(r"^\W+$")
_WORD = re.compile(r"[\w]+", re.UNICODE)


def stem(word: str) -> str:
    return word.lower()[:6]


def question_words(question: str) -> set[str]:
    return {stem(w) for w in _WORD.findall(question)}


def _words(
    tokens: list[str], convention: PieceConvention = WORDPIECE
) -> list[tuple[str, list[int]]]:
    """Glue word pieces back into lower-case words, keeping their positions: WordPiece's "drop",
    "##out", or SentencePiece's "▁drop", "out" (see `PieceConvention`)."""
    if convention.word_start:
        return _words_from_starts(tokens, convention.word_start)
    mark = convention.continuation
    result: list[tuple[str, list[int]]] = []
    for index, piece in enumerate(tokens):
        if mark and piece.startswith(mark) and result:
            word, positions = result[-1]
            result[-1] = (word + piece[len(mark) :].lower(), [*positions, index])
        else:
            result.append((piece.lower(), [index]))
    return result


def _words_from_starts(tokens: list[str], mark: str) -> list[tuple[str, list[int]]]:
    """SentencePiece: a piece marked "▁" starts a word; a lone "▁" is a space and no word. Its
    pieces keep punctuation next to letters ("ацией", ","; "▁(", "ear", "ly"), which WordPiece's
    pre-tokenizer splits off: a run of punctuation is a word of its own here as well."""
    result: list[tuple[str, list[int]]] = []
    starts, after_punctuation = True, False
    for index, piece in enumerate(tokens):
        if piece.startswith(mark):
            piece, starts = piece[len(mark) :], True
            if not piece:  # a space
                continue
        text = piece.lower()
        punctuation = bool(_PUNCTUATION.match(text))
        if starts or punctuation or after_punctuation or not result:
            result.append((text, [index]))
        else:
            word, positions = result[-1]
            result[-1] = (word + text, [*positions, index])
        starts, after_punctuation = False, punctuation
    return result


def content_mask(
    tokens: list[str],
    demoted: set[str] | frozenset[str] = frozenset(),
    convention: PieceConvention = WORDPIECE,
) -> np.ndarray:
    """True for pieces of words that carry content: not punctuation, stop words or `demoted`."""
    mask = np.zeros(len(tokens), dtype=bool)
    for word, positions in _words(tokens, convention):
        if _PUNCTUATION.match(word) or word in STOP_WORDS or stem(word) in demoted:
            continue
        mask[positions] = True
    return mask


def coverage(
    reference: TokenVectors,
    answer: TokenVectors,
    demoted: set[str] | frozenset[str] = frozenset(),
) -> float:
    """Mean over the reference's content pieces of their best cosine with an answer piece."""
    ref_mask = content_mask(reference.tokens, demoted, reference.convention)
    if not ref_mask.any():  # the reference only repeats the question: fall back to all of it
        ref_mask = content_mask(reference.tokens, convention=reference.convention)
    answer_mask = content_mask(answer.tokens, convention=answer.convention)
    if not ref_mask.any() or not answer_mask.any():
        return 0.0
    sims = reference.vectors[ref_mask] @ answer.vectors[answer_mask].T
    return float(np.mean(np.max(sims, axis=1)))
