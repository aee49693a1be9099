// fp64_rate.cu: whether the FP64 pipe could carry part of a Montgomery product's multiplies
// beside the integer one (issue 30: the sorted MSM's accumulation keeps the IMAD pipe ~85 %
// busy, so a faster XYZZ addition needs another multiplier). Standalone: no project code.
//
// An exact 48×48-bit product from doubles (x, y < 2^48, integers): h = fma.rz(x, y, 2^100)
// rounds x·y + 2^100 down to a multiple of 2^48 (the ulp of [2^100, 2^101)), so
// d = h − 2^100 = ⌊x·y / 2^48⌋·2^48 exactly, and l = fma.rz(x, y, −d) = x·y mod 2^48 exactly
// (representable, so the rounding does not matter): three FP64 instructions for 2,304 bits²
// of product, where one IMAD.WIDE.U32 gives 1,024 (split48_bits: the same halves as fraction
// bits, for integer sums). `check` tests both against 64-bit integer products on random and
// extreme operands before anything is timed.
//
// Rates are per SM and per clock at the device's maximum clock, from the kernels' wall time
// (events). Build and run: bench/micro/README.md.
#include "micro.cuh"

constexpr int CHAINS = 8;   // independent chains a thread
constexpr int THREADS = 256;
constexpr double C100 = 0x1p100;
constexpr double TWO48 = 0x1p48;
constexpr double TWO52 = 0x1p52;
constexpr double C100_52 = C100 + TWO52;  // exact: 2^100 + 2^52 needs 49 bits
constexpr uint64_t MASK48 = (1ull << 48) - 1;

__device__ __forceinline__ double fma_rz(double a, double b, double c)
{
    double r;
    asm volatile("fma.rz.f64 %0, %1, %2, %3;" : "=d"(r) : "d"(a), "d"(b), "d"(c));
    return r;
}
__device__ __forceinline__ double fma_rn(double a, double b, double c)
{
    double r;
    asm volatile("fma.rn.f64 %0, %1, %2, %3;" : "=d"(r) : "d"(a), "d"(b), "d"(c));
    return r;
}
__device__ __forceinline__ double add_rn(double a, double b)
{
    double r;
    asm volatile("add.rn.f64 %0, %1, %2;" : "=d"(r) : "d"(a), "d"(b));
    return r;
}

// x·y = hi·2^48 + lo (x, y < 2^48 integers in doubles): *d = hi·2^48, *l = lo.
__device__ __forceinline__ void split48(double x, double y, double* d, double* l)
{
    double h = fma_rz(x, y, C100);
    *d = add_rn(h, -C100);
    *l = fma_rz(x, y, -*d);
}

// The same product as two doubles whose fraction bits are the halves: h as above (its
// fraction bits are hi: h = 2^100·(1 + hi·2^−52)) and l = fma.rz(x, y, 2^100 + 2^52 − h) =
// lo + 2^52 (its fraction bits are lo), for sums of the halves as integers; the bits of 2^100
// and of 2^52 are constants to take off once a sum is done.
__device__ __forceinline__ void split48_bits(double x, double y, double* h, double* l)
{
    *h = fma_rz(x, y, C100);
    *l = fma_rz(x, y, add_rn(C100_52, -*h));
}

// Both splits against 64-bit integer products: mismatches counted into *bad.
__global__ void check(const uint64_t* xs, const uint64_t* ys, uint32_t n, uint32_t* bad)
{
    const uint32_t i = threadIdx.x + blockIdx.x * blockDim.x;
    if (i >= n) return;
    const uint64_t x = xs[i], y = ys[i];
    const uint64_t lo64 = x * y, hi64 = __umul64hi(x, y);
    const uint64_t want_hi = (hi64 << 16) | (lo64 >> 48), want_lo = lo64 & MASK48;
    double d, l;
    split48((double)x, (double)y, &d, &l);
    const uint64_t got_hi = (uint64_t)(d / TWO48), got_lo = (uint64_t)l;
    double h, lb;
    split48_bits((double)x, (double)y, &h, &lb);
    const uint64_t bits_hi = __double_as_longlong(h) - __double_as_longlong(C100);
    const uint64_t bits_lo = __double_as_longlong(lb) - __double_as_longlong(TWO52);
    if (got_hi != want_hi || got_lo != want_lo || d != (double)got_hi * TWO48 ||
        bits_hi != want_hi || bits_lo != want_lo)
        atomicAdd(bad, 1u);
}

// The FP64 instructions one iteration of variant V retires, and its exact 48-bit products.
constexpr int fp64_per_iter(int v)
{
    return v == 0 ? CHAINS : v == 1 || v == 3 || v == 5 ? 3 * CHAINS : v == 2 ? 5 * CHAINS : 0;
}
constexpr int splits_per_iter(int v) { return v == 4 || v == 0 ? 0 : CHAINS; }
constexpr int wide_per_iter(int v) { return v == 3 || v == 4 ? CHAINS : 0; }  // 2 rows of 4

