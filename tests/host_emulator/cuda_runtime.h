// A CPU stand-in for the parts of the CUDA runtime the generated host layer and the test driver
// use, so that g++ builds and runs them without a GPU: device memory is host memory, streams
// are ignored (everything runs in order, at once), and kernels launched through
// BILINEAR_LAUNCH run on the CPU (device.h): kernels with dynamic shared memory (the fused
// product kernels, which synchronise) with one thread per CUDA thread, the others (the
// element-wise stage kernels: grid-stride loops, no barriers) one thread after another.
// What it checks: the host layer's recursion, peeling, views, workspace and launch arguments,
// and the generated kernels themselves.
#pragma once
#include <cstddef>
#include <cstdlib>
#include <cstring>

#include "device.h"

typedef int cudaError_t;
const cudaError_t cudaSuccess = 0;
typedef void* cudaStream_t;
enum cudaDeviceAttr { cudaDevAttrMultiProcessorCount = 16 };
enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize = 8 };
enum cudaMemcpyKind { cudaMemcpyHostToDevice = 1, cudaMemcpyDeviceToHost = 2 };

inline int emulator_allocations = 0;  // live cudaMalloc/cudaMallocAsync blocks
inline size_t emulator_allocation_limit = size_t(-1);  // a cudaMallocAsync of more fails, as out of memory
const cudaError_t cudaErrorMemoryAllocation = 2;

inline cudaError_t cudaMalloc(void* pointer, size_t bytes) {
  // 256-aligned as CUDA's, and exactly as large as asked: a sanitizer build then sees any overrun
  if (posix_memalign(static_cast<void**>(pointer), 256, bytes ? bytes : 1) != 0) return cudaErrorMemoryAllocation;
  ++emulator_allocations;
  return cudaSuccess;
}
template <typename T> cudaError_t cudaMalloc(T** pointer, size_t bytes) { return cudaMalloc(static_cast<void*>(pointer), bytes); }
inline cudaError_t cudaMallocAsync(void** pointer, size_t bytes, cudaStream_t) {
  if (bytes > emulator_allocation_limit) return cudaErrorMemoryAllocation;
  return cudaMalloc(static_cast<void*>(pointer), bytes);
}
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
inline int emulator_memsets = 0;  // cudaMemset2DAsync calls (how the library zeroes C)
inline cudaError_t cudaMemset2DAsync(void* p, size_t pitch, int value, size_t width, size_t height, cudaStream_t) {
  ++emulator_memsets;
  for (size_t r = 0; r < height; ++r) std::memset(static_cast<char*>(p) + r * pitch, value, width);
  return cudaSuccess;
}
inline cudaError_t cudaMemsetAsync(void* p, int value, size_t bytes, cudaStream_t) {
  std::memset(p, value, bytes);
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

// kernel<<<grid, block, shared, stream>>>(args...): with threads and barriers where the kernel uses
// shared memory, one thread after another where it does not.
template <typename Kernel, typename... Args>
void emulator_launch_any(Kernel kernel, dim3 grid, dim3 block, size_t shared, Args... args) {
  if (shared)
    emulator_launch_threads(kernel, grid, block, shared, args...);
  else
    emulator_launch(kernel, grid, block, args...);
}
#define BILINEAR_LAUNCH(kernel, grid, block, shared, stream, ...) \
  emulator_launch_any(kernel, dim3(grid), dim3(block), size_t(shared), __VA_ARGS__)
// ... and a kernel whose threads meet at barriers (static shared memory): with threads.
#define BILINEAR_LAUNCH_BLOCKS(kernel, grid, block, stream, ...) \
  emulator_launch_threads(kernel, dim3(grid), dim3(block), size_t(0), __VA_ARGS__)
