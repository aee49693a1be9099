// srs_wire.cuh: filling a resident SRS (resident.cuh) from the parameter file's bytes as they
// are. The host reads a window of the file into a page-locked staging slot; the slot is
// copied into the window's place in VRAM and decoded there, in place, from the .params
// encoding (uncompressed affine, big-endian coordinates; G2 as x.c1 ‖ x.c0 ‖ y.c1 ‖ y.c0) into
// the points' memory form (blst's affine: little-endian limbs in Montgomery form; G2 with c0
// before c1). Each point is checked as the host's decoder checks it, less the subgroup check:
// no flag bit set and every coordinate below the modulus (one comparison covers both: the
// flags are the top three bits, above the modulus), and on the curve, so never the point at
// infinity. The lowest index a window refuses is left for the host, which reads that point
// again to say why. Two slots take turns, so the host fills one while the other's copy and
// decoding run, on a stream of the filler's own.
// Included by cuzk.cu, in the order listed there (it uses resident.cuh's cuzk_srs).
#pragma once

// Templates over the field (always fp_t) only so that nvcc's host pass, where fp_t is blst's
// host type, does not compile their bodies.

// Reads the big-endian coordinate in words w[0..12) (as loaded from memory) into `out`'s
// limbs; false when it is not below the modulus.
template<class field_t>
__device__ __forceinline__ bool wire_coord(field_t& out, const uint32_t* w)
{
    for (int m = 0; m < 12; m++)
        out[11 - m] = __byte_perm(w[m], 0, 0x0123);
    for (int k = 11; k >= 0; k--) {
        const uint32_t p = device::BLS12_381_P[k];
        if (out[k] != p)
            return out[k] < p;
    }
    return false;
}

template<class field_t>
__device__ __forceinline__ void wire_store(uint32_t* o, const field_t& v)
{
    for (int k = 0; k < 12; k++)
        o[k] = v[k];
}

// G1: y² = x³ + 4. `pts` holds n points of 24 words, decoded in place.
template<class field_t>
__launch_bounds__(256)
__global__ void cuzk_wire_g1_kernel(uint32_t* pts, size_t n, unsigned long long* first_bad)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)blockDim.x * gridDim.x) {
        uint32_t* w = pts + i * 24;
        uint32_t raw[24];
        for (int k = 0; k < 24; k++)
            raw[k] = w[k];
        field_t x, y;
        bool ok = wire_coord(x, raw);
        ok &= wire_coord(y, raw + 12);
        if (!ok) {
            atomicMin(first_bad, (unsigned long long)i);
            continue;
        }
        x.to();
        y.to();
        field_t four = field_t::one() + field_t::one();
        four = four + four;
        field_t rhs = (x ^ 2) * x + four;
        field_t lhs = y ^ 2;
        if (!(lhs - rhs).is_zero()) {
            atomicMin(first_bad, (unsigned long long)i);
            continue;
        }
        wire_store(w, x);
        wire_store(w + 12, y);
    }
}

// G2: y² = x³ + 4(1 + u), in F_p² = F_p[u]/(u² + 1). `pts` holds n points of 48 words.
template<class field_t>
__launch_bounds__(256)
__global__ void cuzk_wire_g2_kernel(uint32_t* pts, size_t n, unsigned long long* first_bad)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)blockDim.x * gridDim.x) {
        uint32_t* w = pts + i * 48;
        uint32_t raw[48];
        for (int k = 0; k < 48; k++)
            raw[k] = w[k];
        field_t x0, x1, y0, y1;
        bool ok = wire_coord(x1, raw);
        ok &= wire_coord(x0, raw + 12);
        ok &= wire_coord(y1, raw + 24);
        ok &= wire_coord(y0, raw + 36);
        if (!ok) {
            atomicMin(first_bad, (unsigned long long)i);
            continue;
        }
        x0.to();
        x1.to();
        y0.to();
        y1.to();
        field_t four = field_t::one() + field_t::one();
        four = four + four;
        // x² = (x0² − x1², 2·x0·x1)
        field_t s0 = (x0 ^ 2) - (x1 ^ 2);
        field_t s1 = x0 * x1;
        s1 = s1 + s1;
        // x³ + b = (s0·x0 − s1·x1 + 4, s0·x1 + s1·x0 + 4)
        field_t r0 = s0 * x0 - s1 * x1 + four;
        field_t r1 = s0 * x1 + s1 * x0 + four;
        // y² = (y0² − y1², 2·y0·y1)
        field_t l0 = (y0 ^ 2) - (y1 ^ 2);
        field_t l1 = y0 * y1;
        l1 = l1 + l1;
        if (!(l0 - r0).is_zero() || !(l1 - r1).is_zero()) {
            atomicMin(first_bad, (unsigned long long)i);
            continue;
        }
        wire_store(w, x0);
        wire_store(w + 12, x1);
        wire_store(w + 24, y0);
        wire_store(w + 36, y1);
    }
}

