#!/usr/bin/env bash
# Imported catalogue schemes on the lent GPU (issue 10's GPU acceptance): run from the repository
# root with .whl/ and gpu_schemes/ carried (stage them first: bash benchmarks/stage_imported.sh).
#
#   bash benchmarks/imported_gpu.sh [imported_gpu.py options, e.g. --only 446-k0a44a47e90f9bce.exp]
#
# Results land in $OUT: imported_gpu.txt and imported_gpu.json.  Exit status: 0 all passed,
# 1 a failure (listed at the end of the text), 2 a package or the GPU is missing.
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --upgrade --target /tmp/site \
  .whl/lark-*.whl .whl/python_flint-*.whl .whl/platformdirs-*.whl 2>&1 | grep -v WARNING
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
if [ ! -d gpu_schemes ]; then echo "imported_gpu.sh: gpu_schemes/ was not carried" >&2; exit 2; fi
nvidia-smi -L || exit 2
timeout 590 python3 benchmarks/imported_gpu.py --out "$OUT" "$@"
