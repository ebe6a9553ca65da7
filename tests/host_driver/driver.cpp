// Links against a library built from `bilinear compile` output and checks <NAME>_dgemm and
// <NAME>_sgemm against cublasDgemm / cublasSgemm with the same arguments (column-major,
// leading dimensions larger than the matrices, odd sizes), on random normal data.
// Built by tests/test_host_layer.py with -DNAME=<name> -include <name>.h.  Prints one line per
// case ("<dtype> m n k: error <e> bound <b> restored <r> [ok|FAIL]") and exits 1 on any failure.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define DGEMM CAT(NAME, _dgemm)
#define SGEMM CAT(NAME, _sgemm)

static int failures = 0;

static void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) { std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e)); std::exit(2); }
}

static cublasStatus_t reference(cublasHandle_t h, int m, int n, int k, const double* alpha, const double* A, int lda,
                                const double* B, int ldb, const double* beta, double* C, int ldc) {
  return cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}
static cublasStatus_t reference(cublasHandle_t h, int m, int n, int k, const float* alpha, const float* A, int lda,
                                const float* B, int ldb, const float* beta, float* C, int ldc) {
  return cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}
static int ours(cublasHandle_t h, int m, int n, int k, double alpha, double* A, int lda, double* B, int ldb, double beta,
                double* C, int ldc, cudaStream_t s) {
  return DGEMM(h, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, s);
}
static int ours(cublasHandle_t h, int m, int n, int k, float alpha, float* A, int lda, float* B, int ldb, float beta,
                float* C, int ldc, cudaStream_t s) {
  return SGEMM(h, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, s);
}

static double norm(const std::vector<double>& x) {
  double s = 0;
  for (double v : x) s += v * v;
  return std::sqrt(s);
}

