// imad_rate.cu: how many integer multiply-adds an SM retires a clock, by the instruction
// kinds a 381-bit Montgomery product is made of (issue 30: is the sorted MSM's accumulation
// at the multiplier's peak?). Standalone: no project code; each variant's multiply
// instructions an iteration read from its SASS (see bench/micro/README.md). Rates are per SM
// and per clock at the device's maximum clock, from the kernel's wall time (events):
// `mad.lo.u32` at 64 a clock an SM (compute capability 9.0's peak) shows the clock held.
// Build and run: bench/micro/README.md.
#include "micro.cuh"

constexpr int CHAINS = 8;   // independent accumulators a thread (variants 0 and 1)
constexpr int LIMBS = 12;   // a 381-bit row (variant 2)
constexpr int THREADS = 256;

// The multiply instructions one iteration of variant V retires (its SASS: README.md).
constexpr int per_iter(int v) { return v == 2 ? LIMBS : CHAINS; }

// Variant 0: mad.lo.u32 (IMAD). 1: mad.wide.u32 (IMAD.WIDE.U32). 2: two independent rows of
// a 12-limb product by its even limbs with the carries (mad.lo.cc + madc.hi.cc pairs, as
// sppark's products: ptxas fuses each pair into one IMAD.WIDE.U32(.X)), 6 a row.
template<int V>
__global__ void rate(uint32_t* out, uint32_t iters, uint32_t seed)
{
    const uint32_t t = threadIdx.x + blockIdx.x * blockDim.x;
    uint32_t b = seed ^ (t * 2654435761u);
    uint32_t a[LIMBS], x[2][LIMBS + 1];
#pragma unroll
    for (int j = 0; j < LIMBS; j++) {
        a[j] = seed * (j + 3) + t;
        x[0][j] = j + t;
        x[1][j] = j * 7 + t;
    }
    x[0][LIMBS] = x[1][LIMBS] = 0;
    for (uint32_t i = 0; i < iters; i++) {
        if (V == 0) {
#pragma unroll
            for (int j = 0; j < CHAINS; j++)
                asm volatile("mad.lo.u32 %0, %1, %2, %0;" : "+r"(x[0][j]) : "r"(a[j]), "r"(b));
        } else if (V == 1) {
#pragma unroll
            for (int j = 0; j < CHAINS; j++) {
                // (the multiplier is the chain's own high word: not loop-invariant)
                uint64_t r = ((uint64_t)x[1][j] << 32) | x[0][j];
                asm volatile("mad.wide.u32 %0, %1, %2, %0;" : "+l"(r) : "r"(x[1][j]), "r"(b));
                x[0][j] = (uint32_t)r;
                x[1][j] = (uint32_t)(r >> 32);
            }
        } else {
            // a product's rows, b a new limb each time (not loop-invariant)
            b += i;
            product_rows<LIMBS>(x, a, b);
        }
    }
    uint32_t s = b;
#pragma unroll
    for (int j = 0; j <= LIMBS; j++) s ^= x[0][j] + x[1][j];
    out[t] = s;
}

template<int V>
static int run(const char* name, int sms, double mhz, int per_sm, uint32_t iters)
{
    const int blocks = sms * per_sm;
    float ms = 0;
    auto launch = [&](uint32_t* out, uint32_t n, uint32_t seed) {
        rate<V><<<blocks, THREADS>>>(out, n, seed);
    };
    if (time_rate<uint32_t>((size_t)blocks * THREADS, iters, launch, &ms)) return 1;
    const double instr = (double)blocks * THREADS * iters * per_iter(V);
    printf("%-28s %5d blocks of %d: %8.2f ms, %5.1f a clock an SM\n", name, blocks, THREADS,
           ms, instr / (ms * 1e-3) / (sms * mhz * 1e6));
    return 0;
}

int main()
{
    int sms;
    double mhz;
    if (device_clock(&sms, &mhz)) return 1;
    const uint32_t iters = 1 << 16;
    int rc = 0;
    for (int per_sm : {4, 8}) {
        rc |= run<0>("IMAD (mad.lo.u32)", sms, mhz, per_sm, iters);
        rc |= run<1>("IMAD.WIDE.U32 (mad.wide)", sms, mhz, per_sm, iters);
        rc |= run<2>("IMAD.WIDE.U32(.X) (rows)", sms, mhz, per_sm, iters);
    }
    return rc;
}
