"""Build a compiled library's host layer with g++ against the CPU stand-ins for the CUDA runtime and
cuBLAS (tests/host_emulator), with a small C++ ``main`` that prints what the calls return."""

from __future__ import annotations

import subprocess
from pathlib import Path

EMULATOR = Path(__file__).resolve().parent.parent / "host_emulator"


def statuses(out: Path, name: str, calls: list[str], prelude: str = "") -> list[int]:
    """The status (or size) each C++ call expression in ``calls`` returns (``handle``, and device buffers
    ``A``, ``B`` and ``C`` of 64×64 doubles, are in scope, then what ``prelude`` declares), for the
    library ``name`` in ``out``."""
    main = out / "statuses.cpp"
    main.write_text(
        "#include <algorithm>\n#include <cmath>\n#include <cstdio>\nint main() {\n  cublasHandle_t handle;\n  cublasCreate(&handle);\n  double *A, *B, *C;\n"
        "  cudaMalloc(&A, 64 * 64 * sizeof(double)), cudaMalloc(&B, 64 * 64 * sizeof(double)), "
        "cudaMalloc(&C, 64 * 64 * sizeof(double));\n" + prelude
        + "".join(f'  std::printf("%lld\\n", (long long)({call}));\n' for call in calls) + "}\n"
    )
    binary = out / "statuses"
    build = subprocess.run(
        ["g++", "-std=c++20", "-O1", "-pthread", "-w", f"-I{EMULATOR}", f"-I{out}", "-x", "c++", str(out / f"{name}.cu"),
         "-x", "c++", str(main), "-include", str(out / f"{name}.h"), "-o", str(binary)],
        capture_output=True, text=True,
    )
    assert build.returncode == 0, build.stderr[-3000:]
    return [int(word) for word in subprocess.run([str(binary)], capture_output=True, text=True, timeout=120).stdout.split()]


DRIVER = EMULATOR.parent / "host_driver" / "driver.cpp"


def run_driver(out: Path, name: str, arguments: list[str], flags: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    """The library ``name`` in ``out`` built with tests/host_driver/driver.cpp (which checks each
    m,n,k size against a reference: error bound, padding, restoration), and g++ ``flags`` (a
    sanitizer), and run with ``arguments``."""
    binary = out / "emulated"
    build = subprocess.run(
        ["g++", "-std=c++20", "-O1", "-pthread", "-w", *flags, f"-I{EMULATOR}", f"-I{out}", "-x", "c++", str(out / f"{name}.cu"),
         "-x", "c++", str(DRIVER), f"-DNAME={name}", "-include", str(out / f"{name}.h"), "-o", str(binary)],
        capture_output=True, text=True,
    )
    assert build.returncode == 0, build.stderr[-3000:]
    return subprocess.run([str(binary), *arguments], capture_output=True, text=True, timeout=300)


PRODUCT_MAIN = r"""
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>
// usage: product d|s m n k alpha beta DIR: DIR/a.bin, b.bin, c.bin column-major (tight leading dimensions), C
// written back to DIR/c.bin by <NAME>_dgemm or _sgemm; prints the status.
template <typename T>
static std::vector<T> load(const std::string& path, size_t count) {
  std::vector<T> data(count);
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f || std::fread(data.data(), sizeof(T), count, f) != count) std::exit(2);
  std::fclose(f);
  return data;
}
static int gemm(cublasHandle_t h, int m, int n, int k, double alpha, double* A, int lda, double* B, int ldb, double beta,
                double* C, int ldc) {
  return DGEMM(h, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, nullptr);
}
static int gemm(cublasHandle_t h, int m, int n, int k, float alpha, float* A, int lda, float* B, int ldb, float beta,
                float* C, int ldc) {
  return SGEMM(h, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, nullptr);
}
template <typename T>
static int run(char** argv) {
  const int m = std::atoi(argv[2]), n = std::atoi(argv[3]), k = std::atoi(argv[4]);
  const T alpha = T(std::atof(argv[5])), beta = T(std::atof(argv[6]));
  const std::string dir = argv[7];
  auto A = load<T>(dir + "/a.bin", size_t(m) * k), B = load<T>(dir + "/b.bin", size_t(k) * n), C = load<T>(dir + "/c.bin", size_t(m) * n);
  T *dA, *dB, *dC;
  cudaMalloc(&dA, A.size() * sizeof(T) + 1), cudaMalloc(&dB, B.size() * sizeof(T) + 1), cudaMalloc(&dC, C.size() * sizeof(T) + 1);
  cudaMemcpy(dA, A.data(), A.size() * sizeof(T), cudaMemcpyHostToDevice);
  cudaMemcpy(dB, B.data(), B.size() * sizeof(T), cudaMemcpyHostToDevice);
  cudaMemcpy(dC, C.data(), C.size() * sizeof(T), cudaMemcpyHostToDevice);
  cublasHandle_t handle;
  cublasCreate(&handle);
  const int status = gemm(handle, m, n, k, alpha, dA, std::max(m, 1), dB, std::max(k, 1), beta, dC, std::max(m, 1));
  cudaMemcpy(C.data(), dC, C.size() * sizeof(T), cudaMemcpyDeviceToHost);
  FILE* f = std::fopen((dir + "/c.bin").c_str(), "wb");
  std::fwrite(C.data(), sizeof(T), C.size(), f);
  std::fclose(f);
  cudaFree(dA), cudaFree(dB), cudaFree(dC);
  cublasDestroy(handle);
  return status;
}
int main(int, char** argv) { std::printf("%d\n", argv[1][0] == 'd' ? run<double>(argv) : run<float>(argv)); }
"""


def product(out: Path, name: str, A, B, C, alpha: float = 1.0, beta: float = 0.0, flags: tuple[str, ...] = ()):
    """(status, alpha·A@B + beta·C) by the library ``name`` in ``out`` on the emulator: its ``_dgemm``
    or ``_sgemm`` by C's dtype, on column-major copies of the NumPy matrices (the program built once
    per ``flags``, e.g. a sanitizer)."""
    import numpy as np

    binary = out / ("product" + "".join(flag.strip("-=,").replace("=", "_").replace(",", "_") for flag in flags))
    if not binary.exists():
        main = out / "product.cpp"
        main.write_text(f"#define DGEMM {name}_dgemm\n#define SGEMM {name}_sgemm\n" + PRODUCT_MAIN)
        build = subprocess.run(
            ["g++", "-std=c++20", "-O1", "-pthread", "-w", *flags, f"-I{EMULATOR}", f"-I{out}", "-x", "c++",
             str(out / f"{name}.cu"), "-x", "c++", str(main), "-include", str(out / f"{name}.h"), "-o", str(binary)],
            capture_output=True, text=True,
        )
        assert build.returncode == 0, build.stderr[-3000:]
    data = out / "product_data"
    data.mkdir(exist_ok=True)
    for file, matrix in (("a.bin", A), ("b.bin", B), ("c.bin", C)):
        np.asfortranarray(matrix, dtype=C.dtype).ravel(order="F").tofile(data / file)
    (m, k), n = A.shape, B.shape[1]
    which = "d" if C.dtype == np.float64 else "s"
    run = subprocess.run([str(binary), which, str(m), str(n), str(k), repr(alpha), repr(beta), str(data)],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr[-3000:]
    result = np.fromfile(data / "c.bin", dtype=C.dtype).reshape((n, m)).T
    return int(run.stdout.split()[-1]), result
