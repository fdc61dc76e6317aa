"""Sentence vectors from an embedding server (EMBEDDINGS_URL) instead of a model in this process:
any server speaking the API of Hugging Face's text-embeddings-inference (`POST /embed` with
`{"inputs": [...], "normalize": true, "truncate": true}` -> a list of vectors), such as TEI on a
GPU shared by every replica, or `python -m bot embed-server`.

The model's own conventions stay on this side: E5's "query: " prefix is added here, as the
in-process encoder does, so the server sees exactly the text the local model would. Grading
bank questions needs nothing else; reference-answer mode aligns tokens and so needs the model in
the process.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Callable
from threading import Lock

import numpy as np

from bot.scoring.encoder import Encoder, Span
from bot.scoring.model_names import query_prefix
from bot.scoring.token_pieces import TokenVectors

# Texts per request. TEI refuses a request over its --max-client-batch-size with 413 (default 32),
# so the client asks GET /info for the server's limit, sends at most 32 when it cannot tell, never
# more than MAX_BATCH, and halves its batch if a server answers 413 all the same.
DEFAULT_BATCH = 32
MAX_BATCH = 256


class EmbeddingServiceError(RuntimeError):
    pass


def _server_batch(info: dict[str, object]) -> int:
    """The server's max_client_batch_size (capped at MAX_BATCH), or DEFAULT_BATCH where it does
    not say."""
    limit = info.get("max_client_batch_size")
    if isinstance(limit, int) and not isinstance(limit, bool) and limit >= 1:
        return min(limit, MAX_BATCH)
    return DEFAULT_BATCH


def server_arithmetic(info: dict[str, object], model: str) -> str:
    """How the server computes vectors, for the key of the bank's stored vectors: "cpu/bf16"
    as an in-process encoder would say it, where the server is `python -m bot embed-server` with
    this model (its vectors are then the same, and so is the file); else what it reports (TEI
    names no device), kept apart from any in-process file."""
    dtype = info.get("model_dtype") or "unknown"
    if info.get("model_id") == model and info.get("device"):
        return f"{info['device']}/{dtype}"
    return f"remote:{info.get('model_id') or 'unknown'}/{dtype}"


class _TooLarge(Exception):
    """413: more texts in one request than the server takes."""


class RemoteEncoder(Encoder):
    # Encoder's caching and `encode` are reused as they are; only the forward pass is remote.
    def __init__(  # no local model: Encoder.__init__ is not called
        self, url: str, model: str, timeout: float = 60.0, cache_size: int = 50_000
    ):
        self.url = url.rstrip("/")
        self.name = model
        self.device = "remote"
        self.precision = "remote"
        self.timeout = timeout
        self.prefix = query_prefix(model)
        self._cache: dict[str, np.ndarray] = {}
        self._token_cache: dict[str, TokenVectors] = {}
        self._cache_size = cache_size
        self._lock = Lock()
        info = self._info()
        self.batch = _server_batch(info)
        self.served_as = server_arithmetic(info, model)
        self.dimension = int(self._post([self.prefix + "dimension"]).shape[1])

    def _info(self) -> dict[str, object]:
        """The server's GET /info ({} where it has none or it is not an object)."""
        try:
            with urllib.request.urlopen(f"{self.url}/info", timeout=self.timeout) as reply:
                info = json.loads(reply.read())
        except (OSError, ValueError):
            return {}
        return info if isinstance(info, dict) else {}

    def _post(self, inputs: list[str]) -> np.ndarray:
        body = json.dumps({"inputs": inputs, "normalize": True, "truncate": True}).encode()
        request = urllib.request.Request(
            f"{self.url}/embed", data=body, headers={"Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as reply:
                vectors = json.loads(reply.read())
        except urllib.error.HTTPError as exc:
            if exc.code == 413 and len(inputs) > 1:
                raise _TooLarge from exc
            raise EmbeddingServiceError(f"embedding service at {self.url}: {exc}") from exc
        except (OSError, ValueError) as exc:
            raise EmbeddingServiceError(f"embedding service at {self.url}: {exc}") from exc
        return np.asarray(vectors, dtype=np.float32).reshape(len(inputs), -1)

    def _forward(
        self, inputs: list[str], progress: Callable[[int], object] | None = None
    ) -> np.ndarray:
        parts, start = [], 0
        while start < len(inputs):
            chunk = inputs[start : start + self.batch]
            try:
                parts.append(self._post(chunk))
            except _TooLarge:  # the server's limit is lower than it said: halve and go on
                self.batch = max(1, len(chunk) // 2)
                continue
            start += len(chunk)
            if progress is not None:
                progress(len(chunk))
        result = np.concatenate(parts) if parts else np.zeros((0, self.dimension), np.float32)
        norms = np.linalg.norm(result, axis=1, keepdims=True)
        unit: np.ndarray = result / np.maximum(norms, 1e-12)  # numpy's ufuncs return Any
        return unit

    def encode_tokens(self, texts: list[str], remember: bool = False) -> list[TokenVectors]:
        raise EmbeddingServiceError(
            "reference-answer grading aligns tokens: run it with the model in the process "
            "(unset EMBEDDINGS_URL)"
        )

    def encode_spans(
        self, texts: list[str], spans: list[list[Span]]
    ) -> list[tuple[np.ndarray, np.ndarray]]:
        raise EmbeddingServiceError("GRADER_ONE_PASS needs the model in the process")
