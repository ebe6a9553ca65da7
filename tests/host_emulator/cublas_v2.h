// A CPU stand-in for the cuBLAS calls the generated host layer and the test driver make
// (column-major GEMM, strided-batched GEMM and GEAM, handle state), computed in long double.  See cuda_runtime.h.
#pragma once
#include "cuda_runtime.h"
#include <algorithm>

typedef enum { CUBLAS_STATUS_SUCCESS = 0, CUBLAS_STATUS_INVALID_VALUE = 7 } cublasStatus_t;
typedef enum { CUBLAS_OP_N = 0, CUBLAS_OP_T = 1 } cublasOperation_t;
typedef enum { CUDA_R_8I = 3, CUDA_R_32I = 10 } cudaDataType;
typedef enum { CUBLAS_COMPUTE_32I = 72 } cublasComputeType_t;
typedef enum { CUBLAS_GEMM_DEFAULT = -1 } cublasGemmAlgo_t;
typedef enum { CUBLAS_POINTER_MODE_HOST = 0, CUBLAS_POINTER_MODE_DEVICE = 1 } cublasPointerMode_t;
struct cublasContext {
  cudaStream_t stream = nullptr;
  cublasPointerMode_t mode = CUBLAS_POINTER_MODE_HOST;
};
typedef cublasContext* cublasHandle_t;

inline cublasStatus_t cublasCreate(cublasHandle_t* handle) { *handle = new cublasContext; return CUBLAS_STATUS_SUCCESS; }
inline cublasStatus_t cublasDestroy(cublasHandle_t handle) { delete handle; return CUBLAS_STATUS_SUCCESS; }
inline int emulator_set_streams = 0;  // cublasSetStream calls (each resets a cublasSetWorkspace workspace)
inline cublasStatus_t cublasSetStream(cublasHandle_t h, cudaStream_t s) {
  ++emulator_set_streams;
  h->stream = s;
  return CUBLAS_STATUS_SUCCESS;
}
inline cublasStatus_t cublasGetStream(cublasHandle_t h, cudaStream_t* s) { *s = h->stream; return CUBLAS_STATUS_SUCCESS; }
inline cublasStatus_t cublasSetPointerMode(cublasHandle_t h, cublasPointerMode_t m) { h->mode = m; return CUBLAS_STATUS_SUCCESS; }
inline cublasStatus_t cublasGetPointerMode(cublasHandle_t h, cublasPointerMode_t* m) { *m = h->mode; return CUBLAS_STATUS_SUCCESS; }

inline int emulator_gemms = 0;          // GEMMs computed, one per matrix of a batched call too
inline int emulator_batched_calls = 0;  // strided-batched calls

