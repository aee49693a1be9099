#!/usr/bin/env bash
# Puts a CUDA 13.0 compiler (nvcc, its headers and the static CUDA runtime) into a Python venv
# from NVIDIA's PyPI wheels, so the `cuda` feature builds on machines without a GPU or a CUDA
# toolkit (CI, the 2-core dev machines). The lent GPUs run driver 580 (CUDA 13.0).
# Idempotent (the first run downloads ~300 MB); prints the exports to evaluate:
#
#   eval "$(scripts/install-nvcc.sh)" && cargo build --release -p cuzk-cli --features cuda
#
# CUZK_CUDA_HOME chooses the folder (default ~/.cache/cuzk-cuda).
set -euo pipefail
home="${CUZK_CUDA_HOME:-$HOME/.cache/cuzk-cuda}"
py="$home/venv/bin/python"
[ -x "$py" ] || python3 -m venv "$home/venv" >&2
sp="$("$py" -c 'import site; print(site.getsitepackages()[0])')"
cu="$sp/nvidia/cu13"
if [ ! -x "$cu/bin/nvcc" ]; then
  "$py" -m pip install --quiet --disable-pip-version-check \
    nvidia-cuda-nvcc==13.0.88 nvidia-nvvm==13.0.88 nvidia-cuda-crt==13.0.88 \
    nvidia-cuda-runtime==13.0.96 nvidia-cuda-cccl==13.0.85 >&2
fi
# Some build scripts look for lib64.
[ -e "$cu/lib64" ] || ln -s lib "$cu/lib64"
# nvcc must be on PATH (cc, sppark); rustc links libcudart_static from LIBRARY_PATH.
printf 'export PATH="%s/bin:$PATH"\n' "$cu"
printf 'export CUDA_PATH="%s" CUDA_HOME="%s"\n' "$cu" "$cu"
printf 'export LIBRARY_PATH="%s/lib${LIBRARY_PATH:+:$LIBRARY_PATH}"\n' "$cu"
printf 'export CUZK_CUDA_LIB="%s/lib"\n' "$cu"
