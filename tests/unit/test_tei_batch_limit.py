"""The embedding client keeps to the server's batch limit, as a real text-embeddings-inference
does: TEI answers 413 to a request with more inputs than its --max-client-batch-size (32 by
default). The fake here answers the same way; the client must send at most 32 texts per request
when the server does not say otherwise, follow what GET /info says, and recover from a server
that says more than it takes."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np
import pytest

from bot.scoring.remote_encoder import DEFAULT_BATCH, RemoteEncoder

TEI_DEFAULT_LIMIT = 32


class FakeTEI:
    """`POST /embed` with TEI's 413 above `limit`; `GET /info` answers `info` (None: 404, as a
    server without that route)."""

    def __init__(self, limit: int = TEI_DEFAULT_LIMIT, info: dict[str, Any] | None = None):
        self.limit = limit
        self.info = info
        self.batches: list[int] = []  # inputs per /embed request that was answered 200
        self.refused: list[int] = []  # inputs per request answered 413
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:  # keep the test output clean
                pass

            def _json(self, status: int, body: object) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                if self.path == "/info" and fake.info is not None:
                    self._json(200, fake.info)
                else:
                    self._json(404, {"error": "not found"})

            def do_POST(self) -> None:
                length = int(self.headers["Content-Length"])
                inputs = json.loads(self.rfile.read(length))["inputs"]
                if len(inputs) > fake.limit:
                    fake.refused.append(len(inputs))
                    # TEI's own error body for this case.
                    message = f"batch size {len(inputs)} > maximum allowed batch size {fake.limit}"
                    self._json(413, {"error": message, "error_type": "Validation"})
                    return
                fake.batches.append(len(inputs))
                self._json(200, [vector(text) for text in inputs])

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> FakeTEI:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def vector(text: str) -> list[float]:
    """A deterministic 4-d vector per text, so order mistakes would show."""
    seed = sum(text.encode()) % 97
    return [1.0, seed / 97, (len(text) % 13) / 13, 0.5]


@pytest.fixture
def texts() -> Iterator[list[str]]:
    yield [f"answer sentence number {i}" for i in range(300)]


def encode(url: str, texts: list[str]) -> tuple[RemoteEncoder, np.ndarray]:
    client = RemoteEncoder(url, "bundled")
    return client, client.encode(texts)


def test_without_info_the_client_sends_at_most_32_texts(texts: list[str]) -> None:
    with FakeTEI() as tei:
        client, vectors = encode(tei.url, texts)
    assert client.batch == DEFAULT_BATCH == TEI_DEFAULT_LIMIT
    assert tei.refused == []  # never a 413
    assert max(tei.batches) <= TEI_DEFAULT_LIMIT
    assert sum(tei.batches) == len(texts) + 1  # every text once, plus the dimension probe
    expected = np.asarray([vector(t) for t in texts], dtype=np.float32)
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    np.testing.assert_allclose(vectors, expected, rtol=1e-6)  # in order


def test_the_client_follows_the_limit_info_gives(texts: list[str]) -> None:
    with FakeTEI(limit=8, info={"model_id": "x", "max_client_batch_size": 8}) as tei:
        client, vectors = encode(tei.url, texts)
    assert client.batch == 8
    assert tei.refused == [] and max(tei.batches) == 8
    assert vectors.shape == (len(texts), 4)


def test_a_larger_limit_is_used_up_to_the_cap(texts: list[str]) -> None:
    with FakeTEI(limit=10_000, info={"max_client_batch_size": 10_000}) as tei:
        client, _ = encode(tei.url, texts)
    assert client.batch == 256  # MAX_BATCH: one request stays a bounded amount of work
    assert max(tei.batches) == 256


def test_a_server_that_takes_fewer_than_it_says_is_met_by_halving(texts: list[str]) -> None:
    with FakeTEI(limit=TEI_DEFAULT_LIMIT, info={"max_client_batch_size": 128}) as tei:
        client, vectors = encode(tei.url, texts)
    assert tei.refused == [128, 64]  # then 32 fits, and the client keeps to it
    assert client.batch == 32 and max(tei.batches) <= TEI_DEFAULT_LIMIT
    assert vectors.shape == (len(texts), 4)
