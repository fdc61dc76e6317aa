#!/usr/bin/env bash
# GPU figures in one run (a few minutes on one modern GPU), printed as one table:
#   - `bench` on CUDA at 1, 64 and 1,024 answers in flight (GRADER_MAX_BATCH=1024);
#   - `eval` of content/eval and content/heldout on CUDA and on the CPU: the GPU's figures must
#     match the CPU's within 0.005 (fp16 on the GPU, bf16 or fp32 on the CPU).
# The exit status is non-zero when no CUDA device is visible or the figures disagree.
#
#   benchmarks/gpu.sh                                   # uses .venv (made by scripts/setup)
#   PYTHON=python3 benchmarks/gpu.sh                    # an environment with CUDA PyTorch already
#   TORCH_INDEX_URL=<PyTorch CUDA wheel index> benchmarks/gpu.sh   # first set-up with CUDA torch
# On a machine that reaches no package registry (the device tool's GPU machines), carry what
# benchmarks/gpu_kit.sh packs into .gpu/ (its header says how); benchmarks/gpu_env.sh installs it.
# EMBEDDING_MODEL picks the model (default: the project's default); OUT keeps the raw files.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-.venv/bin/python}
if [ ! -x "$PYTHON" ] && ! command -v "$PYTHON" > /dev/null; then
  scripts/setup --no-warm  # TORCH_SPEC / TORCH_INDEX_URL choose the CUDA build
  PYTHON=.venv/bin/python
fi
source benchmarks/gpu_env.sh
"$PYTHON" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else
  f"no CUDA device visible to torch {torch.__version__}")'
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 PYTHONUNBUFFERED=1
# The CPU and GPU vectors are keyed apart anyway; outside $out, which holds only the figures.
export EMBEDDING_CACHE_DIR=${EMBEDDING_CACHE_DIR:-$(mktemp -d)}

GRADER_MAX_BATCH=1024 EMBEDDING_DEVICE=cuda "$PYTHON" -m bot bench \
  --answers 4096 --concurrency 1,64,1024 --json "$out/bench-cuda.json" 2>&1 \
  | grep -v -E "INFO|Loading weights" | tee "$out/bench-cuda.txt"
for device in cuda cpu; do
  EMBEDDING_DEVICE=$device "$PYTHON" -m bot eval --no-baseline \
    --json "$out/eval-$device.json" > "$out/eval-$device.txt" 2>&1
done

"$PYTHON" - "$out" <<'PY'
import json, sys
from pathlib import Path

out = Path(sys.argv[1])
bench = json.loads((out / "bench-cuda.json").read_text())
cuda, cpu = (json.loads((out / f"eval-{d}.json").read_text()) for d in ("cuda", "cpu"))
rows = [
    ("model / device / precision", f"{bench['model']} / {bench['device']} / {bench['precision']}", ""),
    ("single answer p50 / p95, ms", f"{bench['single_p50_ms']:.1f} / {bench['single_p95_ms']:.1f}", "p50 <= 20"),
]
rows += [(f"answers/s at {n} in flight", f"{rate:.0f}", ">= 2000" if n == "1024" else "")
         for n, rate in bench["throughput"].items()]
rows += [
    ("batched vs one at a time", f"{bench['batching_ratio']:.2f}x", ""),
    ("grading without the model: ms an answer / answers/s (CPU ceiling)",
     f"{bench['without_model_ms']:.2f} / {bench['without_model_per_s']:.0f}", ">= 2000/s"),
    ("start-up cold / with vector cache, s", f"{bench['startup_cold_s']:.1f} / {bench['startup_cached_s']:.1f}", ""),
    ("GPU peak memory, MiB", f"{bench.get('gpu_peak_mib', 0):.0f}", ""),
]
worst = 0.0
for dataset, graders in cuda.items():
    for subset in ("all", "ru"):
        g, c = graders["grader"][subset]["spearman"], cpu[dataset]["grader"][subset]["spearman"]
        worst = max(worst, abs(g - c))
        rows.append((f"{dataset} Spearman {subset}: GPU / CPU", f"{g:.3f} / {c:.3f}", "within 0.005"))
width = max(len(r[0]) for r in rows)
for name, value, target in rows:
    print(f"{name:<{width}}  {value:<28} {target}")
print(f"largest GPU-CPU difference in Spearman: {worst:.4f}")
sys.exit(0 if worst <= 0.005 else 1)
PY
