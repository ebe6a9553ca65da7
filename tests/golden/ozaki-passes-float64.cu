namespace strassen_float64_oz14 {
#define OZ_COUNT 14
#ifdef BILINEAR_HOST_EMULATION
#define OZ_SHARED static  // the CPU emulator runs a block's threads at once and one block at a time
#else
#define OZ_SHARED __shared__
#endif
typedef double oz_io_t;  // A, B and C's elements (float64 or float32); every pass computes in double
#define OZ_VEC (16 / (int)sizeof(oz_io_t))  // elements in one 16-byte load
struct __align__(16) oz_vec_t { oz_io_t v[OZ_VEC]; };
#define OZ_VALUES 16  // k values one thread scales and reduces: one 16-byte store per modulus
static_assert(OZ_VALUES == 16, "one int4 of residues per modulus");
#define OZ_BT_LANES 8  // threads per column of B in oz_residues_bt: OZ_BT_LANES·16 bytes of a row per store
#define OZ_BT_S1_LANES 32  // threads per column of B in oz_residues_bt_s1: OZ_BT_S1_LANES·4 bytes per store

__constant__ double oz_p[OZ_COUNT] = { 256.0, 255.0, 253.0, 251.0, 247.0, 241.0, 239.0, 233.0, 229.0, 227.0, 223.0, 217.0, 211.0, 199.0 };
__constant__ double oz_inv[OZ_COUNT] = { 0.00390625, 0.00392156862745098, 0.003952569169960474, 0.00398406374501992, 0.004048582995951417, 0.004149377593360996, 0.0041841004184100415, 0.004291845493562232, 0.004366812227074236, 0.004405286343612335, 0.004484304932735426, 0.004608294930875576, 0.004739336492890996, 0.005025125628140704 };
__constant__ int oz_half[OZ_COUNT] = { 128, 127, 126, 125, 123, 120, 119, 116, 114, 113, 111, 108, 105, 99 };
__constant__ double oz_c31[OZ_COUNT] = { 0.0, -127.0, -86.0, -64.0, -54.0, -113.0, 55.0, 4.0, -34.0, 88.0, -108.0, 2.0, -80.0, 23.0 };  // 2^31 mod p, symmetric
__constant__ double oz_y[OZ_COUNT] = { 37.0, 214.0, 183.0, 15.0, 175.0, 197.0, 95.0, 149.0, 210.0, 153.0, 206.0, 136.0, 172.0, 142.0 };
__constant__ double oz_q[OZ_COUNT][3] = {
    { 293119.0, 305457811191.0, 4436431277.0 },
    { 294268.0, 2445313596242.0, 1418727609088.0 },
    { 296594.0, 3472891955279.0, 4124398219520.0 },
    { 298958.0, 416675214069.0, 3526466434816.0 },
    { 303799.0, 2293037904443.0, 342909352704.0 },
    { 311362.0, 4375782261950.0, 625183849728.0 },
    { 313968.0, 2388194179533.0, 2893845308160.0 },
    { 322053.0, 2506319950394.0, 1024164111616.0 },
    { 327678.0, 4220972030165.0, 2290407254272.0 },
    { 330565.0, 4393783790685.0, 2659330830080.0 },
    { 336495.0, 1908712439650.0, 3200086373120.0 },
    { 345799.0, 2002022889697.0, 1444225938688.0 },
    { 355632.0, 2705110942694.0, 2298203045632.0 },
    { 377077.0, 3509154561460.0, 447721892608.0 }
};
__constant__ double oz_m[3] = { 75038481.0, 3430408976128.0, 1135726406912.0 };

// 2^e that takes the statistic (largest magnitude or norm bound, as bits) into [2^(bits-1), 2^bits);
// *bad for Inf/NaN.  A negative statistic is a norm bound past the doubles, times -2^-1024.
__device__ __forceinline__ int oz_exponent(unsigned long long amax_bits, int bits, bool* bad)
{
    const double amax = __longlong_as_double((long long)amax_bits);
    *bad = !(amax <= 1.7976931348623157e308);
    if (*bad || amax == 0.0) return 0;
    int ex;
    frexp(fabs(amax), &ex);  // |amax| = f·2^ex, f in [0.5, 1)
    return bits - (amax < 0.0 ? ex + 1024 : ex);
}

// The norm bound root·2^ex (root = ‖x/2^ex‖·NORM_SAFETY, below 2√k) as a statistic: past the
// doubles (entries within about √k of the largest) as -root·2^(ex-1024), which oz_exponent reads.
__device__ __forceinline__ double oz_norm_bound(double root, int ex)
{
    int root_ex;
    frexp(root, &root_ex);
    return ex + root_ex > 1024 ? -ldexp(root, ex - 1024) : ldexp(root, ex);
}

// Integer arithmetic in doubles without conversion instructions (they issue at a quarter of the
// FP64 rate): for |x| < 2^51, x + OZ_MAGIC rounds x to the nearest integer (ties to even, as
// rint) and holds it, two's complement, in the low word; minus OZ_MAGIC it is rint(x) as a double.
#define OZ_MAGIC 6755399441055744.0  // 1.5·2^52
#define OZ_TWO31 2147483648.0

// s1, s2 with x·s1·s2 == ldexp(x, e) for every double x with |ldexp(x, e)| < 2^63 (powers of two:
// exact products, the one rounding of a subnormal result as ldexp's), computed once per row.
__device__ __forceinline__ void oz_scales(int e, double* s1, double* s2)
{
    const bool big = e > 1023;  // 2^e beyond the doubles: a tiny row (e ≤ 62 + 1074)
    *s1 = ldexp(1.0, big ? e - 600 : e);
    *s2 = big ? 0x1p600 : 1.0;
}

// x = rint(y) for |y| < 2^63 as h·2^31 + l, integers |h| ≤ 2^32, |l| ≤ 2^30 (doubles): h is y·2^-31
// rounded, y - h·2^31 is exact (|·| ≤ 2^30 + ulp), and rint(y) = h·2^31 + rint(y - h·2^31).
__device__ __forceinline__ void oz_split(double y, double* h, double* l)
{
    const double hh = fma(y, 0x1p-31, OZ_MAGIC) - OZ_MAGIC;
    *h = hh;
    *l = (fma(-OZ_TWO31, hh, y) + OZ_MAGIC) - OZ_MAGIC;
}

// The symmetric residue of x = h·2^31 + l modulo oz_p[j], in [-half, p - half - 1].  p_0 = 256
// (the only even modulus; tested on j, which the unrolled loops make a literal) divides 2^31: the
// low byte of l.  Odd p: s = h·(2^31 mod p) + l ≡ x is exact (|s| < 2^40), and s/p is at least
// 1/(2p) from a half-integer while s·inv is within 2^-12 of s/p, so q below is rint(s/p) and
// s - p·q lies in [-(p-1)/2, (p-1)/2], exactly.
__device__ __forceinline__ int oz_residue(double h, double l, int j)
{
    if (j == 0) return (int)(signed char)__double2loint(l + OZ_MAGIC);  // p_0 = 256 (a literal test: folds)
    const double p = oz_p[j];
    const double s = fma(h, oz_c31[j], l);
    const double q = fma(s, oz_inv[j], OZ_MAGIC) - OZ_MAGIC;
    return __double2loint(fma(-p, q, s) + OZ_MAGIC);
}

// Four residues' low bytes as one word (r0 lowest).
__device__ __forceinline__ int oz_pack(int r0, int r1, int r2, int r3)
{
    return (int)__byte_perm(__byte_perm(r0, r1, 0x0040), __byte_perm(r2, r3, 0x0040), 0x5410);
}

// The residues of OZ_VALUES (16) integers h·2^31 + l for every modulus: one 16-byte store per
// modulus, planes `stride` bytes apart.  The moduli loop is unrolled: constants are immediates.
__device__ __forceinline__ void oz_store_residues(const double* h, const double* l, signed char* out, long long stride)
{
#pragma unroll
    for (int j = 0; j < OZ_COUNT; ++j) {
        int words[4];
#pragma unroll
        for (int w = 0; w < 4; ++w)
            words[w] = oz_pack(oz_residue(h[4 * w], l[4 * w], j), oz_residue(h[4 * w + 1], l[4 * w + 1], j),
                               oz_residue(h[4 * w + 2], l[4 * w + 2], j), oz_residue(h[4 * w + 3], l[4 * w + 3], j));
        *reinterpret_cast<int4*>(out + (long long)j * stride) = make_int4(words[0], words[1], words[2], words[3]);
    }
}

// What each row of A is scaled by (as bits): its largest magnitude, or with `norm` an upper bound
// of its 2-norm, amax·‖a/amax‖·NORM_SAFETY with amax rounded up to a power of two (no overflow or
// underflow in the squares; past the doubles, as oz_norm_bound writes it); Inf/NaN rows keep their
// amax.  One block per row, a fixed reduction order, so the result is the same on every run.
__device__ __forceinline__ unsigned long long oz_block_max(unsigned long long v, unsigned long long* partial)
{
    for (int offset = 16; offset > 0; offset /= 2) {
        const unsigned long long other = __shfl_xor_sync(0xffffffffu, v, offset);
        v = other > v ? other : v;
    }
    if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = v;
    __syncthreads();
    v = partial[0];
    for (int w = 1; w < (int)(blockDim.x / 32); ++w) v = partial[w] > v ? partial[w] : v;
    __syncthreads();  // partial is read by every thread before anyone reuses it
    return v;
}

__device__ __forceinline__ double oz_block_sum(double v, double* partial)
{
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
    if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = v;
    __syncthreads();
    v = partial[0];
    for (int w = 1; w < (int)(blockDim.x / 32); ++w) v += partial[w];
    return v;
}

extern "C" __global__ void strassen_float64_oz14_oz_stat_rows(const oz_io_t* __restrict__ a, long long lda, int cols, int norm,
                                        unsigned long long* __restrict__ stat)
{
    OZ_SHARED unsigned long long max_partial[32];
    OZ_SHARED double sum_partial[32];
    const oz_io_t* row = a + (long long)blockIdx.x * lda;
    unsigned long long best = 0;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        const unsigned long long v = (unsigned long long)__double_as_longlong(fabs((double)row[c]));
        best = v > best ? v : best;
    }
    best = oz_block_max(best, max_partial);
    const double amax = __longlong_as_double((long long)best);
    double result = amax;
    if (norm && amax <= 1.7976931348623157e308) {
        int ex;
        frexp(amax, &ex);
        double sum = 0.0;
        for (int c = threadIdx.x; c < cols; c += blockDim.x) {
            const double v = ldexp((double)row[c], -ex);
            sum = fma(v, v, sum);
        }
        result = oz_norm_bound(sqrt(oz_block_sum(sum, sum_partial)) * 1.0000000009313226, ex);
    }
    if (threadIdx.x == 0) stat[blockIdx.x] = (unsigned long long)__double_as_longlong(result);
}