// Variant 0: fma.rn.f64 (DFMA). 1: split48 (two DFMA, one DADD). 2: split48 with both halves
// summed into column accumulators (two more DADD: the sums of a product's columns stay exact
// below 2^53, 32 terms of 2^48). 3: split48 beside as many IMAD.WIDE.U32(.X) of integer
// product rows, independent of it: do the two pipes add up? 4: the rows alone. 5: the split
// with both halves summed as 64-bit integers on the ALU (ptxas makes the two additions one
// three-input IADD3 + IADD3.X pair).
template<int V>
__global__ void rate(double* out, uint32_t iters, uint32_t seed)
{
    const uint32_t t = threadIdx.x + blockIdx.x * blockDim.x;
    const double y = (double)((seed ^ (t * 2654435761u)) | 1u) * 65521.0;  // < 2^48
    double x[CHAINS], acc[CHAINS];
    uint64_t isum[CHAINS];
    uint32_t w[2][CHAINS + 1], a[CHAINS];
    const uint32_t b = seed * 2246822519u + t;
#pragma unroll
    for (int j = 0; j < CHAINS; j++) {
        x[j] = (double)(t * 131u + j * 7919u + seed);
        acc[j] = 0;
        isum[j] = 0;
        w[0][j] = j + t;
        w[1][j] = j * 7 + t;
        a[j] = seed * (j + 3) + t;
    }
    w[0][CHAINS] = w[1][CHAINS] = 0;
    for (uint32_t i = 0; i < iters; i++) {
#pragma unroll
        for (int j = 0; j < CHAINS; j++) {
            if (V == 0) {
                x[j] = fma_rn(x[j], 0.999999, y);
            } else if (V == 5) {
                // split48_bits, the halves summed as 64-bit integers on the ALU
                double h, l;
                split48_bits(x[j], y, &h, &l);
                isum[j] += (uint64_t)__double_as_longlong(h);
                isum[j] += (uint64_t)__double_as_longlong(l);
                x[j] = l;
            } else if (V != 4) {
                double d, l;
                split48(x[j], y, &d, &l);
                if (V == 2) {
                    acc[j] = add_rn(acc[j], d);
                    acc[j] = add_rn(acc[j], l);
                }
                x[j] = l;  // the next product depends on this one (< 2^48)
            }
        }
        if (V == 3 || V == 4) {
            // two rows of an 8-limb product (micro.cuh), b a new limb each time
            product_rows<CHAINS>(w, a, b + i);
        }
    }
    double s = 0;
#pragma unroll
    for (int j = 0; j < CHAINS; j++)
        s += x[j] + acc[j] + (double)(w[0][j] ^ w[1][j]) + (double)isum[j];
    s += (double)(w[0][CHAINS] ^ w[1][CHAINS]);
    out[t] = s;
}

template<int V>
static int run(const char* name, int sms, double mhz, int per_sm, uint32_t iters)
{
    const int blocks = sms * per_sm;
    float ms = 0;
    auto launch = [&](double* out, uint32_t n, uint32_t seed) {
        rate<V><<<blocks, THREADS>>>(out, n, seed);
    };
    if (time_rate<double>((size_t)blocks * THREADS, iters, launch, &ms)) return 1;
    const double per_clk = (double)blocks * THREADS * iters / (ms * 1e-3) / (sms * mhz * 1e6);
    const double fp64 = per_clk * fp64_per_iter(V), splits = per_clk * splits_per_iter(V),
                 wide = per_clk * wide_per_iter(V);
    printf("%-34s %4d blocks of %d: %8.2f ms | FP64 %5.1f | 48x48 splits %5.1f | IMAD.WIDE %5.1f"
           " | bits^2 %6.0f a clock an SM\n",
           name, blocks, THREADS, ms, fp64, splits, wide, splits * 2304 + wide * 1024);
    return 0;
}

int main()
{
    int sms;
    double mhz;
    if (device_clock(&sms, &mhz)) return 1;

    // exactness first: random 48-bit operands (xorshift), then the extremes
    const uint32_t n = 1 << 22;
    uint64_t *xs, *ys;
    uint32_t* bad;
    CHECK(cudaMallocManaged(&xs, n * sizeof(uint64_t)));
    CHECK(cudaMallocManaged(&ys, n * sizeof(uint64_t)));
    CHECK(cudaMallocManaged(&bad, sizeof(uint32_t)));
    uint64_t s = 0x9e3779b97f4a7c15ull;
    auto next = [&] { s ^= s << 13; s ^= s >> 7; s ^= s << 17; return s; };
    const uint64_t edge[] = {0, 1, 2, MASK48, MASK48 - 1, 1ull << 47, (1ull << 47) - 1, 1ull << 24};
    for (uint32_t i = 0; i < n; i++) {
        xs[i] = next() & MASK48;
        ys[i] = next() & MASK48;
        if (i < 64) {
            xs[i] = edge[i % 8];
            ys[i] = edge[i / 8];
        }
    }
    *bad = 0;
    check<<<(n + 255) / 256, 256>>>(xs, ys, n, bad);
    CHECK(cudaDeviceSynchronize());
    const uint32_t wrong = *bad;
    CHECK(cudaFree(xs));
    CHECK(cudaFree(ys));
    CHECK(cudaFree(bad));
    printf("split48 and split48_bits exactness: %u of %u products wrong\n", wrong, n);
    if (wrong) return 1;

    const uint32_t iters = 1 << 14;
    int rc = 0;
    for (int per_sm : {4, 8}) {
        rc |= run<0>("DFMA (fma.rn.f64)", sms, mhz, per_sm, iters);
        rc |= run<1>("split48 (2 DFMA + DADD)", sms, mhz, per_sm, iters);
        rc |= run<2>("split48 + column sums (+2 DADD)", sms, mhz, per_sm, iters);
        rc |= run<3>("split48 beside IMAD.WIDE rows", sms, mhz, per_sm, iters);
        rc |= run<4>("IMAD.WIDE rows alone", sms, mhz, per_sm, iters);
        rc |= run<5>("split48 + int64 sums on the ALU", sms, mhz, per_sm, iters);
    }
    return rc;
}
