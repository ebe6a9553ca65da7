source benchmarks/device_env.sh
nvidia-smi --query-gpu=name,uuid --format=csv > $OUT/gpu.txt
timeout 200 python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_runtime_gpu.py tests/test_distributed.py \
  -k "another_cublas or nccl" 2>&1 | tail -8 > $OUT/new.txt
OLD=/tmp/old
mkdir -p $OLD && cp -r algorithms benchmarks templates tests pyproject.toml $OLD/ && tar -xf old_bilinear.tar -C $OLD
(cd $OLD && PYTHONPATH=/tmp/site:$OLD timeout 60 python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_runtime_gpu.py \
  -k "another_cublas" 2>&1 | tail -8 > $OUT/decoy_old.txt)
