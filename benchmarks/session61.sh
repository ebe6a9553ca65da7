# Session 61 on the lent H200 (the kinds lent this session: nvidia-h200, nvidia-h200-x2; no H100).
# Part "suite": the GPU tests; part "grid": bilinear.matmul against cuBLAS on the 30-shape grid with
# the table measured on the H100 (does its choice hold on another GPU?). Logs under $OUT.
#   bash benchmarks/session61.sh suite grid
# Part "replay": host time of graph replays; "h2h": issue 13's head-to-head lines;
# "ozaki": the emulated FP64 leaf against DGEMM at 16384; "msmes2": msmes2 with no workspace head to head.
# Part "record": the same check by the new --record, and matmul(inplace=True)'s; the table comes back in $OUT.
source benchmarks/device_env.sh
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,memory.total --format=csv > $OUT/gpu.txt
for part in "$@"; do
  case $part in
    suite) timeout 330 python3 -m pytest -m gpu -n 8 -q -p no:cacheprovider 2>&1 | tail -15 > $OUT/gpu_suite.txt ;;
    grid) timeout 240 python3 benchmarks/dispatch_grid.py --check --repeat 11 --out $OUT/grid > $OUT/grid_check.txt 2>&1 ;;
    record)  # does the H100's table hold here? where it does, the GPU is added to its checked_on
      timeout 200 python3 benchmarks/dispatch_grid.py --check --record --repeat 11 --out $OUT/grid_record > $OUT/grid_record.txt 2>&1
      timeout 330 python3 benchmarks/inplace_table.py --check --record --out $OUT/inplace_record > $OUT/inplace_record.txt 2>&1
      cp bilinear/data/dispatch.json $OUT/dispatch.json ;;
    replay) timeout 150 python3 benchmarks/replay_host.py > $OUT/replay_host.txt 2>&1 ;;
    msmes2) timeout 200 python3 benchmarks/head_to_head.py --dtype float64 -n 16384 --configs "msmes2 L1 dfs (0 B)" \
              --graphs --repeat 12 > $OUT/msmes2_h2h.txt 2>&1 ;;
    h2h) timeout 380 bash benchmarks/head_to_head.sh > $OUT/h2h.log 2>&1 ;;
    ozaki) timeout 120 python3 benchmarks/ozaki.py -n 16384 --moduli 14 16 --level-moduli 14 --levels 0 1 --scalings norm \
             --residue-levels 0 1 --out $OUT/ozaki > $OUT/ozaki.txt 2>&1 ;;
    *) echo "unknown part $part" >&2; exit 2 ;;
  esac
done
