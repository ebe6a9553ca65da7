# Session 82 on a lent H200 (no H100 was lent). Logs under $OUT.
#   bash benchmarks/session82.sh PARTS
# Part "read": reading and verifying <27,27,27;12167> (benchmarks/large_read.py) with this tree and, in turn, with
# the tree in .old/ (`mkdir .old && git archive REV bilinear algorithms templates | tar -x -C .old`, carried as an untracked folder),
# on the device's quiet CPUs. Part "suite": the GPU tests.
source benchmarks/device_env.sh
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,memory.total --format=csv > $OUT/gpu.txt
for part in "$@"; do
  case $part in
    read) timeout 300 python3 benchmarks/large_read.py --against .old --rounds 3 2>&1 | tee $OUT/large_read.txt ;;
    suite) timeout 330 python3 -m pytest -m gpu -n 8 -q -p no:cacheprovider 2>&1 | tail -15 | tee $OUT/gpu_suite.txt ;;
    *) echo "unknown part $part" >&2; exit 2 ;;
  esac
done