template <typename T>
cublasStatus_t emulator_gemm(int m, int n, int k, const T* alpha, const T* A, int lda, const T* B, int ldb, const T* beta,
                             T* C, int ldc) {
  if (m < 0 || n < 0 || k < 0 || lda < (m > 1 ? m : 1) || ldb < (k > 1 ? k : 1) || ldc < (m > 1 ? m : 1))
    return CUBLAS_STATUS_INVALID_VALUE;
  ++emulator_gemms;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      long double sum = 0;
      for (int p = 0; p < k; ++p) sum += (long double)A[i + (long long)p * lda] * B[p + (long long)j * ldb];
      T& c = C[i + (long long)j * ldc];
      c = T(*alpha * sum + (*beta == T(0) ? 0.0L : (long double)*beta * c));
    }
  return CUBLAS_STATUS_SUCCESS;
}
inline cublasStatus_t cublasDgemm(cublasHandle_t, cublasOperation_t, cublasOperation_t, int m, int n, int k,
                                  const double* alpha, const double* A, int lda, const double* B, int ldb,
                                  const double* beta, double* C, int ldc) {
  return emulator_gemm(m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}
inline cublasStatus_t cublasSgemm(cublasHandle_t, cublasOperation_t, cublasOperation_t, int m, int n, int k,
                                  const float* alpha, const float* A, int lda, const float* B, int ldb,
                                  const float* beta, float* C, int ldc) {
  return emulator_gemm(m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}
template <typename T>
cublasStatus_t emulator_gemm_strided(int m, int n, int k, const T* alpha, const T* A, int lda, long long sa, const T* B, int ldb,
                                     long long sb, const T* beta, T* C, int ldc, long long sc, int batch) {
  if (batch < 0) return CUBLAS_STATUS_INVALID_VALUE;
  ++emulator_batched_calls;
  for (int i = 0; i < batch; ++i)
    if (const cublasStatus_t s = emulator_gemm(m, n, k, alpha, A + i * sa, lda, B + i * sb, ldb, beta, C + i * sc, ldc)) return s;
  return CUBLAS_STATUS_SUCCESS;
}
inline cublasStatus_t cublasDgemmStridedBatched(cublasHandle_t, cublasOperation_t, cublasOperation_t, int m, int n, int k,
                                                const double* alpha, const double* A, int lda, long long sa, const double* B,
                                                int ldb, long long sb, const double* beta, double* C, int ldc, long long sc,
                                                int batch) {
  return emulator_gemm_strided(m, n, k, alpha, A, lda, sa, B, ldb, sb, beta, C, ldc, sc, batch);
}
inline cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t, cublasOperation_t, cublasOperation_t, int m, int n, int k,
                                                const float* alpha, const float* A, int lda, long long sa, const float* B,
                                                int ldb, long long sb, const float* beta, float* C, int ldc, long long sc,
                                                int batch) {
  return emulator_gemm_strided(m, n, k, alpha, A, lda, sa, B, ldb, sb, beta, C, ldc, sc, batch);
}
inline int emulator_geams = 0;  // GEAM calls (how the library scales C by beta)
template <typename T>
cublasStatus_t emulator_geam(int m, int n, const T* alpha, const T* A, int lda, const T* beta, const T* B, int ldb, T* C, int ldc) {
  ++emulator_geams;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      const T b = *beta == T(0) ? T(0) : *beta * B[i + (long long)j * ldb];
      C[i + (long long)j * ldc] = *alpha * A[i + (long long)j * lda] + b;
    }
  return CUBLAS_STATUS_SUCCESS;
}
inline cublasStatus_t cublasDgeam(cublasHandle_t, cublasOperation_t, cublasOperation_t, int m, int n, const double* alpha,
                                  const double* A, int lda, const double* beta, const double* B, int ldb, double* C, int ldc) {
  return emulator_geam(m, n, alpha, A, lda, beta, B, ldb, C, ldc);
}
inline cublasStatus_t cublasSgeam(cublasHandle_t, cublasOperation_t, cublasOperation_t, int m, int n, const float* alpha,
                                  const float* A, int lda, const float* beta, const float* B, int ldb, float* C, int ldc) {
  return emulator_geam(m, n, alpha, A, lda, beta, B, ldb, C, ldc);
}

// The ozaki leaf's int8 GEMMs: int8 A and B, int32 C and compute, host alpha and beta, exact (or a trap
// where the sum leaves int32, which cuBLAS would wrap).  op(A) is m x k, op(B) k x n, column-major.
inline int emulator_int8_gemms = 0;
inline cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                                                 int k, const void* alpha, const void* A, cudaDataType at, int lda, long long sa,
                                                 const void* B, cudaDataType bt, int ldb, long long sb, const void* beta, void* C,
                                                 cudaDataType ct, int ldc, long long sc, int batch,
                                                 cublasComputeType_t compute, cublasGemmAlgo_t) {
  if (at != CUDA_R_8I || bt != CUDA_R_8I || ct != CUDA_R_32I || compute != CUBLAS_COMPUTE_32I || h->mode != CUBLAS_POINTER_MODE_HOST)
    return CUBLAS_STATUS_INVALID_VALUE;
  if (m < 0 || n < 0 || k < 0 || batch < 0 || lda < std::max(1, ta == CUBLAS_OP_N ? m : k) ||
      ldb < std::max(1, tb == CUBLAS_OP_N ? k : n) || ldc < std::max(1, m))
    return CUBLAS_STATUS_INVALID_VALUE;
  const long long al = *static_cast<const int*>(alpha), be = *static_cast<const int*>(beta);
  for (int r = 0; r < batch; ++r) {
    ++emulator_int8_gemms;
    const auto* a = static_cast<const signed char*>(A) + r * sa;
    const auto* b = static_cast<const signed char*>(B) + r * sb;
    auto* c = static_cast<int*>(C) + r * sc;
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i) {
        long long sum = 0;
        for (int p = 0; p < k; ++p)
          sum += (long long)a[ta == CUBLAS_OP_N ? i + (long long)p * lda : p + (long long)i * lda] *
                 b[tb == CUBLAS_OP_N ? p + (long long)j * ldb : j + (long long)p * ldb];
        const long long value = al * sum + (be ? be * c[i + (long long)j * ldc] : 0);
        if (value != (long long)(int)value) __builtin_trap();  // past int32: the ozaki chunking failed
        c[i + (long long)j * ldc] = int(value);
      }
  }
  return CUBLAS_STATUS_SUCCESS;
}
