# Session 59 on one H100: host time of matmul's prepared cuBLAS call and of a graph replay, this
# session's code against the code before it (old_bilinear.tar: `git archive HEAD bilinear`, untracked),
# alternated in one call; then the GPU tests of what changed, and the grid check where matmul keeps cuBLAS.
#   bash benchmarks/session59.sh
source benchmarks/device_env.sh
nvidia-smi --query-gpu=name,uuid,power.limit --format=csv > $OUT/gpu.txt
OLD=/tmp/old
mkdir -p $OLD && cp -r algorithms benchmarks templates pyproject.toml $OLD/ && tar -xf old_bilinear.tar -C $OLD
for round in 1 2; do
  echo "== round $round: new" | tee -a $OUT/host.txt $OUT/replay.txt
  python3 benchmarks/host_overhead.py --pieces 2>&1 | tee -a $OUT/host.txt
  python3 benchmarks/replay_host.py --each 2>&1 | tee -a $OUT/replay.txt
  echo "== round $round: old" | tee -a $OUT/host.txt $OUT/replay.txt
  (cd $OLD && PYTHONPATH=/tmp/site:$OLD python3 benchmarks/host_overhead.py --pieces 2>&1 | tee -a $OUT/host.txt)
  (cd $OLD && PYTHONPATH=/tmp/site:$OLD python3 benchmarks/replay_host.py --each 2>&1 | tee -a $OUT/replay.txt)
done
python3 -m pytest -m gpu -q -p no:cacheprovider -n 4 tests/test_matmul_gpu.py tests/test_runtime_gpu.py \
  tests/test_prepared_calls.py tests/test_ozaki_gpu.py 2>&1 | tail -5 | tee $OUT/gpu_subset.txt
python3 benchmarks/dispatch_grid.py --check --repeat 11 --dtype float32 --only 4096x4096x64 2>&1 | tail -3 | tee $OUT/grid_fp32.txt
