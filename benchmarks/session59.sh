# Session 59 on one H100, the final call: the GPU tests on this session's code (and the capture test
# with a decoy libcublas on the code before it: old_bilinear.tar, `git archive dfc6e64 bilinear`,
# untracked), host time of graph replays and of matmul's prepared calls, and the grid check's shape
# where a prepared cuBLAS call's host time came nearest the GPU's.  Logs under $OUT.
#   bash benchmarks/session59.sh
source benchmarks/device_env.sh
nvidia-smi --query-gpu=name,uuid,power.limit --format=csv > $OUT/gpu.txt
timeout 330 python3 -m pytest -m gpu -n 8 -q -p no:cacheprovider 2>&1 | tail -15 > $OUT/gpu_suite.txt
OLD=/tmp/old
mkdir -p $OLD && cp -r algorithms benchmarks templates tests pyproject.toml $OLD/ && tar -xf old_bilinear.tar -C $OLD
(cd $OLD && PYTHONPATH=/tmp/site:$OLD timeout 60 python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_runtime_gpu.py \
  -k "another_cublas" 2>&1 | tail -15 > $OUT/decoy_old.txt)
timeout 150 python3 benchmarks/replay_host.py > $OUT/replay_host.txt 2>&1

timeout 60 python3 benchmarks/dispatch_grid.py --check --repeat 11 --dtype float32 --only 4096x4096x64 2>&1 | tail -3 > $OUT/grid_fp32.txt
