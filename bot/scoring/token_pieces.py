"""Word pieces: how a tokenizer marks where words begin (WordPiece or SentencePiece), and a
text's per-piece vectors, which word-level alignment (bot/scoring/alignment.py) reads."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class PieceConvention:
    """How a tokenizer's pieces show where words begin.

    WordPiece (BERT, all-MiniLM-L6-v2) marks a piece that continues a word: "drop", "##out".
    SentencePiece (XLM-R, multilingual-e5) marks a piece that starts one: "▁drop", "out"; a lone
    "▁" is a space, and punctuation is not split off words ("ацией", ",")."""

    continuation: str = "##"  # the mark of a piece that continues a word (WordPiece)
    word_start: str = ""  # the mark of a piece that starts a word (SentencePiece); wins if set


WORDPIECE = PieceConvention()
SENTENCEPIECE = PieceConvention(continuation="", word_start="▁")


def piece_convention(tokenizer: object) -> PieceConvention:
    """The convention of a Hugging Face tokenizer: from its fast backend (a WordPiece model's
    continuation prefix, a Metaspace pre-tokenizer's or decoder's mark), else from its vocabulary
    (which of "##…" and "▁…" pieces it has more of); WordPiece when nothing tells."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    prefix = getattr(getattr(backend, "model", None), "continuing_subword_prefix", None)
    if isinstance(prefix, str) and prefix:
        return PieceConvention(continuation=prefix)
    for part in (getattr(backend, "pre_tokenizer", None), getattr(backend, "decoder", None)):
        mark = getattr(part, "replacement", None)
        if isinstance(mark, str) and mark:
            return PieceConvention(continuation="", word_start=mark)
    get_vocab = getattr(tokenizer, "get_vocab", None)
    vocab: dict[str, int] = get_vocab() if callable(get_vocab) else {}
    continuing = sum(1 for piece in vocab if piece.startswith("##") and len(piece) > 2)
    starting = sum(1 for piece in vocab if piece.startswith(SENTENCEPIECE.word_start))
    return SENTENCEPIECE if starting > continuing else WORDPIECE


@dataclass(frozen=True)
class TokenVectors:
    """Contextual vectors of a text's word pieces (L2-normalised rows), the pieces (lower-case),
    and how the pieces mark words."""

    vectors: np.ndarray
    tokens: list[str]
    convention: PieceConvention = WORDPIECE
