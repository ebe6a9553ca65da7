#!/usr/bin/env bash
# The distributed product on the lent multi-GPU machine, in one call:
#   environment, correctness on every shipped scheme (odd sizes, square and
#   rectangular, every layout), then FP64 speed against one GPU's cuBLAS DGEMM.
# Wheels for what the machine lacks travel in .whl (mpi4py, mpich, lark):
#   python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 ... -d .whl mpi4py mpich lark
# Usage (on the device): bash benchmarks/distributed_gpu.sh "SIZES" "CONFIGS"
#   CONFIGS: ';'-separated "scheme.bl|local.bl|levels|extra flags"
set -uo pipefail
OUT=${OUT:-/tmp/out}
SIZES=${1:-"16384 32768"}
CONFIGS=${2:-"winograd.bl|winograd.bl|0|;winograd.bl|winograd.bl|1|;winograd.bl|msmes.bl|1|"}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
python3 -m venv --system-site-packages /tmp/venv >/dev/null && /tmp/venv/bin/python -m pip install -q --no-index --no-deps .whl/*.whl || exit 1
PY=/tmp/venv/bin/python
export PATH=/tmp/venv/bin:$PATH PYTHONPATH=$PWD
GPUS=$(nvidia-smi -L | wc -l)
{
  nvidia-smi -L; nvidia-smi topo -m
  $PY -c "import cupy, mpi4py; from cupy.cuda import nccl; print('cupy', cupy.__version__, 'nccl', nccl.available, nccl.get_version(), 'mpi4py', mpi4py.__version__)"
} 2>&1 | tee $OUT/env.txt
echo "== correctness on $GPUS GPUs"
timeout 300 mpiexec -n $GPUS $PY tests/helpers/distributed_check.py --backend cupy \
  --sizes 1,1,1 37,29,41 101,67,53 1000,517,2049 4097,4097,4097 2>&1 | tee $OUT/correctness_${GPUS}gpu.txt | grep -v "^ok"
echo "== speed"
IFS=';' read -ra CONFIG_LIST <<< "$CONFIGS"
for config in "${CONFIG_LIST[@]}"; do
  IFS='|' read -r scheme local levels extra <<< "$config"
  name="${scheme%.bl}-${local%.bl}-L${levels}"
  timeout 400 mpiexec -n $GPUS $PY -m bilinear.cli bench algorithms/$scheme --gpus $GPUS --local algorithms/$local \
    --levels $levels -n $SIZES --repeat 5 --json $OUT/bench_${GPUS}gpu_${name}.json $extra 2>&1 | tee -a $OUT/bench_${GPUS}gpu.txt
done
