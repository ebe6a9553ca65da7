# Session 65 on a lent H200 (no H100 was lent). Logs under $OUT.
#   bash benchmarks/session65.sh PARTS
# Part "suite": the GPU tests.
# Part "sanitize": the fill kernel that replaces a graph's memset nodes (session 64) under compute-sanitizer's
# memcheck and racecheck: in a replay of Winograd L2's graph at n = 5120 (sanitize_kernels.py --only graphs), and
# over memsets of each width, alignment and pitch (tests/test_graph_memsets.py). Only the fill kernel is
# instrumented (--kernel-name kns=bilinear_fill); the others were checked in sessions 33-62.
# Part "probes": host time of graph launches by node kind, and of Winograd L2's replays at 4096-6144 (session 64's).
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
    *) echo "unknown part $part" >&2; exit 2 ;;
  esac
done
