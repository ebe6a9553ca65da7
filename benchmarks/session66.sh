# Session 66 on a lent H200 (no H100 was lent). Logs under $OUT.
#   bash benchmarks/session66.sh PARTS
# Part "props": tests/test_matmul_gpu_properties.py, matmul against a float64 reference over drawn shapes,
# layouts, scalars and kernels (new this session), with hypothesis's statistics.
# Part "suite": the GPU tests.
source benchmarks/device_env.sh
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,memory.total --format=csv > $OUT/gpu.txt
for part in "$@"; do
  case $part in
    props) timeout 400 python3 -m pytest -m gpu -q -p no:cacheprovider --hypothesis-show-statistics \
             tests/test_matmul_gpu_properties.py 2>&1 | tail -40 | tee $OUT/gpu_properties.txt ;;
    suite) timeout 330 python3 -m pytest -m gpu -n 8 -q -p no:cacheprovider 2>&1 | tail -15 | tee $OUT/gpu_suite.txt ;;
    *) echo "unknown part $part" >&2; exit 2 ;;
  esac
done
