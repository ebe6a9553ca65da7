#!/usr/bin/env bash
# msmes with no workspace (issue 13's "msmes 0 B" row) at the sizes where it is meant to be used:
# products that fill the device, where a scheme with temporaries would not fit beside A, B and C.
# Run on the lent GPU from the repository root with .whl/ carried (lark, python-flint, platformdirs):
#
#   bash benchmarks/msmes_large.sh [SIZES...]     (default 32768 24576 16384)
#
# Results land in $OUT: msmes_large.txt and msmes_large.json (one `bilinear bench` run, levels 1-3,
# cuBLAS leaves, float64, median of 5, interleaved with cuBLAS, per-stage breakdown at level 1).
. "$(dirname "$0")/device_env.sh"
sizes=("${@:-32768 24576 16384}")
python3 -c 'import sys; from bilinear.cli import main; sys.exit(main())' bench algorithms/msmes.bl \
  -n ${sizes[@]} --dtype float64 --levels 1 2 3 --leaf cublas --repeat 5 --breakdown \
  --json "$OUT/msmes_large.json" 2>&1 | tee "$OUT/msmes_large.txt"