template <typename T>
static void run(cublasHandle_t handle, cudaStream_t stream, int m, int n, int k, double beta, int levels, double growth) {
  const int lda = m + 3, ldb = k + 1, ldc = m + 2;  // padded leading dimensions
  std::mt19937_64 rng(m * 7919 + n * 104729 + k);
  std::normal_distribution<double> normal;
  std::vector<T> A(size_t(lda) * k), B(size_t(ldb) * n), C(size_t(ldc) * n);
  for (auto& v : A) v = T(normal(rng));
  for (auto& v : B) v = T(normal(rng));
  for (auto& v : C) v = T(normal(rng));
  // With beta = 0, C is not read (as in BLAS): NaN in it must not reach the product.
  if (beta == 0)
    for (int j = 0; j < n; ++j) for (int i = 0; i < m; ++i) C[size_t(j) * ldc + i] = T(NAN);
  T *dA, *dB, *dC, *dR;
  check(cudaMalloc(&dA, A.size() * sizeof(T)), "malloc");
  check(cudaMalloc(&dB, B.size() * sizeof(T)), "malloc");
  check(cudaMalloc(&dC, C.size() * sizeof(T)), "malloc");
  check(cudaMalloc(&dR, C.size() * sizeof(T)), "malloc");
  check(cudaMemcpy(dA, A.data(), A.size() * sizeof(T), cudaMemcpyHostToDevice), "copy");
  check(cudaMemcpy(dB, B.data(), B.size() * sizeof(T), cudaMemcpyHostToDevice), "copy");
  check(cudaMemcpy(dC, C.data(), C.size() * sizeof(T), cudaMemcpyHostToDevice), "copy");
  check(cudaMemcpy(dR, C.data(), C.size() * sizeof(T), cudaMemcpyHostToDevice), "copy");
  const T alpha = T(1.5), b = T(beta);
  cublasSetStream(handle, stream);
  if (reference(handle, m, n, k, &alpha, dA, lda, dB, ldb, &b, dR, ldc) != CUBLAS_STATUS_SUCCESS) std::exit(3);
  const int status = ours(handle, m, n, k, alpha, dA, lda, dB, ldb, b, dC, ldc, stream);
  check(cudaStreamSynchronize(stream), "run");
  std::vector<T> got(C.size()), want(C.size()), A1(A.size()), B1(B.size());
  check(cudaMemcpy(got.data(), dC, C.size() * sizeof(T), cudaMemcpyDeviceToHost), "copy");
  check(cudaMemcpy(want.data(), dR, C.size() * sizeof(T), cudaMemcpyDeviceToHost), "copy");
  check(cudaMemcpy(A1.data(), dA, A.size() * sizeof(T), cudaMemcpyDeviceToHost), "copy");
  check(cudaMemcpy(B1.data(), dB, B.size() * sizeof(T), cudaMemcpyDeviceToHost), "copy");
  // Relative error against cuBLAS, normwise over C's m x n part; padding must be untouched.
  std::vector<double> diff, a, bb;
  bool padding = true;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < ldc; ++i) {
      const size_t at = size_t(j) * ldc + i;
      if (i < m) diff.push_back(double(got[at]) - double(want[at]));
      else padding = padding && got[at] == C[at];
    }
  for (int j = 0; j < k; ++j) for (int i = 0; i < m; ++i) a.push_back(A[size_t(j) * lda + i]);
  for (int j = 0; j < n; ++j) for (int i = 0; i < k; ++i) bb.push_back(B[size_t(j) * ldb + i]);
  // In-place schedules restore A and B up to rounding: a few ulps of the largest entry per level.
  double restored = 0, largest = 1;
  for (size_t i = 0; i < A.size(); ++i) {
    restored = std::fmax(restored, std::fabs(double(A1[i]) - double(A[i])));
    largest = std::fmax(largest, std::fabs(double(A[i])));
  }
  for (size_t i = 0; i < B.size(); ++i) {
    restored = std::fmax(restored, std::fabs(double(B1[i]) - double(B[i])));
    largest = std::fmax(largest, std::fabs(double(B[i])));
  }
  const double u = sizeof(T) == 8 ? 1.1102230246251565e-16 : 5.960464477539063e-08;
  const double scale = std::fabs(1.5) * norm(a) * norm(bb) + 1e-300;
  const double error = norm(diff) / scale;
  // Both products against the exact one within 8 u sqrt(k) rho^L (the README's bound), so their difference within twice that.
  const double bound = 2 * 8 * u * std::sqrt(double(std::max(k, 1))) * std::pow(growth, levels);
  const bool ok = status == 0 && error <= bound && padding && restored <= 16 * std::max(levels, 1) * u * largest;
  if (!ok) ++failures;
  std::printf("%s %d %d %d beta %g: status %d error %.3e bound %.3e restored %.3e padding %s %s\n",
              sizeof(T) == 8 ? "float64" : "float32", m, n, k, beta, status, error, bound, restored,
              padding ? "kept" : "CHANGED", ok ? "ok" : "FAIL");
  cudaFree(dA), cudaFree(dB), cudaFree(dC), cudaFree(dR);
}

int main(int argc, char** argv) {
  // usage: driver levels growth beta[,beta ...] m,n,k [m,n,k ...]
  if (argc < 5) { std::fprintf(stderr, "usage: driver levels growth beta[,beta ...] m,n,k ...\n"); return 2; }
  const int levels = std::atoi(argv[1]);
  const double growth = std::atof(argv[2]);
  std::vector<double> betas;
  for (const char* at = argv[3]; *at; ++at) {
    betas.push_back(std::strtod(at, const_cast<char**>(&at)));
    if (*at != ',') break;
  }
  cublasHandle_t handle;
  cudaStream_t stream;
  if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) return 2;
  check(cudaStreamCreate(&stream), "stream");
  for (int i = 4; i < argc; ++i) {
    int m, n, k;
    if (std::sscanf(argv[i], "%d,%d,%d", &m, &n, &k) != 3) return 2;
    for (const double beta : betas) {
      run<double>(handle, stream, m, n, k, beta, levels, growth);
      run<float>(handle, stream, m, n, k, beta, levels, growth);
    }
  }
  // Invalid arguments are refused before anything runs.
  if (DGEMM(handle, -1, 1, 1, 1.0, nullptr, 1, nullptr, 1, 0.0, nullptr, 1, stream) != -2) ++failures;
  if (DGEMM(handle, 4, 4, 4, 1.0, nullptr, 2, nullptr, 4, 0.0, nullptr, 4, stream) != -7) ++failures;
  cublasDestroy(handle);
  cudaStreamDestroy(stream);
  std::printf("%d failure(s)\n", failures);
  return failures ? 1 : 0;
}