// A resident SRS being filled from the file's bytes: the staging slots and their stream.
struct cuzk_srs_filler {
    static const int slots = 2;
    cuzk_srs* srs = nullptr;
    int dev = 0;
    size_t slot_bytes = 0;
    cudaStream_t stream = nullptr;
    uint8_t* host[slots] = {nullptr, nullptr};
    cudaEvent_t done[slots] = {nullptr, nullptr};
    // The lowest index each slot's last window refused (~0 for none): on the device, and
    // copied back to page-locked host words after the decoding.
    unsigned long long* dev_bad = nullptr;
    unsigned long long* host_bad = nullptr;

    ~cuzk_srs_filler()
    {
        (void)select_gpu(dev);
        if (stream) {
            (void)cudaStreamSynchronize(stream);
            (void)cudaStreamDestroy(stream);
        }
        for (int k = 0; k < slots; k++) {
            if (host[k]) (void)cudaFreeHost(host[k]);
            if (done[k]) (void)cudaEventDestroy(done[k]);
        }
        if (dev_bad) (void)cudaFree(dev_bad);
        if (host_bad) (void)cudaFreeHost(host_bad);
    }
};

static void srs_filler_init(cuzk_srs_filler* f)
{
    (void)select_gpu(f->dev);
    CUDA_OK(cudaStreamCreateWithFlags(&f->stream, cudaStreamNonBlocking));
    for (int k = 0; k < cuzk_srs_filler::slots; k++) {
        CUDA_OK(cudaHostAlloc((void**)&f->host[k], f->slot_bytes, cudaHostAllocDefault));
        CUDA_OK(cudaEventCreateWithFlags(&f->done[k], cudaEventDisableTiming));
    }
    CUDA_OK(cudaMalloc((void**)&f->dev_bad, cuzk_srs_filler::slots * sizeof(unsigned long long)));
    CUDA_OK(cudaHostAlloc((void**)&f->host_bad,
                          cuzk_srs_filler::slots * sizeof(unsigned long long),
                          cudaHostAllocDefault));
    for (int k = 0; k < cuzk_srs_filler::slots; k++)
        f->host_bad[k] = ~0ull;
}

// Slot `slot`'s n points (its first n·size bytes) to points start.. of `section` (0 h, 1 l,
// 2 a, 3 b_g1: G1; 4 b_g2: G2), copied and decoded on the filler's stream.
static void srs_filler_submit(cuzk_srs_filler* f, int slot, int section, size_t start, size_t n)
{
    cuzk_srs* srs = f->srs;
    void* base = nullptr;
    size_t count = 0;
    switch (section) {
    case 0: base = srs->h; count = srs->nh; break;
    case 1: base = srs->l; count = srs->nl; break;
    case 2: base = srs->a; count = srs->na; break;
    case 3: base = srs->b_g1; count = srs->nb1; break;
    case 4: base = srs->b_g2; count = srs->nb2; break;
    default: CUZK_REQUIRE(false, "no such SRS section");
    }
    const size_t size = section == 4 ? sizeof(affine2_t::mem_t) : sizeof(affine_t::mem_t);
    CUZK_REQUIRE(slot >= 0 && slot < cuzk_srs_filler::slots, "no such staging slot");
    CUZK_REQUIRE(start <= count && n <= count - start, "SRS window past its section");
    CUZK_REQUIRE(n * size <= f->slot_bytes, "SRS window larger than its staging slot");
    if (n == 0)
        return;
    const gpu_t& gpu = select_gpu(f->dev);
    uint8_t* dst = (uint8_t*)base + start * size;
    CUDA_OK(cudaMemsetAsync(f->dev_bad + slot, 0xff, sizeof(unsigned long long), f->stream));
    CUDA_OK(cudaMemcpyAsync(dst, f->host[slot], n * size, cudaMemcpyHostToDevice, f->stream));
    const uint32_t block = 256;
    size_t grid = (n + block - 1) / block;
    const size_t most = (size_t)gpu.sm_count() * 8;
    if (grid > most)
        grid = most;
    if (section == 4)
        cuzk_wire_g2_kernel<fp_t><<<grid, block, 0, f->stream>>>((uint32_t*)dst, n, f->dev_bad + slot);
    else
        cuzk_wire_g1_kernel<fp_t><<<grid, block, 0, f->stream>>>((uint32_t*)dst, n, f->dev_bad + slot);
    CUDA_OK(cudaGetLastError());
    CUDA_OK(cudaMemcpyAsync(f->host_bad + slot, f->dev_bad + slot, sizeof(unsigned long long),
                            cudaMemcpyDeviceToHost, f->stream));
    CUDA_OK(cudaEventRecord(f->done[slot], f->stream));
}
