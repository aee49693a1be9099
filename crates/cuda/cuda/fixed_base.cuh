// Fixed-base multiplication for the insecure setup (`cuzk gen params`): out[i] = s_i·G for a
// generator G of G1 or G2, written as a `.params` file holds points (uncompressed affine,
// big-endian coordinates; G2 as x.c1 ‖ x.c0 ‖ y.c1 ‖ y.c0). The host supplies G's table of
// signed w-bit windows, table[k·2^(w−1) + d − 1] = d·2^(w·k)·G (affine, Montgomery form, as
// blstrs holds points); a scalar's digits are recoded here exactly as the CPU's fixed-base
// method recodes them, one mixed addition per non-zero digit into xyzz coordinates, then one
// inversion to affine.
//
// G1 runs a thread per point. G2 runs a pair of lanes per point: sppark's fp2_t keeps c0 in
// the even lane and c1 in the odd one, and both lanes of a pair follow the same branches (the
// same scalar, fp2-wide zero tests). Every thread of a block runs the same number of loop
// trips (a lane past the end works on a zero scalar and writes nothing), so the warp-wide
// shuffles of sppark's inversion find all 32 lanes.

template<class field_t>
struct fb_acc {
    field_t X, Y, ZZ, ZZZ;  // x = X/ZZ, y = Y/ZZZ
    bool inf;
};

// acc += (x2, y2), an affine point (the xyzz mixed addition, with the doubling and the
// point-at-infinity cases).
template<class field_t>
__device__ __forceinline__ void fb_add(fb_acc<field_t>& p, const field_t& x2, const field_t& y2)
{
    if (p.inf) {
        p.X = x2;
        p.Y = y2;
        p.ZZ = field_t::one();
        p.ZZZ = p.ZZ;
        p.inf = false;
        return;
    }
    field_t P = x2 * p.ZZ;      // U2 = x2·ZZ1
    P -= p.X;                   // P = U2 − X1
    field_t R = y2 * p.ZZZ;     // S2 = y2·ZZZ1
    R -= p.Y;                   // R = S2 − Y1
    if (!P.is_zero()) {
        field_t PP = P^2;
        field_t PPP = P * PP;
        field_t Q = p.X * PP;
        p.ZZ *= PP;
        p.ZZZ *= PPP;
        p.X = R^2;
        p.X -= PPP;
        p.X -= Q;
        p.X -= Q;               // X3 = R² − PPP − 2Q
        Q -= p.X;
        Q *= R;
        p.Y *= PPP;
        p.Y = Q - p.Y;          // Y3 = R·(Q − X3) − Y1·PPP
    } else if (R.is_zero()) {   // the same point: double (x2, y2)
        field_t U = y2 + y2;
        p.ZZ = U^2;             // V
        p.ZZZ = p.ZZ * U;       // W
        field_t S = x2 * p.ZZ;
        field_t M = x2^2;
        M = M + M + M;
        p.X = M^2;
        p.X -= S;
        p.X -= S;               // X3 = M² − 2S
        p.Y = p.ZZZ * y2;
        S -= p.X;
        S *= M;
        p.Y = S - p.Y;          // Y3 = M·(S − X3) − W·y2
    } else {                    // the opposite point
        p.inf = true;
    }
}

// The big-endian bytes of `v` (already out of Montgomery form), 4 at a time.
template<class field_t>
__device__ __forceinline__ void fb_store_be(uint8_t* out, const field_t& v)
{
    const size_t words = sizeof(fp_mont) / 4;
    uint32_t* o = reinterpret_cast<uint32_t*>(out);
    for (size_t m = 0; m < words; m++)
        o[m] = __byte_perm(v[words - 1 - m], 0, 0x0123);
}

template<class field_t>
struct fb_table_entry {
    typename field_t::mem_t X, Y;
};

