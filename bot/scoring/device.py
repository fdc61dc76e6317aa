"""Where the embedding model runs and in what arithmetic: `auto` settled into a device and a
precision. One home for the rule: the encoder (bot/scoring/encoder.py), the name of the bank's
vectors file and the pair models' arithmetic (bot/scoring/model_host.py) must all settle it the
same way."""

from __future__ import annotations


def resolve_device(device: str) -> str:
    """`auto`: CUDA where torch sees a GPU, else the CPU; any other value as given."""
    if device != "auto":
        return device
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def resolve_precision(precision: str, device: str) -> str:
    """`auto`: fp16 on CUDA; bf16 on a CPU that multiplies bf16 natively (AVX512-BF16 or AMX:
    about 2.3x faster, vectors within cosine 0.9999 of fp32); fp32 elsewhere, where bf16 would
    be emulated and slower."""
    if precision != "auto":
        return precision
    if device.startswith("cuda"):
        return "fp16"
    if device == "cpu":
        import torch

        native = (
            getattr(torch.cpu, "_is_avx512_bf16_supported", lambda: False)()
            or getattr(torch.cpu, "_is_amx_tile_supported", lambda: False)()
        )
        return "bf16" if native else "fp32"
    return "fp32"
