// Runs one generated TSM2 kernel on the CPU through device.h: random operands with row pitches and
// offsets, one emulated launch, a long-double reference.  Prints "error <normwise relative error>
// unwritten <NaNs in C> outside <changed elements outside C>".  Built by tests/test_tsm2.py with
// -DKERNEL_FILE and -DKIND_R or -DKIND_L.
#include "device.h"
#include KERNEL_FILE

#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

int main(int argc, char** argv)
{
    if (argc != 13) { std::fprintf(stderr, "usage: m k n lda ldb ldc offset grid_x grid_y threads alpha beta\n"); return 2; }
    const long long m = atoll(argv[1]), k = atoll(argv[2]), n = atoll(argv[3]);
    const long long lda = atoll(argv[4]), ldb = atoll(argv[5]), ldc = atoll(argv[6]), offset = atoll(argv[7]);
    const unsigned gx = atoi(argv[8]), gy = atoi(argv[9]), threads = atoi(argv[10]);
    const scalar_t alpha = atof(argv[11]), beta = atof(argv[12]);

    std::mt19937_64 rng(42);
    std::normal_distribution<double> normal;
    const scalar_t sentinel = scalar_t(12345.0);
    std::vector<scalar_t> Ab(offset + m * lda + 8), Bb(offset + k * ldb + 8), Cb(offset + m * ldc + 8, sentinel);
    for (auto& x : Ab) x = scalar_t(normal(rng));
    for (auto& x : Bb) x = scalar_t(normal(rng));
    scalar_t *A = Ab.data() + offset, *B = Bb.data() + offset, *C = Cb.data() + offset;
    for (long long i = 0; i < m; ++i)
        for (long long j = 0; j < n; ++j) C[i * ldc + j] = beta != 0 ? scalar_t(normal(rng)) : scalar_t(NAN);
    const std::vector<scalar_t> C0b = Cb;
    const scalar_t* C0 = C0b.data() + offset;

#ifdef KIND_R
    emulator_launch_threads(tsm2r_kernel, dim3(gx, gy), dim3(threads), EMULATOR_SHARED_BYTES, A, B, C, m, k, lda, ldb,
                            ldc, alpha, beta);
#else
    emulator_launch_threads(tsm2l_kernel, dim3(gx, gy), dim3(threads), EMULATOR_SHARED_BYTES, A, B, C, m, lda, ldb,
                            ldc, alpha, beta);
#endif

    long double diff = 0, norm = 0;
    long long unwritten = 0, outside = 0;
    for (long long i = 0; i < m; ++i) {
        for (long long j = 0; j < n; ++j) {
            long double ref = 0, mag = 0;
            for (long long p = 0; p < k; ++p) {
                ref += (long double)A[i * lda + p] * B[p * ldb + j];
                mag += fabsl((long double)A[i * lda + p] * B[p * ldb + j]);
            }
            ref = alpha * ref + (beta != 0 ? (long double)beta * C0[i * ldc + j] : 0.0L);
            const scalar_t got = C[i * ldc + j];
            if (std::isnan(got)) { ++unwritten; continue; }
            diff += (got - ref) * (got - ref);
            const long double scale = fabsl(alpha) * mag + (beta != 0 ? fabsl(beta) * fabsl(C0[i * ldc + j]) : 0.0L);
            norm += scale * scale;
        }
    }
    for (size_t i = 0; i < Cb.size(); ++i) {
        const long long e = (long long)i - offset;
        const bool inside = e >= 0 && e / ldc < m && e % ldc < n;
        if (!inside && std::memcmp(&Cb[i], &C0b[i], sizeof(scalar_t)) != 0) ++outside;
    }
    std::printf("error %.3Le unwritten %lld outside %lld\n", norm > 0 ? sqrtl(diff / norm) : sqrtl(diff), unwritten, outside);
    return 0;
}
