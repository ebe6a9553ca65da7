# Session 58 on one H100: the third fused level against msmes2, issue 13's grid and host-time lines,
# on this session's code (the GPU suite is run apart).  Logs under $OUT.
#   bash benchmarks/session58.sh
source benchmarks/device_env.sh
nvidia-smi --query-gpu=name,uuid,power.limit --format=csv > $OUT/gpu.txt
python3 benchmarks/replay_host.py 2>&1 | tee $OUT/replay_host.txt
python3 benchmarks/fused_levels.py -n 16384 --rounds 2 --repeat 12 --json $OUT/fused_levels.json 2>&1 | tee $OUT/fused_levels.txt
python3 benchmarks/dispatch_grid.py --check --repeat 11 --out $OUT/grid 2>&1 | tail -40 > $OUT/grid_check.txt
