# How long nvcc takes to build a compiled library, by build flags (README, "Using a compiled scheme from C or C++").
#   bilinear compile ../shared/schemes/alphatensor/factorizations_r.npz --key 5,5,5 -o build/c555   (here)
#   bash benchmarks/catalogue_build.sh build/c555/factorizations_r_5x5x5.cu      (on the lent machine, build/c555 carried)
# One build after another; each line: the flags, the seconds, the host compiler's milliseconds (nvcc -time), and the
# library's gemm symbols (8: dgemm, sgemm, their _with_workspace and _workspace_bytes).
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; export PATH=$PATH:/usr/local/cuda/bin
source=$1; name=$(basename "$source" .cu); folder=$(dirname "$source")
nvcc --version | tail -1; nproc
for flags in "-O3" "-O3 -split-compile=0" "-O3 -split-compile=0 -Xptxas -split-compile=0" \
             "-O1 -split-compile=0 -Xptxas -split-compile=0" "-O0 -split-compile=0 -Xptxas -split-compile=0"; do
  rm -f /tmp/$name.csv  # nvcc -time appends
  start=$(date +%s%N)
  (cd "$folder" && nvcc $flags -std=c++17 -arch=sm_90 -Xcompiler -fPIC -shared $name.cu -o /tmp/lib$name.so -lcublas \
     -time /tmp/$name.csv 2> /tmp/$name.err)
  status=$?; end=$(date +%s%N)
  host=$(grep 'gcc (compiling)' /tmp/$name.csv | head -1 | cut -d, -f7 | tr -d ' ')
  echo "[$flags] status $status, $(( (end - start) / 1000000 )) ms, host gcc $host ms, $(nm -D /tmp/lib$name.so | grep -c ' T .*gemm') gemm symbols" \
    | tee -a "$OUT/catalogue_build.txt"
done