// Largest |b| of each column (amax zeroed first): thread per column over a strip of rows,
// reading whole rows of the strip together (coalesced), one atomicMax per thread.
extern "C" __global__ void strassen_float64_oz14_oz_amax_cols(const oz_io_t* __restrict__ b, long long ldb, int rows, int cols,
                                        int strip, unsigned long long* __restrict__ amax)
{
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= cols) return;
    const int first = blockIdx.y * strip, last = min(rows, first + strip);
    unsigned long long best = 0;
    for (int r = first; r < last; ++r) {
        const unsigned long long v = (unsigned long long)__double_as_longlong(fabs((double)b[(long long)r * ldb + c]));
        best = v > best ? v : best;
    }
    atomicMax(amax + c, best);
}

// With norm scaling, after oz_amax_cols: per strip of rows, Σ (b/amax_j)² for each column
// (amax_j rounded up to a power of two) into partial[strip][column]; then oz_norm_cols adds the
// strips in order (the same result on every run) and turns stat into the norm bound.
extern "C" __global__ void strassen_float64_oz14_oz_sumsq_cols(const oz_io_t* __restrict__ b, long long ldb, int rows, int cols, int strip,
                                         const unsigned long long* __restrict__ stat, double* __restrict__ partial)
{
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= cols) return;
    int ex;
    frexp(__longlong_as_double((long long)stat[c]), &ex);
    const int first = blockIdx.y * strip, last = min(rows, first + strip);
    double sum = 0.0;
    for (int r = first; r < last; ++r) {
        const double v = ldexp((double)b[(long long)r * ldb + c], -ex);
        sum = fma(v, v, sum);
    }
    partial[(long long)blockIdx.y * cols + c] = sum;
}

