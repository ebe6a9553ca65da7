extern "C" __global__ void bilinear_fill(
    unsigned char* __restrict__ dst, const unsigned long long pitch, const unsigned int pattern,
    const unsigned long long row_units, const unsigned long long rows, const int unit)
{
    const unsigned long long total = row_units * rows;
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long t = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; t < total; t += stride) {
        const unsigned long long r = t / row_units, u = t - r * row_units;
        unsigned char* const at = dst + r * pitch + u * unit;
        if (unit == 16) {
            *(uint4*)at = make_uint4(pattern, pattern, pattern, pattern);
        } else if (unit == 4) {
            *(unsigned int*)at = pattern;
        } else {
            *at = (unsigned char)(pattern >> (8 * (u % 4)));
        }
    }
}
