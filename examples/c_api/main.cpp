// Calls the library `bilinear compile algorithms/msmes.bl` builds (README, "Using a compiled scheme
// from C or C++") on random normal matrices, and checks it against cublasDgemm with the same
// arguments: the product's error, and that A and B are back (msmes overwrites them while it runs).
//   ./main [m n k]      (default 1000 1000 1000; column-major, tight leading dimensions)
// Prints one line and exits 0 when the status is 0 and both checks hold, 2 for a malformed command
// line, else 1.
#include "msmes.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
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

// A size: all of ``text`` a whole number from 1 to INT_MAX (atoi had read "8x" as 8, and wrapped 99999999999)
static bool size_argument(const char* text, int& size) {
  errno = 0;
  char* end = nullptr;
  const long long value = std::strtoll(text, &end, 10);
  if (end == text || *end != '\0' || errno == ERANGE || value < 1 || value > INT_MAX) return false;
  size = int(value);
  return true;
}

int main(int argc, char** argv) {
  int m = 1000, n = 1000, k = 1000;
  if ((argc != 1 && argc != 4) ||
      (argc == 4 && !(size_argument(argv[1], m) && size_argument(argv[2], n) && size_argument(argv[3], k)))) {
    std::fprintf(stderr, "usage: %s [m n k] (three whole numbers from 1 to %d)\n", argv[0], INT_MAX);
    return 2;
  }
  std::mt19937_64 random(2024);
  std::normal_distribution<double> normal;
  std::vector<double> A, B, zeros;
  try {
    A.resize(size_t(m) * k), B.resize(size_t(k) * n), zeros.resize(size_t(m) * n);
  } catch (const std::exception& error) {  // too large for the host (std::length_error, std::bad_alloc)
    std::fprintf(stderr, "cannot hold A (%d x %d), B (%d x %d) and C in host memory: %s\n", m, k, k, n, error.what());
    return 1;
  }
  for (double& x : A) x = normal(random);
  for (double& x : B) x = normal(random);
  double *dA = on_device(A), *dB = on_device(B), *dC = on_device(zeros), *dReference = on_device(zeros);

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
