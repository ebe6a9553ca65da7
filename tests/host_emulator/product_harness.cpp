// Runs one generated fused product kernel (templates/product_*.cu.j2) on the CPU through device.h.
// Built by tests/test_product_emulated.py with -DKERNEL_FILE="<source>" -DKERNEL=<name>.
// usage: harness <case file> <A file> <B file> <C file> <C out file>
// The case file: "m n k alpha nbatch shared", then per batch entry the (offset, leading dimension)
// of its A views, B views and C views, in elements of the raw A, B and C buffers (read from their
// files; each buffer starts 64-byte aligned).  The alignment flags are set as the runtime sets
// them, from the actual pointers.  Writes the C buffer after one launch of the kernel.
#include "device.h"
#include KERNEL_FILE

#include <cstdio>
#include <cstdlib>
#include <vector>

static std::vector<real> read_buffer(const char* path, size_t& count) {
  FILE* f = std::fopen(path, "rb");
  if (!f) std::exit(3);
  std::fseek(f, 0, SEEK_END);
  count = std::ftell(f) / sizeof(real);
  std::fseek(f, 0, SEEK_SET);
  std::vector<real> data(count + 64);
  if (std::fread(data.data(), sizeof(real), count, f) != count) std::exit(3);
  std::fclose(f);
  return data;
}

static real* aligned(std::vector<real>& data) {  // the first 64-byte boundary in data
  const auto at = reinterpret_cast<uintptr_t>(data.data());
  return data.data() + ((64 - at % 64) % 64) / sizeof(real);
}

// Every row starts on 16 bytes: what P.vec_ab and P.vec_c promise the kernel (runtime/views.py).
static bool rows_aligned(const real* p, int ld) {
  const int vec = 16 / sizeof(real);
  return reinterpret_cast<uintptr_t>(p) % 16 == 0 && ld % vec == 0;
}

int main(int argc, char** argv) {
  if (argc != 6) { std::fprintf(stderr, "usage: harness case A B C Cout\n"); return 2; }
  size_t na, nb, nc;
  std::vector<real> Ad = read_buffer(argv[2], na), Bd = read_buffer(argv[3], nb), Cd = read_buffer(argv[4], nc);
  std::vector<real> Ah(Ad.size()), Bh(Bd.size()), Ch(Cd.size());
  real *A = aligned(Ah), *B = aligned(Bh), *C = aligned(Ch);  // realign: the copies start on 64 bytes
  std::copy(Ad.begin(), Ad.begin() + na, A);
  std::copy(Bd.begin(), Bd.begin() + nb, B);
  std::copy(Cd.begin(), Cd.begin() + nc, C);

  FILE* f = std::fopen(argv[1], "r");
  if (!f) return 3;
  static Params P;  // up to 32 KB: not on a thread's stack
  std::memset(&P, 0, sizeof P);
  size_t shared;
  if (std::fscanf(f, "%d %d %d %lf %d %zu", &P.m, &P.n, &P.k, &P.alpha, &P.nbatch, &shared) != 6) return 3;
  const int n_a = sizeof P.a[0] / sizeof P.a[0][0], n_b = sizeof P.b[0] / sizeof P.b[0][0];
  const int n_c = sizeof P.c[0] / sizeof P.c[0][0];
  bool vec_a = true, vec_b = true, vec_c = true;
  for (int e = 0; e < P.nbatch; ++e) {
    long long offset;
    for (int s = 0; s < n_a; ++s) {
      if (std::fscanf(f, "%lld %d", &offset, &P.lda[e][s]) != 2) return 3;
      P.a[e][s] = A + offset;
      vec_a = vec_a && rows_aligned(P.a[e][s], P.lda[e][s]);
    }
    for (int s = 0; s < n_b; ++s) {
      if (std::fscanf(f, "%lld %d", &offset, &P.ldb[e][s]) != 2) return 3;
      P.b[e][s] = B + offset;
      vec_b = vec_b && rows_aligned(P.b[e][s], P.ldb[e][s]);
    }
    for (int s = 0; s < n_c; ++s) {
      if (std::fscanf(f, "%lld %d", &offset, &P.ldc[e][s]) != 2) return 3;
      P.c[e][s] = C + offset;
      vec_c = vec_c && rows_aligned(P.c[e][s], P.ldc[e][s]);
    }
  }
  std::fclose(f);
  // FP32 copies A an element at a time (it is transposed on the way); only B's pieces are vectors.
  P.vec_ab = (sizeof(real) == 8 ? vec_a : true) && vec_b;
  P.vec_c = vec_c;

  const unsigned tiles = unsigned((P.m + BM - 1) / BM) * unsigned((P.n + BN - 1) / BN);
  emulator_launch_threads(KERNEL, dim3(tiles, P.nbatch * PRODUCTS), dim3(THREADS), shared, P);

  FILE* out = std::fopen(argv[5], "wb");
  if (!out || std::fwrite(C, sizeof(real), nc, out) != nc) return 3;
  std::fclose(out);
  std::printf("launched %u x %d blocks of %d threads, vec_ab %d vec_c %d\n", tiles, P.nbatch * PRODUCTS, THREADS,
              P.vec_ab, P.vec_c);
  return 0;
}
