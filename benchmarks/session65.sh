# Session 65 on a lent H200 (no H100 was lent). Logs under $OUT.
#   bash benchmarks/session65.sh PARTS
# Part "suite": the GPU tests.
# Part "sanitize": the fill kernel that replaces a graph's memset nodes (session 64) under compute-sanitizer's
# memcheck and racecheck: in a replay of Winograd L2's graph at n = 5120 (sanitize_kernels.py --only graphs), and
# over memsets of each width, alignment and pitch (tests/test_graph_memsets.py). Only the fill kernel is
# instrumented (--kernel-name kns=bilinear_fill); the others were checked in sessions 33-62.
# Part "probes": host time of graph launches by node kind, and of Winograd L2's replays at 4096-6144 (session 64's).
# Parts "crossover" (session62.sh's), "grid" (session64.sh's), "ozaki" (session61.sh's): issue 13's tables again, on
# this session's code. Part "f32": FP32 n = 16384 head to head, head_to_head.sh's float32 line at that size only.
source benchmarks/device_env.sh
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,memory.total --format=csv > $OUT/gpu.txt
for part in "$@"; do
  case $part in
    suite) timeout 330 python3 -m pytest -m gpu -n 8 -q -p no:cacheprovider 2>&1 | tail -15 | tee $OUT/gpu_suite.txt ;;
    sanitize)
      compute-sanitizer --version | tail -1; compute-sanitizer --help | grep -A3 -- "--kernel-name " | head -4
      for tool in memcheck racecheck; do
        sanitize="compute-sanitizer --tool $tool --kernel-name kns=bilinear_fill --error-exitcode 9"
        timeout 110 $sanitize python3 benchmarks/sanitize_kernels.py --only graphs > $OUT/sanitize_graphs_$tool.txt 2>&1
        echo "graphs $tool: exit $?"; tail -2 $OUT/sanitize_graphs_$tool.txt
        timeout 110 $sanitize python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_graph_memsets.py \
          > $OUT/sanitize_memsets_$tool.txt 2>&1
        echo "memsets $tool: exit $?"; tail -2 $OUT/sanitize_memsets_$tool.txt
      done ;;
    probes) (cd benchmarks && timeout 60 python3 memset_node_probe.py 2>&1 | tee $OUT/memset_nodes.txt
             timeout 150 python3 graph_launch_probe.py --launch serial streams batched 2>&1 | tee $OUT/graph_launch.txt) ;;
    crossover) bash benchmarks/session62.sh crossover ;;
    grid) bash benchmarks/session64.sh grid ;;
    ozaki) bash benchmarks/session61.sh ozaki; tail -25 $OUT/ozaki.txt ;;
    f32) timeout 300 python3 benchmarks/head_to_head.py --graphs --json $OUT/head_to_head_f32_16384.json --dtype float32 \
           -n 16384 --configs "rsmm L3 dfs1+bfs2 streams" "winograd L2 bfs2 batched" 2>&1 | tee $OUT/head_to_head_f32_16384.txt ;;
    *) echo "unknown part $part" >&2; exit 2 ;;
  esac
done