extern "C" __global__ void strassen_float64_oz14_oz_norm_cols(const double* __restrict__ partial, int strips, int cols,
                                        unsigned long long* __restrict__ stat)
{
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= cols) return;
    const double amax = __longlong_as_double((long long)stat[c]);
    if (!(amax <= 1.7976931348623157e308)) return;  // Inf or NaN: stays
    double sum = 0.0;
    for (int s = 0; s < strips; ++s) sum += partial[(long long)s * cols + c];
    int ex;
    frexp(amax, &ex);
    stat[c] = (unsigned long long)__double_as_longlong(oz_norm_bound(sqrt(sum) * 1.0000000009313226, ex));
}

// Residues of A' = rint(A·2^ea) for every modulus: out[j] is rows_pad × kp, row-major (K-contiguous),
// zero beyond A's rows and columns.  One thread: OZ_VALUES consecutive k of a row, read with 16-byte
// loads where the row is aligned, one read of A for every modulus.
extern "C" __global__ void __launch_bounds__(256) strassen_float64_oz14_oz_residues_a(
    const oz_io_t* __restrict__ a, long long lda, int rows, int cols, int rows_pad, int kp,
    const unsigned long long* __restrict__ amax, int bits, signed char* __restrict__ out)
{
    const long long per_row = kp / OZ_VALUES, items = (long long)rows_pad * per_row;
    const long long stride = (long long)rows_pad * kp;
    for (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t < items; t += (long long)gridDim.x * blockDim.x) {
        const long long i = t / per_row;
        const int k0 = (int)(t - i * per_row) * OZ_VALUES;
        bool bad = true;
        const int e = i < rows ? oz_exponent(amax[i], bits, &bad) : 0;
        double s1, s2, x[OZ_VALUES], h[OZ_VALUES], l[OZ_VALUES];
        oz_scales(e, &s1, &s2);
        const oz_io_t* row = a + (bad ? 0 : i * lda + k0);
        if (!bad && k0 + OZ_VALUES <= cols && ((unsigned long long)row & 15) == 0) {
#pragma unroll
            for (int v = 0; v < OZ_VALUES / OZ_VEC; ++v) {
                const oz_vec_t part = reinterpret_cast<const oz_vec_t*>(row)[v];
#pragma unroll
                for (int u = 0; u < OZ_VEC; ++u) x[OZ_VEC * v + u] = (double)part.v[u];
            }
        } else {
#pragma unroll
            for (int v = 0; v < OZ_VALUES; ++v) x[v] = (!bad && k0 + v < cols) ? (double)row[v] : 0.0;
        }
#pragma unroll
        for (int v = 0; v < OZ_VALUES; ++v) oz_split(x[v] * s1 * s2, &h[v], &l[v]);
        oz_store_residues(h, l, out + i * kp + k0, stride);
    }
}

