# Session 67 on a lent H200 (no H100 was lent). Logs under $OUT.
#   bash benchmarks/session67.sh suite
# Part "suite": the GPU tests on this session's code (the lowering proves its passes' result once; the checks of
# .bl files refuse more), tests/test_matmul_gpu_properties.py's 60 derandomized cases among them.
source benchmarks/device_env.sh
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,memory.total --format=csv > $OUT/gpu.txt
for part in "$@"; do
  case $part in
    suite) timeout 420 python3 -m pytest -m gpu -n 8 -q -p no:cacheprovider 2>&1 | tail -15 | tee $OUT/gpu_suite.txt ;;
    *) echo "unknown part $part" >&2; exit 2 ;;
  esac
done
