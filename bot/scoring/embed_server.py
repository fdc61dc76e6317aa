"""`python -m bot embed-server`: the configured sentence-transformers model over HTTP, with the
part of text-embeddings-inference's API the bot uses, for where TEI cannot run:

- `POST /embed` `{"inputs": "text" | ["text", ...], "normalize": true, "truncate": true}` ->
  `[[float, ...], ...]`, one vector per input, in order;
- `GET /health` (200 once the model is loaded), `GET /info` (model id, dtype, batch limit).

Vectors are always L2-normalised (`normalize` is accepted and has no other value here).
Requests that arrive together are micro-batched: one model pass for all their texts, in a
worker thread (the event loop keeps accepting requests). Texts are encoded exactly as given:
the client adds a model's prefix (RemoteEncoder does). Vectors already computed are answered from
memory (a bounded LRU, `memo_size` texts): every replica sends the whole bank at warm-up, and
only the first one's costs a model pass.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np
from aiohttp import web

from bot.scoring.encoder import Encoder

log = logging.getLogger(__name__)

MAX_CLIENT_BATCH = 512  # inputs per request, as TEI's --max-client-batch-size
MAX_BATCH_TEXTS = 1024  # texts per model pass across requests
MEMO_SIZE = 100_000  # vectors kept (384 floats each: ~150 MiB at most)


@dataclass
class _Request:
    texts: list[str]
    reply: asyncio.Future[np.ndarray]


class EmbedServer:
    def __init__(self, encoder: Encoder, memo_size: int = MEMO_SIZE):
        self.encoder = encoder
        self._pending: list[_Request] = []
        self._worker: asyncio.Task[None] | None = None
        self._memo: OrderedDict[str, np.ndarray] = OrderedDict()
        self._memo_size = memo_size
        self.computed = 0  # texts that needed a model pass (the rest came from the memo)

    def app(self) -> web.Application:
        app = web.Application(client_max_size=16 << 20)
        app.router.add_post("/embed", self._embed)
        app.router.add_get("/health", self._health)
        app.router.add_get("/info", self._info)
        return app

    async def _embed(self, request: web.Request) -> web.Response:
        try:
            body = await request.json()
            inputs = body["inputs"]
        except (ValueError, KeyError, TypeError):
            return _error(422, 'expected {"inputs": "text" or ["text", ...]}')
        texts = [inputs] if isinstance(inputs, str) else inputs
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            return _error(422, "inputs must be a string or a list of strings")
        if not texts:
            return _error(422, "inputs cannot be empty")
        if len(texts) > MAX_CLIENT_BATCH:
            return _error(413, f"batch size {len(texts)} > maximum {MAX_CLIENT_BATCH}")
        reply: asyncio.Future[np.ndarray] = asyncio.get_running_loop().create_future()
        self._pending.append(_Request(texts, reply))
        if self._worker is None or self._worker.done():
            self._worker = asyncio.create_task(self._drain())
        vectors = await reply
        return web.json_response(vectors.tolist())

    async def _drain(self) -> None:
        while self._pending:
            await asyncio.sleep(0)  # requests that arrived in the same tick join this pass
            batch: list[_Request] = []
            held = 0
            while self._pending and (
                not batch or held + len(self._pending[0].texts) <= MAX_BATCH_TEXTS
            ):
                request = self._pending.pop(0)
                batch.append(request)
                held += len(request.texts)
            texts = [t for r in batch for t in r.texts]
            found = {t: self._memo[t] for t in texts if t in self._memo}
            missing = [t for t in dict.fromkeys(texts) if t not in found]
            try:
                if missing:
                    vectors = await asyncio.to_thread(self.encoder.embed_raw, missing)
                    found.update(zip(missing, vectors, strict=True))
                    self.computed += len(missing)
            except Exception as exc:  # every waiting request gets the error, none hangs
                log.exception("embedding %d texts failed", len(missing))
                for r in batch:
                    if not r.reply.done():
                        r.reply.set_exception(exc)
                continue
            self._keep(found)
            for r in batch:
                if not r.reply.done():
                    r.reply.set_result(np.stack([found[t] for t in r.texts]))

    def _keep(self, vectors: dict[str, np.ndarray]) -> None:
        for text, vector in vectors.items():  # most recently used last
            self._memo[text] = vector
            self._memo.move_to_end(text)
        while len(self._memo) > self._memo_size:
            self._memo.popitem(last=False)

    async def _health(self, request: web.Request) -> web.Response:
        return web.Response(status=200)

    async def _info(self, request: web.Request) -> web.Response:
        return web.json_response(
            {
                "model_id": self.encoder.name,
                "model_dtype": self.encoder.precision,
                "max_client_batch_size": MAX_CLIENT_BATCH,
                "device": self.encoder.device,
            }
        )


def _error(status: int, message: str) -> web.Response:
    return web.json_response({"error": message, "error_type": "Validation"}, status=status)


def serve(encoder: Encoder, host: str, port: int) -> None:
    log.info("embedding server for %s on %s:%s", encoder.name, host, port)
    web.run_app(EmbedServer(encoder).app(), host=host, port=port, print=None)
