# Sourced by the benchmark scripts that run on the lent GPU (repository root, .whl/ carried): the
# packages the device lacks (lark, python-flint, platformdirs; mpi4py where carried) into
# /tmp/site, MPICH's runtime (mpiexec, libmpi) on PATH where its wheel is carried, the repository on
# PYTHONPATH, $OUT ready, and a GPU there (exit 2 without one).
#
# Wheels for the machine's Python 3.12 (run here; both platform tags, or pip finds no mpi4py):
#   python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
#     --platform manylinux2014_x86_64 --platform manylinux_2_28_x86_64 -d .whl \
#     lark python-flint platformdirs rich pygments markdown-it-py mdurl pytest-xdist execnet \
#     mpi4py==4.1.2 mpich==5.0.2 nvmath-python==0.7.0 nvidia-cublasmp-cu13==0.7.0.125 'cuda-core>=0.3.2,<0.4'
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
# cuda-core < 0.4 is for nvmath 0.7 alone (distributed_gpu.sh's cublasmp part); MPICH is unpacked below.
python3 -m pip install -q --no-index --no-deps --no-compile --upgrade --target /tmp/site \
  $(ls .whl/*.whl | grep -v "mpich\|cuda_core") 2>&1 | grep -v WARNING
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
# MPICH's wheel keeps mpiexec and libmpi in its data folder, which pip --target would drop.
if ls .whl/mpich-*.whl >/dev/null 2>&1; then
  python3 -c "import zipfile, glob; zipfile.ZipFile(glob.glob('.whl/mpich-*.whl')[0]).extractall('/tmp/mpich')" || exit 1
  MPICH=$(echo /tmp/mpich/mpich-*.data/data)
  chmod +x "$MPICH"/bin/*
  export PATH=$MPICH/bin:$PATH LD_LIBRARY_PATH=$MPICH/lib:${LD_LIBRARY_PATH:-}
fi
nvidia-smi -L || exit 2
