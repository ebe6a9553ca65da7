# Session 79 on a lent H200 (no H100 was lent). Logs under $OUT.
#   bash benchmarks/session79.sh PARTS
# Part "fallback": a shape holds a native row beside its ozaki row, and matmul runs the native one where the ozaki
# row is below the 1.2 an emulated leaf must clear. The committed table's check at FP64 16384x4096x16384 (the
# ozaki row 1.149, Winograd L2 streams 1.106) and two shapes near it that now take that row; then the grid writer
# measuring that shape into a fresh table of this GPU (both rows written).
# Part "recheck": the committed table's grid choices checked again on this GPU, on trial, and recorded where they hold
# (its H200 grid entry of 2026-11-28 predates the native rows, so it was taken out): the 30-shape check with
# --record; the table as it then is, in $OUT.
# Part "suite": the GPU tests (session65.sh's).
# Parts "two_gpu" and "dist" (two GPUs, mpi4py and mpich wheels in .whl): session70.sh's, on this session's code: the
# runtime and lowering changed since session 73 ran them (fused stages' grid, per_level checks, plans_run).
source benchmarks/device_env.sh
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,memory.total --format=csv > $OUT/gpu.txt
for part in "$@"; do
  case $part in
    fallback)
      mkdir -p $OUT/check
      timeout 240 python3 benchmarks/dispatch_grid.py --check --dtype float64 --repeat 11 --out $OUT/check \
        --only 16384x4096x16384 14336x4096x14336 16384x5120x16384 2>&1 | tee $OUT/fallback_check.txt
      echo '{}' > $OUT/h200_table.json
      timeout 240 python3 benchmarks/dispatch_grid.py --table $OUT/h200_table.json --dtype float64 --repeat 7 \
        --only 16384x4096x16384 2>&1 | tee $OUT/fallback_table.txt ;;
    recheck)
      mkdir -p $OUT/grid
      timeout 300 python3 benchmarks/dispatch_grid.py --check --record --repeat 11 --out $OUT/grid > $OUT/grid_check.txt 2>&1
      tail -4 $OUT/grid_check.txt; cp bilinear/data/dispatch.json $OUT/dispatch.json ;;
    suite) bash benchmarks/session65.sh suite ;;
    two_gpu | dist) bash benchmarks/session70.sh $part ;;
    *) echo "unknown part $part" >&2; exit 2 ;;
  esac
done
