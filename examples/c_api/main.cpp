// Calls the library `bilinear compile algorithms/msmes.bl` builds (README, "Using a compiled scheme
// from C or C++") on random normal matrices, and checks it against cublasDgemm with the same
// arguments: the product's error, and that A and B are back (msmes overwrites them while it runs).
//   ./main [m n k]      (default 1000 1000 1000; column-major, tight leading dimensions)
// Prints one line and exits 0 when the status is 0 and both checks hold, else 1.
#include "msmes.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

static void check(cudaError_t error, const char* what) {
  if (error != cudaSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(error));
    std::exit(1);
  }
}

static double* on_device(const std::vector<double>& host) {
  double* device = nullptr;
  check(cudaMalloc(&device, host.size() * sizeof(double)), "cudaMalloc");
  check(cudaMemcpy(device, host.data(), host.size() * sizeof(double), cudaMemcpyHostToDevice), "cudaMemcpy");
  return device;
}

static std::vector<double> on_host(const double* device, size_t count) {
  std::vector<double> host(count);
  check(cudaMemcpy(host.data(), device, count * sizeof(double), cudaMemcpyDeviceToHost), "cudaMemcpy");
  return host;
}

// max |x - y| / max |y|
static double relative_difference(const std::vector<double>& x, const std::vector<double>& y) {
  double largest = 0.0, difference = 0.0;
  for (size_t i = 0; i < x.size(); ++i) {
    largest = std::max(largest, std::fabs(y[i]));
    difference = std::max(difference, std::fabs(x[i] - y[i]));
  }
  return largest > 0.0 ? difference / largest : difference;
}

int main(int argc, char** argv) {
  const int m = argc > 3 ? std::atoi(argv[1]) : 1000, n = argc > 3 ? std::atoi(argv[2]) : 1000,
            k = argc > 3 ? std::atoi(argv[3]) : 1000;
  if (m < 1 || n < 1 || k < 1) {
    std::fprintf(stderr, "usage: %s [m n k] (whole numbers of at least 1)\n", argv[0]);
    return 1;
  }
  std::mt19937_64 random(2024);
  std::normal_distribution<double> normal;
  std::vector<double> A(size_t(m) * k), B(size_t(k) * n);
  for (double& x : A) x = normal(random);
  for (double& x : B) x = normal(random);
  double *dA = on_device(A), *dB = on_device(B), *dC = on_device(std::vector<double>(size_t(m) * n)),
         *dReference = on_device(std::vector<double>(size_t(m) * n));

  cublasHandle_t handle;
  if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "cublasCreate failed\n");
    return 1;
  }
  // C = A*B (alpha 1, beta 0) on the default stream; A and B are overwritten and restored.
  const int status = msmes_dgemm(handle, m, n, k, 1.0, dA, m, dB, k, 0.0, dC, m, nullptr);
  const double one = 1.0, zero = 0.0;
  cublasDgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, dA, m, dB, k, &zero, dReference, m);
  check(cudaStreamSynchronize(nullptr), "the products");

  const double error = relative_difference(on_host(dC, size_t(m) * n), on_host(dReference, size_t(m) * n));
  const double restored = std::max(relative_difference(on_host(dA, A.size()), A),
                                   relative_difference(on_host(dB, B.size()), B));
  // Strassen's error grows with its levels; restoring is exact up to a few roundings per element.
  const bool ok = status == 0 && error < 1e-10 && restored < 1e-12;
  std::printf("msmes_dgemm %d x %d x %d: status %d, error against cublasDgemm %.1e, A and B back within %.1e: %s\n",
              m, n, k, status, error, restored, ok ? "ok" : "FAILED");
  cublasDestroy(handle);
  for (double* buffer : {dA, dB, dC, dReference}) cudaFree(buffer);
  return ok ? 0 : 1;
}
