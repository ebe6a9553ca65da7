#!/usr/bin/env bash
# Copy the imported schemes that benchmarks/imported_gpu.py runs into gpu_schemes/ at the
# repository root (git-ignored: they are other projects' data, never part of the repository;
# the device call carries the folder).
#
#   bash benchmarks/stage_imported.sh            # from ../shared/schemes and /work/catalogues
#   SHARED=DIR CATALOGUES=DIR bash benchmarks/stage_imported.sh
#
# None of these schemes is shipped in algorithms/.  One from each catalogue at least:
#   Kauers      446-k0a44a47e90f9bce.exp   <4,4,6;73>  rectangular, 73 products (fused build time)
#   flips       223-11-mod0.exp            <2,2,3;11>  rational flips solution
#   flips       445-62-mod0.m              <4,4,5;62>  rectangular, 62 products (Mathematica form)
#   fast-matmul smirnov336-40-960          <3,3,6;40>  rectangular
#   PLinOpt     4x4x4_48_rational_{L,R,P}.sms <4,4,4;48> the rational scheme (CSE anchor)
#               and its .slp programs (read as named sums: PLinOpt's 104/75/110 additions)
#   AlphaTensor factorizations_r.npz key 4,4,4 <4,4,4;49> (a square key: no pickle)
#   Perminov    2x4x5_m33_ZT.json          <2,4,5;33>
set -euo pipefail
cd "$(dirname "$0")/.."
SHARED=${SHARED:-../shared/schemes}
CATALOGUES=${CATALOGUES:-/work/catalogues}
PLINOPT=$CATALOGUES/jgdumas+plinopt/data
PERMINOV=$CATALOGUES/dronperminov+FastMatrixMultiplication/schemes/results/ZT
mkdir -p gpu_schemes
files=(
  "$SHARED/kauers/446-k0a44a47e90f9bce.exp"
  "$SHARED/flips/223-11-mod0.exp"
  "$SHARED/flips/445-62-mod0.m"
  "$SHARED/fast-matmul/smirnov336-40-960"
  "$PLINOPT/4x4x4_48_rational_L.sms"
  "$PLINOPT/4x4x4_48_rational_R.sms"
  "$PLINOPT/4x4x4_48_rational_P.sms"
  "$PLINOPT/4x4x4_48_rational_L.slp"
  "$PLINOPT/4x4x4_48_rational_R.slp"
  "$PLINOPT/4x4x4_48_rational_P.slp"
  "$SHARED/alphatensor/factorizations_r.npz"
  "$PERMINOV/2x4x5_m33_ZT.json"
)
for file in "${files[@]}"; do
  if [ ! -f "$file" ]; then
    echo "stage_imported.sh: missing $file (set SHARED or CATALOGUES)" >&2
    exit 1
  fi
  install -m 0644 "$file" gpu_schemes/
done
ls -l gpu_schemes
