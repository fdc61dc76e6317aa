"""The encoder's own forward path: length-planned batches, bf16 on CPUs that have it, and vectors
pooled from one pass over a text (GRADER_ONE_PASS)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
import torch

from bot.content.loader import QuestionBank
from bot.scoring import packed_linear
from bot.scoring.device import resolve_precision
from bot.scoring.encoder import Encoder, plan_batches
from bot.scoring.grader import Grader
from bot.scoring.model_names import BUNDLED
from bot.scoring.options import GraderOptions
from bot.scoring.packed_linear import PackedLinear

TEXTS = [
    "zero_grad clears the gradients stored in .grad",
    "Без zero_grad градиенты накапливаются между итерациями.",
    "model.eval() switches dropout and batch norm to inference behaviour, it does not stop "
    "autograd from recording operations; use torch.no_grad() or inference_mode for that.",
    "ok",
]


@pytest.fixture(scope="module")
def fp32() -> Iterator[Encoder]:
    yield Encoder(BUNDLED, "cpu", precision="fp32")


@pytest.mark.parametrize(
    "lengths",
    [[], [5], [5] * 40, [3, 200, 7, 512, 9, 9, 10, 300, 12], list(range(1, 120)), [512] * 10],
)
def test_batches_hold_every_text_once_within_budget(lengths: list[int]) -> None:
    budget = 1024
    batches = plan_batches(lengths, budget)
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))
    for batch in batches:
        padded = len(batch) * max(lengths[i] for i in batch)
        # Over budget only when one text alone is; padding stays within the allowed waste.
        assert padded <= budget or len(batch) == 1
        assert padded - sum(lengths[i] for i in batch) <= 256 or len(batch) == 1


def test_short_texts_share_a_pass_and_a_long_one_does_not_make_them_pad() -> None:
    assert plan_batches([10, 12, 11, 9], 4096) == [[3, 0, 2, 1]]  # one pass, shortest first
    batches = plan_batches([10, 12, 11, 9, 400], 4096)
    assert batches == [[3, 0, 2, 1], [4]]  # 4 x 400 padded would waste ~1,550 tokens


def test_precision_follows_the_device_and_the_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    assert resolve_precision("fp32", "cuda") == "fp32"  # an explicit choice is kept
    assert resolve_precision("auto", "cuda:1") == "fp16"
    assert resolve_precision("auto", "mps") == "fp32"
    monkeypatch.setattr(torch.cpu, "_is_avx512_bf16_supported", lambda: False)
    monkeypatch.setattr(torch.cpu, "_is_amx_tile_supported", lambda: False)
    assert resolve_precision("auto", "cpu") == "fp32"  # bf16 would be emulated: slower
    monkeypatch.setattr(torch.cpu, "_is_amx_tile_supported", lambda: True)
    assert resolve_precision("auto", "cpu") == "bf16"


def test_own_forward_matches_the_library(fp32: Encoder) -> None:
    ours = fp32.encode(TEXTS)
    library = fp32._model.encode(TEXTS, normalize_embeddings=True, convert_to_numpy=True)
    np.testing.assert_allclose(np.sum(ours * library, axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)


def test_bf16_vectors_stay_close_to_fp32(fp32: Encoder) -> None:
    bf16 = Encoder(BUNDLED, "cpu", precision="bf16")
    assert bf16.precision == "bf16"
    cosines = np.sum(bf16.encode(TEXTS) * fp32.encode(TEXTS), axis=1)
    assert cosines.min() > 0.999, cosines
    # Weights are cast once, not on every call: the linear layers hold bf16 already (prepacked
    # where the CPU has AMX).
    linear = next(m for m in bf16._model.modules() if isinstance(m, torch.nn.Linear | PackedLinear))
    held = linear.packed if isinstance(linear, PackedLinear) else linear.weight
    assert held.dtype == torch.bfloat16
    assert bf16.packed == packed_linear.supported()


def test_prepacked_linear_layers_give_the_vectors_of_plain_bf16() -> None:
    """The prepacked path multiplies with oneDNN's kernels and a weight laid out once; the
    vectors must be those of the plain bf16 path (autocast), and no nn.Linear may be left."""
    if not packed_linear.supported(require_amx=False):
        pytest.skip("oneDNN cannot multiply prepacked bf16 weights on this CPU")
    plain = Encoder(BUNDLED, "cpu", precision="bf16", pack_weights=False)
    packed = Encoder(BUNDLED, "cpu", precision="bf16", pack_weights=True)
    assert packed.packed and not plain.packed
    assert not any(isinstance(m, torch.nn.Linear) for m in packed._model.modules())
    layers = [m for m in packed._model.modules() if isinstance(m, PackedLinear)]
    linear = [m for m in plain._model.modules() if isinstance(m, torch.nn.Linear)]
    assert len(layers) == len(linear) > 6 * 6  # MiniLM: 6 x (q, k, v, out, up, down), pooler
    cosines = np.sum(packed.encode(TEXTS) * plain.encode(TEXTS), axis=1)
    np.testing.assert_allclose(cosines, 1.0, atol=1e-5)
    # Token vectors (the reference grader's alignment) go through the same layers.
    ours = packed.encode_tokens(TEXTS[:2])
    theirs = plain.encode_tokens(TEXTS[:2])
    for a, b in zip(ours, theirs, strict=True):
        assert a.tokens == b.tokens
        np.testing.assert_allclose(np.sum(a.vectors * b.vectors, axis=1), 1.0, atol=1e-3)


def test_spans_pool_inside_one_pass(fp32: Encoder) -> None:
    text = TEXTS[2]
    comma = text.index(",")
    (whole, spans), (empty_whole, none) = fp32.encode_spans(
        [text, TEXTS[0]], [[(0, comma), (comma + 2, len(text))], []]
    )
    np.testing.assert_allclose(whole @ fp32.encode([text])[0], 1.0, atol=1e-5)
    np.testing.assert_allclose(empty_whole @ fp32.encode([TEXTS[0]])[0], 1.0, atol=1e-5)
    assert spans.shape == (2, fp32.dimension) and none.shape == (0, fp32.dimension)
    np.testing.assert_allclose(np.linalg.norm(spans, axis=1), 1.0, atol=1e-5)
    # Each clause's pooled vector is nearer its own text encoded alone than the other clause's.
    alone = fp32.encode([text[:comma], text[comma + 2 :]])
    similarity = spans @ alone.T
    assert similarity[0, 0] > similarity[0, 1] and similarity[1, 1] > similarity[1, 0]


def test_a_span_past_the_length_limit_is_encoded_alone(fp32: Encoder) -> None:
    filler = "tensor " * (fp32._model.max_seq_length + 50)
    tail = "zero_grad clears the gradients."
    text = filler + tail
    ((_, (vector,)),) = fp32.encode_spans([text], [[(len(filler), len(text))]])
    np.testing.assert_allclose(vector @ fp32.encode([tail])[0], 1.0, atol=1e-5)


def test_one_pass_grades_the_same_answer_alone_or_in_a_batch(
    fp32: Encoder, bank: QuestionBank
) -> None:
    question = bank.questions["zero-grad"]
    grader = Grader(fp32, list(bank.questions.values())[:6], GraderOptions(one_pass=True))
    answers = [
        "zero_grad() clears .grad. Without it gradients accumulate across steps, "
        "but you can skip it on purpose to accumulate over micro-batches.",
        "Gradients add up in .grad on every backward call. So we reset them each step.",
        "No idea.",
    ]
    together = grader.grade_many([(question, a, "en") for a in answers])
    alone = [grader.grade(question, a, "en") for a in answers]
    assert [r.score for r in together] == pytest.approx([r.score for r in alone], abs=0.1)
    assert together[0].score > 5 and together[2].verdict == "no-answer"
    assert together[0].covered == alone[0].covered


def test_cpu_threads_leave_a_core_to_the_bot(monkeypatch: pytest.MonkeyPatch) -> None:
    """GRADER_THREADS=0: one fewer than the cores, at least one; None (the CLI): untouched."""
    from bot.scoring import model_host as service

    before = torch.get_num_threads()
    try:
        monkeypatch.setattr(service.os, "cpu_count", lambda: 8)
        service.set_cpu_threads(0)
        assert torch.get_num_threads() == 7
        monkeypatch.setattr(service.os, "cpu_count", lambda: 1)
        service.set_cpu_threads(0)
        assert torch.get_num_threads() == 1
        service.set_cpu_threads(3)
        assert torch.get_num_threads() == 3
        service.set_cpu_threads(None)
        assert torch.get_num_threads() == 3
    finally:
        torch.set_num_threads(before)
