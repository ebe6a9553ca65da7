# Session 66 on a lent H200 (no H100 was lent). Logs under $OUT.
#   bash benchmarks/session66.sh PARTS
# Part "props": tests/test_matmul_gpu_properties.py, matmul against a float64 reference over drawn shapes,
# layouts, scalars and kernels (new this session), with hypothesis's statistics.
# Part "suite": the GPU tests (on two GPUs, the two-GPU tests among them).
# Part "dist" (two GPUs): the distributed product after session 65's fixes (dist.chain agrees on its model, bench
# --gpus --json's path checked on every rank): correctness over both GPUs, the chain, and Winograd over 2 ranks with
# MSMES L1 on each at 32768 (distributed_gpu.sh's parts).
source benchmarks/device_env.sh
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,memory.total --format=csv > $OUT/gpu.txt
for part in "$@"; do
  case $part in
    props) timeout 400 python3 -m pytest -m gpu -q -p no:cacheprovider --hypothesis-show-statistics \
             tests/test_matmul_gpu_properties.py 2>&1 | tail -40 | tee $OUT/gpu_properties.txt ;;
    suite) timeout 330 python3 -m pytest -m gpu -n 8 -q -p no:cacheprovider 2>&1 | tail -15 | tee $OUT/gpu_suite.txt ;;
    dist) SIZES=32768 RANKS=2 timeout 420 bash benchmarks/distributed_gpu.sh env correctness chain scaling 2>&1 \
            | tail -40 | tee $OUT/dist.txt ;;
    *) echo "unknown part $part" >&2; exit 2 ;;
  esac
done
