"""bf16 linear layers with their weights laid out once for oneDNN's AMX kernels.

On a CPU with AMX, torch's bf16 `linear` runs oneDNN's AMX matrix multiply, but it reorders
the weight matrix into the kernel's blocked layout on every call: for the short texts the bot
grades that reorder is a third to a half of each call (a 384x1536 layer on 16 tokens: 127 us
plain, 70 us prepacked; on 1,000 tokens 1,286 against 1,039 us). `torch.ops.mkldnn` can reorder
once and multiply with the kept layout (what inductor's CPU freezing pass does); the products
are the same kernel's, so the vectors do not change.

Only where AMX is present, where it was measured (docs/grading.md, "Speed"); on a CPU with
AVX512-BF16 and no AMX, a different prepacked path (`torch.utils.mkldnn`) was slower.
"""

from __future__ import annotations

import logging

import torch

log = logging.getLogger(__name__)


class PackedLinear(torch.nn.Module):
    """`torch.nn.Linear` in bf16 with a prepacked weight; inputs of any float type are cast to
    bf16 (what autocast does for a linear layer), the output is bf16."""

    def __init__(self, linear: torch.nn.Linear):
        super().__init__()
        self.in_features = linear.in_features
        self.out_features = linear.out_features
        weight = linear.weight.detach().to(torch.bfloat16).contiguous()
        self.register_buffer("packed", torch.ops.mkldnn._reorder_linear_weight(weight))
        bias = linear.bias
        self.register_buffer(
            "bias", None if bias is None else bias.detach().to(torch.bfloat16).contiguous()
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out: torch.Tensor = torch.ops.mkldnn._linear_pointwise(  # torch.ops: untyped
            x.to(torch.bfloat16), self.packed, self.bias, "none", [], ""
        )
        return out

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, packed bf16"


def supported(require_amx: bool = True) -> bool:
    """AMX is present (unless not required) and a prepacked product equals the plain bf16 one
    here (a torch build without oneDNN, or one whose private ops changed, falls back to
    autocast)."""
    if require_amx and not getattr(torch.cpu, "_is_amx_tile_supported", lambda: False)():
        return False
    if not torch.backends.mkldnn.is_available():
        return False
    try:
        generator = torch.Generator().manual_seed(0)
        layer = torch.nn.Linear(64, 32)
        x = torch.randn(5, 64, generator=generator).to(torch.bfloat16)
        with torch.inference_mode():
            plain = torch.nn.functional.linear(
                x, layer.weight.to(torch.bfloat16), layer.bias.to(torch.bfloat16)
            )
            packed = PackedLinear(layer)(x)
        return bool(torch.allclose(plain.float(), packed.float(), atol=1e-2))
    except (RuntimeError, AttributeError, NotImplementedError):
        log.info("prepacked bf16 linear layers unavailable here", exc_info=True)
        return False


def pack_linear_layers(model: torch.nn.Module) -> int:
    """Replace every `torch.nn.Linear` inside `model` with a `PackedLinear`; how many."""
    replaced = 0
    for module in list(model.modules()):
        for name, child in list(module.named_children()):
            if isinstance(child, torch.nn.Linear):
                setattr(module, name, PackedLinear(child))
                replaced += 1
    return replaced


def prepare_bf16_linear_layers(model: torch.nn.Module, pack: bool | None = None) -> bool:
    """For a model run under bf16 autocast on the CPU: its linear layers' weights cast to bf16
    once (autocast would cast each weight on every call, a third of a short text's time), then
    prepacked where `pack` allows it (None: wherever the CPU has AMX; True: wherever oneDNN can;
    False: never). The products are autocast's own, so the outputs do not change. True when the
    layers were prepacked."""
    for module in model.modules():
        if isinstance(module, torch.nn.Linear):
            module.to(torch.bfloat16)
    if pack is False or not supported(require_amx=pack is None):
        return False
    return pack_linear_layers(model) > 0
