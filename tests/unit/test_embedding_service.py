"""The grader through an embedding server (`python -m bot embed-server`, text-embeddings-
inference's API) grades as it does with the model in the process: same model, same scores."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import numpy as np
import pytest
from aiohttp import web

from bot.content.loader import QuestionBank
from bot.scoring.embed_server import MAX_CLIENT_BATCH, EmbedServer
from bot.scoring.encoder import Encoder
from bot.scoring.grader import Grader
from bot.scoring.host_config import HostConfig
from bot.scoring.remote_encoder import EmbeddingServiceError, RemoteEncoder
from bot.scoring.service import ScoringService

EVAL = Path(__file__).resolve().parents[2] / "content" / "eval"


@pytest.fixture(scope="module")
def encoder() -> Encoder:
    """The suite's model in fp32: in bf16 a text's vector depends, in its last digits, on the
    other texts in its batch, and a decision sitting that close to a threshold (a pitfall logit
    0.003 from it was seen) would differ between any two batchings, remote or not."""
    return Encoder("bundled", "cpu", precision="fp32")


@pytest.fixture
def embed_server(encoder: Encoder) -> EmbedServer:
    """The server on the same model object as the in-process grader: the same weights."""
    return EmbedServer(encoder)


@pytest.fixture
async def server(embed_server: EmbedServer) -> AsyncIterator[str]:
    runner = web.AppRunner(embed_server.app())
    await runner.setup()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    await web.TCPSite(runner, "127.0.0.1", port).start()
    yield f"http://127.0.0.1:{port}"
    await runner.cleanup()


def labelled(bank: QuestionBank, count: int) -> list[tuple[str, str, str]]:
    rows = []
    for path in sorted(EVAL.glob("*.jsonl"))[:2]:
        for line in path.read_text("utf-8").splitlines():
            row = json.loads(line)
            rows.append((row["question"], row["answer"], row["lang"]))
    return rows[:count]


async def test_remote_grades_match_in_process(
    server: str, encoder: Encoder, bank: QuestionBank
) -> None:
    jobs = [(bank.get(q), a, lang) for q, a, lang in labelled(bank, 40)]
    assert all(question is not None for question, _, _ in jobs)
    # A small calibration set, the same on both sides: fp32 encoding of the whole bank is slow.
    calibration = list(bank)[:8]
    local = Grader(encoder, calibration).grade_many(jobs)  # type: ignore[arg-type]

    def remote_grades() -> list[float]:
        # Blocking HTTP, as in the grading worker: off this test's event loop.
        remote = Grader(RemoteEncoder(server, encoder.name), calibration)
        return [r.score for r in remote.grade_many(jobs)]  # type: ignore[arg-type]

    remote = await asyncio.to_thread(remote_grades)
    differences = [abs(a.score - b) for a, b in zip(local, remote, strict=True)]
    assert max(differences) <= 0.1 + 1e-9, differences  # one rounding step at most


async def test_a_second_replica_warms_from_the_servers_memory(
    server: str, embed_server: EmbedServer, encoder: Encoder, bank: QuestionBank
) -> None:
    questions = list(bank)[:3]  # a small bank: the server's model pass is the slow part

    def warm_replica() -> np.ndarray:
        remote = RemoteEncoder(server, encoder.name)
        Grader(remote, questions).warm(questions)
        texts = list(remote.remembered())
        return remote.encode(texts[:50])

    first = await asyncio.to_thread(warm_replica)
    computed = embed_server.computed
    assert computed > 50  # the bank went through the model once
    second = await asyncio.to_thread(warm_replica)
    assert embed_server.computed == computed  # nothing twice
    np.testing.assert_array_equal(first, second)


async def test_the_api_and_its_errors(server: str) -> None:
    async with aiohttp.ClientSession() as client:
        async with client.post(f"{server}/embed", json={"inputs": "one text"}) as reply:
            vectors = await reply.json()
            assert reply.status == 200 and len(vectors) == 1 and len(vectors[0]) > 100
        async with client.post(f"{server}/embed", json={"inputs": []}) as reply:
            assert reply.status == 422
        async with client.post(f"{server}/embed", json={"text": "x"}) as reply:
            assert reply.status == 422
        many = {"inputs": ["x"] * (MAX_CLIENT_BATCH + 1)}
        async with client.post(f"{server}/embed", json=many) as reply:
            assert reply.status == 413
        together = await asyncio.gather(
            *(client.post(f"{server}/embed", json={"inputs": [f"text {i}"]}) for i in range(8))
        )
        assert all(r.status == 200 for r in together)  # micro-batched, each its own answer
        for r in together:
            r.release()
        async with client.get(f"{server}/info") as reply:
            assert (await reply.json())["max_client_batch_size"] == MAX_CLIENT_BATCH


async def test_an_unreachable_service_says_where(bank: QuestionBank) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed again: nothing listens there
    with pytest.raises(EmbeddingServiceError, match=f"127.0.0.1:{port}"):
        await asyncio.to_thread(RemoteEncoder, f"http://127.0.0.1:{port}", "bundled")


async def test_the_service_is_used_when_configured(server: str, bank: QuestionBank) -> None:
    scoring = ScoringService(bank, HostConfig("bundled", "cpu", embeddings_url=server))
    try:
        grader = await asyncio.to_thread(scoring.grader)
        assert grader.encoder.device == "remote"
    finally:
        scoring.close()


async def test_an_e5_client_sends_each_text_with_its_prefix_once() -> None:
    """With E5 the bot adds "query: " itself and the server embeds the text as given: a server
    that added it too, or a client that forgot it, would move every vector. The suite's model
    (MiniLM) has no prefix, so this records what an E5 client sends."""
    received: list[list[str]] = []

    async def embed(request: web.Request) -> web.Response:
        inputs = (await request.json())["inputs"]
        received.append(inputs)
        return web.json_response([[1.0, 0.0, 0.0] for _ in inputs])

    app = web.Application()
    app.router.add_post("/embed", embed)
    runner = web.AppRunner(app)
    await runner.setup()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    await web.TCPSite(runner, "127.0.0.1", port).start()
    try:
        client = await asyncio.to_thread(
            RemoteEncoder, f"http://127.0.0.1:{port}", "multilingual-e5-small"
        )
        vectors = await asyncio.to_thread(client.encode, ["eval() switches dropout off", "x"])
    finally:
        await runner.cleanup()
    assert vectors.shape == (2, 3)
    assert received[-1] == ["query: eval() switches dropout off", "query: x"]
