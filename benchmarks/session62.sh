# Session 62 on a lent H200 machine (no H100 was lent; crossover, dist and suite ran on nvidia-h200-x2,
# dist also on nvidia-h200-x4). Logs under $OUT.
#   bash benchmarks/session62.sh PARTS
# Part "crossover": issue 13's crossover table, 2048-16384 in steps of 1024, depth-first, breadth-first and
# graph-replayed, the model's prediction beside each (a graph's without host launches), on GPU 0.
# Part "suite": the GPU tests (the two-GPU ones too where two are lent).
# Part "dist": the distributed product's checks over every GPU (benchmarks/distributed_gpu.sh env correctness).
source benchmarks/device_env.sh
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,memory.total --format=csv > $OUT/gpu.txt
CROSSOVER_CONFIGS=("rsmm L1 dfs" "msmes L1 dfs (0 B)" "msmes L1 dfs streams (0 B)" "winograd L1 bfs1"
  "winograd L1 bfs1 streams" "winograd L2 bfs2" "winograd L2 bfs2 streams" "winograd L2 bfs2 batched"
  "msmes L3 dfs1+bfs2 streams" "msmes2 L1 dfs (0 B)" "rsmm L3 dfs1+bfs2 streams" "winograd L3 dfs1+bfs2 batched")
for part in "$@"; do
  case $part in
    crossover) CUDA_VISIBLE_DEVICES=0 timeout 560 python3 benchmarks/breadth.py --dtype float64 --repeat 5 \
                 --configs "${CROSSOVER_CONFIGS[@]}" --out $OUT/crossover 2>&1 | tee $OUT/crossover64.txt | grep -v "^  " ;;
    suite) timeout 400 python3 -m pytest -m gpu -n 8 -q -p no:cacheprovider 2>&1 | tail -15 | tee $OUT/gpu_suite.txt ;;
    dist) timeout 300 bash benchmarks/distributed_gpu.sh env correctness 2>&1 | tail -30 | tee $OUT/dist.txt ;;
    *) echo "unknown part $part" >&2; exit 2 ;;
  esac
done
