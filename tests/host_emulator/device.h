// The device side of the CPU emulator: what generated kernels (element-wise, fused product, TSM2)
// need to compile and run as C++ on the host.  Two ways to launch a kernel:
//  - emulator_launch: blocks and threads one after another.  Enough for kernels without barriers
//    (the element-wise stage kernels: grid-stride loops).
//  - emulator_launch_threads: one std::thread per CUDA thread of a block, a std::barrier for
//    __syncthreads (and one per warp for mma.sync), blocks one after another sharing one
//    dynamic shared-memory buffer that is filled with 0xff before each block (stale shared data
//    must not leak into a result).  For the fused product kernels.
// PTX becomes C++: cp.async is a synchronous copy with the same zero fill (the kernels' waits are
// then no-ops), mma.sync.m16n8kK.f64 exchanges the warp's fragments through memory and computes
// its 16x8 tile with fma in k order.  What this checks: indexing, tile edges, operand sums, the
// ring's slot reuse and barriers, epilogues and atomics -- not speed, and not copy timing.
#pragma once
#define BILINEAR_HOST_EMULATION 1

#include <algorithm>
#include <atomic>
#include <barrier>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __restrict__
#define __launch_bounds__(...)
#define __shared__
#define __align__(n)
#define __grid_constant__
#define __constant__

using std::fma;  // fma(float, float, float) is the float FMA, as on the device

struct dim3 {
  unsigned x, y, z;
  dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};
inline thread_local dim3 threadIdx, blockIdx, blockDim, gridDim;

struct alignas(16) double2 { double x, y; };
struct alignas(16) float4 { float x, y, z, w; };

inline int max(int a, int b) { return a > b ? a : b; }
inline int min(int a, int b) { return a < b ? a : b; }

// Dynamic shared memory: `extern __shared__ unsigned char smem_raw[]` inside an extern "C" kernel
// names this array, whatever namespace the kernel is in.
constexpr size_t EMULATOR_SHARED_BYTES = 232 * 1024;
extern "C" {
alignas(128) inline unsigned char smem_raw[EMULATOR_SHARED_BYTES];
}

inline size_t __cvta_generic_to_shared(const void* p) {
  const auto* at = static_cast<const unsigned char*>(p);
  if (at < smem_raw || at > smem_raw + EMULATOR_SHARED_BYTES) __builtin_trap();  // not shared memory
  return static_cast<size_t>(at - smem_raw);
}

template <int BYTES>
inline void cp_async(unsigned dst, const void* src, int src_bytes) {
  if (src_bytes < 0 || src_bytes > BYTES || dst + BYTES > EMULATOR_SHARED_BYTES || dst % BYTES) __builtin_trap();
  std::memcpy(smem_raw + dst, src, src_bytes);
  std::memset(smem_raw + dst + src_bytes, 0, BYTES - src_bytes);
}
inline void cp_commit() {}
template <int N> inline void cp_wait() {}

// The TSM2 kernels' spelling of the same (templates/tsm2_common.cuh.j2, under TSM2_HOST_EMULATION):
// cp_async takes the shared-memory pointer itself; madd is their fused multiply-add.
#define TSM2_HOST_EMULATION 1
template <int BYTES>
inline void cp_async(void* dst, const void* src, int src_bytes) {
  cp_async<BYTES>(static_cast<unsigned>(__cvta_generic_to_shared(dst)), src, src_bytes);
}
inline void cp_async_commit() {}
template <int PENDING> inline void cp_async_wait() {}
inline float madd(float a, float b, float c) { return std::fma(a, b, c); }
inline double madd(double a, double b, double c) { return std::fma(a, b, c); }
template <typename T> inline T __ldg(const T* p) { return *p; }

inline std::barrier<>* emulator_block_barrier = nullptr;
inline void __syncthreads() {
  if (!emulator_block_barrier) __builtin_trap();  // a barrier in a kernel launched without threads
  emulator_block_barrier->arrive_and_wait();
}

inline unsigned long long atomicMax(unsigned long long* p, unsigned long long v) {
  std::atomic_ref<unsigned long long> at(*p);
  unsigned long long old = at.load();
  while (old < v && !at.compare_exchange_weak(old, v)) {
  }
  return old;
}

// The ozaki passes' bit-level intrinsics (templates/ozaki.cu.j2), as the PTX manual states them.
struct alignas(16) int4 { int x, y, z, w; };
inline int4 make_int4(int x, int y, int z, int w) { return int4{x, y, z, w}; }
inline long long __double_as_longlong(double d) { long long i; std::memcpy(&i, &d, 8); return i; }
inline double __longlong_as_double(long long i) { double d; std::memcpy(&d, &i, 8); return d; }
inline int __double2loint(double d) { return int(uint32_t(uint64_t(__double_as_longlong(d)))); }
inline double __hiloint2double(int hi, int lo) {
  return __longlong_as_double((long long)((uint64_t(uint32_t(hi)) << 32) | uint32_t(lo)));
}
inline double __dadd_rn(double a, double b) { return a + b; }  // g++ contracts nothing without -mfma
inline double __dmul_rn(double a, double b) { return a * b; }
// Byte i of the result is byte s_i & 7 of the pair (y:x), s_i the selector's nibble i.
inline unsigned __byte_perm(unsigned x, unsigned y, unsigned s) {
  const uint64_t pool = (uint64_t(y) << 32) | x;
  unsigned out = 0;
  for (int i = 0; i < 4; ++i) out |= unsigned((pool >> (8 * ((s >> (4 * i)) & 7))) & 0xff) << (8 * i);
  return out;
}

