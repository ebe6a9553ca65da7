#!/usr/bin/env bash
# The distributed product on the lent multi-GPU machine: what issue 14's closing note quotes.
#
#   [SIZES=...] [CUBLASMP_SIZES=...] [RANKS=...] bash benchmarks/distributed_gpu.sh [PARTS...]
#   PARTS: env correctness scaling layouts cublasmp chain (default: all)
#
# Wheels for what the machine lacks travel in .whl (ignored by git; carried by the device call): the
# download command is in device_env.sh.
# Results land in $OUT: correctness_*gpu.txt, bench_*gpu_*.json, cublasmp_*gpu.json, chain_*gpu.json.
PARTS=${*:-"env correctness scaling layouts cublasmp chain"}
SIZES=${SIZES:-"16384 32768 49152"}
CUBLASMP_SIZES=${CUBLASMP_SIZES:-"16384 32768"}  # also an environment variable: cuBLASMp sizes
RANKS=${RANKS:-}  # the scaling part's rank counts (default: 1 to every GPU)
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
source benchmarks/device_env.sh
GPUS=$(nvidia-smi -L | wc -l)
BILINEAR="python3 -m bilinear.cli"

for part in $PARTS; do
  echo "== $part on $GPUS GPUs"
  case $part in
    env)
      { nvidia-smi -L; nvidia-smi topo -m
        python3 -c "import cupy, mpi4py; from cupy.cuda import nccl; print('cupy', cupy.__version__, 'nccl', nccl.get_version(), 'mpi4py', mpi4py.__version__)"
      } 2>&1 | tee $OUT/env.txt ;;
    correctness)
      timeout 300 mpiexec -n $GPUS python3 tests/helpers/distributed_check.py --backend cupy \
        --sizes 1,1,1 37,29,41 101,67,53 1000,517,2049 4097,4097,4097 2>&1 | tee $OUT/correctness_${GPUS}gpu.txt | grep -v "^ok" ;;
    scaling)  # the thesis's configuration: Strassen-Winograd decomposition, MSMES on each GPU
      for ranks in ${RANKS:-$(seq 1 $GPUS)}; do
        timeout 400 mpiexec -n $ranks $BILINEAR bench algorithms/winograd.bl --gpus $ranks --local algorithms/msmes.bl \
          --levels 1 -n $SIZES --repeat 5 --json $OUT/bench_${ranks}gpu_winograd-msmes-L1.json 2>&1 | tee -a $OUT/bench.txt
      done ;;
    layouts)  # operands as cuBLASMp's users hold them: A, B and C in 2D blocks (gathered, C reduced to its owners)
      timeout 300 mpiexec -n $GPUS $BILINEAR bench algorithms/winograd.bl --gpus $GPUS --local algorithms/msmes.bl \
        --levels 1 -n 16384 32768 --repeat 5 --inputs block2d --output block2d \
        --json $OUT/bench_${GPUS}gpu_winograd-msmes-L1_block2d.json 2>&1 | tee -a $OUT/bench.txt ;;
    cublasmp)  # nvmath 0.7 (whose cuBLASMp runs on this NCCL) wants cuda-core < 0.4: only for this part
      python3 -m pip install -q --no-index --no-deps --no-compile --upgrade --target /tmp/site-mp .whl/cuda_core*.whl
      PYTHONPATH=/tmp/site-mp:$PYTHONPATH timeout 300 mpiexec -n $GPUS python3 benchmarks/cublasmp_baseline.py -n $CUBLASMP_SIZES --repeat 5 \
        --json $OUT/cublasmp_${GPUS}gpu.json 2>&1 | tee $OUT/cublasmp_${GPUS}gpu.txt | tail -20 ;;
    chain)
      timeout 300 mpiexec -n $GPUS python3 benchmarks/distributed_chain.py --json $OUT/chain_${GPUS}gpu.json 2>&1 | tail -12 ;;
  esac
done
