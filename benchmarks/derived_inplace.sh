#!/usr/bin/env bash
# Schedules that `bilinear inplace` derives (no workspace; A and B overwritten, then restored) on the GPU:
# every one run against the reference at odd and power-of-two sizes, levels 1-2, both element types
# (`run` checks the product and measures how well A and B came back); memcheck and racecheck of one at
# two levels; then FP64 against cuBLAS: strassen's and winograd's beside the hand-written msmes at 16384,
# grey333's beside its default schedule (with workspace) at 15552, a `bilinear bench` run each.
# Run on the lent GPU from the repository root with .whl/ carried:
#
#   bash benchmarks/derived_inplace.sh      (strassen, winograd, grey333 and grey234)
#
# Results land in $OUT/derived: the .bl files, run.txt, sanitize_*.txt, bench*.txt and bench*.json.
. "$(dirname "$0")/device_env.sh"
schemes=(strassen winograd grey333 grey234)
D=$OUT/derived
mkdir -p "$D"
bl() { python3 -c 'import sys; from bilinear.cli import main; sys.exit(main())' "$@"; }
failed=0
for s in "${schemes[@]}"; do
  bl inplace "$s" -o "$D/$s.bl" --force 2>&1 | tee -a "$D/derive.txt" || failed=1
done
for s in "${schemes[@]}"; do
  for dtype in float64 float32; do
    for levels in 1 2; do
      for n in 1000 4097; do
        echo "== $s $dtype L$levels n=$n" >> "$D/run.txt"
        bl run "$D/$s.bl" -n $n --levels $levels --dtype $dtype >> "$D/run.txt" 2>&1 || { failed=1; echo "FAILED $s $dtype L$levels n=$n" | tee -a "$D/run.txt"; }
      done
    done
  done
done
grep -c "^==" "$D/run.txt"; grep -c FAILED "$D/run.txt"
for tool in memcheck racecheck; do
  compute-sanitizer --tool $tool python3 -c 'import sys; from bilinear.cli import main; sys.exit(main())' \
    run "$D/winograd.bl" -n 300 --levels 2 --dtype float64 > "$D/sanitize_$tool.txt" 2>&1 || failed=1
  tail -3 "$D/sanitize_$tool.txt"
done
bl bench "$D/strassen.bl" "$D/winograd.bl" algorithms/msmes.bl -n 16384 --dtype float64 --levels 1 2 \
  --leaf cublas --repeat 7 --json "$D/bench.json" 2>&1 | tee "$D/bench.txt"
# grey333 at a size its levels divide (15552 = 3^5 * 64): at 16384 its 5461^3 leaves are slow, with any schedule
bl bench "$D/grey333.bl" algorithms/grey333.bl -n 15552 --dtype float64 --levels 1 2 \
  --leaf cublas --repeat 7 --json "$D/bench_grey333.json" 2>&1 | tee "$D/bench_grey333.txt"
exit $failed