inline float atomicAdd(float* p, float v) { return std::atomic_ref<float>(*p).fetch_add(v); }
inline double atomicAdd(double* p, double v) { return std::atomic_ref<double>(*p).fetch_add(v); }

// mma.sync.aligned.m16n8kK.row.col.f64: the warp's A (16 x K), B (K x 8) and C (16 x 8) tiles are
// spread over its lanes (g = lane / 4, t = lane % 4): a[2u] = A(g, t + 4u), a[2u+1] = A(g + 8, t + 4u),
// b[u] = B(t + 4u, g), d = C(g, 2t), C(g, 2t+1), C(g+8, 2t), C(g+8, 2t+1).  Each lane publishes its
// fragments, the warp meets, and each lane computes its own d.  Two scratch buffers alternate, so
// one meeting per mma suffices: a lane writes a buffer again only after the whole warp has met
// once more, that is, after every lane finished reading it.
struct EmulatorWarp {
  std::barrier<> meet;
  double a[2][32][8], b[2][32][4];
  unsigned long long lanes[2][32];  // __shfl_xor_sync's values, by the same alternation
  explicit EmulatorWarp(int lanes) : meet(lanes) {}
};
inline std::vector<std::unique_ptr<EmulatorWarp>>* emulator_warps = nullptr;
inline thread_local int emulator_mma_phase = 0;

template <int KA, int KB>
inline void emulator_mma(double (&d)[4], const double (&a)[KA], const double (&b)[KB]) {
  static_assert(KA == 2 * KB, "A holds twice B's fragment entries");
  constexpr int K = 4 * KB;
  const int lane = threadIdx.x % 32;
  EmulatorWarp& warp = *(*emulator_warps)[threadIdx.x / 32];
  const int phase = emulator_mma_phase;
  emulator_mma_phase ^= 1;
  std::copy(a, a + KA, warp.a[phase][lane]);
  std::copy(b, b + KB, warp.b[phase][lane]);
  warp.meet.arrive_and_wait();
  const int g = lane / 4, t = lane % 4;
  for (int e = 0; e < 4; ++e) {
    const int row = g + (e / 2) * 8, col = 2 * t + e % 2;
    double sum = d[e];
    for (int kk = 0; kk < K; ++kk) {
      const double x = warp.a[phase][(row % 8) * 4 + kk % 4][2 * (kk / 4) + row / 8];
      const double y = warp.b[phase][col * 4 + kk % 4][kk / 4];
      sum = std::fma(x, y, sum);
    }
    d[e] = sum;
  }
}
// __shfl_xor_sync of an 8-byte value: every lane publishes its own, the warp meets, each reads its partner's.
template <typename T>
inline T __shfl_xor_sync(unsigned, T v, int mask) {
  static_assert(sizeof(T) == 8, "the ozaki passes shuffle 8-byte values");
  const int lane = threadIdx.x % 32;
  EmulatorWarp& warp = *(*emulator_warps)[threadIdx.x / 32];
  const int phase = emulator_mma_phase;
  emulator_mma_phase ^= 1;
  std::memcpy(&warp.lanes[phase][lane], &v, 8);
  warp.meet.arrive_and_wait();
  T out;
  std::memcpy(&out, &warp.lanes[phase][lane ^ mask], 8);
  return out;
}

inline void mma(double (&d)[4], const double (&a)[8], const double (&b)[4]) { emulator_mma(d, a, b); }
inline void mma(double (&d)[4], const double (&a)[4], const double (&b)[2]) { emulator_mma(d, a, b); }
inline void mma(double (&d)[4], const double (&a)[2], const double (&b)[1]) { emulator_mma(d, a, b); }

// kernel<<<grid, block>>>(args...) without barriers: one block and one thread at a time.
template <typename Kernel, typename... Args>
void emulator_launch(Kernel kernel, dim3 grid, dim3 block, Args... args) {
  gridDim = grid, blockDim = block;
  for (unsigned by = 0; by < grid.y; ++by)
    for (unsigned bx = 0; bx < grid.x; ++bx)
      for (unsigned t = 0; t < block.x; ++t) {
        blockIdx = dim3(bx, by, 0), threadIdx = dim3(t, 0, 0);
        kernel(args...);
      }
}

// kernel<<<grid, block, shared>>>(args...) with barriers: the block's threads run at once.
template <typename Kernel, typename... Args>
void emulator_launch_threads(Kernel kernel, dim3 grid, dim3 block, size_t shared, Args... args) {
  if (shared > EMULATOR_SHARED_BYTES || block.y != 1 || block.z != 1) __builtin_trap();
  const unsigned threads = block.x;
  std::barrier<> barrier(threads);
  std::vector<std::unique_ptr<EmulatorWarp>> warps;
  for (unsigned w = 0; w * 32 < threads; ++w) warps.push_back(std::make_unique<EmulatorWarp>(std::min(32u, threads - 32 * w)));
  emulator_block_barrier = &barrier;
  emulator_warps = &warps;
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      gridDim = grid, blockDim = block, threadIdx = dim3(t, 0, 0);
      for (unsigned by = 0; by < grid.y; ++by)
        for (unsigned bx = 0; bx < grid.x; ++bx) {
          if (t == 0) std::memset(smem_raw, 0xff, shared);
          barrier.arrive_and_wait();
          blockIdx = dim3(bx, by, 0);
          kernel(args...);
          barrier.arrive_and_wait();  // the block is done before the next one's shared memory is reset
        }
    });
  for (auto& thread : pool) thread.join();
  emulator_block_barrier = nullptr;
  emulator_warps = nullptr;
}
