# Session 71 on a lent H200 (no H100 was lent). Logs under $OUT.
#   bash benchmarks/session71.sh PARTS
# Part "ozaki_l1": where the time of one FP64 Strassen (and Winograd) level above ozaki leaves goes at
# n = 16384, N = 14, norm scaling: L0 and L1, the level depth-first and breadth-first, each call's passes
# timed (--breakdown).
# Part "pipeline": benchmarks/ozaki_pipeline_probe.py at 4096 and 8192 (seven leaves, N = 14), the board's
# power sampled.
# Part "int8_lt": benchmarks/int8_lt_probe.py, cuBLASLt's int8 algorithms against the leaf's call.
# Part "ozaki": issue 13's Ozaki table (session65.sh's: the leaf alone with N = 14 and 16, with one Strassen level,
# with a Strassen level on the residues), then one Winograd level above the leaves, depth- and breadth-first.
# Part "suite": the GPU tests (session65.sh's).
source benchmarks/device_env.sh
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,memory.total --format=csv > $OUT/gpu.txt
# sampled NAME COMMAND...: run COMMAND with the board's power draw and SM clock sampled every 100 ms
# into $OUT/power_NAME.csv (nvidia-smi only reads them).
sampled() {
  nvidia-smi --query-gpu=timestamp,power.draw,clocks.sm,temperature.gpu --format=csv -lms 100 > $OUT/power_$1.csv &
  local sampler=$!
  shift
  "$@"
  kill $sampler
}
for part in "$@"; do
  case $part in
    ozaki_l1)
      for scheme in strassen winograd; do
        levels=$([ $scheme = strassen ] && echo "0 1" || echo 1)
        timeout 200 python3 benchmarks/ozaki.py -n 16384 --moduli 14 --level-moduli 14 --levels $levels \
          --scalings norm --residue-levels 0 --breadth 0 1 --breakdown --scheme algorithms/$scheme.bl \
          --out $OUT/ozaki_l1_$scheme > $OUT/ozaki_l1_$scheme.log 2>&1
        echo "$scheme: exit $?"; cat $OUT/ozaki_l1_$scheme/ozaki.txt
      done ;;
    pipeline) sampled pipeline timeout 200 python3 benchmarks/ozaki_pipeline_probe.py -n 8192 4096 --moduli 14 \
                > $OUT/pipeline.txt 2>&1; cat $OUT/pipeline.txt ;;
    int8_lt) sampled int8_lt timeout 200 python3 benchmarks/int8_lt_probe.py --shapes 8192,16384,8192 8192,8192,8192 \
               16384,16384,16384 4096,4096,4096 > $OUT/int8_lt.txt 2>&1; cat $OUT/int8_lt.txt ;;
    ozaki) bash benchmarks/session65.sh ozaki
      timeout 150 python3 benchmarks/ozaki.py -n 16384 --level-moduli 14 --levels 1 --scalings norm --residue-levels 0 \
        --breadth 0 1 --scheme algorithms/winograd.bl --out $OUT/ozaki_winograd > $OUT/ozaki_winograd.log 2>&1
      echo "winograd: exit $?"; cat $OUT/ozaki_winograd/ozaki.txt ;;
    suite) bash benchmarks/session65.sh suite ;;
    *) echo "unknown part $part" >&2; exit 2 ;;
  esac
done
