// A CPU stand-in for the CUDA built-ins templates/ozaki.cu.j2 uses, so g++ compiles the rendered
// kernels into a shared library the tests drive through ctypes: blocks and threads run one after
// another, so only kernels without barriers (every pass but oz_amax_rows) are emulated.
// Built with -ffp-contract=off: a*b+c stays two roundings unless the source says fma.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <utility>

#define __global__
#define __device__
#define __forceinline__ inline
#define __constant__ static
#define __restrict__
#define __shared__ static
#define __launch_bounds__(...)
#define __align__(n) alignas(n)

struct oz_dim3 { unsigned x, y, z; };
static oz_dim3 blockIdx, threadIdx, blockDim, gridDim;

struct alignas(16) int4 { int x, y, z, w; };
inline int4 make_int4(int x, int y, int z, int w) { return int4{x, y, z, w}; }
using std::fabs; using std::fma; using std::frexp; using std::ldexp; using std::min; using std::rint;

inline double __longlong_as_double(long long v) { double d; std::memcpy(&d, &v, 8); return d; }
inline long long __double_as_longlong(double d) { long long v; std::memcpy(&v, &d, 8); return v; }
inline double __hiloint2double(int hi, int lo) {
  return __longlong_as_double((long long)(((unsigned long long)(unsigned)hi << 32) | (unsigned)lo));
}
inline int __double2loint(double d) { return (int)(unsigned)(unsigned long long)__double_as_longlong(d); }
// Byte n of the result is byte (s >> 4n) & 7 of the 8 bytes y:x (x lowest); the sign mode is not used.
inline unsigned __byte_perm(unsigned x, unsigned y, unsigned s) {
  const unsigned long long both = ((unsigned long long)y << 32) | x;
  unsigned result = 0;
  for (int n = 0; n < 4; ++n) result |= (unsigned)((both >> (8 * ((s >> (4 * n)) & 7))) & 0xff) << (8 * n);
  return result;
}
inline double __dmul_rn(double a, double b) { return a * b; }
inline double __dadd_rn(double a, double b) { return a + b; }
inline unsigned long long atomicMax(unsigned long long* p, unsigned long long v) {
  const unsigned long long old = *p;
  if (v > old) *p = v;
  return old;
}
// Only for oz_amax_rows to compile; it is not emulated (it needs its block's threads together).
template <typename T> T __shfl_xor_sync(unsigned, T v, int) { return v; }
inline void __syncthreads() {}

// Runs kernel over a (gx, gy) grid of bx threads; args[i] points to the value of parameter i
// (as cuLaunchKernel's kernelParams do) and sizes[i] is the byte size the caller passed, checked
// against the parameter's: a mismatch is an argument CuPy would pass wrongly on the GPU too.
template <typename... Params, std::size_t... I>
void oz_call(void (*kernel)(Params...), void** args, std::index_sequence<I...>) {
  kernel(*static_cast<std::remove_cv_t<std::remove_reference_t<Params>>*>(args[I])...);
}

template <typename... Params>
int oz_emulate(void (*kernel)(Params...), unsigned gx, unsigned gy, unsigned bx, void** args, const long long* sizes,
               int count) {
  const long long expected[] = {(long long)sizeof(Params)...};
  if (count != (int)sizeof...(Params)) return -1;
  for (int i = 0; i < count; ++i)
    if (expected[i] != sizes[i]) return i + 1;
  gridDim = {gx, gy, 1}, blockDim = {bx, 1, 1};
  for (unsigned y = 0; y < gy; ++y)
    for (unsigned x = 0; x < gx; ++x)
      for (unsigned t = 0; t < bx; ++t) {
        blockIdx = {x, y, 0}, threadIdx = {t, 0, 0};
        oz_call(kernel, args, std::index_sequence_for<Params...>{});
      }
  return 0;
}

#define OZ_ENTRY(name)                                                                                   \
  extern "C" int emulate_##name(unsigned gx, unsigned gy, unsigned bx, void** args, const long long* sizes, \
                                int count) {                                                             \
    return oz_emulate(name, gx, gy, bx, args, sizes, count);                                             \
  }