// Residues of B' = rint(B·2^eb), transposed: out[j] is cols_pad × kp, row-major (so both
// int8 operands are K-contiguous, cuBLAS's "TN" layout), zero beyond B.  A thread takes
// OZ_VALUES consecutive k of one column; OZ_BT_LANES neighbouring threads take the next groups
// of k of the same column, so their 16-byte stores make whole lines of a row (one thread per
// column left every sector half written and ran 9x slower than the copy model; four per column
// wrote 64-byte runs and ran at 2x the model), and each load instruction reads whole 32-byte runs
// of OZ_BT_LANES rows of B.
extern "C" __global__ void __launch_bounds__(256) strassen_float64_oz14_oz_residues_bt(
    const oz_io_t* __restrict__ b, long long ldb, int rows, int cols, int cols_pad, int kp,
    const unsigned long long* __restrict__ amax, int bits, signed char* __restrict__ out)
{
    const long long groups = kp / OZ_VALUES, runs = (groups + OZ_BT_LANES - 1) / OZ_BT_LANES;
    const long long items = (long long)cols_pad * runs * OZ_BT_LANES;
    const long long stride = (long long)cols_pad * kp;
    for (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t < items; t += (long long)gridDim.x * blockDim.x) {
        const long long rest = t / OZ_BT_LANES, run = rest / cols_pad, c = rest - run * cols_pad;
        const long long group = run * OZ_BT_LANES + t % OZ_BT_LANES;
        if (group >= groups) continue;
        const int k0 = (int)group * OZ_VALUES;
        bool bad = true;
        const int e = c < cols ? oz_exponent(amax[c], bits, &bad) : 0;
        double s1, s2, h[OZ_VALUES], l[OZ_VALUES];
        oz_scales(e, &s1, &s2);
#pragma unroll
        for (int v = 0; v < OZ_VALUES; ++v) {
            const double x = (!bad && k0 + v < rows) ? (double)b[(long long)(k0 + v) * ldb + c] : 0.0;
            oz_split(x * s1 * s2, &h[v], &l[v]);
        }
        oz_store_residues(h, l, out + c * kp + k0, stride);
    }
}

// An int32 as a double without a conversion instruction: 2^52 + 2^31 + c, less 2^52 + 2^31.
__device__ __forceinline__ double oz_int_to_double(int c)
{
    return __hiloint2double(0x43300000, c ^ (int)0x80000000) - 4503601774854144.0;
}

