# Session 70 on a lent H200 (no H100 was lent). Logs under $OUT.
#   bash benchmarks/session70.sh PARTS
# Part "c_api": the README's C/C++ section as written: compile msmes with fused leaves, build
# libmsmes.so with nvcc, link examples/c_api/main.cpp with g++, run it at 4096 and at odd sizes.
# Part "suite": the GPU tests (session65.sh's).
# Part "two_gpu" (two GPUs): the GPU tests that need two (tests/test_multi_gpu.py, and tests/test_distributed.py's).
# Part "dist" (two GPUs): session66.sh's: correctness over both GPUs, the chain, Winograd over 2 ranks at 32768.
source benchmarks/device_env.sh
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,memory.total --format=csv > $OUT/gpu.txt
for part in "$@"; do
  case $part in
    c_api)
      # cuBLAS from CUDA_HOME, else from the nvidia-cublas wheel (the README's flags for that case)
      read -r INC LIB < <(python3 -c "import sys; sys.path.insert(0, 'tests'); from conftest import cublas_paths; print(*cublas_paths())")
      CUDA_HOME=${CUDA_HOME:-$(python3 -c "import cupy; print(cupy.cuda.get_cuda_path() or '')" 2>/dev/null)}
      CUDA_INC=${CUDA_HOME:-/usr/local/cuda}/include CUDA_LIB=${CUDA_HOME:-/usr/local/cuda}/lib64
      CUBLAS=$(ls $LIB/libcublas.so >/dev/null 2>&1 && echo -lcublas || echo -l:libcublas.so.13)
      build=/tmp/c_api/build/msmes_fused
      rm -rf $build
      (python3 -m bilinear compile algorithms/msmes.bl --leaf fused -o $build > $OUT/c_api_compile.txt 2>&1 &&
       cd $build &&
       /usr/bin/time -f "nvcc %e s" nvcc -O1 -std=c++17 -arch=sm_90 -Xcompiler -fPIC -shared msmes.cu -o libmsmes.so \
         -I$INC -L$LIB $CUBLAS -Xlinker -rpath,$LIB &&
       g++ $OLDPWD/examples/c_api/main.cpp -I. -I$CUDA_INC -I$INC -L. -lmsmes -Wl,-rpath,$PWD -L$CUDA_LIB -lcudart \
         -L$LIB $CUBLAS -Wl,-rpath,$LIB -o main &&
       for size in "4096 4096 4096" "1000 1000 1000" "1001 517 2049"; do ./main $size; echo "exit $?"; done
      ) 2>&1 | tee $OUT/c_api.txt ;;
    suite) bash benchmarks/session65.sh suite ;;
    two_gpu) timeout 200 python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_multi_gpu.py tests/test_distributed.py \
               2>&1 | tail -8 | tee $OUT/two_gpu_tests.txt ;;
    dist) bash benchmarks/session66.sh dist ;;
    *) echo "unknown part $part" >&2; exit 2 ;;
  esac
done
