# Session 59 on one H100, after session59.sh: the capture test with another libcublas listed first
# and the NCCL test on this session's code, and the capture test on the code before it
# (old_bilinear.tar: `git archive -o old_bilinear.tar dfc6e64 bilinear`, untracked).  Logs under $OUT.
#   bash benchmarks/session59_verify.sh
source benchmarks/device_env.sh
nvidia-smi --query-gpu=name,uuid --format=csv > $OUT/gpu.txt
timeout 200 python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_runtime_gpu.py tests/test_distributed.py \
  -k "another_cublas or nccl" 2>&1 | tail -8 > $OUT/new.txt
OLD=/tmp/old
mkdir -p $OLD && cp -r algorithms benchmarks templates tests pyproject.toml $OLD/ && tar -xf old_bilinear.tar -C $OLD
(cd $OLD && PYTHONPATH=/tmp/site:$OLD timeout 60 python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_runtime_gpu.py \
  -k "another_cublas" 2>&1 | tail -8 > $OUT/decoy_old.txt)
