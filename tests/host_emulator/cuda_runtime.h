// A CPU stand-in for the parts of the CUDA runtime the generated host layer and the test driver
// use, so that g++ builds and runs them without a GPU: device memory is host memory, streams
// are ignored (everything runs in order, at once), and kernels launched through
// BILINEAR_LAUNCH run their blocks and threads one after another.  That suffices for the
// element-wise stage kernels (grid-stride loops, no barriers); the fused product kernels
// (inline PTX) are not emulated, so only library-leaf artifacts build here.
// What it checks: the host layer's recursion, peeling, views, workspace and launch arguments.
#pragma once
#include <cstddef>
#include <cstdlib>
#include <cstring>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __restrict__
#define __launch_bounds__(...)

typedef int cudaError_t;
const cudaError_t cudaSuccess = 0;
typedef void* cudaStream_t;
enum cudaDeviceAttr { cudaDevAttrMultiProcessorCount = 16 };
enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize = 8 };
enum cudaMemcpyKind { cudaMemcpyHostToDevice = 1, cudaMemcpyDeviceToHost = 2 };

struct dim3 {
  unsigned x, y, z;
  dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};
inline thread_local dim3 threadIdx, blockIdx, blockDim, gridDim;

struct double2 { double x, y; };
struct float4 { float x, y, z, w; };

inline int emulator_allocations = 0;  // live cudaMalloc/cudaMallocAsync blocks

inline cudaError_t cudaMalloc(void* pointer, size_t bytes) {
  *static_cast<void**>(pointer) = std::malloc(bytes ? bytes : 1);
  ++emulator_allocations;
  return cudaSuccess;
}
template <typename T> cudaError_t cudaMalloc(T** pointer, size_t bytes) { return cudaMalloc(static_cast<void*>(pointer), bytes); }
inline cudaError_t cudaMallocAsync(void** pointer, size_t bytes, cudaStream_t) { return cudaMalloc(static_cast<void*>(pointer), bytes); }
inline cudaError_t cudaFree(void* pointer) {
  std::free(pointer);
  --emulator_allocations;
  return cudaSuccess;
}
inline cudaError_t cudaFreeAsync(void* pointer, cudaStream_t) { return cudaFree(pointer); }
inline cudaError_t cudaMemcpy(void* to, const void* from, size_t bytes, cudaMemcpyKind) {
  std::memcpy(to, from, bytes);
  return cudaSuccess;
}
inline cudaError_t cudaMemset2DAsync(void* p, size_t pitch, int value, size_t width, size_t height, cudaStream_t) {
  for (size_t r = 0; r < height; ++r) std::memset(static_cast<char*>(p) + r * pitch, value, width);
  return cudaSuccess;
}
inline cudaError_t cudaGetDevice(int* device) { *device = 0; return cudaSuccess; }
inline cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr, int) { *value = 2; return cudaSuccess; }
template <typename F> cudaError_t cudaFuncSetAttribute(F, cudaFuncAttribute, int) { return cudaSuccess; }
inline cudaError_t cudaGetLastError() { return cudaSuccess; }
inline cudaError_t cudaStreamCreate(cudaStream_t* stream) { *stream = nullptr; return cudaSuccess; }
inline cudaError_t cudaStreamDestroy(cudaStream_t) { return cudaSuccess; }
inline cudaError_t cudaStreamSynchronize(cudaStream_t) { return cudaSuccess; }
inline const char* cudaGetErrorString(cudaError_t) { return "emulated error"; }

// kernel<<<grid, block, shared, stream>>>(args...), one block and one thread at a time.
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
#define BILINEAR_LAUNCH(kernel, grid, block, shared, stream, ...) emulator_launch(kernel, dim3(grid), dim3(block), __VA_ARGS__)
