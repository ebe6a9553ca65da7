# Session 64 on a lent H200 (no H100 was lent). Logs under $OUT.
#   bash benchmarks/session64.sh PARTS
# Part "crossover": issue 13's crossover table, session 62's part of that name (benchmarks/session62.sh); its host
# time per call is now also read apart: the first call after the GPU went idle, and each later call of a loop.
# Part "grid": bilinear.matmul against cuBLAS on the 30-shape grid (benchmarks/session61.sh's).
# Part "suite": the GPU tests.
# Part "graphs": the graph tests, then the host time of graph launches by node kind (memset_node_probe.py) and of
# Winograd L2's graph replays at 4096-6144 with each launch mode of its leaves (graph_launch_probe.py).
source benchmarks/device_env.sh
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,memory.total --format=csv > $OUT/gpu.txt
for part in "$@"; do
  case $part in
    crossover) bash benchmarks/session62.sh crossover ;;  # its table, its configurations, breadth.py's host timings
    grid) timeout 240 python3 benchmarks/dispatch_grid.py --check --repeat 11 --out $OUT/grid > $OUT/grid_check.txt 2>&1
          tail -3 $OUT/grid_check.txt ;;
    suite) timeout 330 python3 -m pytest -m gpu -n 8 -q -p no:cacheprovider 2>&1 | tail -15 | tee $OUT/gpu_suite.txt ;;
    graphs) timeout 240 python3 -m pytest -m gpu -q -n 8 -p no:cacheprovider tests/test_graph_workspace.py \
              tests/test_graph_memsets.py tests/test_matmul_gpu.py tests/test_breadth.py tests/test_runtime_gpu.py \
              tests/test_graph_cache.py > $OUT/graph_tests.txt 2>&1; tail -12 $OUT/graph_tests.txt
            (cd benchmarks && timeout 60 python3 memset_node_probe.py 2>&1 | tee $OUT/memset_nodes.txt
             timeout 150 python3 graph_launch_probe.py --launch serial streams batched 2>&1 | tee $OUT/graph_launch.txt) ;;
    *) echo "unknown part $part" >&2; exit 2 ;;
  esac
done
