# Session 84 on a lent H200 (no H100 was lent). Logs under $OUT, and all of them in $OUT/all.tgz (the device
# returns a limited number of files).
#   bash benchmarks/session84.sh PARTS
# Parts "crossover", "grid", "f32", "ozaki", "suite": session65.sh's, on this session's code.
# Part "again8192": the crossover's configurations at n = 8192 alone, a second run of the size whose best was
# nearest its bar in the session's crossover run.
# Part "tiny": matmul's check at FP64 100000x16x16 (a TSM2L kernel of 20 us, 0.980 in the session's grid run against
# 1.32-1.56 in every run before) four times, alternating this tree and the tree in .old/ (session 79's, the last
# whose grid held there: `mkdir .old && git archive d7d6e3a bilinear templates algorithms benchmarks | tar -x -C .old`,
# carried as an untracked folder).
source benchmarks/device_env.sh
for part in "$@"; do
  case $part in
    crossover|grid|f32|ozaki|suite) bash benchmarks/session65.sh $part ;;
    again8192) eval "$(sed -n '/^CROSSOVER_CONFIGS=/,/)$/p' benchmarks/session62.sh)"  # its configurations alone
               timeout 200 python3 benchmarks/breadth.py --dtype float64 --repeat 5 --sizes 8192 \
                 --configs "${CROSSOVER_CONFIGS[@]}" --out $OUT/again8192 2>&1 | tee $OUT/again8192.txt | grep -v "^  " ;;
    tiny) for tree in new old new old; do
            root=$PWD; [ $tree = old ] && root=$PWD/.old
            echo "== $tree"; PYTHONPATH=/tmp/site:$root timeout 60 python3 $root/benchmarks/dispatch_grid.py --check \
              --dtype float64 --repeat 21 --only 100000x16x16 2>&1 | tail -3
          done 2>&1 | tee $OUT/tiny.txt ;;
    *) echo "unknown part $part" >&2; exit 2 ;;
  esac
done
tar czf /tmp/all.tgz -C $OUT . && mv /tmp/all.tgz $OUT/all.tgz
