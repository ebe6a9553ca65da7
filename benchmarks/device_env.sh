# Sourced by the benchmark scripts that run on the lent GPU (repository root, .whl/ carried): the
# packages the device lacks (lark, python-flint, platformdirs) into /tmp/site, the repository on
# PYTHONPATH, $OUT ready, and a GPU there (exit 2 without one).
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --upgrade --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
nvidia-smi -L || exit 2
