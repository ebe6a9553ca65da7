#!/usr/bin/env bash
# Issue 13's best configurations and bilinear.matmul, each against cuBLAS alone (head_to_head.py), on
# the lent GPU from the repository root with .whl/ carried.  Results in $OUT/head_to_head_*.{txt,json}.
. "$(dirname "$0")/device_env.sh"
h2h() { local name=$1; shift; python3 benchmarks/head_to_head.py --graphs --json "$OUT/head_to_head_$name.json" "$@" \
  2>&1 | tee "$OUT/head_to_head_$name.txt"; }
h2h f64_16384 --dtype float64 -n 16384 --configs "winograd L2 bfs2 streams" "winograd L2 bfs2 batched" \
  "winograd L3 dfs1+bfs2 batched" "rsmm L3 dfs1+bfs2 streams" "msmes L1 dfs (0 B)" "msmes L1 dfs streams (0 B)" matmul
h2h f64_small --dtype float64 -n 4096 8192 --configs "winograd L2 bfs2 streams" "winograd L2 bfs2 batched" matmul
h2h f32 --dtype float32 -n 4096 16384 --configs "rsmm L3 dfs1+bfs2 streams" "winograd L2 bfs2 batched" matmul
