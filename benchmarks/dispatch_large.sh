#!/usr/bin/env bash
# On the lent GPU (repository root, .whl/ carried): the dispatch table's rows past 16384 (dispatch_grid.py's
# TABLE_ONLY: FP64 24576³ and 32768³, then FP32 32768³) measured into bilinear/data/dispatch.json, and
# bilinear.matmul checked against cuBLAS at them.  FP64 first, and the table copied to $OUT after each
# step: a row at 32768 takes minutes, and the call's time limit may cut the FP32 steps off.
#   bash benchmarks/dispatch_large.sh [seconds the whole script may take, default 560]
source benchmarks/device_env.sh
limit=${1:-560}
start=$SECONDS
log=$OUT/log.txt
nvidia-smi --query-gpu=name,uuid,power.limit --format=csv | tee -a "$log"
step() {  # step SECONDS ARGS...: dispatch_grid.py with ARGS, cut off after SECONDS, the table copied after
    local seconds=$1
    shift
    if ((seconds < 30)); then echo "== skipped (no time left): $*" | tee -a "$log"; return; fi
    echo "== python3 benchmarks/dispatch_grid.py $*  (at ${SECONDS}s, ${seconds}s allowed)" | tee -a "$log"
    timeout "$seconds" python3 benchmarks/dispatch_grid.py "$@" 2>&1 | tee -a "$log"
    cp bilinear/data/dispatch.json "$OUT/dispatch.json"
}
left() { echo $((limit - (SECONDS - start))); }
table=(--table bilinear/data/dispatch.json --repeat 5)
step "$(left)" "${table[@]}" --dtype float64 --only 24576x24576x24576 32768x32768x32768
step "$(left)" --check --repeat 5 --dtype float64 --only 24576x24576x24576 32768x32768x32768 --out "$OUT/check_f64"
step "$(left)" "${table[@]}" --dtype float32 --only 32768x32768x32768
step "$(left)" --check --repeat 5 --dtype float32 --only 32768x32768x32768 --out "$OUT/check_f32"
echo "== done at ${SECONDS}s" | tee -a "$log"
