// Runs a generated TSM2 kernel on the CPU: one std::thread per CUDA thread, a std::barrier for
// __syncthreads, blocks one after another sharing one shared-memory buffer.  cp.async becomes a
// synchronous copy with the same zero fill.  What this checks: indexing, tails, swizzles, the
// pipeline's slot reuse and barriers -- not speed, and not asynchronous-copy timing.
#pragma once
#define TSM2_HOST_EMULATION 1

#include <barrier>
#include <cmath>
#include <cstring>

struct dim3_t { unsigned x = 0, y = 0, z = 0; };
inline thread_local dim3_t threadIdx, blockIdx;
inline dim3_t gridDim;
inline std::barrier<>* block_barrier = nullptr;

#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__
#define __align__(n)

alignas(64) inline unsigned char smem_raw[232 * 1024];

inline void __syncthreads() { block_barrier->arrive_and_wait(); }
template <typename T> inline T __ldg(const T* p) { return *p; }

inline float madd(float a, float b, float c) { return std::fma(a, b, c); }
inline double madd(double a, double b, double c) { return std::fma(a, b, c); }

template <int BYTES>
inline void cp_async(void* dst, const void* src, int src_bytes)
{
    if (src_bytes < 0 || src_bytes > BYTES) __builtin_trap();
    std::memcpy(dst, src, src_bytes);
    std::memset(static_cast<unsigned char*>(dst) + src_bytes, 0, BYTES - src_bytes);
}
inline void cp_async_commit() {}
template <int PENDING> inline void cp_async_wait() {}