// One modulus of the CRT: c ≡ A'B' (mod p_j), an integer-valued double with |c| < 2^34;
// w = c·y_j mod p_j (exact, canonical), S += w/p_j, T_t += w·Q_jt (exact: integers below 2^53).
// t = c·y_j is exact (|t| < 2^42); for odd p, t/p is at least 1/(2p) from a half-integer and
// t·inv within 2^-10 of t/p, so w = t - p·rint(t/p) lies in [-(p-1)/2, (p-1)/2]; for p = 256,
// inv = 2^-8 is exact and a tie gives +128, which is -128.
__device__ __forceinline__ void oz_accumulate(double c, int j, double* acc)
{
    const double pj = oz_p[j], inv = oz_inv[j];
    const double t = c * oz_y[j];
    double w = fma(-pj, fma(t, inv, OZ_MAGIC) - OZ_MAGIC, t);
    if (j == 0 && w >= 128.0) w -= 256.0;  // p_0 = 256
    acc[0] = fma(w, inv, acc[0]);
    acc[1] = fma(w, oz_q[j][0], acc[1]);
    acc[2] = fma(w, oz_q[j][1], acc[2]);
    acc[3] = fma(w, oz_q[j][2], acc[3]);
}

// r = rint(S) times M off, the limbs joined (two roundings), unscaled by 2^(shift - ea - eb),
// and C = alpha·value + beta·C written (beta == 0: C is not read).
__device__ __forceinline__ void oz_write(const double* acc, unsigned long long stat_a, unsigned long long stat_b,
                                         int bits_a, int bits_b, oz_io_t* target, double alpha, double beta)
{
    const double r = rint(acc[0]);
    const double t0 = fma(-r, oz_m[0], acc[1]), t1 = fma(-r, oz_m[1], acc[2]), t2 = fma(-r, oz_m[2], acc[3]);
    double value = fma(fma(t0, 4398046511104.0, t1), 4398046511104.0, t2);
    bool bad_a, bad_b;
    const int ea = oz_exponent(stat_a, bits_a, &bad_a), eb = oz_exponent(stat_b, bits_b, &bad_b);
    value = (bad_a || bad_b) ? __longlong_as_double(0x7ff8000000000000LL) : ldexp(value, 0 - ea - eb);
    // Separate roundings (no contraction), as numpy computes alpha·value + beta·C, in double; then
    // one rounding to C's type (none for float64).
    const double old = beta == 0.0 ? 0.0 : (double)*target;
    *target = (oz_io_t)(beta == 0.0 ? __dmul_rn(alpha, value) : __dadd_rn(__dmul_rn(alpha, value), __dmul_rn(beta, old)));
}

// CRT over every modulus of the int32 products (product[j] is rows_pad × ldp, ldp a multiple of 4),
// then C written: one thread takes 4 consecutive columns of a row, one 16-byte load per modulus (all
// of them issued together: the moduli loop is unrolled).
extern "C" __global__ void __launch_bounds__(256) strassen_float64_oz14_oz_reconstruct(
    const int* __restrict__ product, int rows_pad, int ldp, int rows, int cols,
    const unsigned long long* __restrict__ amax_a, const unsigned long long* __restrict__ amax_b, int bits_a,
    int bits_b, oz_io_t* __restrict__ c_out, long long ldc, double alpha, double beta)
{
    const long long quads = ldp / 4, items = (long long)rows * quads, plane = (long long)rows_pad * ldp;
    for (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t < items; t += (long long)gridDim.x * blockDim.x) {
        const long long i = t / quads;
        const int c0 = 4 * (int)(t - i * quads), width = min(4, cols - c0);
        if (width <= 0) continue;  // padding columns
        double sums[4][4] = {};
        const int* p = product + i * ldp + c0;
#pragma unroll
        for (int j = 0; j < OZ_COUNT; ++j) {
            const int4 v = *reinterpret_cast<const int4*>(p + (long long)j * plane);
            oz_accumulate(oz_int_to_double(v.x), j, sums[0]);
            oz_accumulate(oz_int_to_double(v.y), j, sums[1]);
            oz_accumulate(oz_int_to_double(v.z), j, sums[2]);
            oz_accumulate(oz_int_to_double(v.w), j, sums[3]);
        }
        const unsigned long long stat_a = amax_a[i];
        for (int u = 0; u < width; ++u)
            oz_write(sums[u], stat_a, amax_b[c0 + u], bits_a, bits_b, c_out + i * ldc + c0 + u, alpha, beta);
    }
}

#undef OZ_COUNT
#undef OZ_SHARED
#undef OZ_VEC
#undef OZ_VALUES
#undef OZ_BT_LANES
#undef OZ_BT_S1_LANES
#undef OZ_MAGIC
#undef OZ_TWO31
}  // namespace strassen_float64_oz14
