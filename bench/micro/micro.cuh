// micro.cuh: what the micro-benchmarks of this folder share: error checks, the device's SM
// count and maximum clock, a kernel timed by events after a warm-up, and the rows of an
// integer product as sppark writes them. Standalone: no project code.
#pragma once
#include <cstdint>
#include <cstdio>
#include <cuda_runtime.h>

#define CHECK(x)                                                                  \
    do {                                                                          \
        cudaError_t e = (x);                                                      \
        if (e != cudaSuccess) {                                                   \
            fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e));               \
            return 1;                                                             \
        }                                                                         \
    } while (0)

// Device 0's SM count and maximum clock (MHz), printed with its name.
static int device_clock(int* sms, double* mhz)
{
    cudaDeviceProp p;
    CHECK(cudaGetDeviceProperties(&p, 0));
    int khz = 0;
    CHECK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0));
    printf("%s, %d SMs, compute capability %d.%d, max clock %d MHz\n", p.name,
           p.multiProcessorCount, p.major, p.minor, khz / 1000);
    *sms = p.multiProcessorCount;
    *mhz = khz / 1e3;
    return 0;
}

// A rate kernel's run: `out` (one T a thread of `threads`, which keeps the kernel's work
// alive) allocated, launch(out, iters, seed) once with 16 iterations (a warm-up), then timed
// by events with `iters`: *ms.
template<class T, class F>
static int time_rate(size_t threads, uint32_t iters, F launch, float* ms)
{
    T* out;
    CHECK(cudaMalloc(&out, threads * sizeof(T)));
    launch(out, 16u, 1u);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    cudaEvent_t e0, e1;
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaEventCreate(&e1));
    CHECK(cudaEventRecord(e0));
    launch(out, iters, 7u);
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(e1));
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaEventElapsedTime(ms, e0, e1));
    CHECK(cudaEventDestroy(e0));
    CHECK(cudaEventDestroy(e1));
    CHECK(cudaFree(out));
    return 0;
}

// Two independent rows of a LIMBS-limb product by its even limbs with the carries, as
// sppark's products: x[r][2k], x[r][2k+1] += a[2k]·b (mad.lo.cc + madc.hi.cc pairs, which
// ptxas fuses into one IMAD.WIDE.U32(.X) each), the carry into x[r][LIMBS]: LIMBS wide
// products in all.
template<int LIMBS>
__device__ __forceinline__ void product_rows(uint32_t (&x)[2][LIMBS + 1],
                                             const uint32_t (&a)[LIMBS], uint32_t b)
{
#pragma unroll
    for (int r = 0; r < 2; r++) {
        asm volatile("mad.lo.cc.u32 %0, %1, %2, %0;" : "+r"(x[r][0]) : "r"(a[0]), "r"(b));
        asm volatile("madc.hi.cc.u32 %0, %1, %2, %0;" : "+r"(x[r][1]) : "r"(a[0]), "r"(b));
#pragma unroll
        for (int k = 1; k < LIMBS / 2; k++) {
            asm volatile("madc.lo.cc.u32 %0, %1, %2, %0;"
                         : "+r"(x[r][2 * k]) : "r"(a[2 * k]), "r"(b));
            asm volatile("madc.hi.cc.u32 %0, %1, %2, %0;"
                         : "+r"(x[r][2 * k + 1]) : "r"(a[2 * k]), "r"(b));
        }
        asm volatile("addc.u32 %0, %0, 0;" : "+r"(x[r][LIMBS]));
    }
}