// lanes: 1 (G1) or 2 (G2). `out` holds `96·lanes` bytes per point.
template<class field_t, int lanes>
__launch_bounds__(256)
__global__ void cuzk_fixed_base_kernel(uint8_t* out, const fr_t* scalars, size_t n,
                                       const fb_table_entry<field_t>* table,
                                       uint32_t window, uint32_t windows)
{
    const size_t per_block = blockDim.x / lanes;
    const uint32_t lane = threadIdx.x % lanes;
    const int32_t half = 1 << (window - 1);
    const uint32_t mask = (1u << window) - 1;
    for (size_t base = blockIdx.x * per_block; base < n; base += per_block * gridDim.x) {
        const size_t i = base + threadIdx.x / lanes;
        const bool valid = i < n;
        fr_t s;
        s.zero();
        if (valid)
            s = scalars[i];
        s.from();

        fb_acc<field_t> acc;
        acc.X = field_t::one();
        acc.Y = acc.X;
        acc.ZZ = acc.X;
        acc.ZZZ = acc.X;
        acc.inf = true;
        uint32_t carry = 0;
        for (uint32_t k = 0; k < windows; k++) {
            const uint32_t bit = k * window;
            const uint32_t limb = bit / 32, shift = bit % 32;
            uint64_t v = s[limb] >> shift;
            if (shift + window > 32 && limb + 1 < 8)
                v |= (uint64_t)s[limb + 1] << (32 - shift);
            int32_t d = (int32_t)(v & mask) + (int32_t)carry;
            carry = 0;
            if (d > half) {
                d -= (int32_t)(1u << window);
                carry = 1;
            }
            if (d == 0)
                continue;
            const fb_table_entry<field_t>& e = table[(size_t)k * half + (d < 0 ? -d : d) - 1];
            field_t x, y;
            x = e.X;
            y = e.Y;
            y.cneg(d < 0);
            fb_add(acc, x, y);
        }

        // To affine with one inversion: 1/ZZZ = 1/Z³, so ZZ/ZZZ = 1/Z.
        __syncwarp();
        field_t t = acc.ZZZ.reciprocal();
        field_t iz = t * acc.ZZ;
        iz = iz^2;
        field_t x = acc.X * iz;
        field_t y = acc.Y * t;
        x.from();
        y.from();
        if (!valid)
            continue;
        uint8_t* o = out + i * 96 * lanes;
        if (acc.inf) {  // bellperson's uncompressed infinity: the flag, then zeros
            for (uint32_t b = lane; b < 96 * lanes; b += lanes)
                o[b] = b == 0 ? 0x40 : 0;
            continue;
        }
        // G1: x ‖ y. G2: x.c1 ‖ x.c0 ‖ y.c1 ‖ y.c0, the even lane holding c0.
        const uint32_t own = lanes == 1 ? 0 : (lane ? 0 : 48);
        fb_store_be(o + own, x);
        fb_store_be(o + 48 * lanes + own, y);
    }
}

// A generator's window table and the buffers of the last batch, on one device.
struct cuzk_fixed_base {
    int dev;
    int g2;
    uint32_t window, windows;
    void* table;
    fr_t* scalars;
    uint8_t* out;
    size_t cap;
    cudaStream_t stream;
};

template<class field_t, int lanes>
static void fixed_base_launch(cuzk_fixed_base* fb, size_t n)
{
    const gpu_t& gpu = select_gpu(fb->dev);
    const uint32_t block = 256;
    const size_t per_block = block / lanes;
    size_t grid = (n + per_block - 1) / per_block;
    const size_t most = (size_t)gpu.sm_count() * 16;
    if (grid > most)
        grid = most;
    cuzk_fixed_base_kernel<field_t, lanes><<<grid, block, 0, fb->stream>>>(
        fb->out, fb->scalars, n, (const fb_table_entry<field_t>*)fb->table, fb->window,
        fb->windows);
    CUDA_OK(cudaGetLastError());
}
