"""The sentence-embedding model: loaded once, on the configured device, with a text cache; its
texts planned into length-sorted batches. Which model a name means is bot/scoring/model_names.py,
where and in what precision it runs bot/scoring/device.py, and how its word pieces read
bot/scoring/token_pieces.py."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from threading import Lock
from typing import Any

import numpy as np

from bot.scoring.device import resolve_device, resolve_precision
from bot.scoring.model_names import BUNDLED, query_prefix, resolve_model_path
from bot.scoring.token_pieces import TokenVectors, piece_convention

log = logging.getLogger(__name__)

Span = tuple[int, int]  # [start, end) character offsets into a text


def plan_batches(lengths: list[int], budget: int, waste: int = 256) -> list[list[int]]:
    """Indices grouped into model batches, shortest first. A batch grows while its padded size
    (count x longest) stays within `budget` tokens and its padding within `waste` tokens: on a
    CPU a forward pass costs about as much as 300 tokens before it computes anything, so a few
    short texts pad to a long one rather than take a pass of their own."""
    batches: list[list[int]] = []
    current: list[int] = []
    held = 0
    for index in sorted(range(len(lengths)), key=lengths.__getitem__):
        size = lengths[index]
        padded = size * (len(current) + 1)
        if current and (padded > budget or padded - held - size > waste):
            batches.append(current)
            current, held = [], 0
        current.append(index)
        held += size
    if current:
        batches.append(current)
    return batches


class Encoder:
    """Encodes texts to L2-normalised vectors; remembers texts it has seen (the bank's)."""

    def __init__(
        self,
        model: str = BUNDLED,
        device: str = "auto",
        cache_size: int = 50_000,
        model_cache_dir: Path | None = None,
        precision: str = "auto",
        tokens_per_batch: int = 4096,
        pack_weights: bool | None = None,
    ):
        """`pack_weights`: bf16 linear layers with weights prepacked for oneDNN
        (bot/scoring/packed_linear.py); None: wherever the CPU has AMX; True: wherever oneDNN
        can (to measure it elsewhere)."""
        path = resolve_model_path(model, model_cache_dir)
        if model == BUNDLED or Path(path).exists():
            # A local model must never reach for the Hugging Face hub.
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
        from sentence_transformers import SentenceTransformer

        self.device = resolve_device(device)
        self.name = model
        self._model = SentenceTransformer(path, device=self.device)
        self.precision = resolve_precision(precision, self.device)
        if self.precision == "fp16":
            self._model.half()  # fp16 halves memory and doubles throughput on tensor cores
        self.packed = False
        if self.precision == "bf16":
            from bot.scoring.packed_linear import prepare_bf16_linear_layers

            # Embeddings and normalisation stay fp32 (autocast runs them so).
            wanted = pack_weights if self.device == "cpu" else False
            self.packed = prepare_bf16_linear_layers(self._model, wanted)
        self.tokens_per_batch = tokens_per_batch
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
        log.info(
            "embedding model %s loaded on %s (%s%s)",
            model,
            self.device,
            self.precision,
            ", linear layers prepacked" if self.packed else "",
        )

    @contextmanager
    def _arithmetic(self) -> Iterator[None]:
        """bf16 runs under autocast: matrix products in bf16, normalisation and softmax in
        fp32 (a model cast to bf16 whole loses more)."""
        import torch

        context = (
            torch.autocast(self.device.split(":")[0], dtype=torch.bfloat16)
            if self.precision == "bf16"
            else nullcontext()
        )
        with context, torch.inference_mode():
            yield

    def remembered(self) -> dict[str, np.ndarray]:
        with self._lock:
            return dict(self._cache)

    def remember(self, vectors: dict[str, np.ndarray]) -> None:
        """Adopt vectors computed earlier (the on-disk cache) if their width matches."""
        with self._lock:
            for text, vector in vectors.items():
                if vector.shape == (self.dimension,) and len(self._cache) < self._cache_size:
                    self._cache[text] = vector.astype(np.float32)

    def encode(
        self,
        texts: list[str],
        remember: bool = False,
        progress: Callable[[int], object] | None = None,
    ) -> np.ndarray:
        """Vectors for `texts` (rows, L2-normalised). `remember` keeps them for next time;
        `progress` is told how many texts each model batch held."""
        with self._lock:
            missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
            fresh: dict[str, np.ndarray] = {}
            if missing:
                vectors = self._forward([self.prefix + t for t in missing], progress)
                fresh = dict(zip(missing, vectors, strict=True))
                if remember and len(self._cache) + len(fresh) <= self._cache_size:
                    self._cache.update(fresh)
            rows = [self._cache[t] if t in self._cache else fresh[t] for t in texts]
        if not rows:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.stack(rows)

    def embed_raw(self, texts: list[str]) -> np.ndarray:
        """Vectors of texts exactly as given (no prefix, nothing remembered): what an
        embedding server answers (bot/scoring/embed_server.py)."""
        with self._lock:
            return self._forward(texts)

    def _forward(
        self, inputs: list[str], progress: Callable[[int], object] | None = None
    ) -> np.ndarray:
        """The model's sentence vectors of `inputs` (prefix included), in length-planned batches,
        normalised in fp32."""
        tokenizer = self._model.tokenizer
        limit = self._model.max_seq_length
        encoded = tokenizer(inputs, truncation=True, max_length=limit)["input_ids"]
        result = np.zeros((len(inputs), self.dimension), dtype=np.float32)
        for batch in plan_batches([len(ids) for ids in encoded], self.tokens_per_batch):
            features = tokenizer.pad(
                {"input_ids": [encoded[i] for i in batch]}, return_tensors="pt"
            )
            features = {k: v.to(self.device) for k, v in features.items()}
            with self._arithmetic():
                output = self._model.forward(features)["sentence_embedding"]
            result[batch] = output.float().cpu().numpy()
            if progress is not None:
                progress(len(batch))
        norms = np.linalg.norm(result, axis=1, keepdims=True)
        unit: np.ndarray = result / np.maximum(norms, 1e-12)  # numpy's ufuncs return Any
        return unit

    def encode_spans(
        self, texts: list[str], spans: list[list[Span]]
    ) -> list[tuple[np.ndarray, np.ndarray]]:
        """One model pass per text: its vector (as `encode` gives it) and, for each of its
        character spans, the normalised mean of the contextual token vectors inside the span.

        Batches are planned as `encode` plans them. A span past the model's length limit has no
        tokens; it is encoded on its own instead."""
        if not texts:
            return []
        tokenizer = self._model.tokenizer
        inputs = [self.prefix + t for t in texts]
        shift = len(self.prefix)
        limit = self._model.max_seq_length
        lengths = [
            len(ids) for ids in tokenizer(inputs, truncation=True, max_length=limit)["input_ids"]
        ]
        result: list[tuple[np.ndarray, np.ndarray]] = [None] * len(texts)  # type: ignore[list-item]
        with self._lock:
            for chunk in plan_batches(lengths, self.tokens_per_batch):
                pooled = self._pool_batch(
                    tokenizer, [inputs[i] for i in chunk], [spans[i] for i in chunk], shift, limit
                )
                for index, pair in zip(chunk, pooled, strict=True):
                    result[index] = pair
        lost = [
            (i, k)
            for i, (_, vecs) in enumerate(result)
            for k in range(len(vecs))
            if not np.any(vecs[k])
        ]
        if lost:
            alone = self.encode([texts[i][slice(*spans[i][k])] for i, k in lost])
            for (i, k), vector in zip(lost, alone, strict=True):
                result[i][1][k] = vector
        return result

    def _pool_batch(
        self,
        tokenizer: Any,
        inputs: list[str],
        spans: list[list[Span]],
        shift: int,
        limit: int | None,
    ) -> list[tuple[np.ndarray, np.ndarray]]:
        import torch

        batch = tokenizer(
            inputs,
            padding=True,
            truncation=True,
            max_length=limit,
            return_offsets_mapping=True,
            return_special_tokens_mask=True,
            return_tensors="pt",
        )
        offsets = batch.pop("offset_mapping")
        special = batch.pop("special_tokens_mask").bool()
        features = {k: v.to(self.device) for k, v in batch.items()}
        with self._arithmetic():
            output = self._model.forward(features)
        tokens = output["token_embeddings"].float()
        wholes: np.ndarray = (
            torch.nn.functional.normalize(output["sentence_embedding"].float(), dim=-1)
            .cpu()
            .numpy()
        )
        starts = offsets[..., 0].to(self.device)
        ends = offsets[..., 1].to(self.device)
        real = (~special & (features["attention_mask"] > 0)).to(self.device)
        result = []
        for row, text_spans in enumerate(spans):
            if not text_spans:
                result.append((wholes[row], np.zeros((0, self.dimension), dtype=np.float32)))
                continue
            bounds = torch.tensor(text_spans, device=self.device) + shift  # (k, 2)
            # A token belongs to a span when their character ranges overlap.
            inside = (
                (starts[row][None, :] < bounds[:, 1:2])
                & (ends[row][None, :] > bounds[:, 0:1])
                & real[row][None, :]
            ).to(tokens.dtype)  # (k, tokens)
            sums = inside @ tokens[row]
            counts = inside.sum(dim=1, keepdim=True)
            pooled = torch.nn.functional.normalize(sums / counts.clamp(min=1), dim=-1)
            pooled[counts[:, 0] == 0] = 0.0  # past the length limit: encoded alone by the caller
            result.append((wholes[row], pooled.cpu().numpy().astype(np.float32)))
        return result

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
        with self._lock, self._arithmetic():
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
